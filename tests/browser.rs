//! The HTML report in a real browser: headless Chromium (Debian's
//! `chromium`; `scripts/test` installs it) loads the report from a file.
//! The DOM it builds has the expected charts, a screenshot is not blank,
//! and the page logs nothing to the console.

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
fn headless(page: &Path, profile: &Path, extra: &[&str]) -> (String, String) {
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
    let shot = t.path().join("shot.png");
    let (_, log) = headless(
        &page,
        &t.path().join("p2"),
        &[
            "--window-size=1200,1600",
            &format!("--screenshot={}", shot.display()),
        ],
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(&shot).unwrap_or_else(|e| panic!("no screenshot ({e}):\n{log}")),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let pixels: Vec<&[u8]> = buf[..info.buffer_size()].chunks(px).collect();
    let white = pixels
        .iter()
        .filter(|p| p[..3].iter().all(|&c| c > 245))
        .count();
    let ink = pixels.len() - white;
    assert!(
        ink * 20 > pixels.len(),
        "the screenshot is nearly blank: {ink} of {} pixels",
        pixels.len()
    );
    // The palette's blue and vermillion are on it (the two systems).
    let near = |p: &[u8], c: [u8; 3]| {
        p[..3]
            .iter()
            .zip(c)
            .all(|(&a, b)| (a as i32 - b as i32).abs() < 40)
    };
    assert!(
        pixels.iter().any(|p| near(p, [0x00, 0x72, 0xB2])),
        "no blue series"
    );
    assert!(
        pixels.iter().any(|p| near(p, [0xD5, 0x5E, 0x00])),
        "no vermillion series"
    );
}
