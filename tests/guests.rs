//! Another kernel as a guest (issue 30): `__boot NAME=kernel:PATH` boots
//! Debian's cloud kernel (installed by scripts/test) in QEMU under TCG
//! with the static scalebench as its init, this machine's root shared
//! read-only, runs one scalebench command there and brings its result
//! file back; QEMU, virtiofsd and the work directory go at the end.

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use crate::static_build::static_binary;
use std::path::PathBuf;

/// The newest installed kernel image of a Debian flavour (`cloud-amd64`).
fn kernel(flavour: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("vmlinuz-") && n.ends_with(&format!("-{flavour}"))
        })
        .collect();
    found.sort();
    found
        .pop()
        .unwrap_or_else(|| panic!("no /boot/vmlinuz-*-{flavour}: scripts/test installs it"))
}

#[test]
fn a_cloud_kernel_boots_runs_a_benchmark_and_leaves_nothing() {
    let image = kernel("cloud-amd64");
    let release = image
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("vmlinuz-")
        .to_string();
    let init = static_binary();
    let t = tempfile::tempdir().unwrap();
    let keep = t.path().join("kept");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = common::bin()
        .arg("__boot")
        .arg(format!("cloud=kernel:{},memory=1G", image.display()))
        .arg("--init")
        .arg(&init)
        .arg("--keep")
        .arg(&keep)
        .arg("--workdir")
        .arg(&work)
        .args(["--limit", "900", "--"])
        .args(["run", "socket", "fork", "--max", "60", "--runs", "1"])
        .args(["--no-report", "--out", "/tmp/out/r.json"])
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    // Acceleration is probed: KVM if a guest under it shows the kernel's
    // banner, else TCG and why (on this project's machine KVM hangs).
    let kvm = format!("cloud: Linux {release} under QEMU (KVM), shares by virtiofs");
    let tcg = format!("cloud: Linux {release} under QEMU (TCG, emulated: ");
    assert!(
        stderr.contains(&kvm)
            || (stderr.contains(&tcg) && stderr.contains("), shares by virtiofs")),
        "{stderr}"
    );
    // The result file is the guest's: its kernel, musl's scalebench, and
    // fork's dynamic helper ran on this machine's root.
    let doc = common::load(&keep.join("r.json"));
    common::assert_valid(&doc);
    assert_eq!(doc["system"]["os_release"], release.as_str());
    assert_eq!(doc["system"]["libc"], "musl");
    let statuses: Vec<(&str, &str)> = doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| (b["series"].as_str().unwrap(), b["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [("socket", "ok"), ("fork", "ok")], "{stderr}");
    // Nothing left: no process naming the work directory (QEMU's and
    // virtiofsd's arguments do), the work directory removed, no
    // virtiofsd pid file naming it.
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new()
    );
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
    let marker = work.display().to_string().replace('/', ".");
    let left: Vec<String> = std::fs::read_dir("/run/virtiofsd")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&marker))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_dynamic_init_or_a_file_that_is_no_kernel_is_refused_before_qemu_starts() {
    let image = kernel("cloud-amd64");
    let cases: [(String, &str, &str); 4] = [
        (
            format!("c=kernel:{}", image.display()),
            env!("CARGO_BIN_EXE_scalebench"),
            "is dynamically linked: a guest's init must be static",
        ),
        (
            "c=kernel:/etc/passwd".to_string(),
            env!("CARGO_BIN_EXE_scalebench"),
            "kernel /etc/passwd: not an x86 Linux kernel image",
        ),
        (
            format!("c=kernel:{},initrd=/boot/x", image.display()),
            "/nonexistent",
            "initrd=/boot/x: not supported yet",
        ),
        (
            format!("c=kernel:{},cpus=0", image.display()),
            env!("CARGO_BIN_EXE_scalebench"),
            "cpus=0: must be at least 1",
        ),
    ];
    for (system, init, says) in cases {
        let o = common::bin()
            .args(["__boot", &system, "--init", init, "--", "run", "socket"])
            .output()
            .unwrap();
        let stderr = common::text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{system}: {stderr}");
        assert!(stderr.contains(says), "{system}: {stderr}");
    }
}
