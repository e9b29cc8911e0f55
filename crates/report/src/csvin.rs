//! Samples from other tools: CSV with a header line naming the columns
//! `n` and `ns` (required) and `run` (optional), in any order. Columns
//! `system` and `benchmark` (or `series`), as `scalebench export` writes
//! them, keep series apart ([`parse_series`]); other columns are ignored.
//! Errors name the file and line.

use analysis::Sample;
use std::path::{Path, PathBuf};

/// Why a CSV file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read it")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A required column is missing from the header.
    #[error("{path}: line 1: the header must name the columns `n` and `ns` (found: {})", if found.is_empty() { "an empty line: is the file empty?" } else { found.as_str() })]
    Header {
        /// The file.
        path: PathBuf,
        /// The header as found.
        found: String,
    },
    /// A record is malformed.
    #[error("{path}: line {line}: {message}")]
    Record {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// JSON, not CSV (a result file, most likely).
    #[error("{path}: {what}, not CSV{hint}")]
    Json {
        /// The file.
        path: PathBuf,
        /// What it is.
        what: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// No data rows.
    #[error("{path}: no samples after the header")]
    Empty {
        /// The file.
        path: PathBuf,
    },
}

/// The text of `path` (`-` reads standard input).
fn read_text(path: &Path) -> Result<String, CsvError> {
    let io = |source| CsvError::Io {
        path: path.to_path_buf(),
        source,
    };
    if path == Path::new("-") {
        std::io::read_to_string(std::io::stdin()).map_err(io)
    } else {
        std::fs::read_to_string(path).map_err(io)
    }
}

/// Reads samples from `path` (`-` reads standard input).
pub fn read(path: &Path) -> Result<Vec<Sample>, CsvError> {
    parse(&read_text(path)?, path)
}

/// Parses CSV text into one list of samples, whatever series the rows
/// name; `path` only names the source in errors.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Sample>, CsvError> {
    Ok(parse_keyed(text, path)?
        .into_iter()
        .map(|(_, s)| s)
        .collect())
}

/// One series of a CSV file: its name (`system · benchmark`, from the
/// columns that exist; `None` when the file has neither) and samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name, from the `system` and `benchmark`/`series` columns.
    pub name: Option<String>,
    /// Its samples, in file order.
    pub samples: Vec<Sample>,
}

/// Reads the series of `path` (`-` reads standard input).
pub fn read_series(path: &Path) -> Result<Vec<Series>, CsvError> {
    parse_series(&read_text(path)?, path)
}

/// Parses CSV text into its series, in the order each first appears.
pub fn parse_series(text: &str, path: &Path) -> Result<Vec<Series>, CsvError> {
    let mut out: Vec<Series> = Vec::new();
    for (key, s) in parse_keyed(text, path)? {
        match out.iter_mut().find(|x| x.name == key) {
            Some(x) => x.samples.push(s),
            None => out.push(Series {
                name: key,
                samples: vec![s],
            }),
        }
    }
    Ok(out)
}

/// Every sample with the series its row names.
fn parse_keyed(text: &str, path: &Path) -> Result<Vec<(Option<String>, Sample)>, CsvError> {
    if let Some(e) = json_instead(text, path) {
        return Err(e);
    }
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| record_err(path, 1, e.to_string()))?;
    let cols = Columns::of(headers, path)?;
    let mut out = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            let msg = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => {
                    format!("{len} fields where the header has {expected_len}")
                }
                _ => e.to_string(),
            };
            record_err(path, line, msg)
        })?;
        out.push(cols.row(&rec, path)?);
    }
    if out.is_empty() {
        return Err(CsvError::Empty {
            path: path.to_path_buf(),
        });
    }
    Ok(out)
}

/// The error for JSON given as CSV (a result file, most likely), if
/// `text` is JSON.
fn json_instead(text: &str, path: &Path) -> Option<CsvError> {
    if !text.trim_start().starts_with(['{', '[']) {
        return None;
    }
    let result = text.contains("\"schema\"") && text.contains("scalebench");
    Some(CsvError::Json {
        path: path.to_path_buf(),
        what: if result {
            "a scalebench result file"
        } else {
            "JSON"
        },
        hint: if result {
            ": its verdicts are shown by `scalebench report`, its samples as CSV by `scalebench export`"
        } else {
            ""
        },
    })
}

/// A malformed record of `path` at `line`.
fn record_err(path: &Path, line: u64, message: String) -> CsvError {
    CsvError::Record {
        path: path.to_path_buf(),
        line,
        message,
    }
}

/// Where the columns a sample is read from are.
struct Columns {
    /// `n`.
    n: usize,
    /// `ns`.
    ns: usize,
    /// `run`, if any.
    run: Option<usize>,
    /// `system` and `benchmark` (or `series`), those that exist.
    keys: Vec<usize>,
}

impl Columns {
    /// The columns named by `headers` (any case); an error without `n`
    /// and `ns`.
    fn of(headers: &csv::StringRecord, path: &Path) -> Result<Columns, CsvError> {
        let col = |name: &str| headers.iter().position(|h| h.eq_ignore_ascii_case(name));
        let (Some(n), Some(ns)) = (col("n"), col("ns")) else {
            return Err(CsvError::Header {
                path: path.to_path_buf(),
                found: headers.iter().collect::<Vec<_>>().join(","),
            });
        };
        Ok(Columns {
            n,
            ns,
            run: col("run"),
            keys: [col("system"), col("benchmark").or_else(|| col("series"))]
                .into_iter()
                .flatten()
                .collect(),
        })
    }

    /// The series and sample of one record, or what is wrong with it.
    fn row(
        &self,
        rec: &csv::StringRecord,
        path: &Path,
    ) -> Result<(Option<String>, Sample), CsvError> {
        let line = rec.position().map_or(0, |p| p.line());
        let num = |i: usize, what: &str| -> Result<f64, CsvError> {
            let s = rec.get(i).unwrap_or("");
            let v: f64 = s
                .parse()
                .map_err(|_| record_err(path, line, format!("{what} is not a number: {s:?}")))?;
            if !v.is_finite() || v < 0.0 {
                return Err(record_err(
                    path,
                    line,
                    format!("{what} must be a finite number ≥ 0, not {s}"),
                ));
            }
            // Counts are held exactly up to 2^53; n is a count.
            if what == "n" && v > (1u64 << 53) as f64 {
                return Err(record_err(
                    path,
                    line,
                    format!("n must be at most 2^53 (9007199254740992), not {s}"),
                ));
            }
            Ok(v)
        };
        let run = match self.run {
            Some(i) => {
                let s = rec.get(i).unwrap_or("");
                s.parse::<u32>().map_err(|_| {
                    record_err(path, line, format!("run is not a whole number: {s:?}"))
                })?
            }
            None => 0,
        };
        let key = (!self.keys.is_empty()).then(|| {
            self.keys
                .iter()
                .map(|&i| rec.get(i).unwrap_or(""))
                .filter(|k| !k.is_empty())
                .collect::<Vec<_>>()
                .join(" · ")
        });
        Ok((
            key,
            Sample {
                n: num(self.n, "n")?,
                ns: num(self.ns, "ns")?,
                run,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Vec<Sample>, CsvError> {
        parse(text, Path::new("x.csv"))
    }

    #[test]
    fn columns_in_any_order_with_extras() {
        let s = p("ns,extra,n,run\n100,a,1,0\n200,b,2,1\n").unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[1].n, s[1].ns, s[1].run), (2.0, 200.0, 1));
    }

    #[test]
    fn run_is_optional() {
        let s = p("n,ns\n1,5\n").unwrap();
        assert_eq!(s[0].run, 0);
    }

    #[test]
    fn errors_name_file_and_line() {
        let e = p("n,ns\n1,5\n2,abc\n").unwrap_err().to_string();
        assert!(
            e.contains("x.csv: line 3") && e.contains("ns is not a number"),
            "{e}"
        );
        let e = p("n,ns\n1,5\n2\n").unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("1 fields where the header has 2"),
            "{e}"
        );
        let e = p("a,b\n1,2\n").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("`n` and `ns`"), "{e}");
        let e = p("n,ns\n").unwrap_err().to_string();
        assert!(e.contains("no samples"), "{e}");
        let e = p("n,ns\n-1,5\n").unwrap_err().to_string();
        assert!(e.contains("line 2") && e.contains("≥ 0"), "{e}");
    }
}
