//! The store's schema and its migrations. Migration k takes a store from
//! version k − 1 to k; the `migrations` table records each one applied.
//! A store is brought to [`VERSION`] when it is opened, the missing
//! migrations applied in order in one transaction; a store of a newer
//! version than this scalebench knows is refused. A migration, once
//! released, is never edited: a change is a new one at the end of
//! [`MIGRATIONS`] (docs/store.md says how).

use super::db::{Conn, Value};
use crate::error::DbError;

/// One migration: its statements, `;`-separated; `{blob}` stands for
/// the dialect's binary column type.
pub struct Migration {
    /// What it does, in words (kept in the `migrations` table).
    pub what: &'static str,
    /// Its statements.
    pub sql: &'static str,
    /// What fills a new column from the stored files, after the
    /// statements, in the same transaction.
    pub fill: Option<Fill>,
}

/// What fills a migration's new column from the stored files.
pub type Fill = fn(&mut Conn) -> Result<(), DbError>;

/// Every migration, in order: migration k is `MIGRATIONS[k - 1]`.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        what: "runs, their files, their benchmarks and workload rows",
        sql: "
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    added TEXT NOT NULL,
    source TEXT NOT NULL,
    bytes BIGINT NOT NULL,
    label TEXT NOT NULL,
    host TEXT NOT NULL,
    os TEXT NOT NULL,
    kernel TEXT NOT NULL,
    kernel_version TEXT NOT NULL,
    arch TEXT NOT NULL,
    cpu_model TEXT,
    cpu_count BIGINT NOT NULL,
    virtualization TEXT,
    emulated BIGINT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    tool_version TEXT NOT NULL,
    schema_version BIGINT NOT NULL,
    command_line TEXT NOT NULL,
    profile TEXT,
    analysis TEXT NOT NULL
);
CREATE INDEX runs_label_started ON runs (label, started);
CREATE INDEX runs_started ON runs (started);
CREATE TABLE run_files (
    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    encoding TEXT NOT NULL,
    body {blob} NOT NULL
);
CREATE TABLE benchmarks (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    name TEXT NOT NULL,
    series TEXT NOT NULL,
    status TEXT NOT NULL,
    n BIGINT NOT NULL,
    runs BIGINT NOT NULL,
    class TEXT,
    confidence DOUBLE PRECISION,
    low_n DOUBLE PRECISION,
    low_ns DOUBLE PRECISION,
    high_n DOUBLE PRECISION,
    high_ns DOUBLE PRECISION,
    note TEXT,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX benchmarks_series ON benchmarks (series);
CREATE TABLE workload_rows (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    workload TEXT NOT NULL,
    status TEXT NOT NULL,
    row_label TEXT NOT NULL,
    target TEXT,
    figure DOUBLE PRECISION,
    unit TEXT,
    peak_level DOUBLE PRECISION,
    knee DOUBLE PRECISION,
    verdict TEXT,
    error TEXT,
    PRIMARY KEY (run_id, position)
);
CREATE INDEX workload_rows_workload ON workload_rows (workload);
",
        fill: None,
    },
    Migration {
        what: "what a run's costs count: time, or instructions (a guest under QEMU's -icount)",
        // NULL until filled from the run's file by the store when it
        // applies this migration (`Store::open`): an emulated run may
        // have counted instructions.
        sql: "ALTER TABLE runs ADD COLUMN counts TEXT",
        fill: Some(fill_counts),
    },
    Migration {
        what: "a workload row's sizes: what its workload measured at (files, scale, …)",
        // NULL until filled from the run's file (`Store::open`); NULL
        // after for a workload without sizes.
        sql: "ALTER TABLE workload_rows ADD COLUMN sizes TEXT",
        fill: Some(fill_sizes),
    },
];

/// A stored run's file, its bytes as written; `None` where it cannot be
/// unpacked.
fn stored_bytes(encoding: Option<&str>, body: &[u8]) -> Option<Vec<u8>> {
    match encoding {
        Some("gzip") => crate::gunzip(body).ok(),
        _ => Some(body.to_vec()),
    }
}

/// A stored run's file as a result file; `None` where it cannot be read
/// (it is then left as it was indexed).
fn stored_file(encoding: Option<&str>, body: &[u8]) -> Option<results::ResultFile> {
    let bytes = stored_bytes(encoding, body)?;
    results::parse(
        std::str::from_utf8(&bytes).ok()?,
        std::path::Path::new("stored"),
    )
    .ok()
}

/// Fills `workload_rows.sizes` of the runs stored before it existed,
/// from each run's file: every row of a workload gets its sizes
/// ([`results::WorkloadResult::sizes_words`]), matched by position as the
/// index numbers them. One file at a time: a store of many runs does not
/// hold them all in memory at once.
fn fill_sizes(c: &mut Conn) -> Result<(), DbError> {
    let ids = c.rows(
        "SELECT DISTINCT run_id FROM workload_rows ORDER BY run_id",
        &[],
    )?;
    for r in ids {
        let id = r[0].string();
        let body = c.rows(
            "SELECT encoding, body FROM run_files WHERE run_id = ?",
            &[Value::from(id.as_str())],
        )?;
        let Some(file) = body
            .first()
            .and_then(|b| stored_file(b[0].text(), b[1].bytes().unwrap_or_default()))
        else {
            continue;
        };
        for w in crate::index::work_rows(&file) {
            if let Some(sizes) = w.sizes {
                c.exec(
                    "UPDATE workload_rows SET sizes = ? WHERE run_id = ? AND position = ?",
                    &[
                        Value::from(sizes),
                        Value::from(id.as_str()),
                        Value::from(w.position),
                    ],
                )?;
            }
        }
    }
    Ok(())
}

/// Fills `runs.counts` of the runs stored before it existed: an emulated
/// run's from its file (`system.virtualization.clock`), every other
/// `time`. A file that cannot be read is taken as time.
fn fill_counts(c: &mut Conn) -> Result<(), DbError> {
    let rows = c.rows(
        "SELECT runs.id, run_files.encoding, run_files.body FROM runs JOIN run_files ON run_files.run_id = runs.id WHERE runs.emulated = 1",
        &[],
    )?;
    for r in rows {
        let body = r[2].bytes().unwrap_or_default();
        let bytes = stored_bytes(r[1].text(), body).unwrap_or_default();
        let clock = serde_json::from_slice::<serde_json::Value>(&bytes)
            .ok()
            .and_then(|v| {
                v["system"]["virtualization"]["clock"]
                    .as_str()
                    .map(str::to_string)
            });
        if clock.as_deref() == Some("instructions") {
            c.exec(
                "UPDATE runs SET counts = ? WHERE id = ?",
                &[Value::from("instructions"), Value::from(r[0].string())],
            )?;
        }
    }
    c.exec("UPDATE runs SET counts = 'time' WHERE counts IS NULL", &[])?;
    Ok(())
}

/// The schema version this scalebench writes and reads.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The table of applied migrations, made if missing.
const MIGRATIONS_TABLE: &str = "CREATE TABLE IF NOT EXISTS migrations (
    version BIGINT PRIMARY KEY,
    what TEXT NOT NULL,
    applied TEXT NOT NULL,
    tool_version TEXT NOT NULL
)";

/// The store's version: the highest migration applied (0: none).
pub fn version(c: &mut Conn) -> Result<i64, DbError> {
    let rows = c.rows("SELECT MAX(version) FROM migrations", &[])?;
    Ok(rows.first().and_then(|r| r[0].int()).unwrap_or(0))
}

/// Brings the store to [`VERSION`], applying the missing migrations in
/// order in one transaction (none is applied if one fails); refuses a
/// store newer than this scalebench. Returns the versions applied.
pub fn migrate(c: &mut Conn) -> Result<Vec<i64>, DbError> {
    migrate_with(c, MIGRATIONS)
}

/// [`migrate`] with a list of migrations of its own (for tests).
pub(crate) fn migrate_with(c: &mut Conn, migrations: &[Migration]) -> Result<Vec<i64>, DbError> {
    let known = migrations.len() as i64;
    // Up to date: nothing to write, so a role that may only read or add
    // opens it. A store without the table of migrations is new: making
    // that table is the first migration's start.
    // A store without the table is new: the first migration makes it.
    // Reading it may fail otherwise (a role refused it): said as it is.
    let before = if c.has_table("migrations")? {
        Some(version(c)?)
    } else {
        None
    };
    if before == Some(known) {
        return Ok(Vec::new());
    }
    let blob = c.blob_type();
    c.transaction(|c| {
        if before.is_none() {
            c.batch(MIGRATIONS_TABLE).map_err(|e| DbError::Migration {
                version: 1,
                what: migrations
                    .first()
                    .map_or("the table of migrations", |m| m.what),
                source: Box::new(e),
            })?;
        }
        let at = version(c)?;
        if at > known {
            return Err(DbError::Newer {
                at,
                known,
                tool: env!("CARGO_PKG_VERSION"),
            });
        }
        let mut applied = Vec::new();
        for (k, m) in migrations.iter().enumerate().skip(at as usize) {
            let v = k as i64 + 1;
            c.batch(&m.sql.replace("{blob}", blob))
                .and_then(|()| m.fill.map_or(Ok(()), |fill| fill(c)))
                .map_err(|e| DbError::Migration {
                    version: v,
                    what: m.what,
                    source: Box::new(e),
                })?;
            c.exec(
                "INSERT INTO migrations (version, what, applied, tool_version) VALUES (?, ?, ?, ?)",
                &[
                    Value::from(v),
                    Value::from(m.what),
                    Value::from(results::now_rfc3339()),
                    Value::from(env!("CARGO_PKG_VERSION")),
                ],
            )?;
            applied.push(v);
        }
        Ok(applied)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memory() -> Conn {
        Conn::Sqlite(rusqlite::Connection::open_in_memory().unwrap())
    }

    #[test]
    fn missing_migrations_are_applied_in_order_once() {
        let mut c = memory();
        assert_eq!(migrate(&mut c).unwrap(), (1..=VERSION).collect::<Vec<_>>());
        assert_eq!(version(&mut c).unwrap(), VERSION);
        assert!(migrate(&mut c).unwrap().is_empty(), "nothing twice");
        // A later migration on top of an older store.
        let mut c = memory();
        assert_eq!(migrate_with(&mut c, &MIGRATIONS[..1]).unwrap(), [1]);
        let more = [
            Migration {
                what: MIGRATIONS[0].what,
                sql: MIGRATIONS[0].sql,
                fill: None,
            },
            Migration {
                what: "a note per run",
                sql: "CREATE TABLE notes (run_id TEXT, note TEXT)",
                fill: None,
            },
        ];
        assert_eq!(migrate_with(&mut c, &more).unwrap(), [2]);
        c.exec("INSERT INTO notes VALUES ('a', 'b')", &[]).unwrap();
    }

    #[test]
    fn runs_stored_before_counts_existed_get_it_from_their_files() {
        let mut c = memory();
        assert_eq!(migrate_with(&mut c, &MIGRATIONS[..1]).unwrap(), [1]);
        let put = |c: &mut Conn, id: &str, emulated: i64, clock: Option<&str>| {
            c.exec(
                "INSERT INTO runs (id, added, source, bytes, label, host, os, kernel, kernel_version, arch, cpu_model, cpu_count, virtualization, emulated, started, finished, tool_version, schema_version, command_line, profile, analysis) VALUES (?, 'a', 's', 1, 'l', 'h', 'Linux', 'k', 'v', 'x86_64', NULL, 1, 'tcg', ?, 't', NULL, '0', 9, '[]', NULL, 'x')",
                &[Value::from(id), Value::from(emulated)],
            )
            .unwrap();
            let file = serde_json::json!({"system": {"virtualization": {"clock": clock}}});
            let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut z, file.to_string().as_bytes()).unwrap();
            c.exec(
                "INSERT INTO run_files (run_id, encoding, body) VALUES (?, 'gzip', ?)",
                &[Value::from(id), Value::Bytes(Some(z.finish().unwrap()))],
            )
            .unwrap();
        };
        put(&mut c, "counted", 1, Some("instructions"));
        put(&mut c, "timed", 1, Some("time"));
        put(&mut c, "native", 0, None);
        assert_eq!(migrate(&mut c).unwrap(), (2..=VERSION).collect::<Vec<_>>());
        let rows = c
            .rows("SELECT id, counts FROM runs ORDER BY id", &[])
            .unwrap();
        let got: Vec<(String, String)> = rows
            .iter()
            .map(|r| (r[0].string(), r[1].string()))
            .collect();
        assert_eq!(
            got,
            [
                ("counted".to_string(), "instructions".to_string()),
                ("native".into(), "time".into()),
                ("timed".into(), "time".into())
            ]
        );
    }

    #[test]
    fn workload_rows_stored_before_sizes_existed_get_them_from_their_files() {
        let mut c = memory();
        assert_eq!(migrate_with(&mut c, &MIGRATIONS[..2]).unwrap(), [1, 2]);
        // A run of fs (two rows, sized) and a workload without sizes, as
        // a store of version 2 indexed it.
        let mut v: serde_json::Value =
            serde_json::from_str(include_str!("../../../tests/fixtures/default.json")).unwrap();
        let row = |label: &str| serde_json::json!({"label": label, "params": {}, "load": null, "error": null});
        v["workloads"] = serde_json::json!([
            {"name": "fs", "what": "w", "status": "ok", "params": {"files": 500, "bytes": 10},
             "rows": [row("unpack"), row("replay cold")]},
            {"name": "x", "what": "w", "status": "ok", "params": {"files": 3}, "rows": [row("r")]}
        ]);
        let text = v.to_string();
        let file = results::parse(&text, std::path::Path::new("t")).unwrap();
        c.exec(
            "INSERT INTO runs (id, added, source, bytes, label, host, os, kernel, kernel_version, arch, cpu_model, cpu_count, virtualization, emulated, started, finished, tool_version, schema_version, command_line, profile, analysis, counts) VALUES ('r', 'a', 's', 1, 'l', 'h', 'Linux', 'k', 'v', 'x86_64', NULL, 1, NULL, 0, 't', NULL, '0', 9, '[]', NULL, 'x', 'time')",
            &[],
        )
        .unwrap();
        let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, text.as_bytes()).unwrap();
        c.exec(
            "INSERT INTO run_files (run_id, encoding, body) VALUES ('r', 'gzip', ?)",
            &[Value::Bytes(Some(z.finish().unwrap()))],
        )
        .unwrap();
        for w in crate::index::work_rows(&file) {
            c.exec(
                "INSERT INTO workload_rows (run_id, position, workload, status, row_label) VALUES ('r', ?, ?, 'ok', ?)",
                &[Value::from(w.position), Value::from(w.workload), Value::from(w.row_label)],
            )
            .unwrap();
        }
        assert_eq!(migrate(&mut c).unwrap(), (3..=VERSION).collect::<Vec<_>>());
        let rows = c
            .rows(
                "SELECT row_label, sizes FROM workload_rows ORDER BY position",
                &[],
            )
            .unwrap();
        let got: Vec<(String, Option<String>)> = rows
            .iter()
            .map(|r| (r[0].string(), r[1].text().map(str::to_string)))
            .collect();
        let fs = Some("files 500, bytes 10".to_string());
        assert_eq!(
            got,
            [
                ("unpack".to_string(), fs.clone()),
                ("replay cold".into(), fs),
                ("r".into(), None)
            ]
        );
    }

    #[test]
    fn a_failing_migration_applies_none_and_a_newer_store_is_refused() {
        let mut c = memory();
        let bad = [
            Migration {
                what: "fine",
                sql: "CREATE TABLE a (x TEXT)",
                fill: None,
            },
            Migration {
                what: "broken",
                sql: "CREATE TABLE b (x TEXT); CREATE TABLE b (x TEXT)",
                fill: None,
            },
        ];
        let e = migrate_with(&mut c, &bad).unwrap_err().to_string();
        assert!(e.contains("migration 2 (broken)"), "{e}");
        // Rolled back whole: the first migration and the table of them too.
        assert!(c.rows("SELECT x FROM a", &[]).is_err());
        assert!(c.rows("SELECT version FROM migrations", &[]).is_err());
        // Applied by a newer scalebench: refused by this one.
        migrate_with(&mut c, &bad[..1]).unwrap();
        let e = migrate_with(&mut c, &[]).unwrap_err().to_string();
        assert!(
            e.contains("schema version 1, newer than this scalebench")
                && e.contains("upgrade scalebench"),
            "{e}"
        );
    }
}
