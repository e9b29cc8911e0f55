//! `scalebench smtp-sink` and `scalebench smtp-send`: either side of the
//! mail workload on its own, so that each can face a real MTA by address.
//! The sink prints `listening smtp://ADDR` once bound and serves until ^C,
//! SIGTERM, or (when standard input is a pipe) the end of its input, then
//! prints what it accepted. The sender prints messages/s, latency and a
//! table of failures by call and errno; ^C ends it early with what it did.

use super::{SmtpSendArgs, SmtpSinkArgs};
use crate::harness::{Resource, limits, reaper};
use crate::net::Backend;
use crate::net::server::{Config, Handler};
use crate::net::smtp::send::{self, SendOptions};
use crate::net::smtp::sink::{Sink, SinkCounters};
use crate::net::workers::{self, Listen};
use crate::units::{fmt_n, fmt_ns};
use anyhow::{Context, bail};
use std::io::Write;
use std::process::ExitCode;

/// Descriptors one sender process keeps for itself besides its sessions.
const SPARE_FDS: u64 = 64;

fn backend(b: Option<Backend>) -> anyhow::Result<Backend> {
    let b = b.unwrap_or_else(|| Backend::available_all()[0]);
    if !b.available() {
        bail!("--backend {b}: not available on {}", std::env::consts::OS);
    }
    Ok(b)
}

/// Runs the sink.
pub fn sink(a: SmtpSinkArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    reaper::install();
    let addr = a.addr.unwrap_or_else(|| {
        if a.ipv6 {
            "[::1]:0".parse().expect("valid")
        } else {
            "127.0.0.1:0".parse().expect("valid")
        }
    });
    let backend = backend(a.backend.map(Into::into))?;
    if a.hostname.is_empty() || a.hostname.bytes().any(|c| !c.is_ascii_graphic()) {
        refuse!(
            "--hostname `{}`: one word of printable characters",
            a.hostname
        );
    }
    let workers = a.processes as usize;
    let listen = Listen {
        addr,
        workers,
        reuseport: workers > 1,
        backlog: 4096,
    };
    let (listeners, bound) =
        workers::bind(&listen).with_context(|| format!("cannot listen on {addr}"))?;
    let counters = SinkCounters::shared().context("shared counters")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening smtp://{bound}")?;
        out.flush()?;
    }
    let cfg = Config {
        reply_delay: (!a.reply_delay.is_zero()).then_some(a.reply_delay),
        stop: Some(crate::stop::interrupted),
        ..Config::new(backend)
    };
    let host = a.hostname.clone();
    let served = workers::serve_all(
        listeners,
        workers,
        cfg,
        workers::stdin_control(),
        move || Box::new(Sink::new(&host, counters)) as Box<dyn Handler>,
    );
    let counts = counters.snapshot();
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer(&mut out, &counts)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "sink: {} messages to {} recipients ({} bytes), {} commands, {} error replies, {} sessions ended by QUIT",
            counts.messages,
            counts.recipients,
            counts.bytes,
            counts.commands,
            counts.error_replies,
            counts.quits
        )?;
    }
    served.context("the sink failed")?;
    Ok(ExitCode::SUCCESS)
}

/// The sender processes `sessions` need with `backend`: as many as asked
/// (refused when one would hold more than it may open), or as many as the
/// descriptors of one process need; refused past the local ports one
/// address has.
fn sender_processes(a: &SmtpSendArgs, sessions: u64, backend: Backend) -> anyhow::Result<u64> {
    // Sessions one process can hold: its descriptor budget, and what the
    // backend can watch.
    let mut per_process = limits::budget(Resource::Descriptors)
        .map_or(u64::MAX, |b| b.max.saturating_sub(SPARE_FDS))
        .max(1);
    if let Some(c) = backend.fd_ceiling() {
        per_process = per_process.min((c as u64).saturating_sub(SPARE_FDS).max(1));
    }
    let processes = match a.processes {
        Some(p) => {
            let p = u64::from(p);
            if sessions.div_ceil(p) > per_process {
                bail!(
                    "--sessions {sessions} over --processes {p} is {} sessions a process, more than one process may open here ({per_process}: {}); give more --processes",
                    sessions.div_ceil(p),
                    limits::budget(Resource::Descriptors).map_or(String::new(), |b| b.reason)
                );
            }
            p
        }
        None => sessions.div_ceil(per_process),
    };
    if processes > 1024 {
        bail!("--sessions {sessions} would need {processes} sender processes; at most 1024");
    }
    // Every session to the one server needs a local port of its own.
    if let Some((first, last)) = crate::sys::port_range() {
        let ports = u64::from(last.saturating_sub(first)) + 1;
        if sessions > ports {
            bail!(
                "--sessions {sessions}: more than the {ports} local ports ({first}–{last}) connections from one address to one server can use"
            );
        }
    }
    Ok(processes)
}

/// Runs the sender.
pub fn send(a: SmtpSendArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    if a.messages.is_none() && a.duration.is_none() {
        refuse!("say how much: -n MESSAGES or -d DURATION");
    }
    // The warm-up is the untallied start of the interval tallies.
    if !a.warmup.is_zero() {
        let w = humantime::format_duration(a.warmup);
        if a.interval.is_none() {
            refuse!("--warm-up {w}: it delays the interval tallies; give --interval too");
        }
        if let Some(d) = a.duration.filter(|d| a.warmup >= *d) {
            refuse!(
                "--warm-up {w} is not shorter than -d {}: no interval would be tallied",
                humantime::format_duration(d)
            );
        }
    }
    let backend = backend(a.backend.map(Into::into))?;
    // Never more sessions than messages.
    let sessions = u64::from(a.sessions).min(a.messages.unwrap_or(u64::MAX));
    let processes = sender_processes(&a, sessions, backend)?;
    let opts = SendOptions {
        per_session: a.per_session,
        message_bytes: a.size as usize,
        recipients: a.recipients,
        total: a.messages,
        duration: a.duration,
        bind: if a.no_bind {
            None
        } else {
            a.bind.or(SendOptions::new(a.server, 1).bind)
        },
        pipelining: !a.no_pipelining,
        timeout: a.timeout,
        backend,
        warmup: a.warmup,
        interval: a.interval,
        stop: Some(crate::stop::interrupted),
        ..SendOptions::new(a.server, sessions as usize)
    };
    if let Some(ip) = opts.bind.filter(|b| b.is_ipv4() != a.server.is_ipv4()) {
        refuse!("--bind {ip}: not the family of {}", a.server);
    }
    reaper::install();
    let o = send::run_processes(&opts, processes as usize).context("the sender failed")?;
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        if a.json {
            serde_json::to_writer(&mut *w, &o.report())?;
            writeln!(w)?;
            return Ok(());
        }
        if o.stopped {
            writeln!(
                w,
                "interrupted after {:.2} s: the figures are those of the part that ran",
                o.report().seconds
            )?;
        }
        writeln!(
            w,
            "{} sessions in {} process{}, {} message{} of {} bytes to {} recipient{} per session, {}, {}",
            sessions,
            processes,
            if processes == 1 { "" } else { "es" },
            a.per_session,
            if a.per_session == 1 { "" } else { "s" },
            a.size.max(crate::net::smtp::MIN_MESSAGE as u64),
            a.recipients,
            if a.recipients == 1 { "" } else { "s" },
            match opts.bind {
                Some(ip) => format!("bound to {ip} before connect"),
                None => "unbound".into(),
            },
            if a.no_pipelining {
                "no pipelining"
            } else {
                "pipelining when offered"
            }
        )?;
        write_sent(&o, w)
    })?;
    if let Some(why) = o.gave_up.as_ref().filter(|_| !o.stopped) {
        // Also on standard error: the figures may have gone to a program.
        bail!("{why}");
    }
    Ok(if o.stopped {
        ExitCode::from(130)
    } else if o.messages == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What the sender did, in words: messages, latency, failures by kind.
fn write_sent(o: &send::Outcome, w: &mut dyn Write) -> anyhow::Result<()> {
    let r = o.report();
    writeln!(
        w,
        "  messages  {} in {:.2} s: {:.0} msg/s; {} sessions ended by QUIT, peak {} open",
        fmt_n(o.messages as f64),
        r.seconds,
        r.messages_per_s,
        fmt_n(o.sessions as f64),
        fmt_n(o.peak_open as f64)
    )?;
    if o.messages > 0 {
        let q = |p: f64| fmt_ns(o.latency.value_at_quantile(p) as f64);
        writeln!(
            w,
            "  latency   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            q(0.5),
            q(0.9),
            q(0.99),
            q(0.999),
            fmt_ns(o.latency.max() as f64)
        )?;
    }
    if o.failures.is_empty() {
        writeln!(w, "  failures  none")?;
    } else {
        writeln!(
            w,
            "  failures  {} in {} sessions:",
            fmt_n(o.failed() as f64),
            fmt_n(o.failed_sessions as f64)
        )?;
        let mut v: Vec<_> = o.failures.iter().collect();
        v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        for (what, n) in v {
            writeln!(w, "    {:>10}  {what}", fmt_n(*n as f64))?;
        }
    }
    Ok(())
}
