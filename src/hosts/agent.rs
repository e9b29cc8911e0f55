//! What scalebench runs on the far side of an ssh connection: the agent
//! protocol's hello (`__hello`), which says which build a host's
//! scalebench is and whether this one can drive it, the build identity
//! of this binary, and the supervisor (`__host-exec`) that ties what runs
//! there to the connection.
//!
//! A process started over ssh is not ended when the connection is: it
//! only sees the end of its standard input, and only once sshd notices
//! that the client is gone (which on a silently lost network can take
//! hours). So every long-lived process on an ssh host runs under
//! `__host-exec`: scalebench writes a byte to it every second, and when
//! its input ends or stays silent for the idle time it closes the
//! standard input of the subcommand it runs (every serving subcommand
//! stops on that), kills its process group after a grace period, and
//! removes the directory it was given (the host's scratch directory with
//! the copied binary).
//!
//! # The agent protocol
//!
//! A scalebench driving another one (a server host of `run --host`, a
//! system of `run --system`) relies on [`PROTOCOL`], version 3 (2 had
//! no `own-clock` in its run requests, which a guest counting
//! instructions is sent):
//!
//! - `__hello` prints one line, `scalebench-agent PROTOCOL KEY=VALUE …`
//!   ([`Hello`]); the grammar stays across versions, keys may be added
//!   and a reader ignores those it does not know;
//! - `__host-exec [--idle-timeout S] [--remove-dir DIR] [-- ARGS…]`: the
//!   supervisor below, which prints `ready DIR` when it runs nothing;
//! - `__addresses`: `IP/PREFIX` a line;
//! - `__responder …`, `serve …`, `smtp-sink …` and `__agent WORKLOAD …`
//!   print `listening ADDRESS` (or a URL) as their first line and serve
//!   until their standard input ends;
//! - `sysinfo --json [--record-sysctl …]`: the system record of the
//!   result file's schema;
//! - `__run --output FILE REQUEST`: measures one run request, given as
//!   JSON (`run::spec::RunSpec`: `run`'s options by their long names,
//!   as `run/remote.rs` makes them), into a result file of schema
//!   versions 6 and 7. Version 1 passed `run ITEM… --out FILE` with
//!   flags instead: a driver of version 2 refuses an agent of version 1
//!   by name.
//!
//! A change to any of these that an older driver could not follow takes
//! a new protocol number; builds of the same number work together
//! whatever their OS, architecture or C library ([`compatible`]).

use crate::harness::reaper::ChildGroup;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often scalebench writes to a supervisor on an ssh host.
pub const HEARTBEAT: Duration = Duration::from_secs(1);
/// How long a supervisor waits without a byte before it ends what it runs.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(15);

/// This binary's identity: name, version, OS and architecture it was
/// built for, and the CRC-32 and length of the executable file (what
/// `__build-id` prints, for drivers older than [`Hello`]). Two binaries
/// with the same identity are the same build.
pub fn build_id() -> String {
    format!(
        "scalebench {} {}-{} {}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH,
        fingerprint().unwrap_or_else(|| "unreadable".into())
    )
}

/// The version of the agent protocol this build speaks (see the module's
/// documentation for what it covers).
pub const PROTOCOL: u32 = 3;

/// The first word of a hello.
const MAGIC: &str = "scalebench-agent";
/// The longest hello read, in bytes.
pub const MAX_HELLO: usize = 1024;
/// The most `KEY=VALUE` words a hello may have.
const MAX_WORDS: usize = 32;
/// The longest key.
const MAX_KEY: usize = 32;
/// The longest value.
const MAX_VALUE: usize = 128;

/// What a scalebench says of itself (`scalebench __hello`): the agent
/// protocol it speaks and which build it is. One line,
///
/// ```text
/// scalebench-agent 2 version=0.3.0 os=linux arch=x86_64 libc=musl link=static build=1a2b3c4d:8812345
/// ```
///
/// the magic word, the protocol number (decimal digits), then `KEY=VALUE`
/// words separated by spaces: keys of `a-z 0-9 _ -` (at most 32 bytes),
/// values of printable ASCII without spaces (1 to 128 bytes), each key
/// once, at most 32 of them, at most [`MAX_HELLO`] bytes in all. Keys
/// this build does not know are ignored (a later build may add some);
/// those it knows are optional, only the protocol number is required.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hello {
    /// The agent protocol's version.
    pub protocol: u32,
    /// The scalebench version (`version=`).
    pub version: Option<String>,
    /// The OS it was built for, as Rust names it (`os=`: `linux`,
    /// `freebsd`, `macos`, …).
    pub os: Option<String>,
    /// The architecture it was built for (`arch=`: `x86_64`, `aarch64`).
    pub arch: Option<String>,
    /// The C library it was built against (`libc=`: `gnu`, `musl`, or
    /// `native` for the OS's own, as on the BSDs and macOS).
    pub libc: Option<String>,
    /// `static` or `dynamic` linking of the C library (`link=`).
    pub link: Option<String>,
    /// The executable's CRC-32 and length, `crc32hex:bytes` (`build=`).
    pub build: Option<String>,
}

impl Hello {
    /// This binary's hello.
    pub fn mine() -> Hello {
        let libc = if cfg!(target_env = "gnu") {
            "gnu"
        } else if cfg!(target_env = "musl") {
            "musl"
        } else {
            "native"
        };
        let link = if cfg!(target_feature = "crt-static") {
            "static"
        } else {
            "dynamic"
        };
        Hello {
            protocol: PROTOCOL,
            version: Some(env!("CARGO_PKG_VERSION").into()),
            os: Some(std::env::consts::OS.into()),
            arch: Some(std::env::consts::ARCH.into()),
            libc: Some(libc.into()),
            link: Some(link.into()),
            build: Some(fingerprint().unwrap_or_else(|| "unknown".into())),
        }
    }

    /// The known keys and their values, in the order they are written.
    fn fields(&self) -> [(&'static str, &Option<String>); 6] {
        [
            ("version", &self.version),
            ("os", &self.os),
            ("arch", &self.arch),
            ("libc", &self.libc),
            ("link", &self.link),
            ("build", &self.build),
        ]
    }

    /// The hello line (without its newline); [`Hello::parse`] reads it
    /// back as it was.
    pub fn to_line(&self) -> String {
        let mut s = format!("{MAGIC} {}", self.protocol);
        for (k, v) in self.fields() {
            if let Some(v) = v {
                s.push_str(&format!(" {k}={v}"));
            }
        }
        s
    }

    /// Reads a hello: `text` is one line, its newline optional. Never
    /// panics; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Hello, String> {
        let line = text.strip_suffix('\n').unwrap_or(text);
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.len() > MAX_HELLO {
            return Err(format!(
                "a hello of {} bytes (at most {MAX_HELLO})",
                line.len()
            ));
        }
        if line.contains(['\n', '\r']) {
            return Err("a hello is one line, this is several".into());
        }
        if let Some(b) = line.bytes().find(|b| !(b' '..=b'~').contains(b)) {
            return Err(format!(
                "a hello is printable ASCII, this has byte {b:#04x}"
            ));
        }
        let mut words = line.split(' ').filter(|w| !w.is_empty());
        if words.next() != Some(MAGIC) {
            return Err(format!(
                "not a hello (it does not start with `{MAGIC}`): `{}`",
                shorten(line)
            ));
        }
        let protocol = words
            .next()
            .filter(|p| (1..=9).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|p| p.parse::<u32>().ok())
            .ok_or_else(|| format!("a hello without its protocol number: `{}`", shorten(line)))?;
        let mut h = Hello {
            protocol,
            ..Hello::default()
        };
        for (i, w) in words.enumerate() {
            if i >= MAX_WORDS {
                return Err(format!("a hello of more than {MAX_WORDS} KEY=VALUE words"));
            }
            let (k, v) = key_value(w)?;
            let slot = match k {
                "version" => &mut h.version,
                "os" => &mut h.os,
                "arch" => &mut h.arch,
                "libc" => &mut h.libc,
                "link" => &mut h.link,
                "build" => &mut h.build,
                _ => continue,
            };
            if slot.replace(v.to_string()).is_some() {
                return Err(format!("`{k}=` twice in a hello"));
            }
        }
        Ok(h)
    }

    /// Whether `other` is the very same build as this (same version,
    /// target and executable; an unknown fingerprint is never the same).
    pub fn same_build(&self, other: &Hello) -> bool {
        self.build.as_deref().is_some_and(|b| b != "unknown")
            && self.protocol == other.protocol
            && self.fields() == other.fields()
    }

    /// The build in words: `scalebench 0.3.0 for freebsd x86_64 (native
    /// C library, dynamic), build 1a2b3c4d:8812345, agent protocol 3`.
    pub fn describe(&self) -> String {
        let q = |v: &Option<String>| v.clone().unwrap_or_else(|| "?".into());
        format!(
            "scalebench {} for {} {} ({} C library, {}), build {}, agent protocol {}",
            q(&self.version),
            q(&self.os),
            q(&self.arch),
            q(&self.libc),
            q(&self.link),
            q(&self.build),
            self.protocol
        )
    }
}

impl std::fmt::Display for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_line())
    }
}

/// One `KEY=VALUE` word of a hello, checked.
fn key_value(w: &str) -> Result<(&str, &str), String> {
    let (k, v) = w
        .split_once('=')
        .ok_or_else(|| format!("`{}` in a hello is not KEY=VALUE", shorten(w)))?;
    if k.is_empty()
        || k.len() > MAX_KEY
        || !k
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return Err(format!("`{}` is not a key of a hello", shorten(k)));
    }
    if v.is_empty() || v.len() > MAX_VALUE {
        return Err(format!(
            "`{k}=` in a hello: a value of 1 to {MAX_VALUE} bytes"
        ));
    }
    Ok((k, v))
}

/// At most the first 60 bytes of `s` (ASCII here), marked when cut.
fn shorten(s: &str) -> String {
    match s.get(..60) {
        Some(head) if s.len() > 60 => format!("{head}…"),
        _ => s.to_string(),
    }
}

/// Whether this build can drive a scalebench that said `theirs`: the same
/// protocol version.
pub fn compatible(theirs: &Hello) -> bool {
    theirs.protocol == PROTOCOL
}

/// Reads what `scalebench __hello` printed and checks that this build can
/// drive it: the hello, or an error naming both protocol numbers.
pub fn check_hello(text: &str) -> Result<Hello, String> {
    let h = Hello::parse(text)?;
    if !compatible(&h) {
        return Err(format!(
            "it is scalebench {} speaking agent protocol {}; this scalebench ({}) speaks protocol {PROTOCOL}",
            h.version.as_deref().unwrap_or("(version not said)"),
            h.protocol,
            env!("CARGO_PKG_VERSION")
        ));
    }
    Ok(h)
}

/// The CRC-32 and length of this executable, `crc32hex:bytes`.
fn fingerprint() -> Option<String> {
    static FP: OnceLock<Option<String>> = OnceLock::new();
    FP.get_or_init(|| {
        std::env::current_exe()
            .and_then(std::fs::read)
            .ok()
            .map(|b| format!("{:08x}:{}", crc32fast::hash(&b), b.len()))
    })
    .clone()
}

/// Why a supervisor stopped what it ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// Its standard input ended (the connection or scalebench closed it).
    InputEnded,
    /// Nothing came for the idle time (a lost connection).
    Idle,
    /// What it ran ended by itself.
    ChildEnded,
}

/// `__host-exec`: runs `args` (a scalebench subcommand; none: nothing,
/// only wait) until standard input ends or is silent for `idle`, then
/// stops it and removes `remove_dir`. Prints `ready DIR` first when it runs
/// nothing, so that the caller knows it holds the directory.
pub fn supervise(idle: Duration, remove_dir: Option<PathBuf>, args: Vec<OsString>) -> ExitCode {
    let mut child = None;
    if !args.is_empty() {
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                sys::say!("error: __host-exec: cannot find this executable: {e}");
                return ExitCode::from(2);
            }
        };
        let mut cmd = Command::new(exe);
        cmd.args(&args).stdin(Stdio::piped());
        // A group of its own, dying with this supervisor.
        match ChildGroup::spawn(&mut cmd) {
            Ok(c) => child = Some(c),
            Err(e) => {
                sys::say!("error: __host-exec: cannot start the subcommand: {e}");
                return ExitCode::from(2);
            }
        }
    } else {
        sys::out!(
            "ready {}",
            remove_dir
                .as_deref()
                .map_or(String::new(), |d| d.display().to_string())
        );
    }
    let why = watch(idle, &mut child);
    let mut code = ExitCode::SUCCESS;
    if let Some(mut g) = child {
        drop(g.child().stdin.take());
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            match g.child().try_wait() {
                Ok(Some(st)) => break Some(st),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => break None,
            }
        };
        // What is left of its group is killed and reaped (a group whose
        // id may be another's by now is not signalled).
        drop(g);
        if !status.is_some_and(|s| s.success()) {
            code = ExitCode::from(1);
        }
    }
    if let Some(d) = &remove_dir
        && let Err(e) = std::fs::remove_dir_all(d)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        sys::say!("error: __host-exec: removing {}: {e}", d.display());
        code = ExitCode::from(1);
    }
    if why == Stop::Idle {
        sys::say!(
            "__host-exec: nothing from scalebench for {} s: connection lost, stopped",
            idle.as_secs()
        );
    }
    code
}

/// Reads standard input until it ends or is silent for `idle`, or the
/// child ends.
fn watch(idle: Duration, child: &mut Option<ChildGroup>) -> Stop {
    let mut last = Instant::now();
    let mut stdin = std::io::stdin().lock();
    loop {
        if let Some(g) = child.as_mut()
            && matches!(g.child().try_wait(), Ok(Some(_)))
        {
            return Stop::ChildEnded;
        }
        if last.elapsed() > idle {
            return Stop::Idle;
        }
        let mut p = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        let r = unsafe { libc::poll(&mut p, 1, 200) };
        if r < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Stop::InputEnded;
        }
        if r == 0 {
            continue;
        }
        let mut b = [0u8; 256];
        match stdin.read(&mut b) {
            Ok(0) => return Stop::InputEnded,
            Ok(_) => last = Instant::now(),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Stop::InputEnded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_id_names_version_target_and_file() {
        let id = build_id();
        assert!(id.starts_with(&format!("scalebench {} ", env!("CARGO_PKG_VERSION"))));
        assert!(id.contains(std::env::consts::ARCH), "{id}");
        let fp = id.rsplit(' ').next().unwrap();
        let (crc, len) = fp.split_once(':').expect("crc:len");
        assert_eq!(crc.len(), 8, "{id}");
        assert!(len.parse::<u64>().unwrap() > 0, "{id}");
        assert_eq!(build_id(), id);
    }

    #[test]
    fn this_builds_hello_names_it_and_reads_back_as_it_was() {
        let mine = Hello::mine();
        let line = mine.to_line();
        assert!(
            line.starts_with(&format!("scalebench-agent {PROTOCOL} version=")),
            "{line}"
        );
        for key in ["os=", "arch=", "libc=", "link=", "build="] {
            assert!(line.contains(key), "{line}");
        }
        assert_eq!(Hello::parse(&format!("{line}\n")).unwrap(), mine);
        assert_eq!(check_hello(&line).unwrap(), mine);
        assert!(mine.same_build(&mine));
        assert!(compatible(&mine));
        assert!(
            mine.describe()
                .contains(&format!("agent protocol {PROTOCOL}"))
        );
    }

    #[test]
    fn unknown_keys_are_ignored_and_known_ones_optional() {
        let h = Hello::parse(
            "scalebench-agent 1 future=yes version=9.1 os=freebsd colour=red=blue\r\n",
        )
        .unwrap();
        assert_eq!(h.protocol, 1);
        assert_eq!(h.version.as_deref(), Some("9.1"));
        assert_eq!(h.os.as_deref(), Some("freebsd"));
        assert_eq!((h.arch, h.build), (None, None));
        // Only the protocol number is required; spaces may repeat.
        let bare = Hello::parse("scalebench-agent  7").unwrap();
        assert_eq!(bare.protocol, 7);
        assert_eq!(bare.to_line(), "scalebench-agent 7");
        assert!(!compatible(&bare));
        // Not the same build without a fingerprint, even field for field.
        let mut a = Hello::mine();
        a.build = Some("unknown".into());
        assert!(!a.same_build(&a.clone()));
        let mut b = Hello::mine();
        b.libc = Some("musl-other".into());
        assert!(!Hello::mine().same_build(&b));
    }

    #[test]
    fn bad_hellos_are_named_errors() {
        let long = format!("scalebench-agent 1 x={}", "a".repeat(MAX_HELLO));
        let many: String = (0..40).map(|i| format!(" k{i}=v")).collect();
        let many = format!("scalebench-agent 1{many}");
        for (bad, says) in [
            ("", "not a hello"),
            ("error: unrecognized subcommand '__hello'", "not a hello"),
            ("scalebench-agent", "without its protocol number"),
            ("scalebench-agent one", "without its protocol number"),
            ("scalebench-agent +1", "without its protocol number"),
            (
                "scalebench-agent 99999999999",
                "without its protocol number",
            ),
            ("scalebench-agent 1 version", "not KEY=VALUE"),
            ("scalebench-agent 1 Version=1", "not a key"),
            ("scalebench-agent 1 =1", "not a key"),
            ("scalebench-agent 1 os=", "a value of 1 to"),
            ("scalebench-agent 1 os=a os=b", "`os=` twice"),
            ("scalebench-agent 1\nscalebench-agent 1", "one line"),
            ("scalebench-agent 1 os=l\u{e9}", "printable ASCII"),
            ("scalebench-agent 1\tos=linux", "printable ASCII"),
            (long.as_str(), "bytes (at most 1024)"),
            (many.as_str(), "more than 32"),
        ] {
            let e = Hello::parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        let value = format!("scalebench-agent 1 os={}", "x".repeat(MAX_VALUE + 1));
        assert!(
            Hello::parse(&value)
                .unwrap_err()
                .contains("a value of 1 to")
        );
    }

    #[test]
    fn another_protocol_is_refused_naming_both_numbers() {
        // An older build (protocol 1 ran `run ITEM --out FILE` with flags)
        // and a newer one alike.
        let e = check_hello("scalebench-agent 1 version=0.3.0 os=linux").unwrap_err();
        assert!(
            e.contains("scalebench 0.3.0 speaking agent protocol 1"),
            "{e}"
        );
        let e = check_hello("scalebench-agent 9 version=0.9.0 os=netbsd").unwrap_err();
        assert!(
            e.contains("scalebench 0.9.0 speaking agent protocol 9")
                && e.contains(&format!("speaks protocol {PROTOCOL}")),
            "{e}"
        );
        let e = check_hello("scalebench 0.3.0").unwrap_err();
        assert!(e.contains("not a hello"), "{e}");
        let other = check_hello(&format!("scalebench-agent {PROTOCOL} version=0.2.9 os=freebsd arch=x86_64 libc=native link=dynamic build=0badf00d:17")).unwrap();
        assert!(compatible(&other));
        assert!(!Hello::mine().same_build(&other));
    }
}
