//! The hosts of a run: where the client and the server of the network
//! benchmarks and workloads run (`run --host server=ssh:USER@HOST`,
//! `--host client=netns:NS`; by default both here).
//!
//! A host is reached by a command prefix: nothing for this machine, `ip
//! netns exec NS` for a network namespace of it (a test bed's host), `ssh
//! … HOST` over one shared master connection for another machine. The
//! client is where scalebench itself runs and measures — every duration
//! is taken on that one host — so a client in a namespace means this
//! scalebench re-runs itself there ([`enter_client`]); a client on
//! another machine is scalebench run on that machine. The server side of
//! every network benchmark and workload is a scalebench subcommand that
//! prints `listening ADDRESS` and serves until its standard input ends
//! ([`Host::spawn`], [`Served`]); on an ssh host it runs under the
//! supervisor of [`agent`], which ends it when the connection is closed
//! or lost. Every host's system record goes into the result file
//! ([`Hosts::records`]), and nothing is left running or stored on a host
//! when the run ends.

pub mod agent;
pub mod ssh;

use crate::harness::reaper::{ChildGroup, run_bounded};
use crate::results::{HostRecord, SystemInfo};
use anyhow::{Context, anyhow, bail};
use std::ffi::OsString;
use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The part a host plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Where scalebench runs, drives the load and measures.
    Client,
    /// Where the servers run (and the database of pgbench).
    Server,
}

impl Role {
    /// `client` or `server`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Server => "server",
        }
    }
}

/// How a host is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// This machine, as it is.
    Local,
    /// A network namespace of this machine (`ip netns exec NAME`).
    Netns(String),
    /// Another machine over ssh.
    Ssh(ssh::Target),
}

impl std::fmt::Display for Reach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reach::Local => write!(f, "local"),
            Reach::Netns(n) => write!(f, "netns:{n}"),
            Reach::Ssh(t) => write!(f, "ssh:{t}"),
        }
    }
}

/// A `--host ROLE=WHERE` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// The role.
    pub role: Role,
    /// How the host is reached.
    pub reach: Reach,
    /// The scalebench to run on an ssh host (`ssh:…,bin=PATH`), else the
    /// one on its PATH or a copy of this one.
    pub bin: Option<String>,
}

impl std::fmt::Display for HostSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let role = match self.role {
            Role::Client => "client",
            Role::Server => "server",
        };
        write!(f, "{role}={}", self.reach)?;
        if let Some(b) = &self.bin {
            write!(f, ",bin={b}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for HostSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<HostSpec, String> {
        let (role, at) = s.split_once('=').ok_or_else(|| {
            format!(
                "`{s}`: expected ROLE=WHERE (server=ssh:USER@HOST, client=netns:NAME, server=local)"
            )
        })?;
        let role = match role {
            "client" => Role::Client,
            "server" => Role::Server,
            r => return Err(format!("`{r}` is not a role: client or server")),
        };
        if !at.starts_with("ssh:") && at.contains(",bin=") {
            return Err(format!(
                "`{at}`: bin= names the scalebench of an ssh host (ssh:HOST,bin=PATH)"
            ));
        }
        let mut bin = None;
        let reach = if at == "local" {
            Reach::Local
        } else if let Some(n) = at.strip_prefix("netns:") {
            if n.is_empty()
                || n.len() > 64
                || n.starts_with('.')
                || !n
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            {
                return Err(format!("`{n}` is not a network namespace's name"));
            }
            Reach::Netns(n.to_string())
        } else if let Some(t) = at.strip_prefix("ssh:") {
            let (t, options) = t.split_once(',').unwrap_or((t, ""));
            for o in options.split(',').filter(|o| !o.is_empty()) {
                match o.strip_prefix("bin=") {
                    Some(b) if !b.is_empty() && !b.contains(['\n', '\r', '\0']) => {
                        if bin.replace(b.to_string()).is_some() {
                            return Err(format!("ssh:{t}: bin= given twice"));
                        }
                    }
                    Some(_) => return Err(format!("ssh:{t}: bin= needs a path")),
                    None => {
                        return Err(format!(
                            "ssh:{t}: `{o}` is not an option of an ssh host (bin=PATH)"
                        ));
                    }
                }
            }
            Reach::Ssh(t.parse().map_err(|e| format!("ssh:{t}: {e}"))?)
        } else {
            return Err(format!(
                "`{at}`: a host is `local`, `netns:NAME` or `ssh:[USER@]HOST[:PORT][,bin=PATH]`"
            ));
        };
        Ok(HostSpec { role, reach, bin })
    }
}

/// Checks a run's `--host` arguments together: the server once; clients
/// each once, the first (where scalebench runs and measures) not over
/// ssh; further clients only with a server they can all reach (not this
/// machine's loopback). What this machine can reach is [`supported`].
pub fn check(specs: &[HostSpec]) -> Result<(), String> {
    if specs.iter().filter(|s| s.role == Role::Server).count() > 1 {
        return Err("--host server=… given twice".into());
    }
    let clients: Vec<&HostSpec> = specs.iter().filter(|s| s.role == Role::Client).collect();
    for (i, c) in clients.iter().enumerate() {
        if clients[..i].iter().any(|o| o.reach == c.reach) {
            return Err(format!("--host client={} given twice", c.reach));
        }
    }
    // A further client runs its load through its host's prefix; `local`
    // would run it beside this one (in this one's namespace, if any).
    if let Some(c) = clients.iter().skip(1).find(|c| c.reach == Reach::Local) {
        return Err(format!(
            "--host client={}: a further client is netns:… or ssh:… (only the first client may be this machine as it is)",
            c.reach
        ));
    }
    if let Some(Reach::Ssh(t)) = clients.first().map(|c| &c.reach) {
        return Err(format!(
            "--host client=ssh:{t}: the first client is where scalebench runs and measures; run scalebench on {t} (with --host server=… naming the server) instead, or name this machine's client first (--host client=local)"
        ));
    }
    if clients.len() > 1 {
        let server = specs.iter().find(|s| s.role == Role::Server);
        if server.is_none_or(|s| s.reach == Reach::Local) {
            return Err(format!(
                "{} clients need a server they all reach: name it with --host server=netns:… or server=ssh:… (this machine's server listens on loopback only)",
                clients.len()
            ));
        }
    }
    Ok(())
}

/// Whether this machine can reach the hosts of `specs` as they are
/// given: network namespaces where one is named.
pub fn supported(specs: &[HostSpec]) -> Result<(), String> {
    for s in specs {
        if let Reach::Netns(_) = &s.reach {
            crate::sys::netns::supported()
                .map_err(|e| format!("--host {}={}: {e}", s.role.name(), s.reach))?;
        }
    }
    Ok(())
}

/// The client's namespace, if the run puts the client (the first one) in
/// one.
fn client_netns(specs: &[HostSpec]) -> Option<&str> {
    match specs
        .iter()
        .find(|s| s.role == Role::Client)
        .map(|s| &s.reach)
    {
        Some(Reach::Netns(n)) => Some(n.as_str()),
        _ => None,
    }
}

/// Set in the environment of a scalebench re-run inside the client's
/// namespace, so that a failed move is not tried again.
const ENTERED: &str = "SCALEBENCH_CLIENT_NETNS";

/// With `--host client=netns:NS`, makes this process run in NS: if it is
/// not there yet, the same command line is run again under `ip netns exec
/// NS` in its place (this returns only on error). `ip netns exec` also
/// mounts the namespace's view of /sys, so the system record names its
/// interfaces.
pub fn enter_client(specs: &[HostSpec]) -> anyhow::Result<()> {
    let Some(ns) = client_netns(specs) else {
        return Ok(());
    };
    let path = crate::testbed::netns_path(ns);
    let want = crate::sys::netns::inode(&path).ok_or_else(|| {
        anyhow!(
            "--host client=netns:{ns}: no network namespace {ns} ({} missing; `ip netns list` names those there are)",
            path.display()
        )
    })?;
    if crate::sys::netns::current() == Some(want) {
        return Ok(());
    }
    if std::env::var_os(ENTERED).is_some() {
        bail!("--host client=netns:{ns}: `ip netns exec {ns}` did not move scalebench there");
    }
    crate::sys::netns::privileged().map_err(|e| anyhow!("--host client=netns:{ns}: {e}"))?;
    let exe = std::env::current_exe().context("finding this executable")?;
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", ns])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env(ENTERED, ns);
    use std::os::unix::process::CommandExt;
    let e = cmd.exec();
    Err(anyhow!(
        "--host client=netns:{ns}: cannot run `ip netns exec` (iproute2): {e}"
    ))
}

/// A host of the run, ready: scalebench runs there.
pub struct Host {
    role: Role,
    reach: Reach,
    exe: Option<String>,
    scratch: PathBuf,
    v4: Option<IpAddr>,
    v6: Option<IpAddr>,
    ssh: Option<ssh::Session>,
    record: HostRecord,
}

impl Host {
    /// This machine in `role`, scalebench being `exe`, its files in
    /// `workdir`.
    pub fn local(role: Role, exe: Option<&Path>, workdir: &Path) -> Host {
        Host {
            role,
            reach: Reach::Local,
            exe: exe.map(|e| e.display().to_string()),
            scratch: workdir.to_path_buf(),
            v4: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
            v6: Some(IpAddr::V6(Ipv6Addr::LOCALHOST)),
            ssh: None,
            record: HostRecord {
                role: role.name().into(),
                reach: "local".into(),
                ..Default::default()
            },
        }
    }

    /// The role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// How it is reached.
    pub fn reach(&self) -> &Reach {
        &self.reach
    }

    /// This machine as it is (not a namespace, not another machine).
    pub fn is_local(&self) -> bool {
        self.reach == Reach::Local
    }

    /// On this machine (itself or one of its namespaces): it shares this
    /// machine's CPUs, and its processes are this machine's.
    pub fn on_this_machine(&self) -> bool {
        !matches!(self.reach, Reach::Ssh(_))
    }

    /// A directory on the host for the files of what runs there: the
    /// work directory here, the scratch directory on an ssh host.
    pub fn scratch(&self) -> &Path {
        &self.scratch
    }

    /// Its record for the result file.
    pub fn record(&self) -> &HostRecord {
        &self.record
    }

    /// The address the client reaches the host at: loopback for this
    /// machine.
    pub fn address(&self, ipv6: bool) -> Result<IpAddr, String> {
        if ipv6 { self.v6 } else { self.v4 }.ok_or_else(|| {
            format!(
                "the {} host {} has no IPv{} address the client reaches",
                self.role.name(),
                self.reach,
                if ipv6 { 6 } else { 4 }
            )
        })
    }

    /// The address a server there binds: loopback on this machine,
    /// every address elsewhere.
    pub fn bind_address(&self, ipv6: bool) -> IpAddr {
        match (self.is_local(), ipv6) {
            (true, false) => IpAddr::V4(Ipv4Addr::LOCALHOST),
            (true, true) => IpAddr::V6(Ipv6Addr::LOCALHOST),
            (false, false) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            (false, true) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        }
    }

    /// Where a server there that reports `bound` is reached: an
    /// unspecified address is replaced by the host's.
    pub fn reachable(&self, bound: SocketAddr) -> Result<SocketAddr, String> {
        if bound.ip().is_unspecified() {
            Ok(SocketAddr::new(
                self.address(bound.is_ipv6())?,
                bound.port(),
            ))
        } else {
            Ok(bound)
        }
    }

    /// `scalebench ARGS…` on this host; `supervised` runs it under the
    /// supervisor on an ssh host (for what lives as long as its input).
    pub fn command(&self, args: &[OsString], supervised: bool) -> Result<Command, String> {
        let exe = self
            .exe
            .as_deref()
            .ok_or("cannot find the scalebench executable")?;
        match &self.reach {
            Reach::Local => {
                let mut c = Command::new(exe);
                c.args(args);
                Ok(c)
            }
            Reach::Netns(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, exe]).args(args);
                Ok(c)
            }
            Reach::Ssh(_) => {
                let s = self.ssh.as_ref().ok_or("the ssh connection is closed")?;
                let mut words = vec![exe.to_string()];
                if supervised {
                    words.extend([
                        "__host-exec".into(),
                        "--idle-timeout".into(),
                        agent::IDLE_TIMEOUT.as_secs().to_string(),
                        "--".into(),
                    ]);
                }
                words.extend(args.iter().map(|a| a.to_string_lossy().into_owned()));
                s.command(&words).map_err(|e| e.to_string())
            }
        }
    }

    /// Starts `scalebench ARGS…` there, a subcommand that prints
    /// `listening WHERE` and serves until its standard input ends; `what`
    /// names it in errors.
    pub fn spawn(&self, args: &[OsString], what: &str) -> Result<Served, String> {
        let cmd = self.command(args, true)?;
        Served::start(
            cmd,
            "listening ",
            matches!(self.reach, Reach::Ssh(_)),
            &format!("{what} on the {} host ({})", self.role.name(), self.reach),
        )
    }

    /// Opens `spec`: connects, checks scalebench runs there, finds its
    /// addresses and takes its system record. `workdir` is this run's.
    fn open(
        spec: &HostSpec,
        exe: Option<&Path>,
        workdir: &Path,
        ssh_config: Option<&Path>,
    ) -> anyhow::Result<Host> {
        let mut h = Host::local(spec.role, exe, workdir);
        h.reach = spec.reach.clone();
        h.record.reach = spec.reach.to_string();
        match &spec.reach {
            Reach::Local => return Ok(h),
            Reach::Netns(ns) => {
                let path = crate::testbed::netns_path(ns);
                if crate::sys::netns::inode(&path).is_none() {
                    bail!(
                        "--host {}=netns:{ns}: no network namespace {ns} ({} missing)",
                        spec.role.name(),
                        path.display()
                    );
                }
                let theirs = crate::sys::netns::run_in(&path, crate::sys::ifaddrs::addresses)
                    .with_context(|| format!("entering network namespace {ns}"))?;
                let mine = crate::sys::ifaddrs::addresses();
                h.v4 = choose(&theirs, &mine, false);
                h.v6 = choose(&theirs, &mine, true);
                h.record.binary = Some("this binary (the same machine)".into());
                h.record.agent = Some(agent::Hello::mine().to_line());
            }
            Reach::Ssh(t) => {
                let s = ssh::Session::open_with(t, ssh_config, workdir, spec.bin.as_deref())?;
                h.exe = Some(s.exe.clone());
                h.scratch = PathBuf::from(&s.dir);
                h.record.binary = Some(s.binary.clone());
                h.record.agent = s.hello.as_ref().map(|h| h.to_line());
                h.ssh = Some(s);
                let port = t.port.unwrap_or(22);
                let found: Vec<IpAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(
                    t.host.trim_matches(|c| c == '[' || c == ']'),
                    port,
                ))
                .map(|i| i.map(|a| a.ip()).collect())
                .unwrap_or_default();
                let theirs = h.addresses()?;
                let mine = crate::sys::ifaddrs::addresses();
                h.v4 = found
                    .iter()
                    .copied()
                    .find(IpAddr::is_ipv4)
                    .or_else(|| choose(&theirs, &mine, false));
                h.v6 = found
                    .iter()
                    .copied()
                    .find(IpAddr::is_ipv6)
                    .or_else(|| choose(&theirs, &mine, true));
            }
        }
        h.record.addresses = [h.v4, h.v6]
            .iter()
            .flatten()
            .map(|a| a.to_string())
            .collect();
        let v4 = h.address(false).map_err(|e| anyhow!(e))?;
        let routed = route_to(v4).map_err(|e| e.to_string()).and_then(|_| {
            // A namespace of this machine is reached by a route of the
            // client's own, never by its default route (out of the machine).
            match spec.reach {
                Reach::Netns(_) => own_route(v4),
                _ => Ok(()),
            }
        });
        if let Err(e) = routed {
            bail!(
                "the {} host {} ({v4}) cannot be reached from the client: {e}{}",
                spec.role.name(),
                spec.reach,
                if matches!(spec.reach, Reach::Netns(_)) {
                    " (a test bed's hosts reach each other only: put the client in one too, --host client=netns:…)"
                } else {
                    ""
                }
            );
        }
        h.record.system = Some(h.system()?);
        Ok(h)
    }

    /// The host's interface addresses (`scalebench __addresses` there).
    fn addresses(&self) -> anyhow::Result<Vec<crate::sys::ifaddrs::IfAddr>> {
        let mut cmd = self
            .command(&["__addresses".into()], false)
            .map_err(|e| anyhow!(e))?;
        let f = run_bounded(&mut cmd, Duration::from_secs(30))
            .with_context(|| format!("the addresses of {}", self.reach))?;
        if !f.status.is_some_and(|s| s.success()) {
            bail!("the addresses of {}: {}", self.reach, f.stderr.trim());
        }
        Ok(f.stdout
            .lines()
            .filter_map(|l| {
                let (ip, prefix) = l.trim().split_once('/')?;
                Some(crate::sys::ifaddrs::IfAddr {
                    interface: String::new(),
                    ip: ip.parse().ok()?,
                    prefix: prefix.parse().ok()?,
                })
            })
            .collect())
    }

    /// The host's system record (`scalebench sysinfo --json` there).
    fn system(&self) -> anyhow::Result<SystemInfo> {
        let mut cmd = self
            .command(&["sysinfo".into(), "--json".into()], false)
            .map_err(|e| anyhow!(e))?;
        let f = run_bounded(&mut cmd, Duration::from_secs(60))
            .with_context(|| format!("the system record of {}", self.reach))?;
        if !f.status.is_some_and(|s| s.success()) {
            bail!(
                "the system record of {}: `scalebench sysinfo` failed: {}",
                self.reach,
                f.stderr.trim()
            );
        }
        serde_json::from_str(&f.stdout)
            .with_context(|| format!("the system record of {} does not parse", self.reach))
    }

    /// Why the host cannot be reached any more (`None`: it can, or needs
    /// no connection).
    pub fn lost(&self) -> Option<String> {
        match &self.ssh {
            Some(s) if !s.alive() => Some(format!(
                "the connection to the {} host {} was lost",
                self.role.name(),
                self.reach
            )),
            _ => None,
        }
    }

    /// Ends what the host holds (the ssh connection and its scratch
    /// directory); what was done goes into its record's notes.
    pub fn close(&mut self) {
        if let Some(mut s) = self.ssh.take() {
            self.record.cleanup.extend(s.close());
        }
    }
}

/// The address of `theirs` (a host's addresses) the client reaches best:
/// one on a network the client (`mine`) has an address on, else the
/// first usable one.
fn choose(
    theirs: &[crate::sys::ifaddrs::IfAddr],
    mine: &[crate::sys::ifaddrs::IfAddr],
    ipv6: bool,
) -> Option<IpAddr> {
    let usable: Vec<_> = theirs
        .iter()
        .filter(|a| a.is_global() && a.ip.is_ipv6() == ipv6)
        .collect();
    usable
        .iter()
        .find(|a| mine.iter().any(|m| m.is_global() && m.same_network(a.ip)))
        .or(usable.first())
        .map(|a| a.ip)
}

/// Whether this machine has a route to `ip` (a UDP socket connected to
/// it: nothing is sent).
fn route_to(ip: IpAddr) -> std::io::Result<IpAddr> {
    let any: SocketAddr = if ip.is_ipv6() {
        "[::]:0".parse().expect("literal")
    } else {
        "0.0.0.0:0".parse().expect("literal")
    };
    let s = std::net::UdpSocket::bind(any)?;
    s.connect(SocketAddr::new(ip, 9))?;
    Ok(s.local_addr()?.ip())
}

/// Whether the client has a route of its own to `ip`, not only its
/// default route (`ip route show match`; Linux, where namespaces are).
fn own_route(ip: IpAddr) -> Result<(), String> {
    let family = if ip.is_ipv6() { "-6" } else { "-4" };
    let f = run_bounded(
        Command::new("ip").args(["-j", family, "route", "show", "match", &ip.to_string()]),
        Duration::from_secs(10),
    )
    .map_err(|e| format!("ip route: {e}"))?;
    let routes: Vec<serde_json::Value> = serde_json::from_str(f.stdout.trim()).unwrap_or_default();
    if routes
        .iter()
        .any(|r| r["dst"].as_str().is_some_and(|d| d != "default"))
    {
        Ok(())
    } else {
        Err(format!(
            "no route to {ip} but the default one, out of this machine"
        ))
    }
}

/// The clients and the server of a run.
pub struct Hosts {
    /// Where scalebench runs and measures.
    pub client: Host,
    /// Further clients (`--host client=…` after the first): workloads
    /// that spread their load over several clients run a share of it on
    /// each (`scalebench load --part` there); empty by default.
    pub more_clients: Vec<Host>,
    /// Where the servers run.
    pub server: Host,
}

impl Hosts {
    /// Both here.
    pub fn local(exe: Option<&Path>, workdir: &Path) -> Hosts {
        Hosts {
            client: Host::local(Role::Client, exe, workdir),
            more_clients: Vec::new(),
            server: Host::local(Role::Server, exe, workdir),
        }
    }

    /// Opens the hosts `specs` name (the rest are this machine), `note`
    /// hearing what happens. The client must already run where its spec
    /// says ([`enter_client`]).
    pub fn open(
        specs: &[HostSpec],
        exe: Option<&Path>,
        workdir: &Path,
        ssh_config: Option<&Path>,
        note: &mut dyn FnMut(&str),
    ) -> anyhow::Result<Hosts> {
        check(specs).map_err(|e| anyhow!(e))?;
        let mut hosts = Hosts::local(exe, workdir);
        if let Some(ns) = client_netns(specs) {
            hosts.client.reach = Reach::Netns(ns.to_string());
            hosts.client.record.reach = hosts.client.reach.to_string();
            hosts.client.exe = exe.map(|e| e.display().to_string());
        }
        if let Some(s) = specs.iter().find(|s| s.role == Role::Server) {
            if s.reach != Reach::Local {
                note(&format!("server host: connecting to {}", s.reach));
            }
            hosts.server = Host::open(s, exe, workdir, ssh_config)
                .with_context(|| format!("--host server={}", s.reach))?;
            let r = hosts.server.record();
            if s.reach != Reach::Local {
                note(&format!(
                    "server host {}: {} ({}), scalebench {}",
                    s.reach,
                    r.addresses.join(", "),
                    r.system.as_ref().map_or(String::new(), |s| format!(
                        "{} {}, {}",
                        s.os, s.os_release, s.hostname
                    )),
                    r.binary.as_deref().unwrap_or("")
                ));
            }
        }
        for s in specs.iter().filter(|s| s.role == Role::Client).skip(1) {
            note(&format!("client host: connecting to {}", s.reach));
            let h = Host::open(s, exe, workdir, ssh_config)
                .with_context(|| format!("--host client={}", s.reach))?;
            note(&format!(
                "client host {}: {}, scalebench {}",
                s.reach,
                h.record().addresses.join(", "),
                h.record().binary.as_deref().unwrap_or("")
            ));
            hosts.more_clients.push(h);
        }
        if let Ok(ip) = hosts.server.address(false)
            && let Ok(mine) = route_to(ip)
        {
            hosts.client.record.addresses = vec![mine.to_string()];
        }
        Ok(hosts)
    }

    /// Where a workload ran among them, in words (its `hosts` parameter):
    /// `between_hosts` if it runs between the client and the server,
    /// `several_clients` if it spreads its load over every client.
    pub fn said(&self, between_hosts: bool, several_clients: bool) -> String {
        let reaches = |hs: &[&Host]| {
            hs.iter()
                .map(|h| h.reach.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let more: Vec<&Host> = self.more_clients.iter().collect();
        if !between_hosts {
            return format!(
                "{} only: this workload does not run between hosts",
                self.client.reach
            );
        }
        if more.is_empty() {
            return format!("client {}, server {}", self.client.reach, self.server.reach);
        }
        if several_clients {
            let all: Vec<&Host> = self.clients().collect();
            return format!("clients {}, server {}", reaches(&all), self.server.reach);
        }
        format!(
            "client {}, server {}: this workload does not spread its load over several clients (not on {})",
            self.client.reach,
            self.server.reach,
            reaches(&more)
        )
    }

    /// Every client: this one first, then the further ones.
    pub fn clients(&self) -> impl Iterator<Item = &Host> {
        std::iter::once(&self.client).chain(&self.more_clients)
    }

    /// Whether the server runs somewhere else than the client.
    pub fn apart(&self) -> bool {
        self.server.reach != self.client.reach
    }

    /// The client's address as the server sees it (towards the server's
    /// address of the family).
    pub fn client_address(&self, ipv6: bool) -> Result<IpAddr, String> {
        let to = self.server.address(ipv6)?;
        route_to(to).map_err(|e| format!("no route from the client to {to}: {e}"))
    }

    /// The records for the result file: empty when both are this machine.
    pub fn records(&self) -> Vec<HostRecord> {
        if self.client.is_local() && self.server.is_local() && self.more_clients.is_empty() {
            return Vec::new();
        }
        let mut r = vec![self.client.record.clone(), self.server.record.clone()];
        r.extend(self.more_clients.iter().map(|h| h.record.clone()));
        r
    }

    /// Why a host the run needs cannot be reached any more: the server,
    /// or with `clients` the further clients too (`None`: all can).
    pub fn lost(&self, clients: bool) -> Option<String> {
        self.server.lost().or_else(|| {
            clients
                .then(|| self.more_clients.iter().find_map(Host::lost))
                .flatten()
        })
    }

    /// Closes every host; their records then say what was removed.
    pub fn close(&mut self) {
        self.client.close();
        self.server.close();
        for h in &mut self.more_clients {
            h.close();
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        self.close();
    }
}

/// The standard input of a served process: plain, or fed a heartbeat
/// (for a supervisor over ssh) by a thread until it is closed.
enum Input {
    Plain(ChildStdin),
    Heartbeat {
        /// Lines to write between heartbeats; dropped to stop.
        stop: mpsc::Sender<Vec<u8>>,
        thread: std::thread::JoinHandle<()>,
    },
}

/// A server process a host runs for the client: stopped (input closed,
/// then its process group killed) when dropped.
pub struct Served {
    group: ChildGroup,
    input: Option<Input>,
    /// What followed `listening ` on its first line (an address, a URL).
    pub listening: String,
}

impl Served {
    /// Starts `cmd` in a process group of its own and waits up to 30 s
    /// for its first line, which must start with `prefix`; `heartbeat`
    /// feeds its input every second. `what` names it in errors, which
    /// quote its error output.
    pub fn start(
        mut cmd: Command,
        prefix: &str,
        heartbeat: bool,
        what: &str,
    ) -> Result<Served, String> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut group = ChildGroup::spawn(&mut cmd).map_err(|e| format!("starting {what}: {e}"))?;
        let child = group.child();
        let stdin = child.stdin.take().ok_or("no standard input")?;
        let stdout = child.stdout.as_mut().ok_or("no standard output")?;
        let fd = stdout.as_raw_fd();
        let line = first_line(stdout, fd, Duration::from_secs(30));
        let Some(listening) = line.as_deref().and_then(|l| l.strip_prefix(prefix)) else {
            let mut err = String::new();
            // SAFETY: a descriptor of ours; a non-blocking read of what the
            // failed process wrote, without waiting for a live one.
            if let Some(e) = group.child().stderr.as_mut() {
                unsafe { libc::fcntl(e.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
                let _ = e.read_to_string(&mut err);
            }
            let err = err.trim().trim_start_matches("error: ");
            return Err(format!(
                "{what} did not start{}",
                if err.is_empty() {
                    line.map_or(String::new(), |l| format!(" (it said `{l}`)"))
                } else {
                    format!(": {err}")
                }
            ));
        };
        let listening = listening.trim().to_string();
        // Nothing reads its error output any more: a server must not block
        // on a full pipe.
        drop(group.child().stderr.take());
        let input = if heartbeat {
            let (stop, rx) = mpsc::channel::<Vec<u8>>();
            let mut stdin = stdin;
            let thread = std::thread::spawn(move || {
                loop {
                    let line = match rx.recv_timeout(agent::HEARTBEAT) {
                        Ok(line) => line,
                        Err(mpsc::RecvTimeoutError::Timeout) => b"\n".to_vec(),
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    };
                    if stdin.write_all(&line).is_err() {
                        break;
                    }
                }
            });
            Input::Heartbeat { stop, thread }
        } else {
            Input::Plain(stdin)
        };
        Ok(Served {
            group,
            input: Some(input),
            listening,
        })
    }

    /// Closes its standard input: it stops serving.
    pub fn close_input(&mut self) {
        match self.input.take() {
            Some(Input::Plain(s)) => drop(s),
            Some(Input::Heartbeat { stop, thread }) => {
                drop(stop);
                let _ = thread.join();
            }
            None => {}
        }
    }

    /// Writes `line` to its input and waits up to `limit` for the next
    /// line of its output, which must start with `prefix` (`scalebench
    /// serve` answers `stats` with `accept-errors {…}`).
    pub fn ask(&mut self, line: &str, prefix: &str, limit: Duration) -> Result<String, String> {
        let bytes = format!("{line}\n").into_bytes();
        match self.input.as_mut() {
            Some(Input::Plain(s)) => s.write_all(&bytes).map_err(|e| e.to_string())?,
            Some(Input::Heartbeat { stop, .. }) => stop.send(bytes).map_err(|e| e.to_string())?,
            None => return Err("its input is closed".into()),
        }
        let stdout = self
            .group
            .child()
            .stdout
            .as_mut()
            .ok_or("no standard output")?;
        let fd = stdout.as_raw_fd();
        let answer = first_line(stdout, fd, limit)
            .ok_or_else(|| format!("no answer to `{line}` within {} s", limit.as_secs()))?;
        if answer.starts_with(prefix) {
            Ok(answer)
        } else {
            Err(format!("it answered `{answer}` to `{line}`"))
        }
    }

    /// The child (its standard output for what it prints at the end).
    pub fn child(&mut self) -> &mut Child {
        self.group.child()
    }

    /// The process group's id on this machine.
    pub fn pgid(&self) -> i32 {
        self.group.pgid()
    }

    /// Waits up to `limit` for it to end; whether it ended well (`None`:
    /// still running).
    pub fn wait(&mut self, limit: Duration) -> Option<bool> {
        let deadline = Instant::now() + limit;
        loop {
            match self.group.child().try_wait() {
                Ok(Some(st)) => return Some(st.success()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => return None,
            }
        }
    }

    /// The address in its `listening` line (`ADDR:PORT`, or a URL
    /// `scheme://ADDR:PORT/`).
    pub fn bound(&self) -> Result<SocketAddr, String> {
        let s = self.listening.as_str();
        let s = s.split_once("://").map_or(s, |(_, rest)| rest);
        let s = s.trim_end_matches('/');
        s.parse()
            .map_err(|_| format!("the server said it listens on `{}`", self.listening))
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.close_input();
    }
}

/// Waits up to `limit` for one line on `fd`.
fn first_line(r: &mut impl Read, fd: i32, limit: Duration) -> Option<String> {
    let mut line = Vec::new();
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || crate::stop::interrupted() {
            return None;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: polling one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, left.as_millis().min(200) as i32) } <= 0 {
            continue;
        }
        let mut b = [0u8; 1];
        match r.read(&mut b) {
            Ok(1) if b[0] == b'\n' => return Some(String::from_utf8_lossy(&line).into_owned()),
            Ok(1) => line.push(b[0]),
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::ifaddrs::IfAddr;

    #[test]
    fn host_arguments_parse_and_bad_ones_are_named() {
        let s: HostSpec = "server=ssh:root@198.18.1.2".parse().unwrap();
        assert_eq!(s.role, Role::Server);
        assert_eq!(s.reach.to_string(), "ssh:root@198.18.1.2");
        assert_eq!(s.bin, None);
        let b: HostSpec = "server=ssh:me@[2001:db8::1]:2222,bin=/usr/local/bin/scalebench"
            .parse()
            .unwrap();
        assert_eq!(b.reach.to_string(), "ssh:me@[2001:db8::1]:2222");
        assert_eq!(b.bin.as_deref(), Some("/usr/local/bin/scalebench"));
        let c: HostSpec = "client=netns:sb-t-h1".parse().unwrap();
        assert_eq!(c.reach, Reach::Netns("sb-t-h1".into()));
        assert_eq!(
            "server=local".parse::<HostSpec>().unwrap().reach,
            Reach::Local
        );
        for (bad, says) in [
            ("server", "ROLE=WHERE"),
            ("db=local", "`db` is not a role"),
            ("server=ftp:x", "a host is"),
            ("server=netns:", "namespace"),
            ("server=netns:a/b", "namespace"),
            ("server=ssh:", "ssh:"),
            ("server=ssh:h,bin=", "bin= needs a path"),
            ("server=ssh:h,bin=/a,bin=/b", "bin= given twice"),
            (
                "server=ssh:h,cpus=2",
                "`cpus=2` is not an option of an ssh host",
            ),
            (
                "server=netns:x,bin=/a",
                "bin= names the scalebench of an ssh host",
            ),
        ] {
            let e = bad.parse::<HostSpec>().unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_role_once_and_the_client_not_over_ssh() {
        let p = |s: &str| s.parse::<HostSpec>().unwrap();
        let e = check(&[p("server=local"), p("server=netns:x")]).unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let e = check(&[p("client=ssh:a@b")]).unwrap_err();
        assert!(e.contains("run scalebench on a@b"), "{e}");
        assert!(check(&[p("server=ssh:a@b")]).is_ok());
        // Several clients: each once, the first not over ssh, a server
        // they all reach.
        let several = [p("client=local"), p("client=ssh:c@d"), p("server=ssh:a@b")];
        assert!(check(&several).is_ok());
        let e = check(&[
            p("client=ssh:c@d"),
            p("client=netns:n"),
            p("server=ssh:a@b"),
        ])
        .unwrap_err();
        assert!(e.contains("the first client"), "{e}");
        let e = check(&[p("client=netns:n"), p("client=local"), p("server=ssh:a@b")]).unwrap_err();
        assert!(e.contains("a further client is netns:… or ssh:…"), "{e}");
        let e = check(&[p("client=local"), p("client=ssh:c@d"), p("client=ssh:c@d")]).unwrap_err();
        assert!(e.contains("--host client=ssh:c@d given twice"), "{e}");
        for server in [&[][..], &[p("server=local")][..]] {
            let mut specs = vec![p("client=local"), p("client=ssh:c@d")];
            specs.extend(server.iter().cloned());
            let e = check(&specs).unwrap_err();
            assert!(e.contains("2 clients need a server they all reach"), "{e}");
        }
        assert_eq!(
            client_netns(&[p("client=local"), p("client=ssh:c@d")]),
            None
        );
    }

    #[test]
    fn where_a_workload_ran_is_said_with_every_client() {
        let dir = Path::new("/nonexistent");
        let mut h = Hosts::local(None, dir);
        assert_eq!(h.said(true, true), "client local, server local");
        h.server.reach = Reach::Netns("s".into());
        for n in ["a", "b"] {
            let mut c = Host::local(Role::Client, None, dir);
            c.reach = Reach::Netns(n.into());
            h.more_clients.push(c);
        }
        assert_eq!(
            h.said(true, true),
            "clients local, netns:a, netns:b, server netns:s"
        );
        assert_eq!(
            h.said(true, false),
            "client local, server netns:s: this workload does not spread its load over several clients (not on netns:a, netns:b)"
        );
        assert_eq!(
            h.said(false, false),
            "local only: this workload does not run between hosts"
        );
        assert_eq!(h.records().len(), 4);
        assert!(h.lost(true).is_none());
    }

    #[test]
    fn the_address_on_the_clients_network_is_chosen() {
        let a = |ip: &str, prefix| IfAddr {
            interface: "i".into(),
            ip: ip.parse().unwrap(),
            prefix,
        };
        let hub = [a("127.0.0.1", 8), a("198.18.1.1", 24), a("198.18.2.1", 24)];
        let client = [a("127.0.0.1", 8), a("198.18.2.2", 24)];
        assert_eq!(
            choose(&hub, &client, false),
            Some("198.18.2.1".parse().unwrap())
        );
        // No shared network: the first usable one.
        assert_eq!(
            choose(&hub, &[a("10.0.0.2", 8)], false),
            Some("198.18.1.1".parse().unwrap())
        );
        assert_eq!(choose(&hub, &client, true), None);
    }

    #[test]
    fn this_machine_is_reached_over_loopback() {
        let h = Host::local(Role::Server, None, Path::new("/tmp"));
        assert_eq!(h.address(false).unwrap(), IpAddr::V4(Ipv4Addr::LOCALHOST));
        let bound: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(h.reachable(bound).unwrap(), bound);
        assert!(h.command(&[], false).is_err(), "no executable: an error");
    }

    #[test]
    fn served_addresses_parse_from_urls_and_pairs() {
        // A process that prints a line and waits for its input to end.
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo 'listening http://0.0.0.0:8080/'; cat >/dev/null",
        ]);
        let _one = crate::testing::one();
        let mut s = Served::start(cmd, "listening ", false, "a shell").unwrap();
        assert_eq!(s.bound().unwrap(), "0.0.0.0:8080".parse().unwrap());
        s.close_input();
        assert_eq!(s.wait(Duration::from_secs(10)), Some(true));
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo nonsense >&2; exit 3"]);
        let e = Served::start(cmd, "listening ", false, "a shell")
            .err()
            .expect("no listening line");
        assert!(e.contains("a shell did not start: nonsense"), "{e}");
    }
}
