//! The workloads' own flags on `scalebench run`: each workload declares
//! its options as data ([`crate::workloads::WorkloadFlag`]); here they become
//! clap arguments, and what was given goes back to the workloads as a
//! [`Given`].

use crate::workloads::{self, Given, WorkloadFlag};
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Arg, ArgAction, ArgMatches, Command};

/// The clap id of a workload flag: its long name (the run's own arguments
/// have their field names, `sweep`).
fn id(name: &str) -> &str {
    name
}

/// One workload flag as a clap argument.
fn arg(f: &'static WorkloadFlag, owners: &[&str]) -> Arg {
    let mut a = Arg::new(id(f.name))
        .long(f.name)
        .help(f.help)
        .help_heading(f.heading);
    let _ = owners;
    a = match f.value {
        None => a.action(ArgAction::SetTrue),
        Some(v) => {
            let a = a
                .value_name(v)
                .allow_negative_numbers(true)
                .action(if f.many {
                    ArgAction::Append
                } else {
                    ArgAction::Set
                });
            let a = if f.split { a.value_delimiter(',') } else { a };
            if !f.choices.is_empty() {
                a.value_parser(PossibleValuesParser::new(
                    f.choices
                        .iter()
                        .map(|(name, help)| PossibleValue::new(*name).help(*help)),
                ))
            } else if let Some(check) = f.check {
                a.value_parser(move |s: &str| check(s).map(|()| s.to_string()))
            } else {
                a
            }
        }
    };
    for c in f.conflicts {
        a = a.conflicts_with(id(c));
    }
    for r in f.requires {
        a = a.requires(id(r));
    }
    a
}

/// `run` with every workload's flags.
pub fn add(run: Command) -> Command {
    workloads::flags()
        .into_iter()
        .fold(run, |c, (f, owners)| c.arg(arg(f, &owners)))
}

/// The workload flags given to `run`.
pub fn given(m: &ArgMatches) -> Given {
    let mut g = Given::default();
    for (f, _) in workloads::flags() {
        match f.value {
            None => {
                if m.get_flag(id(f.name)) {
                    g.set(f.name, Vec::new());
                }
            }
            Some(_) => {
                if let Some(v) = m.get_many::<String>(id(f.name)) {
                    g.set(f.name, v.cloned().collect());
                }
            }
        }
    }
    g
}

/// The command line as recorded: the value of a secret flag
/// (`--pg-server`, a connection string that may hold a password) is
/// replaced by `(redacted)`.
pub fn redacted(args: impl Iterator<Item = String>) -> Vec<String> {
    let secret: Vec<String> = workloads::flags()
        .into_iter()
        .filter(|(f, _)| f.secret)
        .map(|(f, _)| format!("--{}", f.name))
        .collect();
    let mut out: Vec<String> = Vec::new();
    for a in args {
        if out.last().is_some_and(|p| secret.contains(p)) {
            out.push("(redacted)".into());
        } else if let Some(s) = secret.iter().find(|s| a.starts_with(&format!("{s}="))) {
            out.push(format!("{s}=(redacted)"));
        } else {
            out.push(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `run` as the command line has it, with the workload flags.
    fn run_command() -> Command {
        use clap::CommandFactory;
        add(super::super::Cli::command()
            .find_subcommand("run")
            .unwrap()
            .clone())
    }

    #[test]
    fn secret_values_are_not_recorded() {
        let secret = workloads::flags()
            .into_iter()
            .find(|(f, _)| f.secret)
            .map(|(f, _)| format!("--{}", f.name))
            .expect("a workload has a secret flag");
        let argv = [
            "scalebench",
            "run",
            &secret,
            "password=x",
            &format!("{secret}=y=z"),
        ];
        assert_eq!(
            redacted(argv.iter().map(|s| s.to_string())),
            vec![
                "scalebench".to_string(),
                "run".into(),
                secret.clone(),
                "(redacted)".into(),
                format!("{secret}=(redacted)")
            ]
        );
    }

    #[test]
    fn every_workload_flag_is_a_run_flag_and_comes_back_given() {
        // Each flag alone: a switch, or a flag with its first choice (not
        // those needing another).
        for (f, _) in workloads::flags() {
            let mut argv = vec!["run".to_string(), format!("--{}", f.name)];
            match (f.value, f.choices.first()) {
                (None, _) => {}
                (Some(_), Some((choice, _))) => argv.push(choice.to_string()),
                (Some(_), None) => continue,
            }
            if !f.requires.is_empty() {
                continue;
            }
            let m = run_command()
                .try_get_matches_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            let g = given(&m);
            assert!(g.has(f.name), "{argv:?}");
            if f.value.is_some() {
                assert_eq!(g.value(f.name), argv.get(2).map(String::as_str));
            }
        }
        // A value its check refuses is a usage error naming the flag.
        let (f, _) = workloads::flags()
            .into_iter()
            .find(|(f, _)| f.check.is_some_and(|c| c("x").is_err()))
            .expect("a checked flag");
        let e = run_command()
            .try_get_matches_from(["run", &format!("--{}", f.name), "x"])
            .unwrap_err()
            .to_string();
        assert!(e.contains(&format!("--{}", f.name)), "{e}");
    }
}
