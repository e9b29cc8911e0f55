//! The verdict block a result file keeps for a series
//! (`benchmarks[].verdict.verdict`), as every reader of a file meets it:
//! `analysis::recorded::judge_all`, which reuses a kept verdict only when
//! it agrees with the series' own samples. The series is the first of
//! `tests/fixtures/default.json`, its verdict stamped as this build's (so
//! every input reaches the check); the input is the verdict's JSON.
//! Besides not panicking: whatever verdict comes out is the fresh
//! judgement's in every figure the samples give without the bootstrap
//! (class, ends, rise, counts, model), so no edit ever reaches a reader,
//! and an input refused is said to be so exactly once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scalebench::analysis::{self, Options, Verdict, recorded};
use scalebench::results::BenchResult;
use std::sync::OnceLock;

/// The series, stamped with its fresh verdict, and that verdict.
fn base() -> &'static (BenchResult, Verdict) {
    static BASE: OnceLock<(BenchResult, Verdict)> = OnceLock::new();
    BASE.get_or_init(|| {
        let text = include_str!("../../tests/fixtures/default.json");
        let file = scalebench::results::parse(text, std::path::Path::new("default.json"))
            .expect("the fixture reads");
        let mut b = file.benchmarks[0].clone();
        let opts = options();
        let v = recorded::judge_fresh(&b, &opts).expect("the fixture's series is judged");
        recorded::keep(&mut b, &v, &opts);
        assert!(b.verdict.is_some(), "the fresh verdict is kept");
        (b, v)
    })
}

/// One thread, few replicas: the fresh judgement is made once; a kept
/// verdict is never judged with replicas unless refused.
fn options() -> Options {
    Options {
        threads: 1,
        replicas: 20,
        ..Options::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(block) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let (b, fresh) = base();
    let mut b = b.clone();
    b.verdict.as_mut().expect("stamped").verdict = block;
    let judged = recorded::judge_all(&[&b], &options());
    assert_eq!(judged.verdicts.len(), 1);
    let v = judged.verdicts[0].as_ref().expect("the series is judged");
    let same = |what: &str, a: f64, b: f64| {
        assert!(
            (a - b).abs() <= 1e-6 * a.abs().max(b.abs()),
            "{what}: shown {a}, its samples give {b}"
        )
    };
    assert_eq!(v.class, fresh.class, "a class its samples do not give is shown");
    same("low end", v.low.ns, fresh.low.ns);
    same("high end", v.high.ns, fresh.high.ns);
    same("rise", v.rise.value, fresh.rise.value);
    assert_eq!((v.samples, v.runs), (fresh.samples, fresh.runs));
    assert_eq!(analysis::describe_model(&v.model), analysis::describe_model(&fresh.model));
    if let Some(c) = v.confidence {
        assert!((0.0..=1.0).contains(&c), "a confidence of {c} is shown");
    }
    assert!(judged.disagreed.len() <= 1, "said more than once: {:?}", judged.disagreed);
});
