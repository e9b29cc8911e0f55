//! The samples of a series arranged by run and bucket, the two-stage
//! bootstrap that resamples them (whole runs with replacement, then
//! samples within each run and bucket with replacement), and the summary
//! every judgement is made from — the same function for the data and for
//! each replica, so that a replica is judged exactly as the data is.

use super::buckets::{self, Bucket, Counted, Layout, Sample, median_of, quantile};
use super::flags::{self, Shadow};
use super::warmup;
use rand::rngs::Xoshiro256PlusPlus as Rng64;
use rand::{Rng, RngExt, SeedableRng};

/// A cost at one n.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Level {
    /// n (median n of the samples it summarises).
    pub n: f64,
    /// Median cost, ns.
    pub ns: f64,
}

/// One run's samples in one bucket, sorted by cost.
#[derive(Debug, Clone, Default)]
struct Cell {
    /// Costs, ascending.
    y: Vec<f64>,
    /// ln of each cost (NaN when not positive).
    ln: Vec<f64>,
    /// n of each.
    n: Vec<f64>,
}

/// The samples of some runs over a range of buckets in one order by cost,
/// and where each of them sits in it: a replica's draws are counted into
/// that order ([`Counted`]) instead of copied and sorted.
#[derive(Debug, Clone)]
struct Pooled {
    /// The first bucket pooled.
    first: usize,
    /// Every pooled cost, ascending.
    values: Vec<f64>,
    /// `pos[run][bucket - first][i]`: where the i-th sample (by cost) of
    /// the run's cell is in `values`; empty for a run not pooled.
    pos: Vec<Vec<Vec<u32>>>,
}

impl Pooled {
    /// Pools the cells of `runs` over `buckets`.
    fn new(cells: &[Vec<Cell>], runs: &[usize], buckets: std::ops::Range<usize>) -> Pooled {
        let mut all: Vec<(f64, usize, usize, usize)> = Vec::new();
        for &r in runs {
            for b in buckets.clone() {
                all.extend(cells[r][b].y.iter().enumerate().map(|(i, &y)| (y, r, b, i)));
            }
        }
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut pos: Vec<Vec<Vec<u32>>> = vec![Vec::new(); cells.len()];
        for &r in runs {
            pos[r] = buckets
                .clone()
                .map(|b| vec![0; cells[r][b].y.len()])
                .collect();
        }
        for (p, &(_, r, b, i)) in all.iter().enumerate() {
            pos[r][b - buckets.start][i] = u32::try_from(p).expect("fewer than 2^32 samples");
        }
        Pooled {
            first: buckets.start,
            values: all.iter().map(|x| x.0).collect(),
            pos,
        }
    }
}

/// Samples by run and bucket.
#[derive(Debug, Clone)]
pub struct Data {
    /// The buckets.
    pub layout: Layout,
    /// Run ids, ascending.
    pub runs: Vec<u32>,
    /// `cells[run][bucket]`.
    cells: Vec<Vec<Cell>>,
    /// Per bucket: smallest, largest and median n of the data (a replica
    /// keeps them: it resamples costs, not where they were measured).
    n_ranges: Vec<(f64, f64, f64)>,
    /// Median n of the low and of the high end.
    end_n: (f64, f64),
    /// Per bucket: every run's samples there.
    bucket_pools: Vec<Pooled>,
    /// The low end's and the high end's samples, every run's.
    end_pools: (Pooled, Pooled),
    /// Per run: its own low end's and high end's samples.
    run_end_pools: Vec<(Pooled, Pooled)>,
}

impl Data {
    /// Arranges `samples`.
    pub fn new(samples: &[Sample]) -> Data {
        let layout = Layout::new(samples);
        let mut runs: Vec<u32> = samples.iter().map(|s| s.run).collect();
        runs.sort_unstable();
        runs.dedup();
        let mut raw: Vec<Vec<Vec<(f64, f64)>>> = vec![vec![Vec::new(); layout.len()]; runs.len()];
        for s in samples {
            let r = runs.binary_search(&s.run).expect("run listed");
            raw[r][layout.index(s.n)].push((s.ns, s.n));
        }
        let cells: Vec<Vec<Cell>> = raw
            .into_iter()
            .map(|run| {
                run.into_iter()
                    .map(|mut c| {
                        c.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
                        Cell {
                            y: c.iter().map(|x| x.0).collect(),
                            ln: c
                                .iter()
                                .map(|x| if x.0 > 0.0 { x.0.ln() } else { f64::NAN })
                                .collect(),
                            n: c.iter().map(|x| x.1).collect(),
                        }
                    })
                    .collect()
            })
            .collect();
        let n_ranges = (0..layout.len())
            .map(|b| {
                let mut ns: Vec<f64> = cells.iter().flat_map(|r| r[b].n.iter().copied()).collect();
                if ns.is_empty() {
                    (f64::NAN, f64::NAN, f64::NAN)
                } else {
                    buckets::n_range(&mut ns)
                }
            })
            .collect();
        let end = |r: std::ops::Range<usize>| {
            let mut ns: Vec<f64> = cells
                .iter()
                .flat_map(|run| run[r.clone()].iter().flat_map(|c| c.n.iter().copied()))
                .collect();
            median_of(&mut ns)
        };
        let end_n = (end(0..layout.low_end), end(layout.high_end..layout.len()));
        let every: Vec<usize> = (0..runs.len()).collect();
        let (low, high) = (0..layout.low_end, layout.high_end..layout.len());
        Data {
            bucket_pools: (0..layout.len())
                .map(|b| Pooled::new(&cells, &every, b..b + 1))
                .collect(),
            end_pools: (
                Pooled::new(&cells, &every, low.clone()),
                Pooled::new(&cells, &every, high.clone()),
            ),
            run_end_pools: every
                .iter()
                .map(|&r| {
                    (
                        Pooled::new(&cells, &[r], low.clone()),
                        Pooled::new(&cells, &[r], high.clone()),
                    )
                })
                .collect(),
            layout,
            runs,
            cells,
            n_ranges,
            end_n,
        }
    }

    /// Every sample, each run once.
    pub fn full(&self) -> View {
        View {
            slots: (0..self.runs.len()).collect(),
            counts: None,
        }
    }

    /// A bootstrap replica: as many runs as there are, drawn with
    /// replacement, and in each the samples of every bucket drawn with
    /// replacement (as many as the run has there).
    pub fn replica(&self, rng: &mut Rng64) -> View {
        let k = self.runs.len();
        let mut slots = Vec::with_capacity(k);
        let mut counts = Vec::with_capacity(k);
        for _ in 0..k {
            let r = rng.random_range(0..k);
            slots.push(r);
            counts.push(
                self.cells[r]
                    .iter()
                    .map(|c| {
                        let len = c.y.len();
                        let mut w = vec![0u32; len];
                        for _ in 0..len {
                            // Multiply-shift: an index below len from 64
                            // random bits.
                            let i = ((u128::from(rng.next_u64()) * len as u128) >> 64) as usize;
                            w[i] += 1;
                        }
                        w
                    })
                    .collect(),
            );
        }
        View {
            slots,
            counts: Some(counts),
        }
    }

    /// The same replica as [`Data::replica`] for seed `seed` and index `i`.
    pub fn replica_at(&self, seed: u64, i: usize) -> View {
        let mut rng =
            Rng64::seed_from_u64(seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        self.replica(&mut rng)
    }

    /// The samples of `view` in bucket `b` of slot `s`: (cost, ln cost, n,
    /// how many times drawn), by cost.
    fn cell<'a>(
        &'a self,
        view: &'a View,
        s: usize,
        b: usize,
    ) -> impl Iterator<Item = (f64, f64, f64, u32)> + 'a {
        let c = &self.cells[view.slots[s]][b];
        let w = view.counts.as_ref().map(|w| &w[s][b]);
        (0..c.y.len())
            .map(move |i| (c.y[i], c.ln[i], c.n[i], w.map_or(1, |w| w[i])))
            .filter(|x| x.3 > 0)
    }

    /// Adds to `counts` (by position in `pool`) how many times `view`
    /// drew each sample of slot `s` in `buckets` (all pooled).
    fn count_into(
        &self,
        pool: &Pooled,
        view: &View,
        s: usize,
        buckets: std::ops::Range<usize>,
        counts: &mut [u32],
    ) {
        let run = &pool.pos[view.slots[s]];
        for b in buckets {
            let pos = &run[b - pool.first];
            match view.counts.as_ref().map(|w| &w[s][b]) {
                None => pos.iter().for_each(|&p| counts[p as usize] += 1),
                Some(w) => {
                    for (&p, &k) in pos.iter().zip(w) {
                        counts[p as usize] += k;
                    }
                }
            }
        }
    }

    /// The interquartile mean of the samples `view` drew from `pool`'s
    /// cells in `buckets`, over the slots `slots`.
    fn pooled_mean(
        &self,
        pool: &Pooled,
        view: &View,
        slots: std::ops::Range<usize>,
        buckets: std::ops::Range<usize>,
    ) -> f64 {
        let mut counts = vec![0u32; pool.values.len()];
        for s in slots {
            self.count_into(pool, view, s, buckets.clone(), &mut counts);
        }
        Counted {
            values: &pool.values,
            counts: &counts,
        }
        .interquartile_mean()
    }

    /// The median of `view`'s samples in bucket `b` of slot `s`.
    fn slot_median(&self, view: &View, s: usize, b: usize) -> f64 {
        let y = &self.cells[view.slots[s]][b].y;
        match view.counts.as_ref().map(|w| &w[s][b]) {
            None => quantile(y, 0.5),
            Some(w) => Counted {
                values: y,
                counts: w,
            }
            .quantiles([0.5])[0],
        }
    }

    /// Appends the costs of `view`'s samples in bucket `b` of slot `s`
    /// to `out`, each as many times as it was drawn, by cost (what the
    /// summaries were computed from before they counted).
    #[cfg(test)]
    fn push_costs(&self, view: &View, s: usize, b: usize, out: &mut Vec<f64>) {
        let c = &self.cells[view.slots[s]][b];
        match view.counts.as_ref().map(|w| &w[s][b]) {
            None => out.extend_from_slice(&c.y),
            Some(w) => {
                out.reserve(c.y.len());
                for (&y, &k) in c.y.iter().zip(w) {
                    out.extend(std::iter::repeat_n(y, k as usize));
                }
            }
        }
    }

    /// The first layout bucket of the low end once the first `warm_up`
    /// of `out_buckets` (a view's non-empty buckets) are left out.
    fn low_from(&self, out_buckets: &[Bucket], warm_up: usize) -> usize {
        let Some(last) = warm_up.checked_sub(1) else {
            return 0;
        };
        let skipped = out_buckets[last].n_hi;
        (0..self.layout.low_end)
            .find(|&b| self.n_ranges[b].0 > skipped)
            .unwrap_or(0)
    }

    /// Median n of the low end from layout bucket `from` on.
    fn end_n_from(&self, from: usize) -> f64 {
        let mut ns: Vec<f64> = self
            .cells
            .iter()
            .flat_map(|run| {
                run[from..self.layout.low_end]
                    .iter()
                    .flat_map(|c| c.n.iter().copied())
            })
            .collect();
        median_of(&mut ns)
    }

    /// Number of samples of `view` in bucket `b` of slot `s`.
    fn cell_len(&self, view: &View, s: usize, b: usize) -> usize {
        self.cells[view.slots[s]][b].y.len()
    }
}

/// One set of samples: the data, or a replica of it (which runs fill the
/// slots, and how often each sample was drawn).
#[derive(Debug, Clone)]
pub struct View {
    /// The run (index into [`Data::runs`]) of each slot; a replica may hold
    /// a run twice.
    slots: Vec<usize>,
    /// `counts[slot][bucket][i]`: times the i-th sample (by cost) of the
    /// slot's run in the bucket was drawn; `None` for the data itself.
    counts: Option<Vec<Vec<Vec<u32>>>>,
}

/// What a judgement is made from.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Non-empty buckets, by n.
    pub buckets: Vec<Bucket>,
    /// The low end: median n and interquartile mean of the cost of the
    /// lowest tenth of the samples.
    pub low: Level,
    /// The high end.
    pub high: Level,
    /// Per slot: (run id, its own low-end and high-end median cost; NaN
    /// where it has no samples there).
    pub slot_ends: Vec<(u32, f64, f64)>,
    /// A second, slower curve within runs: `None` when not looked for,
    /// `Some(None)` when there is none.
    pub shadow: Option<Option<Shadow>>,
    /// Median over buckets of (p90 − p10) / median.
    pub spread: f64,
    /// Leading buckets of a warm-up transient, left out of the low end
    /// and of the fits (see [`warmup::warm_up`]).
    pub warm_up: usize,
}

impl Summary {
    /// high / low cost.
    pub fn ratio(&self) -> f64 {
        self.high.ns / self.low.ns
    }
}

/// Summarises a view of `data` (the data itself or a replica); the
/// search for a second curve, the costliest part, only when `shadow`.
pub fn summarize(view: &View, data: &Data, shadow: bool) -> Summary {
    let per = per_bucket(view, data);
    // A transient at the start of the runs is not the low end's cost.
    let warm_up = warmup::warm_up(&per.buckets);
    let (low, high) = ends(view, data, &per.buckets, warm_up);
    let shadow = if shadow {
        Some(shadow_of(
            view,
            data,
            &per.buckets,
            &per.pooled_median,
            &per.slot_median,
        ))
    } else {
        None
    };
    Summary {
        slot_ends: slot_ends(view, data),
        spread: spread_of(&per.buckets),
        buckets: per.buckets,
        low,
        high,
        shadow,
        warm_up,
    }
}

/// The buckets of a view, and the medians the search for a second curve
/// starts from.
struct PerBucket {
    /// The non-empty buckets, by n.
    buckets: Vec<Bucket>,
    /// Per layout bucket: the median of every sample (NaN: empty).
    pooled_median: Vec<f64>,
    /// Per slot and layout bucket: the slot's own median where it has at
    /// least 5 samples (else NaN).
    slot_median: Vec<Vec<f64>>,
}

/// Summarises each bucket of the layout that `view` has samples in.
fn per_bucket(view: &View, data: &Data) -> PerBucket {
    let nb = data.layout.len();
    let slots = view.slots.len();
    let mut out_buckets = Vec::with_capacity(nb);
    let mut pooled_median = vec![f64::NAN; nb];
    let mut slot_median = vec![vec![f64::NAN; nb]; slots];
    let mut counts: Vec<u32> = Vec::new();
    for (b, pool) in data.bucket_pools.iter().enumerate() {
        counts.clear();
        counts.resize(pool.values.len(), 0);
        let mut meds = Vec::new();
        for (s, own) in slot_median.iter_mut().enumerate() {
            let len = data.cell_len(view, s, b);
            if len == 0 {
                continue;
            }
            data.count_into(pool, view, s, b..b + 1, &mut counts);
            if len >= 5 {
                let m = data.slot_median(view, s, b);
                meds.push(m);
                own[b] = m;
            }
        }
        let ys = Counted {
            values: &pool.values,
            counts: &counts,
        };
        if ys.total() == 0 {
            continue;
        }
        let bucket = buckets::summarize_counted(&ys, data.n_ranges[b], &meds);
        pooled_median[b] = bucket.median;
        out_buckets.push(bucket);
    }
    PerBucket {
        buckets: out_buckets,
        pooled_median,
        slot_median,
    }
}

/// The low and the high end of a view: median n and interquartile mean
/// of the cost, the low end after the first `warm_up` of `out_buckets`.
fn ends(view: &View, data: &Data, out_buckets: &[Bucket], warm_up: usize) -> (Level, Level) {
    let layout = &data.layout;
    let low_from = data.low_from(out_buckets, warm_up);
    let slots = 0..view.slots.len();
    let (low_pool, high_pool) = &data.end_pools;
    let low = Level {
        n: if low_from == 0 {
            data.end_n.0
        } else {
            data.end_n_from(low_from)
        },
        ns: data.pooled_mean(low_pool, view, slots.clone(), low_from..layout.low_end),
    };
    let high = Level {
        n: data.end_n.1,
        ns: data.pooled_mean(high_pool, view, slots, layout.high_end..layout.len()),
    };
    (low, high)
}

/// Per slot: its run id and its own low-end and high-end cost.
fn slot_ends(view: &View, data: &Data) -> Vec<(u32, f64, f64)> {
    let layout = &data.layout;
    (0..view.slots.len())
        .map(|s| {
            let (low, high) = &data.run_end_pools[view.slots[s]];
            (
                data.runs[view.slots[s]],
                data.pooled_mean(low, view, s..s + 1, 0..layout.low_end),
                data.pooled_mean(high, view, s..s + 1, layout.high_end..layout.len()),
            )
        })
        .collect()
}

/// Median over buckets of (p90 − p10) / median.
fn spread_of(buckets: &[Bucket]) -> f64 {
    let mut spreads: Vec<f64> = buckets
        .iter()
        .filter(|b| b.median > 0.0)
        .map(|b| (b.p90 - b.p10) / b.median)
        .collect();
    spreads.sort_by(f64::total_cmp);
    quantile(&spreads, 0.5)
}

/// Looks for a second curve in the residuals of every sample against its
/// own run's level in its bucket (the run's median there, times the
/// pooled medians' trend within the bucket, interpolated in log space), so
/// that runs at different levels are not a second curve and a steep curve
/// is not two.
fn shadow_of(
    view: &View,
    data: &Data,
    buckets: &[Bucket],
    pooled: &[f64],
    slot_median: &[Vec<f64>],
) -> Option<Shadow> {
    // (n, ln median) of the non-empty buckets, in layout order.
    let xs: Vec<(f64, f64)> = buckets.iter().map(|b| (b.n, b.median.ln())).collect();
    let slope = |i: usize, j: usize| -> f64 {
        let (a, b) = (xs[i], xs[j]);
        if b.0 != a.0 && a.1.is_finite() && b.1.is_finite() {
            (b.1 - a.1) / (b.0 - a.0)
        } else {
            0.0
        }
    };
    let mut groups = Vec::new();
    let mut k = 0; // index into xs of the current non-empty bucket
    for (b, &m) in pooled.iter().enumerate() {
        if m.is_nan() {
            continue;
        }
        let i = k;
        k += 1;
        if m.is_nan() || m <= 0.0 {
            continue;
        }
        let (nb, lm) = xs[i];
        let left = if i > 0 { slope(i - 1, i) } else { 0.0 };
        let right = if i + 1 < xs.len() {
            slope(i, i + 1)
        } else {
            0.0
        };
        let mut res: Vec<flags::Residual> = Vec::new();
        for (s, own) in slot_median.iter().enumerate() {
            let base = if own[b] > 0.0 { own[b].ln() } else { lm };
            for (y, ly, n, w) in data.cell(view, s, b) {
                if ly.is_finite() {
                    let t = if n < nb { left } else { right } * (n - nb);
                    res.push(flags::Residual {
                        r: ly - base - t,
                        y,
                        slot: s,
                        n,
                        w,
                    });
                }
            }
        }
        groups.push(res);
    }
    flags::find_shadow(groups)
}

/// One replica in this many looks for a second curve (the costliest part
/// of a summary; the label does not depend on it, only the `bimodal`
/// flag's share of the votes).
pub const SHADOW_EVERY: usize = 4;

/// Summaries of `replicas` bootstrap replicas of `data`, computed on up to
/// `threads` threads; replica `i` is the same whatever the thread count.
pub fn replicas(data: &Data, replicas: usize, seed: u64, threads: usize) -> Vec<Summary> {
    let threads = threads.clamp(1, 16).min(replicas.max(1));
    let mut out: Vec<Option<Summary>> = vec![None; replicas];
    std::thread::scope(|s| {
        let chunks: Vec<&mut [Option<Summary>]> =
            out.chunks_mut(replicas.div_ceil(threads).max(1)).collect();
        let mut start = 0;
        for chunk in chunks {
            let first = start;
            start += chunk.len();
            s.spawn(move || {
                for (j, slot) in chunk.iter_mut().enumerate() {
                    let view = data.replica_at(seed, first + j);
                    let i = first + j;
                    *slot = Some(summarize(&view, data, i % SHADOW_EVERY == 0));
                }
            });
        }
    });
    out.into_iter()
        .map(|s| s.expect("every replica computed"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(runs: u32, f: impl Fn(u32, f64) -> f64) -> Vec<Sample> {
        (0..runs)
            .flat_map(|r| (0..2000).map(move |i| (r, i as f64)))
            .map(|(run, n)| Sample {
                n,
                ns: f(run, n),
                run,
            })
            .collect()
    }

    #[test]
    fn the_full_view_summarises_the_data() {
        let s = series(5, |_, n| 1000.0 + n);
        let d = Data::new(&s);
        let sum = summarize(&d.full(), &d, true);
        assert_eq!(sum.buckets.iter().map(|b| b.count).sum::<usize>(), 10_000);
        assert!((sum.low.n - 99.5).abs() < 1.0, "{:?}", sum.low);
        assert!((sum.high.n - 1899.5).abs() < 1.0, "{:?}", sum.high);
        assert!((sum.ratio() - 2899.5 / 1099.5).abs() < 0.01);
        assert_eq!(sum.slot_ends.len(), 5);
        assert!(sum.shadow.flatten().is_none());
    }

    #[test]
    fn replicas_are_reproducible_and_keep_counts() {
        let s = series(5, |r, n| 1000.0 + n + 100.0 * r as f64);
        let d = Data::new(&s);
        let a = replicas(&d, 8, 7, 1);
        let b = replicas(&d, 8, 7, 2);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.buckets, y.buckets);
            assert_eq!(x.buckets.iter().map(|b| b.count).sum::<usize>(), 10_000);
        }
        // Whole runs are resampled: the replicas' levels differ.
        assert!(a.windows(2).any(|w| w[0].low.ns != w[1].low.ns));
    }

    /// The summary of `view` from copies of its draws, as it was computed
    /// before draws were counted: its buckets, ends and slots' ends.
    fn by_copies(view: &View, d: &Data, warm_up: usize) -> (Vec<Bucket>, f64, f64, Vec<f64>) {
        let slots = 0..view.slots.len();
        let copies = |slots: std::ops::Range<usize>, bs: std::ops::Range<usize>| {
            let mut v = Vec::new();
            for s in slots {
                for b in bs.clone() {
                    d.push_costs(view, s, b, &mut v);
                }
            }
            v
        };
        let mut buckets = Vec::new();
        for b in 0..d.layout.len() {
            let mut ys = copies(slots.clone(), b..b + 1);
            let meds: Vec<f64> = slots
                .clone()
                .filter(|&s| d.cell_len(view, s, b) >= 5)
                .map(|s| quantile(&copies(s..s + 1, b..b + 1), 0.5))
                .collect();
            if !ys.is_empty() {
                buckets.push(buckets::summarize(&mut ys, d.n_ranges[b], &meds));
            }
        }
        let low_from = d.low_from(&buckets, warm_up);
        let iqm = |mut v: Vec<f64>| buckets::interquartile_mean(&mut v);
        let (low, high) = (0..d.layout.low_end, d.layout.high_end..d.layout.len());
        let own = slots
            .clone()
            .flat_map(|s| {
                [
                    iqm(copies(s..s + 1, low.clone())),
                    iqm(copies(s..s + 1, high.clone())),
                ]
            })
            .collect();
        (
            buckets,
            iqm(copies(slots.clone(), low_from..d.layout.low_end)),
            iqm(copies(slots, high)),
            own,
        )
    }

    #[test]
    fn counted_replicas_summarise_as_their_copies_do() {
        // Five runs at different levels, costs on a coarse grid (ties),
        // a warm-up at the start of each run.
        let s = series(5, |r, n| {
            let warm = if n < 40.0 { 3.0 } else { 1.0 };
            (((1000.0 + n + 37.0 * f64::from(r)) * warm / 7.0).round() * 7.0)
                + if (n as u32 + r).is_multiple_of(11) {
                    900.0
                } else {
                    0.0
                }
        });
        let d = Data::new(&s);
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        let mut warm = 0;
        for i in 0..12 {
            let view = if i == 0 {
                d.full()
            } else {
                d.replica_at(99, i)
            };
            let sum = summarize(&view, &d, false);
            warm += usize::from(sum.warm_up > 0);
            let (buckets, low, high, own) = by_copies(&view, &d, sum.warm_up);
            assert_eq!(sum.buckets.len(), buckets.len());
            for (a, b) in sum.buckets.iter().zip(&buckets) {
                assert_eq!(
                    (a.count, a.p10, a.p25, a.median),
                    (b.count, b.p10, b.p25, b.median)
                );
                assert_eq!((a.p75, a.p90, a.n), (b.p75, b.p90, b.n));
                assert!(close(a.se, b.se), "{a:?} against {b:?}");
            }
            assert!(
                close(sum.low.ns, low) && close(sum.high.ns, high),
                "replica {i}"
            );
            for (k, &(_, l, h)) in sum.slot_ends.iter().enumerate() {
                assert!(
                    close(l, own[2 * k]) && close(h, own[2 * k + 1]),
                    "replica {i} slot {k}"
                );
            }
        }
        // The low end after a warm-up was compared too.
        assert!(warm > 0);
    }

    #[test]
    fn runs_at_different_levels_are_not_a_second_curve() {
        // Two runs 60 % slower than the other three, each one tight curve.
        let s = series(5, |r, n| (1000.0 + n) * if r >= 3 { 1.6 } else { 1.0 });
        let d = Data::new(&s);
        assert!(summarize(&d.full(), &d, true).shadow.flatten().is_none());
    }

    #[test]
    fn a_steep_noise_free_line_is_not_a_second_curve() {
        let s: Vec<Sample> = (0..3000)
            .map(|i| Sample {
                n: i as f64,
                ns: 1000.0 * (i + 1) as f64,
                run: 0,
            })
            .collect();
        let d = Data::new(&s);
        assert!(summarize(&d.full(), &d, true).shadow.flatten().is_none());
    }
}
