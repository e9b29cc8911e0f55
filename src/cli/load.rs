//! `scalebench load`: drives any HTTP server by URL and prints what it
//! measured (or JSON). ^C or SIGTERM ends it early and still prints (or
//! writes) what it measured, exit status 130; a progress line on stderr
//! when that is a terminal. More connections than one process may open
//! are spread over several `scalebench load --part` processes.

use super::LoadArgs;
use crate::harness::spread;
use crate::harness::{limits, reaper};
use crate::net::Backend;
use crate::net::load::ItemCounters;
use crate::net::load::{self, LoadOptions, Target};
use crate::sys::values::Usage;
use crate::units::{fmt_n, fmt_ns};
use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Counts by errno in words: ` (ECONNREFUSED 40, ETIMEDOUT 2)`; nothing
/// when there are none.
fn by_errno(m: &std::collections::BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return String::new();
    }
    let v: Vec<String> = m
        .iter()
        .map(|(k, n)| format!("{k} {}", fmt_n(*n as f64)))
        .collect();
    format!(" ({})", v.join(", "))
}

/// The URLs of the arguments and of `--urls`, each with where it came
/// from (for errors: a line of the file; an argument's error names the
/// URL itself), resolved once per distinct URL.
fn targets(a: &LoadArgs) -> anyhow::Result<Vec<Target>> {
    let mut urls: Vec<(String, Option<String>)> =
        a.urls.iter().map(|u| (u.clone(), None)).collect();
    if let Some(f) = &a.urls_file {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        urls.extend(
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim()))
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .map(|(i, l)| (l.to_string(), Some(format!("{}, line {i}", f.display())))),
        );
    }
    if urls.is_empty() {
        if let Some(f) = &a.urls_file {
            bail!(
                "--urls {}: no URL in it (one a line; # begins a comment)",
                f.display()
            );
        }
        refuse!("no URL given (load URL… or --urls FILE)");
    }
    let mut targets = Vec::with_capacity(urls.len());
    let mut seen: std::collections::HashMap<String, Target> = std::collections::HashMap::new();
    for (u, from) in &urls {
        let t = match seen.get(u) {
            Some(t) => t.clone(),
            None => {
                let t = match from {
                    Some(from) => Target::parse(u).with_context(|| from.clone())?,
                    // A URL that is no address is a usage error; one whose
                    // host does not resolve, the world's.
                    None => Target::parse(u).map_err(|e| match e {
                        load::UrlError::Resolve(..) => anyhow::Error::from(e),
                        _ => Usage(e.to_string()).into(),
                    })?,
                };
                seen.insert(u.clone(), t.clone());
                t
            }
        };
        targets.push(t);
    }
    Ok(targets)
}

/// The load to make, from the arguments: its options, the processes to
/// spread it over, and a note on the source addresses chosen.
struct LoadPlan {
    opts: LoadOptions,
    processes: u32,
    source_note: Option<String>,
}

/// Plans the load of `a` on `targets`.
fn plan(a: &LoadArgs, targets: Vec<Target>) -> anyhow::Result<LoadPlan> {
    let replay = a.urls_file.is_some();
    let total = match (a.requests, a.duration) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) if replay => Some(targets.len() as u64),
        (None, None) => {
            refuse!("say how much: -n REQUESTS or -d DURATION");
        }
    };
    // A connection with no request to make is never opened: with -n, at
    // most that many connections (and processes to hold them).
    let connections = match total {
        Some(n) => u32::try_from(n).map_or(a.connections, |n| a.connections.min(n)),
        None => a.connections,
    };
    // More connections than this process may open: several processes.
    let processes = if a.part {
        1
    } else {
        a.processes
            .unwrap_or_else(|| spread::processes_for(u64::from(connections)))
            .min(connections)
    };
    if processes > 1 && replay {
        bail!(
            "--urls replays the file in order in one process: at most {} connections here (or --processes 1)",
            spread::connections_per_process().unwrap_or(u64::MAX)
        );
    }
    let (sources, source_note) = if a.sources.is_empty() && !a.part {
        let first = targets[0].addr;
        if targets.iter().all(|t| t.addr.ip() == first.ip()) {
            spread::sources_for(&first, u64::from(connections))
        } else {
            (Vec::new(), None)
        }
    } else {
        (a.sources.clone(), None)
    };
    let opts = LoadOptions {
        targets,
        connections: connections as usize,
        threads: a.threads as usize,
        per_connection: a.per_connection,
        total,
        duration: a.duration,
        warm_up: a.warm_up.unwrap_or_default(),
        rounds: a.rounds,
        sources,
        rate: a.rate,
        timeout: a.timeout,
        retries: a.retries,
        backend: a
            .backend
            .map_or_else(|| Backend::available_all()[0], Backend::from),
        live: (processes == 1).then(|| Arc::new(ItemCounters::default())),
        stop: Some(crate::stop::interrupted),
    };
    Ok(LoadPlan {
        opts,
        processes,
        source_note,
    })
}

/// Runs the load.
pub fn run(a: LoadArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    let p = plan(&a, targets(&a)?)?;
    // ^C or SIGTERM ends the load early; what it measured is still shown.
    reaper::install();
    let ticker = Ticker::start(&p.opts, a.quiet || a.part);
    let o = if p.processes > 1 {
        let exe = crate::harness::fanout::this_exe().context("cannot find this executable")?;
        spread::run(&exe, &p.opts, p.processes)
    } else {
        load::run(&p.opts)
    };
    drop(ticker);
    let o = o.context("the load failed")?;
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        if a.part {
            serde_json::to_writer(&mut *w, &o.part())?;
            writeln!(w)?;
            Ok(())
        } else if a.json {
            write_json(&o, &p.opts, w)
        } else {
            write_words(&a, &p, &o, w)
        }
    })?;
    Ok(if o.stopped {
        ExitCode::from(130)
    } else if o.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// `load --json`.
fn write_json(o: &load::Outcome, opts: &LoadOptions, w: &mut dyn Write) -> anyhow::Result<()> {
    let mut doc = serde_json::to_value(LoadJson {
        stats: &o.stats(),
        interrupted: o.stopped,
        processes: o.processes,
        peak_open: o.peak_open,
        sources: &opts.sources,
        rounds: o.rounds.iter().map(|r| r.stats()).collect(),
    })?;
    // Port exhaustion on its own (the result file's LoadStats counts it
    // with connect).
    doc["errors"] = serde_json::to_value(&o.errors)?;
    serde_json::to_writer_pretty(&mut *w, &doc)?;
    writeln!(w)?;
    Ok(())
}

/// The load's shape in one line: connections, processes, threads, requests
/// per connection, rate.
fn write_shape(
    a: &LoadArgs,
    p: &LoadPlan,
    o: &load::Outcome,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    let connections = p.opts.connections as u32;
    writeln!(
        w,
        "{} connections{}{}, {} threads{}, {}{}",
        connections,
        if connections < a.connections {
            format!(
                " (of -c {}: -n {} needs no more)",
                a.connections, connections
            )
        } else {
            String::new()
        },
        if o.processes > 1 {
            format!(
                " in {} processes (at most {} open at once)",
                o.processes, o.peak_open
            )
        } else {
            format!(" (at most {} open at once)", o.peak_open)
        },
        p.opts.threads.min(connections as usize),
        if o.processes > 1 { " each" } else { "" },
        match a.per_connection {
            Some(k) => format!("{k} requests per connection"),
            None => "keep-alive".into(),
        },
        a.rate
            .map_or(String::new(), |r| format!(", fixed rate {r} req/s"))
    )
}

/// The load's figures in words.
fn write_words(
    a: &LoadArgs,
    p: &LoadPlan,
    o: &load::Outcome,
    w: &mut dyn Write,
) -> anyhow::Result<()> {
    let s = o.stats();
    if o.stopped {
        writeln!(
            w,
            "interrupted after {:.2} s: the figures are those of the part that ran",
            s.seconds
        )?;
    }
    write_shape(a, p, o, w)?;
    writeln!(
        w,
        "  requests  {} in {:.2} s: {:.0} req/s, {:.1} MB/s of bodies, {} connections",
        fmt_n(o.requests as f64),
        s.seconds,
        s.requests_per_s,
        s.mb_per_s,
        fmt_n(o.connections as f64)
    )?;
    if let Some(t) = s.opening_s {
        writeln!(
            w,
            "  opening   {t:.2} s asking for the first connections, before the heat-up (not measured)"
        )?;
    }
    let l = &s.latency_ns;
    if o.requests == 0 {
        writeln!(w, "  latency   none: no request was answered")?;
    } else {
        writeln!(
            w,
            "  latency   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            fmt_ns(l.p50 as f64),
            fmt_ns(l.p90 as f64),
            fmt_ns(l.p99 as f64),
            fmt_ns(l.p999 as f64),
            fmt_ns(l.max as f64)
        )?;
    }
    if !p.opts.sources.is_empty() {
        writeln!(
            w,
            "  from      {}",
            spread::describe_sources(&p.opts.sources)
        )?;
    }
    if let Some(n) = &p.source_note {
        writeln!(w, "  note      {n}")?;
    }
    write_errors(o, w)?;
    Ok(())
}

/// The errors and statuses of a load in words.
fn write_errors(o: &load::Outcome, w: &mut dyn Write) -> std::io::Result<()> {
    let e = &o.errors;
    if e.total() == 0 {
        writeln!(w, "  errors    none")?;
    } else {
        writeln!(
            w,
            "  errors    connect {}{}, port exhaustion (EADDRNOTAVAIL) {}, reset {}, timeout {}, bad status {}, short body {}; {} retried, {} given up",
            e.connect,
            by_errno(&e.connect_errno),
            e.port_exhausted,
            e.reset,
            e.timeout,
            e.status,
            e.short_body,
            o.retries,
            o.failed
        )?;
    }
    let st: Vec<String> = o
        .statuses
        .iter()
        .map(|(k, v)| format!("{k}: {}", fmt_n(*v as f64)))
        .collect();
    if st.is_empty() {
        writeln!(w, "  status    none: no response")
    } else {
        writeln!(w, "  status    {}", st.join(", "))
    }
}

/// `load --json`: the load's figures, and `"interrupted": true` when ^C or
/// SIGTERM ended it early; the processes that made it, the most
/// connections open at once, the source addresses (when chosen) and each
/// round's figures (with --rounds).
#[derive(serde::Serialize)]
struct LoadJson<'a> {
    #[serde(flatten)]
    stats: &'a crate::results::LoadStats,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    interrupted: bool,
    processes: u32,
    peak_open: u64,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    sources: &'a [std::net::IpAddr],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    rounds: Vec<crate::results::LoadStats>,
}

/// A progress line on stderr while the load runs, when stderr is a
/// terminal: elapsed time against the duration (or requests against the
/// count), requests so far and their rate over the last interval. Ended
/// (and cleared) when dropped.
struct Ticker {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Ticker {
    fn start(opts: &LoadOptions, quiet: bool) -> Ticker {
        let done = Arc::new(AtomicBool::new(false));
        let thread = match (&opts.live, quiet || !std::io::stderr().is_terminal()) {
            (Some(live), false) => {
                let (live, done, total, duration) = (
                    Arc::clone(live),
                    Arc::clone(&done),
                    opts.total,
                    opts.duration,
                );
                Some(std::thread::spawn(move || {
                    tick(&live, &done, total, duration)
                }))
            }
            _ => None,
        };
        Ticker { done, thread }
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The ticker's loop: redraws every 250 ms until `done`.
fn tick(live: &ItemCounters, done: &AtomicBool, total: Option<u64>, duration: Option<Duration>) {
    // The bar follows whichever ends the load: the duration, else the count.
    let (len, by_time) = match (duration, total) {
        (Some(d), _) => (d.as_millis().max(1) as u64, true),
        (None, Some(n)) => (n, false),
        (None, None) => (0, false),
    };
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("load [{bar:30}] {elapsed_precise}  ETA {eta}  {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    let start = Instant::now();
    let (mut last, mut last_at) = (0u64, start);
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(250));
        let (requests, _) = live.get();
        let now = Instant::now();
        let rate = (requests - last) as f64 / (now - last_at).as_secs_f64().max(1e-9);
        (last, last_at) = (requests, now);
        bar.set_position(if by_time {
            (now - start).as_millis() as u64
        } else {
            requests
        });
        bar.set_message(format!(
            "{} requests, {} req/s{}",
            fmt_n(requests as f64),
            fmt_n(rate.round()),
            if crate::stop::interrupted() {
                " (stopping)"
            } else {
                ""
            }
        ));
    }
    bar.finish_and_clear();
}
