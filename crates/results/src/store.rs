//! Reading and writing result files: atomic replace on write, schema checks
//! with the file named on read.

use super::{ResultFile, SCHEMA_NAME, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened or read.
    #[error("{path}: cannot read it")]
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
    /// Not JSON at all (a CSV file, a report): what it begins with.
    #[error("{path}: not a scalebench result file: not JSON (it begins `{start}`)")]
    NotJson {
        /// The file.
        path: PathBuf,
        /// Its first characters, up to the end of its first line.
        start: String,
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
    // A file that does not even begin as JSON does is named as no result
    // file, not by the parser's first complaint ("expected ident").
    let first = text.trim_start();
    if !first.is_empty() && !first.starts_with(['{', '[']) {
        let line = first.lines().next().unwrap_or("");
        return Err(LoadError::NotJson {
            path: path.to_path_buf(),
            start: line.chars().take(24).collect(),
        });
    }
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
pub fn write_atomic(path: &Path, result: &ResultFile) -> Result<(), super::output::WriteError> {
    super::output::write_file_atomic(path, |w| -> Result<(), serde_json::Error> {
        serde_json::to_writer(&mut *w, result)?;
        w.write_all(b"\n").map_err(serde_json::Error::io)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The empty fixture as a file of schema `version`.
    fn of_version(version: u64) -> String {
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/empty.json")).unwrap();
        v["schema_version"] = version.into();
        if version >= 2 {
            v["workloads"] = serde_json::json!([]);
        }
        v.to_string()
    }

    #[test]
    fn a_file_that_is_no_json_is_named_as_no_result_file() {
        let e = parse("n,ns\n1,2\n", Path::new("t.csv")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.csv: not a scalebench result file: not JSON (it begins `n,ns`)"
        );
        // JSON that is broken keeps the parser's place.
        let e = parse("{ this is not json", Path::new("g.json")).unwrap_err();
        assert!(
            e.to_string().starts_with("g.json: line 1, column 3: "),
            "{e}"
        );
    }

    #[test]
    fn every_version_up_to_this_one_reads_and_a_newer_one_is_refused() {
        for version in 1..=u64::from(SCHEMA_VERSION) {
            let f = parse(&of_version(version), Path::new("r.json"))
                .unwrap_or_else(|e| panic!("version {version}: {e}"));
            assert_eq!(u64::from(f.schema_version), version);
            assert_eq!(f.system.virtualization, None, "version {version}");
            assert_eq!(f.system.kernel_config, None, "version {version}");
        }
        let newer = u64::from(SCHEMA_VERSION) + 1;
        let e = parse(&of_version(newer), Path::new("r.json")).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("schema version {newer} is not supported")),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains(&format!("reads versions 1 to {SCHEMA_VERSION}")),
            "{e}"
        );
    }

    #[test]
    fn a_version_7_system_record_reads_its_virtualization_and_kernel_config() {
        let mut v: serde_json::Value = serde_json::from_str(&of_version(7)).unwrap();
        v["system"]["virtualization"] = serde_json::json!({
            "kind": "tcg", "emulated": true, "hypervisor": "TCGTCGTCGTCG",
            "reason": "no /dev/kvm", "vcpu_pins": [0, 1]
        });
        v["system"]["kernel_config"] = serde_json::json!({
            "source": "/proc/config.gz", "options": {"CONFIG_SMP": "y"}
        });
        let f = parse(&v.to_string(), Path::new("r.json")).unwrap();
        let virt = f.system.virtualization.as_ref().unwrap();
        assert_eq!((virt.kind.as_str(), virt.emulated), ("tcg", true));
        assert_eq!(virt.vcpu_pins, [0, 1]);
        let k = f.system.kernel_config.as_ref().unwrap();
        assert_eq!(k.options["CONFIG_SMP"], "y");
        // Written back as read.
        let back = serde_json::to_value(&f).unwrap();
        assert_eq!(
            back["system"]["virtualization"],
            v["system"]["virtualization"]
        );
        assert_eq!(
            back["system"]["kernel_config"],
            v["system"]["kernel_config"]
        );
    }
}
