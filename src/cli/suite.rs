//! `scalebench suite list|show`: the built-in suites, and a suite file
//! shown once checked as `run FILE` checks it (the file is read by
//! [`crate::run::suite`]).

use crate::run::spec::RunSpec;
use crate::run::suite::{self, BUILT_IN, Suite};
use clap::Subcommand;
use std::process::ExitCode;

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
                let (spec, suites) = suite::with_files(RunSpec {
                    targets: vec![name.clone()],
                    ..RunSpec::default()
                })?;
                crate::run::plan::plan(&spec, &suites).map_err(|e| suite::attribute(e, &suites))?;
            }
            super::output::to_stdout(|w| -> anyhow::Result<()> {
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
    super::output::to_stdout(|w| -> anyhow::Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::REGISTRY;
    use crate::run::RunOptions;
    use crate::run::plan;
    use crate::run::spec::Pinning;
    use crate::run::suite::RUN_KEYS;
    use crate::workloads::{Size, WORKLOADS};
    use clap::FromArgMatches;

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

    /// The options of `scalebench run ARGS` as `main` reads them.
    fn options(args: &[&str]) -> anyhow::Result<RunOptions> {
        let argv = ["scalebench", "run"].iter().chain(args);
        let m = super::super::command().try_get_matches_from(argv)?;
        let super::super::Command::Run(a) = super::super::Cli::from_arg_matches(&m)?.command else {
            anyhow::bail!("not run");
        };
        let given = super::super::workflags::given(m.subcommand_matches("run").unwrap());
        super::super::run::options(&a, given)
    }

    /// `scalebench run ARGS` as `main` reads it, planned.
    fn planned(args: &[&str]) -> anyhow::Result<(RunOptions, plan::RunPlan)> {
        let o = options(args)?;
        let p = plan::plan(&o.spec, &o.suites)?;
        Ok((o, p))
    }

    #[test]
    fn the_built_in_suites_are_the_registered_sizes() {
        for (name, full) in [("quick", false), ("full", true)] {
            let m = RunSpec {
                targets: vec![name.into()],
                ..RunSpec::default()
            };
            let p = plan::plan(&m, &[]).unwrap();
            assert_eq!(items(&p), registered(full), "{name}");
            // As before: no runs of its own (stop once decided), and
            // --max still every benchmark's n.
            assert!(p.decide && p.sweep.is_none() && p.profiles.is_empty());
            let m = RunSpec { max: Some(7), ..m };
            let p = plan::plan(&m, &[]).unwrap();
            assert!(p.targets.iter().all(|t| t.n == 7));
        }
        // The default run is the quick suite.
        let p = plan::plan(&RunSpec::default(), &[]).unwrap();
        assert_eq!(items(&p), registered(false));
    }

    #[test]
    fn a_built_in_suite_shown_and_run_from_its_file_is_the_same_plan() {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in BUILT_IN {
            let s = Suite::find(name).unwrap();
            assert_eq!(&s.text, text);
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
        let run = super::super::command()
            .find_subcommand("run")
            .unwrap()
            .clone();
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
                ":5: [run] runs = \"0\": must be at least 1 (or `auto`), not 0",
            ),
            (
                "[run]\ntimer = \"x\"\n",
                ":4: [run] timer = \"x\": unknown variant `x`, expected `monotonic` or `tsc`",
            ),
            (
                "[run]\nipv6 = \"yes\"\n",
                ":4: [run] ipv6 = \"yes\": invalid type: string \"yes\", expected a boolean",
            ),
            (
                "[run]\nruns = true\n",
                ":4: [run] runs = true: invalid type: boolean `true`, expected a string or a number",
            ),
            (
                "[run]\nruns = [1, 2]\n",
                ":4: [run] runs = [\"1\", \"2\"]: invalid type: sequence, expected a string or a number",
            ),
            (
                "[run]\nsweep = \"connections\"\n",
                ":4: [run] sweep = \"connections\": `connections`: write VARIABLE=LEVEL",
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
                ":4: [run] monitor = \"sometimes\": `sometimes`: on, perf or off",
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
        let (o, p) = planned(&[&f]).unwrap();
        assert_eq!(p.runs, 3);
        assert!(!p.decide && o.spec.ipv6);
        assert_eq!(o.spec.pin, Pinning::Cpu(0));
        assert_eq!(p.profiles.len(), 1);
        assert_eq!(items(&p), ["socket n=50", "mail Quick"]);
        assert_eq!(o.spec.given.value("mail-size"), Some("4096"));
        // The command line's instead: the same option, one it cannot be
        // given with (--no-pin against pin), a workload's option; and a
        // name added after the file's items.
        let (o, p) =
            planned(&[&f, "fork", "--runs", "2", "--no-pin", "--mail-size", "8192"]).unwrap();
        assert_eq!(o.spec.runs, Some(crate::values::Runs::Fixed(2)));
        assert!(o.spec.pin == Pinning::Off && o.spec.ipv6);
        assert_eq!(o.spec.profiles, ["default"]);
        assert_eq!(o.spec.given.value("mail-size"), Some("8192"));
        assert_eq!(o.spec.given.value("mail-recipients"), Some("2"));
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
            e.starts_with(&format!(
                "{d}:4: [run] runs-max: --runs-max and --runs-target go with --runs auto"
            )),
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
        let file = options(&[f]).unwrap();
        let flags = options(&words).unwrap();
        let pf = plan::plan(&file.spec, &file.suites).unwrap();
        let pc = plan::plan(&flags.spec, &flags.suites).unwrap();
        let names = |p: &plan::RunPlan| -> Vec<String> {
            items(p)
                .iter()
                .map(|i| i.split(' ').next().unwrap().to_string())
                .collect()
        };
        assert_eq!(names(&pf), names(&pc));
        // The same request, but for its targets.
        let targets = |o: &RunOptions| RunSpec {
            targets: Vec::new(),
            ..o.spec.clone()
        };
        assert_eq!(targets(&file), targets(&flags));
        // The n it says each benchmark gets.
        let n: Vec<u64> = pf.targets.iter().map(|t| t.n).collect();
        assert_eq!(n, [20_000, 10_000, 2_000]);
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
        let o = options(&[&f]).unwrap();
        let p = plan::plan(&o.spec, &o.suites).unwrap();
        let bench = crate::run::remote::item_spec(&o.spec, RemoteItem::Bench(&p.targets[0]));
        assert_eq!(bench.targets, ["socket"]);
        assert_eq!((bench.max, bench.runs), (Some(50), o.spec.runs));
        assert!(
            bench.given.is_empty(),
            "a benchmark takes no workload's options"
        );
        let work = crate::run::remote::item_spec(&o.spec, RemoteItem::Work(&p.work[0]));
        assert_eq!(work.targets, ["mail"]);
        assert!(work.full && work.max.is_none());
        assert_eq!(work.given.value("mail-size"), Some("4096"));
        // What the other system is given.
        let args = item_args(&o.spec, RemoteItem::Work(&p.work[0]), None, None, "x.json");
        assert_eq!(args[..3], ["__run", "--output", "x.json"]);
        assert_eq!(RunSpec::from_json(&args[3]).unwrap(), work);
    }
}
