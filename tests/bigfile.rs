//! The bigfile workload through the binary: four rows (contiguous and
//! fragmented files, one and two downloads at once), every byte of every
//! file downloaded, throughput over time, the server's CPU time, caches
//! dropped (root), and a size too small refused by name.

use crate::common;

use common::{assert_valid, bin, load};

#[test]
fn four_rows_every_byte_downloaded_with_throughput_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("b.json");
    let r = bin()
        .args([
            "run",
            "bigfile",
            "--bigfile-size",
            "24M",
            "--no-report",
            "-q",
            "-o",
        ])
        .arg(&out)
        .arg("--workdir")
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "bigfile");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    let rows = w["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "contiguous, 1 download",
            "contiguous, 2 downloads at once",
            "fragmented, 1 download",
            "fragmented, 2 downloads at once"
        ]
    );
    for r in rows {
        let k = r["params"]["downloads"].as_u64().unwrap();
        let p = &r["phase"];
        assert_eq!(p["items"], k, "{}", r["label"]);
        assert_eq!(p["bytes"], k * (24 << 20), "{}", r["label"]);
        assert!(!p["throughput"].as_array().unwrap().is_empty());
        assert!(r["error"].is_null(), "{}", r["error"]);
        if cfg!(target_os = "linux") {
            // /proc counts CPU time in 10 ms ticks: a 24 MB sendfile can
            // stay under one, so the figure is there and not negative.
            assert!(r["params"]["server_cpu_s"].as_f64().unwrap() >= 0.0);
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            assert_eq!(r["params"]["cold"], root, "caches dropped as root");
        }
    }
    assert!(
        common::scalebench_entries(dir.path()).is_empty(),
        "the files and the work directory are gone"
    );
    let r = bin()
        .args(["run", "bigfile", "--bigfile-size", "10", "-o"])
        .arg(dir.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("--bigfile-size 10: at least 1M"), "{err}");
}
