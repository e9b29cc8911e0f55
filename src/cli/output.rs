//! Where a command's output goes, and which result files it reads: the
//! helpers every command shares.

use crate::results::{self, output};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Runs `f` on standard output or on the file `path` (the output `what`);
/// a closed pipe on standard output (`| head`) counts as success. A file
/// is checked against the output rules first ([`output::check`]: its
/// directory exists, it is none of `inputs`, nothing but a regular file is
/// replaced, an existing one only as `existing` allows) and written
/// atomically, so a failed write leaves an existing file as it was.
pub(crate) fn with_output<E>(
    what: &str,
    path: Option<&Path>,
    existing: output::Existing,
    inputs: &[(&Path, &str)],
    f: impl FnOnce(&mut dyn Write) -> Result<(), E>,
) -> anyhow::Result<()>
where
    E: From<std::io::Error> + Into<Box<dyn std::error::Error + Send + Sync>>,
{
    match path {
        Some(p) => {
            output::check(what, p, existing, inputs)?;
            Ok(output::write_file_atomic(p, f)?)
        }
        None => to_stdout(f).map_err(|e| anyhow::Error::from_boxed(e.into())),
    }
}

pub(crate) use crate::results::output::to_stdout;

/// The result files `given` names ([`results::found::result_files`]),
/// each `*.json` entry of a directory skipped named on standard error
/// with the reason (`warning: DIR/x.json: skipped: …`).
pub(crate) fn result_files(given: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    Ok(results::found::result_files(given, &mut say_skipped)?)
}

/// Names on standard error a file of a directory skipped as no result
/// file, with the reason.
pub(crate) fn say_skipped(p: &Path, why: &str) {
    sys::say!("warning: {}: skipped: {why}", p.display());
}
