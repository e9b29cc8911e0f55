//! `scalebench why RESULT.json`: the arguments turned into what the run
//! module profiles ([`crate::run::whyfile`]).

use super::WhyArgs;
use crate::run::why::WhyOptions;
use crate::run::whyfile::{WhyFile, why};
use std::process::ExitCode;

/// `scalebench why`.
pub fn run(a: WhyArgs) -> anyhow::Result<ExitCode> {
    why(&WhyFile {
        file: a.file,
        only: a.only,
        out: a.out,
        force: a.force,
        any_host: a.any_host,
        windows: WhyOptions {
            seconds: a.seconds,
            profiler_cmd: a.profiler,
            instructions: crate::sys::clock_counts_instructions(),
        },
        workdir: a.workdir,
        quiet: a.quiet,
    })
}
