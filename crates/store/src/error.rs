//! Every error the store returns: what went wrong, typed, with the store
//! named once at the front and the database's or the file system's own
//! error kept as the cause (never folded into a string).

use std::fmt;

/// An error of a results store.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The store's location as given cannot be used: `whence` is where it
    /// came from (`--store`, `$SCALEBENCH_STORE`).
    #[error("{whence} {words}")]
    Location {
        /// Where the location was given.
        whence: &'static str,
        /// What is wrong with it.
        words: String,
    },
    /// No store was given and none can be found.
    #[error(
        "no store given, and neither $XDG_DATA_HOME nor $HOME is set to find the default one: give --store PATH"
    )]
    NoDefault,
    /// Nothing is where a store was to be read.
    #[error("no store at {0}: no such file (`scalebench results add FILE…` makes it)")]
    Missing(String),
    /// The store refuses, in this crate's words.
    #[error("store {store}: {why}")]
    Refused {
        /// The store's name as printed.
        store: String,
        /// Why.
        why: String,
    },
    /// The file system refused what the store was doing.
    #[error("store {store}: {doing}")]
    Io {
        /// The store's name as printed.
        store: String,
        /// What it was doing (`cannot read it`).
        doing: String,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// The database under the store failed.
    #[error("store {store}")]
    Database {
        /// The store's name as printed.
        store: String,
        /// The database's error.
        #[source]
        source: DbError,
    },
    /// The store's server refused the role it was opened as.
    #[error("store {store}: the role `{role}` may not {doing} (docs/store.md, \"A shared store\")")]
    Denied {
        /// The store's name as printed.
        store: String,
        /// The role.
        role: String,
        /// What it may not do.
        doing: String,
        /// The server's words.
        #[source]
        source: postgres::Error,
    },
    /// A file given to be stored is not one the store keeps.
    #[error("{}: {why}", file.display())]
    NotStored {
        /// The file.
        file: std::path::PathBuf,
        /// Why not.
        why: &'static str,
    },
    /// A file given to be stored cannot be read as a result file.
    #[error(transparent)]
    File(#[from] results::LoadError),
    /// A query selects no run, or several where one was asked for.
    #[error("{what} `{query}`: {why}")]
    Select {
        /// What the query was given as (`query`, `--base`).
        what: String,
        /// The query's words.
        query: String,
        /// What it selected instead.
        why: String,
    },
    /// A query's words cannot be read.
    #[error("{what}: {words}")]
    Query {
        /// What the query was given as.
        what: String,
        /// What is wrong with it.
        words: String,
    },
    /// A result file a source names cannot be found or read.
    #[error(transparent)]
    Found(#[from] results::found::FoundError),
}

impl Error {
    /// Whether what was asked is wrong in itself (a malformed location or
    /// query), rather than the store or the file system failing: the
    /// binary exits 2 on one.
    pub fn is_usage(&self) -> bool {
        matches!(self, Error::Location { .. } | Error::Query { .. })
    }
}

/// What the store's database says went wrong, before the store is named
/// ([`Error::Database`] names it).
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// SQLite failed: what that means for the store, SQLite's own words
    /// as the cause.
    #[error("{meaning}")]
    Sqlite {
        /// What the failure means for the store.
        meaning: &'static str,
        /// SQLite's error.
        #[source]
        source: SqliteWords,
    },
    /// The PostgreSQL server or the connection to it failed.
    #[error(transparent)]
    Postgres(#[from] postgres::Error),
    /// A column of a type the store does not read.
    #[error("column {column}: type {ty} is not one the store reads")]
    Column {
        /// The column, counted from 1.
        column: usize,
        /// Its type as the server names it.
        ty: String,
    },
    /// A migration's statements failed.
    #[error("migration {version} ({what})")]
    Migration {
        /// The version it brings the store to.
        version: i64,
        /// What it does.
        what: &'static str,
        /// Why it failed.
        #[source]
        source: Box<DbError>,
    },
    /// The URL's TLS parameters cannot be used as given.
    #[error("{0}")]
    TlsAsk(String),
    /// The CA file of `sslrootcert` cannot be used.
    #[error("{}: {why}", file.display())]
    CaFile {
        /// The file.
        file: std::path::PathBuf,
        /// What is wrong with it.
        why: String,
    },
    /// The server offers no TLS, and the URL's `sslmode` requires it.
    #[error(
        "the server at {at} offers no TLS, and sslmode={mode} requires it (sslmode=prefer takes a plain connection where there is no TLS)"
    )]
    NoTls {
        /// Where the server is.
        at: String,
        /// The mode asked for.
        mode: &'static str,
        /// The connection's error.
        #[source]
        source: postgres::Error,
    },
    /// The server refused a statement for the role's lack of privilege.
    #[error("the role `{role}` may not do this here")]
    Denied {
        /// The role the store was opened as.
        role: String,
        /// The server's words.
        #[source]
        source: postgres::Error,
    },
    /// The store's schema is newer than this scalebench knows.
    #[error(
        "schema version {at}, newer than this scalebench ({tool}) knows ({known}): upgrade scalebench to use it"
    )]
    Newer {
        /// The store's version.
        at: i64,
        /// The newest version this scalebench knows.
        known: i64,
        /// This scalebench's version.
        tool: &'static str,
    },
}

/// SQLite's error in SQLite's own words: its message when it gave one,
/// else the name of its result code (without rusqlite's `Error code N:`).
#[derive(Debug)]
pub struct SqliteWords(pub rusqlite::Error);

impl fmt::Display for SqliteWords {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            rusqlite::Error::SqliteFailure(_, Some(m)) => f.write_str(m),
            rusqlite::Error::SqliteFailure(e, None) => {
                f.write_str(rusqlite::ffi::code_to_str(e.extended_code))
            }
            other => other.fmt(f),
        }
    }
}

impl std::error::Error for SqliteWords {}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> DbError {
        use rusqlite::ErrorCode as C;
        let meaning = match e.sqlite_error_code() {
            Some(C::ReadOnly) => {
                "cannot write to it: it is read-only here (the file's or its directory's permissions, or a read-only filesystem)"
            }
            Some(C::CannotOpen) => "cannot open it",
            Some(C::NotADatabase) => "not an SQLite database",
            Some(C::DatabaseCorrupt) => "damaged: not a well-formed SQLite database",
            Some(C::SystemIoFailure) => "an I/O error reading or writing it",
            Some(C::DatabaseBusy | C::DatabaseLocked) => "locked: another writer held it for 30 s",
            Some(C::DiskFull) => "the disk is full",
            Some(C::PermissionDenied) => "permission denied",
            _ => "SQLite failed",
        };
        DbError::Sqlite {
            meaning,
            source: SqliteWords(e),
        }
    }
}

/// The messages of `e` and of each of its causes, outermost first.
#[cfg(test)]
pub(crate) fn chain(e: &(dyn std::error::Error + 'static)) -> Vec<String> {
    let mut out = vec![e.to_string()];
    let mut at = e.source();
    while let Some(c) = at {
        out.push(c.to_string());
        at = c.source();
    }
    out
}

/// A result of the store.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_words_are_its_message_or_its_codes_name_never_the_code_number() {
        let with = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some("attempt to write a readonly database".into()),
        );
        let e = DbError::from(with);
        assert!(e.to_string().starts_with("cannot write to it"), "{e}");
        let cause = std::error::Error::source(&e).expect("SQLite's words as cause");
        assert_eq!(cause.to_string(), "attempt to write a readonly database");
        let without = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        let e = DbError::from(without);
        assert_eq!(e.to_string(), "locked: another writer held it for 30 s");
        let cause = std::error::Error::source(&e).expect("cause").to_string();
        assert!(!cause.contains("Error code"), "{cause}");
        assert!(!cause.is_empty());
    }
}
