//! The results store through the binary (docs/store.md): twenty small
//! result files of three labelled systems go into SQLite and into a real
//! PostgreSQL (a throwaway cluster of this test; `scripts/test` installs
//! PostgreSQL, and a missing one fails the test), and `results list`,
//! `history`, `compare` and `report` give through the store what they
//! give through the files. The files are made from the fixture
//! `tests/fixtures/default.json` (its `socket` series, every third sample,
//! scaled per system and run, one run planted 2.5 times slower) with a
//! small pgbench-like sweep added, so no run is measured.

use crate::common::{self, bin};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The three systems: label, host, OS, kernel, cost factor, runs.
const SYSTEMS: [(&str, &str, &str, &str, f64, usize); 3] = [
    ("linux-6.1", "alpha", "Linux", "6.1.0-28-amd64", 1.0, 7),
    ("linux-6.18", "beta", "Linux", "6.18.1", 0.8, 7),
    ("freebsd-14", "gamma", "FreeBSD", "14.1-RELEASE", 1.3, 6),
];

/// A sweep row of throughput at 1, 2 and 4 clients.
fn sweep(peak: f64) -> Value {
    let level = |l: f64, v: f64| {
        json!({"level": l, "value": v, "cpu_busy": null, "busy_mhz": null, "error": null,
               "samples": [{"t": 1.0, "seconds": 1.0, "value": v, "latency_ns": null,
                            "mean_latency_ns": null, "errors": 0}]})
    };
    json!({"name": "pgbench", "what": "PostgreSQL under pgbench", "status": "ok",
           "message": null, "params": {},
           "rows": [{"label": "select-only", "params": {}, "load": null, "error": null,
                     "sweep": {"variable": "clients", "unit": "TPS", "baseline": 1.0,
                               "heat_up_s": 0.0, "sample_s": 1.0, "samples": 1,
                               "figure_of_last": 1, "cpus": 2,
                               "levels": [level(1.0, peak * 0.5), level(2.0, peak),
                                          level(4.0, peak * 0.9)]}}]})
}

/// Writes the twenty files into `dir`, named in the order their runs
/// started (`r00.json` first); returns them with their labels.
pub(crate) fn make_files(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let fixture = common::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/default.json"
    )));
    let mut order: Vec<(usize, usize)> = Vec::new();
    for (s, sys) in SYSTEMS.iter().enumerate() {
        order.extend((0..sys.5).map(|k| (s, k)));
    }
    // Interleaved in time: run k of every system on day k.
    order.sort_by_key(|&(s, k)| (k, s));
    let mut out = Vec::new();
    for (i, &(s, k)) in order.iter().enumerate() {
        let (label, host, os, kernel, factor, _) = SYSTEMS[s];
        let mut doc = fixture.clone();
        doc["schema_version"] = 7.into();
        doc["label"] = label.into();
        doc["started"] = format!("2026-11-{:02}T10:{:02}:00Z", k + 1, s).into();
        doc["finished"] = format!("2026-11-{:02}T10:{:02}:30Z", k + 1, s).into();
        doc["system"]["hostname"] = host.into();
        doc["system"]["os"] = os.into();
        doc["system"]["os_release"] = kernel.into();
        // One change to find: linux-6.1's fifth run and after are slower.
        let planted = if s == 0 && k >= 4 { 2.5 } else { 1.0 };
        let f = factor * planted * (1.0 + 0.01 * k as f64);
        let benches = doc["benchmarks"].as_array_mut().unwrap();
        benches.retain(|b| b["series"] == "socket");
        for r in benches[0]["runs"].as_array_mut().unwrap() {
            // Every third sample (n = 0, 3, 6 …): judged three times as fast.
            let samples = r["samples"].as_array_mut().unwrap();
            samples.retain(|x| x[0].as_u64().unwrap() % 3 == 0);
            for x in samples {
                x[1] = Value::from((x[1].as_f64().unwrap() * f).round() as u64);
            }
        }
        doc["workloads"] = json!([sweep(1000.0 / f)]);
        let path = dir.join(format!("r{i:02}.json"));
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        out.push((path, label));
    }
    out
}

/// Runs scalebench; returns its standard output, failing the test with
/// its error output when it fails.
fn ok(args: &[&str]) -> String {
    let o = bin().args(args).output().unwrap();
    assert!(
        o.status.success(),
        "scalebench {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The same files of `files` as strings.
fn paths(files: &[&PathBuf]) -> Vec<String> {
    files.iter().map(|f| f.display().to_string()).collect()
}

/// The files of `label`, in the order their runs started.
fn of<'a>(files: &'a [(PathBuf, &str)], label: &str) -> Vec<&'a PathBuf> {
    files
        .iter()
        .filter(|(_, l)| *l == label)
        .map(|(f, _)| f)
        .collect()
}

/// Everything through the store `store` equals what the files give.
fn same_answers_through(store: &str, files: &[(PathBuf, &str)]) {
    let ids = add_and_list(store, files);
    same_history(store, files, &ids);
    same_compare_and_report(store, files);
    prune_keeps_the_latest_two(store);
}

/// Adds the files (twice), lists and shows them; returns each file's id
/// by its path.
fn add_and_list(store: &str, files: &[(PathBuf, &str)]) -> HashMap<String, String> {
    let all: Vec<&PathBuf> = files.iter().map(|(f, _)| f).collect();
    let mut add = vec!["results", "add", "--store", store];
    let all_paths = paths(&all);
    add.extend(all_paths.iter().map(String::as_str));
    let out = ok(&add);
    assert_eq!(out.lines().filter(|l| l.starts_with("added ")).count(), 20);
    // Twice: a no-op that says so.
    let out = ok(&add);
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("already stored ") && l.contains("nothing added"))
            .count(),
        20,
        "{out}"
    );
    // `results list`: one entry per file, as the file says, in the order
    // the runs started (the files' names).
    let listed: Value =
        serde_json::from_str(&ok(&["results", "list", "--store", store, "--json"])).unwrap();
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 20);
    let mut ids = HashMap::new();
    for (entry, (file, label)) in listed.iter().zip(files) {
        let doc = common::load(file);
        assert_eq!(entry["source"], file.display().to_string());
        assert_eq!(entry["label"], *label);
        for (k, v) in [
            ("host", &doc["system"]["hostname"]),
            ("os", &doc["system"]["os"]),
            ("kernel", &doc["system"]["os_release"]),
            ("started", &doc["started"]),
            ("finished", &doc["finished"]),
        ] {
            assert_eq!(&entry[k], v, "{k} of {}", file.display());
        }
        assert_eq!(entry["series"], json!(["socket"]));
        assert_eq!(entry["workloads"], json!(["pgbench"]));
        let id = entry["id"].as_str().unwrap().to_string();
        // The stored file is the file, byte for byte.
        let back = bin()
            .args(["results", "show", "--store", store, "--json", &id])
            .output()
            .unwrap();
        assert!(back.status.success());
        assert_eq!(back.stdout, std::fs::read(file).unwrap());
        ids.insert(file.display().to_string(), id);
    }
    // `results show`: the run's record and its verdicts as indexed.
    let last = files.last().unwrap();
    let doc = common::load(&last.0);
    let shown = ok(&["results", "show", "--store", store, "latest"]);
    let peak = doc["workloads"][0]["rows"][0]["sweep"]["levels"][1]["value"]
        .as_f64()
        .unwrap();
    for want in [
        format!("label     {}", last.1),
        format!("host      {}", doc["system"]["hostname"].as_str().unwrap()),
        "socket".to_string(),
        "pgbench".to_string(),
        format!("{peak:.0} TPS"),
    ] {
        assert!(shown.contains(&want), "{want}: {shown}");
    }
    let text = ok(&[
        "results",
        "list",
        "--store",
        store,
        "label=linux-6.18 last=3",
    ]);
    assert_eq!(
        text.lines().filter(|l| l.contains("linux-6.18")).count(),
        3,
        "{text}"
    );
    assert!(!text.contains("alpha") && text.contains("beta"), "{text}");
    ids
}

/// `history` of one label and of all, from the store and from the files.
fn same_history(store: &str, files: &[(PathBuf, &str)], ids: &HashMap<String, String>) {
    let all: Vec<&PathBuf> = files.iter().map(|(f, _)| f).collect();
    // Names of files in a report become the stored runs' ids.
    let named = |s: String| {
        ids.iter().fold(s, |s, (path, id)| {
            s.replace(path.as_str(), &format!("store:{}", &id[..12]))
        })
    };
    // `history` of one label, and of everything.
    for (query, chosen) in [
        ("label=linux-6.1", of(files, "linux-6.1")),
        ("since=2026-11-01", all.clone()),
    ] {
        let mut args = vec!["history", "--format", "json"];
        let p = paths(&chosen);
        args.extend(p.iter().map(String::as_str));
        let from_files = named(ok(&args));
        let from_store = ok(&["history", "--format", "json", "--store", store, query]);
        assert_eq!(from_store, from_files, "history {query}");
    }
    let h: Value = serde_json::from_str(&ok(&[
        "history",
        "--format",
        "json",
        "--store",
        store,
        "label=linux-6.1",
        "--benchmark",
        "socket",
    ]))
    .unwrap();
    let changes: Vec<&Value> = h["tracks"][0]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["change"])
        .collect();
    assert_eq!(changes[4], "regressed", "the planted change: {h:#}");
}

/// `compare` and `report` of the latest runs, by query and by file.
fn same_compare_and_report(store: &str, files: &[(PathBuf, &str)]) {
    // `compare` and `report`: the latest of two labels, by query, against
    // the files (terminal text, JSON, and the exit code of --fail-on).
    let latest = |l: &str| of(files, l).last().unwrap().display().to_string();
    let (a, b) = (latest("linux-6.18"), latest("linux-6.1"));
    for extra in [&[][..], &["--format", "json"][..]] {
        let mut files_args = vec!["compare", a.as_str(), b.as_str()];
        files_args.extend(extra);
        let mut store_args = vec![
            "compare",
            "--store",
            store,
            "--base",
            "label=linux-6.18 latest",
            "--new",
            "label=linux-6.1 latest",
        ];
        store_args.extend(extra);
        assert_eq!(ok(&store_args), ok(&files_args), "compare {extra:?}");
    }
    let mixed = ok(&[
        "compare",
        "--store",
        store,
        "label=linux-6.18 latest",
        b.as_str(),
    ]);
    assert_eq!(mixed, ok(&["compare", a.as_str(), b.as_str()]));
    let code = |args: &[&str]| bin().args(args).output().unwrap().status.code();
    assert_eq!(
        code(&["compare", &a, &b, "--fail-on", "regression"]),
        code(&[
            "compare",
            "--store",
            store,
            "label=linux-6.18 latest",
            "label=linux-6.1 latest",
            "--fail-on",
            "regression"
        ])
    );
    let report_files = ok(&["report", a.as_str(), b.as_str(), &latest("freebsd-14")]);
    let report_store = ok(&[
        "report",
        "--store",
        store,
        "label=linux-6.18 latest",
        "label=linux-6.1 latest",
        "label=freebsd-14 latest",
    ]);
    assert_eq!(report_store, report_files);
}

/// `prune --keep-last 2`, dry and then not.
fn prune_keeps_the_latest_two(store: &str) {
    // `prune`: the dry run removes nothing and names what the real one
    // removes: all but the two latest of each label.
    let dry = ok(&[
        "results",
        "prune",
        "--store",
        store,
        "--keep-last",
        "2",
        "--dry-run",
    ]);
    assert_eq!(
        dry.lines()
            .filter(|l| l.starts_with("would remove"))
            .count(),
        14
    );
    let left = |s: &str| -> usize {
        serde_json::from_str::<Value>(&ok(&["results", "list", "--store", s, "--json"]))
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(left(store), 20);
    let done = ok(&["results", "prune", "--store", store, "--keep-last", "2"]);
    assert_eq!(done.replace("removed", "would remove"), dry);
    assert_eq!(left(store), 6);
}

#[test]
fn twenty_runs_of_three_systems_give_the_same_answers_from_sqlite_as_from_the_files() {
    let t = tempfile::tempdir().unwrap();
    let files = make_files(t.path());
    let store = t.path().join("store.sqlite");
    same_answers_through(store.to_str().unwrap(), &files);
    two_writers_at_once_store_each_file_once(store.to_str().unwrap(), &files);
}

/// Two `results add` of the same twenty files at once, into a store that
/// holds six of them: both succeed, and the fourteen others are added
/// once (writers take turns: SQLite's write lock, PostgreSQL's advisory
/// lock).
fn two_writers_at_once_store_each_file_once(store: &str, files: &[(PathBuf, &str)]) {
    let spawn = || {
        bin()
            .args(["results", "add", "--store", store])
            .args(files.iter().map(|(f, _)| f))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let mut added = 0;
    for c in [a, b] {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", common::text(&o.stderr));
        added += common::text(&o.stdout)
            .lines()
            .filter(|l| l.starts_with("added "))
            .count();
    }
    assert_eq!(added, 14);
    let listed: Value =
        serde_json::from_str(&ok(&["results", "list", "--store", store, "--json"])).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 20);
}

#[test]
fn twenty_runs_of_three_systems_give_the_same_answers_from_postgresql_as_from_the_files() {
    use scalebench::workloads::pg::cluster::{Bin, Cluster};
    let t = tempfile::tempdir().unwrap();
    let files = make_files(t.path());
    // A throwaway cluster, stopped and removed when dropped (also when an
    // assertion fails).
    let pg = Bin::find().expect("PostgreSQL is installed (scripts/test installs it)");
    let cluster = Cluster::start(&pg, &t.path().join("pg"), 20, None, &[], None, None)
        .expect("a throwaway PostgreSQL starts");
    let url = format!("postgres://scalebench@127.0.0.1:{}/postgres", cluster.port);
    same_answers_through(&url, &files);
    two_writers_at_once_store_each_file_once(&url, &files);
    // The words the database narrows by, on PostgreSQL's types too.
    let count = |q: &str| -> usize {
        serde_json::from_str::<Value>(&ok(&["results", "list", "--store", &url, q, "--json"]))
            .unwrap()
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count("benchmark=socket"), 20);
    assert_eq!(count("benchmark=sock"), 0);
    assert_eq!(count("label=linux-6.1* host=alpha"), 7);
    assert_eq!(count("since=2026-01-01 before=9999-12-31 last=3"), 3);
    // This server offers no TLS: `prefer` (the default) takes the plain
    // connection, `require` is refused, saying so.
    ok(&[
        "results",
        "list",
        "--store",
        &format!("{url}?sslmode=prefer"),
    ]);
    let o = bin()
        .args([
            "results",
            "list",
            "--store",
            &format!("{url}?sslmode=require"),
        ])
        .output()
        .unwrap();
    let err = common::text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the server at 127.0.0.1:{} offers no TLS, and sslmode=require requires it",
            cluster.port
        )),
        "{err}"
    );
    drop(cluster);
}

#[test]
fn bad_input_to_the_store_is_refused_by_name() {
    let t = tempfile::tempdir().unwrap();
    let files = make_files(t.path());
    let store = t.path().join("s.sqlite");
    let s = store.to_str().unwrap();
    let err = |args: &[&str]| -> (Option<i32>, String) {
        let o = bin().args(args).output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    // No store yet: reading says how to make one, and makes none.
    let (c, e) = err(&["results", "list", "--store", s]);
    assert_eq!(c, Some(1));
    assert!(
        e.contains("no such file") && e.contains("results add"),
        "{e}"
    );
    assert!(!store.exists());
    // An incomplete file is refused by name; the others are added.
    let half = t.path().join("half.json");
    let mut doc = common::load(&files[0].0);
    doc["complete"] = false.into();
    std::fs::write(&half, doc.to_string()).unwrap();
    let f1 = files[1].0.to_str().unwrap();
    let (c, e) = err(&["results", "add", "--store", s, half.to_str().unwrap(), f1]);
    assert_eq!(c, Some(1));
    assert!(e.contains("half.json") && e.contains("incomplete"), "{e}");
    let (c, e) = err(&["results", "add", "--store", s, "nowhere.json"]);
    assert_eq!(c, Some(1));
    assert!(
        e.contains("nowhere.json") && e.contains("cannot read"),
        "{e}"
    );
    ok(&["results", "add", "--store", s, files[4].0.to_str().unwrap()]);
    // Queries: a bad word or value (a usage error, 2); no run, several
    // where one is needed (what the store holds, 1).
    for (args, code, says) in [
        (
            vec!["results", "list", "--store", s, "label=x lates"],
            2,
            "`lates`: not a query word",
        ),
        (
            vec!["history", "--store", s, "label=nobody", "label=x"],
            1,
            "query `label=nobody`: no run in store",
        ),
        (
            vec!["compare", "--store", s, "--base", "os=Linux", "--new", f1],
            1,
            "BASE `os=Linux`: 2 runs match",
        ),
        (
            vec!["results", "show", "--store", s, "since=tomorrow"],
            2,
            "`since=tomorrow`: expected a day",
        ),
    ] {
        let (c, e) = err(&args);
        assert_eq!(c, Some(code), "{args:?}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // `show --json -o`: an existing file only with --force.
    let out = t.path().join("out.json");
    std::fs::write(&out, "mine").unwrap();
    let o = out.to_str().unwrap();
    let (c, e) = err(&["results", "show", "--store", s, "latest", "--json", "-o", o]);
    assert_eq!(c, Some(1));
    assert!(e.contains("--force"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "mine");
    ok(&[
        "results", "show", "--store", s, "latest", "--json", "-o", o, "--force",
    ]);
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(&files[4].0).unwrap()
    );
    // A store a newer scalebench migrated is refused, and left as it is.
    let c = rusqlite::Connection::open(&store).unwrap();
    c.execute(
        "INSERT INTO migrations VALUES (99, 'from the future', '2027-01-01T00:00:00Z', '9.0.0')",
        [],
    )
    .unwrap();
    drop(c);
    let (c, e) = err(&["results", "list", "--store", s]);
    assert_eq!(c, Some(1));
    assert!(
        e.contains("schema version 99, newer than this scalebench") && e.contains("upgrade"),
        "{e}"
    );
}

/// A store of one run (the fixture `default.json`) in `dir`; returns the
/// store's path and the run's short id.
fn one_run_store(dir: &Path) -> (PathBuf, String) {
    let store = dir.join("s.sqlite");
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/default.json");
    let out = ok(&[
        "results",
        "add",
        fixture,
        "--store",
        store.to_str().unwrap(),
    ]);
    let id = out.split_whitespace().nth(1).unwrap().to_string();
    (store, id)
}

/// A run's page is written once by a build: `dashboard --force` over the
/// site keeps it; a page cut short or of another build is written anew.
#[test]
fn the_dashboard_keeps_a_current_page_and_writes_a_stale_one_again() {
    let t = tempfile::tempdir().unwrap();
    let (store, id) = one_run_store(t.path());
    let site = t.path().join("site");
    let dashboard = || {
        let o = bin()
            .args(["dashboard", "--force", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&site)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::text(&o.stderr));
        common::text(&o.stdout)
    };
    let first = dashboard();
    assert!(!first.contains("kept"), "{first}");
    let page = site.join(format!("runs/{id}.html"));
    let written = std::fs::read_to_string(&page).unwrap();
    assert!(
        written.starts_with("<!-- scalebench ") && written.contains(&format!(" run {id}")),
        "{}",
        &written[..200.min(written.len())]
    );
    // Again: the page is this build's for this run, so it stays as it is.
    let mtime = || std::fs::metadata(&page).unwrap().modified().unwrap();
    let before = mtime();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = dashboard();
    assert!(
        again.contains("1 of their pages current and kept"),
        "{again}"
    );
    assert_eq!(mtime(), before);
    // A page not written so (another build's, or edited) is written anew.
    std::fs::write(&page, "<!-- another build -->\nold").unwrap();
    let third = dashboard();
    assert!(!third.contains("kept"), "{third}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), written);
    // So is one cut short (its first line this build's).
    std::fs::write(&page, &written[..written.len() / 2]).unwrap();
    let fourth = dashboard();
    assert!(!fourth.contains("kept"), "{fourth}");
    assert_eq!(std::fs::read_to_string(&page).unwrap(), written);
}

/// A workload measured at other sizes than the same system's run before
/// it is not marked against it (its tooltip says why); the next run at
/// the same sizes is, from the store's index alone.
#[test]
fn the_dashboard_leaves_a_workload_at_other_sizes_uncompared() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("s.sqlite");
    let fixture = common::load(Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/default.json"
    )));
    for (i, (scale, peak)) in [(10, 1000.0), (88, 500.0), (88, 400.0)].iter().enumerate() {
        let mut doc = fixture.clone();
        doc["started"] = format!("2026-11-0{}T10:00:00Z", i + 1).into();
        doc["benchmarks"] = json!([]);
        let mut w = sweep(*peak);
        w["params"] = json!({"scale": scale});
        doc["workloads"] = json!([w]);
        let path = t.path().join(format!("r{i}.json"));
        std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
        ok(&[
            "results",
            "add",
            path.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
        ]);
    }
    let site = t.path().join("site");
    let said = ok(&[
        "dashboard",
        "--store",
        store.to_str().unwrap(),
        "-o",
        site.to_str().unwrap(),
    ]);
    assert!(said.contains("1 regression"), "{said}");
    let index = std::fs::read_to_string(site.join("index.html")).unwrap();
    assert!(
        index.contains("not compared with the run before: measured at other sizes (scale 10 → 88)"),
        "no tooltip for the point at other sizes"
    );
    assert!(
        index.contains("regressed: fell 20 %"),
        "the third run is compared"
    );
    assert!(!index.contains("fell 50 %"), "the second run was compared");
}

/// `dashboard -o DIR --force` wrote through links inside DIR and replaced
/// the files they pointed to, outside the site. Now a link is refused
/// wherever the site would write — the index, a run's page, `runs`, DIR
/// itself — naming it; nothing outside the site changes; and with the
/// links gone, `--force` replaces the site's own regular files (and only
/// those).
#[test]
fn the_dashboard_writes_through_no_link() {
    let t = tempfile::tempdir().unwrap();
    let (store, id) = one_run_store(t.path());
    let site = t.path().join("site");
    let dashboard = |out: &Path| {
        bin()
            .args(["dashboard", "--force", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(out)
            .output()
            .unwrap()
    };
    assert!(dashboard(&site).status.success());
    let index = site.join("index.html");
    let page = site.join(format!("runs/{id}.html"));
    let outside = t.path().join("outside.html");
    std::fs::write(&outside, "keep").unwrap();
    let refused = |out: &Path, names: &Path| {
        let o = dashboard(out);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        let says = format!("{}: is a symbolic link", names.display());
        assert!(err.contains(&says), "want {says:?} in {err}");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
    };
    for file in [&index, &page] {
        std::fs::remove_file(file).unwrap();
        std::os::unix::fs::symlink(&outside, file).unwrap();
        refused(&site, file);
        assert!(std::fs::symlink_metadata(file).unwrap().is_symlink());
        std::fs::remove_file(file).unwrap();
        std::fs::write(file, "old").unwrap();
    }
    // `runs` a link to a directory outside, and the site itself one.
    let elsewhere = t.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let runs = site.join("runs");
    std::fs::rename(&runs, t.path().join("runs-aside")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &runs).unwrap();
    refused(&site, &runs);
    std::fs::remove_file(&runs).unwrap();
    std::fs::rename(t.path().join("runs-aside"), &runs).unwrap();
    let linked = t.path().join("linked-site");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    refused(&linked, &linked);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    // Regular files of the site are replaced; a file of the user's stays.
    std::fs::write(site.join("notes.txt"), "mine").unwrap();
    assert!(dashboard(&site).status.success());
    for file in [&index, &page] {
        let text = std::fs::read_to_string(file).unwrap();
        // A run's page opens with the mark of the build that wrote it.
        let html = text
            .strip_prefix("<!-- scalebench ")
            .map_or(text.as_str(), |rest| {
                rest.split_once(" -->\n").map_or(rest, |(_, html)| html)
            });
        assert!(html.starts_with("<!doctype html>"), "{}", file.display());
    }
    assert_eq!(
        std::fs::read_to_string(site.join("notes.txt")).unwrap(),
        "mine"
    );
}

/// Runs scalebench as user `nobody` when the test runs as root (root
/// writes any file whatever its mode), as the test's user otherwise.
fn as_unprivileged() -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut c = bin();
    if unsafe { libc::geteuid() } == 0 {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            c.pre_exec(|| {
                let nobody: libc::uid_t = 65534;
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(nobody) != 0
                    || libc::setuid(nobody) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    c
}

/// A store that cannot be written (a read-only file, or a directory that
/// cannot take SQLite's journal) is refused by name for `results add` and
/// `results prune`, not with SQLite's "attempt to write a readonly
/// database" alone; reading it still works.
#[test]
fn a_read_only_store_is_refused_by_name_for_writing() {
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(t.path(), 0o755).unwrap();
    let (store, _) = one_run_store(t.path());
    let tuned = t.path().join("tuned.json");
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tuned.json"),
        &tuned,
    )
    .unwrap();
    mode(&tuned, 0o644).unwrap();
    let run = |args: &[&str], store: &Path| {
        let o = as_unprivileged()
            .args(args)
            .arg("--store")
            .arg(store)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let t_json = tuned.to_str().unwrap();
    // The file read-only.
    mode(&store, 0o444).unwrap();
    let says = format!(
        "store {}: cannot write to it: Permission denied (EACCES)",
        store.display()
    );
    for args in [
        &["results", "add", t_json][..],
        &[
            "results",
            "prune",
            "--keep-last",
            "1",
            "--before",
            "2100-01-01",
        ][..],
    ] {
        let (code, err) = run(args, &store);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(err.contains(&says), "{args:?}: want {says:?} in {err}");
    }
    let (code, err) = run(&["results", "list"], &store);
    assert_eq!(code, Some(0), "{err}");
    // The file writable, its directory not: SQLite cannot make its
    // journal, and says so after the store's name.
    let ro_dir = t.path().join("ro");
    std::fs::create_dir(&ro_dir).unwrap();
    let inner = ro_dir.join("s.sqlite");
    std::fs::copy(&store, &inner).unwrap();
    mode(&inner, 0o666).unwrap();
    mode(&ro_dir, 0o555).unwrap();
    let (code, err) = run(&["results", "add", t_json], &inner);
    assert_eq!(code, Some(1), "{err}");
    let says = format!(
        "store {}: cannot write to it: it is read-only here",
        inner.display()
    );
    assert!(err.contains(&says), "want {says:?} in {err}");
    assert!(!err.contains("error: attempt to write"), "{err}");
    mode(&ro_dir, 0o755).unwrap();
}

/// `report DIR`, `export DIR` and `results add DIR` skipped a file that
/// is no result file without a word. Now each names it with the reason,
/// uses the rest, and exits 0 (a directory may hold other JSON: a
/// `compare -f json` output); a file that claims to be a result and
/// cannot be read still fails the command, as when named alone.
#[test]
fn a_directory_names_each_file_it_skips() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("results");
    std::fs::create_dir(&dir).unwrap();
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/default.json"),
        dir.join("good.json"),
    )
    .unwrap();
    std::fs::write(dir.join("garbage.json"), "{ this is not json").unwrap();
    std::fs::write(dir.join("other.json"), r#"{"hello": "world"}"#).unwrap();
    std::fs::write(dir.join("report.html"), "<html>").unwrap();
    let store = t.path().join("s.sqlite");
    for (args, out) in [
        (vec!["report"], "socket"),
        (vec!["export"], "default,socket,"),
        (
            vec!["results", "add", "--store", store.to_str().unwrap()],
            "added ",
        ),
    ] {
        let o = bin().args(&args).arg(&dir).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
        assert!(String::from_utf8_lossy(&o.stdout).contains(out), "{args:?}");
        for skipped in ["garbage.json", "other.json"] {
            let says = format!(
                "warning: {}: skipped: not a scalebench result file",
                dir.join(skipped).display()
            );
            assert_eq!(
                err.matches(&says).count(),
                1,
                "{args:?}: want {says:?} in {err}"
            );
        }
        assert!(
            !err.contains("report.html"),
            "only *.json is looked at: {err}"
        );
    }
}
