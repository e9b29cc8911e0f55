//! A warm-up at the start of the runs: leading buckets whose cost is
//! above the curve of the rest, left out of the fits and of the low end
//! (docs/analysis.md names the thresholds).

use super::buckets::Bucket;
use super::models;

/// Share of the samples the leading buckets of a warm-up may hold at most.
const WARM_UP_SHARE: f64 = 0.05;

/// A transient at the start of the runs: the leading buckets (together at
/// most 5 % of the samples) above the best smooth fit of the buckets after
/// them — the first, the highest, by more than 10 % and four standard
/// errors, the others each by half a standard error and on average by one
/// and a half — and the bucket after them not (by 3 % and two). Returns how many to leave
/// out of the fits (0: none).
pub fn warm_up(b: &[Bucket]) -> usize {
    let total: usize = b.iter().map(|x| x.count).sum();
    let mut best = 0;
    let mut held = 0;
    for j in 1..b.len() {
        held += b[j - 1].count;
        if held as f64 > WARM_UP_SHARE * total as f64 || b.len() - j < 8 {
            break;
        }
        let fit = models::best_smooth_fit(&models::points(&b[j..]));
        // Above the rest's curve by `share` and `z` standard errors.
        let above = |x: &Bucket, share: f64, z: f64| {
            let m = fit.at(x.n);
            m > 0.0 && x.median > (1.0 + share) * m && x.median - m > z * x.se
        };
        let first_highest = b[1..j].iter().all(|x| x.median <= b[0].median);
        // The others above the curve, together clearly: each by half a
        // standard error, on average by one and a half.
        let z: Vec<f64> = b[1..j]
            .iter()
            .map(|x| (x.median - fit.at(x.n)) / x.se)
            .collect();
        let tail = z.iter().all(|&z| z > 0.5)
            && (z.is_empty() || z.iter().sum::<f64>() / z.len() as f64 > 1.5);
        if above(&b[0], 0.10, 4.0) && tail && first_highest && !above(&b[j], 0.03, 2.0) {
            best = j;
        }
    }
    best
}
