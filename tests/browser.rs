//! The HTML report in a real browser: headless Chromium (Debian's
//! `chromium`; `scripts/test` installs it) loads the report from a file.
//! The DOM it builds has the expected charts, a screenshot is not blank,
//! and the page logs nothing to the console; a report of the quick suite's
//! size stays under 5 MB and renders too. (How long it takes is measured by
//! `scripts/render-time`, not here.)

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    for c in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("sh")
            .args(["-c", &format!("command -v {c}")])
            .output()
        {
            let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if out.status.success() && !p.is_empty() {
                return PathBuf::from(p);
            }
        }
    }
    panic!("no Chromium found: install Debian's chromium (scripts/test does it)");
}

/// Runs headless Chromium on `page` with `extra` arguments; returns
/// (stdout, stderr).
pub(crate) fn headless(page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A screenshot of `page` as RGB(A) pixels, `samples` bytes each.
fn screenshot(page: &Path, profile: &Path, shot: &Path, size: &str) -> (Vec<u8>, usize) {
    let (_, log) = headless(
        page,
        profile,
        &[
            &format!("--window-size={size}"),
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(shot).unwrap_or_else(|e| panic!("no screenshot ({e}):\n{log}")),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (buf, info.color_type.samples())
}

/// Pixels that are not (nearly) white.
fn ink(pixels: &[&[u8]]) -> usize {
    pixels
        .iter()
        .filter(|p| !p[..3].iter().all(|&c| c > 245))
        .count()
}

/// Within 40 of colour `c` in each channel.
fn near(p: &[u8], c: [u8; 3]) -> bool {
    p[..3]
        .iter()
        .zip(c)
        .all(|(&a, b)| (a as i32 - b as i32).abs() < 40)
}

#[test]
fn chromium_renders_the_report() {
    let t = tempfile::tempdir().unwrap();
    let page = t.path().join("report.html");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let status = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .arg("report")
        .arg(fixtures.join("default.json"))
        .arg(fixtures.join("tuned.json"))
        .arg("--html")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());

    // The DOM as the browser parsed it.
    let (dom, log) = headless(&page, &t.path().join("p1"), &["--dump-dom"]);
    assert!(
        dom.contains("<title>scalebench report"),
        "no report in the DOM:\n{log}"
    );
    assert_eq!(
        dom.matches("<svg class=\"chart\"").count(),
        6,
        "charts in the DOM"
    );
    assert_eq!(
        dom.matches("class=\"median\"").count(),
        12,
        "a median line per system and chart"
    );
    assert_eq!(dom.matches("<tr class=\"verdict\"").count(), 4);
    assert!(!log.contains(":CONSOLE"), "console messages:\n{log}");

    // A screenshot with ink on it.
    let (buf, px) = screenshot(
        &page,
        &t.path().join("p2"),
        &t.path().join("shot.png"),
        "1200,1600",
    );
    let pixels: Vec<&[u8]> = buf.chunks(px).collect();
    let ink = ink(&pixels);
    assert!(
        ink * 20 > pixels.len(),
        "the screenshot is nearly blank: {ink} of {} pixels",
        pixels.len()
    );
    // The palette's blue and vermillion are on it (the two systems).
    assert!(
        pixels.iter().any(|p| near(p, [0x00, 0x72, 0xB2])),
        "no blue series"
    );
    assert!(
        pixels.iter().any(|p| near(p, [0xD5, 0x5E, 0x00])),
        "no vermillion series"
    );
}

/// A small deterministic generator (xorshift64*), uniform in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A result file shaped like the quick suite's: 16 series of 5 runs, 7 of
/// 10 000 samples a run, 3 of 2 000 and 6 of 600 (398 000 samples), with
/// what real ones have: noise, a dense band, a second slower curve in
/// some, growth in others, and rare outliers up to 1 000 times slower.
fn quick_sized_result(base: &Value) -> Value {
    let mut doc = base.clone();
    let bench0 = doc["benchmarks"][0].clone();
    let run0 = bench0["runs"][0].clone();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut benches = Vec::new();
    for b in 0..16 {
        let (n, every) = match b {
            0..7 => (10_000, 1),
            7..10 => (2_000, 1),
            _ => (7_200, 12),
        };
        let base_ns = 800.0 * (1 + b % 5) as f64;
        let slope = if b % 4 == 3 { base_ns / 2_000.0 } else { 0.0 };
        let runs: Vec<Value> = (0..5)
            .map(|r| {
                let samples: Vec<[u64; 2]> = (0..n)
                    .step_by(every)
                    .map(|i| {
                        let u = rng.next();
                        let noise = (rng.next() + rng.next() + rng.next()) / 3.0;
                        let mut ns = (base_ns + slope * i as f64) * (0.8 + 0.4 * noise);
                        if b % 3 == 1 && u < 0.2 {
                            ns *= 2.5; // a second, slower curve
                        } else if u > 0.995 {
                            ns *= 2.0 + 998.0 * rng.next().powi(4); // rare outliers
                        }
                        [i as u64, ns as u64]
                    })
                    .collect();
                let mut run = run0.clone();
                run["index"] = json!(r);
                run["samples"] = json!(samples);
                run
            })
            .collect();
        let mut bench = bench0.clone();
        bench["name"] = json!(format!("synthetic-{b}"));
        bench["series"] = json!(format!("synthetic-{b}"));
        bench["params"]["requested_n"] = json!(n);
        bench["params"]["n"] = json!(n);
        bench["params"]["runs"] = json!(5);
        bench["runs"] = json!(runs);
        benches.push(bench);
    }
    doc["benchmarks"] = json!(benches);
    doc
}

#[test]
fn chromium_renders_a_quick_suite_sized_report_under_5_mb() {
    let t = tempfile::tempdir().unwrap();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join("default.json")).unwrap())
            .unwrap();
    let result = t.path().join("quick.json");
    std::fs::write(&result, quick_sized_result(&base).to_string()).unwrap();
    let page = t.path().join("quick.html");
    let status = Command::new(env!("CARGO_BIN_EXE_scalebench"))
        .arg("report")
        .arg(&result)
        .arg("--html")
        .arg(&page)
        .status()
        .unwrap();
    assert!(status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.len() < 5_000_000,
        "the report is {} bytes, over 5 MB",
        html.len()
    );
    assert_eq!(html.matches("all 50 000 samples drawn").count(), 14);
    assert_eq!(html.matches("all 10 000 samples drawn").count(), 6);
    assert_eq!(html.matches("all 3 000 samples drawn").count(), 12);

    // The browser builds every chart with its image.
    let (dom, log) = headless(&page, &t.path().join("p1"), &["--dump-dom"]);
    assert_eq!(
        dom.matches("<svg class=\"chart\"").count(),
        32,
        "charts in the DOM:\n{log}"
    );
    assert_eq!(
        dom.matches("<image class=\"density\"").count(),
        32,
        "a density image per chart"
    );
    assert!(!log.contains(":CONSOLE"), "console messages:\n{log}");

    // And draws them: the first charts' samples are on the screenshot, in
    // shades of the system's blue.
    let (buf, px) = screenshot(
        &page,
        &t.path().join("p2"),
        &t.path().join("shot.png"),
        "1200,6000",
    );
    let pixels: Vec<&[u8]> = buf.chunks(px).collect();
    let ink = ink(&pixels);
    assert!(
        ink * 20 > pixels.len(),
        "the screenshot is nearly blank: {ink} of {} pixels",
        pixels.len()
    );
    let blue = pixels
        .iter()
        .filter(|p| p[2] > 150 && p[2] as i32 > p[0] as i32 + 60)
        .count();
    assert!(
        blue > 50_000,
        "{blue} pixels in shades of the system's blue"
    );
    assert!(
        pixels.iter().any(|p| near(p, [0x00, 0x72, 0xB2])),
        "the dense band in the system's own blue"
    );
}

/// The fixture `name` as `label`, started on day `day` of November 2026,
/// socket `slower` times slower (its kept verdict dropped).
fn labelled(name: &str, label: &str, day: u32, slower: f64) -> Value {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut d: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures.join(name)).unwrap()).unwrap();
    d["label"] = json!(label);
    d["started"] = json!(format!("2026-11-{day:02}T10:00:00Z"));
    d["finished"] = json!(format!("2026-11-{day:02}T10:05:00Z"));
    for b in d["benchmarks"].as_array_mut().unwrap() {
        if b["series"] == "socket" && slower != 1.0 {
            b.as_object_mut().unwrap().remove("verdict");
            for r in b["runs"].as_array_mut().unwrap() {
                for s in r["samples"].as_array_mut().unwrap() {
                    s[1] = json!((s[1].as_f64().unwrap() * slower) as u64);
                }
            }
        }
    }
    d
}

#[test]
fn chromium_renders_the_dashboard_and_its_links_lead_to_each_runs_report() {
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("s.sqlite");
    let mut files = Vec::new();
    for day in 1..=4 {
        for (label, name) in [("linux-6.1", "default.json"), ("linux-6.18", "tuned.json")] {
            let slower = if day == 3 && label == "linux-6.1" {
                2.5
            } else {
                1.0
            };
            let f = t.path().join(format!("{label}-{day}.json"));
            std::fs::write(&f, labelled(name, label, day, slower).to_string()).unwrap();
            files.push(f);
        }
    }
    let sb = || Command::new(env!("CARGO_BIN_EXE_scalebench"));
    let o = sb()
        .args(["results", "add", "--store"])
        .arg(&store)
        .args(&files)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let site = t.path().join("site");
    let dashboard = || {
        sb().args(["dashboard", "--store"])
            .arg(&store)
            .arg("-o")
            .arg(&site)
            .output()
            .unwrap()
    };
    let o = dashboard();
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        said.contains("(8 runs, 3 series and workload rows, 1 regression)"),
        "{said}"
    );
    // Written again: refused without --force, nothing touched.
    let again = dashboard();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    let page = site.join("index.html");
    let (dom, log) = headless(&page, &t.path().join("p1"), &["--dump-dom"]);
    assert!(
        dom.contains("<title>scalebench dashboard"),
        "no dashboard:\n{log}"
    );
    assert!(!log.contains(":CONSOLE"), "console messages:\n{log}");
    for series in ["socket", "bind", "mmap"] {
        assert!(
            dom.contains(&format!("data-track=\"{series}\"")),
            "{series}"
        );
    }
    assert_eq!(dom.matches("<svg id=\"c").count(), 3, "a chart per series");
    // Two systems a chart, four runs each: 24 points, each a link to a
    // report that exists.
    let links: Vec<&str> = dom
        .split("<a href=\"runs/")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    assert!(dom.matches("class=\"point").count() == 24, "points");
    for l in &links {
        let report = std::fs::read_to_string(site.join("runs").join(l)).unwrap();
        assert!(report.contains("<title>scalebench report"), "{l}");
    }
    assert_eq!(std::fs::read_dir(site.join("runs")).unwrap().count(), 8);
    // The slower socket run is the one regression: ringed and listed.
    assert_eq!(dom.matches("class=\"point regressed\"").count(), 1);
    assert!(dom.contains("socket</a> on linux-6.1: rose"), "{dom}");

    // A screenshot with ink, both systems' colours on it.
    let (buf, px) = screenshot(
        &page,
        &t.path().join("p2"),
        &t.path().join("d.png"),
        "1000,1400",
    );
    let pixels: Vec<&[u8]> = buf.chunks(px).collect();
    assert!(ink(&pixels) * 30 > pixels.len(), "nearly blank");
    assert!(
        pixels.iter().any(|p| near(p, [0x00, 0x72, 0xB2])),
        "no blue line"
    );
    assert!(
        pixels.iter().any(|p| near(p, [0xD5, 0x5E, 0x00])),
        "no vermillion line"
    );
}
