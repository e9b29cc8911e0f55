//! `scalebench testbed up|status|down` and the `forward` workload through
//! the binary, as root (CI runs as root): what they make exists while it
//! should (namespaces, veth links, tbf, sshd answering from another
//! namespace) and nothing is left afterwards — also after `up` was killed
//! with SIGKILL mid-way; bad input is refused by name.

#![cfg(target_os = "linux")]

use crate::common;

use common::{
    alive, assert_valid, bin, cmd, load, namespaces, processes_naming, require_root, text,
};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `scalebench ARGS…` to its end.
fn sb(args: &[&str]) -> Output {
    bin().args(args).output().expect("scalebench runs")
}

/// Runs it and insists on success; its standard output.
fn sb_ok(args: &[&str]) -> String {
    let o = sb(args);
    assert!(
        o.status.success(),
        "scalebench {args:?} failed ({}):\n{}\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

/// How long an event may take before a test gives up on it.
const PATIENCE: Duration = Duration::from_secs(60);

fn state_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sb-testbed-{name}"))
}

/// Nothing of test bed `name` is left: namespaces, veth links in this
/// namespace, its directory, processes started for it.
fn assert_gone(name: &str) {
    let ns = namespaces(&format!("sb-{name}-"));
    assert!(ns.is_empty(), "{name}: namespaces left: {ns:?}");
    let veths = cmd("ip", &["-o", "link", "show", "type", "veth"]);
    assert!(
        !veths.contains(": to-"),
        "{name}: a test bed link in the root namespace:\n{veths}"
    );
    assert!(
        !state_dir(name).exists(),
        "{name}: {} left",
        state_dir(name).display()
    );
    let procs = processes_naming(&format!("sb-testbed-{name}/"));
    assert!(procs.is_empty(), "{name}: processes left: {procs:?}");
}

/// `testbed status --json` of `name`.
fn status(name: &str) -> Value {
    serde_json::from_str(&sb_ok(&["testbed", "status", "--name", name, "--json"])).unwrap()
}

#[test]
fn up_status_down_leaves_nothing() {
    require_root();
    let name = "it-plain";
    let _ = sb(&["testbed", "down", "--name", name]);
    let out = sb_ok(&[
        "testbed", "up", "--hosts", "3", "--name", name, "--link", "100mbit",
    ]);
    assert!(out.contains("sb-it-plain-h1 (forwards)"), "{out}");
    assert_eq!(
        namespaces("sb-it-plain-"),
        ["sb-it-plain-h1", "sb-it-plain-h2", "sb-it-plain-h3"]
    );
    // The hub has a veth to each other host, each leaf one to the hub,
    // all shaped; nothing is in the root namespace.
    let hub = cmd(
        "ip",
        &["-n", "sb-it-plain-h1", "-o", "link", "show", "type", "veth"],
    );
    assert!(hub.contains("to-h2@") && hub.contains("to-h3@"), "{hub}");
    for (leaf, addr) in [("h2", "198.18.1.2/24"), ("h3", "198.18.2.2/24")] {
        let ns = format!("sb-it-plain-{leaf}");
        let a = cmd("ip", &["-n", &ns, "-o", "addr", "show", "dev", "to-h1"]);
        assert!(a.contains(addr), "{ns}: {a}");
        let q = cmd("tc", &["-n", &ns, "qdisc", "show", "dev", "to-h1"]);
        assert!(q.contains("tbf") && q.contains("100Mbit"), "{ns}: {q}");
        let r = cmd("ip", &["-n", &ns, "route"]);
        assert!(r.contains("198.18.0.0/15 via 198.18."), "{ns}: {r}");
    }
    assert!(
        !cmd("ip", &["-o", "link"]).contains(": to-h"),
        "a link in the root namespace"
    );
    let s = status(name);
    assert_eq!(s["state"]["complete"], true);
    assert_eq!(s["state"]["link_bits_per_s"], 100_000_000);
    let hosts = s["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 3);
    for h in hosts {
        assert_eq!(h["present"], true, "{h}");
        for (_, q) in h["qdiscs"].as_object().unwrap() {
            assert_eq!(q, "tbf 100 Mbit/s", "{h}");
        }
    }
    let words = sb_ok(&["testbed", "status", "--name", name]);
    assert!(
        words.contains("shaped to 100 Mbit/s") && words.contains("to-h3        198.18.2.1/24"),
        "{words}"
    );
    let down = sb_ok(&["testbed", "down", "--name", name]);
    assert!(
        down.contains("namespaces sb-it-plain-h1, sb-it-plain-h2, sb-it-plain-h3 removed"),
        "{down}"
    );
    assert_gone(name);
    let again = sb(&["testbed", "status", "--name", name]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("no test bed named it-plain"));
}

/// Reads what the sshd at `addr` says first, from inside namespace `ns`.
fn banner(ns: &str, addr: &str) -> String {
    let o = Command::new("timeout")
        .args(["60", "ip", "netns", "exec", ns, "bash", "-c"])
        .arg(format!("exec 3<>/dev/tcp/{addr}/22 && head -c 8 <&3"))
        .output()
        .unwrap();
    text(&o.stdout)
}

#[test]
fn sshd_answers_from_another_namespace_and_goes_with_down() {
    require_root();
    let name = "it-sshd";
    let _ = sb(&["testbed", "down", "--name", name]);
    // sshd's privilege separation directory is made in a private /run.
    let run_sshd = std::path::Path::new("/run/sshd");
    let had_run_sshd = run_sshd.exists();
    sb_ok(&["testbed", "up", "--hosts", "3", "--name", name, "--sshd"]);
    assert_eq!(run_sshd.exists(), had_run_sshd, "/run/sshd");
    let s = status(name);
    let pids: Vec<u32> = s["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["sshd_alive"].as_u64().expect("sshd runs") as u32)
        .collect();
    assert_eq!(pids.len(), 3);
    // h2 → h3 goes through the hub: the banner, then a login with the
    // test bed's client key.
    assert_eq!(banner("sb-it-sshd-h2", "198.18.2.2"), "SSH-2.0-");
    assert_eq!(banner("sb-it-sshd-h3", "198.18.1.1"), "SSH-2.0-");
    let keys = &s["state"]["ssh"];
    let o = Command::new("timeout")
        .args(["60", "ip", "netns", "exec", "sb-it-sshd-h2", "ssh"])
        .arg("-i")
        .arg(keys["client_key"].as_str().unwrap())
        .arg("-o")
        .arg(format!(
            "UserKnownHostsFile={}",
            keys["known_hosts"].as_str().unwrap()
        ))
        .args([
            "-o",
            "BatchMode=yes",
            "-o",
            "IdentitiesOnly=yes",
            "root@198.18.2.2",
            "ip -o addr show dev to-h1; echo HOME=$HOME",
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        text(&o.stdout).contains("198.18.2.2/24"),
        "ssh login: {}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    // A session's home is the test bed's, not root's: no dotfile of the
    // machine runs in it.
    let home = state_dir(name).join("ssh/h3/home");
    assert!(
        text(&o.stdout)
            .lines()
            .any(|l| l == format!("HOME={}", home.display())),
        "{}",
        text(&o.stdout)
    );
    let down = sb_ok(&["testbed", "down", "--name", name]);
    assert_eq!(
        down.lines().filter(|l| l.starts_with("sshd ")).count(),
        3,
        "{down}"
    );
    for p in pids {
        assert!(!alive(p), "sshd {p} survived down");
    }
    assert_gone(name);
    assert_eq!(run_sshd.exists(), had_run_sshd, "/run/sshd");
}

#[test]
fn a_killed_or_stale_up_is_removed_by_the_next() {
    require_root();
    let name = "it-kill";
    let _ = sb(&["testbed", "down", "--name", name]);
    let dir = state_dir(name);
    let mut up = bin()
        .args([
            "testbed",
            "up",
            "--hosts",
            "3",
            "--name",
            name,
            "--sshd",
            "--step-pause",
            "1s",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once its state records all three sshd running, in the
    // pause (1 s) before it finishes.
    let recorded = || {
        std::fs::read_to_string(dir.join("state.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .is_some_and(|st| {
                st["hosts"]
                    .as_array()
                    .is_some_and(|h| h.iter().filter(|h| h["sshd"]["pid"].is_u64()).count() == 3)
            })
    };
    let t0 = Instant::now();
    while !recorded() {
        assert!(t0.elapsed() < PATIENCE, "up never recorded the third sshd");
        assert!(up.try_wait().unwrap().is_none(), "up ended early");
        std::thread::sleep(Duration::from_millis(5));
    }
    up.kill().unwrap(); // SIGKILL
    up.wait().unwrap();
    let st = load(&dir.join("state.json"));
    assert_eq!(st["complete"], false, "killed before it finished");
    let sshd: Vec<u32> = st["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["sshd"]["pid"].as_u64().map(|p| p as u32))
        .collect();
    assert_eq!(sshd.len(), 3, "{st}");
    assert!(sshd.iter().all(|&p| alive(p)), "sshd {sshd:?}");
    assert_eq!(namespaces("sb-it-kill-").len(), 3);
    let status = sb_ok(&["testbed", "status", "--name", name]);
    assert!(status.contains("never finished"), "{status}");

    // The next up of that name removes it first, sshd processes too.
    let o = sb(&["testbed", "up", "--hosts", "2", "--name", name]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("removed the test bed it-kill") && err.contains("never finished"),
        "{err}"
    );
    for p in &sshd {
        assert!(!alive(*p), "sshd {p} of the killed up survived");
    }
    assert_eq!(
        namespaces("sb-it-kill-"),
        ["sb-it-kill-h1", "sb-it-kill-h2"]
    );
    // A finished test bed left up is replaced too.
    let o = sb(&["testbed", "up", "--hosts", "1", "--name", name]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("removed the test bed it-kill") && !err.contains("never finished"),
        "{err}"
    );
    assert_eq!(namespaces("sb-it-kill-"), ["sb-it-kill-h1"]);
    sb_ok(&["testbed", "down", "--name", name]);
    assert_gone(name);
}

#[test]
fn ctrl_c_during_up_removes_what_was_made() {
    require_root();
    let name = "it-intr";
    let _ = sb(&["testbed", "down", "--name", name]);
    let up = bin()
        .args([
            "testbed",
            "up",
            "--hosts",
            "3",
            "--name",
            name,
            "--sshd",
            "--step-pause",
            "300ms",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while namespaces("sb-it-intr-").len() < 3 {
        assert!(t0.elapsed() < PATIENCE, "no namespaces made");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(up.id() as i32, libc::SIGINT) };
    let o = up.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("interrupted"),
        "{}",
        text(&o.stderr)
    );
    assert_gone(name);
}

#[test]
fn bad_input_is_refused_by_name() {
    for (args, says) in [
        (
            vec!["testbed", "up", "--link", "5parsecs"],
            "`5parsecs` is not a link rate",
        ),
        (
            vec!["testbed", "up", "--link", "100mbps"],
            "bytes per second",
        ),
        (
            vec!["testbed", "up", "--hosts", "0"],
            "'0' for '--hosts <N>'",
        ),
        (
            vec!["testbed", "up", "--hosts", "1000"],
            "'1000' for '--hosts <N>'",
        ),
        (
            vec!["testbed", "up", "--name", "a/b"],
            "`a/b` is not a test bed name",
        ),
        (
            vec!["testbed", "down", "--name", "no-such-bed"],
            "no test bed named no-such-bed",
        ),
    ] {
        let o = sb(&args);
        let err = text(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    // Without CAP_NET_ADMIN: said, nothing made.
    let o = Command::new("setpriv")
        .args(["--inh-caps=-net_admin", "--bounding-set=-net_admin"])
        .arg(env!("CARGO_BIN_EXE_scalebench"))
        .args(["testbed", "up", "--name", "it-nocap"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("root") && err.contains("CAP_NET_ADMIN"),
        "{err}"
    );
    assert_gone("it-nocap");
}

/// A state file that cannot be read is named with what is wrong and the
/// way out, which removes the test bed by its names — and nothing of
/// another test bed whose name begins the same way.
#[test]
fn a_damaged_state_is_named_and_down_force_removes_the_test_bed() {
    require_root();
    let (name, other) = ("it-dmg", "it-dmg-2");
    for n in [name, other] {
        let _ = sb(&["testbed", "down", "--name", n, "--force"]);
    }
    sb_ok(&["testbed", "up", "--hosts", "2", "--name", name, "--sshd"]);
    sb_ok(&["testbed", "up", "--hosts", "1", "--name", other]);
    let state = state_dir(name).join("state.json");
    let good = std::fs::read_to_string(&state).unwrap();
    let sshd: Vec<u32> = load(&state)["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["sshd"]["pid"].as_u64().map(|p| p as u32))
        .collect();
    assert_eq!(sshd.len(), 2, "{good}");
    let mut newer: Value = serde_json::from_str(&good).unwrap();
    newer["version"] = 99.into();
    for (content, wrong) in [
        ("".to_string(), "is empty"),
        ("{ garbage".to_string(), "is damaged: not JSON"),
        (good[..good.len() / 2].to_string(), "is cut short"),
        (newer.to_string(), "is of version 99, not 1"),
        (
            r#"{"name": "it-dmg"}"#.to_string(),
            "is not a test bed's state",
        ),
    ] {
        std::fs::write(&state, &content).unwrap();
        for cmd in ["status", "down"] {
            let o = sb(&["testbed", cmd, "--name", name]);
            let err = text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{cmd}: {err}");
            assert!(
                err.contains(&format!("the state file {} {wrong}", state.display()))
                    && err.contains("`scalebench testbed down --name it-dmg --force`"),
                "{cmd}: {err}"
            );
            assert!(!err.contains("panicked"), "{err}");
        }
        let o = sb(&["testbed", "up", "--name", name]);
        assert!(text(&o.stderr).contains("--force"), "{}", text(&o.stderr));
    }
    assert_eq!(
        namespaces("sb-it-dmg-"),
        ["sb-it-dmg-2-h1", "sb-it-dmg-h1", "sb-it-dmg-h2"]
    );
    let start = Instant::now();
    let o = sb(&["testbed", "down", "--name", name, "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(start.elapsed() < PATIENCE, "{:?}", start.elapsed());
    let out = text(&o.stdout);
    assert!(out.contains("sb-it-dmg-h1, sb-it-dmg-h2 removed"), "{out}");
    for p in &sshd {
        assert!(!alive(*p), "sshd {p} survived");
    }
    assert_eq!(
        namespaces("sb-it-dmg-"),
        ["sb-it-dmg-2-h1"],
        "the other's kept"
    );
    assert!(!state_dir(name).exists());
    let procs = processes_naming(&format!("sb-testbed-{name}/"));
    assert!(procs.is_empty(), "processes left: {procs:?}");
    // Nothing left: said, and no error.
    let o = sb(&["testbed", "down", "--name", name, "--force"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("nothing of a test bed named it-dmg found"));
    sb_ok(&["testbed", "down", "--name", other]);
    assert_gone(name);
    assert_gone(other);
}

/// `run forward` at small rates with `extra` arguments, in a work
/// directory of its own: the result file and the run's pid.
fn run_forward(extra: &[&str], prefix: &[&str]) -> (Value, u32, Output) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let mut c = Command::new(
        prefix
            .first()
            .copied()
            .unwrap_or(env!("CARGO_BIN_EXE_scalebench")),
    );
    if !prefix.is_empty() {
        c.args(&prefix[1..]).arg(env!("CARGO_BIN_EXE_scalebench"));
    }
    let child = c
        .args(["run", "forward", "--no-report", "-q", "-o"])
        .arg(&out)
        .arg("--workdir")
        .arg(&work)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "run forward: {}\n{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    let doc = load(&out);
    assert_valid(&doc);
    assert!(
        common::scalebench_entries(&work).is_empty(),
        "work directory left"
    );
    (doc, pid, o)
}

#[test]
fn forward_counts_packets_both_ways_and_names_the_loss_free_rate() {
    require_root();
    let (doc, pid, _) = run_forward(
        &[
            // A million packets/s: more than this router forwarded when
            // the machine was busy (about 216 000 one way), all of it on a
            // quiet day (992 085). Lossy, the binary search runs below it;
            // loss-free, there is nothing to search (both are checked).
            "--sweep",
            "rate=2000,10000,1000000",
            "--heat-up",
            "200ms",
            "--sample-time",
            "300ms",
            "--samples",
            "2",
            "--loss-tolerance",
            "0.5%",
            "--search-steps",
            "2",
        ],
        &[],
    );
    assert!(
        namespaces(&format!("sb-fwd{pid}-")).is_empty(),
        "the run's namespaces are left"
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "forward");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    let msg = w["message"].as_str().unwrap();
    assert!(
        msg.contains("one way: loss-free up to") && msg.contains("both ways: loss-free up to"),
        "{msg}"
    );
    assert_eq!(w["params"]["router"]["sysctls"]["net.ipv4.ip_forward"], "1");
    assert_eq!(w["params"]["loss_tolerance_share"], 0.005);
    assert!(
        msg.contains("at most 0.5 % of the packets sent lost"),
        "{msg}"
    );
    let rows = w["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["one way", "both ways"]);
    for (r, directions) in rows.iter().zip([1, 2]) {
        let sw = &r["sweep"];
        assert_eq!(
            (sw["variable"].as_str(), sw["unit"].as_str()),
            (Some("rate"), Some("pps"))
        );
        let levels = sw["levels"].as_array().unwrap();
        let top_lossy = levels[2]["params"]["loss_free"] == false;
        if top_lossy {
            assert_eq!(levels.len(), 5, "three levels and two search steps");
            assert_eq!(r["params"]["search_steps_run"], 2);
        } else {
            // Everything offered was forwarded: no lossy rate to search
            // below, and the loss-free rate is the highest offered.
            assert_eq!(levels.len(), 3, "no search without a lossy level: {sw}");
            assert_eq!(r["params"]["search_steps_run"], 0);
            eprintln!("{}: 1 000 000 pps loss-free here", r["label"]);
        }
        let at: Vec<f64> = levels
            .iter()
            .map(|l| l["level"].as_f64().unwrap())
            .collect();
        let free_of = |l: &Value| l["params"]["loss_free"] == true;
        // The highest loss-free rate with every rate below it loss-free, and
        // the lowest lossy one, among the first `upto` levels.
        let bounds = |upto: usize| {
            let mut v: Vec<(f64, bool)> = at[..upto]
                .iter()
                .zip(&levels[..upto])
                .map(|(a, l)| (*a, free_of(l)))
                .collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            let n = v.iter().take_while(|x| x.1).count();
            let lo = n.checked_sub(1).map(|i| v[i].0);
            (lo, v.get(n).map(|x| x.0))
        };
        // Halfway between the two.
        for k in 3..levels.len() {
            assert_eq!(levels[k]["params"]["search_step"], k - 2);
            let (lo, hi) = bounds(k);
            assert_eq!(
                at[k],
                ((lo.unwrap_or(0.0) + hi.unwrap()) / 2.0).round(),
                "{at:?}"
            );
        }
        for l in levels {
            let p = &l["params"];
            assert_eq!(p["directions"], directions);
            let fwd = p["forwarded"].as_u64().unwrap();
            let sent = p["sent"].as_u64().unwrap();
            assert!(fwd > 0 && sent > 0, "{l}");
            // Every packet sent was forwarded and received, or its loss counted.
            assert_eq!(
                p["received"].as_u64().unwrap() + p["lost"].as_u64().unwrap(),
                sent,
                "{l}"
            );
            // Forwarded packets/s, never above what was offered (a
            // generator starved of CPU by other work may offer less).
            let v = l["value"].as_f64().unwrap();
            let rate = l["level"].as_f64().unwrap() * directions as f64;
            assert!(
                v > 0.0 && v < rate * 1.5,
                "forwarded {v} pps at {rate}: {l}"
            );
        }
        // The loss-free rate is the search's result.
        let free = r["params"]["loss_free_pps"].as_f64();
        assert_eq!(
            free,
            bounds(levels.len()).0,
            "{}: {} {at:?}",
            r["label"],
            r["params"]
        );
        if !top_lossy {
            assert_eq!(free, Some(1_000_000.0), "{}", r["params"]);
        }
        // At the small rates nothing is lost, so the loss-free rate is at
        // least 2 000 — unless a busy machine held the generator or the
        // forwarding off, which the level then names: offered short of
        // the rate, or where its packets were lost.
        let first = &levels[0];
        let p = &first["params"];
        if free.is_some_and(|f| f >= 2000.0) {
            assert_eq!(p["loss_free"], true, "{first}");
        } else {
            let short = p["offered_in_full"] == false;
            let placed: u64 = first["failures"]
                .as_object()
                .map(|f| {
                    f.iter()
                        .filter(|(k, _)| k.starts_with("lost: "))
                        .map(|(_, n)| n.as_u64().unwrap())
                        .sum()
                })
                .unwrap_or(0);
            assert!(
                p["loss_free"] == false
                    && (short || placed == p["lost"].as_u64().unwrap() && placed > 0),
                "{}: the first level lost nothing it could name: {first}",
                r["label"]
            );
            eprintln!("{}: 2 000 pps not loss-free here: {first}", r["label"]);
        }
    }
}

#[test]
fn forward_without_the_rights_is_unsupported_and_the_run_goes_on() {
    let (doc, _, _) = run_forward(
        &[
            "--sweep",
            "rate=1000",
            "--sample-time",
            "100ms",
            "--samples",
            "1",
        ],
        &[
            "setpriv",
            "--inh-caps=-net_admin",
            "--bounding-set=-net_admin",
        ],
    );
    let w = &doc["workloads"][0];
    assert_eq!(w["status"], "unsupported");
    let m = w["message"].as_str().unwrap();
    assert!(m.contains("root") && m.contains("CAP_NET_ADMIN"), "{m}");
}
