//! A workload's load over every client of the run, as the DragonFly
//! slides ran two clients of 15 000 connections each: with `run --host
//! client=A --host client=B …` each client gets an even share of the
//! connections (and of the request count and rate), runs it as one or
//! more `scalebench load --part` processes — here, or through the host's
//! command prefix there — all at once, and every part's exact figures
//! (counts, errors, the latency histogram's buckets) are merged into the
//! load's outcome; each client's own share is kept beside it
//! ([`Spread::record`]). With one client the load runs as before: in this
//! process, or spread over local processes when one cannot hold it.
//!
//! Every part measures its own wall time on its own host; the merged
//! elapsed time is the longest part's, so a load of a fixed count is as
//! fast as its slowest client, and parts started a few milliseconds apart
//! (an ssh command's start) count those milliseconds.

use crate::ctx::Ctx;
use crate::harness::spread;
use crate::net::load::{self, LoadOptions, Outcome};
use serde_json::json;
use std::collections::BTreeMap;
use std::process::Command;

/// What one client ran of a load spread over several.
#[derive(Debug, Clone)]
pub struct Share {
    /// The client (`local`, `netns:NAME`, `ssh:HOST`): the first is
    /// where scalebench runs and measures.
    pub client: String,
    /// Its connections at once.
    pub connections: u64,
    /// Its load processes.
    pub processes: u32,
    /// What its processes measured, merged.
    pub outcome: Outcome,
}

/// A load's outcome over every client, and each client's share (none
/// when the run has one client).
#[derive(Debug, Clone)]
pub struct Spread {
    /// Every client's figures merged.
    pub outcome: Outcome,
    /// Each client's, in the order of `--host client=…` (empty with one
    /// client).
    pub shares: Vec<Share>,
}

impl Spread {
    /// Load processes over all clients; `None` with one client.
    pub fn processes(&self) -> Option<u32> {
        (!self.shares.is_empty()).then(|| self.shares.iter().map(|s| s.processes).sum())
    }

    /// Puts each client's share in `p` as `clients`, and the processes
    /// over all clients as `load_processes` (nothing with one client).
    pub fn record(&self, p: &mut BTreeMap<String, serde_json::Value>) {
        let Some(processes) = self.processes() else {
            return;
        };
        p.insert("load_processes".into(), json!(processes));
        p.insert(
            "clients".into(),
            json!(
                self.shares
                    .iter()
                    .map(|s| json!({
                        "client": s.client,
                        "connections": s.connections,
                        "processes": s.processes,
                        "load": s.outcome.stats(),
                    }))
                    .collect::<Vec<_>>()
            ),
        );
    }
}

/// Runs `opts` over every client of `ctx`'s run. `processes` is what this
/// client alone needs (1: in this process; more: `scalebench load`
/// processes here), used when it is the only client.
pub fn run(ctx: &Ctx, opts: &LoadOptions, processes: u32) -> Result<Spread, String> {
    let hosts = ctx.hosts();
    let exe = ctx.exe();
    if hosts.more_clients.is_empty() {
        let outcome = if processes > 1 {
            let exe = exe.ok_or("cannot find the scalebench executable to spread the load")?;
            spread::run(exe, opts, processes).map_err(|e| e.to_string())?
        } else {
            load::run(opts).map_err(|e| e.to_string())?
        };
        return Ok(Spread {
            outcome,
            shares: Vec::new(),
        });
    }
    let exe = exe.ok_or("cannot find the scalebench executable to run the load's parts")?;
    let clients: Vec<_> = hosts.clients().collect();
    let mut copies = Vec::new();
    let mut names = Vec::new();
    let mut owners = Vec::new();
    let mut shares = Vec::new();
    for (c, host) in clients.iter().enumerate() {
        let mut mine = spread::share(opts, clients.len(), c);
        if c > 0 {
            // Source addresses are this client's own.
            mine.sources.clear();
        }
        // Fewer connections than clients: the last ones get none, and run
        // nothing (their share is recorded as empty).
        let parts = match mine.connections {
            0 => 0,
            c => spread::processes_for(c as u64).clamp(1, c as u32) as usize,
        };
        for k in 0..parts {
            let args = spread::part_args(&spread::share(&mine, parts, k));
            // This client runs its parts as it is (it already runs where
            // its spec says); the others through their host's prefix.
            let cmd = if c == 0 {
                let mut cmd = Command::new(exe);
                cmd.args(args);
                cmd
            } else {
                host.command(&args, false)?
            };
            copies.push(cmd);
            names.push(format!(
                "load process {} of {parts} on the client {}",
                k + 1,
                host.reach()
            ));
            owners.push(c);
        }
        shares.push((
            host.reach().to_string(),
            mine.connections as u64,
            parts as u32,
        ));
    }
    let outs = spread::run_parts(copies, opts, &names).map_err(|e| e.to_string())?;
    let shares = shares
        .into_iter()
        .enumerate()
        .map(|(c, (client, connections, processes))| {
            let own: Vec<Outcome> = outs
                .iter()
                .zip(&owners)
                .filter(|(_, o)| **o == c)
                .map(|(x, _)| x.clone())
                .collect();
            Share {
                client,
                connections,
                processes,
                outcome: Outcome::merge(&own),
            }
        })
        .collect();
    Ok(Spread {
        outcome: Outcome::merge(&outs),
        shares,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_are_recorded_per_client_and_processes_summed() {
        let o = |requests| Outcome {
            requests,
            ..Outcome::empty(std::time::Duration::from_secs(1))
        };
        let one = Spread {
            outcome: o(10),
            shares: Vec::new(),
        };
        let mut p = BTreeMap::new();
        one.record(&mut p);
        assert!(p.is_empty(), "one client: nothing recorded");
        let two = Spread {
            outcome: o(30),
            shares: vec![
                Share {
                    client: "netns:a".into(),
                    connections: 5,
                    processes: 1,
                    outcome: o(10),
                },
                Share {
                    client: "ssh:b".into(),
                    connections: 5,
                    processes: 2,
                    outcome: o(20),
                },
            ],
        };
        two.record(&mut p);
        assert_eq!(p["load_processes"], 3);
        assert_eq!(p["clients"][1]["client"], "ssh:b");
        assert_eq!(p["clients"][1]["processes"], 2);
        assert_eq!(p["clients"][0]["load"]["requests"], 10);
    }
}
