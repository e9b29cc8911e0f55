//! Another kernel as a guest: `__boot NAME=kernel:PATH` boots
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

/// The release a Debian kernel image names (`vmlinuz-RELEASE`).
fn release_of(image: &std::path::Path) -> String {
    image
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("vmlinuz-")
        .to_string()
}

/// The pid files virtiofsd left under /run/virtiofsd for sockets in
/// `work`.
fn virtiofsd_pid_files(work: &std::path::Path) -> Vec<String> {
    let marker = work.display().to_string().replace('/', ".");
    std::fs::read_dir("/run/virtiofsd")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&marker))
        .collect()
}

#[test]
fn a_cloud_kernel_boots_runs_a_benchmark_and_leaves_nothing() {
    let image = kernel("cloud-amd64");
    let release = release_of(&image);
    let init = static_binary();
    let t = tempfile::tempdir().unwrap();
    let keep = t.path().join("kept");
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let o = common::bin()
        .arg("__boot")
        .arg(format!("cloud=kernel:{},memory=1G", image.display()))
        // Host time: booting counted in instructions is slow, and only
        // the agreement test below needs it.
        .args(["--guest-clock", "time"])
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
    let left = virtiofsd_pid_files(&work);
    assert!(left.is_empty(), "{left:?}");
}

/// A RAM disk for kernel `release` made by Debian's mkinitramfs from
/// this machine's configuration (zstd-compressed, as Debian makes its
/// own), holding the given modules and what they need (`MODULES=list`:
/// Debian's `most` costs four times the CPU, 5.4 s against 1.4 s here).
fn debian_initrd(dir: &std::path::Path, release: &str, modules: &[&str]) -> PathBuf {
    let conf = dir.join("initramfs-conf");
    std::fs::create_dir_all(&conf).unwrap();
    let own = std::fs::read_to_string("/etc/initramfs-tools/initramfs.conf")
        .expect("/etc/initramfs-tools: scripts/test installs initramfs-tools");
    let listed: String = own
        .lines()
        .map(|l| {
            if l.starts_with("MODULES=") {
                "MODULES=list"
            } else {
                l
            }
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(conf.join("initramfs.conf"), listed).unwrap();
    std::fs::write(conf.join("modules"), modules.join("\n") + "\n").unwrap();
    let out = dir.join("initrd.img");
    let o = std::process::Command::new("/usr/sbin/mkinitramfs")
        .arg("-d")
        .arg(&conf)
        .arg("-o")
        .arg(&out)
        .arg(release)
        .output()
        .expect("mkinitramfs: scripts/test installs initramfs-tools");
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    out
}

#[test]
fn modules_come_from_a_ram_disk_given_by_initrd() {
    let image = kernel("cloud-amd64");
    let release = release_of(&image);
    let t = tempfile::tempdir().unwrap();
    let boot = |initrd: &std::path::Path, keep: &str| {
        common::bin()
            .arg("__boot")
            .arg(format!(
                "c=kernel:{},initrd={},memory=1G,accel=tcg",
                image.display(),
                initrd.display()
            ))
            .args(["--guest-clock", "time"])
            .arg("--init")
            .arg(static_binary())
            .arg("--keep")
            .arg(t.path().join(keep))
            .args(["--limit", "600", "--"])
            .args(["run", "socket", "--max", "40", "--runs", "1"])
            .args(["--no-report", "--out", "/tmp/out/r.json"])
            .output()
            .unwrap()
    };
    // With the modules the guest needs in it, the guest loads them from
    // there and runs.
    let good = debian_initrd(
        t.path(),
        &release,
        &["virtio_pci", "virtiofs", "virtio_console"],
    );
    let o = boot(&good, "kept");
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let doc = common::load(&t.path().join("kept/r.json"));
    assert_eq!(doc["system"]["os_release"], release.as_str());
    assert_eq!(doc["benchmarks"][0]["status"], "ok", "{stderr}");
    // A RAM disk without virtio-fs: the guest says which module it lacks,
    // and where it looked.
    let plain = t.path().join("plain");
    std::fs::create_dir(&plain).unwrap();
    let own = debian_initrd(&plain, &release, &["virtio_pci", "virtio_console"]);
    let o = boot(&own, "kept-own");
    let stderr = common::text(&o.stderr);
    assert!(!o.status.success());
    assert!(
        stderr.contains(&format!(
            "the RAM disk given by initrd=: kernel module virtiofs: neither built in nor in /lib/modules/{release}"
        )),
        "{stderr}"
    );
}

#[test]
fn a_dynamic_init_or_a_file_that_is_no_kernel_is_refused_before_qemu_starts() {
    let image = kernel("cloud-amd64");
    // A kernel with no module tree here whose configuration (beside it,
    // as scripts/kernel-ab keeps it) builds in neither 9p nor virtio-fs:
    // only its boot header, which is all that is read before QEMU starts.
    let t = tempfile::tempdir().unwrap();
    let release = "0.0.0-scalebench-no-modules";
    let mut head = vec![0u8; 0x1000];
    head[0x202..0x206].copy_from_slice(b"HdrS");
    head[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
    head[0x20e..0x210].copy_from_slice(&(0x800u16 - 0x200).to_le_bytes());
    head[0x800..0x800 + release.len()].copy_from_slice(release.as_bytes());
    let builtin = t.path().join(format!("vmlinuz-{release}"));
    std::fs::write(&builtin, head).unwrap();
    std::fs::write(
        t.path().join(format!("config-{release}")),
        "CONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_9P_FS=m\n",
    )
    .unwrap();
    let cases: [(String, &str, &str); 6] = [
        (
            format!("c=kernel:{},modules=/nonexistent/m", image.display()),
            "/nonexistent",
            "modules=/nonexistent/m: neither /nonexistent/m/modules.dep nor",
        ),
        (
            format!("c=kernel:{}", builtin.display()),
            "/nonexistent",
            "kernel 0.0.0-scalebench-no-modules has no module tree",
        ),
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
            "initrd=/boot/x: No such file or directory",
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

/// The runs' start times of each series of a result file, by series.
fn started(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["series"].as_str().unwrap().to_string(),
                b["runs"][0]["started"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_plan_runs_on_this_machine_and_on_a_guest_in_turn_each_in_its_own_file() {
    let image = kernel("cloud-amd64");
    let release = release_of(&image);
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    // The guest tunes itself with a profile file of this machine's; this
    // machine is left as it is.
    let profile = t.path().join("guest-tuned.toml");
    std::fs::write(
        &profile,
        "format = \"scalebench-profile/1\"\nname = \"guest-tuned\"\ndescription = \"d\"\n\
         [linux.sysctl]\n\"vm.swappiness\" = 33\n",
    )
    .unwrap();
    let swappiness = std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap();
    let o = common::bin()
        .args(["run", "socket", "bind", "--max", "60", "--runs", "1"])
        .arg("--system")
        .arg("here=local")
        .arg("--system")
        .arg(format!(
            "cloud=kernel:{},memory=1G,cpus=2,accel=tcg,profile={}",
            image.display(),
            profile.display()
        ))
        // Two vCPUs: the guest's clock counts host time.
        .args(["--guest-clock", "time"])
        .arg("--guest-bin")
        .arg(static_binary())
        .arg("--workdir")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let here = common::load(&t.path().join("r-here.json"));
    let cloud = common::load(&t.path().join("r-cloud.json"));
    assert!(t.path().join("r.html").is_file(), "one report for both");
    for (doc, label) in [(&here, "here"), (&cloud, "cloud")] {
        common::assert_valid(doc);
        assert_eq!(doc["label"], label);
        assert_eq!(doc["complete"], true);
        let series: Vec<String> = started(doc).into_iter().map(|s| s.0).collect();
        assert_eq!(series, ["socket", "bind"], "{label}: {stderr}");
    }
    // The guest's file has the guest's record, and how it ran.
    assert_eq!(cloud["system"]["os_release"], release.as_str());
    assert_eq!(cloud["system"]["libc"], "musl");
    assert_eq!(cloud["system"]["hostname"], "cloud", "the guest is named");
    let v = &cloud["system"]["virtualization"];
    let kind = v["kind"].as_str().unwrap();
    assert!(kind == "tcg" || kind == "kvm", "{v}");
    assert_eq!(v["emulated"], kind == "tcg");
    assert!(!v["reason"].as_str().unwrap().is_empty(), "{v}");
    let pins = v["vcpu_pins"].as_array().unwrap();
    assert_eq!(pins.len(), 2, "each vCPU pinned: {v}");
    assert_eq!(v["clock"], "time", "{v}");
    assert!(v.get("icount_shift").is_none(), "{v}");
    assert!(
        v.get("rtc_base").is_none(),
        "its clock is this machine's: {v}"
    );
    let cmdline = cloud["system"]["tuning"]["kernel_cmdline"]
        .as_str()
        .unwrap();
    assert!(
        !cmdline.contains("norandmaps"),
        "randomized on host time: {cmdline}"
    );
    assert_ne!(here["system"]["virtualization"]["kind"], "tcg");
    // The guest applied its profile (and put it back: it was applied for
    // each item); this machine has none and is unchanged.
    let p = &cloud["profile"];
    assert_eq!(p["name"], "guest-tuned", "{p}");
    let c = &p["changes"][0];
    assert_eq!(
        (&c["name"], &c["new"], &c["status"]),
        (&"vm.swappiness".into(), &"33".into(), &"applied".into()),
        "{p}"
    );
    assert_eq!(
        cloud["system"]["sysctls"]["vm.swappiness"], "33",
        "recorded as run"
    );
    assert!(here["profile"].is_null(), "{}", here["profile"]);
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap(),
        swappiness
    );
    // In turn: this machine's socket, the guest's, this machine's bind,
    // the guest's (the guest's clock is set from this machine's before
    // each item).
    let (h, c) = (started(&here), started(&cloud));
    let order = [&h[0].1, &c[0].1, &h[1].1, &c[1].1];
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
    // Nothing left: QEMU, virtiofsd, the guest's directory.
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new()
    );
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
}

#[test]
fn what_systems_cannot_do_is_refused_before_anything_runs() {
    let image = kernel("cloud-amd64");
    let k = format!("b=kernel:{}", image.display());
    let kp = format!("b=kernel:{},profile=thruput", image.display());
    let cases: [(&[&str], &str); 7] = [
        (
            &["--system", &kp],
            "--system b: profile=thruput: unknown profile `thruput`: did you mean `throughput`?",
        ),
        (
            &["--system", "a=local", "--system", "a=local"],
            "--system a: the name is given twice",
        ),
        (
            &["--system", "a=image:/x.qcow2,ssh=root"],
            "--system a: image /x.qcow2: no such file",
        ),
        (
            &["--system", &k, "--profile", "throughput"],
            "--profile with --system b: --profile tunes this machine only; give another system its own with profile=",
        ),
        (
            &["--system", "b=kernel:/nonexistent/vmlinuz"],
            "--system b: kernel /nonexistent/vmlinuz: no such file",
        ),
        (
            &["--system", "a=local", "--guest-bin", "/bin/true"],
            "--guest-bin goes with a --system kernel:",
        ),
        (
            &["--system", "a=kernel"],
            "`kernel`: a system is `local`, `kernel:PATH`",
        ),
    ];
    let t = tempfile::tempdir().unwrap();
    for (args, says) in cases {
        let o = common::bin()
            .current_dir(t.path())
            .args(["run", "socket", "--max", "10"])
            .args(args)
            .output()
            .unwrap();
        let stderr = common::text(&o.stderr);
        assert!(
            matches!(o.status.code(), Some(1) | Some(2)),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(t.path()).unwrap().count(),
        0,
        "no file made"
    );
}

#[test]
fn a_dry_run_names_every_system_it_would_run_on_also_one_alone() {
    let image = kernel("cloud-amd64");
    let k = format!("g={}", format_args!("kernel:{}", image.display()));
    let t = tempfile::tempdir().unwrap();
    let key = t.path().join("key");
    std::fs::write(&key, "not a key, never read by a dry run").unwrap();
    let img = t.path().join("disk.img");
    std::fs::write(&img, "").unwrap();
    let i = format!("d=image:{},ssh=root,key={}", img.display(), key.display());
    // One system elsewhere, alone or beside this machine: each of its
    // items is listed on it, with no time promised for a guest.
    for systems in [
        vec![k.as_str()],
        vec![i.as_str()],
        vec!["h=local", k.as_str()],
    ] {
        let mut cmd = common::bin();
        cmd.args([
            "run",
            "socket",
            "bind",
            "--max",
            "10",
            "--dry-run",
            "--json",
        ]);
        for s in &systems {
            cmd.args(["--system", s]);
        }
        let o = cmd.output().unwrap();
        let stderr = common::text(&o.stderr);
        assert!(o.status.success(), "{systems:?}: {stderr}");
        let plan: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let items = plan["items"].as_array().unwrap();
        assert_eq!(items.len(), 2 * systems.len(), "{systems:?}: {plan}");
        for s in &systems {
            let name = &s[..1];
            let on: Vec<&serde_json::Value> = items.iter().filter(|x| x["on"] == name).collect();
            assert_eq!(on.len(), 2, "{systems:?}: {name} in {plan}");
            if name != "h" {
                assert!(on.iter().all(|x| x["seconds"].is_null()), "{name}: {plan}");
            }
        }
        // Each system as given, in the JSON and in the words.
        let named: Vec<&str> = plan["systems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        let given: Vec<&str> = systems.iter().map(|s| &s[..1]).collect();
        assert_eq!(named, given, "{plan}");
        let unknown = systems.iter().filter(|s| !s.starts_with("h=")).count() * 2;
        assert_eq!(plan["unknown"], unknown, "{systems:?}: {plan}");
        // The words say it too: no bare promise of a time.
        let mut cmd = common::bin();
        cmd.args(["run", "socket", "bind", "--max", "10", "--dry-run"]);
        for s in &systems {
            cmd.args(["--system", s]);
        }
        // (Wrapped to 100 columns: read as one line.)
        let text = common::text(&cmd.output().unwrap().stdout);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.contains("whose time is unknown") || text.contains("; time unknown: "),
            "{systems:?}: {text}"
        );
    }
}

/// Starts `run` on a guest alone, its work directory `work`, and waits
/// (up to 10 minutes) until the guest starts an item: stderr says
/// `cloud: socket …`. The child, and what stderr said so far.
fn run_in_guest(work: &std::path::Path, out: &std::path::Path) -> (common::Child, String) {
    use std::io::BufRead;
    let image = kernel("cloud-amd64");
    let mut cmd = common::bin();
    cmd.args(["run", "socket", "bind", "--max", "3000", "--runs", "5"])
        .arg("--system")
        .arg(format!(
            "cloud=kernel:{},memory=1G,accel=tcg",
            image.display()
        ))
        .args(["--guest-clock", "time"])
        .arg("--guest-bin")
        .arg(static_binary())
        .arg("--workdir")
        .arg(work)
        .arg("--out")
        .arg(out)
        .stderr(std::process::Stdio::piped());
    let mut child = common::Child(cmd.spawn().unwrap());
    let err = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = String::new();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while !said.contains("cloud: socket …") {
        let left = end.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(l) => said.push_str(&(l + "\n")),
            Err(_) => panic!("the guest never measured: {said}"),
        }
    }
    (child, said)
}

/// Waits (up to a minute) until no process names `dir`; those left.
fn gone(dir: &std::path::Path) -> Vec<u32> {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let left = common::processes_naming(dir.to_str().unwrap());
        if left.is_empty() || std::time::Instant::now() > end {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

#[test]
fn a_guest_goes_with_scalebench_on_interrupt_and_on_kill() {
    let t = tempfile::tempdir().unwrap();
    // ^C: the run stops, the guest is killed and reaped before the exit,
    // the result file is kept.
    let work = t.path().join("w1");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("int.json");
    let (mut child, said) = run_in_guest(&work, &out);
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new(),
        "QEMU and virtiofsd reaped before the exit"
    );
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
    let doc = common::load(&out);
    assert_eq!(doc["label"], "cloud");
    assert_eq!(doc["complete"], false);
    // kill -9: QEMU and virtiofsd die with scalebench; the next run in
    // the same work directory sweeps what was left.
    let work = t.path().join("w2");
    std::fs::create_dir(&work).unwrap();
    let (mut child, _) = run_in_guest(&work, &t.path().join("kill.json"));
    child.0.kill().unwrap();
    child.0.wait().unwrap();
    assert_eq!(gone(&work), Vec::<u32>::new(), "QEMU died with scalebench");
    let o = common::bin()
        .args(["run", "socket", "--max", "10", "--runs", "1", "--no-report"])
        .arg("--workdir")
        .arg(&work)
        .arg("--out")
        .arg(t.path().join("after.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
    let left = virtiofsd_pid_files(&work);
    assert!(left.is_empty(), "{left:?}");
}

/// A guest that could not boot fetches nothing: a `--guest-bin` that is
/// not static (or missing) is refused by name before a Debian kernel is
/// looked for, and the kernel cache is never made.
#[test]
fn a_guest_binary_that_is_not_static_is_refused_before_any_kernel_is_fetched() {
    let t = tempfile::tempdir().unwrap();
    let cache = t.path().join("cache");
    std::fs::create_dir(t.path().join("work")).unwrap();
    for (bin, says) in [
        (
            PathBuf::from(env!("CARGO_BIN_EXE_scalebench")),
            "is no static executable",
        ),
        (t.path().join("missing"), "--guest-bin "),
    ] {
        let o = common::bin()
            .args(["run", "socket", "--max", "10", "--runs", "1"])
            .args(["--system", "g=kernel:debian:6.1", "--guest-bin"])
            .arg(&bin)
            .arg("--workdir")
            .arg(t.path().join("work"))
            .arg("-o")
            .arg(t.path().join("r.json"))
            .env("SCALEBENCH_KERNEL_CACHE", &cache)
            .output()
            .unwrap();
        let stderr = common::text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("--guest-bin {}", bin.display())) && stderr.contains(says),
            "{stderr}"
        );
        assert!(!stderr.contains("reading"), "{stderr}");
        assert!(!cache.exists(), "{stderr}");
    }
}

/// A Debian disk image made as a machine that never ran these tests
/// makes one: by `scripts/debian-image` into `dir/new/image.img` (a
/// directory that does not exist yet) with its package cache in
/// `dir/cache` (nor that), the packages downloaded from Debian's archive.
/// So every run of the tests proves the first run, not a cache an earlier
/// one left. The image and its key.
fn fresh_image(dir: &std::path::Path) -> (PathBuf, PathBuf) {
    let image = dir.join("new/image.img");
    let cache = dir.join("cache");
    assert!(!image.parent().unwrap().exists() && !cache.exists());
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/debian-image");
    let o = std::process::Command::new(script)
        .args(["--no-bin", "--size", "2G"])
        .arg(&image)
        .env("SB_IMAGE_CACHE", &cache)
        .output()
        .expect("scripts/debian-image runs");
    assert!(
        o.status.success(),
        "scripts/debian-image into fresh directories failed:\n{}",
        common::text(&o.stderr)
    );
    // The packages stayed in the cache it made; nothing else was left
    // beside the image.
    let kept: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        kept.len() == 1 && kept[0].starts_with("bookworm-") && kept[0].ends_with(".tgz"),
        "{kept:?}"
    );
    let mut beside: Vec<String> = std::fs::read_dir(image.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    beside.sort();
    assert_eq!(beside, ["image.img", "image.img.key", "image.img.key.pub"]);
    let key = image.with_extension("img.key");
    (image, key)
}

#[test]
fn a_disk_image_boots_and_runs_the_plan_over_ssh_and_is_left_unchanged() {
    let t = tempfile::tempdir().unwrap();
    let (image, key) = fresh_image(t.path());
    let before = std::fs::metadata(&image).unwrap().modified().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let o = common::bin()
        .args(["run", "socket", "--max", "30", "--runs", "1"])
        .args(["--guest-clock", "time"])
        .arg("--system")
        .arg(format!(
            "deb=image:{},ssh=root,key={},memory=1G",
            image.display(),
            key.display()
        ))
        .arg("--workdir")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let doc = common::load(&out);
    common::assert_valid(&doc);
    assert_eq!(doc["label"], "deb");
    assert_eq!(
        doc["system"]["hostname"], "sbimage",
        "the image's own record"
    );
    assert_eq!(doc["benchmarks"][0]["status"], "ok", "{stderr}");
    let kind = doc["system"]["virtualization"]["kind"].as_str().unwrap();
    assert!(kind == "tcg" || kind == "kvm", "{doc}");
    // Nothing left, and the image as it was (QEMU wrote to an overlay).
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new()
    );
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
    assert_eq!(
        std::fs::metadata(&image).unwrap().modified().unwrap(),
        before
    );
}

/// Each run's median cost of each series of a result file: series name,
/// run medians.
fn run_medians(doc: &serde_json::Value) -> Vec<(String, Vec<u64>)> {
    doc["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            let medians = b["runs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    let mut v: Vec<u64> = r["samples"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|s| s[1].as_u64().unwrap())
                        .collect();
                    v.sort_unstable();
                    v[v.len() / 2]
                })
                .collect();
            (b["series"].as_str().unwrap().to_string(), medians)
        })
        .collect()
}

#[test]
fn two_guests_of_one_kernel_counting_instructions_agree_exactly() {
    let image = kernel("cloud-amd64");
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("r.json");
    let spec = |name: &str| format!("{name}=kernel:{},memory=1G,accel=tcg", image.display());
    let before = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let o = common::bin()
        .args(["run", "socket", "bind", "--max", "100", "--runs", "2"])
        .args(["--system", &spec("a"), "--system", &spec("b")])
        .arg("--guest-bin")
        .arg(static_binary())
        .args(["--no-report", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let a = common::load(&t.path().join("r-a.json"));
    let b = common::load(&t.path().join("r-b.json"));
    for doc in [&a, &b] {
        let v = &doc["system"]["virtualization"];
        // accel=tcg: emulated wherever it runs, so its clock can count.
        assert_eq!(v["kind"], "tcg", "{v}");
        assert_eq!(v["reason"], "accel=tcg: as accel= asked", "{v}");
        assert_eq!(
            (&v["clock"], &v["icount_shift"]),
            (&"instructions".into(), &0.into()),
            "{v}"
        );
        assert_eq!(v["vcpu_pins"].as_array().unwrap().len(), 1, "one vCPU: {v}");
        // Booted without address space randomization, and recorded so.
        let cmdline = doc["system"]["tuning"]["kernel_cmdline"].as_str().unwrap();
        assert!(
            cmdline.split_whitespace().any(|w| w == "norandmaps"),
            "{cmdline}"
        );
        // Booted at a fixed time, so that its boot draws the secrets the
        // other's does; then set to this machine's time before it measured.
        assert_eq!(v["rtc_base"], "2026-01-01T00:00:00", "{v}");
        for run in doc["benchmarks"][0]["runs"].as_array().unwrap() {
            let started = run["started"].as_str().unwrap();
            assert!(started >= before.as_str(), "{started} before {before}");
        }
        // Judged here as they came (the guest leaves its verdicts to the
        // asker), and kept: the report reads them, judging nothing.
        for b in doc["benchmarks"].as_array().unwrap() {
            let v = &b["verdict"];
            assert!(v["verdict"]["class"].is_string(), "{}: {v}", b["series"]);
        }
    }
    // Named apart, though not by their command lines (which a kernel
    // mixes into those secrets): the name comes in the RAM disk.
    assert_eq!(
        (&a["system"]["hostname"], &b["system"]["hostname"]),
        (&"a".into(), &"b".into())
    );
    assert_eq!(
        a["system"]["tuning"]["kernel_cmdline"],
        b["system"]["tuning"]["kernel_cmdline"]
    );
    // The same kernel counts the same instructions: run by run, guest by
    // guest, within 0.5 % (here: exactly).
    let (ma, mb) = (run_medians(&a), run_medians(&b));
    assert_eq!(ma.len(), 2, "{ma:?}");
    for ((sa, ra), (sb, rb)) in ma.iter().zip(&mb) {
        assert_eq!(sa, sb);
        let all: Vec<u64> = ra.iter().chain(rb).copied().collect();
        let (lo, hi) = (*all.iter().min().unwrap(), *all.iter().max().unwrap());
        assert!(
            (hi - lo) as f64 <= 0.005 * lo as f64,
            "{sa}: run medians {ra:?} and {rb:?} differ by more than 0.5 %"
        );
    }
    // And the report says what its figures count.
    let r = common::bin()
        .arg("report")
        .arg(t.path().join("r-a.json"))
        .output()
        .unwrap();
    let text = common::text(&r.stdout);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(
            "counting instructions (QEMU's -icount): its costs are instructions the guest executed"
        ),
        "{text}"
    );
    // In instructions, in the table and the words.
    assert!(words.contains(" ins† → "), "{text}");
    assert!(words.contains(" instr at n = "), "{text}");
}
