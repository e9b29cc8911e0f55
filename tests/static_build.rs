//! The static build: `cargo build --target
//! x86_64-unknown-linux-musl` gives one static binary that carries its
//! fork helpers, the binary that goes into guests and onto hosts with
//! another C library. Built here once (the test profile in
//! `target/static`) and run: `fork` and `fork-static` measure, not
//! "unsupported". The analysis crate is optimised as in every test build
//! (unoptimised, the analysis after each command in a guest under TCG took
//! 45 s of a 60 s boot-and-run here, `run socket --max 40 --runs 1`;
//! optimised, the whole took 14 s); the other crates are not
//! (`profile.test.opt-level=0`): what the guests run is measured, never
//! timed as speed, and the build costs 115 s of CPU instead of 196 s
//! (105 s against 63 s of wall time from clean, 2026-12-05).

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use scalebench::systems::qemu::needs_loader;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The musl target; `scripts/test` adds it with rustup.
const MUSL: &str = "x86_64-unknown-linux-musl";

/// Builds the static binary once per test process; its path.
pub fn static_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let dir = root.join("target/static");
        let mut cargo = Command::new(env!("CARGO"));
        // The rustc beside the cargo that built these tests: run outside
        // cargo (the test binary alone), rustup's proxy would obey a
        // dependency's own toolchain file (flagset's names 1.65).
        let rustc = std::path::Path::new(env!("CARGO")).with_file_name("rustc");
        if std::env::var_os("RUSTC").is_none() && rustc.is_file() {
            cargo.env("RUSTC", &rustc);
        }
        let o = cargo
            .args(["build", "--profile", "test", "--bin", "scalebench"])
            .args(["--target", MUSL])
            .args(["--config", "profile.test.opt-level=0"])
            .env("CARGO_TARGET_DIR", &dir)
            .current_dir(&root)
            .output()
            .expect("cargo runs");
        assert!(
            o.status.success(),
            "cargo build --profile test --target {MUSL} failed (scripts/test adds the target with rustup):\n{}",
            common::text(&o.stderr)
        );
        let warned = common::text(&o.stderr);
        assert!(
            !warned.contains("fork helper (dynamic) not built")
                && !warned.contains("fork helper (static) not built"),
            "{warned}"
        );
        dir.join(MUSL).join("debug/scalebench")
    })
    .clone()
}

#[test]
fn the_musl_build_is_static_and_runs_fork_and_fork_static() {
    let bin = static_binary();
    // Static: no program interpreter among its program headers.
    let elf = std::fs::read(&bin).unwrap();
    assert_eq!(&elf[..4], b"\x7fELF");
    assert_eq!(
        needs_loader(&elf),
        Some(false),
        "{} names a dynamic loader",
        bin.display()
    );
    // The check tells: the usual (glibc) build has a loader.
    let usual = std::fs::read(env!("CARGO_BIN_EXE_scalebench")).unwrap();
    assert_eq!(needs_loader(&usual), Some(true));
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let o = Command::new(&bin)
        .args(["run", "fork", "fork-static", "--max", "40", "--runs", "1"])
        .args(["--quiet", "--no-report", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    let doc: Value = common::load(&out);
    common::assert_valid(&doc);
    let series: Vec<(&str, &str)> = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["series"].as_str().unwrap(), b["status"].as_str().unwrap()))
        .collect();
    assert_eq!(series, [("fork", "ok"), ("fork-static", "ok")], "{doc}");
    for b in doc["benchmarks"].as_array().unwrap() {
        let samples = b["runs"][0]["samples"].as_array().unwrap();
        assert!(
            samples.len() >= 20,
            "{}: {} samples",
            b["series"],
            samples.len()
        );
    }
}
