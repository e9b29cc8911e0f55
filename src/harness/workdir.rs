//! The work directory: a fresh directory (`scalebench-XXXXXX`) under the
//! directory the user names (or the system temp dir), the only place
//! benchmarks create files; removed with everything in it when dropped.

use anyhow::Context;
use std::path::{Path, PathBuf};

/// The run's private directory.
pub struct WorkDir {
    dir: tempfile::TempDir,
}

impl WorkDir {
    /// Creates `scalebench-XXXXXX` under `base` (default: the temp dir).
    pub fn create(base: Option<&Path>) -> anyhow::Result<WorkDir> {
        let base: PathBuf = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let dir = tempfile::Builder::new()
            .prefix("scalebench-")
            .tempdir_in(&base)
            .with_context(|| format!("cannot create a work directory in {}", base.display()))?;
        Ok(WorkDir { dir })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_inside_base_and_removed_on_drop() {
        let base = tempfile::tempdir().unwrap();
        let w = WorkDir::create(Some(base.path())).unwrap();
        let p = w.path().to_path_buf();
        assert!(p.starts_with(base.path()) && p.is_dir());
        std::fs::write(p.join("f"), b"x").unwrap();
        drop(w);
        assert!(!p.exists());
    }

    #[test]
    fn bad_base_names_the_directory() {
        let err = WorkDir::create(Some(Path::new("/nonexistent/dir")))
            .err()
            .unwrap();
        assert!(format!("{err:#}").contains("/nonexistent/dir"));
    }
}
