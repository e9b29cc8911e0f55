//! Hosts reached over OpenSSH: one master connection per host
//! (`ControlMaster`, its socket in the run's work directory) that every
//! command of the run shares, a scratch directory on the host, and a
//! scalebench there that this one can drive ([`choose`]): the one on the
//! host's PATH (or named by `bin=`) when it is this very build or another
//! build of a compatible agent protocol (another OS, architecture or C
//! library), else this build copied over the connection into the scratch
//! directory when the host's OS and architecture are this build's. A
//! supervisor (`__host-exec`, see [`super::agent`]) holds the directory
//! for the run and removes it when the run closes the connection, however
//! that happens.

use super::agent::{self, Hello};
use crate::harness::reaper::{ChildGroup, run_bounded, run_bounded_with_input, run_to_end};
use anyhow::{Context, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where to ssh to: `[USER@]HOST[:PORT]` (an IPv6 literal in brackets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The user, if given (else ssh's default or its configuration's).
    pub user: Option<String>,
    /// The host name or address.
    pub host: String,
    /// The port, if given.
    pub port: Option<u16>,
}

impl std::str::FromStr for Target {
    type Err = String;

    fn from_str(s: &str) -> Result<Target, String> {
        let (user, rest) = match s.rsplit_once('@') {
            Some((u, r)) => (Some(u), r),
            None => (None, s),
        };
        if let Some(u) = user {
            if let Some((name, _)) = u.split_once(':') {
                return Err(format!(
                    "`{name}:…@`: a password cannot be given: ssh logs in with a key (ssh's agent, or --ssh-config naming one)"
                ));
            }
            if u.is_empty()
                || !u
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return Err(format!("`{u}` is not a user name"));
            }
        }
        // The host and port as every address is read.
        let hp = crate::values::host_port(rest)?;
        if hp.host.starts_with('-') {
            return Err(format!("`{}` is not a host name or address", hp.host));
        }
        if hp.port == Some(0) {
            return Err(format!("`{rest}`: port 0 is no ssh server's port"));
        }
        Ok(Target {
            user: user.map(String::from),
            host: hp.host,
            port: hp.port,
        })
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(u) = &self.user {
            write!(f, "{u}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            write!(f, "{}", self.host)?;
        }
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// Words quoted for the remote shell, joined.
pub fn quote(words: &[String]) -> anyhow::Result<String> {
    shlex::try_join(words.iter().map(String::as_str))
        .map_err(|e| anyhow!("cannot quote a command for ssh: {e}"))
}

/// An open connection to a host, with scalebench there.
pub struct Session {
    target: Target,
    config: Option<PathBuf>,
    control: PathBuf,
    master: Option<ChildGroup>,
    /// The scratch directory on the host (removed when the session closes).
    pub dir: String,
    /// The scalebench executable on the host.
    pub exe: String,
    /// How it got there, in words.
    pub binary: String,
    /// What it said of itself (`__hello`): which build runs there (boxed:
    /// a session is held in enums beside smaller things).
    pub hello: Option<Box<Hello>>,
    /// The supervisor holding `dir`.
    janitor: Option<super::Served>,
}

/// What a probe of the host found.
struct Probe {
    os: String,
    arch: String,
    found: Option<Found>,
}

/// A scalebench found on a host: on its PATH, or named by `bin=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its path there.
    pub path: String,
    /// Named by `bin=` (else found on the PATH).
    pub given: bool,
    /// What its `__hello` said, or why it said nothing useful.
    pub hello: Result<Hello, String>,
}

impl Found {
    /// The hello of the scalebench at `path` from how `PATH __hello`
    /// ended (`status`, the shell's: 127 not found, 126 not runnable) and
    /// what it printed.
    pub fn new(path: &str, given: bool, status: i32, out: &str) -> Found {
        let hello = match status {
            127 => Err("not found".to_string()),
            126 => Err(
                "cannot be run there (not executable, or built for another OS or architecture)"
                    .into(),
            ),
            0 if !out.trim().is_empty() => {
                Hello::parse(out).map_err(|e| format!("answers `__hello` with {e}"))
            }
            s => Err(format!(
                "says nothing to `__hello` (exit {s}): a build older than the agent protocol, or not scalebench"
            )),
        };
        Found {
            path: path.to_string(),
            given,
            hello,
        }
    }

    /// How it is named in messages: `/usr/bin/scalebench` or `bin=/opt/sb`.
    fn name(&self) -> String {
        if self.given {
            format!("bin={}", self.path)
        } else {
            self.path.clone()
        }
    }
}

/// Which scalebench a host runs, as [`choose`] decides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// The one found there, which said this hello.
    Use {
        /// Its path there.
        path: String,
        /// Its hello.
        hello: Hello,
    },
    /// This build, copied into the scratch directory.
    Copy,
}

/// Decides which scalebench runs on a host whose `uname -s` and `uname
/// -m` are `os` and `machine`, `found` being the one on its PATH or named
/// by `bin=`, this build having said `mine`:
///
/// 1. the one found, when it is this very build, or another build of a
///    compatible agent protocol ([`agent::compatible`]);
/// 2. else, unless it was named by `bin=`, a copy of this build when the
///    host's OS and architecture are this build's;
/// 3. else refused: the error says why, naming the protocol numbers.
pub fn choose(
    os: &str,
    machine: &str,
    found: Option<&Found>,
    mine: &Hello,
) -> Result<Choice, String> {
    if let Some(f) = found {
        match &f.hello {
            Ok(h) if mine.same_build(h) || agent::compatible(h) => {
                return Ok(Choice::Use {
                    path: f.path.clone(),
                    hello: h.clone(),
                });
            }
            _ if f.given => return Err(format!("{}: {}", f.name(), unusable(f))),
            _ => {}
        }
    }
    let my_os = mine.os.as_deref().unwrap_or("?");
    let my_arch = mine.arch.as_deref().unwrap_or("?");
    if same_platform(os, machine, my_os, my_arch) {
        return Ok(Choice::Copy);
    }
    Err(format!(
        "it runs {os} {machine} and this scalebench is built for {my_os} {my_arch}; {}: install a scalebench of agent protocol {} there (on its PATH, or name it with bin=PATH)",
        found.map_or("no scalebench is on its PATH".to_string(), |f| format!(
            "its {} {}",
            f.name(),
            unusable(f)
        )),
        mine.protocol
    ))
}

/// Why a scalebench found on a host cannot be driven, in words.
fn unusable(f: &Found) -> String {
    match &f.hello {
        Ok(h) => format!(
            "is scalebench {} speaking agent protocol {}; this scalebench ({}) speaks protocol {}",
            h.version.as_deref().unwrap_or("(version not said)"),
            h.protocol,
            env!("CARGO_PKG_VERSION"),
            agent::PROTOCOL
        ),
        Err(why) => why.clone(),
    }
}

impl Session {
    /// Connects to `target` (with ssh's configuration file `config` if
    /// given), makes a scratch directory there and makes sure this build
    /// runs there. The master connection's socket goes in `workdir`.
    pub fn open(target: &Target, config: Option<&Path>, workdir: &Path) -> anyhow::Result<Session> {
        Session::open_with(target, config, workdir, None)
    }

    /// [`Session::open`], with the host's scalebench at `bin` when given
    /// (a build for that host's OS, arch or C library, of a compatible
    /// agent protocol: see [`choose`]).
    pub fn open_with(
        target: &Target,
        config: Option<&Path>,
        workdir: &Path,
        bin: Option<&str>,
    ) -> anyhow::Result<Session> {
        let control = workdir.join(format!("ssh-{}", std::process::id()));
        if control.as_os_str().len() > 100 {
            bail!(
                "the work directory {} is too long a path for ssh's control socket (at most about 100 bytes in all): give a shorter --workdir",
                workdir.display()
            );
        }
        let mut s = Session {
            target: target.clone(),
            config: config.map(Path::to_path_buf),
            control,
            master: None,
            dir: String::new(),
            exe: String::new(),
            binary: String::new(),
            hello: None,
            janitor: None,
        };
        if let Some(b) = bin
            && (b.is_empty() || b.contains(['\n', '\r', '\0']))
        {
            bail!("bin={b:?}: not a path");
        }
        s.start_master()?;
        let probe = s.probe(bin)?;
        s.install(&probe)?;
        s.hold_dir()?;
        Ok(s)
    }

    /// `ssh` with the options every command of the session shares.
    fn base(&self, master: bool) -> Command {
        let mut c = Command::new("ssh");
        if let Some(f) = &self.config {
            c.arg("-F").arg(f);
        }
        c.args(["-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10"])
            .args(["-o", "ServerAliveInterval=2", "-o", "ServerAliveCountMax=5"])
            .arg("-o")
            .arg(format!("ControlPath={}", self.control.display()))
            .args(if master {
                ["-o", "ControlMaster=yes", "-o", "ControlPersist=no"]
            } else {
                ["-o", "ControlMaster=no", "-o", "LogLevel=ERROR"]
            });
        if let Some(p) = self.target.port {
            c.args(["-p", &p.to_string()]);
        }
        if let Some(u) = &self.target.user {
            c.args(["-l", u]);
        }
        c.arg(&self.target.host);
        c
    }

    /// `ssh … -- WORDS` over the master connection, the words quoted for
    /// the remote shell.
    pub fn command(&self, words: &[String]) -> anyhow::Result<Command> {
        let mut c = self.base(false);
        c.arg("--").arg(quote(words)?);
        Ok(c)
    }

    /// A shell script run by `sh` on the host (the login shell may be csh).
    fn script(&self, script: &str, args: &[String]) -> anyhow::Result<Command> {
        let mut words = vec!["sh".to_string(), "-c".into(), script.into(), "sh".into()];
        words.extend(args.iter().cloned());
        self.command(&words)
    }

    /// Starts the master connection and waits until it serves.
    fn start_master(&mut self) -> anyhow::Result<()> {
        let mut cmd = self.base(true);
        cmd.arg("-N")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut g = ChildGroup::spawn(&mut cmd)
            .map_err(|e| anyhow!("cannot run ssh (is the OpenSSH client installed?): {e}"))?;
        let start = Instant::now();
        loop {
            if let Ok(Some(st)) = g.child().try_wait() {
                let mut err = String::new();
                if let Some(e) = g.child().stderr.as_mut() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                bail!(
                    "ssh to {} failed ({st}): {}",
                    self.target,
                    last_line(&err).unwrap_or("no message")
                );
            }
            if self.control.exists() {
                let mut check = self.base(false);
                check.args(["-O", "check"]);
                if run_bounded(&mut check, Duration::from_secs(10))
                    .is_ok_and(|f| f.status.is_some_and(|s| s.success()))
                {
                    break;
                }
            }
            if start.elapsed() > Duration::from_secs(30) {
                bail!("ssh to {}: no connection after 30 s", self.target);
            }
            if crate::stop::interrupted() {
                bail!("interrupted");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Nothing reads its error output from here on: ssh must not block
        // on a full pipe.
        drop(g.child().stderr.take());
        self.master = Some(g);
        Ok(())
    }

    /// Runs `cmd` to its end (up to `limit`) and returns its standard
    /// output, or an error quoting its last line of error output.
    fn output(&self, cmd: &mut Command, what: &str, limit: Duration) -> anyhow::Result<String> {
        let f = run_bounded(cmd, limit).with_context(|| format!("ssh to {}", self.target))?;
        if f.status.is_some_and(|s| s.success()) {
            return Ok(f.stdout);
        }
        bail!(
            "{what} on {} failed{}: {}",
            self.target,
            if f.timed_out { " (timed out)" } else { "" },
            last_line(&f.stderr).unwrap_or("no message")
        )
    }

    /// The host's OS and architecture, a new scratch directory, and the
    /// scalebench at `bin` or on its PATH with its hello.
    fn probe(&mut self, bin: Option<&str>) -> anyhow::Result<Probe> {
        // The hello is read from a file of at most 2 KiB: a scalebench
        // printing without end fills no pipe here.
        let script = r#"uname -s && uname -m && d=$(mktemp -d "${TMPDIR:-/tmp}/scalebench-host.XXXXXX") && echo "$d" || exit 1
if [ -n "$1" ]; then p=$1; else p=$(command -v scalebench) || exit 0; fi
echo "$p"
"$p" __hello > "$d/hello" 2>/dev/null
echo "status $?"
head -c 2048 "$d/hello"
rm -f "$d/hello"
exit 0"#;
        let out = self.output(
            &mut self.script(script, &[bin.unwrap_or_default().to_string()])?,
            "probing",
            Duration::from_secs(30),
        )?;
        let mut lines = out.splitn(6, '\n');
        let mut next = || lines.next().map(str::trim);
        let (Some(os), Some(arch), Some(dir)) = (next(), next(), next()) else {
            bail!("probing {}: unexpected answer {out:?}", self.target);
        };
        if !dir.starts_with('/') {
            bail!("probing {}: no scratch directory ({dir:?})", self.target);
        }
        self.dir = dir.to_string();
        let (os, arch) = (os.to_string(), arch.to_string());
        let found = match (next(), next()) {
            (Some(path), Some(status)) if !path.is_empty() => {
                let status = status
                    .strip_prefix("status ")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(-1);
                Some(Found::new(
                    path,
                    bin.is_some(),
                    status,
                    lines.next().unwrap_or(""),
                ))
            }
            _ => None,
        };
        Ok(Probe { os, arch, found })
    }

    /// Uses the scalebench found on the host when this build can drive
    /// it, else copies this one into the scratch directory and checks that
    /// it runs there ([`choose`]).
    fn install(&mut self, p: &Probe) -> anyhow::Result<()> {
        let mine = Hello::mine();
        let choice = choose(&p.os, &p.arch, p.found.as_ref(), &mine)
            .map_err(|e| anyhow!("{}: {e}", self.target))?;
        if let Choice::Use { path, hello } = choice {
            let how = match (
                p.found.as_ref().is_some_and(|f| f.given),
                mine.same_build(&hello),
            ) {
                (false, true) => "the same build".to_string(),
                (true, true) => "bin=, the same build".to_string(),
                (false, false) => format!("another build: {}", hello.describe()),
                (true, false) => format!("bin=, another build: {}", hello.describe()),
            };
            self.binary = format!("{path} on the host ({how})");
            self.exe = path;
            self.hello = Some(Box::new(hello));
            return Ok(());
        }
        let local = std::env::current_exe().context("finding this executable to copy it")?;
        let file = std::fs::File::open(&local)
            .with_context(|| format!("reading {} to copy it", local.display()))?;
        let exe = format!("{}/scalebench", self.dir);
        let mut cmd = self.script(
            r#"cat > "$1" && chmod 700 "$1" && "$1" __hello"#,
            std::slice::from_ref(&exe),
        )?;
        let f = run_bounded_with_input(&mut cmd, file, Duration::from_secs(600))
            .with_context(|| format!("copying scalebench to {}", self.target))?;
        let said = Hello::parse(&f.stdout);
        if !f.status.is_some_and(|s| s.success())
            || !said.as_ref().is_ok_and(|h| mine.same_build(h))
        {
            bail!(
                "the copy of scalebench does not run on {}: {}",
                self.target,
                last_line(&f.stderr).unwrap_or(f.stdout.trim())
            );
        }
        self.exe = exe;
        self.hello = said.ok().map(Box::new);
        self.binary = format!(
            "copied to {}{}",
            self.dir,
            p.found.as_ref().map_or(String::new(), |f| format!(
                " ({} there: {})",
                f.path,
                match &f.hello {
                    Ok(h) => format!("another build, {}", h.describe()),
                    Err(why) => why.clone(),
                }
            ))
        );
        Ok(())
    }

    /// Starts the supervisor that removes the scratch directory when the
    /// session ends or the connection is lost.
    fn hold_dir(&mut self) -> anyhow::Result<()> {
        let words = vec![
            self.exe.clone(),
            "__host-exec".into(),
            "--idle-timeout".into(),
            agent::IDLE_TIMEOUT.as_secs().to_string(),
            "--remove-dir".into(),
            self.dir.clone(),
        ];
        let cmd = self.command(&words)?;
        let j = super::Served::start(cmd, "ready ", true, "the scratch directory's keeper")
            .map_err(|e| anyhow!("{} on {}", e, self.target))?;
        self.janitor = Some(j);
        Ok(())
    }

    /// Runs `scalebench ARGS…` on the host under the supervisor, which
    /// stops it when this side goes away (its input is fed a heartbeat),
    /// to its end, or until `limit` or ^C; its exit code (`None`: stopped
    /// here), standard output and standard error.
    pub fn run_supervised(
        &self,
        args: &[String],
        limit: Duration,
    ) -> anyhow::Result<(Option<i32>, String, String)> {
        let mut words = vec![
            self.exe.clone(),
            "__host-exec".into(),
            "--idle-timeout".into(),
            agent::IDLE_TIMEOUT.as_secs().to_string(),
            "--".into(),
        ];
        words.extend(args.iter().cloned());
        let dir = self.control.parent().unwrap_or(Path::new("."));
        let (out, err) = (tempfile::tempfile_in(dir)?, tempfile::tempfile_in(dir)?);
        let mut cmd = self.command(&words)?;
        cmd.stdin(Stdio::piped())
            .stdout(out.try_clone()?)
            .stderr(err.try_clone()?);
        let mut g = ChildGroup::spawn(&mut cmd).context("ssh")?;
        let mut stdin = g.child().stdin.take().context("no standard input")?;
        let end = Instant::now() + limit;
        let mut beat = Instant::now();
        let status = loop {
            if let Some(st) = g.child().try_wait()? {
                break Some(st);
            }
            if crate::stop::interrupted() || Instant::now() > end {
                break None;
            }
            if beat.elapsed() >= agent::HEARTBEAT {
                use std::io::Write;
                let _ = stdin.write_all(b"\n");
                beat = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        drop(stdin);
        drop(g);
        let read = |mut f: std::fs::File| -> String {
            use std::io::{Read, Seek};
            let mut s = String::new();
            let _ = f.rewind();
            let _ = f.read_to_string(&mut s);
            s
        };
        Ok((status.and_then(|s| s.code()), read(out), read(err)))
    }

    /// The text of `path` on the host (a result file), read within `limit`.
    pub fn read_file(&self, path: &str, limit: Duration) -> anyhow::Result<String> {
        let mut cmd = self.script(r#"cat -- "$1""#, &[path.to_string()])?;
        self.output(&mut cmd, &format!("reading {path}"), limit)
    }

    /// Writes `text` to the file `path` on the host, within `limit`.
    pub fn write_file(&self, path: &str, text: &[u8], limit: Duration) -> anyhow::Result<()> {
        use std::io::{Seek, Write};
        let mut input = tempfile::tempfile().context("a file to send")?;
        input.write_all(text)?;
        input.rewind()?;
        let mut cmd = self.script(r#"cat > "$1""#, &[path.to_string()])?;
        let f = run_bounded_with_input(&mut cmd, input, limit)
            .with_context(|| format!("ssh to {}", self.target))?;
        if !f.status.is_some_and(|s| s.success()) {
            bail!(
                "writing {path} on {} failed: {}",
                self.target,
                last_line(&f.stderr).unwrap_or("no message")
            );
        }
        Ok(())
    }

    /// Whether the master connection still serves (`ssh -O check`); ssh
    /// gives a connection up after 10 s without an answer.
    pub fn alive(&self) -> bool {
        let Some(_) = &self.master else {
            return false;
        };
        let mut check = self.base(false);
        check.args(["-O", "check"]);
        // Also after ^C: the answer decides what the run reports.
        run_to_end(&mut check, Duration::from_secs(10))
            .is_ok_and(|f| f.status.is_some_and(|s| s.success()))
    }

    /// Ends the session: the supervisor removes the scratch directory
    /// (and says so by ending well), then the master connection goes.
    /// Returns what was done, or left.
    pub fn close(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        if let Some(mut j) = self.janitor.take() {
            let alive = self.alive();
            j.close_input();
            match j.wait(Duration::from_secs(15)) {
                Some(true) => notes.push(format!("removed {} on {}", self.dir, self.target)),
                _ if !alive => notes.push(format!(
                    "{} on {}: the connection was lost; the keeper there removes it after {} s without word",
                    self.dir,
                    self.target,
                    agent::IDLE_TIMEOUT.as_secs()
                )),
                _ => notes.push(format!(
                    "{} on {} may be left (its keeper did not report): remove it by hand",
                    self.dir, self.target
                )),
            }
        } else if !self.dir.is_empty() && self.master.is_some() {
            let removed = self
                .script(r#"rm -rf "$1""#, std::slice::from_ref(&self.dir))
                .ok()
                .and_then(|mut c| run_to_end(&mut c, Duration::from_secs(30)).ok())
                .is_some_and(|f| f.status.is_some_and(|s| s.success()));
            notes.push(if removed {
                format!("removed {} on {}", self.dir, self.target)
            } else {
                format!(
                    "{} on {} may be left: remove it by hand",
                    self.dir, self.target
                )
            });
        }
        if let Some(m) = self.master.take() {
            let mut exit = self.base(false);
            exit.args(["-O", "exit"]);
            let _ = run_to_end(&mut exit, Duration::from_secs(5));
            drop(m);
        }
        let _ = std::fs::remove_file(&self.control);
        notes
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.close();
    }
}

/// Whether `uname -s`/`uname -m` of a host match this build's target.
fn same_platform(os: &str, machine: &str, my_os: &str, my_arch: &str) -> bool {
    let os = match os.to_ascii_lowercase().as_str() {
        "darwin" => "macos".to_string(),
        o => o.to_string(),
    };
    let arch = match machine {
        "amd64" | "x86_64" => "x86_64",
        "arm64" | "aarch64" => "aarch64",
        "i386" | "i486" | "i586" | "i686" => "x86",
        m => m,
    };
    os == my_os && arch == my_arch
}

/// The last non-empty line of `s`.
fn last_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).rfind(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_with_user_port_and_brackets() {
        let t: Target = "root@198.18.1.2".parse().unwrap();
        assert_eq!(t.user.as_deref(), Some("root"));
        assert_eq!(t.host, "198.18.1.2");
        assert_eq!(t.port, None);
        let t: Target = "bench.example.org:2222".parse().unwrap();
        assert_eq!((t.user, t.port), (None, Some(2222)));
        let t: Target = "me@[2001:db8::1]:22".parse().unwrap();
        assert_eq!(t.host, "2001:db8::1");
        assert_eq!(t.to_string(), "me@[2001:db8::1]:22");
        for bad in [
            "",
            "@host",
            "host:0",
            "host:99999",
            "2001:db8::1",
            "-oProxyCommand=x",
            "a b",
            "[::1",
            "u:pw@host",
        ] {
            assert!(bad.parse::<Target>().is_err(), "{bad} accepted");
        }
        let e = |s: &str| s.parse::<Target>().unwrap_err();
        assert!(
            e("2001:db8::1").contains("`[2001:db8::1]`"),
            "{}",
            e("2001:db8::1")
        );
        assert!(e("u:pw@host").contains("a password cannot be given"));
        assert!(!e("u:pw@host").contains("pw"));
    }

    #[test]
    fn words_are_quoted_for_the_remote_shell() {
        let q = quote(&["sh".into(), "-c".into(), "echo $HOME; rm x".into()]).unwrap();
        assert_eq!(shlex::split(&q).unwrap()[2], "echo $HOME; rm x");
    }

    /// A hello of another build: protocol `p`, FreeBSD, a fingerprint of
    /// its own.
    fn other(p: u32) -> Hello {
        Hello::parse(&format!(
            "scalebench-agent {p} version=0.9.0 os=freebsd arch=x86_64 libc=native link=dynamic build=0badf00d:1234"
        ))
        .unwrap()
    }

    fn found(path: &str, given: bool, hello: Result<Hello, String>) -> Found {
        Found {
            path: path.into(),
            given,
            hello,
        }
    }

    #[test]
    fn the_same_build_or_a_compatible_one_is_used_else_a_copy_else_refused() {
        let mine = Hello::mine();
        let p = agent::PROTOCOL;
        let on_path = |h| found("/usr/bin/scalebench", false, h);
        let use_it = |h: &Hello| Choice::Use {
            path: "/usr/bin/scalebench".into(),
            hello: h.clone(),
        };
        // The same build, on any platform.
        let same = on_path(Ok(mine.clone()));
        assert_eq!(
            choose("Linux", "x86_64", Some(&same), &mine),
            Ok(use_it(&mine))
        );
        assert_eq!(
            choose("FreeBSD", "amd64", Some(&same), &mine),
            Ok(use_it(&mine))
        );
        // Another build of this protocol: used, also where a copy would run.
        let compatible = on_path(Ok(other(p)));
        for (os, m) in [("FreeBSD", "amd64"), ("Linux", "x86_64")] {
            assert_eq!(
                choose(os, m, Some(&compatible), &mine),
                Ok(use_it(&other(p)))
            );
        }
        // Nothing usable there: a copy where this build runs.
        let (me_os, me_arch) = (std::env::consts::OS, std::env::consts::ARCH);
        let incompatible = on_path(Ok(other(p + 1)));
        let old = on_path(Err("says nothing to `__hello` (exit 2)".into()));
        for f in [None, Some(&incompatible), Some(&old)] {
            assert_eq!(choose(me_os, me_arch, f, &mine), Ok(Choice::Copy), "{f:?}");
        }
        // …else refused, saying what is there and what is needed.
        let e = choose("FreeBSD", "amd64", Some(&incompatible), &mine).unwrap_err();
        assert!(e.contains("it runs FreeBSD amd64"), "{e}");
        assert!(
            e.contains(&format!(
                "its /usr/bin/scalebench is scalebench 0.9.0 speaking agent protocol {}",
                p + 1
            )),
            "{e}"
        );
        assert!(
            e.contains(&format!("install a scalebench of agent protocol {p}")),
            "{e}"
        );
        let e = choose("FreeBSD", "amd64", Some(&old), &mine).unwrap_err();
        assert!(
            e.contains("its /usr/bin/scalebench says nothing to `__hello`"),
            "{e}"
        );
        let e = choose("NetBSD", "evbarm", None, &mine).unwrap_err();
        assert!(e.contains("no scalebench is on its PATH"), "{e}");
    }

    #[test]
    fn a_scalebench_named_by_bin_is_used_when_compatible_and_never_replaced() {
        let mine = Hello::mine();
        let p = agent::PROTOCOL;
        let given = |h| found("/opt/sb", true, h);
        let (me_os, me_arch) = (std::env::consts::OS, std::env::consts::ARCH);
        assert_eq!(
            choose("FreeBSD", "amd64", Some(&given(Ok(other(p)))), &mine),
            Ok(Choice::Use {
                path: "/opt/sb".into(),
                hello: other(p)
            })
        );
        // Not compatible: refused, also where a copy would run.
        let e = choose(me_os, me_arch, Some(&given(Ok(other(p + 1)))), &mine).unwrap_err();
        assert!(
            e.starts_with(&format!(
                "bin=/opt/sb: is scalebench 0.9.0 speaking agent protocol {}; this scalebench ({}) speaks protocol {p}",
                p + 1,
                env!("CARGO_PKG_VERSION")
            )),
            "{e}"
        );
        let e = choose(me_os, me_arch, Some(&given(Err("not found".into()))), &mine).unwrap_err();
        assert_eq!(e, "bin=/opt/sb: not found");
    }

    #[test]
    fn what_hello_answered_is_read_from_its_status_and_output() {
        let line = Hello::mine().to_line();
        assert_eq!(
            Found::new("/x", false, 0, &format!("{line}\n")).hello,
            Ok(Hello::mine())
        );
        for (status, out, says) in [
            (127, "", "not found"),
            (126, "", "cannot be run there"),
            (2, "", "says nothing to `__hello` (exit 2)"),
            (0, "", "says nothing"),
            (
                0,
                "usage: scalebench\n",
                "answers `__hello` with not a hello",
            ),
            (0, "scalebench-agent x\n", "without its protocol number"),
        ] {
            let e = Found::new("/x", false, status, out).hello.unwrap_err();
            assert!(e.contains(says), "{status} {out:?}: {e}");
        }
    }

    #[test]
    fn platforms_match_across_uname_spellings() {
        assert!(same_platform("Linux", "x86_64", "linux", "x86_64"));
        assert!(same_platform("FreeBSD", "amd64", "freebsd", "x86_64"));
        assert!(same_platform("Darwin", "arm64", "macos", "aarch64"));
        assert!(!same_platform("FreeBSD", "amd64", "linux", "x86_64"));
        assert!(!same_platform("Linux", "aarch64", "linux", "x86_64"));
    }
}
