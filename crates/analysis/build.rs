//! Gives the analysis its identity (`SCALEBENCH_ANALYSIS`): see
//! [`analysis_digest`].

// Cargo reads a build script's directives from its standard output.
#![allow(clippy::disallowed_macros)]

use std::path::{Path, PathBuf};

/// The analysis's identity: FNV-1a (64 bits) over every file of
/// this crate's `src/`, in name order. A verdict kept in a result file is
/// reused only by a build whose analysis has the same identity, so any
/// change to how series are judged re-judges them without anyone having to
/// remember to bump a number.
fn analysis_digest() {
    let dir = Path::new("src");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "rs"));
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
        let name = f.file_name().map(|n| n.to_string_lossy().into_owned());
        let text = std::fs::read(f).unwrap_or_default();
        for b in name.unwrap_or_default().bytes().chain(text) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=SCALEBENCH_ANALYSIS={h:016x}");
}

fn main() {
    analysis_digest();
}
