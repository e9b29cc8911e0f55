//! The command line's choices (`--timer`, `--backend`, `--format`): clap
//! value enums here, each turned into the library's own type, so that no
//! type below the command line knows clap.

use clap::ValueEnum;

/// `--timer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Timer {
    /// clock_gettime(CLOCK_MONOTONIC).
    Monotonic,
    /// rdtsc (x86_64 only), calibrated against CLOCK_MONOTONIC.
    Tsc,
}

impl From<Timer> for crate::results::TimerKind {
    fn from(t: Timer) -> Self {
        match t {
            Timer::Monotonic => Self::Monotonic,
            Timer::Tsc => Self::Tsc,
        }
    }
}

/// `--backend`: an event backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// Linux epoll(7).
    Epoll,
    /// BSD and macOS kqueue(2).
    Kqueue,
    /// poll(2): every wait passes every descriptor.
    Poll,
    /// select(2): every wait passes bitmaps up to the highest descriptor;
    /// descriptors at or above FD_SETSIZE cannot be watched.
    Select,
}

impl From<Backend> for crate::net::Backend {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Epoll => Self::Epoll,
            Backend::Kqueue => Self::Kqueue,
            Backend::Poll => Self::Poll,
            Backend::Select => Self::Select,
        }
    }
}

/// `--format` of the reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// A summary table for a terminal (fits 100 columns).
    Terminal,
    /// One verdict row per system and benchmark.
    Csv,
    /// The verdict table in Markdown.
    Markdown,
    /// One self-contained HTML file with every sample charted.
    Html,
    /// Verdicts and differences, machine-readable.
    Json,
}

/// `compare --format`: only what `compare` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// A table for a terminal (fits 100 columns).
    Terminal,
    /// A table for a pull-request comment.
    Markdown,
    /// Every row with its evidence, machine-readable.
    Json,
}

impl From<CompareFormat> for crate::report::Format {
    fn from(f: CompareFormat) -> Self {
        match f {
            CompareFormat::Terminal => Self::Terminal,
            CompareFormat::Markdown => Self::Markdown,
            CompareFormat::Json => Self::Json,
        }
    }
}

/// `history --format`: only what `history` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    /// A table per figure for a terminal.
    Terminal,
    /// A table per figure in Markdown.
    Markdown,
    /// The figures, machine-readable.
    Json,
    /// One HTML file with a chart per figure.
    Html,
}

impl From<HistoryFormat> for crate::report::Format {
    fn from(f: HistoryFormat) -> Self {
        match f {
            HistoryFormat::Terminal => Self::Terminal,
            HistoryFormat::Markdown => Self::Markdown,
            HistoryFormat::Json => Self::Json,
            HistoryFormat::Html => Self::Html,
        }
    }
}

impl From<Format> for crate::report::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Terminal => Self::Terminal,
            Format::Csv => Self::Csv,
            Format::Markdown => Self::Markdown,
            Format::Html => Self::Html,
            Format::Json => Self::Json,
        }
    }
}
