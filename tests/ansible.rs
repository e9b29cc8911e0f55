//! The Ansible collection (deploy/ansible) as a lab would use it: a test
//! bed of three namespace hosts with sshd, a PostgreSQL store on the hub
//! over TLS with the guide's three roles, `ansible-playbook` from a
//! virtual environment this test makes (`pip install ansible-core`, so
//! every run proves a first one), the nightly playbook on all three at a
//! small size, then the dashboard from the reader role rendered in
//! Chromium: three systems and their runs, nothing left on the hosts.
//! Then the A/B playbook on one host under two profiles. Then again with
//! one host cut off mid-run: it is reported unreachable and the other two
//! land. Then on one host whose run is killed: reported failed, nothing
//! stored, nothing left. Then with the controller killed once every run
//! has started: every run still lands and cleans up after itself. Linux
//! only: the test bed's hosts are namespaces, the static build x86_64
//! musl.
#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use crate::hosts::Bed;
use crate::store_tls::{give_key, guide_sql, make_ca, make_server};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The hub's address on its first link: where the store listens.
const HUB: &str = "198.18.1.1";

/// A virtual environment with ansible-core, made in `dir`; its
/// ansible-playbook.
fn ansible(dir: &Path) -> PathBuf {
    let venv = dir.join("venv");
    common::cmd("python3", &["-m", "venv", venv.to_str().unwrap()]);
    let o = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--disable-pip-version-check",
            // The version tried here; a newer one is a change made on purpose.
            "ansible-core==2.19.14",
        ])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "pip install ansible-core (from PyPI) failed:\n{}",
        common::text(&o.stderr)
    );
    venv.join("bin/ansible-playbook")
}

/// A PostgreSQL server in the hub's namespace, on HUB:5432 with TLS and
/// its unix socket in `dir`; stopped (fast shutdown, then killed) when
/// dropped.
struct HubStore {
    server: Child,
    socket: PathBuf,
    log: PathBuf,
}

impl HubStore {
    fn start(bed: &Bed, dir: &Path, cert: &Path, key: &Path) -> HubStore {
        let pg = scalebench::workloads::pg::cluster::Bin::find()
            .expect("PostgreSQL is installed (scripts/test installs it)");
        let (data, socket, log) = (dir.join("data"), dir.join("sock"), dir.join("pg.log"));
        std::fs::create_dir_all(&socket).unwrap();
        std::fs::create_dir_all(&data).unwrap();
        for d in [dir, &data, &socket] {
            common::cmd("chown", &["postgres", d.to_str().unwrap()]);
        }
        let as_postgres = |program: PathBuf| {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        };
        let o = as_postgres(pg.tool("initdb"))
            .arg("-D")
            .arg(&data)
            .args([
                "-A",
                "trust",
                "-U",
                "scalebench",
                "-E",
                "UTF8",
                "--locale=C",
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "initdb: {}", common::text(&o.stderr));
        std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("pg_hba.conf"))
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, b"host all all 198.18.0.0/15 trust\n")
            })
            .unwrap();
        // ip and setpriv exec what they run: this child is the postmaster.
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &bed.netns("h1"), "setpriv"])
            .args([
                "--reuid=postgres",
                "--regid=postgres",
                "--init-groups",
                "--",
            ])
            .arg(pg.tool("postgres"))
            .arg("-D")
            .arg(&data);
        for (k, v) in [
            ("listen_addresses", HUB.to_string()),
            ("port", "5432".into()),
            ("unix_socket_directories", socket.display().to_string()),
            ("ssl", "on".into()),
            ("ssl_cert_file", cert.display().to_string()),
            ("ssl_key_file", key.display().to_string()),
            ("log_connections", "on".into()),
        ] {
            cmd.arg("-c").arg(format!("{k}={v}"));
        }
        let server = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let store = HubStore {
            server,
            socket,
            log,
        };
        let ready = Instant::now();
        while !Command::new(pg.tool("pg_isready"))
            .args(["-q", "-h"])
            .arg(&store.socket)
            .args(["-p", "5432"])
            .status()
            .is_ok_and(|s| s.success())
        {
            assert!(
                ready.elapsed() < Duration::from_secs(30),
                "the hub's PostgreSQL is not ready: {}",
                std::fs::read_to_string(&store.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        store
    }

    /// Runs `sql` as a script as the superuser, in database `db`.
    fn psql(&self, db: &str, sql: &str) {
        let pg = scalebench::workloads::pg::cluster::Bin::find().unwrap();
        crate::store_tls::psql(&pg, &self.socket, 5432, db, sql);
    }
}

impl Drop for HubStore {
    fn drop(&mut self) {
        // A fast shutdown; SIGKILL after 30 s.
        let pid = self.server.id() as i32;
        // SAFETY: kill of our own child by its PID.
        unsafe { libc::kill(pid, libc::SIGINT) };
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(30) {
            if let Ok(Some(_)) = self.server.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// A child killed and reaped when dropped (its whole process group: it
/// is started in a session of its own), unless waited for.
struct Reaped(Option<Child>);

impl Reaped {
    /// `cmd` started in a session of its own, its output kept when
    /// `keep_output` (else thrown away).
    fn spawn(mut cmd: Command, keep_output: bool) -> Reaped {
        common::in_new_session(&mut cmd);
        let out = || {
            if keep_output {
                Stdio::piped()
            } else {
                Stdio::null()
            }
        };
        Reaped(Some(cmd.stdout(out()).stderr(out()).spawn().unwrap()))
    }

    fn wait_with_output(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        if let Some(c) = self.0.as_mut() {
            // SAFETY: kill of our child's own process group, by its id.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
    }
}

/// The store's URL for `role`, verifying the server against `ca`.
fn url(role: &str, ca: &Path) -> String {
    format!(
        "postgres://{role}@{HUB}/scalebench?sslmode=verify-full&sslrootcert={}&connect_timeout=5",
        ca.display()
    )
}

/// Where the role makes its run directories on the hosts (they share
/// this machine's file system): the test's own, so that no other run of
/// it can leave anything there.
fn hosts_tmp(dir: &Path) -> PathBuf {
    dir.join("hosts-tmp")
}

/// What the role left in the hosts' temp directory.
fn left_on_hosts(dir: &Path) -> Vec<String> {
    std::fs::read_dir(hosts_tmp(dir))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("scalebench-ansible-h"))
        .collect()
}

/// Whether process `p` is host `h`'s `scalebench run` of the runs
/// labelled `h-suffix`: the only command of it naming its result file
/// after `-o`.
fn is_run(dir: &Path, h: &str, suffix: &str, p: u32) -> bool {
    let needle = format!(
        "-o\0{}/scalebench-ansible-{h}-{suffix}.",
        hosts_tmp(dir).display()
    );
    std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
        let c = common::text(&c);
        c.contains(&needle) && c.contains("/result.json")
    })
}

/// Whether host `h`'s `scalebench run` of the runs labelled `h-suffix`
/// is on.
fn running(dir: &Path, h: &str, suffix: &str) -> bool {
    common::processes_naming(&format!("scalebench-ansible-{h}-{suffix}."))
        .into_iter()
        .any(|p| is_run(dir, h, suffix, p))
}

/// Kills host `h`'s `scalebench run` of the runs labelled `h-suffix`
/// (SIGKILL) if it is on: by a pidfd opened before its command line is
/// checked, so that a PID used again meanwhile is never signalled.
/// Whether one was killed.
fn kill_run(dir: &Path, h: &str, suffix: &str) -> bool {
    for p in common::processes_naming(&format!("scalebench-ansible-{h}-{suffix}.")) {
        // SAFETY: pidfd_open of a PID, no memory passed.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, p, 0) };
        if fd < 0 {
            continue;
        }
        // SAFETY: the descriptor was just opened and is ours to own.
        let fd =
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) };
        if is_run(dir, h, suffix, p) {
            let fd = std::os::fd::AsRawFd::as_raw_fd(&fd);
            // SAFETY: a signal sent through our own pidfd, no memory passed.
            let r = unsafe {
                libc::syscall(libc::SYS_pidfd_send_signal, fd, libc::SIGKILL, 0usize, 0u32)
            };
            return r == 0;
        }
    }
    false
}

/// Waits until the role left nothing in the hosts' temp directory.
fn nothing_left_within(dir: &Path, limit: Duration) {
    let start = Instant::now();
    while !left_on_hosts(dir).is_empty() {
        assert!(
            start.elapsed() < limit,
            "left on the hosts: {:?}",
            left_on_hosts(dir)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What each part of the test works with.
struct Lab<'a> {
    /// The test's own directory.
    dir: &'a Path,
    /// The three hosts and their hub.
    bed: &'a Bed,
    /// `ansible-playbook` of the test's virtual environment.
    playbook: PathBuf,
    /// The store's CA certificate.
    ca: PathBuf,
}

impl Lab<'_> {
    /// `ansible-playbook` of the nightly playbook in the hub's namespace,
    /// every host running `socket` with `options`, labelled
    /// `HOST-SUFFIX`.
    fn nightly(&self, options: &[&str], suffix: &str) -> Command {
        let label = serde_json::json!({
            "scalebench_label": format!("{{{{ inventory_hostname }}}}-{suffix}"),
        });
        self.play("nightly.yml", options, label)
    }

    /// `ansible-playbook` of the collection's playbook `which` in the
    /// hub's namespace, every host of the inventory running `socket` with
    /// `options`, with `more` variables; Ansible's own files (control
    /// sockets, job files, temp) in the test's directory.
    fn play(&self, which: &str, options: &[&str], more: serde_json::Value) -> Command {
        let (dir, ca) = (self.dir, &self.ca);
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let inventory = dir.join("inventory.ini");
        std::fs::write(
            &inventory,
            format!(
                "[scalebench]\nh1 ansible_host=198.18.1.1\nh2 ansible_host=198.18.1.2\nh3 ansible_host=198.18.2.2\n\n[scalebench:vars]\nansible_user=root\nansible_ssh_common_args=-F {}\nansible_python_interpreter=/usr/bin/python3\n",
                self.bed.ssh_config().display()
            ),
        )
        .unwrap();
        let mut extra = serde_json::json!({
            "scalebench_store": url("scalebench_writer", ca),
            "scalebench_store_ca": ca,
            "scalebench_binary": crate::static_build::static_binary(),
            "scalebench_suite": "socket",
            "scalebench_options": options,
            // Each poll is a module run on the host (Python started
            // there and on the controller): every 3 s, not every second.
            "scalebench_poll_interval": 3,
            "scalebench_tmp": hosts_tmp(dir),
        });
        extra
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.bed.netns("h1")])
            .arg(&self.playbook)
            .arg("-i")
            .arg(&inventory)
            .arg(root.join("deploy/ansible/playbooks").join(which))
            .arg("-e")
            .arg(extra.to_string())
            .env("ANSIBLE_CONFIG", root.join("deploy/ansible/ansible.cfg"))
            .env("ANSIBLE_HOME", dir.join("home"))
            .env("ANSIBLE_ASYNC_DIR", dir.join("async"))
            .env("ANSIBLE_SSH_CONTROL_PATH_DIR", dir.join("cp"))
            .env("ANSIBLE_LOCAL_TEMP", dir.join("tmp"))
            .env("ANSIBLE_REMOTE_TEMP", dir.join("remote-tmp"))
            // One connection per host carries every task and poll, and
            // the next playbook's (with one per task, ssh and sshd were 16 %
            // of both CPUs during this test); it ends 15 s after its last use,
            // and the test closes what is left at its end. No
            // compression on a link within this machine.
            .env(
                "ANSIBLE_SSH_ARGS",
                "-o ControlMaster=auto -o ControlPersist=15s -o ServerAliveInterval=2 -o ServerAliveCountMax=3",
            );
        c
    }

    /// scalebench on h1 (the hub's namespace) with `args`.
    fn scalebench(&self, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.bed.netns("h1")])
            .arg(env!("CARGO_BIN_EXE_scalebench"))
            .args(args);
        c
    }

    /// The labels of the runs the reader lists.
    fn labels(&self) -> Vec<String> {
        let reader = url("scalebench_reader", &self.ca);
        let o = self
            .scalebench(&["results", "list", "--json", "--store", &reader])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::text(&o.stderr));
        let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut v: Vec<String> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["label"].as_str().unwrap_or_default().to_string())
            .collect();
        v.sort();
        v
    }
}

/// What `ansible-playbook` said: its standard output, then its errors.
fn output_of(o: &std::process::Output) -> String {
    format!("{}\n{}", common::text(&o.stdout), common::text(&o.stderr))
}

#[test]
fn the_nightly_playbook_runs_on_every_host_and_each_result_lands_over_tls() {
    let t = tempfile::tempdir().unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        // PostgreSQL's user reaches its directory and certificate in it.
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    }
    std::fs::create_dir(hosts_tmp(t.path())).unwrap();
    let bed = Bed::up("ansible");
    let playbook = ansible(t.path());
    let tls = t.path().join("tls");
    std::fs::create_dir(&tls).unwrap();
    let ca = make_ca(&tls, "ca");
    let (cert, key) = make_server(&tls, &ca, &format!("IP:{HUB}"));
    give_key(&key, &tls);
    let store = HubStore::start(&bed, &t.path().join("pg"), &cert, &key);
    store.psql("postgres", &guide_sql("-- scalebench roles"));
    let lab = Lab {
        dir: t.path(),
        bed: &bed,
        playbook,
        ca,
    };
    let owner = lab
        .scalebench(&[
            "results",
            "list",
            "--store",
            &url("scalebench_owner", &lab.ca),
        ])
        .output()
        .unwrap();
    assert!(owner.status.success(), "{}", common::text(&owner.stderr));
    store.psql("scalebench", &guide_sql("-- scalebench writer"));

    every_host_lands_over_tls(&lab, &store);
    the_reader_draws_the_dashboard(&lab);
    ab_on_one_host(&lab);
    a_host_cut_off(&lab);
    a_run_killed(&lab);
    the_controller_gone(&lab);
    close_connections(t.path());
    drop(store);
    drop(bed);
}

/// Asks every SSH connection the playbooks left open (ControlPersist) to
/// end now: `ssh -O exit` on each control socket in the test's directory.
fn close_connections(dir: &Path) {
    let Ok(sockets) = std::fs::read_dir(dir.join("cp")) else {
        return;
    };
    for s in sockets.flatten() {
        let o = Command::new("ssh")
            .arg("-o")
            .arg(format!("ControlPath={}", s.path().display()))
            .args(["-O", "exit", "closing"])
            .output()
            .unwrap();
        // A master that ended meanwhile has nothing to close.
        let said = common::text(&o.stderr);
        assert!(
            o.status.success()
                || said.contains("No such file")
                || said.contains("Connection refused"),
            "ssh -O exit: {said}"
        );
    }
}

/// Every host, in parallel: each result lands, over TLS, and nothing is
/// left on the hosts.
fn every_host_lands_over_tls(lab: &Lab, store: &HubStore) {
    let o = lab
        .nightly(&["--max", "200", "--runs", "1"], "lab")
        .output()
        .unwrap();
    let said = output_of(&o);
    assert!(o.status.success(), "{said}");
    for h in ["h1", "h2", "h3"] {
        assert!(
            said.lines()
                .any(|l| l.starts_with(h) && l.contains("unreachable=0") && l.contains("failed=0")),
            "{h} not ok in the recap:\n{said}"
        );
    }
    assert_eq!(lab.labels(), ["h1-lab", "h2-lab", "h3-lab"]);
    let log = std::fs::read_to_string(&store.log).unwrap();
    assert!(
        log.lines()
            .filter(|l| l.contains("user=scalebench_writer") && l.contains("SSL enabled"))
            .count()
            >= 3,
        "the writer's TLS connections are not in the server's log:\n{log}"
    );
    assert_eq!(left_on_hosts(lab.dir), Vec::<String>::new());
    let jobs = std::fs::read_dir(lab.dir.join("async"))
        .expect("Ansible's job directory, made by its async tasks")
        .count();
    assert_eq!(jobs, 0, "job status files left");
}

/// The dashboard, by the reader, in Chromium: three systems, their runs.
fn the_reader_draws_the_dashboard(lab: &Lab) {
    let site = lab.dir.join("site");
    let o = lab
        .scalebench(&[
            "dashboard",
            "--store",
            &url("scalebench_reader", &lab.ca),
            "-o",
        ])
        .arg(&site)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    let (dom, _) = crate::browser::headless(
        &site.join("index.html"),
        &lab.dir.join("chromium"),
        &["--dump-dom"],
    );
    for label in ["h1-lab", "h2-lab", "h3-lab"] {
        assert!(dom.contains(label), "{label} not on the rendered dashboard");
    }
    let pages = std::fs::read_dir(site.join("runs")).unwrap().count();
    assert_eq!(pages, 3, "a page per run");
}

/// The A/B playbook on h1: the suite under the default profile and under
/// one of the test's (a setting of h1's own namespace), both runs in the
/// store, compared and reported by the reader with the setting named; the
/// setting restored.
fn ab_on_one_host(lab: &Lab) {
    let somaxconn = || {
        let o = Command::new("ip")
            .args(["netns", "exec", &lab.bed.netns("h1")])
            .args(["cat", "/proc/sys/net/core/somaxconn"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::text(&o.stderr));
        common::text(&o.stdout).trim().to_string()
    };
    let before = somaxconn();
    let tuned = lab.dir.join("tuned.toml");
    let want = if before == "1000" { "1001" } else { "1000" };
    std::fs::write(
        &tuned,
        format!(
            "format = \"scalebench-profile/1\"\nname = \"ab-test\"\ndescription = \"a listen backlog of {want}\"\n\n[linux.sysctl]\n\"net.core.somaxconn\" = \"{want}\"\n"
        ),
    )
    .unwrap();
    let vars = serde_json::json!({
        "scalebench_hosts": "h1",
        "profile_a": "default",
        "profile_b": tuned,
    });
    let o = lab
        .play("ab.yml", &["--max", "200", "--runs", "1"], vars)
        .output()
        .unwrap();
    let said = output_of(&o);
    assert!(o.status.success(), "{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("h1") && l.contains("failed=0")),
        "{said}"
    );
    assert!(
        !said
            .lines()
            .any(|l| l.starts_with("h2") || l.starts_with("h3")),
        "{said}"
    );
    let landed = lab.labels();
    for l in ["h1-a", "h1-b"] {
        assert!(
            landed.contains(&l.to_string()),
            "{l} not stored: {landed:?}"
        );
    }
    assert_eq!(somaxconn(), before, "h1's setting not restored");
    // The pair compared, and reported side by side with the setting
    // among those that differ (the reader's).
    let by_reader = |what: &str| {
        let o = lab
            .scalebench(&[what, "--store", &url("scalebench_reader", &lab.ca)])
            .args(["label=h1-a latest", "label=h1-b latest"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{what}: {}", common::text(&o.stderr));
        common::text(&o.stdout)
    };
    assert!(by_reader("compare").contains("h1-a → h1-b"));
    let reported = by_reader("report");
    assert!(
        reported
            .lines()
            .any(|l| l.contains("net.core.somaxconn") && l.contains(want) && l.contains(&before)),
        "the profile's setting not among the settings that differ:\n{reported}"
    );
    assert_eq!(left_on_hosts(lab.dir), Vec::<String>::new());
}

/// h3 cut off from the hub once its run has started: reported unreachable;
/// h1 and h2 land.
fn a_host_cut_off(lab: &Lab) {
    let cmd = lab.nightly(&["--max", "10000", "--runs", "5"], "cut");
    // The playbook goes with the test if an assertion fails first.
    let playing = Reaped::spawn(cmd, true);
    let started = Instant::now();
    // Cut by a firewall in h3's namespace that drops everything (a link
    // set down would take h3's route to the hub with it for good).
    let nft = |rules: &str| {
        let o = Command::new("ip")
            .args(["netns", "exec", &lab.bed.netns("h3"), "nft", "-f", "-"])
            .stdin(Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                std::io::Write::write_all(c.stdin.as_mut().unwrap(), rules.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        assert!(o.status.success(), "nft: {}", common::text(&o.stderr));
    };
    // Its `run` (the only command of it naming its result file) is on.
    while !running(lab.dir, "h3", "cut") {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "h3's run never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    nft(
        "table inet sbcut {\n chain in { type filter hook input priority 0; policy drop; }\n chain out { type filter hook output priority 0; policy drop; }\n}\n",
    );
    let out = playing.wait_with_output();
    // h3's run ends on its own (its result not added: the hub is out of
    // reach) and its script removes its directory; only then is the cut
    // lifted, so that h3 cannot add its result late.
    nothing_left_within(lab.dir, Duration::from_secs(120));
    nft("delete table inet sbcut\n");
    let said = output_of(&out);
    assert_eq!(out.status.code(), Some(4), "unreachable hosts: 4\n{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("h3") && l.contains("unreachable=1")),
        "{said}"
    );
    let landed = lab.labels();
    assert!(
        landed.contains(&"h1-cut".to_string()) && landed.contains(&"h2-cut".to_string()),
        "{landed:?}"
    );
    assert!(!landed.contains(&"h3-cut".to_string()), "{landed:?}");
}

/// h2's run killed outright (SIGKILL) once it is on: h2 is reported failed
/// with the run's exit code; its script goes on, adds nothing (the file is
/// not finished) and removes its directory.
fn a_run_killed(lab: &Lab) {
    let vars = serde_json::json!({
        "scalebench_hosts": "h2",
        "scalebench_label": "{{ inventory_hostname }}-killed",
    });
    let cmd = lab.play("nightly.yml", &["--max", "10000", "--runs", "5"], vars);
    let playing = Reaped::spawn(cmd, true);
    let started = Instant::now();
    while !kill_run(lab.dir, "h2", "killed") {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "h2's run never seen on"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = playing.wait_with_output();
    let said = output_of(&out);
    assert_eq!(out.status.code(), Some(2), "a failed host: 2\n{said}");
    assert!(
        said.lines()
            .any(|l| l.starts_with("h2") && l.contains("unreachable=0") && l.contains("failed=1")),
        "h2 not reported failed:\n{said}"
    );
    assert!(
        said.contains("h2: the run ended with 137"),
        "h2's kill not named:\n{said}"
    );
    assert!(!lab.labels().contains(&"h2-killed".to_string()));
    nothing_left_within(lab.dir, Duration::from_secs(30));
}

/// The controller killed once every host's run is on: each run goes on,
/// adds its result and removes its directory.
fn the_controller_gone(lab: &Lab) {
    let cmd = lab.nightly(&["--max", "5000", "--runs", "3"], "gone");
    let playing = Reaped::spawn(cmd, false);
    // Each host's run seen on at least once (the hosts start and end at
    // their own pace: one may be done before the last begins).
    let started = Instant::now();
    let mut seen = std::collections::BTreeSet::new();
    while seen.len() < 3 {
        for h in ["h1", "h2", "h3"] {
            if running(lab.dir, h, "gone") {
                seen.insert(h);
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "not every host's run was seen on: {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(playing);
    let landed = Instant::now();
    while lab.labels().iter().filter(|l| l.ends_with("-gone")).count() < 3 {
        assert!(
            landed.elapsed() < Duration::from_secs(120),
            "the runs did not all land without their controller: {:?}",
            lab.labels()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    nothing_left_within(lab.dir, Duration::from_secs(30));
}
