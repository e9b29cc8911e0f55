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

/// `serve --files`: how the server finds and holds a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Files {
    /// Per request: the path looked up, the file opened, its body sent
    /// from it (sendfile, or read/write), the file closed, as the seeds'
    /// servers did.
    PerRequest,
    /// Open files kept and re-checked once a second, bodies up to 64 KB
    /// kept in memory (with --sendfile or --readwrite: sent from the file).
    Cached,
}

impl From<Files> for crate::net::files::Opens {
    fn from(f: Files) -> Self {
        match f {
            Files::PerRequest => Self::PerRequest,
            Files::Cached => Self::Cached,
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

/// A command's `--format` value: which file format it writes, as an
/// output's extension names it ([`Format::of_path`]).
pub trait Written: ValueEnum + Copy {
    /// The format an extension names for this one; `None` for terminal
    /// text, which no extension names.
    fn file_format(self) -> Option<Format>;
}

impl Written for Format {
    fn file_format(self) -> Option<Format> {
        (self != Format::Terminal).then_some(self)
    }
}

/// A value's name on the command line (`sweep-csv`).
fn value_name<F: ValueEnum>(f: &F) -> String {
    f.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_string())
}

/// The extension an output of a file format takes.
fn extension(f: Option<Format>) -> &'static str {
    match f {
        Some(Format::Html) => ".html",
        Some(Format::Markdown) => ".md",
        Some(Format::Json) => ".json",
        Some(Format::Csv) => ".csv",
        Some(Format::Terminal) | None => "with another extension",
    }
}

/// The format a command writes: `--format` when given, else the one the
/// `--output` file's extension names ([`Format::of_path`]), else
/// `fallback`. An extension naming a format the command does not write,
/// or another than `--format`, is an error naming the file, its
/// extension's format and what the command writes: no output is written
/// under a name that says another format.
pub fn chosen_format<F: Written>(
    given: Option<F>,
    output: Option<&std::path::Path>,
    fallback: F,
) -> anyhow::Result<F> {
    let Some((path, named)) = output.and_then(|p| Some((p, Format::of_path(p)?))) else {
        return Ok(given.unwrap_or(fallback));
    };
    let name = value_name(&named);
    let matching = F::value_variants()
        .iter()
        .find(|v| v.file_format() == Some(named));
    if let Some(f) = given {
        if f.file_format() == Some(named) {
            return Ok(f);
        }
        return Err(crate::sys::values::Usage(format!(
            "--format {} contradicts --output {}, whose extension names the {name} format: \
             name the file {}{}",
            value_name(&f),
            path.display(),
            extension(f.file_format()),
            matching.map_or(String::new(), |m| format!(
                ", or give --format {}",
                value_name(m)
            ))
        ))
        .into());
    }
    if fallback.file_format() == Some(named) {
        return Ok(fallback);
    }
    if let Some(f) = matching {
        return Ok(*f);
    }
    let offered: Vec<String> = F::value_variants().iter().map(value_name).collect();
    Err(crate::sys::values::Usage(format!(
        "--output {}: its extension names the {name} format, which this command does not \
         write ({}): name the file {}",
        path.display(),
        offered.join(", "),
        extensions(F::value_variants())
    ))
    .into())
}

/// The names an output of these formats may take, in words: `.md, .json
/// or another extension for terminal`.
fn extensions<F: Written>(formats: &[F]) -> String {
    let mut exts: Vec<&str> = Vec::new();
    for f in formats {
        if let Some(x) = f.file_format().map(|x| extension(Some(x)))
            && !exts.contains(&x)
        {
            exts.push(x);
        }
    }
    let mut words = exts.join(", ");
    if formats.iter().any(|f| f.file_format().is_none()) {
        words.push_str(" or another extension for terminal");
    }
    words
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

impl Written for CompareFormat {
    fn file_format(self) -> Option<Format> {
        match self {
            CompareFormat::Terminal => None,
            CompareFormat::Markdown => Some(Format::Markdown),
            CompareFormat::Json => Some(Format::Json),
        }
    }
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

impl Written for HistoryFormat {
    fn file_format(self) -> Option<Format> {
        match self {
            HistoryFormat::Terminal => None,
            HistoryFormat::Markdown => Some(Format::Markdown),
            HistoryFormat::Json => Some(Format::Json),
            HistoryFormat::Html => Some(Format::Html),
        }
    }
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

impl Written for super::ExportFormat {
    /// Both are CSV.
    fn file_format(self) -> Option<Format> {
        Some(Format::Csv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::ExportFormat;
    use std::path::Path;

    #[test]
    fn the_format_follows_the_output_name_or_is_refused() {
        fn p(s: &str) -> Option<&Path> {
            Some(Path::new(s))
        }
        let f = chosen_format::<Format>;
        assert_eq!(
            f(None, p("r.md"), Format::Terminal).unwrap(),
            Format::Markdown
        );
        assert_eq!(
            f(None, p("r.txt"), Format::Terminal).unwrap(),
            Format::Terminal
        );
        assert_eq!(f(None, None, Format::Terminal).unwrap(), Format::Terminal);
        assert_eq!(
            f(Some(Format::Csv), p("r"), Format::Terminal).unwrap(),
            Format::Csv
        );
        assert_eq!(
            f(Some(Format::Json), p("R.JSON"), Format::Terminal).unwrap(),
            Format::Json
        );
        for (given, out) in [(Format::Csv, "r.json"), (Format::Terminal, "r.html")] {
            let e = f(Some(given), p(out), Format::Terminal)
                .unwrap_err()
                .to_string();
            assert!(e.contains("contradicts --output") && e.contains(out), "{e}");
        }
        // export writes CSV only, in two layouts.
        let x = chosen_format::<ExportFormat>;
        assert_eq!(
            x(None, p("e.csv"), ExportFormat::Csv).unwrap(),
            ExportFormat::Csv
        );
        let sweeps = Some(ExportFormat::SweepCsv);
        assert_eq!(
            x(sweeps, p("s.csv"), ExportFormat::Csv).unwrap(),
            ExportFormat::SweepCsv
        );
        let e = x(None, p("e.json"), ExportFormat::Csv)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--output e.json: its extension names the json format")
                && e.contains("(csv, sweep-csv): name the file .csv"),
            "{e}"
        );
        let e = x(sweeps, p("e.json"), ExportFormat::Csv)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--format sweep-csv contradicts --output e.json"),
            "{e}"
        );
        // compare writes no HTML.
        let e = chosen_format(None, p("c.html"), CompareFormat::Terminal)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(terminal, markdown, json): name the file .md, .json or another extension for terminal"),
            "{e}"
        );
    }
}
