//! Builds the fork helper (`helpers/forker_main.rs`) twice with the same
//! `rustc` that builds scalebench: linked dynamically, and statically with
//! `-C target-feature=+crt-static`. Both binaries are embedded in scalebench
//! (`include_bytes!`), so `cargo install` carries them along. When a variant
//! cannot be built (cross compilation, no static libc installed, an OS
//! without static linking), an empty file is embedded instead, together with
//! the reason, and the benchmark that needs it reports "unsupported" with
//! that reason rather than failing the run.

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
    for (variant, extra) in [
        ("dynamic", &[][..]),
        ("static", &["-C", "target-feature=+crt-static"][..]),
    ] {
        let bin = out.join(format!("forker-{variant}"));
        let why = out.join(format!("forker-{variant}.why"));
        let reason = if target != host {
            Some(format!(
                "the fork helper is built only for native builds (target {target}, host {host})"
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
        .env_remove("RUSTC_WRAPPER")
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        let err = String::from_utf8_lossy(&output.stderr);
        let first = err
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or("rustc failed");
        Err(first.trim().to_string())
    }
}
