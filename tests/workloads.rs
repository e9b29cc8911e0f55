//! The real-world workloads through `scalebench run`: the rows the seeds'
//! tables have, exact request and byte counts, a schema-valid file, and
//! the rows in the HTML report.

mod common;

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
    // This machine's kernel has io_uring: serve runs on it by default.
    assert_eq!(w["params"]["server_loop"], "io_uring");
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
    let (doc, html) = run(&["http-shortconn"]);
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "http-shortconn");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    assert_eq!(w["params"]["requests_per_connection"], 1);
    assert_eq!(w["params"]["server_loop"], "io_uring");
    let fetches = w["params"]["fetches"].as_u64().unwrap();
    let sizes: Vec<u64> = w["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let bytes = r["params"]["object_bytes"].as_u64().unwrap();
            let l = clean(r, fetches, bytes);
            assert_eq!(l["connections"], fetches, "{}", r["label"]);
            bytes
        })
        .collect();
    assert_eq!(sizes, [1024, 8 * 1024, 16 * 1024]);
    assert!(html.contains("data-workload=\"http-shortconn\""));
}

#[test]
fn a_workload_name_is_suggested_when_misspelt() {
    bin()
        .args(["run", "http-ipstak", "--out", "/nonexistent/x.json"])
        .assert()
        .failure()
        .stderr(predicates::str::contains("did you mean `http-ipstack`"));
}
