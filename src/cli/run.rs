//! `scalebench run`: the command line's options turned into the run's
//! typed options ([`crate::run::RunOptions`]), and the run started; the
//! run module does the rest (plan, measurements, result files, report).

use super::RunArgs;
use crate::harness::monitor::{PERF_EVENTS, Settings};
use crate::run::files::Outputs;
use crate::run::plan::{Measure, SweepAsk};
use crate::run::suite::Suite;
use crate::run::why::WhyOptions;
use crate::run::{self, RunOptions};
use crate::workloads::Given;
use std::process::ExitCode;

/// What to measure, from the arguments and the suite files among the
/// targets.
fn measure(a: &RunArgs, given: Given, suites: Vec<Suite>) -> anyhow::Result<Measure> {
    Ok(Measure {
        targets: a.targets.clone(),
        suites,
        max: a.max,
        full: a.full,
        runs: a.runs,
        runs_max: a.runs_max,
        runs_target: a.runs_target,
        warmup: a.warmup,
        why: a.why.then(|| WhyOptions {
            seconds: a.why_seconds,
            profiler_cmd: a.profiler.clone(),
        }),
        profiles: a.profile.clone(),
        hosts: a.hosts.clone(),
        ssh_config: a.ssh_config.clone(),
        sweep: SweepAsk {
            levels: a.sweep.clone(),
            heat_up: a.heat_up,
            sample: a.sample_time,
            samples: a.samples,
            baseline: a.baseline,
        },
        given,
        systems: a.system.clone(),
        guest_bin: a.guest_bin.clone(),
        monitor: monitor(a)?,
    })
}

/// The monitor's settings from `--monitor`, `--monitor-interval` and
/// `--perf-events`.
fn monitor(a: &RunArgs) -> anyhow::Result<Option<Settings>> {
    let perf = a.monitor == "perf";
    if !perf && !a.perf_events.is_empty() {
        anyhow::bail!("--perf-events needs --monitor perf");
    }
    if a.monitor == "off" {
        if a.monitor_interval.is_some() {
            anyhow::bail!("--monitor-interval needs the monitor on (not --monitor off)");
        }
        return Ok(None);
    }
    let mut events: Vec<String> = a
        .perf_events
        .iter()
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    if let Some(bad) = events.iter().find(|e| {
        !e.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_:./=@".contains(c))
    }) {
        anyhow::bail!("--perf-events: `{bad}` is not a perf event name");
    }
    if perf && events.is_empty() {
        events = PERF_EVENTS.iter().map(|e| e.to_string()).collect();
    }
    Ok(Some(Settings {
        interval: a.monitor_interval.unwrap_or(Settings::default().interval),
        perf_events: events,
    }))
}

/// The run's options from the arguments, the workload flags given and
/// the suite files read ([`super::suite::run_arguments`]).
pub fn options(a: &RunArgs, given: Given, suites: Vec<Suite>) -> anyhow::Result<RunOptions> {
    Ok(RunOptions {
        measure: measure(a, given, suites)?,
        outputs: Outputs {
            out: a.out.clone(),
            force: a.force,
            no_report: a.no_report,
        },
        timer: a.timer.into(),
        workdir: a.workdir.clone(),
        label: a.label.clone(),
        record_sysctl: a.record_sysctl.clone(),
        pin: a.pin,
        no_pin: a.no_pin,
        backends: a.backend.clone(),
        ipv6: a.ipv6,
        quiet: a.quiet,
        dry_run: a.dry_run,
        json: a.json,
        command_line: super::workflags::redacted(std::env::args()),
    })
}

/// `scalebench run`.
pub fn run(a: RunArgs, given: Given, suites: Vec<Suite>) -> anyhow::Result<ExitCode> {
    run::run(super::suite::checked_options(&a, given, suites)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TimerKind;
    use crate::run::plan;
    use crate::run::remote::{RemoteItem, item_args};
    use crate::values::Runs;
    use clap::FromArgMatches;

    /// The options `args` (after `scalebench`) parse into, as `run` sees
    /// them.
    fn parse(args: &[String]) -> RunOptions {
        let m = super::super::command()
            .try_get_matches_from(std::iter::once("scalebench".to_string()).chain(args.to_vec()))
            .unwrap_or_else(|e| panic!("{args:?}: {e}"));
        let cli = super::super::Cli::from_arg_matches(&m).unwrap();
        let super::super::Command::Run(a) = cli.command else {
            panic!("{args:?}: not run")
        };
        let given = super::super::workflags::given(m.subcommand_matches("run").unwrap());
        options(&a, given, Vec::new()).unwrap()
    }

    /// Every item of the plan of `args`: its name, with the options here
    /// and those its command line for another system parses into.
    fn items(args: &[&str]) -> Vec<(String, RunOptions, RunOptions)> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = parse(&args);
        let p = plan::plan(&o.measure).unwrap();
        let all = p
            .targets
            .iter()
            .map(RemoteItem::Bench)
            .chain(p.work.iter().map(RemoteItem::Work));
        all.map(|item| {
            let a = item_args(&o, item, "/tmp/out/x.json");
            (item.name().to_string(), o.clone(), parse(&a))
        })
        .collect()
    }

    #[test]
    fn a_benchmark_elsewhere_has_its_n_and_every_option_that_shapes_it() {
        let got = items(&[
            "run",
            "quick",
            "--runs",
            "auto",
            "--runs-max",
            "7",
            "--runs-target",
            "8",
            "--warmup",
            "3",
            "--timer",
            "tsc",
            "--pin",
            "1",
            "--backend",
            "poll,epoll",
            "-6",
            "--record-sysctl",
            "fs.nr_open",
            "--out",
            "/somewhere/r.json",
            "--force",
            "--label",
            "here",
        ]);
        let (_, here, there) = got.iter().find(|g| g.0 == "socket").unwrap();
        let m = &there.measure;
        assert_eq!(m.targets, ["socket"]);
        let planned = plan::plan(&here.measure).unwrap();
        let n = planned
            .targets
            .iter()
            .find(|t| t.bench.info().name == "socket")
            .unwrap()
            .n;
        assert_eq!(m.max, Some(n), "the n this plan gives it");
        assert_eq!(m.runs, Some(Runs::Auto));
        assert_eq!(m.runs_max, Some(7));
        assert!((m.runs_target.unwrap() - 0.08).abs() < 1e-12);
        assert_eq!(m.warmup, Some(3));
        assert_eq!(there.timer, TimerKind::Tsc);
        assert_eq!(there.pin, Some(1));
        assert_eq!(there.backends, ["poll", "epoll"]);
        assert!(there.ipv6 && there.quiet && there.outputs.no_report);
        assert_eq!(there.record_sysctl, ["fs.nr_open"]);
        // Where this machine's files go, and its name, stay here.
        assert_eq!(
            there.outputs.out.as_deref(),
            Some(std::path::Path::new("/tmp/out/x.json"))
        );
        assert!(!there.outputs.force);
        assert_eq!(there.label, None);
        // Every item of the suite goes, each alone.
        assert_eq!(got.len(), planned.targets.len() + planned.work.len());
        assert!(got.iter().all(|g| g.2.measure.targets == [g.0.clone()]));
    }

    #[test]
    fn a_workload_elsewhere_has_its_size_its_sweep_and_its_own_flags() {
        let got = items(&[
            "run",
            "http-shortconn",
            "--full",
            "--sweep",
            "connections=1,20,400",
            "--heat-up",
            "1.5",
            "--sample-time",
            "250ms",
            "--samples",
            "2",
            "--baseline",
            "20",
        ]);
        let (_, here, there) = &got[0];
        assert_eq!(there.measure.targets, ["http-shortconn"]);
        assert!(there.measure.full, "the workload's full size");
        assert_eq!(there.measure.sweep, here.measure.sweep);
        // Repeated flags, values with commas, comma-split lists.
        let got = items(&[
            "run",
            "fs",
            "fs-sizes",
            "--dir",
            "/tmp",
            "--dir",
            "/var/tmp",
            "--files",
            "300",
            "--sizes",
            "8K,16K",
            "--mount-opts",
            "noatime,nodiratime",
        ]);
        assert_eq!(got.len(), 2);
        for (name, here, there) in &got {
            assert!(!there.measure.full, "{name}: quick");
            assert_eq!(
                format!("{:?}", there.measure.given),
                format!("{:?}", here.measure.given),
                "{name}: its own flags"
            );
        }
    }
}
