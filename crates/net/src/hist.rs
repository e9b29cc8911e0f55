//! Latency histograms as the load generator and the mail sender keep them
//! (ns, 1 ns to 1 hour, 3 significant digits), and their recorded buckets,
//! the form in which one process hands its histogram to another exactly:
//! the same buckets give the same percentiles, so merged figures are not
//! averages of percentiles.

use hdrhistogram::Histogram;

/// An empty latency histogram.
pub fn new() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds")
}

/// The recorded buckets of `h`: (value, count) for each.
pub fn buckets(h: &Histogram<u64>) -> Vec<(u64, u64)> {
    h.iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .collect()
}

/// A histogram holding `b`'s buckets; an error names a value out of range.
pub fn from_buckets(b: &[(u64, u64)]) -> Result<Histogram<u64>, String> {
    let mut h = new();
    for &(v, n) in b {
        h.record_n(v, n)
            .map_err(|e| format!("latency {v} ns: {e:?}"))?;
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    #[test]
    fn buckets_give_back_the_same_percentiles() {
        let mut h = super::new();
        for v in (1..10_000u64).map(|i| i * i * 37) {
            h.record(v).unwrap();
        }
        let back = super::from_buckets(&super::buckets(&h)).unwrap();
        for q in [0.0, 0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q));
        }
        assert_eq!(
            (back.len(), back.max(), back.mean()),
            (h.len(), h.max(), h.mean())
        );
        assert!(super::from_buckets(&[(u64::MAX, 1)]).is_err());
    }
}
