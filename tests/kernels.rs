//! The benchmarks of the kernels suite that are new in it (`bind-port`,
//! `socket-threads`, `fork-maps`, `connect-ports`) through the binary at
//! small n: each writes a valid result file with the samples its schedule
//! promises, and `socket-threads` records why its maximum per n matters,
//! which the terminal report then shows.

use crate::common::{assert_valid, bin, entry, load, sample_ns};

/// The series of `doc` named `name`.

#[test]
fn the_new_kernel_benchmarks_run_at_small_n_and_socket_threads_reports_its_maxima() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let n = 300u64;
    let o = bin()
        .args([
            "run",
            "bind-port",
            "socket-threads",
            "fork-maps",
            "connect-ports",
        ])
        .args(["--max", &n.to_string(), "--runs", "2", "-o"])
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
    for name in ["bind-port", "socket-threads", "fork-maps", "connect-ports"] {
        let b = entry(&doc, "benchmarks", "series", name);
        assert_eq!(b["status"], "ok", "{name}: {}", b["message"]);
        assert_eq!(b["params"]["n"], n, "{name}");
        assert_eq!(
            b["max_matters"].is_string(),
            name == "socket-threads",
            "{name}"
        );
        for run in b["runs"].as_array().unwrap() {
            let ns = sample_ns(run);
            assert!(
                ns.iter().all(|&x| x < n + 10),
                "{name}: n beyond the target"
            );
            match name {
                // Levels: 40 values of n, 6 samples at each.
                "fork-maps" | "connect-ports" => {
                    assert_eq!(ns.len(), 240, "{name}");
                    assert_eq!(b["params"]["extra"]["levels"], 40);
                }
                // Up only, from a fresh table, re-timed at low n.
                "socket-threads" => {
                    assert_eq!(ns, (0..n).collect::<Vec<_>>());
                    assert_eq!(run["recheck_when"], "after");
                }
                // Both ways: every n once.
                _ => {
                    let mut sorted = ns.clone();
                    sorted.sort_unstable();
                    assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "{name}");
                }
            }
        }
    }
    assert_eq!(
        stdout.matches("max per n (a socket() that grows").count(),
        1,
        "{stdout}"
    );
}
