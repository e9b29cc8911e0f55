//! The result files a command is given: a file as it is, a directory as
//! the result files in it.

use std::path::{Path, PathBuf};

/// Whether a file found in a directory is taken as a result file, and
/// why not.
#[derive(Debug, PartialEq, Eq)]
enum Candidate {
    /// It begins as a result file does (its `"schema":
    /// "scalebench-result"` within the first 4 KB), or it cannot be read
    /// to tell (then reading it names the cause, as for a file given by
    /// name).
    Taken,
    /// Skipped, for this reason.
    Skipped(String),
}

/// What `path`, a `*.json` entry of a directory, is: a result file to
/// read, or something else skipped (and why).
fn candidate(path: &Path) -> Candidate {
    use std::io::Read;
    let m = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Candidate::Taken,
    };
    if let Some(kind) = crate::output::not_regular(&m) {
        return Candidate::Skipped(format!("{kind}, not a result file"));
    }
    let mut head = Vec::with_capacity(4096);
    match std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head)) {
        Err(_) => Candidate::Taken,
        Ok(_) if String::from_utf8_lossy(&head).contains("\"scalebench-result\"") => {
            Candidate::Taken
        }
        Ok(0) => Candidate::Skipped("an empty file, not a scalebench result file".into()),
        Ok(_) => Candidate::Skipped(
            "not a scalebench result file (no \"schema\": \"scalebench-result\" in its first 4 KB)"
                .into(),
        ),
    }
}

/// Why the result files a path names cannot be listed.
#[derive(Debug, thiserror::Error)]
pub enum FoundError {
    /// A directory that cannot be read.
    #[error("{}", path.display())]
    Read {
        /// The directory.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// A directory without a result file.
    #[error("{}: a directory with no scalebench result file (*.json) in it", .0.display())]
    Empty(PathBuf),
}

/// The result files `given` names: a file as it is, a directory as the
/// result files in it (its `*.json` entries that are scalebench results;
/// an error when it has none). Each `*.json` entry skipped is given to
/// `skipped` with the reason; other entries (reports, subdirectories) are passed over silently. A
/// skipped file does not fail the command; one that cannot be read is not
/// skipped but returned, so that reading it fails by name as a file given
/// by name does.
pub fn result_files(
    given: &[PathBuf],
    skipped: &mut dyn FnMut(&Path, &str),
) -> Result<Vec<PathBuf>, FoundError> {
    let mut out = Vec::new();
    for g in given {
        if !g.is_dir() {
            out.push(g.clone());
            continue;
        }
        let mut entries: Vec<PathBuf> = std::fs::read_dir(g)
            .and_then(|d| d.map(|e| e.map(|e| e.path())).collect::<Result<_, _>>())
            .map_err(|source| FoundError::Read {
                path: g.clone(),
                source,
            })?;
        entries.retain(|p| p.extension().is_some_and(|x| x == "json"));
        entries.sort();
        let mut found = Vec::new();
        for p in entries {
            match candidate(&p) {
                Candidate::Taken => found.push(p),
                Candidate::Skipped(why) => skipped(&p, &why),
            }
        }
        if found.is_empty() {
            return Err(FoundError::Empty(g.clone()));
        }
        out.extend(found);
    }
    Ok(out)
}
