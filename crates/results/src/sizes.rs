//! A workload's sizes: the params that say how much it did (what
//! `--files`, `--bytes`, `--pg-scale`, … set). Two runs at other sizes
//! measured other things, so their figures are not compared — by
//! `compare`, `report`, `history` and the dashboard alike.

use super::WorkloadResult;

/// The params that size each workload (docs/results-format.md). Not the
/// levels a sweep visits (pgbench's clients follow the CPUs, mail's
/// sessions, forward's rates, a swept workload's connections): figures
/// are compared level by level where both have it. Nor what a system
/// reached or chose for itself (connections held, load processes): that
/// is what is compared.
const SIZE_KEYS: &[(&str, &[&str])] = &[
    (
        "fs",
        &[
            "files",
            "bytes",
            "requests",
            "seed",
            "connections",
            "requests_per_connection",
            "interval_ms",
            "preload",
        ],
    ),
    ("fs-sizes", &["files_per_size"]),
    ("bigfile", &["file_bytes"]),
    (
        "http-ipstack",
        &["fetches", "requests_per_connection", "object_bytes"],
    ),
    (
        "http-shortconn",
        &["requests_per_connection", "warm_up_s", "seconds", "rounds"],
    ),
    ("pgbench", &["scale"]),
    (
        "mail",
        &[
            "message_bytes",
            "recipients",
            "messages_per_session",
            "messages_per_delivery",
            "repeats",
        ],
    ),
    ("forward", &["payload_bytes"]),
];

impl WorkloadResult {
    /// Its sizes as recorded, `(key, value)` in a fixed order per
    /// workload; empty for a workload without sizes.
    pub fn sizes(&self) -> Vec<(&'static str, String)> {
        let keys = SIZE_KEYS
            .iter()
            .find(|(name, _)| *name == self.name)
            .map_or(&[][..], |k| k.1);
        keys.iter()
            .filter_map(|&k| {
                let v = self.params.get(k)?;
                Some((k, v.as_str().map_or_else(|| v.to_string(), str::to_string)))
            })
            .collect()
    }

    /// Its sizes in words (`files 500, bytes 9799472, …`), as the store
    /// indexes them; `None` for a workload without sizes.
    pub fn sizes_words(&self) -> Option<String> {
        let s = self.sizes();
        (!s.is_empty()).then(|| {
            s.iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// Where its sizes differ from `other`'s (`files 500 → 300, requests
    /// 2000 → 1000`); `None` where they are the same. A size one file
    /// does not record (written before it was) is no difference.
    pub fn size_changes(&self, other: &WorkloadResult) -> Option<String> {
        changes(&self.sizes(), &other.sizes())
    }
}

/// [`WorkloadResult::size_changes`] of two sizes in words
/// ([`WorkloadResult::sizes_words`], as the store keeps them).
pub fn size_changes_in_words(a: &str, b: &str) -> Option<String> {
    let pairs = |w: &str| -> Vec<(String, String)> {
        w.split(", ")
            .filter_map(|p| p.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    changes(&pairs(a), &pairs(b))
}

/// The keys of `a` whose values differ in `b`, in words.
fn changes<K: AsRef<str>>(a: &[(K, String)], b: &[(K, String)]) -> Option<String> {
    let changed: Vec<String> = a
        .iter()
        .filter_map(|(k, va)| {
            let vb = &b.iter().find(|(kb, _)| kb.as_ref() == k.as_ref())?.1;
            (va != vb).then(|| format!("{} {va} → {vb}", k.as_ref()))
        })
        .collect();
    (!changed.is_empty()).then(|| changed.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str, params: serde_json::Value) -> WorkloadResult {
        serde_json::from_value(serde_json::json!({
            "name": name, "what": "w", "status": "ok", "rows": [], "params": params
        }))
        .unwrap()
    }

    #[test]
    fn a_workload_at_other_sizes_is_told_by_its_sizes_only() {
        let a = workload(
            "fs",
            serde_json::json!({"files": 500, "bytes": 10, "requests": 2000,
                "server_loop": "epoll", "fitted": "words a", "archive1_files": 3}),
        );
        let b = workload(
            "fs",
            serde_json::json!({"files": 300, "bytes": 10, "requests": 1000,
                "server_loop": "poll", "fitted": "words b", "archive1_files": 4}),
        );
        assert_eq!(
            a.size_changes(&b).as_deref(),
            Some("files 500 → 300, requests 2000 → 1000")
        );
        assert_eq!(a.size_changes(&a), None);
        // What a system reached is compared, not a size: http-shortconn's
        // connections; a size one file lacks (older) is no difference.
        let sc = |c: u64| workload("http-shortconn", serde_json::json!({"connections": c}));
        assert_eq!(sc(30_000).size_changes(&sc(12_000)), None);
        let old = workload("fs", serde_json::json!({"files": 300}));
        assert_eq!(old.size_changes(&b), None);
        // A sweep's levels are no size (pgbench's clients follow the
        // CPUs; figures are compared level by level); its scale is.
        let pg = |scale: u64, clients: serde_json::Value| {
            workload(
                "pgbench",
                serde_json::json!({"scale": scale, "clients": clients}),
            )
        };
        let (few, many) = (serde_json::json!([1, 2]), serde_json::json!([1, 64]));
        assert_eq!(pg(10, few.clone()).size_changes(&pg(10, many)), None);
        assert_eq!(
            pg(10, few.clone()).size_changes(&pg(88, few)).as_deref(),
            Some("scale 10 → 88")
        );
        // An unknown workload has no sizes to differ by.
        assert_eq!(
            workload("x", serde_json::json!({"files": 1}))
                .size_changes(&workload("x", serde_json::json!({"files": 2}))),
            None
        );
    }

    #[test]
    fn sizes_in_words_differ_as_the_sizes_do() {
        let a = workload(
            "fs",
            serde_json::json!({"files": 500, "bytes": 10, "requests": 2000, "server_loop": "epoll"}),
        );
        let b = workload(
            "fs",
            serde_json::json!({"files": 300, "bytes": 10, "requests": 1000, "server_loop": "poll"}),
        );
        let (wa, wb) = (a.sizes_words().unwrap(), b.sizes_words().unwrap());
        assert_eq!(wa, "files 500, bytes 10, requests 2000");
        assert_eq!(
            size_changes_in_words(&wa, &wb).as_deref(),
            Some("files 500 → 300, requests 2000 → 1000")
        );
        assert_eq!(size_changes_in_words(&wa, &wb), a.size_changes(&b));
        assert_eq!(size_changes_in_words(&wa, &wa), None);
        // A size one side does not record is no difference.
        assert_eq!(size_changes_in_words("files 300", &wb), None);
        assert_eq!(
            workload("x", serde_json::json!({"files": 1})).sizes_words(),
            None
        );
    }
}
