//! `scalebench profile list|show|check` and `scalebench restore`.

use super::{ProfileCommand, RestoreArgs};
use crate::harness::workdir;
use crate::run::session;
use crate::tuning::{Os, TuningProfile, apply, describe};
use std::process::ExitCode;

/// `scalebench profile …`.
pub fn run(c: ProfileCommand) -> anyhow::Result<ExitCode> {
    match c {
        ProfileCommand::List { json: false } => list()?,
        ProfileCommand::List { json: true } => list_json()?,
        ProfileCommand::Show { name, json: false } => show(&name)?,
        ProfileCommand::Show { name, json: true } => show_json(&name)?,
        ProfileCommand::Check { name, json } => check(&name, json)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// `scalebench profile list`.
fn list() -> anyhow::Result<()> {
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        let this = Os::this();
        for p in TuningProfile::built_in() {
            let here = p.for_os(this).count();
            let note = if here > 0 || p.items.is_empty() {
                format!("{here} setting{} here", if here == 1 { "" } else { "s" })
            } else {
                let other: Vec<&str> = p.elsewhere(this).iter().map(|o| o.key()).collect();
                format!("for {}: nothing here", other.join(", "))
            };
            writeln!(w, "{:<16} {} ({note})", p.name, p.description)?;
        }
        writeln!(
            w,
            "\nA profile file (TOML, docs/profiles.md) is named by its path."
        )?;
        Ok(())
    })
}

/// Prints `v` as JSON.
fn print_json(v: &serde_json::Value) -> anyhow::Result<()> {
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        serde_json::to_writer_pretty(&mut *w, v)?;
        writeln!(w)?;
        Ok(())
    })
}

/// `scalebench profile list --json`.
fn list_json() -> anyhow::Result<()> {
    let this = Os::this();
    let all: Vec<serde_json::Value> = TuningProfile::built_in()
        .iter()
        .map(|p| {
            let elsewhere: Vec<&str> = p.elsewhere(this).iter().map(|o| o.key()).collect();
            serde_json::json!({
                "name": p.name,
                "description": p.description,
                "settings_here": p.for_os(this).count(),
                "settings": p.items.len(),
                "also_for": elsewhere,
            })
        })
        .collect();
    print_json(&serde_json::json!({ "profiles": all }))
}

/// `scalebench profile show NAME --json`.
fn show_json(name: &str) -> anyhow::Result<()> {
    let p = TuningProfile::find(name)?;
    let settings: Vec<serde_json::Value> = p
        .items
        .iter()
        .map(|i| {
            serde_json::json!({
                "os": i.os.map(|o| o.key()),
                "setting": describe(&i.what),
            })
        })
        .collect();
    print_json(&serde_json::json!({
        "name": p.name,
        "description": p.description,
        "source": p.source,
        "origin": p.origin,
        "notes": p.notes,
        "settings": settings,
    }))
}

/// `scalebench profile show NAME`.
fn show(name: &str) -> anyhow::Result<()> {
    let p = TuningProfile::find(name)?;
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        writeln!(w, "{}: {}", p.name, p.description)?;
        if let Some(s) = &p.source {
            writeln!(w, "source: {s}")?;
        }
        writeln!(w, "origin: {}", p.origin)?;
        for n in &p.notes {
            writeln!(w, "note: {n}")?;
        }
        let every: Vec<_> = p.items.iter().filter(|i| i.os.is_none()).collect();
        if !every.is_empty() {
            writeln!(w, "\nevery system:")?;
            for i in every {
                writeln!(w, "  {}", describe(&i.what))?;
            }
        }
        for os in Os::ALL {
            let mine: Vec<_> = p.items.iter().filter(|i| i.os == Some(os)).collect();
            if mine.is_empty() {
                continue;
            }
            let here = if Some(os) == Os::this() {
                " (this system)"
            } else {
                ""
            };
            writeln!(w, "\n{}{here}:", os.key())?;
            for i in mine {
                writeln!(w, "  {}", describe(&i.what))?;
            }
        }
        if p.items.is_empty() {
            writeln!(w, "\n(no settings: the system as it is)")?;
        }
        Ok(())
    })
}

/// `scalebench profile check NAME`.
fn check(name: &str, json: bool) -> anyhow::Result<()> {
    let p = TuningProfile::find(name)?;
    let r = apply::check(&p, &apply::Mounts::default());
    let wrong = apply::unacceptable(&p);
    super::output::to_stdout(|w| -> anyhow::Result<()> {
        if json {
            serde_json::to_writer_pretty(&mut *w, &r)?;
            writeln!(w)?;
            return Ok(());
        }
        writeln!(
            w,
            "{} on {} (nothing is changed by this check):",
            p.name,
            std::env::consts::OS
        )?;
        for l in r.lines(true) {
            writeln!(w, "  {l}")?;
        }
        if r.changes.is_empty() {
            writeln!(w, "  no settings for this system")?;
        }
        if !r.elsewhere.is_empty() {
            writeln!(w, "settings for other systems: {}", r.elsewhere.join(", "))?;
        }
        let refused = r
            .changes
            .iter()
            .filter(|c| c.status == crate::results::ChangeStatus::Refused)
            .count();
        if refused > wrong.len() {
            let n = refused - wrong.len();
            writeln!(
                w,
                "{n} setting{} would be refused here: a run under it is partial",
                if n == 1 { "" } else { "s" }
            )?;
        }
        Ok(())
    })?;
    if !wrong.is_empty() {
        anyhow::bail!(
            "{name}: {} (a run under it is refused before anything is measured)",
            wrong.join("; ")
        );
    }
    Ok(())
}

/// `scalebench restore`.
pub fn restore(a: RestoreArgs) -> anyhow::Result<ExitCode> {
    if let Some(d) = &a.workdir
        && !d.is_dir()
    {
        anyhow::bail!("--workdir {}: not a directory", d.display());
    }
    let notes = workdir::sweep_dead(a.workdir.as_deref(), session::release_stale);
    if notes.is_empty() {
        sys::out!("nothing to restore: no run that died left its work directory here");
    }
    for n in notes {
        sys::out!("{n}");
    }
    Ok(ExitCode::SUCCESS)
}
