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

impl Format {
    /// The format a file's extension names (`.html`, `.htm`, `.md`,
    /// `.markdown`, `.json`, `.csv`), if any.
    pub fn of_path(p: &std::path::Path) -> Option<Format> {
        let ext = p.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "html" | "htm" => Format::Html,
            "md" | "markdown" => Format::Markdown,
            "json" => Format::Json,
            "csv" => Format::Csv,
            _ => return None,
        })
    }
}

/// The format a command writes: `--format` when given, else the one the
/// `--output` file's extension names ([`Format::of_path`]), else
/// `fallback`. An extension naming a format the command does not write is
/// an error naming the file and the formats it does write.
pub fn chosen_format<F: ValueEnum + Copy>(
    given: Option<F>,
    output: Option<&std::path::Path>,
    fallback: F,
) -> anyhow::Result<F> {
    if let Some(f) = given {
        return Ok(f);
    }
    let Some((path, named)) = output.and_then(|p| Some((p, Format::of_path(p)?))) else {
        return Ok(fallback);
    };
    let name = named
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string());
    F::from_str(&name, true).map_err(|_| {
        let offered: Vec<String> = F::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        anyhow::anyhow!(
            "--output {}: its extension names the {name} format, which this command does not \
             write ({}); give --format",
            path.display(),
            offered.join(", ")
        )
    })
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
