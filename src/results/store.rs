//! Reading and writing result files: atomic replace on write, schema checks
//! with the file named on read.

use super::{ResultFile, SCHEMA_NAME, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not JSON, or not of the expected shape.
    #[error("{path}: line {line}, column {column}: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What was wrong.
        message: String,
    },
    /// Valid JSON, but not a scalebench result.
    #[error("{path}: not a scalebench result file (no \"schema\": \"{SCHEMA_NAME}\" field)")]
    NotAResult {
        /// The file.
        path: PathBuf,
    },
    /// A schema version this program does not read.
    #[error(
        "{path}: schema version {found} is not supported (this scalebench reads versions 1 to {SCHEMA_VERSION}); {hint}"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version in the file.
        found: u64,
        /// What to do about it.
        hint: &'static str,
    },
}

/// Reads and checks a result file.
pub fn load(path: &Path) -> Result<ResultFile, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// Parses and checks the text of a result file; `path` only names the
/// file in errors.
pub fn parse(text: &str, path: &Path) -> Result<ResultFile, LoadError> {
    let syntax = |e: serde_json::Error| LoadError::Syntax {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(syntax)?;
    if value.get("schema").and_then(|s| s.as_str()) != Some(SCHEMA_NAME) {
        return Err(LoadError::NotAResult {
            path: path.to_path_buf(),
        });
    }
    let found = match value.get("schema_version") {
        Some(v) => v.as_u64().ok_or_else(|| LoadError::Syntax {
            path: path.to_path_buf(),
            line: 1,
            column: 1,
            message: format!("\"schema_version\" is {v}, not a whole number"),
        })?,
        None => 0,
    };
    if found == 0 || found > u64::from(SCHEMA_VERSION) {
        let hint = if found > u64::from(SCHEMA_VERSION) {
            "it was written by a newer scalebench: upgrade to read it"
        } else {
            "it is older than any released format"
        };
        return Err(LoadError::Version {
            path: path.to_path_buf(),
            found,
            hint,
        });
    }
    // Re-parse from text (not from `value`) so errors carry line numbers.
    serde_json::from_str(text).map_err(syntax)
}

/// Writes `result` to `path` atomically ([`super::output::write_file_atomic`]):
/// a reader (or a crash) sees either the old or the new file, never half.
/// The directory must exist, and only a regular file is ever replaced.
pub fn write_atomic(path: &Path, result: &ResultFile) -> anyhow::Result<()> {
    super::output::write_file_atomic(path, |w| {
        serde_json::to_writer(&mut *w, result)?;
        w.write_all(b"\n")?;
        Ok(())
    })
}
