//! The results store: an index of result files from many runs, machines
//! and kernels, queried by `results`, `report`, `compare` and `history`
//! (docs/store.md). SQLite by default (one file, no server), or a shared
//! PostgreSQL (`postgres://…`); one schema for both, brought up to date
//! by versioned migrations ([`schema`]).
//!
//! The file stays the source of truth: the store keeps each file whole
//! (its exact bytes, gzip-compressed, in `run_files`) beside the index of
//! it ([`index`]), and everything that reads a stored run reads that
//! file, through the same code as a file on disk. A run's id is the
//! SHA-256 of the file's bytes, so the same file is stored once.

#![deny(missing_docs)]

pub mod db;
pub mod error;
pub mod index;
pub mod query;
pub mod schema;
pub mod source;
pub mod tls;

use db::{Conn, Value};
pub use error::{DbError, Error, Result};
pub use index::{BenchRow, Indexed, RunRow, WorkRow};
pub use query::Query;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The environment variable naming the store when `--store` does not.
pub const ENV: &str = "SCALEBENCH_STORE";

/// Where a store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// An SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL.
    Postgres(String),
}

/// Whether a PostgreSQL configuration names a server to reach: a host
/// name or address that is not empty.
fn has_host(c: &postgres::Config) -> bool {
    let named = c.get_hosts().iter().any(|h| match h {
        postgres::config::Host::Tcp(name) => !name.is_empty(),
        #[cfg(unix)]
        postgres::config::Host::Unix(_) => true,
    });
    named || !c.get_hostaddrs().is_empty()
}

impl Location {
    /// `postgres://…` or `postgresql://…` is a server (its URL checked
    /// now); anything else a path of an SQLite file, except a text that
    /// begins `postgres:` or `postgresql:` without the `//` of a URL,
    /// which is refused as a malformed URL (a file of that name is
    /// `./postgres:…`). The error names the fault, not the source.
    pub fn parse(s: &str) -> std::result::Result<Location, String> {
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            let (rest, _) = tls::split(s).map_err(|why| format!("{}: {why}", db::redacted(s)))?;
            return match rest.parse::<postgres::Config>() {
                Ok(c) if !has_host(&c) => Err(format!(
                    "{}: no host (postgres://USER[:PASSWORD]@HOST[:PORT]/DB)",
                    db::redacted(s)
                )),
                Ok(_) => Ok(Location::Postgres(s.to_string())),
                Err(e) => {
                    let mut words = format!("{}: {e}", db::redacted(s));
                    let mut cause = std::error::Error::source(&e);
                    while let Some(c) = cause {
                        words.push_str(&format!(": {c}"));
                        cause = c.source();
                    }
                    Err(words)
                }
            };
        }
        if lower.starts_with("postgres:") || lower.starts_with("postgresql:") {
            return Err(format!(
                "{}: not a PostgreSQL URL (postgres://USER[:PASSWORD]@HOST[:PORT]/DB); an SQLite file of that name is ./{}",
                db::redacted(s),
                db::redacted(s)
            ));
        }
        if s.is_empty() {
            return Err("an empty name: give an SQLite file or a postgres:// URL".into());
        }
        // Another scheme (`mysql://…`, `sqlite:…`) is no file name meant:
        // refused, not made as a file of that name.
        if let Some((scheme, _)) = s.split_once(':')
            && !scheme.is_empty()
            && !scheme.contains('/')
            && (lower.starts_with("sqlite:") || s[scheme.len()..].starts_with("://"))
        {
            return Err(format!(
                "{}: `{scheme}:` is no store scalebench has (an SQLite file's path, or postgres://…); an SQLite file of that name is ./{}",
                db::redacted(s),
                db::redacted(s)
            ));
        }
        Ok(Location::Sqlite(PathBuf::from(s)))
    }

    /// The store given (`--store`), else `$SCALEBENCH_STORE`, else
    /// [`default_path`]; with where the choice came from.
    pub fn chosen(given: Option<&str>) -> Result<(Location, &'static str)> {
        if let Some(g) = given {
            let at = Location::parse(g).map_err(|words| Error::Location {
                whence: "--store",
                words,
            })?;
            return Ok((at, "--store"));
        }
        if let Some(e) = std::env::var_os(ENV).filter(|e| !e.is_empty()) {
            let whence = "$SCALEBENCH_STORE";
            let e = e.into_string().map_err(|e| Error::Location {
                whence,
                words: format!("{}: not UTF-8", e.to_string_lossy()),
            })?;
            let at = Location::parse(&e).map_err(|words| Error::Location { whence, words })?;
            return Ok((at, whence));
        }
        Ok((Location::Sqlite(default_path()?), "the default store"))
    }

    /// The store's name as printed (a URL's password hidden).
    pub fn name(&self) -> String {
        match self {
            Location::Sqlite(p) => p.display().to_string(),
            Location::Postgres(u) => db::redacted(u),
        }
    }
}

/// What a command does with the store it opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it (`results list|show`, queries, `dashboard`, `prune
    /// --dry-run`): it must exist.
    Read,
    /// Writes it (`results prune`): it must exist and be writable.
    Write,
    /// Writes it, an SQLite file made where nothing is yet (`results
    /// add`), its directory too when `make_dir` (the default store's).
    Create {
        /// Whether a missing directory is made.
        make_dir: bool,
    },
}

/// `$XDG_DATA_HOME/scalebench/results.sqlite`, else
/// `$HOME/.local/share/scalebench/results.sqlite`.
pub fn default_path() -> Result<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|d| !d.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => {
            let home = std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .ok_or(Error::NoDefault)?;
            PathBuf::from(home).join(".local/share")
        }
    };
    Ok(base.join("scalebench").join("results.sqlite"))
}

/// A run as listed: its row and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The run's row.
    pub run: RunRow,
    /// Its benchmark series, in file order.
    pub series: Vec<String>,
    /// Its workloads, in file order, each once.
    pub workloads: Vec<String>,
}

/// What adding a file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Added {
    /// Stored under this id, with what indexing it found to say: a kept
    /// verdict that disagreed with its samples and was judged again.
    New(String, Vec<String>),
    /// The same file (same bytes) was already stored under this id.
    Already(String),
}

/// A run's indexed rows: its benchmark series' and its workloads'.
pub type RowsOf = (Vec<BenchRow>, Vec<WorkRow>);

/// An open store.
pub struct Store {
    conn: Conn,
    name: String,
    path: Option<PathBuf>,
}

/// The columns of `runs`, in the order [`run_row`] reads them.
const RUN_COLUMNS: &str = "id, added, source, bytes, label, host, os, kernel, kernel_version, arch, cpu_model, cpu_count, virtualization, emulated, started, finished, tool_version, schema_version, command_line, profile, analysis, counts";

fn run_row(r: &[Value]) -> RunRow {
    RunRow {
        id: r[0].string(),
        added: r[1].string(),
        source: r[2].string(),
        bytes: r[3].int().unwrap_or(0),
        label: r[4].string(),
        host: r[5].string(),
        os: r[6].string(),
        kernel: r[7].string(),
        kernel_version: r[8].string(),
        arch: r[9].string(),
        cpu_model: r[10].text().map(str::to_string),
        cpu_count: r[11].int().unwrap_or(0),
        virtualization: r[12].text().map(str::to_string),
        emulated: r[13].int() == Some(1),
        started: r[14].string(),
        finished: r[15].text().map(str::to_string),
        tool_version: r[16].string(),
        schema_version: r[17].int().unwrap_or(0),
        command_line: serde_json::from_str(r[18].text().unwrap_or("[]")).unwrap_or_default(),
        profile: r[19].text().map(str::to_string),
        analysis: r[20].string(),
        counts: r[21].text().unwrap_or("time").to_string(),
    }
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes)?;
    e.finish()
}

fn gunzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

impl Store {
    /// Opens the store at `at`, bringing its schema up to date. An SQLite
    /// file is checked first ([`check_sqlite`]) and made only for
    /// [`Access::Create`], where nothing is yet; a refused store leaves no
    /// file behind.
    pub fn open(at: &Location, access: Access) -> Result<Store> {
        let name = at.name();
        let database = |e| match e {
            DbError::Migration {
                version,
                what,
                source,
            } if matches!(*source, DbError::Denied { .. }) => denied_or(
                &name,
                *source,
                &format!(
                    "bring the store's schema to version {version} ({what}): its owner does, by opening it once"
                ),
            ),
            e => denied_or(&name, e, "read the store"),
        };
        let (conn, path) = match at {
            Location::Sqlite(p) => {
                let new = check_sqlite(p, &name, access)?;
                let conn = Conn::sqlite(p, new).and_then(|mut c| {
                    schema::migrate(&mut c)?;
                    Ok(c)
                });
                match conn {
                    Ok(c) => (c, Some(p.clone())),
                    Err(e) => {
                        // A file SQLite made for a store refused at once
                        // holds nothing: it goes.
                        if new && std::fs::metadata(p).is_ok_and(|m| m.len() == 0) {
                            let _ = std::fs::remove_file(p);
                        }
                        return Err(database(e));
                    }
                }
            }
            Location::Postgres(u) => {
                let mut c = Conn::postgres(u).map_err(database)?;
                schema::migrate(&mut c).map_err(database)?;
                (c, None)
            }
        };
        Ok(Store { conn, name, path })
    }

    /// The store's name as printed.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The store's file, for an SQLite store (an output must not be it).
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// `r` with the store named before its error.
    fn named<T>(&self, r: std::result::Result<T, DbError>) -> Result<T> {
        self.named_as(r, "read what this command asks")
    }

    /// [`Store::named`], a refusal of the role saying what it may not
    /// do (`doing`).
    fn named_as<T>(&self, r: std::result::Result<T, DbError>, doing: &str) -> Result<T> {
        r.map_err(|e| denied_or(&self.name, e, doing))
    }

    /// The store's own refusal, `why`.
    fn refused(&self, why: String) -> Error {
        Error::Refused {
            store: self.name.clone(),
            why,
        }
    }

    /// Adds a result file (its bytes, read from `source`, recorded as a
    /// whole path): indexed and kept whole, in one transaction. A file
    /// still incomplete is refused; the same bytes twice are stored once.
    pub fn add(&mut self, bytes: &[u8], source: &Path) -> Result<Added> {
        // Stored already: nothing to read or judge.
        let id = index::content_id(bytes);
        if self.has(&id)? {
            return Ok(Added::Already(id));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| Error::NotStored {
            file: source.to_path_buf(),
            why: "not UTF-8 text",
        })?;
        let file = results::parse(text, source)?;
        if !file.complete {
            return Err(Error::NotStored {
                file: source.to_path_buf(),
                why: "the run is incomplete (\"complete\": false: still running, or interrupted); only a finished run's file is stored",
            });
        }
        // Where it came from, as a whole path (as given if it has none).
        let origin = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
        let ix = index::index(&file, bytes, &origin.display().to_string());
        let body = gzip(bytes).map_err(|source| Error::Io {
            store: self.name.clone(),
            doing: "compressing the file".into(),
            source,
        })?;
        let added = self
            .conn
            .transaction(|c| -> std::result::Result<Added, DbError> {
                let id = ix.run.id.clone();
                if !c
                    .rows(
                        "SELECT id FROM runs WHERE id = ?",
                        &[Value::from(id.as_str())],
                    )?
                    .is_empty()
                {
                    return Ok(Added::Already(id));
                }
                insert(c, &ix, body)?;
                Ok(Added::New(id, ix.notes.clone()))
            });
        self.named_as(
            added,
            "add runs (`results add` needs a writer or the owner)",
        )
    }

    /// Whether run `id` is stored.
    pub fn has(&mut self, id: &str) -> Result<bool> {
        let rows = self
            .conn
            .rows("SELECT id FROM runs WHERE id = ?", &[Value::from(id)]);
        Ok(!self.named(rows)?.is_empty())
    }

    /// Every stored run with what it holds, in the order they started.
    pub fn runs(&mut self) -> Result<Vec<Listed>> {
        self.select(&Query::default())
    }

    /// The runs `q` selects, in the order they started: those that may
    /// match read from the database ([`Query::narrowing`]), the choice
    /// made among them ([`Query::decide`]), then the series and workloads
    /// of the chosen runs only.
    pub fn select(&mut self, q: &Query) -> Result<Vec<Listed>> {
        let chosen = self.select_rows(q);
        self.named(chosen)
    }

    /// [`Store::select`], its errors not yet naming the store.
    fn select_rows(&mut self, q: &Query) -> std::result::Result<Vec<Listed>, DbError> {
        let (filter, params) = q.narrowing();
        let rows = self
            .conn
            .rows(&format!("SELECT {RUN_COLUMNS} FROM runs{filter}"), &params)?;
        let read: Vec<Listed> = rows
            .iter()
            .map(|r| Listed {
                run: run_row(r),
                series: Vec::new(),
                workloads: Vec::new(),
            })
            .collect();
        let chosen = q.decide(&read);
        let mut slots: Vec<Option<Listed>> = read.into_iter().map(Some).collect();
        let mut out: Vec<Listed> = chosen.iter().filter_map(|&i| slots[i].take()).collect();
        self.fill_contents(&mut out)?;
        Ok(out)
    }

    /// The series and workloads of each run of `out`.
    fn fill_contents(&mut self, out: &mut [Listed]) -> std::result::Result<(), DbError> {
        let ids: Vec<String> = out.iter().map(|l| l.run.id.clone()).collect();
        let series = self.rows_per_run("benchmarks", "series", &ids)?;
        let work = self.rows_per_run("workload_rows", "workload", &ids)?;
        for ((l, series), work) in out.iter_mut().zip(series).zip(work) {
            l.series = series.iter().map(|r| r[0].string()).collect();
            for r in work {
                let w = r[0].string();
                if !l.workloads.contains(&w) {
                    l.workloads.push(w);
                }
            }
        }
        Ok(())
    }

    /// For each run of `ids`, in their order, its rows of `table` (their
    /// `columns`, without `run_id`) in the order of their position: a
    /// few queries for many runs, the ids in chunks; an id given twice
    /// gets its rows twice.
    fn rows_per_run(
        &mut self,
        table: &str,
        columns: &str,
        ids: &[String],
    ) -> std::result::Result<Vec<Vec<Vec<Value>>>, DbError> {
        let mut at: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
        for (i, id) in ids.iter().enumerate() {
            at.entry(id.as_str()).or_default().push(i);
        }
        let distinct: Vec<String> = at.keys().map(|k| k.to_string()).collect();
        let mut out = vec![Vec::new(); ids.len()];
        for chunk in distinct.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let params: Vec<Value> = chunk.iter().map(|i| Value::from(i.as_str())).collect();
            let rows = self.conn.rows(
                &format!("SELECT run_id, {columns} FROM {table} WHERE run_id IN ({marks}) ORDER BY run_id, position"),
                &params,
            )?;
            for mut r in rows {
                let id = r.remove(0).string();
                if let Some((&last, rest)) = at.get(id.as_str()).and_then(|p| p.split_last()) {
                    for &i in rest {
                        out[i].push(r.clone());
                    }
                    out[last].push(r);
                }
            }
        }
        Ok(out)
    }

    /// The stored file of run `id`, its exact bytes.
    pub fn file(&mut self, id: &str) -> Result<Vec<u8>> {
        let rows = self.conn.rows(
            "SELECT encoding, body FROM run_files WHERE run_id = ?",
            &[Value::from(id)],
        );
        let rows = self.named(rows)?;
        let r = rows
            .first()
            .ok_or_else(|| self.refused(format!("no file for run {id}")))?;
        let body = r[1].bytes().unwrap_or_default();
        let bytes = match r[0].text() {
            Some("gzip") => gunzip(body).map_err(|source| Error::Io {
                store: self.name.clone(),
                doing: format!("run {id}: the stored file cannot be decompressed (damaged store)"),
                source,
            })?,
            Some("identity") => body.to_vec(),
            other => {
                return Err(self.refused(format!(
                    "run {id}: file encoding {other:?} is unknown to this scalebench"
                )));
            }
        };
        if index::content_id(&bytes) != id {
            return Err(self.refused(format!(
                "run {id}: the stored file does not match its id (damaged store)"
            )));
        }
        Ok(bytes)
    }

    /// The benchmark and workload rows of run `id`.
    pub fn rows_of(&mut self, id: &str) -> Result<RowsOf> {
        let rows = self.rows_of_many(std::slice::from_ref(&id.to_string()));
        Ok(rows?.pop().unwrap_or_default())
    }

    /// The benchmark and workload rows of each run of `ids`, in their
    /// order, read in chunks of ids (a few queries for many runs).
    pub fn rows_of_many(&mut self, ids: &[String]) -> Result<Vec<RowsOf>> {
        let rows = self.rows_of_runs(ids);
        self.named(rows)
    }

    /// [`Store::rows_of_many`], its errors not yet naming the store.
    fn rows_of_runs(&mut self, ids: &[String]) -> std::result::Result<Vec<RowsOf>, DbError> {
        let b = self.rows_per_run(
            "benchmarks",
            "position, name, series, status, n, runs, class, confidence, low_n, low_ns, high_n, high_ns, note",
            ids,
        )?;
        let w = self.rows_per_run(
            "workload_rows",
            "position, workload, status, row_label, target, figure, unit, peak_level, knee, verdict, error, sizes",
            ids,
        )?;
        Ok(b.into_iter()
            .zip(w)
            .map(|(b, w)| {
                (
                    b.iter().map(|r| bench_row(r)).collect(),
                    w.iter().map(|r| work_row(r)).collect(),
                )
            })
            .collect())
    }

    /// Removes the runs `ids` (their rows and files), in one transaction.
    pub fn remove(&mut self, ids: &[String]) -> Result<()> {
        let removed = self.conn.transaction(|c| {
            for id in ids {
                for table in ["run_files", "benchmarks", "workload_rows"] {
                    c.exec(
                        &format!("DELETE FROM {table} WHERE run_id = ?"),
                        &[Value::from(id.as_str())],
                    )?;
                }
                c.exec("DELETE FROM runs WHERE id = ?", &[Value::from(id.as_str())])?;
            }
            Ok(())
        });
        self.named_as(
            removed,
            "remove runs (`results prune` needs the store's owner)",
        )
    }
}

/// A benchmark row read back (its columns from `position` on).
fn bench_row(r: &[Value]) -> BenchRow {
    let pair = |a: &Value, b: &Value| a.real().zip(b.real());
    BenchRow {
        position: r[0].int().unwrap_or(0),
        name: r[1].string(),
        series: r[2].string(),
        status: r[3].string(),
        n: r[4].int().unwrap_or(0),
        runs: r[5].int().unwrap_or(0),
        class: r[6].text().map(str::to_string),
        confidence: r[7].real(),
        low: pair(&r[8], &r[9]),
        high: pair(&r[10], &r[11]),
        note: r[12].text().map(str::to_string),
    }
}

/// A workload row read back (its columns from `position` on).
fn work_row(r: &[Value]) -> WorkRow {
    let text = |v: &Value| v.text().map(str::to_string);
    WorkRow {
        position: r[0].int().unwrap_or(0),
        workload: r[1].string(),
        status: r[2].string(),
        row_label: r[3].string(),
        target: text(&r[4]),
        figure: r[5].real(),
        unit: text(&r[6]),
        peak_level: r[7].real(),
        knee: r[8].real(),
        verdict: text(&r[9]),
        error: text(&r[10]),
        sizes: text(&r[11]),
    }
}

/// `e` of the store `name`: a role's refusal says what it may not do
/// (`doing`), everything else is the database's error.
fn denied_or(name: &str, e: DbError, doing: &str) -> Error {
    match e {
        DbError::Denied { role, source } => Error::Denied {
            store: name.to_string(),
            role,
            doing: doing.to_string(),
            source,
        },
        source => Error::Database {
            store: name.to_string(),
            source,
        },
    }
}

/// The first bytes of every SQLite database file.
const SQLITE_HEADER: &[u8; 16] = b"SQLite format 3\0";

/// Checks the path of an SQLite store (printed as `name`) before SQLite
/// opens it, so that a refusal names the path and what is there: nothing
/// (a new store only for [`Access::Create`], in an existing directory
/// unless `make_dir`), a directory, FIFO, device or socket, an empty file,
/// a file that is no SQLite database, one that cannot be read, or — for a
/// command that writes — one that cannot be written. Returns whether the
/// store is new.
pub fn check_sqlite(p: &Path, name: &str, access: Access) -> Result<bool> {
    let refused = |why: String| Error::Refused {
        store: name.to_string(),
        why,
    };
    let io = |doing: &str, source| Error::Io {
        store: name.to_string(),
        doing: doing.to_string(),
        source,
    };
    let m = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(p).is_ok() {
                return Err(refused(
                    "a symbolic link to nothing (scalebench makes no store through a link)".into(),
                ));
            }
            let Access::Create { make_dir } = access else {
                return Err(Error::Missing(name.to_string()));
            };
            let dir = results::output::dir_of(p);
            if make_dir {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| io(&format!("making {}", dir.display()), e))?;
            } else if !dir.is_dir() {
                return Err(refused(format!(
                    "the directory {} does not exist (scalebench makes only the default store's)",
                    dir.display()
                )));
            }
            return Ok(true);
        }
        Err(e) => return Err(io("cannot look at it", e)),
    };
    if let Some(kind) = results::output::not_regular(&m) {
        return Err(refused(format!("{kind}, not an SQLite store file")));
    }
    if m.len() == 0 {
        return Err(refused(
            "an empty file, not an SQLite store (only a path where nothing is yet becomes a new store)".into(),
        ));
    }
    let mut head = [0u8; 16];
    let read = std::fs::File::open(p).and_then(|mut f| f.read_exact(&mut head));
    match read {
        Err(e) if e.kind() != std::io::ErrorKind::UnexpectedEof => {
            return Err(io("cannot read it", e));
        }
        Ok(()) if &head == SQLITE_HEADER => {}
        _ => {
            return Err(refused(format!(
                "not an SQLite database (it does not begin as one; {} bytes)",
                m.len()
            )));
        }
    }
    if access != Access::Read {
        std::fs::OpenOptions::new()
            .write(true)
            .open(p)
            .map_err(|e| io("cannot write to it", e))?;
    }
    Ok(false)
}

/// Inserts a run's rows and its file.
fn insert(c: &mut Conn, ix: &Indexed, body: Vec<u8>) -> std::result::Result<(), DbError> {
    let r = &ix.run;
    c.exec(
        &format!(
            "INSERT INTO runs ({RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        ),
        &[
            Value::from(r.id.as_str()),
            Value::from(r.added.as_str()),
            Value::from(r.source.as_str()),
            Value::from(r.bytes),
            Value::from(r.label.as_str()),
            Value::from(r.host.as_str()),
            Value::from(r.os.as_str()),
            Value::from(r.kernel.as_str()),
            Value::from(r.kernel_version.as_str()),
            Value::from(r.arch.as_str()),
            Value::from(r.cpu_model.clone()),
            Value::from(r.cpu_count),
            Value::from(r.virtualization.clone()),
            Value::from(i64::from(r.emulated)),
            Value::from(r.started.as_str()),
            Value::from(r.finished.clone()),
            Value::from(r.tool_version.as_str()),
            Value::from(r.schema_version),
            Value::from(serde_json::Value::from(r.command_line.clone()).to_string()),
            Value::from(r.profile.clone()),
            Value::from(r.analysis.as_str()),
            Value::from(r.counts.as_str()),
        ],
    )?;
    c.exec(
        "INSERT INTO run_files (run_id, encoding, body) VALUES (?, ?, ?)",
        &[
            Value::from(r.id.as_str()),
            Value::from("gzip"),
            Value::Bytes(Some(body)),
        ],
    )?;
    for b in &ix.benchmarks {
        c.exec(
            "INSERT INTO benchmarks (run_id, position, name, series, status, n, runs, class, confidence, low_n, low_ns, high_n, high_ns, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                Value::from(r.id.as_str()),
                Value::from(b.position),
                Value::from(b.name.as_str()),
                Value::from(b.series.as_str()),
                Value::from(b.status.as_str()),
                Value::from(b.n),
                Value::from(b.runs),
                Value::from(b.class.clone()),
                Value::from(b.confidence),
                Value::from(b.low.map(|l| l.0)),
                Value::from(b.low.map(|l| l.1)),
                Value::from(b.high.map(|h| h.0)),
                Value::from(b.high.map(|h| h.1)),
                Value::from(b.note.clone()),
            ],
        )?;
    }
    for w in &ix.workloads {
        c.exec(
            "INSERT INTO workload_rows (run_id, position, workload, status, row_label, target, figure, unit, peak_level, knee, verdict, error, sizes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                Value::from(r.id.as_str()),
                Value::from(w.position),
                Value::from(w.workload.as_str()),
                Value::from(w.status.as_str()),
                Value::from(w.row_label.as_str()),
                Value::from(w.target.clone()),
                Value::from(w.figure),
                Value::from(w.unit.clone()),
                Value::from(w.peak_level),
                Value::from(w.knee),
                Value::from(w.verdict.clone()),
                Value::from(w.error.clone()),
                Value::from(w.sizes.clone()),
            ],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREATE: Access = Access::Create { make_dir: false };

    fn fixture(name: &str) -> (Vec<u8>, PathBuf) {
        let p = PathBuf::from(format!(
            "{}/tests/fixtures/{name}",
            concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
        ));
        (std::fs::read(&p).unwrap(), p)
    }

    #[test]
    fn a_file_is_kept_whole_once_and_removed_with_its_rows() {
        let d = tempfile::tempdir().unwrap();
        let at = Location::Sqlite(d.path().join("s.sqlite"));
        let e = Store::open(&at, Access::Read).err().unwrap().to_string();
        assert!(
            e.starts_with("no store at ") && e.contains("results add"),
            "{e}"
        );
        assert!(!d.path().join("s.sqlite").exists(), "nothing made");
        let nowhere = Location::Sqlite(d.path().join("no/s.sqlite"));
        let e = Store::open(&nowhere, CREATE).err().unwrap().to_string();
        assert!(
            e.contains("the directory") && e.contains("does not exist"),
            "{e}"
        );
        let mut s = Store::open(&at, CREATE).unwrap();
        let (bytes, path) = fixture("default.json");
        let id = match s.add(&bytes, &path).unwrap() {
            Added::New(id, _) => id,
            a => panic!("{a:?}"),
        };
        assert_eq!(s.add(&bytes, &path).unwrap(), Added::Already(id.clone()));
        let (tuned, tpath) = fixture("tuned.json");
        s.add(&tuned, &tpath).unwrap();
        assert_eq!(s.file(&id).unwrap(), bytes, "the exact bytes come back");
        let runs = s.runs().unwrap();
        assert_eq!(runs.len(), 2);
        let one = runs.iter().find(|r| r.run.id == id).unwrap();
        assert_eq!(one.series, ["socket", "bind", "mmap"]);
        assert_eq!(one.run.label, "default");
        let (b, w) = s.rows_of(&id).unwrap();
        let ix = index::index(
            &results::parse(std::str::from_utf8(&bytes).unwrap(), &path).unwrap(),
            &bytes,
            "",
        );
        assert_eq!(b, ix.benchmarks, "the rows read back as indexed");
        assert!(w.is_empty());
        // Reopened: the schema is not applied again.
        drop(s);
        let mut s = Store::open(&at, Access::Read).unwrap();
        s.remove(std::slice::from_ref(&id)).unwrap();
        assert_eq!(s.runs().unwrap().len(), 1);
        assert!(s.rows_of(&id).unwrap().0.is_empty());
        assert!(s.file(&id).is_err());
    }

    #[test]
    fn a_query_narrowed_in_the_database_selects_what_it_selects_among_all_runs() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&Location::Sqlite(d.path().join("s.sqlite")), CREATE).unwrap();
        let (bytes, path) = fixture("default.json");
        let base: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        // Labels and hosts that LIKE would blur (case, `_`, `%`), times
        // with offsets and fractions, variants of one benchmark.
        let kinds = [
            (
                "linux-6.1",
                "Alpha",
                "6.1.0",
                "2026-11-01T00:30:00+02:00",
                "socket",
            ),
            (
                "Linux-6.1",
                "alpha",
                "6.1.0",
                "2026-10-31T23:30:00Z",
                "socket[x]",
            ),
            (
                "linux_6.12",
                "be%ta",
                "6.12.1",
                "2026-11-02T12:00:00.5Z",
                "sockets",
            ),
            (
                "linux-6.12",
                "beta",
                "6.12.1",
                "2026-11-02T12:00:00Z",
                "bind",
            ),
            (
                "freebsd-14",
                "gamma",
                "14.1-RELEASE",
                "2026-11-03T08:00:00-05:00",
                "socket",
            ),
        ];
        for (k, (label, host, kernel, started, series)) in kinds.iter().enumerate() {
            for copy in 0..3 {
                let mut doc = base.clone();
                doc["label"] = (*label).into();
                doc["system"]["hostname"] = (*host).into();
                doc["system"]["os_release"] = (*kernel).into();
                doc["started"] = started.replace("00Z", &format!("0{copy}Z")).into();
                doc["benchmarks"][0]["series"] = (*series).into();
                doc["command_line"] = serde_json::json!(["scalebench", format!("{k}-{copy}")]);
                let text = doc.to_string();
                s.add(text.as_bytes(), &path).unwrap();
            }
        }
        let all = s.runs().unwrap();
        assert_eq!(all.len(), 15);
        for q in [
            "label=linux-6.1",
            "label=linux?6.1*",
            "label=linux_6.12 host=be%ta",
            "host=alpha host=gamma latest",
            "kernel=6.1* last=4",
            "benchmark=socket",
            "benchmark=socket[x]",
            "benchmark=sockets last=2",
            "workload=pgbench",
            "since=2026-11-01",
            "since=2026-10-31T23:00:00Z before=2026-11-02T12:00:00.2Z",
            "before=2026-11-01T00:00:00Z",
            "os=Linux cpu=*",
            "last=20",
        ] {
            let q = Query::parse(q).unwrap();
            let want: Vec<&str> = q.select(&all).iter().map(|l| l.run.id.as_str()).collect();
            let got = s.select(&q).unwrap();
            let got_ids: Vec<&str> = got.iter().map(|l| l.run.id.as_str()).collect();
            assert_eq!(got_ids, want, "{}", q.text());
            for l in &got {
                let same = all.iter().find(|a| a.run.id == l.run.id).unwrap();
                assert_eq!(l, same, "{}: read whole", q.text());
            }
        }
    }

    #[test]
    fn an_incomplete_or_foreign_file_is_refused_by_name() {
        let d = tempfile::tempdir().unwrap();
        let mut s = Store::open(&Location::Sqlite(d.path().join("s.sqlite")), CREATE).unwrap();
        let (bytes, _) = fixture("default.json");
        let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["complete"] = false.into();
        let e = s
            .add(v.to_string().as_bytes(), Path::new("half.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("half.json") && e.contains("incomplete"), "{e}");
        let e = s
            .add(b"{\"a\": 1}", Path::new("other.json"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("other.json") && e.contains("not a scalebench result"),
            "{e}"
        );
        assert!(s.runs().unwrap().is_empty());
    }

    #[test]
    fn a_path_that_holds_no_store_is_refused_by_name_and_left_as_it_is() {
        let d = tempfile::tempdir().unwrap();
        let at = |name: &str| d.path().join(name);
        std::fs::write(at("empty"), "").unwrap();
        std::fs::write(at("text"), "hello, not a database\n").unwrap();
        std::fs::write(at("short"), "SQLite").unwrap();
        std::fs::create_dir(at("dir")).unwrap();
        std::os::unix::fs::symlink(at("nothing"), at("dangling")).unwrap();
        let fifo = std::ffi::CString::new(at("fifo").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let cases: [(&Path, &str); 8] = [
            (&at("empty"), "an empty file, not an SQLite store"),
            (&at("text"), "not an SQLite database"),
            (&at("short"), "not an SQLite database"),
            (&at("dir"), "is a directory, not an SQLite store file"),
            (&at("fifo"), "is a FIFO, not an SQLite store file"),
            (
                Path::new("/dev/null"),
                "is a device, not an SQLite store file",
            ),
            (&at("dangling"), "a symbolic link to nothing"),
            (&at("no/s.sqlite"), "the directory"),
        ];
        for (p, says) in cases {
            for access in [Access::Read, Access::Write, CREATE] {
                let e = Store::open(&Location::Sqlite(p.to_path_buf()), access)
                    .err()
                    .unwrap();
                let words = sys::errno_words(&format!("{e:#}"));
                let want = if p.ends_with("no/s.sqlite") && access != CREATE {
                    "no store at"
                } else {
                    says
                };
                assert!(
                    words.contains(&p.display().to_string()) && words.contains(want),
                    "{access:?} {}: {words}",
                    p.display()
                );
            }
        }
        assert_eq!(std::fs::read(at("empty")).unwrap(), b"", "left empty");
        assert!(!at("nothing").exists() && !at("no").exists());
        // A new store only where nothing is, and only to write.
        let new = at("new.sqlite");
        assert!(Store::open(&Location::Sqlite(new.clone()), Access::Write).is_err());
        assert!(!new.exists());
        assert!(check_sqlite(&new, "new.sqlite", CREATE).unwrap());
        Store::open(&Location::Sqlite(new.clone()), CREATE).unwrap();
        assert!(!check_sqlite(&new, "new.sqlite", Access::Write).unwrap());
    }

    #[test]
    fn a_malformed_postgres_url_is_refused_naming_its_fault() {
        for (given, says) in [
            ("postgres:garbage", "not a PostgreSQL URL"),
            ("PostgreSQL:/x", "not a PostgreSQL URL"),
            ("postgres://h:notaport/db", "port"),
            ("postgres://", "no host"),
            ("postgres:///db", "no host"),
            ("postgresql://u@:5432/db", "no host"),
            ("mysql://h/db", "`mysql:` is no store scalebench has"),
            ("sqlite:runs.sqlite", "`sqlite:` is no store scalebench has"),
            ("", "an empty name"),
        ] {
            let e = Location::parse(given).unwrap_err();
            assert!(e.contains(says) && e.contains(given), "{given}: {e}");
        }
        let e = Location::parse("postgres:ann:secret@h/db").unwrap_err();
        assert!(!e.contains("secret"), "{e}");
        let e = Location::chosen(Some("postgres:x"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--store postgres:x: "), "{e}");
        assert_eq!(
            Location::parse("./postgres:x"),
            Ok(Location::Sqlite("./postgres:x".into()))
        );
    }

    #[test]
    fn locations_are_told_apart_and_passwords_hidden() {
        assert_eq!(
            Location::parse("postgresql://u:pw@h/db").unwrap().name(),
            "postgresql://u:***@h/db"
        );
        assert_eq!(
            Location::parse("runs.sqlite"),
            Ok(Location::Sqlite("runs.sqlite".into()))
        );
        assert_eq!(
            Location::chosen(Some("x.sqlite")).unwrap(),
            (Location::Sqlite("x.sqlite".into()), "--store")
        );
    }
}
