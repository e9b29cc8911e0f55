//! `scalebench testbed up|status|down`: network namespaces standing in for
//! hosts ([`crate::testbed`]).

use crate::harness::reaper;
use crate::testbed::{self, Spec, Testbed};
use anyhow::anyhow;
use clap::Subcommand;
use std::process::ExitCode;
use std::time::Duration;

/// `scalebench testbed …`.
#[derive(Debug, Subcommand)]
pub enum TestbedCommand {
    /// Make N network namespaces joined by veth links in 198.18.0.0/15: a
    /// star, the first host (h1) linked to each other one and forwarding
    /// between them. Linux, root. A test bed of the same name is removed
    /// first.
    Up(UpArgs),
    /// Print a test bed: its namespaces, addresses, links and shaping, and
    /// whether its sshd processes run.
    Status(StatusArgs),
    /// Remove a test bed: the sshd processes it started, its namespaces
    /// (with their links) and its files.
    Down(DownArgs),
}

/// Options of `testbed down`.
#[derive(Debug, clap::Args)]
pub struct DownArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub name: NameArg,
    /// When its state file is missing or cannot be read: remove what its
    /// name finds instead — the namespaces sb-NAME-… (with their links and
    /// the sshd it started in them) and its directory.
    #[arg(long)]
    pub force: bool,
}

/// The test bed's name.
#[derive(Debug, clap::Args)]
pub struct NameArg {
    /// The test bed's name (letters, digits, `-`, `_`; at most 24): its
    /// namespaces are sb-NAME-h1, sb-NAME-h2 …, its files in
    /// sb-testbed-NAME in the temp dir.
    #[arg(long, default_value = "tb", value_parser = name)]
    pub name: String,
}

/// Options of `testbed up`.
#[derive(Debug, clap::Args)]
pub struct UpArgs {
    /// Hosts (network namespaces), 1 to 64.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = super::values::whole::<u32>(1, testbed::MAX_HOSTS as u32))]
    pub hosts: u32,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub name: NameArg,
    /// Shape every link to this rate, tbf on both ends: 1gbit, 100mbit,
    /// 10mbit, … (bits per second with SI units, as tc writes them).
    #[arg(long, value_name = "RATE", value_parser = link)]
    pub link: Option<u64>,
    /// Start an sshd in every namespace: port 22, root by the test bed's
    /// client key only; its config, keys, PID file and log in the test
    /// bed's directory.
    #[arg(long)]
    pub sshd: bool,
    /// Print the test bed as JSON (its state and what runs) instead of
    /// in words.
    #[arg(long)]
    pub json: bool,
    /// Pause between the steps of making it (for tests that kill it on
    /// the way).
    #[arg(long, hide = true, value_name = "DURATION", value_parser = super::values::heat_up)]
    pub step_pause: Option<Duration>,
}

/// Options of `testbed status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub name: NameArg,
    /// Print JSON: the state file and what is found now.
    #[arg(long)]
    pub json: bool,
}

fn name(s: &str) -> Result<String, String> {
    testbed::check_name(s).map(|()| s.to_string())
}

fn link(s: &str) -> Result<u64, String> {
    testbed::parse_rate(s)
}

/// Runs a `testbed` command.
pub fn run(c: TestbedCommand) -> anyhow::Result<ExitCode> {
    crate::sys::netns::supported().map_err(|e| anyhow!(e))?;
    match c {
        TestbedCommand::Up(a) => up(a),
        TestbedCommand::Status(a) => status(a),
        TestbedCommand::Down(a) => down(a),
    }
}

fn up(a: UpArgs) -> anyhow::Result<ExitCode> {
    reaper::install();
    let spec = Spec {
        link_bits: a.link,
        sshd: a.sshd,
        pause: a.step_pause.unwrap_or_default(),
        ..Spec::numbered(&a.name.name, a.hosts as usize)
    };
    match Testbed::up(&spec, &crate::stop::interrupted) {
        Ok((tb, notes)) => {
            for n in notes {
                sys::say!("testbed: {n}");
            }
            let live = tb.live();
            tb.keep();
            if a.json {
                sys::out!("{}", serde_json::to_string_pretty(&live)?);
            } else {
                sys::stop::out_raw(&testbed::describe(&live));
                sys::out!(
                    "  remove it with: scalebench testbed down --name {}",
                    spec.name
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) if crate::stop::interrupted() => {
            sys::say!("testbed up interrupted ({e:#}): what was made is removed");
            Ok(ExitCode::from(130))
        }
        Err(e) => Err(e.context(format!("testbed up --name {}", spec.name))),
    }
}

/// The test bed named `name`, or why there is none (naming namespaces of
/// its prefix that no state file records).
fn open(name: &str) -> anyhow::Result<Testbed> {
    let dir = testbed::default_dir(name);
    if !dir.join(testbed::STATE_FILE).exists() {
        let prefix = format!("{}{name}-", testbed::PREFIX);
        let strays: Vec<String> = std::fs::read_dir("/run/netns")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix))
            .collect();
        return Err(anyhow!(
            "no test bed named {name} (no {}){}",
            dir.join(testbed::STATE_FILE).display(),
            if strays.is_empty() {
                String::new()
            } else {
                format!(
                    "; namespaces {} exist but no state file records them: not touched ({})",
                    strays.join(", "),
                    testbed::way_out(name)
                )
            }
        ));
    }
    Testbed::open(&dir).map_err(|e| anyhow!("test bed {name}: {e:#}: {}", testbed::way_out(name)))
}

fn status(a: StatusArgs) -> anyhow::Result<ExitCode> {
    let live = open(&a.name.name)?.live();
    if a.json {
        sys::out!("{}", serde_json::to_string_pretty(&live)?);
    } else {
        sys::stop::out_raw(&testbed::describe(&live));
    }
    Ok(ExitCode::SUCCESS)
}

fn down(a: DownArgs) -> anyhow::Result<ExitCode> {
    crate::sys::netns::privileged().map_err(|e| anyhow!(e))?;
    let name = &a.name.name;
    let state = testbed::default_dir(name).join(testbed::STATE_FILE);
    let unreadable = if !state.exists() {
        Some(format!("no state file {}", state.display()))
    } else {
        testbed::load(&testbed::default_dir(name))
            .err()
            .map(|e| crate::sys::errno_words(&format!("{e:#}")))
    };
    let notes = match unreadable {
        Some(why) if a.force => {
            sys::say!("testbed: {why}: removing what the name {name} finds (--force)");
            testbed::force_down(name)
        }
        _ => open(name)?.down(),
    };
    if notes.is_empty() {
        sys::out!("nothing of a test bed named {name} found: nothing removed");
    }
    for n in notes {
        sys::out!("{n}");
    }
    Ok(ExitCode::SUCCESS)
}
