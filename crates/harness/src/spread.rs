//! A load bigger than one process may make: its connections spread over
//! several `scalebench load` processes ([`super::fanout`]) that
//! run at the same time and report exact [`Part`]s, merged into one
//! [`Outcome`]; and the local addresses a load needs when it wants more
//! connections to one server than one address has ports.

use super::fanout;
use net::load::{LoadOptions, Outcome, Part};
use std::ffi::OsString;
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use sys::{self, Knob, Rlimit};

/// Descriptors one process keeps for itself (standard streams, pollers,
/// pipes): not for connections.
const RESERVE: u64 = 64;

/// Connections one process may hold: its open-files limit as it can raise
/// it (the hard limit, at most the kernel's per-process ceiling), less a
/// reserve; `None` when nothing limits it.
pub fn connections_per_process() -> Option<u64> {
    let (soft, hard) = sys::get_rlimit(Rlimit::Files)?;
    let ceiling = sys::knob_values(Knob::FilesPerProcess)
        .iter()
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .min();
    let limit = [hard, ceiling].into_iter().flatten().min().or(soft)?;
    Some(limit.saturating_sub(RESERVE).max(1))
}

/// Most processes a load is spread over.
pub const MAX_PROCESSES: u32 = 32;

/// Processes needed to hold `connections`, each within
/// [`connections_per_process`] (at most [`MAX_PROCESSES`]).
pub fn processes_for(connections: u64) -> u32 {
    match connections_per_process() {
        Some(per) => connections.div_ceil(per).clamp(1, u64::from(MAX_PROCESSES)) as u32,
        None => 1,
    }
}

/// Local addresses for `connections` connections to `server`, and a note
/// when the system limits them. Ports are unique per pair of addresses:
/// one source address reaches one server address and port with at most
/// the ephemeral range's ports (less those in TIME_WAIT), and connect()
/// searches that range for a free port one by one, which costs more the
/// fuller it is (docs/measurements.md, "Figures behind the code's
/// choices": one address against three). On Linux all of 127.0.0.0/8 is loopback, so a
/// loopback load whose connections would hold more than a sixth of the
/// range gets 127.0.0.1, 127.0.0.2, … (a sixth of the range or less each);
/// on the
/// BSDs and macOS only 127.0.0.1 is configured by default, so the note says
/// where the ports run out. Empty: let the OS choose.
pub fn sources_for(server: &SocketAddr, connections: u64) -> (Vec<IpAddr>, Option<String>) {
    let Some((a, b)) = sys::port_range() else {
        return (Vec::new(), None);
    };
    let ports = u64::from(b - a + 1);
    let need = (connections * 6).div_ceil(ports).max(1);
    if need == 1 || !server.ip().is_loopback() {
        return (Vec::new(), None);
    }
    if !server.is_ipv4() || !sys::whole_loopback_net() {
        if connections + 64 < ports {
            return (Vec::new(), None);
        }
        return (
            Vec::new(),
            Some(format!(
                "one source address ({}: only it is configured on loopback here): {ports} ephemeral ports ({a}–{b}) for {connections} connections; the rest fail as port exhaustion",
                if server.is_ipv4() { "127.0.0.1" } else { "::1" }
            )),
        );
    }
    let n = need.min(254) as u8;
    (
        (1..=n)
            .map(|k| IpAddr::V4(Ipv4Addr::new(127, 0, 0, k)))
            .collect(),
        None,
    )
}

/// The sources in words: `127.0.0.1–127.0.0.3`, or `chosen by the OS`.
pub fn describe_sources(sources: &[IpAddr]) -> String {
    match sources {
        [] => "chosen by the OS".into(),
        [one] => one.to_string(),
        [first, .., last] => format!("{first}–{last}"),
    }
}

/// Runs `opts` as `processes` `scalebench load` processes of `exe` at once,
/// each with its share of the connections (and of the count and rate, if
/// any), and merges what they measured. The URLs are taken round robin
/// (replaying a file in order needs one process). Live counters are not
/// kept; ^C stops every process, which still reports what it measured.
pub fn run(exe: &Path, opts: &LoadOptions, processes: u32) -> io::Result<Outcome> {
    let processes = processes
        .min(MAX_PROCESSES)
        .clamp(1, opts.connections.max(1) as u32) as usize;
    let copies: Vec<Command> = (0..processes)
        .map(|k| {
            let mut c = Command::new(exe);
            c.args(part_args(&share(opts, processes, k)));
            c
        })
        .collect();
    let names: Vec<String> = (1..=processes)
        .map(|k| format!("load process {k} of {processes}"))
        .collect();
    Ok(Outcome::merge(&run_parts(copies, opts, &names)?))
}

/// Runs `copies` at once — each a `scalebench load --part` ([`part_args`])
/// of a load `opts`, here or through a host's command — within the time the
/// load may take, and reads what each measured, in order; `names` name
/// them in errors. Any copy that fails fails the whole.
pub fn run_parts(
    copies: Vec<Command>,
    opts: &LoadOptions,
    names: &[String],
) -> io::Result<Vec<Outcome>> {
    let limit = match opts.duration {
        Some(d) => opts.warm_up + d + opts.timeout * (opts.retries + 1) + Duration::from_secs(60),
        None => Duration::from_secs(30 * 86_400),
    };
    let copies = fanout::run_commands(
        copies,
        fanout::Bounds {
            limit,
            grace: opts.timeout.min(Duration::from_secs(10)) + Duration::from_secs(2),
            // 1: some requests failed (still measured); 130: interrupted.
            ok: &[0, 1, 130],
        },
    );
    let mut outs = Vec::with_capacity(copies.len());
    for (k, c) in copies.iter().enumerate() {
        let what = names.get(k).map_or("a load process", String::as_str);
        // 1: some requests failed (still measured); 130: interrupted.
        let text = c
            .output(&[0, 1, 130])
            .map_err(|e| io::Error::other(format!("{what}: {e}")))?;
        let part: Part = serde_json::from_str(text).map_err(|e| {
            // A part that failed said why on its standard error, and
            // printed nothing.
            match c
                .stderr
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
            {
                Some(why) if text.trim().is_empty() => {
                    let why = why.strip_prefix("the load failed: ").unwrap_or(why);
                    io::Error::other(format!("{what}: {why}"))
                }
                _ => io::Error::other(format!("{what}: unreadable report ({e})")),
            }
        })?;
        outs.push(Outcome::from_part(&part).map_err(|e| io::Error::other(format!("{what}: {e}")))?);
    }
    Ok(outs)
}

/// Part `k` of `n` of the load `opts`: its share of the connections, and
/// of the count and rate if any (the remainders go to the first parts; a
/// part has at least one request and a positive rate).
pub fn share(opts: &LoadOptions, n: usize, k: usize) -> LoadOptions {
    let n = n.max(1);
    let part = |total: u64| total / n as u64 + u64::from((k as u64) < total % n as u64);
    LoadOptions {
        connections: part(opts.connections as u64) as usize,
        total: opts.total.map(|t| part(t).max(1)),
        rate: opts.rate.map(|r| (r / n as f64).max(0.001)),
        ..opts.clone()
    }
}

/// The `scalebench load --part` arguments that run `opts` (one part's
/// share, [`share`]) and print what it measured as a [`Part`].
pub fn part_args(opts: &LoadOptions) -> Vec<OsString> {
    let secs = |d: Duration| format!("{}", d.as_secs_f64());
    let mut a: Vec<String> = vec![
        "load".into(),
        "--part".into(),
        "--quiet".into(),
        "-c".into(),
        opts.connections.to_string(),
        "-t".into(),
        opts.threads.to_string(),
        "--timeout".into(),
        secs(opts.timeout),
        "--retries".into(),
        opts.retries.to_string(),
        "--backend".into(),
        opts.backend.name().into(),
    ];
    if let Some(k) = opts.per_connection {
        a.extend(["-k".into(), k.to_string()]);
    }
    if let Some(t) = opts.total {
        a.extend(["-n".into(), t.to_string()]);
    }
    if let Some(d) = opts.duration {
        a.extend(["-d".into(), secs(d)]);
    }
    if !opts.warm_up.is_zero() {
        a.extend(["--warm-up".into(), secs(opts.warm_up)]);
    }
    if opts.rounds > 1 {
        a.extend(["--rounds".into(), opts.rounds.to_string()]);
    }
    if let Some(r) = opts.rate {
        a.extend(["--rate".into(), format!("{r}")]);
    }
    for s in &opts.sources {
        a.extend(["--source".into(), s.to_string()]);
    }
    a.extend(opts.targets.iter().map(|t| t.url.clone()));
    a.into_iter().map(OsString::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use net::load::Target;

    #[test]
    fn each_process_gets_its_share() {
        let t = Target::parse("http://127.0.0.1:8080/a").unwrap();
        let opts = LoadOptions {
            total: Some(10),
            duration: Some(Duration::from_millis(1500)),
            warm_up: Duration::from_secs(2),
            rounds: 3,
            sources: vec!["127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap()],
            per_connection: Some(1),
            ..LoadOptions::new(vec![t], 30_001)
        };
        let args = |n, k| part_args(&share(&opts, n, k));
        let a: Vec<String> = args(3, 0)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        let after = |flag: &str| {
            let i = a.iter().position(|x| x == flag).unwrap();
            a[i + 1].clone()
        };
        assert_eq!(a[..2], ["load", "--part"]);
        assert_eq!(after("-c"), "10001", "the remainder goes to the first");
        assert_eq!(after("-n"), "4");
        assert_eq!(after("-d"), "1.5");
        assert_eq!(after("--warm-up"), "2");
        assert_eq!(after("--rounds"), "3");
        assert_eq!(after("-k"), "1");
        assert_eq!(a.iter().filter(|x| *x == "--source").count(), 2);
        assert_eq!(a.last().unwrap(), "http://127.0.0.1:8080/a");
        let b: Vec<String> = args(3, 2)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect();
        let i = b.iter().position(|x| x == "-c").unwrap();
        assert_eq!(b[i + 1], "10000");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn loopback_gets_more_sources_when_one_has_too_few_ports() {
        let (a, b) = sys::port_range().unwrap();
        let ports = u64::from(b - a + 1);
        let server: SocketAddr = "127.0.0.1:80".parse().unwrap();
        assert_eq!(sources_for(&server, 50), (Vec::new(), None));
        let (s, _) = sources_for(&server, ports / 6 + 1);
        assert_eq!(s.len(), 2);
        let (s, note) = sources_for(&server, ports + 1);
        assert!(s.len() >= 2 && note.is_none(), "{s:?}");
        assert_eq!(s[0], IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!(describe_sources(&s[..2]), "127.0.0.1–127.0.0.2");
        let (s, note) = sources_for(&"[::1]:80".parse().unwrap(), ports + 1);
        assert!(s.is_empty() && note.unwrap().contains("port exhaustion"));
    }

    #[test]
    fn processes_hold_what_one_cannot() {
        let per = connections_per_process().unwrap();
        assert_eq!(processes_for(1), 1);
        assert_eq!(processes_for(per), 1);
        assert_eq!(processes_for(per + 1), 2);
    }
}
