//! Never confidently wrong: a labelled generator of its own, at heavy
//! noise only (log-normal σ = 0.3 and 1 % of samples 2–32× slower), each
//! growth class rising by 15 %, 30 %, ×2 and ×5 over the range (and by
//! 15 % between the first bucket and the last), at two
//! sizes (3 runs of n = 0..1 000, and 5 runs of 4 000 values of n up to
//! 20 000), with seeds of its own. Where the data cannot separate two
//! classes a verdict must name the range that holds the truth, or say
//! undecided — never one wrong class:
//!
//! - a growth label (a class or a range) must hold the class drawn;
//! - a flat curve is never given a growth label;
//! - `O(1)` only where the drawn rise between the verdict's own ends is
//!   below τ (what `O(1)` means), and the rise it states as its bound
//!   ("at most +U %", or the upper end of a range from O(1)'s interval)
//!   is above the drawn one in at least 90 % of such verdicts (the bound
//!   is a one-sided 95 % bound);
//! - a cost drawn rising 13 % to τ between the ends a verdict states is
//!   never a plain `O(1)` whose bound holds the drawn rise: it is flat by
//!   τ, yet surely or perhaps rising, and the verdict says the range
//!   from O(1) to its shape (`O(1)–O(log n)`) or undecided; a plain
//!   `O(1)` there only where its one-sided 95 % bound misses the drawn
//!   rise (counted with the misses above), and in at most one verdict
//!   in 10.
//!
//! `cargo test --release --test integration heavy:: -- --nocapture`
//! prints the table.

use crate::common;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use scalebench::analysis::{Class, Label, Options, Sample, Verdict, analyze};
use std::collections::BTreeMap;

/// One labelled configuration.
#[derive(Clone, Copy, Debug)]
struct Drawn {
    /// The class drawn.
    class: Class,
    /// How much it rises from n = `from` to `n_max` (relative).
    rise: f64,
    /// Where the rise is counted from: 0, or near the first bucket's n
    /// (a twentieth of `n_max`), so that it is the rise between the ends
    /// a verdict states.
    from: f64,
    /// Runs, and values of n per run (evenly from 0 to `n_max`).
    runs: u32,
    points: usize,
    n_max: f64,
}

impl Drawn {
    /// The drawn cost at n, relative to n = 0.
    fn truth(&self, n: f64) -> f64 {
        match self.class {
            Class::Constant => 1.0,
            c => {
                let g0 = c.g(self.from);
                1.0 + self.rise * (c.g(n) - g0) / (c.g(self.n_max) - g0)
            }
        }
    }

    /// The samples of one seed.
    fn samples(&self, seed: u64) -> Vec<Sample> {
        let mut rng = StdRng::seed_from_u64(seed);
        let noise = LogNormal::new(0.0, 0.3).unwrap();
        let a = 50_000.0 * (1.0 + rng.random::<f64>());
        let mut out = Vec::with_capacity(self.runs as usize * self.points);
        for run in 0..self.runs {
            for i in 0..self.points {
                let n = i as f64 * self.n_max / self.points as f64;
                let mut ns = a * self.truth(n) * noise.sample(&mut rng);
                if rng.random::<f64>() < 0.01 {
                    ns *= 2.0 + 30.0 * rng.random::<f64>();
                }
                out.push(Sample { n, ns, run });
            }
        }
        out
    }

    /// The drawn rise between the ends verdict `v` states.
    fn rise_between(&self, v: &Verdict) -> f64 {
        self.truth(v.high.n) / self.truth(v.low.n) - 1.0
    }

    fn name(&self) -> String {
        format!(
            "{} rising {:.0} %{} at {} samples",
            self.class,
            self.rise * 100.0,
            if self.from > 0.0 {
                " over its ends"
            } else {
                ""
            },
            self.runs as usize * self.points
        )
    }
}

/// Every configuration.
fn drawn() -> Vec<Drawn> {
    let mut out = Vec::new();
    for (runs, points, n_max) in [(3, 1000, 1000.0), (5, 4000, 20_000.0)] {
        for class in Class::ALL {
            // From n = 0, and 15 % between the ends a verdict states.
            let rises: &[(f64, f64)] = match class {
                Class::Constant => &[(0.0, 0.0)],
                _ => &[
                    (0.15, 0.0),
                    (0.3, 0.0),
                    (1.0, 0.0),
                    (4.0, 0.0),
                    (0.15, 0.05),
                ],
            };
            for &(rise, from) in rises {
                out.push(Drawn {
                    class,
                    rise,
                    from: from * n_max,
                    runs,
                    points,
                    n_max,
                });
            }
        }
    }
    out
}

/// What is wrong with verdict `v` of data drawn as `d`, beyond a bound
/// (`Err`), and whether it is an `O(1)` over a rise that its bound misses
/// (`Ok(true)`).
fn judge_verdict(d: &Drawn, v: &Verdict, tau: f64) -> Result<bool, String> {
    let drawn_rise = d.rise_between(v);
    let wrong = |what: &str| {
        Err(format!(
            "{what} (drawn rise {:+.1} %): {} [votes {}]",
            drawn_rise * 100.0,
            v.words(),
            common::votes_words(v)
        ))
    };
    match v.class {
        Label::Class(Class::Constant) if drawn_rise >= tau => {
            wrong("O(1) over a rise of τ or more")
        }
        Label::Class(Class::Constant) => Ok(drawn_rise > v.rise.hi + 1e-9),
        // Flat within τ yet rising: its upper bound is held to the truth
        // as O(1)'s is.
        l @ Label::Between(Class::Constant, _)
            if d.class != Class::Constant && l.names(d.class) =>
        {
            Ok(drawn_rise > v.rise.hi + 1e-9)
        }
        Label::Undecided => Ok(false),
        _ if d.class == Class::Constant => wrong("a growth label on a flat curve"),
        Label::NoFit => Ok(false),
        Label::Superlinear if matches!(d.class, Class::NLogN | Class::Quadratic) => Ok(false),
        l if l.names(d.class) => Ok(false),
        _ => wrong(&format!("{} not held", d.class)),
    }
}

const SEEDS: u64 = 8;

#[test]
fn heavy_noise_is_never_confidently_wrong() {
    let all = drawn();
    let opts = Options::default();
    let one_thread = Options { threads: 1, ..opts };
    let results: Vec<(usize, u64, Verdict)> = common::on_all_cores(all.len(), SEEDS, |c, s| {
        let samples = all[c].samples(0x8ea7 + 7919 * c as u64 + s);
        analyze(&samples, None, &one_thread).expect("judged")
    });
    let mut wrong = Vec::new();
    let (mut flat_growing, mut bound_missed) = (0, 0);
    // Verdicts over a drawn rise of 13 % to τ between their ends (flat by
    // τ), and how many of them say a plain O(1).
    let mut near_tau = (0, 0);
    let mut plain = Vec::new();
    // Those whose own bound holds the drawn rise: the data did not hide
    // it, the verdict did.
    let mut plain_held = Vec::new();
    let mut table: BTreeMap<usize, BTreeMap<String, usize>> = BTreeMap::new();
    for (c, s, v) in &results {
        let d = &all[*c];
        *table
            .entry(*c)
            .or_default()
            .entry(v.class.label().to_string())
            .or_default() += 1;
        if v.class.names(Class::Constant) && d.class != Class::Constant {
            flat_growing += 1;
        }
        let drawn_rise = d.rise_between(v);
        if (0.65 * opts.tolerance..opts.tolerance).contains(&drawn_rise) {
            near_tau.0 += 1;
            if v.class == Label::Class(Class::Constant) {
                near_tau.1 += 1;
                plain.push(format!("{} seed {s}: {}", d.name(), v.words()));
                if drawn_rise <= v.rise.hi + 1e-9 {
                    plain_held.push(format!("{} seed {s}: {}", d.name(), v.words()));
                }
            }
        }
        match judge_verdict(d, v, opts.tolerance) {
            Err(e) => wrong.push(format!("{} seed {s}: {e}", d.name())),
            Ok(true) => bound_missed += 1,
            Ok(false) => {}
        }
    }
    for p in &plain {
        println!("plain O(1) near τ: {p}");
    }
    for (c, count) in &table {
        println!("{:<40} {count:?}", all[*c].name());
    }
    println!(
        "{} verdicts; O(1) or a range from it over a growing curve {flat_growing} times, its upper bound below the drawn rise {bound_missed} times; a plain O(1) over a rise of 13 % to τ {} of {}",
        results.len(),
        near_tau.1,
        near_tau.0
    );
    assert!(
        wrong.is_empty(),
        "{} verdicts confidently wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(
        bound_missed * 10 <= flat_growing.max(1),
        "the upper bound of O(1) (or a range from it) below the drawn rise in {bound_missed} of {flat_growing} verdicts over a growing curve (more than 10 %)"
    );
    // A cost rising 15 % between the ends is flat by τ but surely or
    // perhaps rising: the verdict names the range from O(1) to its shape,
    // or says undecided; a plain O(1) only where its bound misses the
    // drawn rise (2 of 120 with these seeds, 4 of 120 before "perhaps
    // rising"), never where it holds it.
    assert!(
        plain_held.is_empty(),
        "a plain O(1) whose bound holds a drawn rise of 13 % to τ:\n{}",
        plain_held.join("\n")
    );
    assert!(
        near_tau.0 > 0 && near_tau.1 * 10 <= near_tau.0,
        "a plain O(1) over a drawn rise of 13 % to τ in {} of {} verdicts:\n{}",
        near_tau.1,
        near_tau.0,
        plain.join("\n")
    );
    // The generator is what the test claims: ranges are drawn on, and
    // heavy noise leaves some growth undecided or flat.
    let ranges = results
        .iter()
        .filter(|(_, _, v)| matches!(v.class, Label::Between(..)))
        .count();
    assert!(
        ranges > 0 && flat_growing > 0,
        "{ranges} ranges, {flat_growing} flat over growth"
    );
}
