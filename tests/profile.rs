//! `--why` and `why`: perf output parsed from fixtures recorded on the
//! development machine, the growing function named for an O(n) test
//! benchmark and nothing for its O(1) twin (needs perf: scripts/test
//! installs it), a missing profiler named while the timed results complete.

use crate::common;

use assert_cmd::prelude::*;
use common::{assert_valid, bin, load};
use scalebench::harness::profiler::perf::parse_script;
use serde_json::Value;

fn fixture() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/perf-script.txt"
    ))
    .unwrap()
}

#[test]
fn perf_script_from_this_machine_parses() {
    let text = fixture();
    let samples = parse_script(&text);
    let headers = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(char::is_whitespace))
        .count();
    assert_eq!(samples.len(), headers, "every recorded sample has frames");
    // The first: a page fault during dynamic linking, kernel then user.
    let first = &samples[0];
    assert_eq!((first.pid, first.comm.as_str()), (21540, "scalebench"));
    assert_eq!(first.frames[0].function, "copy_mc_enhanced_fast_string");
    assert!(first.frames[0].kernel);
    assert_eq!(first.frames.last().unwrap().function, "_dl_start_user");
    assert!(!first.frames.last().unwrap().kernel);
    // Frames are every indented line of a record.
    let frame_lines = text.lines().filter(|l| l.starts_with('\t')).count();
    assert_eq!(
        samples.iter().map(|s| s.frames.len()).sum::<usize>(),
        frame_lines
    );
    // Unknown symbols, user-only and kernel-only stacks.
    assert!(
        samples
            .iter()
            .any(|s| s.frames.iter().any(|f| f.function == "[unknown]"))
    );
    assert!(samples.iter().any(|s| s.frames.iter().all(|f| !f.kernel)));
    let idle = samples
        .iter()
        .find(|s| s.comm == "swapper")
        .expect("kernel-only stacks");
    assert_eq!(idle.pid, 0);
    assert!(idle.frames.iter().all(|f| f.kernel));
    // Rust symbols are demangled by perf and kept whole.
    assert!(
        samples
            .iter()
            .flat_map(|s| &s.frames)
            .any(|f| f.function.starts_with("scalebench::"))
    );
}

#[test]
fn truncated_perf_output_keeps_what_is_whole() {
    let text = fixture();
    let all = parse_script(&text);
    for cut in (0..text.len()).step_by(211) {
        let Some(part) = text.get(..cut) else {
            continue;
        };
        let got = parse_script(part);
        assert!(got.len() <= all.len());
        // Every sample read from the cut text is a prefix of a real one.
        for (g, a) in got.iter().zip(&all) {
            assert_eq!((g.pid, &g.comm), (a.pid, &a.comm));
            assert!(g.frames.len() <= a.frames.len());
            for (x, y) in g.frames.iter().zip(&a.frames) {
                assert_eq!(x.kernel, y.kernel);
                assert!(y.function.starts_with(&x.function) || x.function == "[unknown]");
            }
        }
    }
    assert!(parse_script("").is_empty());
    assert!(parse_script("garbage\nmore garbage\n").is_empty());
}

fn profile_of<'a>(doc: &'a Value, name: &str) -> &'a Value {
    let b = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap();
    &b["profile"]
}

#[test]
fn why_names_the_function_that_grows_and_nothing_for_a_flat_cost() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args(["run", "selftest-linear", "selftest-constant"])
        .args([
            "--max",
            "20000",
            "--runs",
            "1",
            "--why",
            // Two seconds a window: the samples count the CPU time the
            // window got, and beside CI's other tests one second once
            // gave a window 100 samples or fewer.
            "--why-seconds",
            "2",
        ])
        .args(["--quiet", "--no-report", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc = load(&out);
    assert_valid(&doc);
    let lin = profile_of(&doc, "selftest-linear");
    assert!(
        lin["error"].is_null(),
        "perf must work here: {}",
        lin["error"]
    );
    assert_eq!(lin["profiler"], "perf");
    let w = lin["windows"].as_array().unwrap();
    assert_eq!(
        (w[0]["n"].as_u64(), w[1]["n"].as_u64()),
        (Some(2000), Some(20000))
    );
    assert!(
        w.iter()
            .all(|w| w["samples"].as_u64().unwrap() > 100 && w["ops"].as_u64().unwrap() > 0),
        "samples and operations of the two windows: {:?}",
        w.iter()
            .map(|w| (&w["samples"], &w["ops"]))
            .collect::<Vec<_>>()
    );
    assert!(
        w[1]["folded"]
            .as_str()
            .unwrap()
            .contains("selftest_linear_walk")
    );
    let g = &lin["growing"][0];
    assert!(
        g["function"]
            .as_str()
            .unwrap()
            .ends_with("selftest_linear_walk"),
        "{}",
        lin["growing"]
    );
    assert_eq!(g["kernel"], false);
    assert!(g["high_ns_per_op"].as_f64().unwrap() > 4.0 * g["low_ns_per_op"].as_f64().unwrap());
    let e = lin["explanation"].as_str().unwrap();
    assert!(
        e.starts_with("at n = 20 000, ") && e.contains("selftest_linear_walk"),
        "{e}"
    );
    // The O(1) twin: nothing grows.
    let con = profile_of(&doc, "selftest-constant");
    assert!(
        con["growing"].as_array().unwrap().is_empty(),
        "{}",
        con["growing"]
    );
    assert!(
        con["explanation"]
            .as_str()
            .unwrap()
            .starts_with("nothing grows")
    );
    // The terminal says it beside the verdicts.
    assert!(stdout.contains("why: at n = 20 000"), "{stdout}");
    assert!(stdout.contains("why: nothing grows"), "{stdout}");
    // The HTML report has the table and a flame graph with the grower in red.
    let html = t.path().join("r.html");
    bin()
        .arg("report")
        .arg(&out)
        .arg("--html")
        .arg(&html)
        .assert()
        .success();
    let h = std::fs::read_to_string(&html).unwrap();
    assert!(h.contains("<table class=\"growing\">"));
    assert!(h.contains("<svg id=\"p0-0\" class=\"flame\""));
    assert!(
        h.contains("class=\"frame hot\"><title>scalebench::bench::selftest::selftest_linear_walk")
    );
}

#[test]
fn a_missing_profiler_is_named_and_the_results_complete() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args(["run", "socket", "--max", "300", "--runs", "1", "--why"])
        .args(["--profiler", "/nonexistent/perf", "--no-report", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], true);
    assert_eq!(doc["benchmarks"][0]["status"], "ok");
    assert_eq!(
        doc["benchmarks"][0]["runs"][0]["samples"]
            .as_array()
            .unwrap()
            .len(),
        300
    );
    let e = profile_of(&doc, "socket")["error"].as_str().unwrap();
    assert!(
        // A path given is the user's to mend, not a package to install.
        e.contains("/nonexistent/perf") && e.contains("check the path given with --profiler"),
        "{e}"
    );
    assert!(stderr.contains("no profile"), "{stderr}");
    assert!(stdout.contains("why: no profile"), "{stdout}");
}

#[test]
fn why_profiles_an_existing_result_file() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    bin()
        .args([
            "run",
            "selftest-constant",
            "--max",
            "2000",
            "--runs",
            "1",
            "--quiet",
            "--no-report",
            "-o",
        ])
        .arg(&out)
        .assert()
        .success();
    assert!(load(&out)["benchmarks"][0].get("profile").is_none());
    let with = t.path().join("why.json");
    bin()
        .arg("why")
        .arg(&out)
        .args(["--seconds", "0.5", "--quiet", "-o"])
        .arg(&with)
        .assert()
        .success();
    let doc = load(&with);
    assert_valid(&doc);
    let p = &doc["benchmarks"][0]["profile"];
    assert!(p["error"].is_null(), "{}", p["error"]);
    assert_eq!(p["windows"][1]["n"], 2000);
    // A profiler that fails does not replace the good profile stored, and
    // the count says nothing was profiled.
    let before = std::fs::read(&with).unwrap();
    bin()
        .arg("why")
        .arg(&with)
        .args(["--seconds", "0.5", "--profiler", "/bin/false"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(
            "the profile stored before is kept",
        ))
        .stderr(predicates::str::contains("0 benchmarks profiled"))
        .stderr(predicates::str::contains("1 failed (1 kept"));
    assert_eq!(std::fs::read(&with).unwrap(), before);
    // A name not in the file is an error that names it.
    bin()
        .arg("why")
        .arg(&out)
        .args(["--only", "nosuch"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("--only nosuch"));
}
