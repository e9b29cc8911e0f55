//! `scalebench run`: the command line's options converted once into the
//! run request ([`crate::run::spec::RunSpec`]), laid over the suite files
//! among its targets, and the run started; the run module does the rest
//! (plan, measurements, result files, report). `__run` is the same run
//! from a request in JSON (another system's).

use super::{RunArgs, RunRequestArgs};
use crate::run::files::Outputs;
use crate::run::spec::{Pinning, RunSpec};
use crate::run::{self, RunOptions, plan, suite};
use crate::workloads::Given;
use std::process::ExitCode;

/// The run request of the arguments and the workload flags given: what
/// the command line says, and nothing it does not.
pub fn spec(a: &RunArgs, given: Given) -> RunSpec {
    RunSpec {
        targets: a.targets.clone(),
        max: a.max,
        full: a.full,
        runs: a.runs,
        runs_max: a.runs_max,
        runs_target: a.runs_target,
        warm_up_ops: a.warmup,
        order: a.order,
        within: a.within,
        timer: a.timer.map(Into::into),
        pin: match (a.pin, a.no_pin) {
            (Some(c), _) => Pinning::Cpu(c),
            (None, true) => Pinning::Off,
            (None, false) => Pinning::Default,
        },
        backends: a.backend.clone(),
        ipv6: a.ipv6,
        fit: a.fit,
        record_sysctl: a.record_sysctl.clone(),
        profiles: a.profile.clone(),
        systems: a.system.clone(),
        hosts: a.hosts.clone(),
        why: a.why,
        why_seconds: a.why_seconds,
        profiler: a.profiler.clone(),
        sweep: a.sweep.clone(),
        warm_up: a.heat_up,
        sample_time: a.sample_time,
        samples: a.samples,
        baseline: a.baseline,
        monitor: a.monitor,
        monitor_interval: a.monitor_interval,
        perf_events: a.perf_events.clone(),
        guest_bin: a.guest_bin.clone(),
        guest_clock: a.guest_clock,
        own_clock: None,
        ssh_config: a.ssh_config.clone(),
        given,
    }
}

/// The run's options: the request of the arguments laid over the suite
/// files among its targets, and, with suite files, its plan checked now
/// (an error about an option a file set names the file, line and key).
pub fn options(a: &RunArgs, given: Given) -> anyhow::Result<RunOptions> {
    let (spec, suites) = suite::with_files(spec(a, given))?;
    if !suites.is_empty() {
        plan::plan(&spec, &suites).map_err(|e| suite::attribute(e, &suites))?;
    }
    Ok(RunOptions {
        spec,
        suites,
        outputs: Outputs {
            out: a.out.clone(),
            force: a.force,
            no_report: a.no_report,
        },
        workdir: a.workdir.clone(),
        label: a.label.clone(),
        quiet: a.quiet,
        dry_run: a.dry_run,
        json: a.json,
        command_line: super::workflags::redacted(std::env::args()),
        judged_by_asker: false,
    })
}

/// `scalebench run`.
pub fn run(a: &RunArgs, given: Given) -> anyhow::Result<ExitCode> {
    run::run(options(a, given)?)
}

/// `scalebench __run --output FILE REQUEST`: one run request from
/// another system, quiet, with no HTML report.
pub fn request(a: RunRequestArgs) -> anyhow::Result<ExitCode> {
    let spec = RunSpec::from_json(&a.request)?;
    let command_line = ["scalebench", "__run", "--output"]
        .into_iter()
        .map(String::from)
        .chain([a.out.display().to_string(), spec.redacted().to_json()])
        .collect();
    run::run(RunOptions {
        spec,
        outputs: Outputs {
            out: Some(a.out),
            force: false,
            no_report: true,
        },
        quiet: true,
        command_line,
        judged_by_asker: true,
        ..RunOptions::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::TimerKind;
    use crate::run::remote::{RemoteItem, item_args};
    use crate::run::spec::BackendPick;
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
        options(&a, given).unwrap()
    }

    /// Every item of the plan of `args`: its name, with the options here
    /// and the request another system reads from its command line.
    fn items(args: &[&str]) -> Vec<(String, RunOptions, RunSpec)> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let o = parse(&args);
        let p = plan::plan(&o.spec, &o.suites).unwrap();
        let all = p
            .targets
            .iter()
            .map(RemoteItem::Bench)
            .chain(p.work.iter().map(RemoteItem::Work));
        all.map(|item| {
            let a = item_args(&o.spec, item, None, None, "/tmp/out/x.json");
            // As the other system's `__run` reads it.
            let argv = std::iter::once("scalebench".to_string()).chain(a);
            let m = super::super::command().try_get_matches_from(argv).unwrap();
            let cli = super::super::Cli::from_arg_matches(&m).unwrap();
            let super::super::Command::RunRequest(r) = cli.command else {
                panic!("not __run")
            };
            assert_eq!(r.out, std::path::Path::new("/tmp/out/x.json"));
            let there = RunSpec::from_json(&r.request).unwrap();
            (item.name().to_string(), o.clone(), there)
        })
        .collect()
    }

    #[test]
    fn the_seeds_suite_runs_as_the_seeds_did_and_the_command_line_still_wins() {
        let got = items(&["run", "seeds"]);
        let (_, o, _) = &got[0];
        assert_eq!(o.spec.runs, Some(Runs::Fixed(5)));
        assert_eq!(o.spec.order, Some(crate::harness::series::RunOrder::Up));
        assert!(o.spec.fit);
        let fs = got.iter().find(|(n, _, _)| n == "fs").unwrap();
        assert_eq!(fs.2.given.value("files"), Some("3000000"));
        assert!(fs.2.fit && fs.2.full, "sent so to another system");
        let pg = got.iter().find(|(n, _, _)| n == "pgbench").unwrap();
        assert_eq!(pg.2.given.value("pg-scale"), Some("800"));
        let got = items(&["run", "seeds", "--runs", "2", "--files", "1000"]);
        assert_eq!(got[0].1.spec.runs, Some(Runs::Fixed(2)));
        let fs = got.iter().find(|(n, _, _)| n == "fs").unwrap();
        assert_eq!(fs.2.given.value("files"), Some("1000"));
    }

    #[test]
    fn a_system_s_own_profile_is_the_request_s_one_profile() {
        let o = parse(&["run".to_string(), "socket".to_string()]);
        let p = plan::plan(&o.spec, &o.suites).unwrap();
        let item = RemoteItem::Bench(&p.targets[0]);
        let request = |profile| {
            let a = item_args(&o.spec, item, profile, None, "x.json");
            RunSpec::from_json(a.last().unwrap()).unwrap()
        };
        assert_eq!(request(Some("/sbout/t.toml")).profiles, ["/sbout/t.toml"]);
        assert!(request(None).profiles.is_empty());
    }

    #[test]
    fn a_guest_counting_instructions_is_told_so_in_its_request_and_a_plan_with_systems_refuses_it()
    {
        use crate::systems::qemu::GuestClock;
        let o = parse(&["run".to_string(), "socket".to_string(), "--why".to_string()]);
        let p = plan::plan(&o.spec, &o.suites).unwrap();
        let item = RemoteItem::Bench(&p.targets[0]);
        let request = |clock| {
            let a = item_args(&o.spec, item, None, clock, "x.json");
            RunSpec::from_json(a.last().unwrap()).unwrap()
        };
        let counted = request(Some(GuestClock::Instructions));
        assert_eq!(counted.own_clock, Some(GuestClock::Instructions));
        assert_eq!(request(Some(GuestClock::Time)).own_clock, None);
        assert_eq!(request(None).own_clock, None);
        // There, --why says instructions.
        let there = plan::plan(&counted, &o.suites).unwrap();
        assert!(there.why.as_ref().is_some_and(|w| w.instructions));
        // A run with systems of its own is nobody's guest.
        let mut bad = o.spec.clone();
        bad.own_clock = Some(GuestClock::Instructions);
        bad.systems = vec!["a=ssh:host".parse().unwrap()];
        let e = plan::plan(&bad, &o.suites)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("own-clock is what a system running this one as a guest says"),
            "{e}"
        );
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
        let (_, here, m) = got.iter().find(|g| g.0 == "socket").unwrap();
        assert_eq!(m.targets, ["socket"]);
        let planned = plan::plan(&here.spec, &here.suites).unwrap();
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
        assert_eq!(m.warm_up_ops, Some(3));
        assert_eq!(m.timer, Some(TimerKind::Tsc));
        assert_eq!(m.pin, Pinning::Cpu(1));
        assert_eq!(
            m.backends,
            [
                BackendPick::One(crate::net::Backend::Poll),
                BackendPick::One(crate::net::Backend::Epoll)
            ]
        );
        assert!(m.ipv6);
        assert_eq!(m.record_sysctl, ["fs.nr_open"]);
        // Where this plan runs stays here; a benchmark takes no
        // workload's options.
        assert!(m.systems.is_empty() && m.profiles.is_empty() && m.given.is_empty());
        // Every item of the suite goes, each alone.
        assert_eq!(got.len(), planned.targets.len() + planned.work.len());
        assert!(got.iter().all(|g| g.2.targets == [g.0.clone()]));
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
        assert_eq!(there.targets, ["http-shortconn"]);
        assert!(there.full, "the workload's full size");
        let (a, b) = (there, &here.spec);
        assert_eq!(
            (&a.sweep, a.warm_up, a.sample_time, a.samples, a.baseline),
            (&b.sweep, b.warm_up, b.sample_time, b.samples, b.baseline)
        );
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
            "--mkfs",
            "ext4,xfs",
            "--mount-opts",
            "noatime,nodiratime",
        ]);
        assert_eq!(got.len(), 2);
        for (name, here, there) in &got {
            assert!(!there.full, "{name}: quick");
            assert_eq!(there.given, here.spec.given, "{name}: its own flags");
        }
    }
}
