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

// Cargo reads a build script's directives from its standard output.
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The commit being built (12 digits: from a published package's
/// `.cargo_vcs_info.json`, else `git rev-parse`; `unknown` without
/// either), and the day of the build (UTC, or `SOURCE_DATE_EPOCH`'s day
/// for a reproducible build): `--version` shows both.
fn version_facts() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|c| !c.is_empty())
    };
    // A new commit changes HEAD (this worktree's) or a ref (the shared ones).
    if let (Some(dir), Some(common)) = (
        git(&["rev-parse", "--git-dir"]),
        git(&["rev-parse", "--git-common-dir"]),
    ) {
        let (dir, common) = (PathBuf::from(dir), PathBuf::from(common));
        for p in [
            dir.join("HEAD"),
            common.join("refs"),
            common.join("packed-refs"),
        ] {
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    // A published package names its commit in .cargo_vcs_info.json.
    let packaged = std::fs::read_to_string(".cargo_vcs_info.json")
        .ok()
        .and_then(|t| {
            let at = t.find("\"sha1\"")?;
            let hex: String = t[at + 6..]
                .chars()
                .skip_while(|c| !c.is_ascii_hexdigit())
                .take_while(char::is_ascii_hexdigit)
                .take(12)
                .collect();
            (hex.len() == 12).then_some(hex)
        });
    let commit = packaged
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".into());
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
        });
    println!("cargo:rustc-env=SCALEBENCH_COMMIT={commit}");
    println!(
        "cargo:rustc-env=SCALEBENCH_BUILD_DATE={}",
        civil_date(secs / 86_400)
    );
}

/// `YYYY-MM-DD` of day `days` since 1970-01-01 (the proleptic Gregorian
/// calendar, by Howard Hinnant's days-to-civil algorithm).
fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn main() {
    version_facts();
    println!("cargo:rerun-if-changed=helpers/forker_main.rs");
    println!("cargo:rerun-if-changed=src/bench/forker.rs");
    println!("cargo:rerun-if-changed=crates/harness/src/rawclock.rs");
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
