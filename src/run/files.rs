//! The result files' whole life: their names (given, or claimed under
//! `results/`), checked against the output rules before anything is
//! measured; created empty, so that an unwritable path fails at once;
//! saved after every series and workload; marked complete at the end.

use crate::results::{self, ResultFile, output};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};

/// A result file being recorded and where it goes.
pub struct Recording {
    /// Its path.
    pub path: PathBuf,
    /// What it holds so far.
    pub file: ResultFile,
}

impl Recording {
    /// Writes the file (atomically). A write cut short by a signal
    /// (`EINTR`, which std retries for most calls but not every one) is
    /// tried again, up to three times: a stop signal must not cost the
    /// results.
    pub fn save(&self) -> anyhow::Result<()> {
        let mut tries = 0;
        loop {
            tries += 1;
            match results::write_atomic(&self.path, &self.file) {
                Err(e) if tries < 3 && cut_short(&e) => continue,
                r => {
                    return r.with_context(|| {
                        format!("cannot write the result file {}", self.path.display())
                    });
                }
            }
        }
    }
}

/// Whether `e` is a system call cut short by a signal.
fn cut_short(e: &results::output::WriteError) -> bool {
    let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = at {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::Interrupted)
        {
            return true;
        }
        at = c.source();
    }
    false
}

/// Marks every file complete (unless interrupted) and writes it.
pub fn finish(recs: &mut [Recording]) -> anyhow::Result<()> {
    if crate::stop::interrupted() {
        return Ok(());
    }
    for rec in recs.iter_mut() {
        rec.file.finished = Some(results::now_rfc3339());
        rec.file.complete = true;
        rec.save()?;
    }
    Ok(())
}

/// `results/<host>-<UTC time>`, without the extension.
fn default_base(host: &str) -> PathBuf {
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let t: String = results::now_rfc3339()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    PathBuf::from("results").join(format!("{host}-{t}"))
}

/// `base` with `tail` added to its last component (no extension replaced).
fn appended(base: &Path, tail: &str) -> PathBuf {
    let mut n = base.as_os_str().to_os_string();
    n.push(tail);
    PathBuf::from(n)
}

/// Where a run's files go.
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The result file (`--out`); none: `results/<host>-<UTC time>.json`.
    pub out: Option<PathBuf>,
    /// Replace existing regular files (`--force`).
    pub force: bool,
    /// No HTML report beside the result file (`--no-report`).
    pub no_report: bool,
}

/// The files of a run: its result files (one, or one per profile) and the
/// HTML report, claimed.
pub struct Claimed {
    /// The result files, created empty.
    pub results: Vec<PathBuf>,
    /// The HTML report to write at the end.
    pub html: Option<PathBuf>,
    /// Whether the names were chosen here (default names).
    chosen: bool,
}

impl Claimed {
    /// Gives back the names claimed when nothing was measured into them.
    pub fn give_back(&self) {
        for o in &self.results {
            if std::fs::metadata(o).is_ok_and(|m| m.len() == 0) {
                let _ = std::fs::remove_file(o);
            }
        }
    }
}

/// The result file names under `o` for a run split into `parts` (its
/// tuning profiles or its systems, by name): one file per part when
/// there are several (`<base>-<part>.json`), else one; and the HTML
/// report's.
fn names(o: &Outputs, host: &str, parts: &[String]) -> anyhow::Result<(Vec<PathBuf>, PathBuf)> {
    let several = parts.len() > 1;
    Ok(match &o.out {
        Some(p) if !several => (vec![p.clone()], p.with_extension("html")),
        Some(p) => {
            let ext = p
                .extension()
                .map_or("json".to_string(), |e| e.to_string_lossy().into_owned());
            let base = p.with_extension("");
            let outs = parts
                .iter()
                .map(|part| appended(&base, &format!("-{part}.{ext}")))
                .collect();
            (outs, appended(&base, ".html"))
        }
        None => {
            std::fs::create_dir_all("results")
                .context("cannot create the directory results/ for the result file")?;
            let base = default_base(host);
            let names: Vec<String> = if several {
                parts.iter().map(|p| format!("-{p}")).collect()
            } else {
                vec![String::new()]
            };
            let (base, outs) = output::claim_group(&base, &names, "json")
                .context("cannot create a result file in results/")?;
            (outs, appended(&base, ".html"))
        }
    })
}

/// The result files of a run split into `parts` (see [`names`]) and the
/// HTML report (unless `no_report`), checked
/// against the output rules before anything is measured. New result files
/// are claimed at once (created empty, exclusively), so that no other run
/// can take their names.
pub fn claim(o: &Outputs, host: &str, parts: &[String]) -> anyhow::Result<Claimed> {
    let existing = output::Existing::forced(o.force);
    let (outs, html) = names(o, host, parts)?;
    let claimed = Claimed {
        results: outs,
        html: (!o.no_report).then_some(html),
        chosen: o.out.is_none(),
    };
    let outs = &claimed.results;
    if !claimed.chosen {
        for (i, out) in outs.iter().enumerate() {
            let others: Vec<(&Path, &str)> = outs[..i]
                .iter()
                .map(|p| (p.as_path(), "another result file"))
                .collect();
            output::check("--output", out, existing, &others)?;
        }
    }
    if let Some(h) = &claimed.html {
        if let Some(out) = outs.iter().find(|o| output::same_file(h, o)) {
            bail!(
                "--output {}: the HTML report goes beside the result file as {}, which is the result file itself; name the result file .json, or add --no-report",
                out.display(),
                h.display()
            );
        }
        let others: Vec<(&Path, &str)> = outs
            .iter()
            .map(|p| (p.as_path(), "the result file"))
            .collect();
        if let Err(e) = output::check("the HTML report", h, existing, &others) {
            if claimed.chosen {
                // Give back the names claimed above.
                for o in outs {
                    let _ = std::fs::remove_file(o);
                }
            }
            return Err(e.into());
        }
    }
    if !claimed.chosen {
        for out in outs.iter().filter(|o| !o.exists()) {
            // Claim the name, as for default names.
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(out)
                .with_context(|| format!("cannot create the result file {}", out.display()))?;
        }
    }
    Ok(claimed)
}

/// One recording per result file from `template`, each labelled as
/// `labels` says (the template's label where it says nothing), written at
/// once: the empty files prove the paths are writable before anything is
/// measured.
pub fn create(
    claimed: &Claimed,
    template: &ResultFile,
    labels: &[String],
) -> anyhow::Result<Vec<Recording>> {
    let recs: Vec<Recording> = claimed
        .results
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let mut file = template.clone();
            if let Some(l) = labels.get(i) {
                file.label = l.clone();
            }
            Recording {
                path: path.clone(),
                file,
            }
        })
        .collect();
    for r in &recs {
        r.save()?;
    }
    Ok(recs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    fn fixture() -> ResultFile {
        crate::run::end::tests::fixture()
    }

    static DELIVERED: AtomicU64 = AtomicU64::new(0);

    extern "C" fn count(_sig: libc::c_int) {
        DELIVERED.fetch_add(1, Ordering::Relaxed);
    }

    /// Signals arriving while a result file is written (a handler without
    /// `SA_RESTART`, as scalebench's, so that calls may fail with EINTR)
    /// cost nothing: every save writes the whole file.
    #[test]
    fn a_result_file_is_written_whole_under_a_storm_of_signals() {
        let file = fixture();
        let dir = tempfile::tempdir().unwrap();
        let rec = Recording {
            path: dir.path().join("r.json"),
            file,
        };
        // SAFETY: a handler that only counts, for a signal nothing else in
        // this process uses, sent to this thread alone.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = count as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(libc::SIGUSR2, &sa, std::ptr::null_mut());
        }
        // SAFETY: pthread_self cannot fail.
        let me = unsafe { libc::pthread_self() } as usize;
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let storm = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::SeqCst) {
                    // SAFETY: the writing thread lives until this one is
                    // joined.
                    unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGUSR2) };
                    std::thread::sleep(std::time::Duration::from_micros(20));
                }
            })
        };
        // The storm under way (its thread may wait for a CPU a while on a
        // busy machine), then 40 saves, and more until signals came during
        // them (at most 10 000: a fast machine saves 40 in a few ms).
        let started = std::time::Instant::now();
        while DELIVERED.load(Ordering::Relaxed) == 0
            && started.elapsed() < std::time::Duration::from_secs(30)
        {
            std::thread::yield_now();
        }
        let before = DELIVERED.load(Ordering::Relaxed);
        let mut saved = Vec::new();
        while saved.len() < 40
            || (DELIVERED.load(Ordering::Relaxed) == before && saved.len() < 10_000)
        {
            saved.push(rec.save().map_err(|e| format!("{e:#}")));
            let back: ResultFile =
                serde_json::from_str(&std::fs::read_to_string(&rec.path).unwrap()).unwrap();
            assert_eq!(back.benchmarks.len(), rec.file.benchmarks.len());
        }
        stop.store(true, Ordering::SeqCst);
        storm.join().unwrap();
        let during = DELIVERED.load(Ordering::Relaxed) - before;
        assert!(saved.iter().all(Result::is_ok), "{saved:?}");
        assert!(during > 0, "no signal arrived during the saves");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .filter(|n| n != "r.json")
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
    }
}
