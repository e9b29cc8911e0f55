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
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
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
        let by_name = dry_plan(&[name]);
        let from_file = dry_plan(&[&file]);
        // The kernels suite has 8 benchmarks, the others more.
        assert!(by_name["items"].as_array().unwrap().len() >= 8, "{by_name}");
        assert_eq!(from_file, by_name, "{name}");
    }
}
