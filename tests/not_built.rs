//! Tests that are not built on every system say so by name. A file of
//! this directory that starts with `#![cfg(…)]`, or a test under its own
//! `#[cfg(…)]`, is compiled out elsewhere, and `cargo test` there would
//! pass without a word about it. For each of them this file has a test
//! that is built exactly where that one is not, and fails naming the file
//! (and test), the system, and what cannot run there: on FreeBSD `cargo
//! test` says `not built for this system (freebsd x86_64): tests/hosts.rs
//! …` instead of passing. Running the rest there is an explicit choice:
//! `cargo test -- --skip not_built_here` (docs/porting.md).
//!
//! [`every_gated_test_is_named_here`] runs everywhere and holds the list
//! to the files: a gate added without its line here fails it.

/// The failure of a test that is not built here.
// Unused where every gated test is built (Linux on x86_64).
#[allow(dead_code)]
fn not_built(what: &str, why: &str) -> ! {
    panic!(
        "not built for this system ({} {}): {what} — {why}; see docs/porting.md",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// For each gated file or test: a test built where it is not (its `cfg`
/// negated), failing by name; and [`GATED`], the list of them all.
macro_rules! gated {
    ($($name:ident: $file:literal $(, $test:literal)? if [$($cfg:tt)*] => $why:literal;)*) => {
        $(
            #[cfg(not($($cfg)*))]
            #[test]
            fn $name() {
                not_built(
                    concat!("tests/", $file $(, " ", $test)?),
                    $why,
                );
            }
        )*

        /// Every gated file or test: file, the test (empty for a whole
        /// file), the condition it is built under, as written in its `cfg`.
        const GATED: &[(&str, &str, &str)] = &[
            $(($file, concat!("" $(, $test)?), stringify!($($cfg)*)),)*
        ];
    };
}

gated! {
    not_built_here_ansible: "ansible.rs" if [all(target_os = "linux", target_arch = "x86_64")] =>
        "the Ansible collection on a test bed of three namespace hosts with sshd (Linux's namespaces), the static x86_64 musl build copied to them";
    not_built_here_guests: "guests.rs" if [all(target_os = "linux", target_arch = "x86_64")] =>
        "another Linux kernel booted in QEMU with the static x86_64 musl scalebench as its init (`__boot`, `run --system NAME=kernel:…`): kernel: guests are Linux on x86_64 only";
    not_built_here_debian_kernels: "debian_kernels.rs" if [all(target_os = "linux", target_arch = "x86_64")] =>
        "kernels by version (`kernel:debian:VERSION`, `scalebench kernels`): Debian's amd64 kernels fetched with apt-get, dpkg-deb and depmod from a signed archive and booted in QEMU with the static x86_64 musl scalebench";
    not_built_here_hosts: "hosts.rs" if [target_os = "linux"] =>
        "`run --host` and `--system NAME=ssh:…` against hosts of a test bed (network namespaces with an sshd in each) and what they leave, read from /proc: network namespaces are Linux's";
    not_built_here_mail: "mail.rs" if [target_os = "linux"] =>
        "the mail workload, `smtp-send` and `smtp-sink` against Postfix's smtp-source and smtp-sink, with processes and descriptors counted through /proc";
    not_built_here_net: "net.rs" if [target_os = "linux"] =>
        "the benchmark server (`__responder`) under each event backend running out of descriptors and recovering, its descriptors read from /proc";
    not_built_here_pgbench: "pgbench.rs" if [target_os = "linux"] =>
        "the pgbench workload against a throwaway PostgreSQL cluster, and that no process, file or shared memory segment is left (found through /proc)";
    not_built_here_reference: "reference.rs" if [target_os = "linux"] =>
        "the reference C programs of reference/ built with gcc and run: limitsrv is Linux's (epoll, accept4, prctl), and what they leave is read from /proc";
    not_built_here_serve_abuse: "serve_abuse.rs" if [target_os = "linux"] =>
        "`serve` under abuse (slowloris, pipelining, huge heads, a descriptor storm, vanishing clients), which reads /proc and Linux's thread ids";
    not_built_here_shortconn: "shortconn.rs" if [target_os = "linux"] =>
        "`http-shortconn` with 30 000 connections at once, proven held at once by counting the load processes' sockets in /proc";
    not_built_here_sigkill: "sigkill.rs" if [target_os = "linux"] =>
        "kill -9 in the middle of fork, connect, HTTP, mail, fs on a loop device, --why with perf and pgbench leaves nothing: sessions read from /proc, losetup, mkfs.ext4, perf";
    not_built_here_signals: "signals.rs" if [target_os = "linux"] =>
        "two stop signals at random points of a run under a tuning profile (Linux sysctls kernel.msgmax, kernel.msgmnb), of pgbench and of the mail workload skip nothing, checked through /proc";
    not_built_here_static_build: "static_build.rs" if [all(target_os = "linux", target_arch = "x86_64")] =>
        "the static x86_64-unknown-linux-musl build carries its fork helpers and runs `fork` and `fork-static`";
    not_built_here_sysrecord: "sysrecord.rs" if [target_os = "linux"] =>
        "the system record (--record-sysctl, steal time, network interfaces, filesystems) and sysinfo's cgroup and interface lines, checked against /proc and /sys";
    not_built_here_testbed: "testbed.rs" if [target_os = "linux"] =>
        "`testbed up|status|down` and the `forward` workload: network namespaces, veth links, tbf and an sshd in each are Linux's";
    not_built_here_tuning: "tuning.rs" if [target_os = "linux"] =>
        "tuning profiles applied and put back after success, SIGTERM and kill -9, through Linux sysctls (vm.swappiness, vm.dirty_*)";
    not_built_here_tsc_timer: "cli.rs", "tsc_timer_is_recorded" if [target_arch = "x86_64"] =>
        "`run --timer tsc`: the calibrated time stamp counter is x86_64's";
}

/// The gates written in the test files: (file, test or empty, condition
/// with its spaces removed). A file's gate is a `#![cfg(…)]` line; a
/// test's is a `#[cfg(…)]` line among the attribute lines right above its
/// `fn`, one of which is `#[test]`; a module's (`mod NAME`, its tests
/// gone with it) is a `#[cfg(…)]` line above it. A gate must be written on
/// one line, or the reader would miss it: it says so.
fn gates_in_files() -> Vec<(String, String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    let cfg_of = |line: &str, open: &str| -> Option<String> {
        let rest = line.trim().strip_prefix(open)?;
        let inner = rest.strip_suffix(")]").unwrap_or_else(|| {
            panic!(
                "write `{}` on one line: tests/not_built.rs reads gates line by line",
                line.trim()
            )
        });
        Some(inner.split_whitespace().collect())
    };
    let mut out = Vec::new();
    for path in files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if let Some(c) = cfg_of(l, "#![cfg(") {
                out.push((file.clone(), String::new(), c));
                continue;
            }
            let Some(c) = cfg_of(l, "#[cfg(") else {
                continue;
            };
            // The attribute lines around it, then the item they belong to.
            let attrs = lines[i + 1..]
                .iter()
                .take_while(|x| x.trim_start().starts_with("#["));
            let before = lines[..i]
                .iter()
                .rev()
                .take_while(|x| x.trim_start().starts_with("#["));
            let is_test = attrs.chain(before).any(|x| x.trim() == "#[test]");
            let item = lines[i + 1..]
                .iter()
                .find(|x| !x.trim_start().starts_with("#["));
            let item = item.map(|x| x.trim_start()).unwrap_or("");
            if let Some(m) = item.strip_prefix("mod ") {
                let name = m.trim_end_matches([';', '{', ' ']);
                out.push((file.clone(), format!("mod {name}"), c));
            } else if let Some(f) = item.strip_prefix("fn ").filter(|_| is_test) {
                let name = f.split('(').next().unwrap_or(f);
                out.push((file.clone(), name.to_string(), c));
            }
        }
    }
    out
}

#[test]
fn every_gated_test_is_named_here() {
    let listed: Vec<(String, String, String)> = GATED
        .iter()
        .map(|(f, t, c)| (f.to_string(), t.to_string(), c.split_whitespace().collect()))
        .collect();
    let found = gates_in_files();
    // This file's own gates are the answers, not the questions.
    let found: Vec<_> = found
        .into_iter()
        .filter(|(f, _, _)| f != "not_built.rs")
        .collect();
    let label = |(file, test, _): &(String, String, String)| {
        format!(
            "tests/{file}{}{test}",
            if test.is_empty() { "" } else { " " }
        )
    };
    for g in &found {
        assert!(
            listed.contains(g),
            "{} is built only if {} and not named in tests/not_built.rs (with that condition)",
            label(g),
            g.2
        );
    }
    for g in &listed {
        assert!(
            found.contains(g),
            "tests/not_built.rs names {} as built only if {}, which the file does not say",
            label(g),
            g.2
        );
    }
    // The reader found the gates this file was written for.
    assert!(found.len() >= 14, "{found:?}");
}
