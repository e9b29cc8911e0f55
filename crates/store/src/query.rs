//! The query words that select stored runs: `label=linux-6.1 latest`,
//! `host=b kernel=6.1* since=2026-11-01`, `id=3f2a9c`, `last=5`.
//!
//! A query is words separated by spaces. `KEY=VALUE` words filter: every
//! key must match (and), a key given twice matches either value (or).
//! `label`, `host`, `kernel`, `os` and `cpu` take a pattern (`*` any
//! text, `?` one character, matched against the whole value, case as
//! written); `id` a prefix of the run's id (a bare word of hex digits is
//! the same); `benchmark` and `workload` a name the run holds (a
//! benchmark matches its every series); `since` and `before` a day
//! (`2026-11-01`, UTC) or a time (`2026-11-01T12:00:00Z`) the run started
//! at or after, or before. Then `latest` keeps the run that started last,
//! `last=N` the N that started last. The runs come out in the order they
//! started (ties by id).

use super::Listed;
use std::time::SystemTime;

/// The words, for error messages and docs.
pub const WORDS: &str = "label=, host=, kernel=, os=, cpu=, id=, benchmark=, workload=, since=, before=, latest, last=N";

/// A parsed query.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// `KEY=VALUE` filters, in the order given.
    filters: Vec<(Key, String)>,
    /// Keep only the last this many runs.
    last: Option<usize>,
    /// The text as given.
    text: String,
}

/// What a filter compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Key {
    Label,
    Host,
    Kernel,
    Os,
    Cpu,
    Id,
    Benchmark,
    Workload,
    Since,
    Before,
}

impl Key {
    fn of(word: &str) -> Option<Key> {
        Some(match word {
            "label" => Key::Label,
            "host" => Key::Host,
            "kernel" => Key::Kernel,
            "os" => Key::Os,
            "cpu" => Key::Cpu,
            "id" => Key::Id,
            "benchmark" => Key::Benchmark,
            "workload" => Key::Workload,
            "since" => Key::Since,
            "before" => Key::Before,
            _ => return None,
        })
    }
}

/// A day (`2026-11-01`) or an RFC 3339 time as a point in time.
pub fn parse_time(s: &str) -> Option<SystemTime> {
    let full = if s.len() == 10 {
        format!("{s}T00:00:00Z")
    } else {
        s.to_string()
    };
    humantime::parse_rfc3339_weak(full.trim_end_matches('Z')).ok()
}

/// Whether `text` matches the whole `pattern` (`*` any text, `?` one
/// character).
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Iterative matching with one backtrack point for the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < t.len() {
        if i < p.len() && (p[i] == '?' || p[i] == t[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

impl Query {
    /// Parses a query; a word it does not know is refused by name.
    pub fn parse(text: &str) -> Result<Query, String> {
        let mut q = Query {
            text: text.trim().to_string(),
            ..Query::default()
        };
        // The word at fault, after the whole query unless it is the
        // whole query (named once).
        let bad = |w: &str, why: &str| match text.trim() {
            whole if whole == w => format!("query `{w}`: {why}"),
            whole => format!("query `{whole}`: `{w}`: {why}"),
        };
        for w in text.split_whitespace() {
            if w == "latest" {
                q.last = Some(1);
                continue;
            }
            let Some((k, v)) = w.split_once('=') else {
                if w.len() >= 4 && w.chars().all(|c| c.is_ascii_hexdigit()) {
                    q.filters.push((Key::Id, w.to_ascii_lowercase()));
                    continue;
                }
                if w.chars().all(|c| c.is_ascii_hexdigit()) {
                    return Err(bad(
                        w,
                        "a bare id needs 4 hex digits or more (or give it as id=…)",
                    ));
                }
                return Err(bad(w, &format!("not a query word (known: {WORDS})")));
            };
            if v.is_empty() {
                return Err(bad(w, "no value after `=`"));
            }
            if k == "last" {
                let n: usize = v
                    .parse()
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or_else(|| bad(w, "expected a whole number of runs, 1 or more"))?;
                q.last = Some(n);
                continue;
            }
            let key =
                Key::of(k).ok_or_else(|| bad(w, &format!("unknown key `{k}` (known: {WORDS})")))?;
            match key {
                Key::Since | Key::Before if parse_time(v).is_none() => {
                    return Err(bad(
                        w,
                        "expected a day (2026-11-01) or a UTC time (2026-11-01T12:00:00Z)",
                    ));
                }
                Key::Id if !v.chars().all(|c| c.is_ascii_hexdigit()) => {
                    return Err(bad(w, "an id is hex digits (a prefix of one is enough)"));
                }
                _ => {}
            }
            let v = if key == Key::Id {
                v.to_ascii_lowercase()
            } else {
                v.to_string()
            };
            q.filters.push((key, v));
        }
        Ok(q)
    }

    /// The query as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the query selects at most one run by itself (`latest`, or
    /// `last=1`).
    pub fn single(&self) -> bool {
        self.last == Some(1)
    }

    fn matches_one(key: Key, want: &str, r: &Listed) -> bool {
        let run = &r.run;
        let started = || parse_time(&run.started);
        match key {
            Key::Label => glob(want, &run.label),
            Key::Host => glob(want, &run.host),
            Key::Kernel => glob(want, &run.kernel),
            Key::Os => glob(want, &run.os),
            Key::Cpu => glob(want, run.cpu_model.as_deref().unwrap_or("")),
            Key::Id => run.id.starts_with(want),
            Key::Benchmark => r.series.iter().any(|s| {
                s == want
                    || s.strip_prefix(want)
                        .is_some_and(|rest| rest.starts_with('['))
            }),
            Key::Workload => r.workloads.iter().any(|w| w == want),
            Key::Since => started().zip(parse_time(want)).is_some_and(|(s, t)| s >= t),
            Key::Before => started().zip(parse_time(want)).is_some_and(|(s, t)| s < t),
        }
    }

    /// Whether run `r` passes every filter.
    pub fn matches(&self, r: &Listed) -> bool {
        let mut keys: Vec<Key> = self.filters.iter().map(|(k, _)| *k).collect();
        keys.dedup();
        keys.iter().all(|&k| {
            self.filters
                .iter()
                .filter(|(fk, _)| *fk == k)
                .any(|(_, v)| Query::matches_one(k, v, r))
        })
    }

    /// A condition on the table `runs` that every run the query selects
    /// passes: SQL with `?` parameters (empty for none), so that a store
    /// of many runs reads only those that may match. `benchmark` and
    /// `workload` are decided there exactly; `label`, `host`, `kernel`,
    /// `os`, `cpu` and `id` as `LIKE` patterns (case-blind in SQLite:
    /// more runs, never fewer); `since` and `before` by the day, with a
    /// day to spare for a time written with an offset. [`Query::decide`]
    /// then selects exactly among them.
    pub fn narrowing(&self) -> (String, Vec<super::db::Value>) {
        use super::db::Value;
        let like = |p: &str| {
            let mut o = String::new();
            for c in p.chars() {
                match c {
                    '%' | '_' | '\\' => {
                        o.push('\\');
                        o.push(c);
                    }
                    '*' => o.push('%'),
                    '?' => o.push('_'),
                    c => o.push(c),
                }
            }
            o
        };
        // The day of `t` moved by `by` days, as `started` begins
        // (`2026-11-01`); a time the parser refused (never: `parse`
        // checked it) narrows nothing.
        let day = |t: &str, by: i64| -> Option<String> {
            let at = parse_time(t)?;
            let shift = std::time::Duration::from_secs(by.unsigned_abs() * 86_400);
            let moved = if by >= 0 {
                at + shift
            } else {
                at.checked_sub(shift).unwrap_or(SystemTime::UNIX_EPOCH)
            };
            // A day past year 9999 cannot be written: nothing narrowed.
            let mut day = String::new();
            std::fmt::Write::write_fmt(
                &mut day,
                format_args!("{}", humantime::format_rfc3339_seconds(moved)),
            )
            .ok()?;
            day.get(..10).map(str::to_string)
        };
        let mut keys: Vec<Key> = Vec::new();
        for (k, _) in &self.filters {
            if !keys.contains(k) {
                keys.push(*k);
            }
        }
        let (mut parts, mut params) = (Vec::new(), Vec::new());
        for k in keys {
            let mut any = Vec::new();
            for (_, v) in self.filters.iter().filter(|(fk, _)| *fk == k) {
                let (sql, p): (&str, Vec<Value>) = match k {
                    Key::Label => ("label LIKE ? ESCAPE '\\'", vec![Value::from(like(v))]),
                    Key::Host => ("host LIKE ? ESCAPE '\\'", vec![Value::from(like(v))]),
                    Key::Kernel => ("kernel LIKE ? ESCAPE '\\'", vec![Value::from(like(v))]),
                    Key::Os => ("os LIKE ? ESCAPE '\\'", vec![Value::from(like(v))]),
                    Key::Cpu => (
                        "COALESCE(cpu_model, '') LIKE ? ESCAPE '\\'",
                        vec![Value::from(like(v))],
                    ),
                    Key::Id => ("id LIKE ?", vec![Value::from(format!("{v}%"))]),
                    // No integer parameter: PostgreSQL would type it int4,
                    // which an i64 does not bind to.
                    Key::Benchmark => (
                        "EXISTS (SELECT 1 FROM benchmarks b WHERE b.run_id = runs.id AND (b.series = ? OR substr(b.series, 1, length(?)) = ?))",
                        vec![
                            Value::from(v.as_str()),
                            Value::from(format!("{v}[")),
                            Value::from(format!("{v}[")),
                        ],
                    ),
                    Key::Workload => (
                        "EXISTS (SELECT 1 FROM workload_rows w WHERE w.run_id = runs.id AND w.workload = ?)",
                        vec![Value::from(v.as_str())],
                    ),
                    Key::Since => match day(v, -1) {
                        Some(d) => ("started >= ?", vec![Value::from(d)]),
                        None => ("1 = 1", Vec::new()),
                    },
                    Key::Before => match day(v, 2) {
                        Some(d) => ("started < ?", vec![Value::from(d)]),
                        None => ("1 = 1", Vec::new()),
                    },
                };
                any.push(sql);
                params.extend(p);
            }
            parts.push(format!("({})", any.join(" OR ")));
        }
        if parts.is_empty() {
            return (String::new(), params);
        }
        (format!(" WHERE {}", parts.join(" AND ")), params)
    }

    /// The runs of `all` (read with [`Query::narrowing`], their series
    /// and workloads not yet read) the query selects, in the order they
    /// started: every filter but `benchmark` and `workload`, which the
    /// narrowing decided, then `latest` or `last`.
    pub fn decide(&self, all: &[Listed]) -> Vec<usize> {
        let rest = Query {
            filters: self
                .filters
                .iter()
                .filter(|(k, _)| !matches!(k, Key::Benchmark | Key::Workload))
                .cloned()
                .collect(),
            ..self.clone()
        };
        rest.chosen(all)
    }

    /// The runs of `all` the query selects, in the order they started.
    pub fn select<'a>(&self, all: &'a [Listed]) -> Vec<&'a Listed> {
        self.chosen(all).into_iter().map(|i| &all[i]).collect()
    }

    /// The places in `all` of the runs the query selects, in the order
    /// they started (ties by the time as written, then by id).
    pub fn chosen(&self, all: &[Listed]) -> Vec<usize> {
        let mut v: Vec<usize> = (0..all.len()).filter(|&i| self.matches(&all[i])).collect();
        v.sort_by_cached_key(|&i| {
            let r = &all[i].run;
            (parse_time(&r.started), r.started.clone(), r.id.clone())
        });
        if let Some(n) = self.last {
            let skip = v.len().saturating_sub(n);
            v.drain(..skip);
        }
        v
    }
}

/// Whether `word` could begin a query rather than name a file: it is one
/// of the query's words (`latest`, `KEY=…` with a known key, `last=…`).
pub fn looks_like_query(arg: &str) -> bool {
    arg.split_whitespace().next().is_some_and(|w| {
        w == "latest"
            || is_bare_id(w)
            || w.split_once('=')
                .is_some_and(|(k, _)| k == "last" || Key::of(k).is_some())
    })
}

/// Whether `w` is a run's id as a bare word: 4 to 64 hex digits (`3ceb`),
/// as `results show` takes it; what no file of that name is, is a query.
pub fn is_bare_id(w: &str) -> bool {
    (4..=64).contains(&w.len()) && w.chars().all(|c| c.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::RunRow;

    fn run(id: &str, label: &str, host: &str, kernel: &str, started: &str) -> Listed {
        Listed {
            run: RunRow {
                id: id.into(),
                added: String::new(),
                source: String::new(),
                bytes: 0,
                label: label.into(),
                host: host.into(),
                os: "Linux".into(),
                kernel: kernel.into(),
                kernel_version: String::new(),
                arch: "x86_64".into(),
                cpu_model: Some("AMD EPYC".into()),
                cpu_count: 2,
                virtualization: None,
                emulated: false,
                counts: "time".into(),
                started: started.into(),
                finished: None,
                tool_version: "0.3.0".into(),
                schema_version: 7,
                command_line: vec![],
                profile: None,
                analysis: String::new(),
            },
            series: vec!["socket".into(), "connect[epoll]".into()],
            workloads: vec!["pgbench".into()],
        }
    }

    fn ids(q: &str, all: &[Listed]) -> Vec<String> {
        Query::parse(q)
            .unwrap()
            .select(all)
            .iter()
            .map(|r| r.run.id.clone())
            .collect()
    }

    #[test]
    fn words_filter_and_select_in_the_order_runs_started() {
        let all = [
            run("aa01", "linux-6.1", "a", "6.1.0-1", "2026-11-03T10:00:00Z"),
            run("bb02", "linux-6.1", "b", "6.1.0-2", "2026-11-01T10:00:00Z"),
            run("cc03", "linux-6.18", "a", "6.18.0", "2026-11-02T10:00:00Z"),
            run(
                "dd04",
                "freebsd",
                "c",
                "14.1-RELEASE",
                "2026-10-30T10:00:00Z",
            ),
        ];
        assert_eq!(ids("", &all), ["dd04", "bb02", "cc03", "aa01"]);
        assert_eq!(ids("label=linux-6.1", &all), ["bb02", "aa01"]);
        assert_eq!(ids("label=linux-6.1 latest", &all), ["aa01"]);
        assert_eq!(ids("label=linux-* last=2", &all), ["cc03", "aa01"]);
        assert_eq!(ids("kernel=6.1*", &all), ["bb02", "cc03", "aa01"]);
        assert_eq!(ids("kernel=6.1.0-?", &all), ["bb02", "aa01"]);
        assert_eq!(ids("host=a host=c", &all), ["dd04", "cc03", "aa01"]);
        assert_eq!(ids("host=a label=linux-6.1", &all), ["aa01"]);
        assert_eq!(
            ids("since=2026-11-01 before=2026-11-03", &all),
            ["bb02", "cc03"]
        );
        assert_eq!(ids("since=2026-11-02T10:00:00Z", &all), ["cc03", "aa01"]);
        assert_eq!(ids("id=CC", &all), ["cc03"]);
        assert_eq!(ids("bb02", &all), ["bb02"]);
        assert_eq!(ids("benchmark=connect", &all).len(), 4);
        assert!(ids("benchmark=conn", &all).is_empty());
        assert_eq!(ids("workload=pgbench os=Linux cpu=*EPYC", &all).len(), 4);
        assert!(ids("label=none", &all).is_empty());
        assert!(Query::parse("label=x latest").unwrap().single());
    }

    #[test]
    fn a_bad_word_is_refused_by_name() {
        for (q, word, why) in [
            ("label=x lates", "`lates`", "not a query word"),
            ("lable=x", "`lable=x`", "unknown key `lable`"),
            ("label=", "`label=`", "no value"),
            ("last=0", "`last=0`", "whole number"),
            ("last=many", "`last=many`", "whole number"),
            ("since=yesterday", "`since=yesterday`", "expected a day"),
            ("since=2026-13-01", "`since=2026-13-01`", "expected a day"),
            ("id=xyz", "`id=xyz`", "hex digits"),
            ("b3a", "`b3a`", "a bare id needs 4 hex digits or more"),
        ] {
            let e = Query::parse(q).unwrap_err();
            assert!(e.contains(word) && e.contains(why), "{q}: {e}");
            assert!(e.starts_with(&format!("query `{q}`")), "{e}");
            assert_eq!(e.matches(word).count(), 1, "the word named once: {e}");
        }
    }

    #[test]
    fn patterns_match_the_whole_value() {
        assert!(glob("6.1*", "6.1.0-28-amd64"));
        assert!(!glob("6.1", "6.1.0"));
        assert!(glob("*amd64", "6.1.0-28-amd64"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(glob("*", ""));
        assert!(glob("?.1", "6.1"));
    }

    #[test]
    fn queries_are_told_from_paths() {
        assert!(looks_like_query("label=linux-6.1 latest"));
        assert!(looks_like_query("latest"));
        assert!(looks_like_query("last=3"));
        assert!(!looks_like_query("results/a.json"));
        assert!(!looks_like_query("run=1.json"));
        // A bare id, as `results show` takes it, where no file is so named.
        assert!(looks_like_query("3ceb") && looks_like_query("30bf8081f9bc"));
        assert!(!looks_like_query("3ce") && !looks_like_query("3ceb.json"));
        assert!(!looks_like_query("face-1"));
    }
}
