//! The monitor through `scalebench run`: every series and workload carries
//! what the system did meanwhile, perf's counters beside it with `--monitor
//! perf`, the HTML report draws it under each, and bad monitor flags are
//! refused by name.

use crate::common::{assert_valid, bin, load, workload};
use assert_cmd::prelude::*;
use serde_json::Value;

/// Checks one monitor record: samples in order, one interval apart, each
/// CPU's states adding up to 100 %, every counter Linux gives present.
fn check_monitor(m: &Value, what: &str, interval: f64) {
    assert_eq!(m["interval_s"], interval, "{what}");
    let unread: Vec<&str> = m["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        unread.is_empty() || unread == ["mhz"],
        "{what}: Linux gives every counter, unread {unread:?}"
    );
    let samples = m["samples"].as_array().unwrap();
    // As many samples as the intervals the monitor saw, however long the
    // series took on a busy machine (the last, when short, joins the one
    // before): at least one, and two once it ran for two and a half.
    let ran = samples.last().map_or(0.0, |s| s["t"].as_f64().unwrap());
    let least = if ran >= 2.5 * interval { 2 } else { 1 };
    assert!(
        samples.len() >= least,
        "{what}: {} samples over {ran} s",
        samples.len()
    );
    let cpus = std::thread::available_parallelism().unwrap().get();
    let mut last = 0.0;
    for s in samples {
        let t = s["t"].as_f64().unwrap();
        let secs = s["seconds"].as_f64().unwrap();
        assert!(t > last, "{what}: samples out of order at {t}");
        assert!((t - secs - last).abs() < 0.002, "{what}: a gap before {t}");
        last = t;
        for key in [
            "context_switches_per_s",
            "interrupts_per_s",
            "run_queue",
            "memory_free_bytes",
            "page_faults_per_s",
            "net_rx_packets_per_s",
        ] {
            assert!(s[key].is_number(), "{what}: no {key} in {s}");
        }
        // The run queue counts the monitor's reading thread at least.
        assert!(s["run_queue"].as_u64().unwrap() >= 1, "{what}: {s}");
        let c = s["cpus"].as_array().unwrap();
        assert_eq!(c.len(), cpus, "{what}: one share per CPU");
        for cpu in c {
            let sum: f64 = cpu
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!(
                (sum - 100.0).abs() < 0.5,
                "{what}: states add to {sum} %: {cpu}"
            );
        }
    }
}

#[test]
fn every_series_and_workload_carries_the_monitor_and_the_report_draws_it() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = bin()
        .args(["run", "socket", "fs-sizes", "--max", "3000", "--runs", "2"])
        .args(["--dir", "/dev/shm", "--size-files", "20", "--sizes", "8K"])
        .args(["--monitor", "perf", "--monitor-interval", "100ms", "-q"])
        .arg("--workdir")
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["schema_version"], 8);
    let socket = &doc["benchmarks"][0];
    check_monitor(&socket["monitor"], "socket", 0.1);
    let fs = workload(&doc, "fs-sizes");
    check_monitor(&fs["monitor"], "fs-sizes", 0.1);
    // perf stat beside it: every event counted or said not to be.
    let perf = &socket["monitor"]["perf"];
    assert_eq!(perf["error"], Value::Null, "{perf}");
    let samples = perf["samples"].as_array().unwrap();
    assert!(!samples.is_empty(), "{perf}");
    let not_counted = perf["not_counted"].as_array().unwrap();
    for e in perf["events"].as_array().unwrap() {
        let name = e.as_str().unwrap();
        let counted = samples.iter().any(|s| s["per_s"][name].is_number());
        assert!(
            counted != not_counted.contains(e),
            "{name}: counted {counted}, not_counted {not_counted:?}"
        );
    }
    // The kernel's own clock always counts: both CPUs' time, in ms/s.
    assert!(
        samples
            .iter()
            .any(|s| s["per_s"]["cpu-clock"].as_f64().unwrap_or(0.0) > 0.0)
    );
    // perf's files are gone; the work directory is removed as ever.
    assert!(
        std::fs::read_dir(&work).unwrap().next().is_none(),
        "left in the work directory: {:?}",
        std::fs::read_dir(&work).unwrap().collect::<Vec<_>>()
    );
    // Drawn under the benchmark and under the workload.
    let html = std::fs::read_to_string(t.path().join("r.html")).unwrap();
    for id in ["m0-0", "m-fs-sizes-0"] {
        assert!(
            html.contains(&format!("<svg id=\"{id}\" class=\"chart monitor\"")),
            "no chart {id}"
        );
    }
    assert!(html.contains("data-counter=\"context switches\""));
    assert!(html.contains("data-counter=\"perf cpu-clock, ms\""));
    assert!(html.contains("sampled every 0.1 s"));
    // And beside the Markdown report, as its other charts.
    let svgs = t.path().join("charts");
    let md = bin()
        .arg("report")
        .arg(&out)
        .args(["--format", "markdown", "--svg-dir"])
        .arg(&svgs)
        .output()
        .unwrap();
    assert!(
        md.status.success(),
        "{}",
        String::from_utf8_lossy(&md.stderr)
    );
    let md = String::from_utf8(md.stdout).unwrap();
    for (stem, what) in [
        ("socket-monitor-0", "socket"),
        ("fs-sizes-monitor-0", "fs-sizes"),
    ] {
        let f = svgs.join(format!("{stem}.svg"));
        let svg = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert!(svg.starts_with(&format!("<svg id=\"{stem}\" class=\"chart monitor\"")));
        assert!(
            md.contains(&format!("![{what}: the system meanwhile]({})", f.display())),
            "{md}"
        );
    }
}

#[test]
fn monitor_off_records_none_and_bad_monitor_flags_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("off.json");
    bin()
        .args(["run", "socket", "--max", "200", "--runs", "1", "-q"])
        .args(["--no-report", "--monitor", "off", "-o"])
        .arg(&out)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    assert!(doc["benchmarks"][0].get("monitor").is_none());
    for (args, said) in [
        (&["--monitor-interval", "5ms"][..], "--monitor-interval"),
        (&["--monitor-interval", "soon"][..], "--monitor-interval"),
        (&["--monitor", "sometimes"][..], "--monitor"),
        (
            &["--perf-events", "cycles"][..],
            "--perf-events needs --monitor perf",
        ),
        (
            &["--monitor", "off", "--monitor-interval", "1s"][..],
            "--monitor-interval needs the monitor on",
        ),
        (
            &["--monitor", "perf", "--perf-events", "cycles;rm"][..],
            "`cycles;rm` is not a perf event name",
        ),
        // An event perf does not know: refused before anything runs, not
        // found out inside the result file.
        (
            &["--monitor", "perf", "--perf-events", "no-such-event"][..],
            "--perf-events no-such-event: perf stat refused them",
        ),
    ] {
        let o = bin()
            .args(["run", "socket", "--max", "200", "-o"])
            .arg(t.path().join("never.json"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1 | 2)),
            "{args:?}: {:?} {err}",
            o.status
        );
        assert!(err.contains(said), "{args:?}: {err}");
        assert!(!t.path().join("never.json").exists(), "{args:?}");
    }
    // No perf at all: said at once, with the package to install.
    let empty = tempfile::tempdir().unwrap();
    let o = bin()
        .args(["run", "socket", "--max", "200", "--monitor", "perf", "-o"])
        .arg(t.path().join("never.json"))
        .env("PATH", empty.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--monitor perf: perf did not start"), "{err}");
    assert!(err.contains("linux-perf"), "{err}");
    assert!(!t.path().join("never.json").exists());
}
