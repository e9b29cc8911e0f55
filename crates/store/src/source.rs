//! Where a command's result files come from: files on disk, or runs kept
//! in the store that a query selects.

use crate::index::short;
use crate::{Error, Listed, Query, Result, Store};
use results::ResultFile;
use std::path::{Path, PathBuf};

/// A result file to read: on disk, or kept in the store.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file on disk.
    File(PathBuf),
    /// A stored run's file.
    Stored {
        /// The run's id.
        id: String,
        /// The file's bytes.
        bytes: Vec<u8>,
    },
}

impl Source {
    /// How the source is named: its path, or `store:ID`.
    pub fn name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Stored { id, .. } => format!("store:{}", short(id)),
        }
    }

    /// Its path on disk, if it has one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            Source::File(p) => Some(p),
            Source::Stored { .. } => None,
        }
    }

    /// Reads and checks it.
    pub fn load(&self) -> Result<ResultFile, results::LoadError> {
        match self {
            Source::File(p) => results::load(p),
            Source::Stored { bytes, .. } => {
                let name = PathBuf::from(self.name());
                let text = String::from_utf8_lossy(bytes);
                results::parse(&text, &name)
            }
        }
    }
}

/// The sources `given` names: an existing path as a file (a directory:
/// the result files in it), a store query (`label=… latest`) as the
/// stored runs it selects, in the order they started; anything else as
/// a file (which then cannot be read, and says so). A query selecting no
/// run is an error. The store is opened by `open`, once, when a query
/// needs it; each file a directory skips goes to `skipped`.
pub fn sources(
    given: &[PathBuf],
    open: &mut dyn FnMut() -> Result<Store>,
    skipped: &mut dyn FnMut(&Path, &str),
) -> Result<Vec<Source>> {
    let mut opened: Option<Store> = None;
    let mut out = Vec::new();
    for g in given {
        let text = g.to_string_lossy();
        if g.exists() || !crate::query::looks_like_query(&text) {
            out.extend(
                results::found::result_files(std::slice::from_ref(g), skipped)?
                    .into_iter()
                    .map(Source::File),
            );
            continue;
        }
        let q = parse(&text, "query")?;
        if opened.is_none() {
            opened = Some(open()?);
        }
        let s = opened.as_mut().expect("opened above");
        let runs = s.select(&q)?;
        if runs.is_empty() {
            // A bare id might have been meant as a file.
            let nor_file = if crate::query::is_bare_id(text.trim()) {
                format!(", and there is no file {text} here")
            } else {
                String::new()
            };
            return Err(Error::Select {
                what: "query".into(),
                query: q.text().to_string(),
                why: format!("no run in store {} matches{nor_file}", s.name()),
            });
        }
        for r in runs {
            let bytes = s.file(&r.run.id)?;
            out.push(Source::Stored {
                id: r.run.id,
                bytes,
            });
        }
    }
    Ok(out)
}

/// One source for `compare`'s `what` (`BASE`): a file, or a query
/// selecting exactly one stored run.
pub fn one_source(
    given: &Path,
    open: &mut dyn FnMut() -> Result<Store>,
    what: &str,
) -> Result<Source> {
    let text = given.to_string_lossy();
    if given.exists() || !crate::query::looks_like_query(&text) {
        return Ok(Source::File(given.to_path_buf()));
    }
    // A word the query cannot read is refused before the store is opened:
    // what was asked is wrong whether or not the store is there.
    let q = parse(&text, what)?;
    let mut s = open()?;
    let r = one_selected(&mut s, &q, what)?;
    let bytes = s.file(&r.run.id)?;
    Ok(Source::Stored {
        id: r.run.id,
        bytes,
    })
}

/// `words` read as a query, or an error naming `what`: read before the
/// store is opened, so a wrong word is told whether or not it is there.
pub fn parse(words: &str, what: &str) -> Result<Query> {
    Query::parse(words).map_err(|words| Error::Query {
        what: what.to_string(),
        words,
    })
}

/// The one run query `q` selects; an error naming `what` (`--base`)
/// when none or several do.
pub fn one_selected(store: &mut Store, q: &Query, what: &str) -> Result<Listed> {
    let mut runs = store.select(q)?;
    let why = match runs.len() {
        0 => format!("no run in store {} matches", store.name()),
        1 => return Ok(runs.remove(0)),
        k => {
            let ids: Vec<&str> = runs.iter().map(|r| short(&r.run.id)).collect();
            format!(
                "{k} runs match ({}); add `latest` or an id to choose one",
                ids.join(", ")
            )
        }
    };
    Err(Error::Select {
        what: what.to_string(),
        query: q.text().to_string(),
        why,
    })
}
