//! `scalebench run`: the command line's options turned into the run's
//! typed options ([`crate::run::RunOptions`]), and the run started; the
//! run module does the rest (plan, measurements, result files, report).

use super::RunArgs;
use crate::run::files::Outputs;
use crate::run::plan::{Measure, SweepAsk};
use crate::run::why::WhyOptions;
use crate::run::{self, RunOptions};
use crate::workloads::Given;
use std::process::ExitCode;

/// What to measure, from the arguments.
fn measure(a: &RunArgs, given: Given) -> Measure {
    Measure {
        targets: a.targets.clone(),
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
    }
}

/// The run's options from the arguments and the workload flags given.
pub fn options(a: &RunArgs, given: Given) -> RunOptions {
    RunOptions {
        measure: measure(a, given),
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
        command_line: super::workflags::redacted(std::env::args()),
    }
}

/// `scalebench run`.
pub fn run(a: RunArgs, given: Given) -> anyhow::Result<ExitCode> {
    run::run(options(&a, given))
}
