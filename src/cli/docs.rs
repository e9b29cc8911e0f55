//! `scalebench completions SHELL` and `scalebench man`: shell completions
//! and manual pages generated from the command line's own definitions
//! (`clap_complete`, `clap_mangen`), so that they never disagree with
//! `--help`.

use crate::results::output;
use anyhow::Context;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Options of `man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write `scalebench.1` and a `scalebench-COMMAND.1` for every command
    /// into this directory (which must exist) instead of printing
    /// `scalebench.1`.
    #[arg(long, short, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Replace pages that exist (never a link or anything but a regular
    /// file).
    #[arg(long)]
    pub force: bool,
}

/// Prints the completion script for the shell asked.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut cmd = super::command();
    // Made in memory first: clap_complete panics on a failed write, and a
    // closed pipe (`| head`) is no failure.
    let mut script = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "scalebench", &mut script);
    output::to_stdout(|w| w.write_all(&script))?;
    Ok(ExitCode::SUCCESS)
}

/// One manual page (roff) of `cmd`, its exit statuses in their own section.
fn page(cmd: clap::Command, w: &mut dyn Write) -> anyhow::Result<()> {
    // The examples stay where `--help` has them; the statuses get the
    // section of their own a manual page has.
    let examples = cmd.get_after_help().map(|h| {
        let h = h.to_string();
        h.split("Exit status:")
            .next()
            .unwrap_or_default()
            .trim_end()
            .to_string()
    });
    let cmd = match examples {
        Some(e) => cmd.after_help(e),
        None => cmd,
    };
    let man = clap_mangen::Man::new(cmd);
    man.render(w)?;
    let mut status = roff::Roff::new();
    status.control("SH", ["EXIT STATUS"]);
    for (code, words) in exit_statuses() {
        status.control("TP", [] as [&str; 0]);
        status.text([roff::bold(code)]);
        status.text([roff::roman(words)]);
    }
    status.to_writer(w)?;
    Ok(())
}

/// The exit statuses of `--help` as (status, its words).
fn exit_statuses() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in super::help::EXIT_STATUS.lines().skip(1) {
        let line = line.trim();
        match line.split_once(char::is_whitespace) {
            Some((code, rest)) if code.bytes().all(|b| b.is_ascii_digit()) => {
                out.push((code.to_string(), rest.trim().to_string()));
            }
            _ => {
                if let Some(last) = out.last_mut() {
                    last.1 = format!("{} {line}", last.1);
                }
            }
        }
    }
    out
}

/// Prints `scalebench.1`, or writes every page into `--output`.
pub fn man(a: &ManArgs) -> anyhow::Result<ExitCode> {
    let cmd = super::command();
    let Some(dir) = &a.output else {
        output::to_stdout(|w| page(cmd, w))?;
        return Ok(ExitCode::SUCCESS);
    };
    if !dir.is_dir() {
        anyhow::bail!("--output {}: not a directory", dir.display());
    }
    let mut pages: Vec<(PathBuf, clap::Command)> = vec![(dir.join("scalebench.1"), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("scalebench-{}", sub.get_name());
        // The page names its command in full: `scalebench-run`.
        let sub = sub
            .clone()
            .name(name.clone())
            .version(super::LONG_VERSION.as_str());
        pages.push((dir.join(format!("{name}.1")), sub));
    }
    let existing = output::Existing::forced(a.force);
    for (path, _) in &pages {
        output::check("--output", path, existing, &[])?;
    }
    for (path, cmd) in pages {
        write(&path, cmd)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes one page to `path`.
fn write(path: &Path, cmd: clap::Command) -> anyhow::Result<()> {
    output::write_file_atomic(path, |w| page(cmd, w))
        .with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_exit_statuses_are_read_whole_from_the_help() {
        let s = super::exit_statuses();
        let codes: Vec<&str> = s.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(codes, ["0", "1", "2", "3", "130"]);
        assert!(s[1].1.ends_with("what was measured is kept"), "{:?}", s[1]);
    }
}
