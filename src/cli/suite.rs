//! Suite files on the command line: `scalebench run FILE.toml` reads the
//! file ([`crate::run::suite`]), checks its `[run]` options as `run`'s own
//! flags (the same value checks, refused by file, line and key), and lays
//! the file's options under those given beside it; `scalebench suite
//! list|show` prints the built-in suites and checks a file.

use super::RunArgs;
use crate::run::suite::{self, BUILT_IN, Setting, Suite};
use crate::workloads::Given;
use anyhow::anyhow;
use clap::parser::ValueSource;
use clap::{ArgMatches, FromArgMatches, Subcommand};
use std::ffi::OsString;
use std::process::ExitCode;

/// The `run` options a suite's `[run]` may set, by their long names: those
/// that shape what is measured. Where the result files go, the work
/// directory, the label and the progress belong to the machine that runs
/// it, and each benchmark's n and each workload's size to its own table.
pub const RUN_KEYS: &[&str] = &[
    "runs",
    "runs-max",
    "runs-target",
    "warm-up-ops",
    "timer",
    "pin",
    "no-pin",
    "backend",
    "ipv6",
    "record-sysctl",
    "profile",
    "system",
    "host",
    "why",
    "why-seconds",
    "sweep",
    "warm-up",
    "sample-time",
    "samples",
    "baseline",
    "monitor",
    "monitor-interval",
    "perf-events",
];

/// `scalebench suite …`.
#[derive(Debug, Subcommand)]
pub enum SuiteCommand {
    /// The built-in suites, a line each.
    List {
        /// Print JSON: each suite's name, description and file.
        #[arg(long)]
        json: bool,
    },
    /// Print a suite file: a built-in suite's, or a file's once checked
    /// (every key, name and value, as `run FILE` checks it).
    Show {
        /// A built-in suite's name or a suite file's path.
        #[arg(value_name = "NAME|FILE")]
        name: String,
    },
}

/// `scalebench suite …`.
pub fn run(c: SuiteCommand) -> anyhow::Result<ExitCode> {
    match c {
        SuiteCommand::List { json } => list(json),
        SuiteCommand::Show { name } => {
            let s = Suite::find(&name)?;
            if suite::is_path(&name) {
                // As `run FILE` would plan it.
                let argv = ["scalebench", "run", &name].map(OsString::from);
                let (a, given, suites) = run_arguments(argv.to_vec())?;
                checked_options(&a, given, suites)?;
            }
            super::output::to_stdout(|w| {
                write!(w, "{}", s.text)?;
                if !s.text.ends_with('\n') {
                    writeln!(w)?;
                }
                Ok(())
            })?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `suite list`.
fn list(json: bool) -> anyhow::Result<ExitCode> {
    let all: Vec<Suite> = BUILT_IN
        .iter()
        .filter_map(|(n, _)| Suite::built_in(n))
        .collect();
    super::output::to_stdout(|w| {
        if json {
            let doc: Vec<serde_json::Value> = all
                .iter()
                .map(|s| {
                    serde_json::json!({
                        "name": s.name,
                        "description": s.description,
                        "file": format!("suites/{}.toml", s.name),
                    })
                })
                .collect();
            serde_json::to_writer_pretty(&mut *w, &doc)?;
            writeln!(w)?;
        } else {
            for s in &all {
                writeln!(w, "{:<8} {}", s.name, s.description)?;
            }
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `run`'s definition with every workload's flags.
fn run_command() -> clap::Command {
    super::command()
        .find_subcommand("run")
        .expect("run is a command")
        .clone()
}

/// clap's error in words, without its `error:` and its hints.
fn clap_words(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let text = text.trim_start_matches("error: ");
    let text = text.split("\n\n").next().unwrap_or(text);
    text.lines().map(str::trim).collect::<Vec<_>>().join(" ")
}

/// `ORIGIN:LINE: TABLE KEY …`, the start of a message about a setting.
fn at(s: &Suite, x: &Setting) -> String {
    format!("{}:{}: {} {}", s.origin, x.line, x.table, x.key)
}

/// One `[run]` setting checked as `run` checks its flag: a known key, the
/// flag's shape (a switch, one value, several) and the value itself.
fn check_run_key(run: &clap::Command, s: &Suite, x: &Setting) -> anyhow::Result<()> {
    let flag = RUN_KEYS
        .contains(&x.key.as_str())
        .then(|| run.get_arguments().find(|a| a.get_long() == Some(&x.key)))
        .flatten();
    let Some(flag) = flag else {
        return Err(anyhow!(
            "{}:{}: unknown key `{}` in [run] (known: {})",
            s.origin,
            x.line,
            x.key,
            RUN_KEYS.join(", ")
        ));
    };
    let switch = !flag.get_action().takes_values();
    let many = matches!(flag.get_action(), clap::ArgAction::Append)
        || flag.get_value_delimiter().is_some();
    use suite::Value::*;
    let shape = match (&x.value, switch, many) {
        (Switch(_), true, _) => None,
        (v, true, _) => Some(format!("a switch, true or false, not {}", v.shown())),
        (Switch(_), false, _) => Some("a value, not true or false".to_string()),
        (Many(_), false, false) => Some("one value, not an array".to_string()),
        _ => None,
    };
    if let Some(why) = shape {
        return Err(anyhow!("{}: {why}", at(s, x)));
    }
    let argv = ["scalebench".to_string(), "run".to_string()]
        .into_iter()
        .chain(x.value.args(&x.key));
    match super::command().try_get_matches_from(argv) {
        Err(e) if e.kind() != clap::error::ErrorKind::MissingRequiredArgument => Err(anyhow!(
            "{} = {}: {}",
            at(s, x),
            x.value.shown(),
            clap_words(&e)
        )),
        _ => Ok(()),
    }
}

/// Every setting of `suites`, each once: a `[run]` key checked, and an
/// option two files both set given alike by both.
fn check(suites: &[Suite]) -> anyhow::Result<Vec<(usize, Setting)>> {
    let run = run_command();
    let mut all: Vec<(usize, Setting)> = Vec::new();
    for (i, s) in suites.iter().enumerate() {
        for x in &s.run {
            check_run_key(&run, s, x)?;
        }
        for x in s.run.iter().chain(&s.flags) {
            match all.iter().find(|(_, o)| o.key == x.key) {
                Some((_, o)) if o.value == x.value => {}
                Some((j, o)) => {
                    return Err(anyhow!(
                        "{} = {}: {}:{} sets it to {}; give an option once for the whole run",
                        at(s, x),
                        x.value.shown(),
                        suites[*j].origin,
                        o.line,
                        o.value.shown()
                    ));
                }
                None => all.push((i, x.clone())),
            }
        }
    }
    Ok(all)
}

/// Whether the command line gave the option of `long`, or one it cannot
/// be given with: then it replaces the file's.
fn given_beside(run: &clap::Command, m: &ArgMatches, long: &str) -> bool {
    let Some(flag) = run.get_arguments().find(|a| a.get_long() == Some(long)) else {
        return false;
    };
    let explicit =
        |a: &clap::Arg| m.value_source(a.get_id().as_str()) == Some(ValueSource::CommandLine);
    explicit(flag)
        || run.get_arg_conflicts_with(flag).into_iter().any(explicit)
        || run.get_arguments().filter(|a| explicit(a)).any(|a| {
            run.get_arg_conflicts_with(a)
                .iter()
                .any(|c| c.get_id() == flag.get_id())
        })
}

/// An error of the plan about an option a suite file set (`--profile x:
/// …`), with the file, line and key put first.
pub fn attribute(e: anyhow::Error, suites: &[Suite]) -> anyhow::Error {
    let words = super::error_words(&e);
    let set = suites
        .iter()
        .flat_map(|s| s.run.iter().chain(&s.flags).map(move |x| (s, x)))
        .find(|(_, x)| {
            let flag = format!("--{}", x.key);
            words
                .strip_prefix(&flag)
                .is_some_and(|rest| rest.starts_with([' ', ':', '=']))
        });
    match set {
        Some((s, x)) => anyhow!("{}: {words}", at(s, x)),
        None => e,
    }
}

/// The run's options ([`super::run::options`]) and, with suite files,
/// its plan checked now: an error about an option a file set names the
/// file, line and key.
pub fn checked_options(
    a: &RunArgs,
    given: Given,
    suites: Vec<Suite>,
) -> anyhow::Result<crate::run::RunOptions> {
    let files = suites.clone();
    let o = super::run::options(a, given, suites).map_err(|e| attribute(e, &files))?;
    if !files.is_empty() {
        crate::run::plan::plan(&o.measure).map_err(|e| attribute(e, &files))?;
    }
    Ok(o)
}

/// `run`'s options and workload flags from the command line `argv`, with
/// the suite files among its targets read: each file's `[run]` and
/// workload options are added to the command line unless it gives the
/// same option (or one it cannot be given with) itself. The files' items
/// go to the plan by their paths.
pub fn run_arguments(argv: Vec<OsString>) -> anyhow::Result<(RunArgs, Given, Vec<Suite>)> {
    let parse = |argv: &[OsString]| -> anyhow::Result<(RunArgs, Given, ArgMatches)> {
        let m = super::command()
            .try_get_matches_from(argv)
            .map_err(|e| anyhow!("{}", clap_words(&e)))?;
        let cli = super::Cli::from_arg_matches(&m).map_err(|e| anyhow!("{}", clap_words(&e)))?;
        let super::Command::Run(a) = cli.command else {
            return Err(anyhow!("not a run command line"));
        };
        let rm = m.subcommand_matches("run").cloned().unwrap_or_default();
        Ok((*a, super::workflags::given(&rm), rm))
    };
    let (a, given, m) = parse(&argv)?;
    let files: Vec<&String> = a.targets.iter().filter(|t| suite::is_path(t)).collect();
    if files.is_empty() {
        return Ok((a, given, Vec::new()));
    }
    let suites: Vec<Suite> = files
        .iter()
        .map(|f| Suite::read(f))
        .collect::<anyhow::Result<_>>()?;
    let mut suites = suites;
    let run = run_command();
    let mut more: Vec<OsString> = Vec::new();
    for (i, x) in check(&suites)? {
        if given_beside(&run, &m, &x.key) {
            // Not the run's: no message will name it.
            let s = &mut suites[i];
            s.run.retain(|y| y.key != x.key);
            s.flags.retain(|y| y.key != x.key);
        } else {
            more.extend(x.value.args(&x.key).into_iter().map(OsString::from));
        }
    }
    let names: Vec<&str> = suites.iter().map(|s| s.origin.as_str()).collect();
    let all: Vec<OsString> = argv.into_iter().chain(more).collect();
    let (a, given, _) =
        parse(&all).map_err(|e| anyhow!("{} with the command line: {e}", names.join(", ")))?;
    Ok((a, given, suites))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::REGISTRY;
    use crate::run::plan::{self, Measure};
    use crate::workloads::{Size, WORKLOADS};

    /// The plan's items: each benchmark with its n, each workload with
    /// its size.
    fn items(p: &plan::RunPlan) -> Vec<String> {
        p.targets
            .iter()
            .map(|t| format!("{} n={}", t.bench.info().name, t.n))
            .chain(
                p.work
                    .iter()
                    .map(|w| format!("{} {:?}", w.workload.info().name, w.size)),
            )
            .collect()
    }

    /// What the built-in suites were before they were files: every
    /// benchmark at its registered quick or full n, and the quick
    /// workloads at the quick size or every workload at the full one,
    /// in the registries' order.
    fn registered(full: bool) -> Vec<String> {
        let benches = REGISTRY.iter().map(|b| {
            let i = b.info();
            format!("{} n={}", i.name, if full { i.full_n } else { i.quick_n })
        });
        let size = if full { Size::Full } else { Size::Quick };
        let works = WORKLOADS
            .iter()
            .filter(|w| full || w.info().quick)
            .map(|w| format!("{} {size:?}", w.info().name));
        benches.chain(works).collect()
    }

    /// `scalebench run ARGS` as `main` reads it, planned.
    fn planned(args: &[&str]) -> anyhow::Result<(RunArgs, plan::RunPlan)> {
        let argv: Vec<OsString> = ["scalebench", "run"]
            .iter()
            .chain(args)
            .map(OsString::from)
            .collect();
        let (a, given, suites) = run_arguments(argv)?;
        let o = checked_options(&a, given, suites)?;
        let p = plan::plan(&o.measure)?;
        Ok((a, p))
    }

    #[test]
    fn the_built_in_suites_are_the_registered_sizes() {
        for (name, full) in [("quick", false), ("full", true)] {
            let m = Measure {
                targets: vec![name.into()],
                ..Measure::default()
            };
            let p = plan::plan(&m).unwrap();
            assert_eq!(items(&p), registered(full), "{name}");
            // As before: no runs of its own (stop once decided), and
            // --max still every benchmark's n.
            assert!(p.decide && p.sweep.is_none() && p.profiles.is_empty());
            let m = Measure { max: Some(7), ..m };
            assert!(plan::plan(&m).unwrap().targets.iter().all(|t| t.n == 7));
        }
        // The default run is the quick suite.
        let p = plan::plan(&Measure::default()).unwrap();
        assert_eq!(items(&p), registered(false));
    }

    #[test]
    fn a_built_in_suite_shown_and_run_from_its_file_is_the_same_plan() {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in BUILT_IN {
            let s = Suite::find(name).unwrap();
            assert_eq!(&s.text, text);
            check(std::slice::from_ref(&s)).unwrap();
            let path = t.path().join(format!("{name}.toml"));
            std::fs::write(&path, text).unwrap();
            let (_, from_file) = planned(&[path.to_str().unwrap()]).unwrap();
            let (_, by_name) = planned(&[name]).unwrap();
            assert_eq!(items(&from_file), items(&by_name), "{name}");
        }
    }

    /// A suite file in `dir` with `body` after its head.
    fn file(dir: &std::path::Path, name: &str, body: &str) -> String {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("format = \"scalebench-suite/1\"\nname = \"t\"\n{body}"),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    }

    /// The error of `run ARGS`.
    fn refused(args: &[&str]) -> String {
        match planned(args) {
            Ok(_) => panic!("{args:?} was planned"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn run_keys_are_run_flags_and_refused_by_file_line_and_key() {
        let run = run_command();
        for k in RUN_KEYS {
            assert!(
                run.get_arguments().any(|a| a.get_long() == Some(k)),
                "{k} is not a flag of run"
            );
        }
        let t = tempfile::tempdir().unwrap();
        for (body, want) in [
            (
                "[run]\noutput = \"r.json\"\n",
                ":4: unknown key `output` in [run] (known: runs, ",
            ),
            (
                "[run]\n\nruns = 0\n",
                ":5: [run] runs = \"0\": invalid value '0' for '--runs <R|auto>': must be at least 1",
            ),
            (
                "[run]\ntimer = \"x\"\n",
                ":4: [run] timer = \"x\": invalid value 'x' for '--timer <TIMER>' [possible values: monotonic, tsc]",
            ),
            (
                "[run]\nipv6 = \"yes\"\n",
                ":4: [run] ipv6: a switch, true or false, not \"yes\"",
            ),
            (
                "[run]\nruns = true\n",
                ":4: [run] runs: a value, not true or false",
            ),
            (
                "[run]\nruns = [1, 2]\n",
                ":4: [run] runs: one value, not an array",
            ),
            (
                "[run]\nsweep = \"connections\"\n",
                ":4: [run] sweep = \"connections\": invalid value",
            ),
            (
                "[run]\nprofile = [\"default\", \"\"]\n",
                ":4: [run] profile: --profile: an empty name",
            ),
            (
                "[run]\nprofile = \"no-such-profile\"\n",
                ":4: [run] profile: --profile no-such-profile: unknown profile",
            ),
            (
                "[run]\nsweep = \"connections=1,10\"\n",
                ":4: [run] sweep: --sweep connections=…: no workload selected",
            ),
            (
                "[run]\nmonitor = \"sometimes\"\n",
                ":4: [run] monitor = \"sometimes\": invalid value 'sometimes' for '--monitor <on|perf|off>'",
            ),
            (
                "[run]\nmonitor = \"off\"\nmonitor-interval = \"2s\"\n",
                ":5: [run] monitor-interval: --monitor-interval needs the monitor on",
            ),
        ] {
            let f = file(t.path(), "a.toml", &format!("{body}[benchmark.socket]\n"));
            let e = refused(&[&f]);
            assert!(
                e.starts_with(&format!("{f}{want}")),
                "{body:?}:\n{e}\nwanted: {f}{want}"
            );
        }
        // A missing file is named.
        let e = refused(&["/nonexistent/s.toml"]);
        assert!(
            e.starts_with("cannot read the suite file /nonexistent/s.toml"),
            "{e}"
        );
    }

    #[test]
    fn options_beside_a_suite_file_replace_its_own() {
        let t = tempfile::tempdir().unwrap();
        let f = file(
            t.path(),
            "a.toml",
            "[run]\nruns = 3\npin = 0\nprofile = [\"default\"]\nipv6 = true\n\
             [benchmark.socket]\nn = 50\n[workload.mail]\nmail-size = 4096\nmail-recipients = 2\n",
        );
        // The file's own.
        let (a, p) = planned(&[&f]).unwrap();
        assert_eq!(p.runs, 3);
        assert!(!p.decide && a.ipv6);
        assert_eq!(a.pin, Some(0));
        assert_eq!(p.profiles.len(), 1);
        assert_eq!(items(&p), ["socket n=50", "mail Quick"]);
        let given = run_arguments(["scalebench", "run", &f].map(OsString::from).to_vec())
            .unwrap()
            .1;
        let o = super::super::run::options(&a, given, Vec::new()).unwrap();
        assert_eq!(o.measure.given.value("mail-size"), Some("4096"));
        // The command line's instead: the same option, one it cannot be
        // given with (--no-pin against pin), a workload's option; and a
        // name added after the file's items.
        let argv: Vec<OsString> = [
            "scalebench",
            "run",
            &f,
            "fork",
            "--runs",
            "2",
            "--no-pin",
            "--mail-size",
            "8192",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        let (a, given, suites) = run_arguments(argv).unwrap();
        assert_eq!(a.runs, Some(crate::values::Runs::Fixed(2)));
        assert!(a.no_pin && a.pin.is_none() && a.ipv6);
        assert_eq!(a.profile, ["default"]);
        assert_eq!(given.value("mail-size"), Some("8192"));
        assert_eq!(given.value("mail-recipients"), Some("2"));
        let o = super::super::run::options(&a, given, suites).unwrap();
        let p = plan::plan(&o.measure).unwrap();
        let fork = crate::bench::find("fork").unwrap().info().quick_n;
        assert_eq!(
            items(&p),
            [
                "socket n=50".to_string(),
                format!("fork n={fork}"),
                "mail Quick".into()
            ]
        );
        // --max is every benchmark's n, the file's too.
        let (_, p) = planned(&[&f, "--max", "20"]).unwrap();
        assert_eq!(items(&p), ["socket n=20", "mail Quick"]);
    }

    #[test]
    fn two_suite_files_add_their_items_but_set_an_option_alike() {
        let t = tempfile::tempdir().unwrap();
        let a = file(
            t.path(),
            "a.toml",
            "[run]\nruns = 3\n[benchmark.socket]\nn = 50\n",
        );
        let b = file(
            t.path(),
            "b.toml",
            "[run]\nruns = 3\n[benchmark.bind]\nn = 60\n",
        );
        let (_, p) = planned(&[&a, &b, "quick"]).unwrap();
        assert_eq!(p.runs, 3);
        let got = items(&p);
        assert_eq!(got[..2], ["socket n=50", "bind n=60"]);
        assert_eq!(
            got.len(),
            registered(false).len(),
            "the rest of quick, each once"
        );
        let c = file(
            t.path(),
            "c.toml",
            "\n[run]\nruns = 4\n[benchmark.bind]\nn = 60\n",
        );
        let e = refused(&[&a, &c]);
        assert!(
            e.starts_with(&format!(
                "{c}:5: [run] runs = \"4\": {a}:4 sets it to \"3\""
            )),
            "{e}"
        );
        // What two of the file's options cannot be together is named.
        let d = file(
            t.path(),
            "d.toml",
            "[run]\nruns-max = 5\n[benchmark.bind]\n",
        );
        let e = refused(&[&d]);
        assert!(
            e.starts_with(&format!("{d} with the command line: ")) && e.contains("--runs"),
            "{e}"
        );
        assert!(planned(&[&d, "--runs", "auto"]).is_ok());
    }

    /// docs/suites.md.
    fn guide() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/suites.md");
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn the_guide_names_every_run_key_and_its_example_is_the_run_it_says() {
        let text = guide();
        let rows: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("| `"))
            .filter_map(|l| l.split_once("` | `--").map(|(k, _)| k))
            .collect();
        assert_eq!(rows, RUN_KEYS, "docs/suites.md's [run] table");
        // Its example suite, planned, and the command line it says is
        // the same run.
        let example = text
            .split("```toml\n")
            .nth(1)
            .and_then(|t| t.split("```").next())
            .unwrap();
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("nightly.toml");
        std::fs::write(&path, example).unwrap();
        let f = path.to_str().unwrap();
        let line = text
            .lines()
            .find(|l| l.starts_with("scalebench run socket fork connect"))
            .unwrap();
        let words: Vec<&str> = line.split_whitespace().skip(2).collect();
        let argv = |args: &[&str]| -> Vec<OsString> {
            ["scalebench", "run"]
                .iter()
                .chain(args)
                .map(OsString::from)
                .collect()
        };
        let (a, g, s) = run_arguments(argv(&[f])).unwrap();
        let file = checked_options(&a, g, s).unwrap();
        let (a, g, s) = run_arguments(argv(&words)).unwrap();
        let flags = super::super::run::options(&a, g, s).unwrap();
        let pf = plan::plan(&file.measure).unwrap();
        let pc = plan::plan(&flags.measure).unwrap();
        let names = |p: &plan::RunPlan| -> Vec<String> {
            items(p)
                .iter()
                .map(|i| i.split(' ').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(names(&pf), names(&pc));
        assert_eq!(
            format!("{:?}", file.measure.given),
            format!("{:?}", flags.measure.given)
        );
        assert_eq!(file.measure.runs, flags.measure.runs);
        assert_eq!(file.measure.profiles, flags.measure.profiles);
        assert_eq!(
            (&file.backends, &file.record_sysctl, file.timer),
            (&flags.backends, &flags.record_sysctl, flags.timer)
        );
        // The n it says each benchmark gets.
        let n: Vec<u64> = pf.targets.iter().map(|t| t.n).collect();
        assert_eq!(n, [20_000, 10_000, 4_000]);
        assert_eq!(
            pf.work.iter().map(|w| w.size).collect::<Vec<_>>(),
            [Size::Quick; 2]
        );
    }

    #[test]
    fn a_suite_item_on_another_system_gets_its_n_size_and_options() {
        use crate::run::remote::{RemoteItem, item_args};
        let t = tempfile::tempdir().unwrap();
        let f = file(
            t.path(),
            "a.toml",
            "[run]\nruns = 2\n[benchmark.socket]\nn = 50\n\
             [workload.mail]\nsize = \"full\"\nmail-size = 4096\n",
        );
        let argv = ["scalebench", "run", &f].map(OsString::from).to_vec();
        let (a, given, suites) = run_arguments(argv).unwrap();
        let o = super::super::run::options(&a, given, suites).unwrap();
        let p = plan::plan(&o.measure).unwrap();
        let bench = item_args(&o, RemoteItem::Bench(&p.targets[0]), "x.json").join(" ");
        assert!(
            bench.starts_with("run socket --max 50 --runs 2 "),
            "{bench}"
        );
        let work = item_args(&o, RemoteItem::Work(&p.work[0]), "x.json").join(" ");
        assert!(work.starts_with("run mail --full --runs 2 "), "{work}");
        assert!(work.contains(" --mail-size 4096 "), "{work}");
    }
}
