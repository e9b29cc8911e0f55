//! Emulated results through the binary: a run records how this machine
//! runs (`system.virtualization`, as `sysinfo` reads it) and its kernel's
//! configuration, valid against the schema; a copy edited to be a TCG
//! guest — ten times slower, one series planted to grow in proportion to
//! n — is marked in `report` and compared with the native file by class
//! only in `report` and `compare` (no cost sentence, no regression for
//! the slower times, the class change still found); two emulated files
//! are compared by cost, with the warning.

use crate::common::{assert_valid, bin, load};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A real run's file (its system record) with the benchmark series of the
/// default fixture (known verdicts: bind and mmap O(1)), written to `dir`
/// as `host.json`.
fn native(dir: &Path) -> PathBuf {
    let run = dir.join("run.json");
    let r = bin()
        .args([
            "run",
            "socket",
            "--max",
            "200",
            "--runs",
            "3",
            "-q",
            "--no-report",
            "-o",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let mut doc = load(&run);
    assert_valid(&doc);
    let fixture: Value = serde_json::from_str(include_str!("fixtures/default.json")).unwrap();
    doc["benchmarks"] = fixture["benchmarks"].clone();
    doc["label"] = "host".into();
    let path = dir.join("host.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// `from` as a TCG guest named `label`: every time × `scale`, and `bind`
/// growing by 40 ns per n when `plant`.
fn emulated(from: &Path, label: &str, scale: f64, plant: bool) -> PathBuf {
    let mut doc = load(from);
    doc["label"] = label.into();
    doc["system"]["virtualization"] = json!({
        "kind": "tcg", "emulated": true, "hypervisor": "TCGTCGTCGTCG",
        "reason": "a KVM guest printed no kernel banner within 5s", "vcpu_pins": [0, 1]
    });
    for b in doc["benchmarks"].as_array_mut().unwrap() {
        let linear = plant && b["series"] == "bind";
        for r in b["runs"].as_array_mut().unwrap() {
            for s in r["samples"].as_array_mut().unwrap() {
                let (n, ns) = (s[0].as_f64().unwrap(), s[1].as_f64().unwrap());
                let grown = if linear { ns + 40.0 * n } else { ns };
                s[1] = ((grown * scale).round() as u64).into();
            }
        }
    }
    assert_valid(&doc);
    let path = from.with_file_name(format!("{label}.json"));
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// stdout of a successful scalebench command, whitespace runs made one
/// space (whatever the wrapping).
fn words(args: &[&std::ffi::OsStr]) -> String {
    let r = bin().args(args).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    String::from_utf8(r.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn compare_json(base: &Path, new: &Path) -> (Option<i32>, Value) {
    let r = bin()
        .arg("compare")
        .args([base, new])
        .args(["--format", "json", "--fail-on", "regression"])
        .output()
        .unwrap();
    let doc = serde_json::from_slice(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&r.stderr)));
    (r.status.code(), doc)
}

fn row<'d>(doc: &'d Value, name: &str) -> &'d Value {
    crate::common::entry(doc, "rows", "name", name)
}

#[test]
fn a_run_records_this_machines_virtualization_as_sysinfo_reads_it() {
    let t = tempfile::tempdir().unwrap();
    let doc = load(&native(t.path()));
    let r = bin().args(["sysinfo", "--json"]).output().unwrap();
    assert!(r.status.success());
    let sys: Value = serde_json::from_slice(&r.stdout).unwrap();
    let v = &doc["system"]["virtualization"];
    assert_eq!(v, &sys["virtualization"]);
    let tcg = v["hypervisor"] == "TCGTCGTCGTCG";
    assert_eq!(v["emulated"], tcg, "{v}");
    assert_eq!(v["kind"], if tcg { "tcg" } else { "native" }, "{v}");
    // The kernel configuration where Linux keeps one.
    let release = doc["system"]["os_release"].as_str().unwrap();
    let kept = Path::new("/proc/config.gz").exists()
        || Path::new(&format!("/boot/config-{release}")).exists();
    assert_eq!(doc["system"].get("kernel_config").is_some(), kept);
}

#[test]
fn an_emulated_and_a_native_file_compare_by_class_only() {
    let t = tempfile::tempdir().unwrap();
    let host = native(t.path());
    let guest = emulated(&host, "guest", 10.0, true);
    let text = words(&["report".as_ref(), host.as_os_str(), guest.as_os_str()]);
    for said in [
        "guest: ",
        "warning: guest: measured under emulation (tcg, a KVM guest printed no kernel banner within 5s)",
        "† measured under emulation (TCG): not the speed of any machine; its growth class still holds",
        "note: guest was measured under emulation (TCG) and host natively: only their growth classes are compared",
        "bind: guest grows O(n) where host stays O(1)",
        "virtualization: host: native",
        "guest: tcg: a KVM guest printed no kernel banner within 5s",
    ] {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }
    assert!(
        !text.contains("slower than") && !text.contains("faster than"),
        "{text}"
    );
    let json: Value = serde_json::from_str(&words(&[
        "report".as_ref(),
        host.as_os_str(),
        guest.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
    ]))
    .unwrap();
    assert_eq!(json["systems"][1]["emulated"], true);
    assert!(
        json["differences"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["kind"] != "cost"),
        "{}",
        json["differences"]
    );
    // compare: ten times slower is no regression; the planted class change is.
    let (code, doc) = compare_json(&host, &guest);
    assert_eq!(code, Some(3), "{doc}");
    assert_eq!(row(&doc, "bind")["outcome"], "class-changed", "{doc}");
    let mmap = row(&doc, "mmap");
    assert_eq!(mmap["outcome"], "unchanged", "{doc}");
    assert_eq!(
        mmap["evidence"],
        "the same growth class on both, O(1); costs not compared: guest was measured under emulation (TCG)"
    );
    assert!(
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["cost"].is_null()),
        "{doc}"
    );
    assert!(
        doc["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("guest was measured under emulation (TCG) and host natively"),
        "{doc}"
    );
    let terminal = words(&["compare".as_ref(), host.as_os_str(), guest.as_os_str()]);
    assert!(
        terminal.contains("warning: guest was measured under emulation"),
        "{terminal}"
    );
    assert!(
        !terminal.contains("cost over"),
        "no cost figure: {terminal}"
    );
}

#[test]
fn two_emulated_files_compare_by_cost_with_a_warning() {
    let t = tempfile::tempdir().unwrap();
    let host = native(t.path());
    let cloud = emulated(&host, "cloud", 10.0, false);
    let rt = emulated(&host, "rt", 15.0, false);
    let (code, doc) = compare_json(&cloud, &rt);
    assert_eq!(code, Some(3), "{doc}");
    let mmap = row(&doc, "mmap");
    assert_eq!(mmap["outcome"], "regressed", "{doc}");
    assert!(
        mmap["cost"]["ratio"]["value"].as_f64().unwrap() > 1.3,
        "{doc}"
    );
    assert_eq!(
        doc["warnings"][0],
        "cloud and rt were both measured under emulation (TCG): their cost ratios compare two emulations, not the speed of two machines"
    );
    let text = words(&["report".as_ref(), cloud.as_os_str(), rt.as_os_str()]);
    assert!(
        text.contains("mmap: rt is 1.5× slower than cloud"),
        "{text}"
    );
    // Said once for both, not once per system and once for the pair.
    assert_eq!(
        text.matches("measured under emulation (tcg").count(),
        1,
        "{text}"
    );
    assert!(
        text.contains("warning: cloud and rt: measured under emulation (tcg"),
        "{text}"
    );
}
