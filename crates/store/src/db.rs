//! One connection to a store, SQLite or PostgreSQL, behind one small
//! interface: statements written once with `?` placeholders, values of
//! four kinds, transactions. The two dialects differ in three places
//! only, all here: placeholders (`?` against `$1`), the binary column
//! type ([`Conn::blob_type`]) and how a writing transaction begins
//! ([`Conn::transaction`]).

use crate::error::DbError;

/// A value bound to a statement or read from a row. A parameter's
/// `None` is a NULL of that kind; a NULL read back is `Text(None)`
/// (SQLite does not type it): read values through the accessors, which
/// take any `None` as absent.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A whole number (`BIGINT`).
    Int(Option<i64>),
    /// A floating-point number (`DOUBLE PRECISION`).
    Real(Option<f64>),
    /// Text.
    Text(Option<String>),
    /// Bytes (`BLOB`, `BYTEA`).
    Bytes(Option<Vec<u8>>),
}

impl Value {
    /// A whole number, or `None` (NULL, or another kind).
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            _ => None,
        }
    }

    /// A number (a whole one too), or `None`.
    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|i| i as f64),
            _ => None,
        }
    }

    /// Text, or `None`.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }

    /// Text, or the empty string.
    pub fn string(&self) -> String {
        self.text().unwrap_or_default().to_string()
    }

    /// Bytes, or `None`.
    pub fn bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bytes(v) => v.as_deref(),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(Some(s.to_string()))
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(Some(s))
    }
}

impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Value {
        Value::Text(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(Some(i))
    }
}

impl From<Option<f64>> for Value {
    fn from(x: Option<f64>) -> Value {
        Value::Real(x.filter(|x| x.is_finite()))
    }
}

/// A connection.
pub enum Conn {
    /// An SQLite file.
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL server.
    Postgres(Box<Pg>),
}

/// A connection to a PostgreSQL server, and the role it is logged in as
/// (named when the server refuses that role a statement).
pub struct Pg {
    client: postgres::Client,
    role: String,
}

impl Pg {
    /// `e` as the store says it: a refusal for lack of privilege names
    /// the role.
    fn error(&self, e: postgres::Error) -> DbError {
        if e.code() == Some(&postgres::error::SqlState::INSUFFICIENT_PRIVILEGE) {
            return DbError::Denied {
                role: self.role.clone(),
                source: e,
            };
        }
        DbError::Postgres(e)
    }
}

/// `sql` with its `?` placeholders numbered `$1`, `$2`, … (PostgreSQL).
/// The statements of the store hold no `?` inside a quoted string.
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut k = 0;
    for c in sql.chars() {
        if c == '?' {
            k += 1;
            out.push_str(&format!("${k}"));
        } else {
            out.push(c);
        }
    }
    out
}

/// A parameter as the `postgres` crate binds it.
fn pg_param(v: &Value) -> Box<dyn postgres::types::ToSql + Sync> {
    match v {
        Value::Int(x) => Box::new(*x),
        Value::Real(x) => Box::new(*x),
        Value::Text(x) => Box::new(x.clone()),
        Value::Bytes(x) => Box::new(x.clone()),
    }
}

/// Column `i` of a PostgreSQL row as a [`Value`].
fn pg_value(row: &postgres::Row, i: usize) -> Result<Value, DbError> {
    use postgres::types::Type;
    let t = row.columns()[i].type_().clone();
    Ok(if t == Type::INT8 {
        Value::Int(row.try_get(i)?)
    } else if t == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if t == Type::FLOAT8 {
        Value::Real(row.try_get(i)?)
    } else if t == Type::BYTEA {
        Value::Bytes(row.try_get(i)?)
    } else if t == Type::TEXT || t == Type::VARCHAR || t == Type::NAME {
        Value::Text(row.try_get(i)?)
    } else {
        return Err(DbError::Column {
            column: i + 1,
            ty: t.to_string(),
        });
    })
}

/// Column `i` of an SQLite row as a [`Value`].
fn sqlite_value(row: &rusqlite::Row, i: usize) -> rusqlite::Result<Value> {
    use rusqlite::types::ValueRef;
    Ok(match row.get_ref(i)? {
        ValueRef::Null => Value::Text(None),
        ValueRef::Integer(x) => Value::Int(Some(x)),
        ValueRef::Real(x) => Value::Real(Some(x)),
        ValueRef::Text(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
        ValueRef::Blob(b) => Value::Bytes(Some(b.to_vec())),
    })
}

impl Conn {
    /// Opens an SQLite file (made if `create` and missing); waits up to
    /// 30 s for another writer.
    pub fn sqlite(path: &std::path::Path, create: bool) -> Result<Conn, DbError> {
        use rusqlite::OpenFlags;
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let c = rusqlite::Connection::open_with_flags(path, flags)?;
        c.busy_timeout(std::time::Duration::from_secs(30))?;
        c.execute_batch("PRAGMA foreign_keys = ON")?;
        Ok(Conn::Sqlite(c))
    }

    /// Connects to a PostgreSQL server (`postgres://…` or
    /// `postgresql://…`), with TLS as the URL's `sslmode` and
    /// `sslrootcert` ask ([`crate::tls`]), giving up after 30 s unless the
    /// URL sets its own `connect_timeout`. A server without TLS where the
    /// mode requires it is refused as such.
    pub fn postgres(url: &str) -> Result<Conn, DbError> {
        use crate::tls::{self, Mode};
        let (mut config, ask) = tls::config(url)?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(std::time::Duration::from_secs(30));
        }
        let connected = match ask.mode {
            Mode::Disable => config.connect(postgres::NoTls),
            _ => config.connect(tls::connector(&ask)?),
        };
        let mut client = connected.map_err(|e| {
            if ask.mode.required()
                && e.as_db_error().is_none()
                && tls::offered(&config) == Some(false)
            {
                return DbError::NoTls {
                    at: server_of(&config),
                    mode: ask.mode.name(),
                    source: e,
                };
            }
            DbError::Postgres(e)
        })?;
        let role: String = client
            .query_one("SELECT current_user::text", &[])?
            .try_get(0)?;
        Ok(Conn::Postgres(Box::new(Pg { client, role })))
    }

    /// Whether the table `name` exists (in the search path, for
    /// PostgreSQL): asked of the catalogue, which needs no right on the
    /// table itself.
    pub fn has_table(&mut self, name: &str) -> Result<bool, DbError> {
        let sql = match self {
            Conn::Sqlite(_) => "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?",
            Conn::Postgres(_) => "SELECT to_regclass(?)::text",
        };
        let rows = self.rows(sql, &[Value::from(name)])?;
        Ok(rows.first().is_some_and(|r| r[0].text().is_some()))
    }

    /// The column type of bytes in this dialect.
    pub fn blob_type(&self) -> &'static str {
        match self {
            Conn::Sqlite(_) => "BLOB",
            Conn::Postgres(_) => "BYTEA",
        }
    }

    /// Runs statements without parameters (`;`-separated).
    pub fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        match self {
            Conn::Sqlite(c) => c.execute_batch(sql)?,
            Conn::Postgres(p) => p.client.batch_execute(sql).map_err(|e| p.error(e))?,
        }
        Ok(())
    }

    /// Runs one statement; returns the rows it changed.
    pub fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let p: Vec<rusqlite::types::Value> = params.iter().map(sqlite_param).collect();
                let n = c.execute(sql, rusqlite::params_from_iter(p))?;
                Ok(n as u64)
            }
            Conn::Postgres(p) => {
                let owned: Vec<_> = params.iter().map(pg_param).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    owned.iter().map(|b| b.as_ref()).collect();
                let done = p.client.execute(numbered(sql).as_str(), &refs);
                done.map_err(|e| p.error(e))
            }
        }
    }

    /// The rows of a query.
    pub fn rows(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        match self {
            Conn::Sqlite(c) => {
                let p: Vec<rusqlite::types::Value> = params.iter().map(sqlite_param).collect();
                let mut st = c.prepare(sql)?;
                let n = st.column_count();
                let rows = st.query_map(rusqlite::params_from_iter(p), |r| {
                    (0..n).map(|i| sqlite_value(r, i)).collect()
                })?;
                Ok(rows.collect::<Result<_, _>>()?)
            }
            Conn::Postgres(p) => {
                let owned: Vec<_> = params.iter().map(pg_param).collect();
                let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    owned.iter().map(|b| b.as_ref()).collect();
                let found = p.client.query(numbered(sql).as_str(), &refs);
                let rows = found.map_err(|e| p.error(e))?;
                rows.iter()
                    .map(|r| (0..r.len()).map(|i| pg_value(r, i)).collect())
                    .collect()
            }
        }
    }

    /// Runs `f` in a writing transaction: committed when it returns
    /// `Ok`, rolled back otherwise. Writers take turns: SQLite's
    /// `BEGIN IMMEDIATE` takes the write lock at once, PostgreSQL's
    /// transaction takes the store's advisory lock.
    pub fn transaction<T, E: From<DbError>>(
        &mut self,
        f: impl FnOnce(&mut Conn) -> Result<T, E>,
    ) -> Result<T, E> {
        let begin = match self {
            Conn::Sqlite(_) => "BEGIN IMMEDIATE",
            // The lock's key, a number of the store's own.
            Conn::Postgres(_) => "BEGIN; SELECT pg_advisory_xact_lock(5312250735)",
        };
        self.batch(begin)?;
        match f(self) {
            Ok(t) => {
                self.batch("COMMIT")?;
                Ok(t)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}

/// `host:port` (or the socket's directory and port) of a configuration's
/// first server, as printed.
fn server_of(config: &postgres::Config) -> String {
    let port = config.get_ports().first().copied().unwrap_or(5432);
    match config.get_hosts().first() {
        Some(postgres::config::Host::Tcp(h)) => format!("{h}:{port}"),
        #[cfg(unix)]
        Some(postgres::config::Host::Unix(d)) => format!("{} (port {port})", d.display()),
        None => format!("localhost:{port}"),
    }
}

/// A parameter as rusqlite binds it.
fn sqlite_param(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as V;
    match v {
        Value::Int(Some(x)) => V::Integer(*x),
        Value::Real(Some(x)) => V::Real(*x),
        Value::Text(Some(x)) => V::Text(x.clone()),
        Value::Bytes(Some(x)) => V::Blob(x.clone()),
        _ => V::Null,
    }
}

/// A PostgreSQL URL with its password replaced by `***`, to be printed.
pub fn redacted(url: &str) -> String {
    // A malformed `postgres:USER:PASSWORD@…` hides its password too.
    let (scheme, sep, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme, "://", rest),
        None => match url.split_once(':') {
            Some((scheme, rest)) if scheme.to_ascii_lowercase().starts_with("postgres") => {
                (scheme, ":", rest)
            }
            _ => return url.to_string(),
        },
    };
    let (auth, tail) = match rest.find('@') {
        Some(at) if !rest[..at].contains('/') => (&rest[..at], &rest[at..]),
        _ => return url.to_string(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}{sep}{user}:***{tail}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_for_postgres() {
        assert_eq!(
            numbered("INSERT INTO t (a, b) VALUES (?, ?)"),
            "INSERT INTO t (a, b) VALUES ($1, $2)"
        );
        assert_eq!(numbered("SELECT 1"), "SELECT 1");
    }

    #[test]
    fn a_password_is_never_printed() {
        assert_eq!(
            redacted("postgres://ann:secret@db.example:5432/runs"),
            "postgres://ann:***@db.example:5432/runs"
        );
        assert_eq!(
            redacted("postgres://ann@db.example/runs"),
            "postgres://ann@db.example/runs"
        );
        assert_eq!(redacted("postgres:///runs"), "postgres:///runs");
        assert_eq!(
            redacted("postgres:ann:secret@db/runs"),
            "postgres:ann:***@db/runs"
        );
    }

    #[test]
    fn sqlite_errors_say_what_they_mean_before_sqlite_words() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.sqlite");
        let mut c = Conn::sqlite(&p, true).unwrap();
        c.batch("CREATE TABLE t (i BIGINT)").unwrap();
        drop(c);
        let ro =
            rusqlite::Connection::open_with_flags(&p, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let mut c = Conn::Sqlite(ro);
        let e = c.exec("INSERT INTO t VALUES (1)", &[]).unwrap_err();
        let chain = crate::error::chain(&e);
        assert!(
            chain[0].starts_with("cannot write to it: it is read-only"),
            "{chain:?}"
        );
        assert_eq!(
            chain[1], "attempt to write a readonly database",
            "{chain:?}"
        );
        let e = c.rows("SELECT nosuch FROM t", &[]).unwrap_err();
        let words = crate::error::chain(&e).join(": ");
        assert!(
            words.starts_with("SQLite failed: no such column: nosuch"),
            "{words}"
        );
    }

    #[test]
    fn values_bind_and_read_back_in_sqlite() {
        let mut c = Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap());
        c.batch("CREATE TABLE t (i BIGINT, r DOUBLE PRECISION, s TEXT, b BLOB)")
            .unwrap();
        let row = [
            Value::Int(Some(-3)),
            Value::Real(Some(2.5)),
            Value::from("x"),
            Value::Bytes(Some(vec![0, 255])),
        ];
        assert_eq!(
            c.exec("INSERT INTO t VALUES (?, ?, ?, ?)", &row).unwrap(),
            1
        );
        let nulls = [
            Value::Int(None),
            Value::Real(None),
            Value::Text(None),
            Value::Bytes(None),
        ];
        c.exec("INSERT INTO t VALUES (?, ?, ?, ?)", &nulls).unwrap();
        let rows = c
            .rows("SELECT i, r, s, b FROM t ORDER BY i DESC", &[])
            .unwrap();
        assert_eq!(rows[0], row);
        assert!(rows[1].iter().all(|v| v.int().is_none()
            && v.real().is_none()
            && v.text().is_none()
            && v.bytes().is_none()));
        // A failed transaction leaves nothing.
        let e = c
            .transaction(|c| -> Result<(), DbError> {
                c.exec("DELETE FROM t", &[])?;
                Err(DbError::Column {
                    column: 1,
                    ty: "no".into(),
                })
            })
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "column 1: type no is not one the store reads"
        );
        assert_eq!(c.rows("SELECT i FROM t", &[]).unwrap().len(), 2);
    }
}
