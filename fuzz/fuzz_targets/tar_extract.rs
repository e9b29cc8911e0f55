//! The tar extractor, `workloads::fs::extract::extract`, on any bytes, into
//! a fresh directory per input, removed afterwards.
//!
//! Each input gets a sandbox below `fuzz/scratch/extract/`: the target
//! `root/`, and beside it a directory `outside/` and a file `victim`. The
//! target holds a symbolic link `planted` to `outside/` and a hard link
//! `hl` to `victim`, as an attacker who got there first might leave them.
//! Whatever the archive, and whether it is accepted or refused, nothing
//! beside the target may appear or change, `outside/` stays empty,
//! `victim` keeps its bytes, the two links stay as they were, the target
//! holds only directories and plain files besides `planted`, and on success
//! the counters agree with what was reported.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::net::load::ItemCounters;
use scalebench::workloads::fs::extract::extract;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where the sandboxes go: inside fuzz/, so that no run leaves files
/// elsewhere, even one stopped by a crash.
fn scratch() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("scratch/extract");
        fs::create_dir_all(&d).expect("the scratch directory");
        d
    })
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Checks that below `dir` there are only directories and plain files.
fn only_dirs_and_files(dir: &Path, root: &Path) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let t = fs::symlink_metadata(&p).unwrap().file_type();
        if p == root.join("planted") {
            assert!(t.is_symlink(), "the planted link was replaced");
        } else if t.is_dir() {
            only_dirs_and_files(&p, root);
        } else {
            assert!(
                t.is_file(),
                "{} is neither a directory nor a file",
                p.display()
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let sandbox = tempfile::tempdir_in(scratch()).unwrap();
    let base = sandbox.path();
    let (root, outside, victim) = (base.join("root"), base.join("outside"), base.join("victim"));
    fs::create_dir(&root).unwrap();
    fs::create_dir(&outside).unwrap();
    fs::write(&victim, b"keep").unwrap();
    std::os::unix::fs::symlink("../outside", root.join("planted")).unwrap();
    fs::hard_link(&victim, root.join("hl")).unwrap();

    let counters = ItemCounters::default();
    let got = extract(data, &root, &counters);

    assert_eq!(names(base), ["outside", "root", "victim"]);
    assert!(
        names(&outside).is_empty(),
        "written through the planted link"
    );
    assert_eq!(
        fs::read(&victim).unwrap(),
        b"keep",
        "written through the hard link"
    );
    let hl = fs::symlink_metadata(root.join("hl")).unwrap();
    assert_eq!(hl.ino(), fs::metadata(&victim).unwrap().ino());
    assert_eq!(
        fs::read_link(root.join("planted")).unwrap(),
        Path::new("../outside")
    );
    only_dirs_and_files(&root, &root);
    if let Ok(x) = got {
        assert_eq!(counters.get(), (x.files, x.bytes));
    }
});
