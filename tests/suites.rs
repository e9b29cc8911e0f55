//! Suite files through the binary: a user's suite runs with its sizes and
//! options, a bad one is refused by file, line and key before anything is
//! measured, and the built-in suites printed by `suite show` plan the same
//! run as their names.

use assert_cmd::prelude::*;
use serde_json::Value;
use std::path::Path;

use crate::common::{assert_valid, bin, load};

/// `run ARGS --dry-run --json`: the plan's items and runs.
fn dry_plan(args: &[&str]) -> Value {
    let o = bin()
        .arg("run")
        .args(args)
        .args(["--dry-run", "--json"])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Writes a suite file.
fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_users_suite_file_runs_at_its_sizes_with_its_options() {
    let t = tempfile::tempdir().unwrap();
    let suite = write(
        &t.path().join("tiny.toml"),
        "format = \"scalebench-suite/1\"\n\
         name = \"tiny\"\n\
         [run]\n\
         runs = 2\n\
         warm-up-ops = 5\n\
         [benchmark.bind]\n\
         n = 40\n\
         [benchmark.socket]\n\
         n = 60\n",
    );
    let out = t.path().join("r.json");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    bin()
        .args(["run", &suite, "-q", "--no-report", "--workdir"])
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    assert_eq!(doc["complete"], true);
    let got: Vec<(&str, u64, u64, u64)> = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let p = &b["params"];
            (
                b["series"].as_str().unwrap(),
                p["requested_n"].as_u64().unwrap(),
                p["runs"].as_u64().unwrap(),
                p["warmup_ops"].as_u64().unwrap(),
            )
        })
        .collect();
    // The file's order, n, runs and warm-up.
    assert_eq!(got, [("bind", 40, 2, 5), ("socket", 60, 2, 5)]);
    for b in doc["benchmarks"].as_array().unwrap() {
        assert_eq!(b["runs"].as_array().unwrap().len(), 2, "{}", b["series"]);
    }
    let argv: Vec<&str> = doc["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(argv.contains(&suite.as_str()), "{argv:?}");
    // The file itself is kept with the result, as read.
    let s = &doc["suites"];
    assert_eq!(s.as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s[0]["name"], "tiny");
    assert_eq!(s[0]["origin"], suite.as_str());
    assert_eq!(
        s[0]["text"].as_str().unwrap(),
        std::fs::read_to_string(&suite).unwrap()
    );
}

#[test]
fn a_bad_suite_file_is_refused_by_file_line_and_key_measuring_nothing() {
    let t = tempfile::tempdir().unwrap();
    let suite = write(
        &t.path().join("bad.toml"),
        "format = \"scalebench-suite/1\"\n\
         name = \"bad\"\n\
         \n\
         [benchmark.socket]\n\
         n = 60\n\
         n_max = 70\n",
    );
    let out = t.path().join("r.json");
    let want =
        format!("error: {suite}:6: unknown key `n_max` in [benchmark.socket] (known: n, size)");
    for args in [
        vec!["run", &suite, "-q", "-o", out.to_str().unwrap()],
        vec!["suite", "show", &suite],
    ] {
        let o = bin().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        // A usage error: a suite file is a run request.
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with(&want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert!(!out.exists(), "nothing measured, no result file");
    // A missing file is named.
    let gone = t.path().join("gone.toml");
    let o = bin()
        .args(["run", gone.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("cannot read the suite file {}", gone.display())),
        "{err}"
    );
}

#[test]
fn the_built_in_suites_shown_plan_the_same_run_as_their_names() {
    let t = tempfile::tempdir().unwrap();
    let o = bin().args(["suite", "list", "--json"]).output().unwrap();
    assert!(o.status.success());
    let list: Value = serde_json::from_slice(&o.stdout).unwrap();
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["quick", "full", "kernels", "seeds"]);
    let listed = bin().args(["list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed["suites"], serde_json::json!(names));
    for name in names {
        let o = bin().args(["suite", "show", name]).output().unwrap();
        assert!(o.status.success(), "{name}");
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(text.contains(&format!("name = \"{name}\"")), "{text}");
        let file = write(&t.path().join(format!("{name}.toml")), &text);
        // `suite show FILE` checks it and prints it as it is.
        let o = bin().args(["suite", "show", &file]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(String::from_utf8(o.stdout).unwrap(), text);
        // The workloads' sizes read the free space of a disk the other
        // tests write to: the plans are compared without them.
        let plan = |target: &str| {
            let mut p = dry_plan(&[target]);
            for item in p["items"].as_array_mut().unwrap() {
                item.as_object_mut().unwrap().remove("size");
            }
            p
        };
        let by_name = plan(name);
        let from_file = plan(&file);
        // The kernels suite has 8 benchmarks, the others more.
        assert!(by_name["items"].as_array().unwrap().len() >= 8, "{by_name}");
        assert_eq!(from_file, by_name, "{name}");
    }
}

/// The seeds suite's dry run says each workload's size as the seeds ran
/// it and, from the free space where the work directory would be made,
/// what `fit` would shrink it to, or that it changes nothing.
#[test]
fn the_seeds_suites_dry_run_names_its_workloads_sizes_and_fitting() {
    use crate::common::Tmpfs;
    // Two places the work directory could be made in: one too small for
    // the seeds' sizes, one large enough (a tmpfs takes no memory until
    // written), whatever this machine's own disk has free.
    let t = tempfile::tempdir().unwrap();
    let small = Tmpfs::mount(t.path().join("small"), "size=3g,nr_inodes=1m");
    // Large: four files of 1.1 × RAM with room to spare, and the site.
    let ram_kib: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let large_kib = (ram_kib * 6).max(200 << 20);
    let large = Tmpfs::mount(
        t.path().join("large"),
        &format!("size={large_kib}k,nr_inodes=10m"),
    );
    let sizes_in = |dir: &Path| {
        let plan = dry_plan(&["seeds", "--workdir", dir.to_str().unwrap()]);
        move |name: &str| {
            plan["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|i| i["name"] == name)
                .and_then(|i| i["size"].as_str())
                .unwrap_or_else(|| panic!("{name}: {plan}"))
                .to_string()
        }
    };
    let size = sizes_in(&small.0);
    // Shrunk, by as much as the run would: the figures the run records.
    let fs = size("fs");
    let ran = |words: &str, after: &str, upto: &str| -> u64 {
        let at = words
            .find(after)
            .unwrap_or_else(|| panic!("{after}: {words}"))
            + after.len();
        let rest = &words[at..];
        rest[..rest.find(upto).unwrap()]
            .replace(' ', "")
            .parse()
            .unwrap()
    };
    assert!(
        fs.starts_with(
            "3 000 000 files, 21.0 GiB, 10 000 requests; fitted to this machine (--fit): "
        ) && fs.contains(&format!("run: {} has 3.00 GiB free", small.0.display())),
        "{fs}"
    );
    let files = ran(&fs, "asked, ", " files and");
    assert!((1_000..3_000_000).contains(&files), "{fs}");
    let pg = size("pgbench");
    assert!(
        pg.starts_with("scale 800 (a database of about 11.9 GiB); fitted to this machine (--fit): scale 800 asked"),
        "{pg}"
    );
    let scale = ran(&pg, "), scale ", " run:");
    assert!((10..100).contains(&scale), "{pg}");
    // bigfile below the 1 GiB it picks by itself: fitted to the 3 GiB.
    let big = size("bigfile");
    assert!(
        big.starts_with("four files of 731 MiB; ")
            && big.contains(
                "fitted to this machine (--fit): four files of 1.00 GiB asked, four of 731 MiB run"
            ),
        "{big}"
    );
    assert_eq!(size("mail"), "a fixed delivery of 200 000 messages a level");
    // fs-sizes, which --fit does not shrink, fits the 3 GiB; on 1 GiB it
    // is told it will not.
    assert!(
        size("fs-sizes").ends_with("free needed in each place, which each has"),
        "{}",
        size("fs-sizes")
    );
    let tiny = Tmpfs::mount(t.path().join("tiny"), "size=1g");
    let plan = dry_plan(&[
        "fs-sizes",
        "--full",
        "--fit",
        "--workdir",
        tiny.0.to_str().unwrap(),
    ]);
    let fss = plan["items"][0]["size"].as_str().unwrap();
    assert!(
        fss.contains(&format!(
            "which --fit does not shrink: {} has 1.00 GiB free, too little (it fails there; fewer --size-files or another place)",
            tiny.0.display()
        )),
        "{fss}"
    );
    // Where everything fits, --fit changes nothing and says so.
    let size = sizes_in(&large.0);
    assert!(size("fs").ends_with("every place holds them as asked (--fit changes nothing)"));
    assert!(size("pgbench").ends_with("the disk holds it as asked (--fit changes nothing)"));
    assert!(
        size("bigfile").ends_with("(1.1 × RAM; the disk has room for four)"),
        "{}",
        size("bigfile")
    );
    assert!(
        size("fs-sizes").ends_with("free needed in each place, which each has"),
        "{}",
        size("fs-sizes")
    );
    for (name, starts) in [
        (
            "http-shortconn",
            "1, 8 and 16 KB objects, each 30 000 connections at once",
        ),
        (
            "fs-sizes",
            "10 000 files of each size (8 KB, 16 KB, 128 KB)",
        ),
        (
            "forward",
            "10 offered rates of 64-byte datagrams a direction",
        ),
    ] {
        assert!(size(name).starts_with(starts), "{name}: {}", size(name));
    }
    // The table says them too, within 100 columns.
    let o = bin()
        .args(["run", "seeds", "--dry-run", "--workdir"])
        .arg(&small.0)
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("workload sizes:\n  http-ipstack: 50 000 fetches")
            && text.contains("\n  fs: 3 000 000 files, "),
        "{text}"
    );
    let sizes = &text[text.find("workload sizes:").unwrap()..];
    let sizes = &sizes[..sizes.find("\n\n").unwrap()];
    assert!(sizes.lines().all(|l| l.chars().count() <= 100), "{sizes}");
    // A benchmark has none; the quick fs its quick size.
    let quick = dry_plan(&["socket", "fs"]);
    let items = quick["items"].as_array().unwrap();
    assert!(items[0].get("size").is_none(), "{quick}");
    assert!(
        items[1]["size"]
            .as_str()
            .unwrap()
            .starts_with("20 000 files, "),
        "{quick}"
    );
    let web = dry_plan(&["http-ipstack"]);
    assert_eq!(
        web["items"][0]["size"],
        "5 000 fetches of one 11 KiB file a round, over 50 connections of 10 requests"
    );
}

/// A time goal (`--within`, or a suite's `within`): a series whose runs
/// would not fit its share lowers n and says why in a cap on `time`; a
/// size on the command line sets a suite's goal aside; a goal too short,
/// or beside two profiles, is refused by name.
#[test]
fn a_time_goal_lowers_n_where_runs_would_not_fit_and_says_so() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    // fork at n = 2 000 takes seconds a run on any machine; of a 6 s goal
    // the end keeps 5 s, so its share is well under a second.
    bin()
        .args(["run", "fork", "--max", "2000", "--within", "6s", "-q"])
        .args(["--no-report", "-o"])
        .arg(&out)
        .assert()
        .success();
    let doc = load(&out);
    assert_valid(&doc);
    let b = crate::common::benchmark(&doc, "fork");
    assert_eq!(b["status"], "capped", "{b}");
    let caps = b["caps"].as_array().unwrap();
    let cap = caps
        .iter()
        .find(|c| c["resource"] == "time")
        .expect("a cap on time");
    assert_eq!(cap["requested"], 2000);
    let reached = cap["reached"].as_u64().unwrap();
    assert!((200..1000).contains(&reached), "{cap}");
    assert_eq!(b["params"]["n"], reached);
    let reason = cap["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the run's time goal of 6 s:"),
        "{reason}"
    );
    for run in b["runs"].as_array().unwrap() {
        let top = run["samples"].as_array().unwrap().iter();
        assert!(top.map(|s| s[0].as_u64().unwrap()).all(|n| n < reached));
    }
    // A suite's goal is in the plan, and set aside by a size asked for.
    let suite = write(
        &t.path().join("bounded.toml"),
        "format = \"scalebench-suite/1\"\n\
         name = \"bounded\"\n\
         [run]\n\
         within = \"2min\"\n\
         [benchmark.socket]\n\
         n = 60\n",
    );
    assert_eq!(dry_plan(&[&suite])["within"], 120.0);
    assert_eq!(dry_plan(&[&suite, "--max", "50"])["within"], Value::Null);
    assert_eq!(
        dry_plan(&[&suite, "--within", "off"])["within"],
        Value::Null
    );
    for (args, words) in [
        (&["--within", "2s"][..], "--within"),
        (
            &["--within", "1m", "--profile", "default,latency"][..],
            "--within keeps one system's run",
        ),
    ] {
        let o = bin()
            .args(["run", "socket", "--dry-run"])
            .args(args)
            .output()
            .unwrap();
        assert!(!o.status.success(), "{args:?}");
        let err = crate::common::text(&o.stderr);
        assert!(err.contains(words), "{args:?}: {err}");
    }
}
