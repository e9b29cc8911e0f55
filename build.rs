//! Builds the fork helper (`helpers/forker_main.rs`, a `no_std` program on
//! the C library) twice with the same `rustc` that builds scalebench: linked
//! dynamically, and statically with `-C target-feature=+crt-static`. Both binaries are embedded in scalebench
//! (`include_bytes!`), so `cargo install` carries them along. When a variant
//! cannot be built (cross compilation, no static libc installed, an OS
//! without static linking), an empty file is embedded instead, together with
//! the reason, and the benchmark that needs it reports "unsupported" with
//! that reason rather than failing the run. A target of the building
//! machine's architecture and OS with another C library (musl on a glibc
//! machine) gets its helpers too: rustc links the static one with its own
//! musl, the dynamic one with the machine's C library.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=helpers/forker_main.rs");
    println!("cargo:rerun-if-changed=src/bench/forker.rs");
    println!("cargo:rerun-if-changed=src/harness/rawclock.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    // glibc's libc.a refers to libgcc's unwinder (for its own cleanup
    // handlers), which a no_std program does not pull in by itself. And a
    // no_std static-pie glibc program linked by rust-lld crashes in _init
    // (seen with rustc 1.95), while GNU ld links it correctly.
    let glibc_static: &[&str] = if target.ends_with("linux-gnu") {
        &[
            "-Clink-arg=-fuse-ld=bfd",
            "-Clink-arg=-Wl,--start-group",
            "-Clink-arg=-lc",
            "-Clink-arg=-lgcc",
            "-Clink-arg=-lgcc_eh",
            "-Clink-arg=-Wl,--end-group",
        ]
    } else {
        &[]
    };
    let static_flags: Vec<&str> = ["-C", "target-feature=+crt-static"]
        .into_iter()
        .chain(glibc_static.iter().copied())
        .collect();
    // musl links statically unless told otherwise.
    let dynamic_flags: &[&str] = if target.ends_with("musl") {
        &["-C", "target-feature=-crt-static"]
    } else {
        &[]
    };
    for (variant, extra) in [("dynamic", dynamic_flags), ("static", &static_flags[..])] {
        let bin = out.join(format!("forker-{variant}"));
        let why = out.join(format!("forker-{variant}.why"));
        let reason = if !runs_here(&target, &host) {
            Some(format!(
                "the fork helper is built only for targets that run on the building machine (target {target}, host {host})"
            ))
        } else {
            build(&rustc, &target, extra, &bin).err()
        };
        match reason {
            None => std::fs::write(&why, "").expect("write reason"),
            Some(r) => {
                println!("cargo:warning=fork helper ({variant}) not built: {r}");
                std::fs::write(&bin, b"").expect("write placeholder");
                std::fs::write(&why, r).expect("write reason");
            }
        }
    }
}

/// Whether a `target` program runs on the `host`: the same architecture and
/// operating system, whatever the C library (`x86_64-unknown-linux-musl`
/// on `x86_64-unknown-linux-gnu`: the static musl build carries helpers).
fn runs_here(target: &str, host: &str) -> bool {
    fn arch_os(t: &str) -> (Option<&str>, Option<&str>) {
        let mut p = t.split('-');
        (p.next(), p.nth(1))
    }
    target == host || arch_os(target) == arch_os(host)
}

fn build(rustc: &std::ffi::OsStr, target: &str, extra: &[&str], bin: &Path) -> Result<(), String> {
    let output = Command::new(rustc)
        .args([
            "--edition",
            "2021",
            "--crate-type",
            "bin",
            "--crate-name",
            "forker",
        ])
        .args([
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-C",
            "strip=symbols",
        ])
        .args(["--target", target])
        .args(extra)
        .arg("-o")
        .arg(bin)
        .arg("helpers/forker_main.rs")
        .current_dir(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"))
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&output.stderr);
        // The linker's own complaint is more telling than rustc's summary.
        let line = err
            .lines()
            .find(|l| l.contains("undefined") || l.contains("cannot find"))
            .or_else(|| err.lines().find(|l| l.contains("error")))
            .unwrap_or("rustc failed");
        Err(line.trim().to_string())
    }
}
