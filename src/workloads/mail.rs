//! The `mail` workload, Rothman & Buckman's MailEngine test: messages per
//! second against simultaneous sends. `scalebench smtp-sink` (its own
//! process) accepts and discards mail, waiting a reply delay before each
//! reply as a remote MTA would; `scalebench smtp-send` holds S sessions,
//! each socket bound before it connects, and is swept over S (quick: 100,
//! 500, 1 000; full: 100 … 5 000). At each level one sender run covers the
//! heat-up and the samples (sessions stay open across sample boundaries);
//! the sender spreads itself over several processes when S exceeds what
//! one may open. Every failed call is counted by call and errno in the
//! level's `failures`. With `--mail-server` the sender faces an MTA
//! already running instead of the sink.

use super::{Info, Size, Workload, WorkloadFlag, WorkloadOptions};
use crate::ctx::Ctx;
use crate::harness::progress::Progress;
use crate::harness::reaper::run_bounded;
use crate::harness::sweep::{self, LevelOutcome};
use crate::net::smtp::send::{Outcome, Report};
use crate::results::{LatencyStats, SweepSample, WorkloadResult, WorkloadRow};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Read;
use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

/// The `mail` workload.
pub struct Mail;

static MAIL: Info = Info {
    name: "mail",
    what: "SMTP messages/s against simultaneous sends: scalebench smtp-send (each socket bound before connect) against scalebench smtp-sink with a reply delay, swept over the sessions; failures by call and errno",
    quick: true,
    between_hosts: true,
    several_clients: false,
};

/// The mail workload's options.
#[derive(Debug, Clone, PartialEq)]
pub struct MailOptions {
    /// Message size in bytes (headers included).
    pub message_bytes: u64,
    /// Recipients per message.
    pub recipients: u32,
    /// Messages per session.
    pub per_session: u64,
    /// The sink's wait before each reply.
    pub reply_delay: Duration,
    /// An MTA already running, instead of the sink.
    pub server: Option<SocketAddr>,
    /// A fixed delivery: each level delivers this many messages, its
    /// figure the time taken (`None`: timed samples, as by default).
    pub messages: Option<u64>,
    /// Deliveries per level with [`messages`](Self::messages) (`None`: 3
    /// quick, 5 full — one where a timed sample would be).
    pub repeats: Option<u32>,
    /// The bound on one delivery; past it the delivery is recorded as
    /// not finished with what it delivered.
    pub deadline: Duration,
}

impl Default for MailOptions {
    /// 4 KB messages, one recipient, one message per session (every
    /// delivery a connection of its own, as to 200 000 different
    /// recipients), a 20 ms reply delay.
    fn default() -> MailOptions {
        MailOptions {
            message_bytes: 4096,
            recipients: 1,
            per_session: 1,
            reply_delay: Duration::from_millis(20),
            server: None,
            messages: None,
            repeats: None,
            deadline: DEFAULT_DEADLINE,
        }
    }
}

const MAIL_HEADING: &str = "Mail";

/// The bound on one fixed delivery unless `--mail-deadline` says.
const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);

/// The flags of the mail workload.
static FLAGS: &[WorkloadFlag] = &[
    WorkloadFlag {
        check: Some(|s| crate::net::smtp::send::message_size(s).map(drop)),
        ..WorkloadFlag::value(
            "mail-size",
            "BYTES",
            MAIL_HEADING,
            "mail: message size in bytes, headers included (default 4096; at least 87).",
        )
    },
    WorkloadFlag {
        check: Some(|s| mail_recipients(s).map(drop)),
        ..WorkloadFlag::value(
            "mail-recipients",
            "R",
            MAIL_HEADING,
            "mail: recipients per message (default 1).",
        )
    },
    WorkloadFlag {
        check: Some(|s| mail_per_session(s).map(drop)),
        ..WorkloadFlag::value(
            "mail-per-session",
            "K",
            MAIL_HEADING,
            "mail: messages per session before QUIT (default 1: every message a connection of its own).",
        )
    },
    WorkloadFlag {
        check: Some(|s| crate::values::reply_delay(s).map(drop)),
        ..WorkloadFlag::value(
            "mail-reply-delay",
            "DURATION",
            MAIL_HEADING,
            "mail: the sink's wait before each reply, as a remote MTA's (default 20ms; 0 to 1 minute).",
        )
    },
    WorkloadFlag {
        check: Some(|s| crate::values::server_addr(s).map(drop)),
        conflicts: &["mail-reply-delay"],
        ..WorkloadFlag::value(
            "mail-server",
            "HOST:PORT",
            MAIL_HEADING,
            "mail: send to an SMTP server already running (HOST:PORT) instead of scalebench's sink. Every message is sent to it: use a sink.",
        )
    },
    WorkloadFlag {
        check: Some(|s| mail_messages(s).map(drop)),
        ..WorkloadFlag::value(
            "mail-messages",
            "N",
            MAIL_HEADING,
            "mail: a fixed delivery, as Rothman & Buckman's 200 000: each level delivers N messages, its figure the time taken (as msg/s); repeated --mail-repeats times (default: timed samples).",
        )
    },
    WorkloadFlag {
        check: Some(|s| mail_repeats(s).map(drop)),
        requires: &["mail-messages"],
        ..WorkloadFlag::value(
            "mail-repeats",
            "K",
            MAIL_HEADING,
            "mail: deliveries per level with --mail-messages, each one sample; the level records how many finished (default 3 quick, 5 full).",
        )
    },
    WorkloadFlag {
        check: Some(|s| crate::values::load_duration(s).map(drop)),
        requires: &["mail-messages"],
        ..WorkloadFlag::value(
            "mail-deadline",
            "DURATION",
            MAIL_HEADING,
            "mail: the bound on one delivery of --mail-messages; past it the delivery is recorded as not finished, with what it delivered (default 10m).",
        )
    },
];

impl MailOptions {
    /// The options from the flags given (defaults for what is not).
    pub fn of(given: &super::Given) -> Result<MailOptions, super::FlagError> {
        let d = MailOptions::default();
        Ok(MailOptions {
            message_bytes: given
                .parsed("mail-size", crate::net::smtp::send::message_size)?
                .unwrap_or(d.message_bytes),
            recipients: given
                .parsed("mail-recipients", mail_recipients)?
                .unwrap_or(d.recipients),
            per_session: given
                .parsed("mail-per-session", mail_per_session)?
                .unwrap_or(d.per_session),
            reply_delay: given
                .parsed("mail-reply-delay", crate::values::reply_delay)?
                .unwrap_or(d.reply_delay),
            server: given.parsed("mail-server", crate::values::server_addr)?,
            messages: given.parsed("mail-messages", mail_messages)?,
            repeats: given.parsed("mail-repeats", mail_repeats)?,
            deadline: given
                .parsed("mail-deadline", crate::values::load_duration)?
                .unwrap_or(d.deadline),
        })
    }
}

/// The sweep over sessions: the levels of `--sweep sessions=…`, or the
/// size's own with the timings given (a sweep without levels), if any.
fn sweep_plan(opts: &WorkloadOptions) -> sweep::SweepPlan {
    let (heat, sample) = match opts.size {
        Size::Quick => (Duration::from_millis(250), Duration::from_millis(500)),
        Size::Full => (Duration::from_secs(10), Duration::from_secs(10)),
    };
    match &opts.sweep {
        Some(s) if !s.timings_only() => s.plan(opts.size, "msg/s"),
        // Its own levels, with the timings given, if any.
        s => super::SweepOptions {
            variable: "sessions".into(),
            levels: default_levels(opts.size),
            heat_up: s.as_ref().and_then(|s| s.heat_up).or(Some(heat)),
            sample: s.as_ref().and_then(|s| s.sample).or(Some(sample)),
            samples: s.as_ref().and_then(|s| s.samples),
            baseline: None,
        }
        .plan(opts.size, "msg/s"),
    }
}

/// The default levels of simultaneous sessions.
pub fn default_levels(size: Size) -> Vec<f64> {
    match size {
        Size::Quick => vec![100.0, 500.0, 1000.0],
        Size::Full => vec![100.0, 500.0, 1000.0, 1500.0, 2000.0, 3000.0, 5000.0],
    }
}

/// Sink worker processes for up to `sessions` connections at once: one,
/// or as many as the descriptor limit needs with a quarter to spare
/// (SO_REUSEPORT spreads connections by a hash, not evenly).
fn sink_processes(sessions: f64) -> u64 {
    let per = crate::harness::limits::budget(crate::harness::Resource::Descriptors)
        .map_or(u64::MAX, |b| b.max.saturating_sub(64).max(1));
    ((sessions * 1.25) as u64).div_ceil(per).clamp(1, 1024)
}

/// A `scalebench smtp-sink` process on the server host; stopped with its
/// group when dropped.
struct SinkProcess {
    served: crate::hosts::Served,
    addr: SocketAddr,
}

impl SinkProcess {
    fn start(ctx: &Ctx, delay: Duration, processes: u64) -> Result<SinkProcess, String> {
        let host = &ctx.hosts().server;
        let args: Vec<std::ffi::OsString> = vec![
            "smtp-sink".into(),
            "--json".into(),
            "--reply-delay".into(),
            format!("{}ms", delay.as_millis()).into(),
            "--processes".into(),
            processes.to_string().into(),
            "--addr".into(),
            SocketAddr::new(host.bind_address(false), 0)
                .to_string()
                .into(),
        ];
        let served = host.spawn(&args, "the sink")?;
        let addr = host.reachable(served.bound()?)?;
        Ok(SinkProcess { served, addr })
    }

    /// Stops the sink (end of its input) and returns what it counted.
    fn stop(mut self) -> Option<crate::net::smtp::sink::SinkCounts> {
        self.served.close_input();
        let mut out = String::new();
        let child = self.served.child();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(o) = child.stdout.as_mut() {
            let _ = o.read_to_string(&mut out);
        }
        serde_json::from_str(out.lines().last()?).ok()
    }
}

/// Runs one level: one sender run of the heat-up and the samples.
fn level_run(
    ctx: &Ctx,
    target: SocketAddr,
    m: &MailOptions,
    sessions: u64,
    plan: &sweep::SweepPlan,
) -> LevelOutcome {
    let mut out = LevelOutcome::default();
    let Some(exe) = ctx.exe() else {
        out.error = Some("cannot find the scalebench executable to run the sender".into());
        return out;
    };
    let total = plan.level_time();
    let ms = |d: Duration| format!("{}ms", d.as_millis());
    let mut cmd = Command::new(exe);
    cmd.arg("smtp-send")
        .arg(target.to_string())
        .args(["--json", "-s", &sessions.to_string(), "-d", &ms(total)])
        .args([
            "--warmup",
            &ms(plan.heat_up),
            "--interval",
            &ms(plan.sample),
        ])
        .args(["--size", &m.message_bytes.to_string()])
        .args([
            "-r",
            &m.recipients.to_string(),
            "-k",
            &m.per_session.to_string(),
        ]);
    let start = Instant::now();
    let f = match run_bounded(&mut cmd, total + Duration::from_secs(60)) {
        Ok(f) => f,
        Err(e) => {
            out.error = Some(format!("starting the sender: {e}"));
            return out;
        }
    };
    let o = match sender_outcome(&f) {
        Ok(o) => o,
        Err(e) => {
            out.error = Some(e);
            return out;
        }
    };
    let secs = plan.sample.as_secs_f64();
    // An interval in which nothing was delivered and nothing failed is a
    // sample of 0 msg/s, unless the run ended before it.
    let ran = o.elapsed.saturating_sub(plan.heat_up);
    let whole = ((ran.as_secs_f64() / secs.max(1e-9)) as usize).min(plan.samples as usize);
    for k in 0..whole.max(o.intervals.len().min(plan.samples as usize)) {
        let (messages, failures, latency) = match o.intervals.get(k) {
            Some(iv) => (
                iv.messages,
                iv.failures,
                (iv.messages > 0).then(|| LatencyStats::of(&iv.latency)),
            ),
            None => (0, 0, None),
        };
        out.samples.push(SweepSample {
            t: secs * (k + 1) as f64,
            seconds: secs,
            value: messages as f64 / secs,
            latency_ns: latency,
            mean_latency_ns: None,
            errors: failures,
        });
    }
    if !out.samples.is_empty() {
        let from = start + plan.heat_up;
        out.window = Some((from, from + plan.sample * out.samples.len() as u32));
    }
    out.params
        .insert("sessions_ended".into(), json!(o.sessions));
    out.params.insert("peak_open".into(), json!(o.peak_open));
    out.params.insert("messages".into(), json!(o.messages));
    out.failures = o.failures.clone();
    if let Some(why) = o.gave_up {
        out.error = Some(why);
    } else if o.stopped {
        out.error = Some("interrupted".into());
    }
    out
}

/// One delivery of `n` messages over `sessions` sessions, bounded by
/// `m.deadline`: the sender's outcome, or why it gave none.
fn deliver(
    exe: &std::path::Path,
    target: SocketAddr,
    m: &MailOptions,
    sessions: u64,
    n: u64,
) -> Result<Outcome, String> {
    let mut cmd = Command::new(exe);
    cmd.arg("smtp-send")
        .arg(target.to_string())
        .args(["--json", "-s", &sessions.to_string(), "-n", &n.to_string()])
        .args(["-d", &format!("{}ms", m.deadline.as_millis())])
        .args(["--size", &m.message_bytes.to_string()])
        .args(["-r", &m.recipients.to_string()])
        .args(["-k", &m.per_session.to_string()]);
    let f = run_bounded(&mut cmd, m.deadline + Duration::from_secs(60))
        .map_err(|e| format!("starting the sender: {e}"))?;
    sender_outcome(&f)
}

/// The outcome `smtp-send --json` reported, or why there is none: it did
/// not finish in time, was interrupted, or failed (its last error line).
fn sender_outcome(f: &crate::harness::reaper::Finished) -> Result<Outcome, String> {
    serde_json::from_str::<Report>(f.stdout.trim())
        .map_err(|e| e.to_string())
        .and_then(|r| Outcome::from_report(&r))
        .map_err(|_| {
            if f.timed_out {
                "the sender did not finish in time".into()
            } else if f.status.is_none() {
                "interrupted".into()
            } else {
                let e = f.stderr.trim();
                format!(
                    "the sender failed: {}",
                    e.lines().last().unwrap_or("no message")
                )
            }
        })
}

/// The least, the median and the greatest of `v` (not empty).
fn spread(v: &[f64]) -> [f64; 3] {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let k = s.len();
    let median = if k % 2 == 1 {
        s[k / 2]
    } else {
        (s[k / 2 - 1] + s[k / 2]) / 2.0
    };
    [s[0], median, s[k - 1]]
}

/// Runs one level of a fixed delivery: `plan.samples` deliveries of `n`
/// messages, each one sample (its msg/s over the time it took); the level
/// records how many finished within the deadline, and the spread of their
/// times.
fn delivery_level(
    ctx: &Ctx,
    target: SocketAddr,
    m: &MailOptions,
    sessions: u64,
    n: u64,
    plan: &sweep::SweepPlan,
) -> LevelOutcome {
    let mut out = LevelOutcome::default();
    let Some(exe) = ctx.exe() else {
        out.error = Some("cannot find the scalebench executable to run the sender".into());
        return out;
    };
    let start = Instant::now();
    let (mut delivered, mut took, mut finished) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ended, mut peak) = (0, 0);
    for _ in 0..plan.samples {
        if crate::stop::interrupted() {
            out.error = Some("interrupted".into());
            break;
        }
        let o = match deliver(exe, target, m, sessions, n) {
            Ok(o) => o,
            Err(e) => {
                out.error = Some(e);
                break;
            }
        };
        let secs = o.elapsed.as_secs_f64().max(1e-9);
        out.samples.push(SweepSample {
            t: start.elapsed().as_secs_f64(),
            seconds: secs,
            value: o.messages as f64 / secs,
            latency_ns: (o.messages > 0).then(|| LatencyStats::of(&o.latency)),
            mean_latency_ns: None,
            errors: o.failed(),
        });
        for (k, v) in &o.failures {
            *out.failures.entry(k.clone()).or_default() += v;
        }
        if let Some(why) = &o.gave_up {
            // The next delivery would give up the same way.
            out.error = Some(why.clone());
        }
        delivered.push(o.messages);
        took.push(secs);
        if o.messages >= n {
            finished.push(secs);
        }
        ended += o.sessions;
        peak = peak.max(o.peak_open);
        if o.stopped {
            out.error = Some("interrupted".into());
            break;
        }
        if out.error.is_some() {
            break;
        }
    }
    if !out.samples.is_empty() {
        out.window = Some((start, Instant::now()));
    }
    let p = &mut out.params;
    p.insert("sessions_ended".into(), json!(ended));
    p.insert("peak_open".into(), json!(peak));
    p.insert("messages".into(), json!(delivered.iter().sum::<u64>()));
    p.insert("repeats".into(), json!(plan.samples));
    p.insert("finished".into(), json!(finished.len()));
    p.insert("delivered".into(), json!(delivered));
    p.insert("seconds".into(), json!(took));
    if !finished.is_empty() {
        let [lo, mid, hi] = spread(&finished);
        p.insert("seconds_min".into(), json!(lo));
        p.insert("seconds_median".into(), json!(mid));
        p.insert("seconds_max".into(), json!(hi));
    }
    let short = delivered.iter().filter(|&&d| d < n).count();
    if out.error.is_none() && short > 0 {
        out.error = Some(format!(
            "{short} of {} deliveries of {n} did not finish within {}",
            delivered.len(),
            humantime::format_duration(m.deadline)
        ));
    }
    out
}

impl Workload for Mail {
    fn info(&self) -> &'static Info {
        &MAIL
    }

    fn sweeps(&self) -> &'static [&'static str] {
        &["sessions"]
    }

    fn sweeps_by_default(&self) -> bool {
        true
    }

    fn flags(&self) -> &'static [WorkloadFlag] {
        FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        Ok(Some(std::sync::Arc::new(MailOptions::of(asked.given)?)))
    }

    fn size_words(&self, opts: &WorkloadOptions, _here: Option<&Ctx>) -> Option<String> {
        let m: MailOptions = opts.own();
        Some(match m.messages {
            Some(n) => format!(
                "a fixed delivery of {} a level",
                units::fmt_count(n, "message", "messages")
            ),
            None => "timed samples a level (--mail-messages N: a fixed delivery)".into(),
        })
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let m: MailOptions = opts.own();
        let m = &m;
        let mut plan = sweep_plan(opts);
        plan.counts_failures = true;
        if m.messages.is_some() {
            // One delivery where a sample would be; the figure the mean
            // msg/s of them all, the bound of one the sample's length.
            let k = m.repeats.unwrap_or(match opts.size {
                Size::Quick => 3,
                Size::Full => 5,
            });
            plan.heat_up = Duration::ZERO;
            plan.samples = k;
            plan.figure_of_last = k;
            plan.sample = m.deadline;
        }
        let mut params = BTreeMap::new();
        params.insert("sessions".into(), json!(plan.levels));
        params.insert(
            "message_bytes".into(),
            json!(m.message_bytes.max(crate::net::smtp::MIN_MESSAGE as u64)),
        );
        params.insert("recipients".into(), json!(m.recipients));
        params.insert("messages_per_session".into(), json!(m.per_session));
        params.insert("bind_before_connect".into(), json!(true));
        if let Some(n) = m.messages {
            params.insert("messages_per_delivery".into(), json!(n));
            params.insert("repeats".into(), json!(plan.samples));
            params.insert("deadline_s".into(), json!(m.deadline.as_secs_f64()));
        }
        progress.begin(MAIL.name, plan.planned().as_secs() + 2);
        let mut notes = Vec::new();
        let (sink, target) = match m.server {
            Some(addr) => {
                params.insert("server".into(), json!(addr.to_string()));
                (None, Ok(addr))
            }
            None => {
                params.insert(
                    "reply_delay_ms".into(),
                    json!(m.reply_delay.as_secs_f64() * 1e3),
                );
                let procs = sink_processes(plan.levels.iter().copied().fold(1.0, f64::max));
                params.insert("sink_processes".into(), json!(procs));
                match SinkProcess::start(ctx, m.reply_delay, procs) {
                    Ok(s) => {
                        let a = s.addr;
                        (Some(s), Ok(a))
                    }
                    Err(e) => (None, Err(e)),
                }
            }
        };
        let label = format!(
            "{} B messages",
            m.message_bytes.max(crate::net::smtp::MIN_MESSAGE as u64)
        );
        let row = match target {
            Ok(target) => {
                let mut runner = |level: f64, plan: &sweep::SweepPlan| match m.messages {
                    Some(n) => delivery_level(ctx, target, m, level as u64, n, plan),
                    None => level_run(ctx, target, m, level as u64, plan),
                };
                let stats = sweep::run(&plan, progress, &mut runner);
                WorkloadRow {
                    label,
                    target: None,
                    params: BTreeMap::new(),
                    load: None,
                    phase: None,
                    sweep: Some(stats),
                    error: None,
                }
            }
            Err(e) => WorkloadRow {
                label,
                target: None,
                params: BTreeMap::new(),
                load: None,
                phase: None,
                sweep: None,
                error: Some(e),
            },
        };
        if let Some(s) = sink {
            match s.stop() {
                Some(c) => {
                    params.insert("sink_messages".into(), json!(c.messages));
                    params.insert("sink_error_replies".into(), json!(c.error_replies));
                }
                None => notes.push("the sink did not report its counts".to_string()),
            }
        }
        progress.finish("1 row");
        super::finish(&MAIL, params, vec![row], notes)
    }
}

/// `--mail-recipients`, as both its check and its reading parse it.
fn mail_recipients(s: &str) -> Result<u32, String> {
    crate::values::whole::<u32>(1, 10_000)(s)
}

/// `--mail-per-session`, as both its check and its reading parse it.
fn mail_per_session(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(1, u64::MAX)(s)
}

/// `--mail-messages`, as both its check and its reading parse it.
fn mail_messages(s: &str) -> Result<u64, String> {
    crate::values::whole::<u64>(1, 1_000_000_000)(s)
}

/// `--mail-repeats`, as both its check and its reading parse it.
fn mail_repeats(s: &str) -> Result<u32, String> {
    crate::values::whole::<u32>(1, 1000)(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_without_levels_time_the_sizes_own_levels() {
        let quick = sweep_plan(&WorkloadOptions::new(Size::Quick));
        assert_eq!(quick.levels, default_levels(Size::Quick));
        let mut o = WorkloadOptions::new(Size::Quick);
        o.sweep = Some(super::super::SweepOptions {
            variable: String::new(),
            levels: Vec::new(),
            heat_up: Some(Duration::ZERO),
            sample: None,
            samples: Some(1),
            baseline: None,
        });
        let p = sweep_plan(&o);
        assert_eq!(
            (p.variable.as_str(), &p.levels),
            ("sessions", &quick.levels)
        );
        assert_eq!(
            (p.heat_up, p.sample, p.samples),
            (Duration::ZERO, quick.sample, 1)
        );
        // Levels given are the levels.
        o.sweep.as_mut().unwrap().levels = vec![7.0, 70.0];
        assert_eq!(sweep_plan(&o).levels, [7.0, 70.0]);
    }

    #[test]
    fn spread_is_least_median_greatest_in_any_order() {
        assert_eq!(spread(&[3.0]), [3.0, 3.0, 3.0]);
        assert_eq!(spread(&[5.0, 1.0, 3.0]), [1.0, 3.0, 5.0]);
        assert_eq!(spread(&[4.0, 1.0, 2.0, 10.0]), [1.0, 3.0, 10.0]);
    }

    #[test]
    fn a_fixed_delivery_is_asked_by_messages_with_repeats_and_a_deadline() {
        let d = MailOptions::default();
        assert_eq!((d.messages, d.repeats), (None, None));
        assert_eq!(d.deadline, DEFAULT_DEADLINE);
        for (name, want) in [
            ("mail-repeats", &["mail-messages"][..]),
            ("mail-deadline", &["mail-messages"][..]),
        ] {
            let f = FLAGS.iter().find(|f| f.name == name).unwrap();
            assert_eq!(f.requires, want, "{name}");
        }
        let check = |name: &str, v: &str| {
            let f = FLAGS.iter().find(|f| f.name == name).unwrap();
            f.check.unwrap()(v)
        };
        assert!(check("mail-messages", "200000").is_ok());
        assert!(check("mail-messages", "0").is_err());
        assert!(check("mail-repeats", "0").is_err());
        assert!(check("mail-deadline", "90s").is_ok());
        assert!(check("mail-deadline", "soon").is_err());
    }
}
