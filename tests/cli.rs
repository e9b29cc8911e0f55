//! The binary, end to end: every benchmark at small n, caps under a low
//! limit, ^C in the middle of `fork`, exports and reports, and bad input.

use assert_cmd::prelude::*;
use predicates::prelude::*;
use scalebench::bench::REGISTRY;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use common::benchmark as bench;
use common::{assert_both_ways, assert_falling_both_ways, assert_valid, bin, load};

/// Processes whose command line mentions `dir` (our helpers and their
/// children are started from inside the work directory).
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| {
            let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            cmd.contains(&needle)
                .then(|| format!("{}: {cmd}", e.file_name().to_string_lossy()))
        })
        .collect()
}

/// A small result file with two benchmarks.
fn small_result(dir: &Path) -> PathBuf {
    let out = dir.join("small.json");
    bin()
        .args([
            "run", "socket", "bind", "--max", "60", "--runs", "2", "-q", "--label", "box-a",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn list_names_every_benchmark() {
    let out = bin().arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for b in REGISTRY {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(b.info().name))
            .unwrap_or_else(|| panic!("{} not listed", b.info().name));
        // Its n begins on its line (a long one wraps under its column).
        let first = b.info().n_meaning.split_whitespace().next().unwrap();
        assert!(line.split_whitespace().nth(1) == Some(first), "{line}");
    }
}

#[test]
fn every_benchmark_at_small_n_writes_a_valid_complete_file() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let n = 120u64;
    let assert = bin()
        .args([
            "run",
            "quick",
            "--max",
            &n.to_string(),
            "--runs",
            "2",
            "--out",
        ])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .assert()
        .success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], true);
    assert!(doc["finished"].is_string());
    let backends: Vec<&str> = scalebench::net::Backend::available_all()
        .iter()
        .map(|b| b.name())
        .collect();
    for b in REGISTRY {
        let name = b.info().name;
        let networked = name == "connect" || name == "httpreq";
        let series: Vec<String> = if networked {
            backends.iter().map(|b| format!("{name}[{b}]")).collect()
        } else {
            vec![name.to_string()]
        };
        for s in &series {
            let r = doc["benchmarks"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| &b["series"] == s)
                .unwrap_or_else(|| panic!("{s} missing"));
            assert_eq!(r["name"], name);
            assert_eq!(r["status"], "ok", "{s}: {}", r["message"]);
            assert!(r["message"].is_null(), "{s}: {}", r["message"]);
            assert_eq!(r["params"]["n"], n);
            let runs = r["runs"].as_array().unwrap();
            assert_eq!(runs.len(), 2, "{s}");
            for (i, run) in runs.iter().enumerate() {
                let ns: Vec<u64> = run["samples"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| s[0].as_u64().unwrap())
                    .collect();
                assert!(
                    run["samples"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|s| s[1].as_u64().unwrap() > 0)
                );
                let levels = matches!(b.schedule(), scalebench::bench::Schedule::Levels { .. });
                if levels {
                    // A level schedule: `levels` values of n, `ops_per_level` samples each.
                    let extra = &r["params"]["extra"];
                    let want = extra["levels"].as_u64().unwrap()
                        * extra["ops_per_level"].as_u64().unwrap();
                    assert_eq!(ns.len() as u64, want, "{s}");
                    assert!(ns.iter().all(|&x| x < n + 10), "{s}: n beyond the target");
                    assert!(
                        // connect times after one untimed lead-in connection.
                        *ns.iter().min().unwrap() <= 1 && ns.iter().any(|&x| x >= n * 9 / 10),
                        "{s}: the whole range"
                    );
                    if networked {
                        assert_eq!(extra["address_family"], "ipv4");
                    }
                    // Levels up and down again, or down and up again.
                    assert_eq!(
                        run["direction"],
                        if i % 2 == 1 { "down-up" } else { "up-down" }
                    );
                    assert!(run.get("recheck").is_none(), "{s}");
                } else {
                    // These time n both ways, in one or more passes
                    // (down and up again in odd-numbered runs); the others
                    // are re-timed at low n (20 operations at n = 120).
                    let alternates = b.downwards();
                    if alternates && b.falling() {
                        // fork-cleanup: the same, seen from the children
                        // removed (n = top − k).
                        assert_falling_both_ways(run, i, n, s);
                    } else if alternates {
                        assert_both_ways(run, i, n, s);
                    } else {
                        let (expect, direction): (Vec<u64>, &str) = if b.falling() {
                            ((1..=n).rev().collect(), "down")
                        } else {
                            ((0..n).collect(), "up")
                        };
                        assert_eq!(ns, expect, "{s}: n of each sample");
                        assert_eq!(run["direction"], direction, "{s} run {i}");
                        assert!(run.get("crossings").is_none(), "{s} run {i}");
                    }
                    let recheck: Vec<u64> = run["recheck"]
                        .as_array()
                        .map(|a| a.iter().map(|s| s[0].as_u64().unwrap()).collect())
                        .unwrap_or_default();
                    let (expect, when): (Vec<u64>, Value) = if alternates {
                        (Vec::new(), Value::Null)
                    } else if b.falling() {
                        ((1..=20).rev().collect(), "before".into())
                    } else {
                        ((0..20).collect(), "after".into())
                    };
                    assert_eq!(recheck, expect, "{s} run {i}: re-timing");
                    assert_eq!(run["recheck_when"], when, "{s} run {i}");
                }
            }
            assert!(stdout.contains(s.as_str()), "{s} missing from the summary");
        }
    }
    // The quick suite also runs every quick workload, at its small size.
    let names: Vec<&str> = doc["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            assert_eq!(w["status"], "ok", "{}: {}", w["name"], w["message"]);
            w["name"].as_str().unwrap()
        })
        .collect();
    let want: Vec<&str> = scalebench::workloads::WORKLOADS
        .iter()
        .filter(|w| w.info().quick)
        .map(|w| w.info().name)
        .collect();
    assert_eq!(names, want);
    for w in &want {
        assert!(stdout.contains(w), "{w} missing from the summary");
    }
    assert!(
        stdout.contains(&out.display().to_string()),
        "summary names the file"
    );
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work directory removed"
    );
    assert!(processes_under(&work).is_empty());
}

#[test]
fn a_low_descriptor_limit_caps_n_and_is_reported() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let cmd = format!(
        "ulimit -n 200 && exec '{}' run socket manymap-open --max 1000 --runs 2 -q --out '{}'",
        env!("CARGO_BIN_EXE_scalebench"),
        out.display()
    );
    let assert = Command::new("sh").args(["-c", &cmd]).assert().success();
    let stdout = String::from_utf8(assert.get_output().stdout.clone()).unwrap();
    let doc = load(&out);
    assert_valid(&doc);
    for name in ["socket", "manymap-open"] {
        let r = bench(&doc, name);
        assert_eq!(r["status"], "capped", "{name}");
        let cap = &r["caps"][0];
        assert_eq!(cap["resource"], "descriptors");
        assert_eq!(cap["requested"], 1000);
        let reached = cap["reached"].as_u64().unwrap();
        assert!(reached > 50 && reached < 200, "{reached}");
        assert!(
            cap["reason"]
                .as_str()
                .unwrap()
                .contains("RLIMIT_NOFILE 200"),
            "{}",
            cap["reason"]
        );
        assert_eq!(r["params"]["n"], reached);
        for run in r["runs"].as_array().unwrap() {
            assert_eq!(run["samples"].as_array().unwrap().len() as u64, reached);
        }
    }
    assert!(stdout.contains("capped: n ="), "{stdout}");
    assert!(stdout.contains("RLIMIT_NOFILE"), "{stdout}");
}

#[test]
fn sigint_during_fork_keeps_finished_benchmarks_and_leaves_no_child() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let mut child = bin()
        .args([
            "run", "socket", "fork", "--max", "3000", "--runs", "5", "-q", "--out",
        ])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until socket is recorded and fork has children alive.
    let start = Instant::now();
    loop {
        let done = std::fs::read_to_string(&out).is_ok_and(|s| s.contains("\"name\":\"socket\""));
        if done && processes_under(&work).len() > 50 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "fork never got going"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "did not exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains("interrupted"), "{err}");
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], false);
    assert_eq!(bench(&doc, "socket")["status"], "ok");
    assert_eq!(bench(&doc, "socket")["runs"].as_array().unwrap().len(), 5);
    let left = processes_under(&work);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "work directory removed"
    );
}

#[test]
fn sigint_during_httpreq_stops_the_server_too() {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let mut child = bin()
        .args([
            "run",
            "httpreq",
            "--backend",
            "poll",
            "--max",
            "15000",
            "-q",
            "--out",
        ])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Interrupted in the middle of measuring: once the server holds a
    // hundred connections.
    let start = Instant::now();
    loop {
        let holding = processes_under(&work)
            .iter()
            .filter(|p| p.contains("__responder"))
            .filter_map(|p| p.split(':').next()?.parse::<u32>().ok())
            .any(|pid| std::fs::read_dir(format!("/proc/{pid}/fd")).is_ok_and(|d| d.count() > 100));
        if holding {
            break;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "httpreq ended before the server held 100 connections"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the server never held 100 connections"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "did not exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let left = processes_under(&work);
    assert!(left.is_empty(), "processes left behind: {left:?}");
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], false);
}

#[test]
fn ipv6_and_a_chosen_backend_are_recorded() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    bin()
        .args([
            "run",
            "connect",
            "httpreq",
            "-6",
            "--backend",
            "poll",
            "--max",
            "40",
            "--runs",
            "1",
            "-q",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    let series: Vec<&str> = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["series"].as_str().unwrap())
        .collect();
    assert_eq!(series, ["connect[poll]", "httpreq[poll]"]);
    for b in doc["benchmarks"].as_array().unwrap() {
        assert_eq!(b["status"], "ok", "{}", b["message"]);
        assert_eq!(b["params"]["extra"]["address_family"], "ipv6");
    }
}

#[test]
fn an_unknown_or_absent_backend_is_refused() {
    bin()
        .args(["run", "connect", "--backend", "iocp"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("`iocp`: unknown backend"));
    let absent = if cfg!(target_os = "linux") {
        "kqueue"
    } else {
        "epoll"
    };
    bin()
        .args(["run", "connect", "--backend", absent])
        .assert()
        .failure()
        .stderr(predicate::str::contains(format!(
            "--backend {absent}: {absent} does not exist"
        )));
}

#[cfg(target_arch = "x86_64")]
#[test]
fn tsc_timer_is_recorded() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    bin()
        .args([
            "run", "socket", "--max", "50", "--runs", "1", "-q", "--timer", "tsc", "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["timer"]["kind"], "tsc");
    assert!(doc["timer"]["tsc_hz"].as_f64().unwrap() > 1e8);
}

#[test]
fn export_writes_every_sample() {
    let t = tempfile::tempdir().unwrap();
    let r = small_result(t.path());
    let out = bin()
        .arg("export")
        .arg(&r)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("system,benchmark,run,n,ns,emulated,counts")
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 2 * 2 * 60);
    assert!(rows[0].starts_with("box-a,socket,0,0,"), "{}", rows[0]);
    // Measured here, natively: every row says so.
    assert!(
        rows.iter().all(|r| r.ends_with(",false,time")),
        "{}",
        rows[0]
    );
}

#[test]
fn report_formats_have_one_row_per_benchmark() {
    let t = tempfile::tempdir().unwrap();
    let r = small_result(t.path());
    let csv = bin()
        .arg("report")
        .arg(&r)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(csv.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "system,benchmark,class,exponent,low_ns,high_ns,flags,max_ns,counts"
    );
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[1].starts_with("box-a,socket,"), "{}", lines[1]);
    // A label the docs name (a small real run may well be `undecided`,
    // or a range).
    let class = lines[1].split(',').nth(2).unwrap();
    assert!(
        scalebench::analysis::Label::parse(class).is_some(),
        "{}",
        lines[1]
    );
    let md = bin()
        .arg("report")
        .arg(&r)
        .args(["--format", "markdown"])
        .output()
        .unwrap();
    let text = String::from_utf8(md.stdout).unwrap();
    // The table first; before it only the warnings a busy machine gets
    // (steal time over 5 %, which a loaded host may cause).
    let (before, table) = text
        .split_once("| system | benchmark | class |")
        .unwrap_or_else(|| panic!("no verdict table:\n{text}"));
    assert!(
        before
            .lines()
            .all(|l| l.is_empty() || l.starts_with("**Warning, box-a:** the machine was busy")),
        "{text}"
    );
    assert!(!table.is_empty());
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| box-a |")).count(),
        2
    );
    // Two systems side by side in the terminal report.
    let r2 = t.path().join("other.json");
    let mut doc = load(&r);
    doc["label"] = "box-b".into();
    std::fs::write(&r2, doc.to_string()).unwrap();
    bin()
        .arg("report")
        .arg(&r)
        .arg(&r2)
        .assert()
        .success()
        .stdout(
            predicate::str::contains("box-a socket").and(predicate::str::contains("box-b socket")),
        );
}

#[test]
fn analyze_judges_external_samples() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("lin.csv");
    let mut s = String::from("run,n,ns\n");
    for run in 0..3 {
        for n in 0..2000u64 {
            let wobble = (n * 7919 + run * 31) % 50;
            s.push_str(&format!("{run},{n},{}\n", 1000 + 3 * n + wobble));
        }
    }
    std::fs::write(&f, s).unwrap();
    bin().arg("analyze").arg(&f).assert().success().stdout(
        predicate::str::contains("O(n)").and(predicate::str::contains("6 000 samples in 3 runs")),
    );
    let out = bin()
        .arg("analyze")
        .arg(&f)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().nth(1).unwrap().contains(",O(n),"), "{text}");
    // Samples too few to judge: the report says why, and so do the
    // message and the status (nothing asked for was judged).
    let few = t.path().join("few.csv");
    std::fs::write(&few, "n,ns\n1,100\n2,110\n").unwrap();
    let out = bin()
        .arg("analyze")
        .arg(&few)
        .args(["--name", "tiny"])
        .output()
        .unwrap();
    let (said, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{said}{err}");
    assert!(said.contains("tiny"), "{said}");
    assert!(err.starts_with("analyze: tiny: no verdict: "), "{err}");
}

#[test]
fn unknown_benchmark_suggests_the_nearest() {
    bin()
        .args(["run", "forc-static"])
        .assert()
        .failure()
        .code(2)
        .stderr(
            predicate::str::contains("unknown benchmark, workload or suite `forc-static`")
                .and(predicate::str::contains("did you mean `fork-static`")),
        );
}

#[test]
fn malformed_csv_names_file_and_line() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("bad.csv");
    std::fs::write(&f, "n,ns\n1,100\n2,fast\n").unwrap();
    bin()
        .arg("analyze")
        .arg(&f)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "bad.csv: line 3: ns is not a number: \"fast\"",
        ));
    std::fs::write(&f, "x,y\n1,2\n").unwrap();
    bin()
        .arg("analyze")
        .arg(&f)
        .assert()
        .failure()
        .stderr(predicate::str::contains("line 1").and(predicate::str::contains("`n` and `ns`")));
}

#[test]
fn bad_result_files_are_named_and_refused() {
    let t = tempfile::tempdir().unwrap();
    let missing = t.path().join("nope.json");
    bin()
        .arg("report")
        .arg(&missing)
        .assert()
        .failure()
        .stderr(predicate::str::contains("nope.json: cannot read"));
    let broken = t.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\"schema\": \"scalebench-result\",\n  \"schema_version\": 1,,}",
    )
    .unwrap();
    bin()
        .arg("report")
        .arg(&broken)
        .assert()
        .failure()
        .stderr(predicate::str::contains("broken.json: line 2, column"));
    let r = small_result(t.path());
    let mut doc = load(&r);
    doc["schema_version"] = 99.into();
    let newer = t.path().join("newer.json");
    std::fs::write(&newer, doc.to_string()).unwrap();
    bin().arg("report").arg(&newer).assert().failure().stderr(
        predicate::str::contains("newer.json: schema version 99 is not supported")
            .and(predicate::str::contains("newer scalebench")),
    );
    let other = t.path().join("other.json");
    std::fs::write(&other, "{\"hello\": 1}").unwrap();
    bin()
        .arg("export")
        .arg(&other)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "other.json: not a scalebench result file",
        ));
}

#[test]
fn sysinfo_prints_the_system() {
    bin()
        .arg("sysinfo")
        .assert()
        .success()
        .stdout(predicate::str::contains("RLIMIT_NOFILE"));
    let out = bin().args(["sysinfo", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["os"].is_string() && v["cpu"]["count"].as_u64().unwrap() >= 1);
    let t = &v["tuning"];
    assert!(t.is_object(), "{v}");
    if cfg!(target_os = "linux") {
        assert!(t["kernel_cmdline"].is_string(), "{t}");
        assert!(t["clocksource"].is_string(), "{t}");
        let load = t["load_average"].as_array().expect("load_average");
        assert_eq!(load.len(), 3, "{t}");
        assert!(t["busiest"].is_array(), "{t}");
        // The text form prints them too.
        bin().arg("sysinfo").assert().success().stdout(
            predicate::str::contains("clocksource ")
                .and(predicate::str::contains("load "))
                .and(predicate::str::contains("virtual     native"))
                .and(predicate::str::contains("governor    "))
                .and(predicate::str::contains("boost       "))
                .and(predicate::str::contains("kconfig     ")),
        );
    }
}

#[test]
fn progress_is_lines_off_a_terminal_a_bar_on_one_and_nothing_when_quiet() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let run = |quiet: bool| {
        let mut c = bin();
        c.args([
            "run", "socket", "--max", "50", "--runs", "2", "--force", "--out",
        ])
        .arg(&out);
        if quiet {
            c.arg("-q");
        }
        c.output().unwrap()
    };
    let lines = String::from_utf8(run(false).stderr).unwrap();
    for l in [
        // The whole run's count, with what is left (from the quick suite's
        // times, scaled: only its presence is checked).
        "[1/1] benchmark socket — about ",
        "socket: warm-up",
        "socket: run 1/2",
        "socket: run 2/2",
        "socket: 2 runs, 100 samples",
    ] {
        assert!(lines.contains(l), "{l:?} missing from {lines}");
    }
    assert_eq!(String::from_utf8(run(true).stderr).unwrap(), "");
    // On a terminal (script(1) gives one): a bar with an ETA.
    let cmd = format!(
        "'{}' run socket --max 20000 --runs 1 --force --out '{}'",
        env!("CARGO_BIN_EXE_scalebench"),
        out.display()
    );
    let tty = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .unwrap();
    assert!(tty.status.success());
    let text = String::from_utf8_lossy(&tty.stdout);
    assert!(
        text.contains("ETA"),
        "no progress bar on a terminal: {text}"
    );
}

#[test]
fn version_names_the_commit_and_the_build_day() {
    let o = bin().arg("--version").output().unwrap();
    assert!(o.status.success());
    let v = String::from_utf8(o.stdout).unwrap();
    let want = format!("scalebench {} (commit ", env!("CARGO_PKG_VERSION"));
    assert!(v.starts_with(&want), "{v}");
    let commit = v[want.len()..].split(',').next().unwrap();
    // The commit this checkout is at (the tests run from one).
    let head = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("git runs");
    assert!(head.status.success(), "the tests run from a git checkout");
    assert_eq!(commit, String::from_utf8_lossy(&head.stdout).trim(), "{v}");
    let (day, analysis) = v
        .split(", built ")
        .nth(1)
        .unwrap()
        .trim_end()
        .trim_end_matches(')')
        .split_once(", analysis ")
        .expect("the analysis named");
    assert!(
        analysis.len() == 16 && analysis.chars().all(|c| c.is_ascii_hexdigit()),
        "{v}"
    );
    let b = day.as_bytes();
    assert!(
        b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && day.replace('-', "").parse::<u32>().is_ok(),
        "{v}"
    );
}

#[test]
fn every_command_has_examples_and_exit_statuses_in_its_help() {
    let top = bin().arg("--help").output().unwrap();
    let text = String::from_utf8(top.stdout).unwrap();
    assert!(
        text.contains("Examples:") && text.contains("Exit status:"),
        "{text}"
    );
    // Every visible command, from the list --help prints.
    let commands: Vec<&str> = text
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 18, "{commands:?}");
    for c in commands {
        let o = bin().args([c, "--help"]).output().unwrap();
        let h = String::from_utf8(o.stdout).unwrap();
        assert!(o.status.success(), "{c}");
        assert!(h.contains("Examples:\n  scalebench "), "{c}: {h}");
        assert!(h.contains("Exit status:\n  0 "), "{c}: {h}");
    }
}

#[test]
fn completions_and_man_pages_come_from_the_command_line() {
    // bash's script parses, and each script names a command and an option.
    let o = bin().args(["completions", "bash"]).output().unwrap();
    assert!(o.status.success());
    let t = tempfile::tempdir().unwrap();
    let script = t.path().join("scalebench.bash");
    std::fs::write(&script, &o.stdout).unwrap();
    let check = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = bin().args(["completions", shell]).output().unwrap();
        let s = String::from_utf8(o.stdout).unwrap();
        assert!(o.status.success(), "{shell}");
        assert!(s.contains("compare") && s.contains("relabel"), "{shell}");
        // run's workload flags are added at run time, and are there too.
        assert!(s.contains("mkfs") && s.contains("pg-mode"), "{shell}");
    }
    bin()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'tcsh'"));
    // One page per visible command, roff, with the exit statuses.
    let dir = t.path().join("man1");
    std::fs::create_dir(&dir).unwrap();
    bin().args(["man", "-o"]).arg(&dir).assert().success();
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    for p in [
        "scalebench.1",
        "scalebench-run.1",
        "scalebench-compare.1",
        "scalebench-man.1",
    ] {
        assert!(pages.iter().any(|x| x == p), "{p}: {pages:?}");
    }
    assert!(
        !pages.iter().any(|p| p.contains("__")),
        "hidden commands have no page"
    );
    let run = std::fs::read_to_string(dir.join("scalebench-run.1")).unwrap();
    assert!(run.contains(".TH scalebench-run 1"), "{run}");
    assert!(run.contains(".SH \"EXIT STATUS\""), "{run}");
    assert!(
        run.contains(env!("CARGO_PKG_VERSION")),
        "the page names the version"
    );
    assert!(run.contains("warm\\-up\\-ops"), "every option is there");
    assert!(run.contains("mail\\-size"), "the workloads' options too");
    // Nothing replaced without --force.
    bin()
        .args(["man", "-o"])
        .arg(&dir)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("exists; use --force"));
    bin()
        .args(["man", "--force", "-o"])
        .arg(&dir)
        .assert()
        .success();
}

#[test]
fn list_prints_aligned_rows_or_json() {
    let o = bin().args(["list", "--json"]).output().unwrap();
    assert!(o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"socket") && names.contains(&"fork"), "{v}");
    let pairs: Vec<(&str, &str)> = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| Some((b["name"].as_str()?, b["pairs_with"].as_str()?)))
        .collect();
    assert_eq!(
        pairs,
        [("bind-fresh", "bind"), ("fork-static", "fork")],
        "{v}"
    );
    for b in v["benchmarks"].as_array().unwrap() {
        assert!(
            b["quick_n"].as_u64().unwrap() <= b["full_n"].as_u64().unwrap(),
            "{b}"
        );
        assert!(!b["timed"].as_str().unwrap().is_empty(), "{b}");
    }
    let workloads = v["workloads"].as_array().unwrap();
    assert!(
        workloads.iter().any(|w| w["name"] == "http-shortconn"),
        "{v}"
    );
    // The table: every description is there whole, word for word, and no
    // line is wider than 100 columns.
    let o = bin().arg("list").output().unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.lines().all(|l| l.chars().count() <= 100), "{text}");
    assert!(
        text.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("a variant of fork, drawn and compared with it"),
        "{text}"
    );
    let words: Vec<&str> = text.split_whitespace().collect();
    let described = v["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| [&b["n"], &b["timed"]])
        .chain(workloads.iter().map(|w| &w["what"]));
    for d in described {
        for w in d.as_str().unwrap().split_whitespace() {
            assert!(words.contains(&w), "{w}: {text}");
        }
    }
}

#[test]
fn a_dry_run_prints_the_plan_and_its_estimate_and_measures_nothing() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = bin()
        .args([
            "run",
            "socket",
            "connect",
            "--backend",
            "epoll,poll",
            "--runs",
            "3",
        ])
        .args(["--dry-run", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for item in [
        "benchmark socket",
        "benchmark connect[epoll]",
        "benchmark connect[poll]",
    ] {
        assert!(text.contains(item), "{item}: {text}");
    }
    assert!(
        text.contains("3 items, 3 runs each series; about "),
        "{text}"
    );
    assert!(!out.exists(), "a dry run writes no result file");
    // How the runs go is said, as the run will do it.
    assert!(
        text.contains("benchmark runs: passes up and down within each run"),
        "{text}"
    );
    let up = bin()
        .args(["run", "fork", "--order", "up", "--dry-run"])
        .output()
        .unwrap();
    assert!(
        common::text(&up.stdout)
            .contains("benchmark runs: one ascending pass per run, as the seeds (--order up)"),
        "{}",
        common::text(&up.stdout)
    );
    // The same plan as JSON: every item, the runs and the total.
    let o = bin()
        .args(["run", "socket", "connect", "--backend", "epoll,poll"])
        .args(["--dry-run", "--json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let items = plan["items"].as_array().unwrap();
    let names: Vec<&str> = items.iter().map(|i| i["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["socket", "connect[epoll]", "connect[poll]"],
        "{plan}"
    );
    assert_eq!(plan["runs"]["stop"], "decided", "{plan}");
    assert_eq!(plan["runs"]["order"], "passes", "{plan}");
    assert_eq!(plan["runs"]["min"], 3, "{plan}");
    let sum: f64 = items.iter().map(|i| i["seconds"].as_f64().unwrap()).sum();
    assert!(
        (sum - plan["seconds"].as_f64().unwrap()).abs() < 0.2,
        "{plan}"
    );
    // --json is for the plan only.
    bin()
        .args(["run", "socket", "--json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--dry-run"));
    // An item with no time to scale from says so, and the total says how many.
    let o = bin()
        .args([
            "run",
            "http-shortconn",
            "--sweep",
            "connections=1,10",
            "--dry-run",
        ])
        .output()
        .unwrap();
    // (Wrapped to 100 columns: read as one line.)
    let text = String::from_utf8(o.stdout).unwrap();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("unknown"), "{text}");
    assert!(
        text.contains("1 item; time unknown: the quick suite on this project's machine measured nothing like it"),
        "{text}"
    );
    assert!(
        text.contains(
            "each at 2 levels of connections (1, 10): 1s heat-up, 3 samples of 2s a level"
        ),
        "{text}"
    );
}

/// A reader that has gone (`scalebench … 2>&1 | head -1`) never turns a
/// command into a panic (exit 101): with standard output and error a pipe
/// whose read end is closed, each command exits as it does when read.
#[test]
fn a_closed_pipe_changes_no_exit_status() {
    let t = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/default.json");
    let tuned = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tuned.json");
    let missing = t.path().join("missing.json");
    let missing = missing.to_str().unwrap();
    let commands: Vec<Vec<&str>> = vec![
        vec!["list"],
        vec!["sysinfo"],
        vec!["report", fixture],
        vec!["compare", fixture, tuned, "--threshold", "0.1"],
        vec!["compare", fixture, tuned, "--fail-on", "nosuch"],
        vec!["compare", fixture, missing],
        vec!["run", "nosuch"],
        vec!["suite", "list"],
    ];
    for args in commands {
        let read = bin().args(&args).output().unwrap();
        assert!(
            !read.stdout.is_empty() || !read.stderr.is_empty(),
            "{args:?} says nothing: the test would prove nothing"
        );
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let closed = bin()
            .args(&args)
            .stdout(w.try_clone().unwrap())
            .stderr(w)
            .status()
            .unwrap();
        assert_ne!(closed.code(), Some(101), "{args:?} panicked");
        assert_eq!(closed.code(), read.status.code(), "{args:?}");
    }
}
