//! The bigfile workload through the binary, on a fresh ext4 made by the
//! test on a loop device (root: CI runs as root): six rows (contiguous and
//! fragmented files; one download, two at once, one beside a second held
//! to 4 MB/s), every byte of every measured file downloaded, throughput
//! over time, the server's CPU time, caches dropped, each file's extent
//! map checked against its layout, and a size too small refused by name.

use crate::common;

use common::{assert_valid, bin, load};
use std::path::{Path, PathBuf};

/// A fresh ext4 of 1 GiB (a sparse image) on a loop device (`mount -o
/// loop`, detached when unmounted), mounted on `mnt`; unmounted when
/// dropped. Not smaller: below 512 MiB mkfs.ext4 makes 1 KiB blocks in
/// 8 MiB groups, whose metadata breaks a 24 MB file into three fragments
/// (the check names it, rightly).
struct FreshExt4 {
    mnt: PathBuf,
}

impl FreshExt4 {
    fn new(dir: &Path) -> FreshExt4 {
        // SAFETY: geteuid has no preconditions.
        assert!(
            unsafe { libc::geteuid() } == 0,
            "this test makes an ext4 on a loop device: run it as root (scripts/test in CI is)"
        );
        let image = dir.join("ext4.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(1 << 30)
            .unwrap();
        let image = image.to_str().unwrap();
        common::cmd("mkfs.ext4", &["-q", "-F", image]);
        let mnt = dir.join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        common::cmd("mount", &["-o", "loop", image, mnt.to_str().unwrap()]);
        FreshExt4 { mnt }
    }
}

impl Drop for FreshExt4 {
    fn drop(&mut self) {
        // A server that has just exited may hold a file a moment longer.
        for _ in 0..50 {
            let ok = std::process::Command::new("umount")
                .arg(&self.mnt)
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

#[test]
fn six_rows_every_byte_downloaded_with_throughput_over_time() {
    let dir = tempfile::tempdir().unwrap();
    let ext4 = FreshExt4::new(dir.path());
    let out = dir.path().join("b.json");
    let r = bin()
        .args([
            "run",
            "bigfile",
            "--bigfile-size",
            "24M",
            "--no-report",
            "-q",
            "-o",
        ])
        .arg(&out)
        .arg("--workdir")
        .arg(&ext4.mnt)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let doc = load(&out);
    assert_valid(&doc);
    let w = &doc["workloads"][0];
    assert_eq!(w["name"], "bigfile");
    assert_eq!(w["status"], "ok", "{}", w["message"]);
    let rows = w["rows"].as_array().unwrap();
    let labels: Vec<&str> = rows.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(
        labels,
        [
            "contiguous, 1 download",
            "contiguous, 2 downloads at once",
            "contiguous, 1 download beside one held to 4 MB/s",
            "fragmented, 1 download",
            "fragmented, 2 downloads at once",
            "fragmented, 1 download beside one held to 4 MB/s",
        ]
    );
    for r in rows {
        let k = r["params"]["downloads"].as_u64().unwrap();
        let p = &r["phase"];
        assert_eq!(p["items"], k, "{}", r["label"]);
        assert_eq!(p["bytes"], k * (24 << 20), "{}", r["label"]);
        assert!(!p["throughput"].as_array().unwrap().is_empty());
        assert!(r["error"].is_null(), "{}", r["error"]);
        // /proc counts CPU time in 10 ms ticks: a 24 MB sendfile can stay
        // under one, so the figure is there and not negative.
        assert!(r["params"]["server_cpu_s"].as_f64().unwrap() >= 0.0);
        assert_eq!(r["params"]["cold"], true, "caches dropped as root");
        // On a fresh ext4 each file is what its layout claims.
        assert_eq!(r["params"]["layout_as_claimed"], true, "{}", r["label"]);
        if r["label"].as_str().unwrap().ends_with("held to 4 MB/s") {
            let c = &r["params"]["companion"];
            let layout = r["params"]["layout"].as_str().unwrap();
            assert_eq!(c["file"], if layout == "contiguous" { "c2" } else { "f2" });
            assert_eq!(c["limit_bytes_per_s"], 4_000_000);
            // It flowed before the measured download began, and never
            // faster than its limit (the reader is paced).
            assert!(c["bytes"].as_u64().unwrap() > 0, "{c}");
            assert!(c["started_before_s"].as_f64().unwrap() >= 0.0, "{c}");
            assert!(c["bytes_per_s"].as_f64().unwrap() <= 4_000_000.0, "{c}");
        }
    }
    // The extent maps: contiguous files in one piece, fragmented ones in
    // at least one piece per MiB (their 64 KB pieces alternate on disk).
    let layouts = &w["params"]["layouts"];
    assert_eq!(
        layouts["fragmented"]["placing"],
        "64 KB pieces preallocated in turns (fallocate), then written"
    );
    for (layout, files) in [("contiguous", ["c1", "c2"]), ("fragmented", ["f1", "f2"])] {
        let checks = layouts[layout]["files"].as_array().unwrap();
        for (c, name) in checks.iter().zip(files) {
            assert_eq!(c["file"], name);
            assert_eq!(c["as_claimed"], true, "{c}");
            assert!(c["note"].is_null(), "{c}");
            let fragments = c["fragments"].as_u64().unwrap();
            assert!(c["extents"].as_u64().unwrap() >= fragments, "{c}");
            if layout == "contiguous" {
                assert_eq!(fragments, 1, "{c}");
            } else {
                assert!(fragments >= 24, "{c}");
            }
        }
    }
    assert!(
        w["message"].is_null(),
        "no file was named: {}",
        w["message"]
    );
    assert!(
        common::scalebench_entries(&ext4.mnt).is_empty(),
        "the files and the work directory are gone"
    );
    drop(ext4);
    let r = bin()
        .args(["run", "bigfile", "--bigfile-size", "10", "-o"])
        .arg(dir.path().join("x.json"))
        .output()
        .unwrap();
    // A value outside the option's range: a usage error.
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("--bigfile-size 10: at least 1M"), "{err}");
}
