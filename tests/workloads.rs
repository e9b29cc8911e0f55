//! The real-world workloads through `scalebench run`: the rows the seeds'
//! tables have, exact request and byte counts, a schema-valid file, and
//! the rows in the HTML report.

use crate::common;

use assert_cmd::prelude::*;
use common::{assert_valid, bin, load};
use serde_json::Value;

/// Runs `names` into a fresh result file and returns it with the HTML
/// report written beside it.
fn run(names: &[&str]) -> (Value, String) {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    bin()
        .arg("run")
        .args(names)
        .arg("--out")
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["schema_version"], scalebench::results::SCHEMA_VERSION);
    assert_eq!(doc["complete"], true);
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work directory emptied"
    );
    let html = std::fs::read_to_string(out.with_extension("html")).unwrap();
    (doc, html)
}

/// A row's measurement, checked to be complete and error-free.
fn clean(row: &Value, fetches: u64, bytes: u64) -> &Value {
    let l = &row["load"];
    assert!(row["error"].is_null(), "{}: {}", row["label"], row["error"]);
    assert_eq!(l["requests"], fetches, "{}", row["label"]);
    assert_eq!(l["body_bytes"], fetches * bytes, "{}", row["label"]);
    assert_eq!(l["statuses"]["200"], fetches, "{}", row["label"]);
    assert_eq!(l["failed"], 0);
    for (k, v) in l["errors"].as_object().unwrap() {
        assert_eq!(v, 0, "{}: {k} errors", row["label"]);
    }
    assert!(l["requests_per_s"].as_f64().unwrap() > 0.0);
    let lat = &l["latency_ns"];
    let p50 = lat["p50"].as_u64().unwrap();
    assert!(p50 > 0 && p50 <= lat["p99"].as_u64().unwrap());
    assert!(lat["p99"].as_u64().unwrap() <= lat["max"].as_u64().unwrap());
    let rounds = row["params"]["rounds_requests_per_s"].as_array().unwrap();
    assert_eq!(rounds.len(), 3, "{}", row["label"]);
    assert!(rounds.iter().any(|r| r == &l["requests_per_s"]));
    l
}

#[test]
fn ipstack_has_four_rows_ipv4_and_ipv6_with_one_and_four_processes() {
    let (doc, html) = run(&["http-ipstack"]);
    assert!(doc["benchmarks"].as_array().unwrap().is_empty());
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "http-ipstack");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    assert_eq!(w["params"]["object_bytes"], 11 * 1024);
    assert_eq!(w["params"]["requests_per_connection"], 10);
    // The seeds' path by default: a readiness backend (this machine's
    // kernel has io_uring, which is not the default), each file opened per
    // request.
    assert_eq!(w["params"]["server_loop"], "epoll");
    assert_eq!(w["params"]["server_files"], "per-request");
    let fetches = w["params"]["fetches"].as_u64().unwrap();
    let rows = w["rows"].as_array().unwrap();
    let got: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["params"]["address_family"].as_str().unwrap().to_string(),
                r["params"]["processes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("ipv4".to_string(), 1),
            ("ipv4".to_string(), 4),
            ("ipv6".to_string(), 1),
            ("ipv6".to_string(), 4)
        ]
    );
    for r in rows {
        let info = &r["params"]["server_info"];
        assert_eq!(
            (&info["mode"], &info["files"]),
            (&"epoll".into(), &"per-request".into())
        );
        let l = clean(r, fetches, 11 * 1024);
        // 10 requests per connection: a tenth as many connections, give
        // or take the ones each connection slot starts with.
        let c = l["connections"].as_u64().unwrap();
        assert!(c >= fetches / 10 && c <= fetches / 10 + 100, "{c}");
        let label = r["label"].as_str().unwrap();
        assert!(
            html.contains(&format!("data-row=\"{label}\"")),
            "{label} missing from the HTML report"
        );
    }
    assert!(html.contains("id=\"workloads\""));
}

#[test]
fn shortconn_opens_one_connection_per_request_for_each_object() {
    let start = std::time::Instant::now();
    // The cache and io_uring, as named options.
    let (doc, html) = run(&[
        "http-shortconn",
        "--serve-files",
        "cached",
        "--serve-loop",
        "io_uring",
    ]);
    let took = start.elapsed();
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "http-shortconn");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    let p = &w["params"];
    assert_eq!(p["requests_per_connection"], 1);
    assert_eq!(p["server_loop"], "io_uring");
    assert_eq!(p["server_files"], "cached");
    assert_eq!(p["server_info"]["files"], "cached");
    // One SO_REUSEPORT worker per CPU; the quick size needs one load
    // process and the OS's source address.
    let cpus = std::thread::available_parallelism().unwrap().get() as u64;
    assert_eq!(
        (
            p["server_processes"].as_u64(),
            p["server_reuseport"].as_bool()
        ),
        (Some(cpus), Some(true))
    );
    assert_eq!(p["connections"], 50);
    // The quick size: each object a 0.3 s warm-up and 0.9 s measured (how
    // long that takes on the clock depends on the machine: see below).
    assert_eq!(
        (p["warm_up_s"].as_f64(), p["seconds"].as_f64()),
        (Some(0.3), Some(0.9))
    );
    assert_eq!(p["load_processes"], 1);
    assert_eq!(p["source_addresses"], serde_json::json!([]));
    assert_eq!(p["rounds"], 3);
    // The knobs that govern TIME_WAIT, as they are.
    for k in [
        "net.ipv4.tcp_tw_reuse",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_max_tw_buckets",
    ] {
        assert!(
            p["knobs"][k].is_string(),
            "{k} not recorded: {}",
            p["knobs"]
        );
    }
    let sizes: Vec<u64> = w["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let bytes = r["params"]["object_bytes"].as_u64().unwrap();
            assert!(r["error"].is_null(), "{r}");
            let l = &r["load"];
            let requests = l["requests"].as_u64().unwrap();
            assert!(requests > 100, "{r}");
            assert_eq!(l["body_bytes"].as_u64(), Some(requests * bytes), "{r}");
            assert_eq!(l["statuses"]["200"].as_u64(), Some(requests), "{r}");
            for (k, v) in l["errors"].as_object().unwrap() {
                assert_eq!(v, 0, "{}: {k} errors", r["label"]);
            }
            // One connection per request; those still open at the end of
            // the measured time (at most 50) had no answer counted yet.
            let c = l["connections"].as_u64().unwrap();
            assert!(
                (requests..=requests + 50).contains(&c),
                "{c} connections for {requests}"
            );
            let secs = l["seconds"].as_f64().unwrap();
            assert!((0.85..1.6).contains(&secs), "0.9 s measured, {secs} s");
            // Three rounds; the row's req/s is all of them together.
            let rounds: Vec<f64> = r["params"]["rounds_requests_per_s"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            assert_eq!(rounds.len(), 3, "{r}");
            let rps = l["requests_per_s"].as_f64().unwrap();
            let (lo, hi) = rounds
                .iter()
                .fold((f64::MAX, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
            assert!(
                rps >= lo * 0.9 && rps <= hi * 1.1,
                "{rps} outside its rounds {rounds:?}"
            );
            // TIME_WAIT before and after, read from /proc/net/sockstat.
            assert!(r["params"]["time_wait_before"].is_u64(), "{r}");
            assert!(r["params"]["time_wait_after"].is_u64(), "{r}");
            assert_eq!(r["load"]["errors"]["port_exhausted"], 0, "{r}");
            let peak = r["params"]["peak_open"].as_u64().unwrap();
            assert!(peak > 0 && peak <= 50, "{r}");
            bytes
        })
        .collect();
    assert_eq!(sizes, [1024, 8 * 1024, 16 * 1024]);
    assert!(html.contains("data-workload=\"http-shortconn\""));
    // Its planned 5.4 s (checked above) took about 6 s here with the
    // machine's other work; the bound only catches a run that hangs or
    // waits for something it should not.
    assert!(
        took < std::time::Duration::from_secs(120),
        "the quick shortconn took {took:?}"
    );
}

#[test]
fn a_workload_name_is_suggested_when_misspelt() {
    bin()
        .args(["run", "http-ipstak", "--out", "/nonexistent/x.json"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("did you mean `http-ipstack`"));
}

#[test]
fn a_connection_sweep_keeps_every_sample_and_names_its_peak() {
    let (doc, html) = run(&[
        "http-shortconn",
        "--sweep",
        "connections=1,4,16",
        "--heat-up",
        "0.2",
        "--sample-time",
        "0.3",
        "--samples",
        "4",
    ]);
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "ok", "{w}");
    assert_eq!(
        w["params"]["connections"],
        serde_json::json!([1.0, 4.0, 16.0])
    );
    let rows = w["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "one sweep per object size");
    for r in rows {
        assert!(r["load"].is_null() && r["error"].is_null(), "{r}");
        let s = &r["sweep"];
        assert_eq!(s["variable"], "connections");
        assert_eq!(s["unit"], "req/s");
        assert_eq!(
            (s["baseline"].as_f64(), s["samples"].as_u64()),
            (Some(1.0), Some(4))
        );
        let levels = s["levels"].as_array().unwrap();
        assert_eq!(
            levels
                .iter()
                .map(|l| l["level"].as_f64().unwrap())
                .collect::<Vec<_>>(),
            vec![1.0, 4.0, 16.0]
        );
        for l in levels {
            let samples = l["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 4, "{l}");
            // The figure is the mean of the last three samples.
            let last: Vec<f64> = samples[1..]
                .iter()
                .map(|x| x["value"].as_f64().unwrap())
                .collect();
            let mean = last.iter().sum::<f64>() / 3.0;
            let value = l["value"].as_f64().unwrap();
            assert!((value - mean).abs() < 1e-6 * mean, "{value} vs {mean}");
            assert!(value > 0.0);
            for x in samples {
                assert_eq!(x["errors"], 0, "{x}");
                assert!(x["latency_ns"]["p50"].as_u64().unwrap() > 0, "{x}");
                let secs = x["seconds"].as_f64().unwrap();
                assert!((0.25..1.0).contains(&secs), "a 0.3 s sample took {secs} s");
            }
            // How long asking for the level's connections took, apart.
            let opening = l["params"]["opening_s"].as_f64();
            assert!(opening.is_some_and(|t| t >= 0.0), "{l}");
            // Linux tells how busy the CPUs were, and at what clock.
            let busy = l["cpu_busy"].as_f64().unwrap();
            assert!(busy > 0.0 && busy <= 1.0, "{l}");
            assert!(l["busy_mhz"].as_f64().is_some(), "{l}");
        }
    }
    // The terminal report names the peak; the level table is there.
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("r.json");
    std::fs::write(&f, doc.to_string()).unwrap();
    let o = bin().arg("report").arg(&f).output().unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("req/s against connections: peaks at "),
        "{text}"
    );
    assert!(text.contains("per-unit"), "{text}");
    assert!(
        html.contains("1 KB object"),
        "the HTML report has the sweep rows"
    );
    // Three curves per swept row in the HTML report: figure, per-unit,
    // load × frequency.
    assert_eq!(
        html.matches("class=\"chart curve\"").count(),
        9,
        "three charts per sweep"
    );
    // Every sample a dot on the figure and per-unit charts: 3 rows × 3
    // levels × 4 samples, twice.
    assert_eq!(html.matches("<circle class=\"sample").count(), 2 * 36);
    assert!(
        html.contains("peaks at "),
        "the verdict is in the HTML report"
    );
    // The JSON report carries the sweep and its verdict.
    let o = bin()
        .args(["report", "-f", "json"])
        .arg(&f)
        .output()
        .unwrap();
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let w0 = &j["workloads"][0];
    assert_eq!(w0["sweep"]["variable"], "connections", "{w0}");
    let peak = w0["sweep_verdict"]["peak"]["value"].as_f64().unwrap();
    let best = w0["sweep"]["levels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["value"].as_f64())
        .fold(0.0, f64::max);
    assert_eq!(peak, best, "the peak is the best level's figure");
    // Every sample in the sweep CSV: 3 rows × 3 levels × 4 samples.
    let o = bin()
        .args(["export", "-f", "sweep-csv"])
        .arg(&f)
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{csv}");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("system,workload,row,target,variable,unit,level,sample"));
    assert_eq!(lines.len(), 1 + 3 * 3 * 4, "{csv}");
    // Markdown: the verdict, the level table and the charts as SVG files.
    let svg = t.path().join("svg");
    let o = bin()
        .args(["report", "-f", "markdown", "--svg-dir"])
        .arg(&svg)
        .arg(&f)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.contains("| connections | req/s | per-unit |"), "{md}");
    // Three charts per row, and the workload's monitor chart.
    let names: Vec<String> = std::fs::read_dir(&svg)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 9 + 1, "{names:?}\n{md}");
    assert_eq!(
        names.iter().filter(|n| n.contains("-monitor-")).count(),
        1,
        "{names:?}"
    );
}

#[test]
fn nginx_and_a_process_per_connection_serve_the_http_workloads() {
    // Short sweeps: one level, one sample per row.
    let quick = [
        "--sweep",
        "connections=8",
        "--warm-up",
        "0.1",
        "--samples",
        "1",
    ];
    for (server, workers) in [("nginx", Some("2")), ("fork", None)] {
        let mut args = vec!["http-shortconn", "http-ipstack", "--http-server", server];
        args.extend(["--http-threads", "2"]);
        if let Some(w) = workers {
            args.extend(["--http-workers", w]);
        }
        args.extend(quick);
        // Evidence, not a window: on a busy machine a row's one 0.3 s
        // sample once had no answer at all (a process per connection
        // forks first), so the sample grows until every row has some.
        let mut doc = Value::Null;
        for secs in ["0.3", "1.2", "4.8"] {
            let mut a = args.clone();
            a.extend(["--sample-time", secs]);
            doc = run(&a).0;
            let starved = doc["workloads"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|w| w["rows"].as_array().unwrap())
                .any(|r| r["sweep"]["levels"][0]["value"].as_f64() == Some(0.0));
            if !starved {
                break;
            }
        }
        for w in doc["workloads"].as_array().unwrap() {
            assert_eq!(w["status"], "ok", "{server}: {w}");
            assert_eq!(w["params"]["server"], server, "{w}");
            assert_eq!(w["params"]["load_threads"], 2, "{w}");
            // scalebench serve's event loop is not named for another server.
            assert!(w["params"].get("server_loop").is_none(), "{w}");
            // A process per connection serves with scalebench's files path
            // (per request by default); nginx opens files its own way.
            assert_eq!(
                w["params"].get("server_files").and_then(Value::as_str),
                (server == "fork").then_some("per-request"),
                "{w}"
            );
            let rows = w["rows"].as_array().unwrap();
            if w["name"] == "http-ipstack" {
                // One row each way: the 2 workers asked for, or a process
                // per connection.
                assert_eq!(rows.len(), 2, "{server}: {w}");
            }
            for r in rows {
                let level = &r["sweep"]["levels"][0];
                assert!(level["value"].as_f64().unwrap() > 0.0, "{server}: {r}");
                let errors: u64 = level["samples"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s["errors"].as_u64().unwrap())
                    .sum();
                assert_eq!(errors, 0, "{server}: {r}");
                let p = &level["params"];
                if server == "nginx" {
                    // nginx does not count its failed accepts: said so.
                    assert!(p["server_accept_errors"].is_null(), "{p}");
                    assert!(p["server_accept_errors_unknown"].is_string(), "{p}");
                } else {
                    assert!(p["server_accept_errors"].is_object(), "{p}");
                }
            }
            let info = if w["name"] == "http-ipstack" {
                &rows[0]["params"]["server_info"]
            } else {
                &w["params"]["server_info"]
            };
            if server == "nginx" {
                assert!(
                    info["version"].as_str().unwrap().starts_with("nginx/"),
                    "{info}"
                );
                let config = info["config"].as_str().unwrap();
                for want in [
                    "worker_processes 2;",
                    "access_log off;",
                    "worker_connections ",
                ] {
                    assert!(config.contains(want), "{want}: {config}");
                }
            } else {
                assert_eq!(info["mode"], "a process per connection", "{info}");
            }
        }
    }
}

#[test]
fn an_http_server_option_that_cannot_apply_is_refused_by_name() {
    let o = bin()
        .args([
            "run",
            "http-ipstack",
            "--http-server",
            "fork",
            "--http-workers",
            "2",
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--http-workers"), "{err}");
    let o = bin()
        .args(["run", "http-ipstack", "--http-server", "apache"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("apache"), "{err}");
    // scalebench serve's own path does not apply to another server.
    for (args, want) in [
        (
            ["--http-server", "nginx", "--serve-files", "cached"],
            "--serve-files: nginx opens its files per request, as configured (--http-server nginx)",
        ),
        (
            ["--http-server", "fork", "--serve-loop", "poll"],
            "--serve-loop: this server has no event loop of scalebench's (--http-server fork)",
        ),
    ] {
        let o = bin()
            .args(["run", "http-ipstack"])
            .args(args)
            .output()
            .unwrap();
        // Options that do not go together: a usage error.
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(want), "{err}");
    }
}
