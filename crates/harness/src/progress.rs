//! Progress on stderr: a bar with ETA per benchmark when stderr is a
//! terminal, plain lines otherwise, nothing when quiet. Updates are cheap
//! and happen between operations, never inside a timed call. A line that
//! cannot be written (the terminal hung up, the pipe's reader ended) is
//! dropped, never a panic ([`sys::stop::say`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An animated bar (stderr is a terminal).
    Bar,
    /// One line per event.
    Lines,
    /// Nothing at all.
    Quiet,
}

impl Mode {
    /// Bar on a terminal, lines otherwise, nothing when `quiet`.
    pub fn detect(quiet: bool) -> Mode {
        if quiet {
            Mode::Quiet
        } else if std::io::stderr().is_terminal() {
            Mode::Bar
        } else {
            Mode::Lines
        }
    }
}

/// The progress display.
pub struct Progress {
    mode: Mode,
    bar: Option<ProgressBar>,
    name: String,
}

impl Progress {
    /// A display in `mode`.
    pub fn new(mode: Mode) -> Progress {
        Progress {
            mode,
            bar: None,
            name: String::new(),
        }
    }

    /// The display mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A benchmark starts; `total` operations are expected.
    pub fn begin(&mut self, name: &str, total: u64) {
        self.name = name.to_string();
        match self.mode {
            Mode::Bar => {
                let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
                bar.set_style(
                    ProgressStyle::with_template(
                        "{prefix:>16} [{bar:30}] {pos}/{len} ops  {elapsed_precise}  ETA {eta}  {msg}",
                    )
                    .expect("valid template")
                    .progress_chars("=> "),
                );
                bar.set_prefix(name.to_string());
                self.bar = Some(bar);
            }
            Mode::Lines => sys::stop::say(&format!("{name}: starting ({total} operations)")),
            Mode::Quiet => {}
        }
    }

    /// `k` more operations are done.
    #[inline]
    pub fn advance(&self, k: u64) {
        if let Some(b) = &self.bar {
            b.inc(k);
        }
    }

    /// A phase message (run 2/5, warm-up …).
    pub fn phase(&self, msg: &str) {
        match self.mode {
            Mode::Bar => {
                if let Some(b) = &self.bar {
                    b.set_message(msg.to_string());
                }
            }
            Mode::Lines => sys::stop::say(&format!("{}: {msg}", self.name)),
            Mode::Quiet => {}
        }
    }

    /// Something the user must see (a cap, a failure): printed in every
    /// mode but quiet, above the bar.
    pub fn note(&self, msg: &str) {
        match (&self.bar, self.mode) {
            (_, Mode::Quiet) => {}
            (Some(b), _) => b.println(format!("{}: {msg}", self.name)),
            (None, _) => sys::stop::say(&format!("{}: {msg}", self.name)),
        }
    }

    /// Prints a note about the whole run, not the current benchmark.
    pub fn note_run(&self, msg: &str) {
        match (&self.bar, self.mode) {
            (_, Mode::Quiet) => {}
            (Some(b), _) => b.println(msg),
            (None, _) => sys::stop::say(msg),
        }
    }

    /// The benchmark is done; `summary` is its one-line result.
    pub fn finish(&mut self, summary: &str) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if self.mode != Mode::Quiet {
            sys::stop::say(&format!("{}: {summary}", self.name));
        }
    }
}
