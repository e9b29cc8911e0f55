//! Test beds: network namespaces on this machine joined by veth links,
//! standing in for hosts — `scalebench testbed up|status|down`, the
//! `forward` workload's source, router and sink, and the hosts a run may
//! reach with `ip netns exec` ([`Testbed::exec_prefix`]).
//!
//! **Topology: a star.** The first host is the hub: every other host is
//! joined to it by a veth pair of its own, on a /24 of its own in
//! 198.18.0.0/15 (RFC 2544's benchmarking range): the k-th leaf's link is
//! 198.18.k.0/24, the hub `.1`, the leaf `.2`. The hub forwards
//! (`net.ipv4.ip_forward=1`); the leaves do not, and route 198.18.0.0/15
//! via the hub, so every host reaches every other, through the hub — one
//! hop between any two leaves, the hub being the router in the middle.
//! A star rather than a chain keeps every path one router long whatever
//! the number of hosts, and makes the three-host test bed exactly the
//! forwarding test's source — router — sink.
//!
//! Nothing is made in the caller's namespace: each veth pair is created
//! inside the hub's namespace with its other end moved straight into the
//! leaf's, the interface on host A towards host B is named `to-B`, and
//! each has a fixed locally administered MAC (`02:73:62:00:AA:BB`, A and B
//! the hosts' numbers) so that the neighbours across every link are
//! written in as permanent entries: no ARP traffic, no entry expiring
//! during a measurement. Optional shaping puts a `tbf` qdisc on both ends
//! of every link; an optional sshd runs in every namespace ([`sshd`]).
//!
//! Names: the namespaces are `sb-NAME-HOST` (`sb-tb-h1`…), NAME unique to
//! the test bed, so test beds of different names never meet. What a test
//! bed is made of is written to its state file (`state.json` in its
//! directory, by default `sb-testbed-NAME` in the system temp dir)
//! *before* each thing is made, so that `down`, the next `up` of the same
//! name, or (for a workload's test bed inside a run's work directory) the
//! next run, can remove what a killed `up` left. Only what the state file
//! names is ever removed, and processes only by PID, after checking they
//! are the ones started here.

mod force;
pub mod sshd;

pub use force::force_down;

use crate::harness::reaper;
use anyhow::{Context, anyhow, bail};
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The range every address of a test bed comes from (RFC 2544).
pub const RANGE: &str = "198.18.0.0/15";
/// The IPv6 benchmarking range (RFC 5180): the k-th link is
/// 2001:2:0:k::/64.
pub const RANGE6: &str = "2001:2::/48";

/// The most hosts one test bed has.
pub const MAX_HOSTS: usize = 64;

/// The prefix of every namespace a test bed makes.
pub const PREFIX: &str = "sb-";

/// The state file inside a test bed's directory.
pub const STATE_FILE: &str = "state.json";

/// The version of the state file this build writes and reads.
pub const STATE_VERSION: u32 = 1;

/// How long one `ip` or `tc` command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(20);

/// What a test bed is to be.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// Its name (letters, digits, `-`, `_`; at most 24), unique among the
    /// test beds alive at once.
    pub name: String,
    /// Its hosts' names (letters, digits, `-`, `_`; at most 12): the first
    /// is the hub.
    pub hosts: Vec<String>,
    /// Shape every link to this many bits per second (tbf on both ends).
    pub link_bits: Option<u64>,
    /// Start an sshd in every namespace.
    pub sshd: bool,
    /// Keep IPv6 on (link-local addresses, router solicitations); off, the
    /// links carry only what is sent on them.
    pub ipv6: bool,
    /// Its directory (state file, keys, sshd files); made by `up`,
    /// removed by `down`.
    pub dir: PathBuf,
    /// A pause between the steps of `up` (for tests that kill it mid-way).
    pub pause: Duration,
}

impl Spec {
    /// `hosts` hosts named `h1`, `h2`, … in the default directory of `name`.
    pub fn numbered(name: &str, hosts: usize) -> Spec {
        Spec {
            name: name.to_string(),
            hosts: (1..=hosts).map(|i| format!("h{i}")).collect(),
            link_bits: None,
            sshd: false,
            ipv6: true,
            dir: default_dir(name),
            pause: Duration::ZERO,
        }
    }

    /// Whether it can be made: the names and the number of hosts.
    pub fn check(&self) -> Result<(), String> {
        check_name(&self.name)?;
        if self.hosts.is_empty() || self.hosts.len() > MAX_HOSTS {
            return Err(format!(
                "{} hosts: a test bed has 1 to {MAX_HOSTS}",
                self.hosts.len()
            ));
        }
        for (i, h) in self.hosts.iter().enumerate() {
            check_word(h, 12, "host name")?;
            if self.hosts[..i].contains(h) {
                return Err(format!("host name `{h}` given twice"));
            }
        }
        if let Some(b) = self.link_bits {
            check_rate(b).map_err(|e| format!("link rate: {e}"))?;
        }
        Ok(())
    }
}

/// The default directory of the test bed `name`: `sb-testbed-NAME` in the
/// system temp dir.
pub fn default_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("sb-testbed-{name}"))
}

fn check_word(s: &str, max: usize, what: &str) -> Result<(), String> {
    if s.is_empty()
        || s.len() > max
        || s.starts_with('-')
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "`{s}` is not a {what}: 1 to {max} letters, digits, `-` or `_`, not starting with `-`"
        ));
    }
    Ok(())
}

/// A test bed's name: 1 to 24 letters, digits, `-` or `_`.
pub fn check_name(s: &str) -> Result<(), String> {
    check_word(s, 24, "test bed name")
}

/// The slowest and fastest link rates, bits per second.
const RATES: (u64, u64) = (1_000, 100_000_000_000);

fn check_rate(bits: u64) -> Result<u64, String> {
    if (RATES.0..=RATES.1).contains(&bits) {
        Ok(bits)
    } else {
        Err(format!(
            "{} is out of range: 1kbit to 100gbit",
            fmt_rate(bits)
        ))
    }
}

/// A link rate as `tc` writes them, SI units of bits: `1gbit`, `100mbit`,
/// `10mbit`, `2.5gbit`, `512kbit`, `1000000bit` (case does not matter);
/// 1 kbit/s to 100 Gbit/s. Bits per second.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let bad = || {
        format!(
            "`{s}` is not a link rate: write a number and bit, kbit, mbit or gbit (1gbit, 100mbit, 10mbit)"
        )
    };
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(bad)?;
    let (num, unit) = t.split_at(split);
    let scale: f64 = match unit {
        "bit" => 1.0,
        "kbit" => 1e3,
        "mbit" => 1e6,
        "gbit" => 1e9,
        "tbit" => 1e12,
        "bps" | "kbps" | "mbps" | "gbps" => {
            return Err(format!(
                "`{s}`: tc reads {unit} as bytes per second; write the rate in bits (100mbit)"
            ));
        }
        _ => return Err(bad()),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let bits = n * scale;
    if !(1.0..=1e15).contains(&bits) {
        return Err(format!("`{s}` is out of range: 1kbit to 100gbit"));
    }
    check_rate(bits.round() as u64).map_err(|e| format!("`{s}`: {e}"))
}

/// A rate in words: `100 Mbit/s`.
pub fn fmt_rate(bits: u64) -> String {
    let b = bits as f64;
    let (v, u) = if b >= 1e9 {
        (b / 1e9, "Gbit/s")
    } else if b >= 1e6 {
        (b / 1e6, "Mbit/s")
    } else if b >= 1e3 {
        (b / 1e3, "kbit/s")
    } else {
        (b, "bit/s")
    };
    let n = format!("{v:.3}");
    let n = n.trim_end_matches('0').trim_end_matches('.');
    format!("{n} {u}")
}

/// What a test bed is made of: written to its state file before each
/// thing is made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// The state file's version ([`STATE_VERSION`]; absent: 1).
    #[serde(default = "first_version")]
    pub version: u32,
    /// Its name.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// The process that made it (`testbed up`, or a run).
    pub made_by: u32,
    /// When, UTC (RFC 3339).
    pub made_at: String,
    /// Everything was made (`false`: `up` is at work, or died mid-way).
    pub complete: bool,
    /// The topology in words.
    pub topology: String,
    /// The rate every link is shaped to, bits per second (tbf on both
    /// ends); `None`: not shaped.
    pub link_bits_per_s: Option<u64>,
    /// IPv6 left on.
    pub ipv6: bool,
    /// The hosts, the hub first.
    pub hosts: Vec<Host>,
    /// The ssh keys, with `--sshd`.
    pub ssh: Option<sshd::SshFiles>,
}

fn first_version() -> u32 {
    1
}

/// One host: a network namespace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    /// Its name in the test bed (`h1`, `router`).
    pub name: String,
    /// Its network namespace (`sb-tb-h1`).
    pub netns: String,
    /// The namespace's inode once made (its identity: a namespace of the
    /// same name made by someone else later is not ours).
    pub inode: Option<u64>,
    /// It forwards between its links (the hub).
    pub forwarding: bool,
    /// Its links.
    pub links: Vec<Link>,
    /// Its routes beyond its links' subnets, as `ip route` takes them.
    pub routes: Vec<String>,
    /// Its sshd, with `--sshd`.
    pub sshd: Option<sshd::Sshd>,
}

impl Host {
    /// Its addresses, one per link.
    pub fn addresses(&self) -> Vec<Ipv4Addr> {
        self.links.iter().map(|l| l.address).collect()
    }

    /// The path of its namespace.
    pub fn netns_path(&self) -> PathBuf {
        netns_path(&self.netns)
    }
}

/// One end of a veth link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// The interface (`to-h2`).
    pub dev: String,
    /// Its MAC address.
    pub mac: String,
    /// Its address.
    pub address: Ipv4Addr,
    /// The subnet's prefix length.
    pub prefix: u8,
    /// The host at the other end.
    pub peer: String,
    /// The other end's interface.
    pub peer_dev: String,
    /// The other end's address.
    pub peer_address: Ipv4Addr,
    /// The other end's MAC address.
    pub peer_mac: String,
    /// Its IPv6 address (a /64 of [`RANGE6`]), when the test bed keeps
    /// IPv6 on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address6: Option<std::net::Ipv6Addr>,
    /// The other end's IPv6 address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_address6: Option<std::net::Ipv6Addr>,
}

/// `/run/netns/NAME`, where `ip netns` keeps a namespace.
pub fn netns_path(netns: &str) -> PathBuf {
    Path::new("/run/netns").join(netns)
}

/// The MAC of host `a`'s end of its link to host `b` (1-based numbers).
fn mac(a: usize, b: usize) -> String {
    format!("02:73:62:00:{a:02x}:{b:02x}")
}

/// The plan of `spec`: every name, address and route, nothing made.
pub fn plan(spec: &Spec) -> State {
    let n = spec.hosts.len();
    let hub = &spec.hosts[0];
    let mut hosts: Vec<Host> = spec
        .hosts
        .iter()
        .enumerate()
        .map(|(i, h)| Host {
            name: h.clone(),
            netns: format!("{PREFIX}{}-{h}", spec.name),
            inode: None,
            forwarding: i == 0 && n > 1,
            links: Vec::new(),
            routes: Vec::new(),
            sshd: None,
        })
        .collect();
    for k in 1..n {
        let leaf = &spec.hosts[k];
        let net = |last: u8| Ipv4Addr::new(198, 18, k as u8, last);
        let net6 = |last: u16| {
            spec.ipv6
                .then(|| std::net::Ipv6Addr::new(0x2001, 2, 0, k as u16, 0, 0, 0, last))
        };
        hosts[0].links.push(Link {
            dev: format!("to-{leaf}"),
            mac: mac(1, k + 1),
            address: net(1),
            prefix: 24,
            peer: leaf.clone(),
            peer_dev: format!("to-{hub}"),
            peer_address: net(2),
            peer_mac: mac(k + 1, 1),
            address6: net6(1),
            peer_address6: net6(2),
        });
        hosts[k].links.push(Link {
            dev: format!("to-{hub}"),
            mac: mac(k + 1, 1),
            address: net(2),
            prefix: 24,
            peer: hub.clone(),
            peer_dev: format!("to-{leaf}"),
            peer_address: net(1),
            peer_mac: mac(1, k + 1),
            address6: net6(2),
            peer_address6: net6(1),
        });
        hosts[k].routes.push(format!("{RANGE} via {}", net(1)));
        if let Some(hub6) = net6(1) {
            hosts[k].routes.push(format!("{RANGE6} via {hub6}"));
        }
    }
    State {
        version: STATE_VERSION,
        name: spec.name.clone(),
        dir: spec.dir.clone(),
        made_by: std::process::id(),
        made_at: crate::results::now_rfc3339(),
        complete: false,
        topology: if n > 1 {
            format!("star: {hub} is the hub, linked to each other host and forwarding between them")
        } else {
            format!("one host, {hub}, without links")
        },
        link_bits_per_s: spec.link_bits,
        ipv6: spec.ipv6,
        hosts,
        ssh: None,
    }
}

/// A test bed that exists: removed when dropped, unless [`keep`](Testbed::keep)
/// hands it over to outlive this process.
#[derive(Debug)]
pub struct Testbed {
    state: State,
    armed: bool,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if self.armed {
            teardown(&self.state);
        }
    }
}

/// Runs `cmd` to its end (also after ^C: it may be undoing something),
/// killed after [`COMMAND_LIMIT`]; its standard output, or an error
/// quoting its standard error.
fn run(cmd: &mut Command, what: &str) -> anyhow::Result<String> {
    let f = reaper::run_to_end(cmd, COMMAND_LIMIT).map_err(|e| {
        let program = cmd.get_program().to_string_lossy().into_owned();
        if e.kind() == std::io::ErrorKind::NotFound {
            let package = match program.as_str() {
                "ssh-keygen" => "openssh-client",
                _ => "iproute2",
            };
            anyhow!("{what}: {program} not found (Debian: apt-get install {package})")
        } else {
            anyhow!("{what}: {e}")
        }
    })?;
    match f.status {
        Some(s) if s.success() => Ok(f.stdout),
        _ if f.timed_out => bail!("{what}: no answer in {} s", COMMAND_LIMIT.as_secs()),
        _ => bail!(
            "{what} failed: {}",
            f.stderr
                .lines()
                .chain(f.stdout.lines())
                .filter(|l| !l.trim().is_empty())
                .take(4)
                .collect::<Vec<_>>()
                .join(" / ")
        ),
    }
}

/// Writes `state` to its state file, atomically.
fn save(state: &State) -> anyhow::Result<()> {
    let path = state.dir.join(STATE_FILE);
    let tmp = state.dir.join(format!("{STATE_FILE}.new"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(state)?)
        .with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Reads the state file in `dir`; an error names the file and what is
/// wrong with it ([`parse_state`]).
pub fn load(dir: &Path) -> anyhow::Result<State> {
    let path = dir.join(STATE_FILE);
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    parse_state(&text).map_err(|why| anyhow!("the state file {} {why}", path.display()))
}

/// A state file's text as a [`State`], or what is wrong with it: cut
/// short, not JSON, of another version, or not a test bed's state.
pub fn parse_state(text: &str) -> Result<State, String> {
    use serde_json::error::Category;
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| match e.classify() {
        Category::Eof if text.trim().is_empty() => "is empty".to_string(),
        Category::Eof => format!("is cut short ({e})"),
        _ => format!("is damaged: not JSON ({e})"),
    })?;
    match v.get("version") {
        None => {}
        Some(n) if n.as_u64() == Some(u64::from(STATE_VERSION)) => {}
        Some(n) => {
            return Err(format!(
                "is of version {n}, not {STATE_VERSION}: written by another scalebench"
            ));
        }
    }
    serde_json::from_value(v).map_err(|e| format!("is not a test bed's state ({e})"))
}

/// How to remove a test bed whose state file cannot be read, in words.
pub fn way_out(name: &str) -> String {
    format!(
        "`scalebench testbed down --name {name} --force` removes what it made, found by its names ({PREFIX}{name}-… namespaces, {})",
        default_dir(name).display()
    )
}

impl Testbed {
    /// Makes the test bed of `spec`, first removing a test bed of the same
    /// name that a dead `up` or an earlier one left (said in the notes
    /// returned). `stop` is asked between steps (^C): then, as on any
    /// error, what was made is removed and an error returned.
    pub fn up(spec: &Spec, stop: &dyn Fn() -> bool) -> anyhow::Result<(Testbed, Vec<String>)> {
        crate::sys::netns::privileged().map_err(|e| anyhow!(e))?;
        spec.check().map_err(|e| anyhow!(e))?;
        let mut notes = Vec::new();
        if spec.dir.join(STATE_FILE).exists() {
            let old = load(&spec.dir).map_err(|e| {
                if spec.dir == default_dir(&spec.name) {
                    anyhow!("test bed {}: {e:#}: {}", spec.name, way_out(&spec.name))
                } else {
                    e
                }
            })?;
            if !old.complete
                && old.made_by != std::process::id()
                && crate::sys::process_alive(old.made_by)
            {
                bail!(
                    "test bed {} is being made by process {} right now",
                    old.name,
                    old.made_by
                );
            }
            let removed = teardown(&old);
            notes.push(format!(
                "removed the test bed {} made by process {} at {}{}: {}",
                old.name,
                old.made_by,
                old.made_at,
                if old.complete {
                    ""
                } else {
                    " (never finished)"
                },
                removed.join("; ")
            ));
        } else if spec.dir.exists() {
            // Made by an `up` killed before it wrote anything: empty.
            std::fs::remove_dir(&spec.dir).map_err(|_| {
                anyhow!(
                    "{} exists and holds no test bed state: not touched",
                    spec.dir.display()
                )
            })?;
        }
        let state = plan(spec);
        for h in &state.hosts {
            if h.netns_path().exists() {
                bail!(
                    "network namespace {} exists and is not recorded as test bed {}'s: not touched (`ip netns del {}` removes it)",
                    h.netns,
                    spec.name,
                    h.netns
                );
            }
        }
        make_dir(&spec.dir)?;
        save(&state)?;
        // From here on, dropping the guard removes what was made.
        let mut tb = Testbed { state, armed: true };
        let step = |tb: &Testbed| -> anyhow::Result<()> {
            if stop() {
                bail!("interrupted");
            }
            if !spec.pause.is_zero() {
                std::thread::sleep(spec.pause);
            }
            save(&tb.state)
        };
        tb.make_namespaces()?;
        step(&tb)?;
        tb.set_sysctls()?;
        step(&tb)?;
        tb.make_links()?;
        step(&tb)?;
        if let Some(bits) = spec.link_bits {
            tb.shape(bits)?;
            step(&tb)?;
        }
        if spec.sshd {
            tb.start_sshd(stop)?;
            step(&tb)?;
        }
        tb.wait_links_up(stop)?;
        tb.state.complete = true;
        save(&tb.state)?;
        Ok((tb, notes))
    }

    /// The test bed whose state file is in `dir`, as it was recorded;
    /// dropping it does not remove it (call [`down`](Testbed::down)).
    pub fn open(dir: &Path) -> anyhow::Result<Testbed> {
        Ok(Testbed {
            state: load(dir)?,
            armed: false,
        })
    }

    /// Its state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Hands the test bed over to outlive this process (`testbed up`):
    /// dropping it no longer removes it.
    pub fn keep(mut self) -> State {
        self.armed = false;
        self.state.clone()
    }

    /// Removes everything: its processes (by PID, only those started
    /// here), namespaces (with their links) and files. What it did, in
    /// words.
    pub fn down(mut self) -> Vec<String> {
        self.armed = false;
        teardown(&self.state)
    }

    /// The host named `name`.
    pub fn host(&self, name: &str) -> Option<&Host> {
        self.state.hosts.iter().find(|h| h.name == name)
    }

    fn host_or_err(&self, name: &str) -> anyhow::Result<&Host> {
        self.host(name)
            .ok_or_else(|| anyhow!("test bed {} has no host {name}", self.state.name))
    }

    /// The command prefix that runs a program on host `name`: `ip netns
    /// exec NS`.
    pub fn exec_prefix(&self, name: &str) -> anyhow::Result<Vec<String>> {
        let h = self.host_or_err(name)?;
        Ok(["ip", "netns", "exec", &h.netns]
            .iter()
            .map(|s| s.to_string())
            .collect())
    }

    /// `program` to be run on host `name` (`ip netns exec NS program`).
    pub fn command(&self, name: &str, program: &str) -> anyhow::Result<Command> {
        let p = self.exec_prefix(name)?;
        let mut c = Command::new(&p[0]);
        c.args(&p[1..]).arg(program);
        Ok(c)
    }

    /// Runs `f` on a thread inside host `name`'s namespace (sockets it
    /// opens are that host's).
    pub fn run_in<T: Send>(&self, name: &str, f: impl FnOnce() -> T + Send) -> anyhow::Result<T> {
        let h = self.host_or_err(name)?;
        crate::sys::netns::run_in(&h.netns_path(), f)
            .with_context(|| format!("entering namespace {}", h.netns))
    }

    /// Writes `value` to the sysctl `name` (`net.ipv4.ip_forward`) inside
    /// host `host`'s namespace (it goes with the namespace).
    pub fn set_sysctl(&self, host: &str, name: &str, value: &str) -> anyhow::Result<()> {
        let path = crate::sys::netns::sysctl_path(name);
        let ns = &self.host_or_err(host)?.netns;
        self.run_in(host, || std::fs::write(&path, value))?
            .with_context(|| format!("{name} = {value} in {ns}"))
    }

    /// Reads the sysctl `name` inside host `host`'s namespace.
    pub fn sysctl(&self, host: &str, name: &str) -> Option<String> {
        let path = crate::sys::netns::sysctl_path(name);
        self.run_in(host, || std::fs::read_to_string(&path))
            .ok()?
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// Runs `ip -n NS -batch` over `lines` (each an `ip` command without
    /// the `ip`) in host `host`'s namespace.
    pub fn ip_batch(&self, host: &str, lines: &[String]) -> anyhow::Result<()> {
        let h = self.host_or_err(host)?;
        self.batch("ip", Some(&h.netns), &format!("ip-{}", h.name), lines)
    }

    /// Runs `program [-n NS] -batch FILE` with `lines` in a file in the
    /// test bed's directory (kept there: what was run).
    fn batch(
        &self,
        program: &str,
        netns: Option<&str>,
        file: &str,
        lines: &[String],
    ) -> anyhow::Result<()> {
        if lines.is_empty() {
            return Ok(());
        }
        let path = self.state.dir.join(format!("{file}.batch"));
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
        let mut c = Command::new(program);
        if let Some(ns) = netns {
            c.args(["-n", ns]);
        }
        c.arg("-batch").arg(&path);
        run(
            &mut c,
            &format!(
                "{program} {}-batch {}",
                netns.map_or(String::new(), |n| format!("-n {n} ")),
                path.display()
            ),
        )?;
        Ok(())
    }

    fn make_namespaces(&mut self) -> anyhow::Result<()> {
        let lines: Vec<String> = self
            .state
            .hosts
            .iter()
            .map(|h| format!("netns add {}", h.netns))
            .collect();
        let r = self.batch("ip", None, "netns", &lines);
        // Record what exists, made or not.
        for h in &mut self.state.hosts {
            h.inode = crate::sys::netns::inode(&h.netns_path());
        }
        r
    }

    fn set_sysctls(&self) -> anyhow::Result<()> {
        for h in &self.state.hosts {
            self.set_sysctl(
                &h.name,
                "net.ipv4.ip_forward",
                if h.forwarding { "1" } else { "0" },
            )?;
            // A kernel without IPv6 has nothing to turn off.
            if !self.state.ipv6 && crate::sys::netns::has_ipv6() {
                for scope in ["all", "default"] {
                    self.set_sysctl(&h.name, &format!("net.ipv6.conf.{scope}.disable_ipv6"), "1")?;
                }
            }
            if self.state.ipv6 && h.forwarding && crate::sys::netns::has_ipv6() {
                self.set_sysctl(&h.name, "net.ipv6.conf.all.forwarding", "1")?;
            }
        }
        Ok(())
    }

    /// Waits (up to 5 s) until every link is operationally up: the
    /// kernel reports a veth's carrier up to a second after both ends were
    /// set up, and until then it drops what is sent — a first connection
    /// of a benchmark would wait out a retransmission.
    fn wait_links_up(&self, stop: &dyn Fn() -> bool) -> anyhow::Result<()> {
        let start = std::time::Instant::now();
        loop {
            let mut down = Vec::new();
            for h in &self.state.hosts {
                if h.links.is_empty() {
                    continue;
                }
                let out = run(
                    Command::new("ip").args(["-j", "-n", &h.netns, "link", "show"]),
                    "ip link show",
                )?;
                let links: Vec<serde_json::Value> = serde_json::from_str(&out).unwrap_or_default();
                for l in &h.links {
                    let up = links.iter().any(|j| {
                        j["ifname"].as_str() == Some(l.dev.as_str()) && j["operstate"] == "UP"
                    });
                    if !up {
                        down.push(format!("{} {}", h.netns, l.dev));
                    }
                }
            }
            if down.is_empty() {
                return Ok(());
            }
            if stop() {
                bail!("interrupted");
            }
            if start.elapsed() > Duration::from_secs(5) {
                bail!("links still down after 5 s: {}", down.join(", "));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn make_links(&self) -> anyhow::Result<()> {
        let hub = &self.state.hosts[0];
        let mut lines = vec!["link set lo up".to_string()];
        for l in &hub.links {
            let peer = self.host_or_err(&l.peer)?;
            lines.push(format!(
                "link add {} address {} type veth peer name {} address {} netns {}",
                l.dev, l.mac, l.peer_dev, l.peer_mac, peer.netns
            ));
        }
        for h in &self.state.hosts {
            if h.name != hub.name {
                lines = vec!["link set lo up".to_string()];
            }
            for l in &h.links {
                lines.push(format!("addr add {}/{} dev {}", l.address, l.prefix, l.dev));
                lines.push(format!("link set {} up", l.dev));
                lines.push(format!(
                    "neigh replace {} lladdr {} dev {} nud permanent",
                    l.peer_address, l.peer_mac, l.dev
                ));
                if let (Some(a), Some(p)) = (l.address6, l.peer_address6) {
                    // No duplicate address detection: usable at once.
                    lines.push(format!("addr add {a}/64 dev {} nodad", l.dev));
                    lines.push(format!(
                        "neigh replace {p} lladdr {} dev {} nud permanent",
                        l.peer_mac, l.dev
                    ));
                }
            }
            for r in &h.routes {
                lines.push(format!("route add {r}"));
            }
            self.ip_batch(&h.name, &lines)?;
        }
        Ok(())
    }

    /// A tbf qdisc at `bits` per second on both ends of every link: a
    /// bucket of 4 ms at that rate (at least two full frames), packets
    /// queued at most 50 ms.
    fn shape(&self, bits: u64) -> anyhow::Result<()> {
        let burst = (bits / 8 / 250).max(3_100);
        for h in &self.state.hosts {
            let lines: Vec<String> = h
                .links
                .iter()
                .map(|l| {
                    format!(
                        "qdisc replace dev {} root tbf rate {bits}bit burst {burst} latency 50ms",
                        l.dev
                    )
                })
                .collect();
            self.batch("tc", Some(&h.netns), &format!("tc-{}", h.name), &lines)?;
        }
        Ok(())
    }

    fn start_sshd(&mut self, stop: &dyn Fn() -> bool) -> anyhow::Result<()> {
        let bin = sshd::find_sshd()?;
        let addrs: Vec<Ipv4Addr> = self
            .state
            .hosts
            .iter()
            .flat_map(|h| h.addresses())
            .collect();
        let files = sshd::keys(&self.state.dir, &self.state.name, &addrs)?;
        self.state.ssh = Some(files.clone());
        for i in 0..self.state.hosts.len() {
            if stop() {
                bail!("interrupted");
            }
            let name = self.state.name.clone();
            let h = &mut self.state.hosts[i];
            let mut s = sshd::configure(&self.state.dir, &name, &h.name, &files)?;
            // Recorded before it starts: a killed `up` leaves its PID file.
            h.sshd = Some(s.clone());
            save(&self.state)?;
            let h = &mut self.state.hosts[i];
            let r = sshd::start(&bin, &h.netns, &mut s);
            h.sshd = Some(s);
            save(&self.state)?;
            r?;
        }
        Ok(())
    }
}

/// Makes the test bed's directory, readable by root only.
fn make_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("making {}", dir.display()))
}

/// Live processes inside the namespace with inode `inode`.
pub(crate) fn processes_in(inode: u64) -> Vec<(u32, String)> {
    use crate::sys::procs;
    procs::processes()
        .into_iter()
        .filter(|p| !p.zombie && procs::netns_inode(p.pid) == Some(inode))
        .map(|p| (p.pid, procs::comm(p.pid).unwrap_or_default()))
        .collect()
}

/// Removes what `state` records: sshd processes (by PID, checked to be
/// the ones started here, with what they started), then the namespaces
/// (their links go with them), then the directory. What it did, in words.
fn teardown(state: &State) -> Vec<String> {
    let mut notes = Vec::new();
    for h in &state.hosts {
        if let Some(s) = &h.sshd {
            notes.extend(sshd::stop(s, h.inode));
        }
    }
    let mut gone = Vec::new();
    for h in &state.hosts {
        let path = h.netns_path();
        let now = crate::sys::netns::inode(&path);
        match (now, h.inode) {
            (None, _) => continue,
            (Some(a), Some(b)) if a != b => {
                notes.push(format!(
                    "{} is another namespace than the one made here: not touched",
                    h.netns
                ));
                continue;
            }
            _ => {}
        }
        let left = now.map(processes_in).unwrap_or_default();
        match run(
            Command::new("ip").args(["netns", "del", &h.netns]),
            &format!("ip netns del {}", h.netns),
        ) {
            Ok(_) => {
                gone.push(h.netns.clone());
                if !left.is_empty() {
                    notes.push(format!(
                        "{} still holds processes this test bed did not start ({}): it lives on, without its name, until they end",
                        h.netns,
                        left.iter()
                            .map(|(p, c)| format!("{p} {c}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            Err(e) => notes.push(format!("{e:#}")),
        }
    }
    if !gone.is_empty() {
        let links: usize = state
            .hosts
            .iter()
            .filter(|h| gone.contains(&h.netns))
            .map(|h| h.links.len())
            .sum();
        notes.push(format!(
            "namespaces {} removed{}",
            gone.join(", "),
            if links > 0 { " with their links" } else { "" }
        ));
    }
    // Only a directory holding this state file, never through a link.
    let dir = &state.dir;
    let ours =
        std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir()) && dir.join(STATE_FILE).is_file();
    if ours {
        match std::fs::remove_dir_all(dir) {
            Ok(()) => notes.push(format!("{} removed", dir.display())),
            Err(e) => notes.push(format!("removing {}: {e}", dir.display())),
        }
    }
    notes
}

/// What a test bed looks like now, beside what its state file says.
#[derive(Debug, Clone, Serialize)]
pub struct Live {
    /// The state file.
    pub state: State,
    /// Each host as found now.
    pub hosts: Vec<LiveHost>,
}

/// One host as found now.
#[derive(Debug, Clone, Serialize)]
pub struct LiveHost {
    /// Its name.
    pub name: String,
    /// Its namespace exists and is the one made.
    pub present: bool,
    /// Its sshd's PID, when that lives.
    pub sshd_alive: Option<u32>,
    /// The root qdisc of each link (`tbf 100 Mbit/s`, `noqueue`).
    pub qdiscs: std::collections::BTreeMap<String, String>,
}

/// The root qdisc of each link of `host`: `tbf 100 Mbit/s` or its kind.
fn qdiscs(host: &Host) -> std::collections::BTreeMap<String, String> {
    let netns = host.netns.as_str();
    let mut m = std::collections::BTreeMap::new();
    let Ok(out) = run(
        Command::new("tc").args(["-n", netns, "-j", "qdisc", "show"]),
        "tc qdisc show",
    ) else {
        return m;
    };
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    for q in v.as_array().into_iter().flatten() {
        if q["root"].as_bool() != Some(true) {
            continue;
        }
        let (Some(dev), Some(kind)) = (q["dev"].as_str(), q["kind"].as_str()) else {
            continue;
        };
        if !host.links.iter().any(|l| l.dev == dev) {
            continue;
        }
        let rate = q["options"]["rate"].as_u64().map(|b| fmt_rate(b * 8));
        m.insert(
            dev.to_string(),
            match rate {
                Some(r) => format!("{kind} {r}"),
                None => kind.to_string(),
            },
        );
    }
    m
}

impl Testbed {
    /// How it is now: namespaces present, sshd alive, qdiscs.
    pub fn live(&self) -> Live {
        let hosts = self
            .state
            .hosts
            .iter()
            .map(|h| {
                let now = crate::sys::netns::inode(&h.netns_path());
                let present = now.is_some() && (h.inode.is_none() || now == h.inode);
                LiveHost {
                    name: h.name.clone(),
                    present,
                    sshd_alive: h.sshd.as_ref().and_then(|s| sshd::alive(s, h.inode)),
                    qdiscs: if present {
                        qdiscs(h)
                    } else {
                        Default::default()
                    },
                }
            })
            .collect();
        Live {
            state: self.state.clone(),
            hosts,
        }
    }
}

/// `live` in words, for `testbed status` and `up`.
pub fn describe(live: &Live) -> String {
    use std::fmt::Write;
    let s = &live.state;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "test bed {}: {} namespace{}, {}; links {}",
        s.name,
        s.hosts.len(),
        if s.hosts.len() == 1 { "" } else { "s" },
        s.topology,
        s.link_bits_per_s
            .map_or("not shaped".to_string(), |b| format!(
                "shaped to {} (tbf, both ends)",
                fmt_rate(b)
            ))
    );
    let _ = writeln!(
        o,
        "  made by process {} at {}{}; state {}",
        s.made_by,
        s.made_at,
        if s.complete {
            String::new()
        } else if crate::sys::process_alive(s.made_by) {
            ", still being made".to_string()
        } else {
            ", never finished (that process is gone): `testbed down` or the next `up` removes it"
                .to_string()
        },
        s.dir.join(STATE_FILE).display()
    );
    for (h, l) in s.hosts.iter().zip(&live.hosts) {
        let _ = writeln!(
            o,
            "  {}{}: {}",
            h.netns,
            if h.forwarding { " (forwards)" } else { "" },
            if l.present { "present" } else { "MISSING" }
        );
        for k in &h.links {
            let _ = writeln!(
                o,
                "    {:<12} {}/{}{} {} → {} {} ({}){}",
                k.dev,
                k.address,
                k.prefix,
                k.address6.map_or(String::new(), |a| format!(" {a}/64")),
                k.mac,
                k.peer,
                k.peer_address,
                k.peer_dev,
                l.qdiscs
                    .get(&k.dev)
                    .map_or(String::new(), |q| format!(", qdisc {q}"))
            );
        }
        for r in &h.routes {
            let _ = writeln!(o, "    route {r}");
        }
        if let Some(ss) = &h.sshd {
            let _ = writeln!(
                o,
                "    sshd {}",
                match (l.sshd_alive, ss.pid) {
                    (Some(p), _) => format!("pid {p} alive, port {}", ss.port),
                    (None, Some(p)) => format!("pid {p} NOT running (log {})", ss.log.display()),
                    (None, None) => "never started".to_string(),
                }
            );
        }
    }
    if let (Some(k), Some(first), Some(second)) = (&s.ssh, s.hosts.first(), s.hosts.get(1)) {
        let to = second
            .addresses()
            .first()
            .copied()
            .unwrap_or(Ipv4Addr::UNSPECIFIED);
        let _ = writeln!(
            o,
            "  ssh: ip netns exec {} ssh -i {} -o UserKnownHostsFile={} -o IdentitiesOnly=yes root@{to}",
            first.netns,
            k.client_key.display(),
            k.known_hosts.display(),
        );
        if !k.config.as_os_str().is_empty() {
            let _ = writeln!(
                o,
                "  run: scalebench run --host client=netns:{} --host server=ssh:root@{to} --ssh-config {}",
                first.netns,
                k.config.display()
            );
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_units_and_bad_ones_are_named() {
        assert_eq!(parse_rate("1gbit"), Ok(1_000_000_000));
        assert_eq!(parse_rate("100mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("10Mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("2.5gbit"), Ok(2_500_000_000));
        assert_eq!(parse_rate("512kbit"), Ok(512_000));
        assert_eq!(parse_rate("1000000bit"), Ok(1_000_000));
        for (bad, says) in [
            ("5parsecs", "`5parsecs` is not a link rate"),
            ("100", "is not a link rate"),
            ("mbit", "is not a link rate"),
            ("1.2.3mbit", "is not a link rate"),
            ("-1mbit", "is not a link rate"),
            ("100mbps", "bytes per second"),
            ("0mbit", "out of range"),
            ("500bit", "out of range"),
            ("1tbit", "out of range"),
            ("", "is not a link rate"),
        ] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
        assert_eq!(fmt_rate(100_000_000), "100 Mbit/s");
        assert_eq!(fmt_rate(2_500_000_000), "2.5 Gbit/s");
    }

    #[test]
    fn a_state_file_says_what_is_wrong_with_it() {
        let good = serde_json::to_string(&plan(&Spec::numbered("t", 2))).unwrap();
        assert_eq!(parse_state(&good).unwrap().hosts.len(), 2);
        // Written before the version was: version 1.
        let mut v: serde_json::Value = serde_json::from_str(&good).unwrap();
        v.as_object_mut().unwrap().remove("version");
        assert_eq!(parse_state(&v.to_string()).unwrap().version, 1);
        let e = |t: &str| parse_state(t).unwrap_err();
        assert_eq!(e(""), "is empty");
        assert!(e(&good[..good.len() / 2]).starts_with("is cut short ("));
        assert!(e("garbage").starts_with("is damaged: not JSON ("));
        v["version"] = 7.into();
        assert!(e(&v.to_string()).starts_with("is of version 7, not 1"));
        assert!(e(r#"{"hello": 1}"#).starts_with("is not a test bed's state ("));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("t1").is_ok() && check_name("fwd-1234_x").is_ok());
        for bad in ["", "-x", "a b", "a/b", "x".repeat(25).as_str(), "é"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        let mut s = Spec::numbered("t", 3);
        assert!(s.check().is_ok());
        s.hosts[2] = "h1".into();
        assert!(s.check().unwrap_err().contains("twice"));
        assert!(
            Spec::numbered("t", 0)
                .check()
                .unwrap_err()
                .contains("1 to 64")
        );
        assert!(Spec::numbered("t", 65).check().is_err());
    }

    #[test]
    fn the_plan_is_a_star_in_the_benchmarking_range() {
        let st = plan(&Spec::numbered("t1", 3));
        let names: Vec<&str> = st.hosts.iter().map(|h| h.netns.as_str()).collect();
        assert_eq!(names, ["sb-t1-h1", "sb-t1-h2", "sb-t1-h3"]);
        let hub = &st.hosts[0];
        assert!(hub.forwarding && !st.hosts[1].forwarding);
        assert_eq!(
            hub.addresses(),
            [Ipv4Addr::new(198, 18, 1, 1), Ipv4Addr::new(198, 18, 2, 1)]
        );
        let leaf = &st.hosts[2];
        assert_eq!(leaf.links.len(), 1);
        let l = &leaf.links[0];
        assert_eq!(
            (l.dev.as_str(), l.address),
            ("to-h1", Ipv4Addr::new(198, 18, 2, 2))
        );
        assert_eq!(
            (l.peer_dev.as_str(), l.peer_mac.as_str()),
            ("to-h3", "02:73:62:00:01:03")
        );
        assert_eq!(l.mac, hub.links[1].peer_mac);
        assert_eq!(
            leaf.routes,
            [
                "198.18.0.0/15 via 198.18.2.1",
                "2001:2::/48 via 2001:2:0:2::1"
            ]
        );
        // IPv6 beside IPv4: the k-th link is 2001:2:0:k::/64 (RFC 5180).
        assert_eq!(l.address6, Some("2001:2:0:2::2".parse().unwrap()));
        assert_eq!(l.peer_address6, Some("2001:2:0:2::1".parse().unwrap()));
        assert_eq!(
            hub.links[0].address6,
            Some("2001:2:0:1::1".parse().unwrap())
        );
        // Without IPv6 (the forward workload's test bed), IPv4 only.
        let four = plan(&Spec {
            ipv6: false,
            ..Spec::numbered("t1", 3)
        });
        assert_eq!(four.hosts[2].routes, ["198.18.0.0/15 via 198.18.2.1"]);
        assert!(
            four.hosts
                .iter()
                .flat_map(|h| &h.links)
                .all(|l| l.address6.is_none())
        );
        // Interface names fit IFNAMSIZ with the longest host name.
        let long = Spec {
            hosts: vec!["a".repeat(12), "b".repeat(12)],
            ..Spec::numbered("t", 2)
        };
        assert!(long.check().is_ok());
        assert!(plan(&long).hosts.iter().all(|h| h.links[0].dev.len() <= 15));
        let one = plan(&Spec::numbered("t", 1));
        assert!(!one.hosts[0].forwarding && one.hosts[0].links.is_empty());
    }
}
