//! An sshd in each namespace of a test bed (`testbed up --sshd`), for
//! running scalebench on test hosts over ssh as on real ones.
//!
//! Everything it uses lives in the test bed's directory: one host key
//! (`ssh/host_key`, made by `ssh-keygen`, shared by the hosts), a client
//! key (`ssh/client_key`) whose public half is the only entry of
//! `ssh/authorized_keys`, a `ssh/known_hosts` naming every address of the
//! test bed with the host key, and for each host `ssh/HOST/sshd_config`,
//! its PID file and its log. sshd listens on port 22 of every address of
//! its namespace; root may log in with the client key only.
//!
//! sshd insists on its privilege separation directory (`/run/sshd` on
//! Debian), which a machine without a running sshd lacks: instead of
//! making it in the machine's /run, each sshd starts in the private mount
//! namespace `ip netns exec` gives it, with a small tmpfs over /run that
//! holds an empty `/run/sshd` — gone with the sshd, invisible outside.
//!
//! sshd runs in the foreground (`-D`) of a session of its own, not tied
//! to the `up` that started it, so that it outlives it; `down` ends it by
//! the PID recorded, after checking that the process is this sshd (its
//! command line names this config file, and it lives in the namespace
//! made here), together with the sessions it started.

use super::run;
use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The ssh keys of a test bed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SshFiles {
    /// The hosts' private key.
    pub host_key: PathBuf,
    /// The client's private key (its public half is authorised).
    pub client_key: PathBuf,
    /// The one authorised key.
    pub authorized_keys: PathBuf,
    /// Every address of the test bed with the host key, for ssh's
    /// `UserKnownHostsFile`.
    pub known_hosts: PathBuf,
    /// An ssh client configuration using these (`ssh -F`, `run
    /// --ssh-config`): root, the client key only, these known hosts.
    #[serde(default)]
    pub config: PathBuf,
}

/// One host's sshd.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sshd {
    /// Its configuration file.
    pub config: PathBuf,
    /// Its PID file.
    pub pid_file: PathBuf,
    /// Its log.
    pub log: PathBuf,
    /// The port it listens on, on every address of its namespace.
    pub port: u16,
    /// Its PID once started.
    pub pid: Option<u32>,
}

/// The sshd program: `/usr/sbin/sshd` or the like.
pub fn find_sshd() -> anyhow::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["/usr/sbin", "/usr/local/sbin", "/sbin"]
        .iter()
        .map(PathBuf::from)
        .chain(std::env::split_paths(&path))
        .map(|d| d.join("sshd"))
        .find(|p| p.is_file())
        .ok_or_else(|| anyhow!("--sshd: no sshd found (Debian: apt-get install openssh-server)"))
}

/// Makes the keys of the test bed `name` in `dir/ssh`, `addrs` being every
/// address its hosts have.
pub fn keys(dir: &Path, name: &str, addrs: &[Ipv4Addr]) -> anyhow::Result<SshFiles> {
    let ssh = dir.join("ssh");
    std::fs::create_dir_all(&ssh).with_context(|| format!("making {}", ssh.display()))?;
    let f = SshFiles {
        host_key: ssh.join("host_key"),
        client_key: ssh.join("client_key"),
        authorized_keys: ssh.join("authorized_keys"),
        known_hosts: ssh.join("known_hosts"),
        config: ssh.join("config"),
    };
    for (key, what) in [(&f.host_key, "host"), (&f.client_key, "client")] {
        run(
            Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", ""])
                .arg("-C")
                .arg(format!("scalebench test bed {name} {what} key"))
                .arg("-f")
                .arg(key),
            "ssh-keygen",
        )?;
    }
    let public = |k: &Path| -> anyhow::Result<String> {
        let p = k.with_extension("pub");
        Ok(std::fs::read_to_string(&p)
            .with_context(|| format!("reading {}", p.display()))?
            .trim()
            .to_string())
    };
    std::fs::write(&f.authorized_keys, format!("{}\n", public(&f.client_key)?))?;
    let host = public(&f.host_key)?;
    let mut known = String::new();
    if !addrs.is_empty() {
        let list: Vec<String> = addrs.iter().map(|a| a.to_string()).collect();
        known = format!("{} {}\n", list.join(","), host);
    }
    std::fs::write(&f.known_hosts, known)?;
    std::fs::write(
        &f.config,
        format!(
            "# scalebench test bed {name}: ssh -F {config} ADDRESS\n\
             Host *\n\
             \x20 User root\n\
             \x20 IdentityFile {key}\n\
             \x20 IdentitiesOnly yes\n\
             \x20 UserKnownHostsFile {known}\n\
             \x20 StrictHostKeyChecking yes\n\
             \x20 BatchMode yes\n",
            config = f.config.display(),
            key = quoted(&f.client_key),
            known = quoted(&f.known_hosts),
        ),
    )?;
    Ok(f)
}

/// A path in a configuration file, quoted.
fn quoted(p: &Path) -> String {
    format!("\"{}\"", p.display())
}

/// Writes host `host`'s sshd configuration (in `dir/ssh/HOST`). A
/// session's `HOME` is `dir/ssh/HOST/home`, not root's: the shell sshd
/// starts for each command reads no dotfile of the machine's (a `.bashrc`
/// that takes a lock, as pyenv's does, and a session killed while it
/// holds it, would slow every later login by the lock's timeout), and
/// what a session leaves in its home stays in the test bed.
pub fn configure(dir: &Path, name: &str, host: &str, f: &SshFiles) -> anyhow::Result<Sshd> {
    let d = dir.join("ssh").join(host);
    let home = d.join("home");
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&home)
            .with_context(|| format!("making {}", home.display()))?;
    }
    let s = Sshd {
        config: d.join("sshd_config"),
        pid_file: d.join("sshd.pid"),
        log: d.join("sshd.log"),
        port: 22,
        pid: None,
    };
    let text = format!(
        "# scalebench test bed {name}, host {host}: everything this sshd uses is under {dir}\n\
         ListenAddress 0.0.0.0:{port}\n\
         HostKey {host_key}\n\
         PidFile {pid_file}\n\
         AuthorizedKeysFile {authorized}\n\
         PermitRootLogin prohibit-password\n\
         PubkeyAuthentication yes\n\
         PasswordAuthentication no\n\
         KbdInteractiveAuthentication no\n\
         UsePAM no\n\
         StrictModes no\n\
         PrintMotd no\n\
         UseDNS no\n\
         MaxStartups 100:30:200\n\
         ClientAliveInterval 5\n\
         ClientAliveCountMax 3\n\
         SetEnv \"HOME={home}\"\n\
         Subsystem sftp internal-sftp\n",
        dir = dir.display(),
        home = home.display(),
        port = s.port,
        host_key = quoted(&f.host_key),
        pid_file = quoted(&s.pid_file),
        authorized = quoted(&f.authorized_keys),
    );
    std::fs::write(&s.config, text).with_context(|| format!("writing {}", s.config.display()))?;
    Ok(s)
}

/// The shell that starts sshd in the namespace: a tmpfs over /run in the
/// private mount namespace of `ip netns exec`, `/run/sshd` in it, then
/// sshd in place of the shell (same PID).
const START: &str = "mount -t tmpfs -o mode=0755,size=1m scalebench-sshd /run && mkdir -m 0755 /run/sshd && exec \"$0\" -D -f \"$1\" -E \"$2\"";

/// Starts `s` in `netns` and waits (up to 10 s) until it has written its
/// PID file, which sshd does once it listens; `s.pid` is set as soon as
/// it runs.
pub fn start(bin: &Path, netns: &str, s: &mut Sshd) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", netns, "sh", "-c", START])
        .arg(bin)
        .arg(&s.config)
        .arg(&s.log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe; a session of its own keeps the
    // terminal's ^C from it and lets it outlive `up`.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting sshd in {netns}"))?;
    let pid = child.id();
    s.pid = Some(pid);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let written = std::fs::read_to_string(&s.pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if written == Some(pid) {
            return Ok(());
        }
        if let Ok(Some(st)) = child.try_wait() {
            let log = std::fs::read_to_string(&s.log).unwrap_or_default();
            s.pid = None;
            bail!(
                "sshd in {netns} ended at once ({st}): {}",
                log.lines().rev().take(3).collect::<Vec<_>>().join(" / ")
            );
        }
        if Instant::now() > deadline {
            bail!(
                "sshd in {netns} did not write {} in 10 s",
                s.pid_file.display()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The PIDs this sshd may have: the one recorded and its PID file's.
fn candidates(s: &Sshd) -> Vec<u32> {
    let mut v: Vec<u32> = s.pid.into_iter().collect();
    if let Some(p) = std::fs::read_to_string(&s.pid_file)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        && !v.contains(&p)
    {
        v.push(p);
    }
    v
}

/// Whether `pid` is this sshd: alive, named sshd, its command line naming
/// this config file, and (when known) in namespace `inode`.
fn is_ours(pid: u32, s: &Sshd, inode: Option<u64>) -> bool {
    if pid <= 1 || !crate::sys::process_alive(pid) {
        return false;
    }
    use crate::sys::procs;
    let comm = procs::comm(pid).unwrap_or_default();
    let cmdline = procs::cmdline(pid).unwrap_or_default();
    let in_ns = inode.is_none_or(|i| procs::netns_inode(pid) == Some(i));
    comm == "sshd" && cmdline.contains(&*s.config.to_string_lossy()) && in_ns
}

/// The PID of this sshd when it runs.
pub fn alive(s: &Sshd, inode: Option<u64>) -> Option<u32> {
    candidates(s).into_iter().find(|&p| is_ours(p, s, inode))
}

/// Ends this sshd and the sessions it started, by PID: SIGTERM to sshd,
/// SIGKILL to its sessions, SIGKILL to whatever is left after 3 s. Reaps
/// them where they are this process's children. What it did, in words.
pub fn stop(s: &Sshd, inode: Option<u64>) -> Vec<String> {
    let mut notes = Vec::new();
    for pid in candidates(s) {
        if !is_ours(pid, s, inode) {
            continue;
        }
        let kids = crate::sys::procs::descendants(pid);
        // SAFETY: signalling processes checked above to be ours.
        unsafe {
            for &k in &kids {
                libc::kill(k as i32, libc::SIGKILL);
            }
            libc::kill(pid as i32, libc::SIGTERM);
        }
        let all: Vec<u32> = std::iter::once(pid).chain(kids.iter().copied()).collect();
        let deadline = Instant::now() + Duration::from_secs(3);
        loop {
            for &p in &all {
                // SAFETY: reaping our own children, if these are.
                unsafe { libc::waitpid(p as i32, std::ptr::null_mut(), libc::WNOHANG) };
            }
            let left: Vec<u32> = all
                .iter()
                .copied()
                .filter(|&p| crate::sys::process_alive(p))
                .collect();
            if left.is_empty() {
                break;
            }
            if Instant::now() > deadline {
                for p in left {
                    // SAFETY: as above.
                    unsafe { libc::kill(p as i32, libc::SIGKILL) };
                }
                std::thread::sleep(Duration::from_millis(50));
                for &p in &all {
                    // SAFETY: as above.
                    unsafe { libc::waitpid(p as i32, std::ptr::null_mut(), libc::WNOHANG) };
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        notes.push(format!(
            "sshd {pid} stopped{}",
            if kids.is_empty() {
                String::new()
            } else {
                format!(" with {} process(es) of its sessions", kids.len())
            }
        ));
    }
    notes
}
