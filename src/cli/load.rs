//! `scalebench load`: drives any HTTP server by URL and prints what it
//! measured (or JSON).

use super::LoadArgs;
use crate::analysis::units::{fmt_n, fmt_ns};
use crate::harness::limits;
use crate::net::Backend;
use crate::net::load::{self, Options, Target};
use anyhow::{Context, bail};
use std::process::ExitCode;

/// Runs the load.
pub fn run(a: LoadArgs) -> anyhow::Result<ExitCode> {
    let _limits = limits::raise();
    // Each URL with where it came from, for errors.
    let mut urls: Vec<(String, String)> = a
        .urls
        .iter()
        .map(|u| (u.clone(), format!("URL {u}")))
        .collect();
    let replay = a.urls_file.is_some();
    if let Some(f) = &a.urls_file {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("cannot read {}", f.display()))?;
        urls.extend(
            text.lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.trim()))
                .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
                .map(|(i, l)| (l.to_string(), format!("{}, line {i}", f.display()))),
        );
    }
    if urls.is_empty() {
        bail!("no URL given (load URL… or --urls FILE)");
    }
    // One resolution per distinct URL.
    let mut targets = Vec::with_capacity(urls.len());
    let mut seen: std::collections::HashMap<String, Target> = std::collections::HashMap::new();
    for (u, from) in &urls {
        let t = match seen.get(u) {
            Some(t) => t.clone(),
            None => {
                let t = Target::parse(u).with_context(|| from.clone())?;
                seen.insert(u.clone(), t.clone());
                t
            }
        };
        targets.push(t);
    }
    let duration = a.duration;
    let timeout = a.timeout;
    let total = match (a.requests, duration) {
        (Some(n), _) => Some(n),
        (None, Some(_)) => None,
        (None, None) if replay => Some(targets.len() as u64),
        (None, None) => bail!("say how much: -n REQUESTS or -d DURATION"),
    };
    let backend = a.backend.unwrap_or_else(|| Backend::available_all()[0]);
    let opts = Options {
        targets,
        connections: a.connections as usize,
        threads: a.threads as usize,
        per_connection: a.per_connection,
        total,
        duration,
        rate: a.rate,
        timeout,
        retries: a.retries,
        backend,
        live: None,
    };
    let o = load::run(&opts).context("the load failed")?;
    let s = o.stats();
    super::commands::with_output("", None, &[], |w| {
        if a.json {
            serde_json::to_writer_pretty(&mut *w, &s)?;
            writeln!(w)?;
            return Ok(());
        }
        writeln!(
            w,
            "{} connections, {} threads, {}{}",
            a.connections,
            opts.threads.min(a.connections as usize),
            match a.per_connection {
                Some(k) => format!("{k} requests per connection"),
                None => "keep-alive".into(),
            },
            a.rate
                .map_or(String::new(), |r| format!(", fixed rate {r} req/s"))
        )?;
        writeln!(
            w,
            "  requests  {} in {:.2} s: {:.0} req/s, {:.1} MB/s of bodies, {} connections",
            fmt_n(o.requests as f64),
            s.seconds,
            s.requests_per_s,
            s.mb_per_s,
            fmt_n(o.connections as f64)
        )?;
        let l = &s.latency_ns;
        writeln!(
            w,
            "  latency   p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
            fmt_ns(l.p50 as f64),
            fmt_ns(l.p90 as f64),
            fmt_ns(l.p99 as f64),
            fmt_ns(l.p999 as f64),
            fmt_ns(l.max as f64)
        )?;
        let e = &o.errors;
        if e.total() == 0 {
            writeln!(w, "  errors    none")?;
        } else {
            writeln!(
                w,
                "  errors    connect {}, reset {}, timeout {}, bad status {}, short body {}; {} retried, {} given up",
                e.connect, e.reset, e.timeout, e.status, e.short_body, o.retries, o.failed
            )?;
        }
        let st: Vec<String> = o
            .statuses
            .iter()
            .map(|(k, v)| format!("{k}: {}", fmt_n(*v as f64)))
            .collect();
        writeln!(w, "  status    {}", st.join(", "))?;
        Ok(())
    })?;
    Ok(if o.failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
