//! The classifier against a labelled set of generated series (seeded, so
//! every run of this test sees the same data): the five classes with light
//! and heavy noise at two sizes, practically flat curves, steps with and
//! without growth before them, a second curve, a falling cost, runs that
//! differ, warm-up transients, and noise-free curves. The bars are the
//! issue's: pure classes right in at least 95 % of cases, flat curves never
//! a growth class, no verdict that contradicts itself, every planted flag
//! found, no flag on noise-free data, and the same configuration drawn with
//! 8 seeds given the same verdict at least 7 times.
//!
//! `cargo test --release --test classifier -- --nocapture` prints the whole
//! table.

use crate::common;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use scalebench::analysis::{Class, Flag, Label, Model, Options, Sample, Verdict, analyze};
use std::collections::BTreeMap;

/// How much noise.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Noise {
    /// None at all.
    Free,
    /// Log-normal σ = 0.05.
    Light,
    /// Log-normal σ = 0.3 and 1 % of samples 2–32× slower.
    Heavy,
}

/// How many samples: `runs` runs of `points` values of n from 0 to
/// `n_max`.
#[derive(Debug, Clone, Copy)]
struct Size {
    runs: u32,
    points: usize,
    n_max: f64,
}

/// 3 000 samples, n up to 1 000.
const SMALL: Size = Size {
    runs: 3,
    points: 1000,
    n_max: 1000.0,
};
/// 50 000 samples, n up to 20 000.
const LARGE: Size = Size {
    runs: 5,
    points: 10_000,
    n_max: 20_000.0,
};

/// The shape of a generated series.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// `a·(1 + rise·g(n)/g(n_max))`.
    Pure(Class),
    /// Flat, but 10 % dearer by the end of each run than at its start.
    Drift,
    /// Flat with a +8 % step (a cache knee) at 60 % of n.
    Knee,
    /// 50 µs + a linear term worth +5 % at n_max.
    TinyLinear,
    /// A plateau that jumps ×`jump` at 60 % of n; `before` rise up to it.
    Step { jump: f64, before: f64 },
    /// 20 % of samples 2.5× slower; the main curve of this class.
    Bimodal(Class),
    /// Falls from 2a at n = 0 to a at n_max.
    Falling,
    /// Two of five runs (one of three) rising ×3 (linearly), the others flat.
    RunsDiffer,
    /// The first 3 % of every run up to 3× slower, decaying; then this
    /// class.
    Warmup(Class),
}

struct Case {
    shape: Shape,
    noise: Noise,
    size: Size,
}

impl Case {
    fn samples(&self, seed: u64) -> Vec<Sample> {
        let mut rng = StdRng::seed_from_u64(seed);
        let sigma: f64 = match self.noise {
            Noise::Free => 0.0,
            Noise::Light => 0.05,
            Noise::Heavy => 0.3,
        };
        let noise = LogNormal::new(0.0, sigma.max(1e-12)).unwrap();
        let a = 50_000.0 * (1.0 + rng.random::<f64>());
        let rise = 1.0 + 4.0 * rng.random::<f64>();
        let Size {
            runs,
            points,
            n_max,
        } = self.size;
        let mut out = Vec::with_capacity(runs as usize * points);
        for run in 0..runs {
            for i in 0..points {
                let n = i as f64 * n_max / points as f64;
                let t = i as f64 / points as f64;
                let pure = |c: Class| {
                    if c == Class::Constant {
                        a
                    } else {
                        a * (1.0 + rise * c.g(n) / c.g(n_max))
                    }
                };
                let mut y = match self.shape {
                    Shape::Pure(c) | Shape::Bimodal(c) => pure(c),
                    Shape::Drift => a * (1.0 + 0.10 * t),
                    Shape::Knee => a * if n < 0.6 * n_max { 1.0 } else { 1.08 },
                    Shape::TinyLinear => 50_000.0 + 2500.0 * n / n_max,
                    Shape::Step { jump, before } => {
                        let at = 0.6 * n_max;
                        if n < at {
                            a * (1.0 + before * n / at)
                        } else {
                            a * (1.0 + before) * jump
                        }
                    }
                    Shape::Falling => a * (2.0 - n / n_max),
                    Shape::RunsDiffer => {
                        // The last two of five runs (one of three) rise.
                        let differ = (runs as f64 * 0.4).round().max(1.0) as u32;
                        a * if run >= runs - differ {
                            1.0 + 2.0 * n / n_max
                        } else {
                            1.0
                        }
                    }
                    Shape::Warmup(c) => {
                        let w = 0.03 * points as f64;
                        pure(c) * (1.0 + 2.0 * (-(i as f64) / (w / 3.0)).exp())
                    }
                };
                if let Shape::Bimodal(_) = self.shape
                    && rng.random::<f64>() < 0.2
                {
                    y *= 2.5;
                }
                if self.noise != Noise::Free {
                    y *= noise.sample(&mut rng);
                }
                if self.noise == Noise::Heavy && rng.random::<f64>() < 0.01 {
                    y *= 2.0 + 30.0 * rng.random::<f64>();
                }
                out.push(Sample { n, ns: y, run });
            }
        }
        out
    }

    fn name(&self) -> String {
        format!(
            "{:?} {:?} {}",
            self.shape,
            self.noise,
            self.size.runs as usize * self.size.points
        )
    }
}

/// Ways a verdict contradicts itself.
fn contradictions(v: &Verdict) -> Vec<String> {
    let mut out = Vec::new();
    let rise = v.ratio() - 1.0;
    let segmented = matches!(v.model, Model::Segmented(_));
    if v.class.grows() && rise.abs() < 0.05 {
        out.push(format!("{} over ends within 5 % ({rise:+.3})", v.class));
    }
    // A range from O(1): flat by τ, and surely rising (its lower bound
    // half of τ, or above 5 % with its upper bound within a third of τ of
    // τ) or perhaps rising (that upper bound, and a measured rise above
    // 5 %).
    let from_flat = matches!(v.class, Label::Between(Class::Constant, _));
    let close = v.rise.hi >= v.tolerance * 2.0 / 3.0;
    let surely = v.rise.lo >= v.tolerance / 2.0 || (close && v.rise.lo > 0.05);
    let perhaps = close && v.rise.value > 0.05;
    if from_flat && !(v.rise.hi < v.tolerance && (surely || perhaps)) {
        out.push(format!(
            "{} with a rise {:?} neither surely nor perhaps rising within τ",
            v.class, v.rise
        ));
    }
    if v.class.grows() && !from_flat && !segmented && v.rise.lo <= v.tolerance {
        out.push(format!(
            "{} with a rise whose lower bound {:.3} is within τ",
            v.class, v.rise.lo
        ));
    }
    if v.class == Label::Class(Class::Constant) && !segmented {
        if rise > v.rise.hi + 1e-9 {
            out.push(format!(
                "O(1) beside ×{:.2}, outside its bound +{:.3}",
                v.ratio(),
                v.rise.hi
            ));
        }
        if v.rise.hi >= v.tolerance {
            out.push(format!("O(1) with an upper bound {:.3} ≥ τ", v.rise.hi));
        }
    }
    if !(v.rise.lo <= rise + 1e-9 && rise <= v.rise.hi + 1e-9) {
        out.push(format!(
            "rise {rise:.3} outside its own interval {:?}",
            v.rise
        ));
    }
    let w = v.words();
    if !segmented && !w.starts_with(v.class.label()) {
        out.push(format!("words do not start with the label: {w}"));
    }
    if v.class == Label::Class(Class::Constant)
        && (w.contains("grows") || w.contains("superlinear"))
    {
        out.push(format!("O(1) in words that say it grows: {w}"));
    }
    if let Some(c) = v.confidence
        && !(0.0..=1.0).contains(&c)
    {
        out.push(format!("confidence {c}"));
    }
    out
}

fn has(v: &Verdict, flag: &str) -> bool {
    v.flags.iter().any(|f| f.name() == flag)
}

/// What a case must give: `Err` says why it failed.
fn check(case: &Case, v: &Verdict) -> Result<(), String> {
    let label = v.class;
    let flags = v.flag_names();
    let want = |ok: bool, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(format!(
                "{what}: got {label} [{flags}] (votes {}) — {}",
                common::votes_words(v),
                v.words()
            ))
        }
    };
    match case.shape {
        Shape::Pure(c) if case.noise == Noise::Free => want(
            label == Label::Class(c) && v.flags.is_empty(),
            &format!("noise-free {c}, no flags"),
        ),
        // Under noise, a range of growth classes that holds the
        // right one is right, if less precise (counted apart).
        Shape::Pure(c) => want(label.names(c), &format!("{c}")),
        Shape::Drift | Shape::Knee | Shape::TinyLinear => {
            // A range from O(1) holds flat: "flat within τ, yet rising".
            want(
                !label.grows() || label.names(Class::Constant),
                "practically flat: no growth class without O(1)",
            )
        }
        Shape::Step { before, .. } => {
            let class = if before > 0.0 {
                Class::Linear
            } else {
                Class::Constant
            };
            want(
                has(v, "step") && label == Label::Class(class),
                &format!("a step, {class} before it"),
            )
        }
        // Flat under a second curve: O(1), or the range from it where
        // heavy noise leaves a rise near τ possible.
        Shape::Bimodal(c) => want(
            has(v, "bimodal")
                && if c == Class::Constant {
                    !label.grows() || label.names(Class::Constant)
                } else {
                    label.names(c)
                },
            &format!("bimodal over {c}"),
        ),
        Shape::Falling => want(has(v, "falls") && !label.grows(), "falls, no growth class"),
        Shape::RunsDiffer => want(has(v, "runs-disagree"), "runs-disagree"),
        Shape::Warmup(c) => want(
            label.names(c) && !has(v, "step") && !has(v, "falls") && !has(v, "bimodal"),
            &format!("{c} despite a warm-up, no step, falls or bimodal"),
        ),
    }
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for size in [SMALL, LARGE] {
        for noise in [Noise::Light, Noise::Heavy] {
            for c in Class::ALL {
                out.push(Case {
                    shape: Shape::Pure(c),
                    noise,
                    size,
                });
            }
            for shape in [
                Shape::Drift,
                Shape::Knee,
                Shape::TinyLinear,
                Shape::Step {
                    jump: 2.0,
                    before: 0.0,
                },
                Shape::Step {
                    jump: 3.0,
                    before: 0.6,
                },
                Shape::Bimodal(Class::Constant),
                Shape::Bimodal(Class::Linear),
                Shape::Falling,
                Shape::RunsDiffer,
                Shape::Warmup(Class::Constant),
                Shape::Warmup(Class::Linear),
            ] {
                out.push(Case { shape, noise, size });
            }
        }
    }
    for c in Class::ALL {
        out.push(Case {
            shape: Shape::Pure(c),
            noise: Noise::Free,
            size: Size {
                runs: 1,
                points: 1000,
                n_max: 1000.0,
            },
        });
    }
    out
}

const SEEDS: u64 = 8;

#[test]
fn the_labelled_set() {
    let opts = Options::default();
    let all = cases();
    // (case, seed) → verdict, judged on all cores.
    let one_thread = Options { threads: 1, ..opts };
    let results: Vec<(usize, u64, Verdict)> = common::on_all_cores(all.len(), SEEDS, |c, s| {
        let seed = 1000 * c as u64 + s;
        analyze(&all[c].samples(seed), None, &one_thread).expect("judged")
    });

    let mut failures = Vec::new();
    let mut pure = (0, 0);
    // Pure classes named exactly (not as one side of a split).
    let mut exact = 0;
    let mut unstable = Vec::new();
    let mut by_case: BTreeMap<usize, Vec<&Verdict>> = BTreeMap::new();
    for (c, s, v) in &results {
        let case = &all[*c];
        by_case.entry(*c).or_default().push(v);
        for x in contradictions(v) {
            failures.push(format!("{} seed {s}: contradiction: {x}", case.name()));
        }
        let ok = check(case, v);
        if let Shape::Pure(c) = case.shape {
            pure.1 += 1;
            if ok.is_ok() {
                pure.0 += 1;
            }
            if v.class == Label::Class(c) {
                exact += 1;
            }
        }
        if let Err(e) = ok {
            let tolerated = matches!(case.shape, Shape::Pure(_)) && case.noise != Noise::Free;
            let line = format!("{} seed {s}: {e}", case.name());
            if tolerated {
                println!("miss (counted in the 95 %): {line}");
            } else {
                failures.push(line);
            }
        }
    }
    for (c, vs) in &by_case {
        let mut count: BTreeMap<String, usize> = BTreeMap::new();
        for v in vs {
            *count.entry(v.class.label().to_string()).or_default() += 1;
        }
        let top = count.values().max().copied().unwrap_or(0);
        println!("{:<60} {count:?}", all[*c].name());
        // Labels that all name one class (O(n) and O(n)–O(n log n)) say
        // the same thing, one of them less precisely.
        let shared = Class::ALL
            .iter()
            .any(|&k| vs.iter().all(|v| v.class.names(k)));
        if top + 1 < vs.len() && !shared {
            unstable.push(format!("{}: {count:?}", all[*c].name()));
        }
    }
    println!(
        "pure classes right: {}/{} ({exact} named exactly, the rest within a range)",
        pure.0, pure.1
    );
    for f in &failures {
        println!("FAIL {f}");
    }
    assert!(
        pure.0 as f64 >= 0.95 * pure.1 as f64,
        "pure classes right in {}/{} cases (< 95 %)",
        pure.0,
        pure.1
    );
    assert!(
        exact as f64 >= 0.85 * pure.1 as f64,
        "pure classes named exactly in {exact}/{} cases (< 85 %): too many splits",
        pure.1
    );
    assert!(
        unstable.is_empty(),
        "verdicts that change with the seed:\n{}",
        unstable.join("\n")
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn a_noise_free_line_one_sample_per_n_is_not_bimodal() {
    // The example: rows 0,1000 / 1,2000 / …
    let s: Vec<Sample> = (0..1000)
        .map(|i| Sample {
            n: i as f64,
            ns: 1000.0 * (i + 1) as f64,
            run: 0,
        })
        .collect();
    let v = analyze(&s, None, &Options::default()).unwrap();
    assert_eq!(v.class, Label::Class(Class::Linear), "{}", v.words());
    assert!(v.flags.is_empty(), "{:?}", v.flags);
    assert_eq!(v.confidence, None, "one run: stability unknown");
}

#[test]
fn a_step_is_described_per_segment_with_the_growth_before_it() {
    // bind beyond the even half of the port range: +60 % up to n = 13 500,
    // then ×600.
    let mut rng = StdRng::seed_from_u64(5);
    let noise = LogNormal::new(0.0, 0.05).unwrap();
    let s: Vec<Sample> = (0..5u32)
        .flat_map(|run| (0..15_000).map(move |n| (run, n as f64)))
        .map(|(run, n)| {
            let y = if n < 13_500.0 {
                2000.0 * (1.0 + 0.6 * n / 13_500.0)
            } else {
                2000.0 * 1.6 * 600.0
            };
            Sample {
                n,
                ns: y * noise.sample(&mut rng),
                run,
            }
        })
        .collect();
    let v = analyze(&s, None, &Options::default()).unwrap();
    assert_eq!(v.class, Label::Class(Class::Linear), "{}", v.words());
    let w = v.words();
    assert!(w.starts_with("O(n), +"), "{w}");
    assert!(w.contains("up to n ≈ 13"), "{w}");
    assert!(w.contains("in one step"), "{w}");
    let step = v.flags.iter().find_map(|f| match f {
        Flag::Step {
            at_n,
            from_ns,
            to_ns,
        } => Some((*at_n, to_ns / from_ns)),
        _ => None,
    });
    let (at, jump) = step.expect("a step flag");
    assert!((at - 13_500.0).abs() < 700.0, "{at}");
    assert!((jump / 600.0 - 1.0).abs() < 0.15, "{jump}");
}

#[test]
fn few_runs_have_unknown_stability_and_votes_add_up() {
    let s = Case {
        shape: Shape::Pure(Class::Linear),
        noise: Noise::Light,
        size: Size {
            runs: 2,
            points: 1000,
            n_max: 1000.0,
        },
    }
    .samples(3);
    let v = analyze(&s, None, &Options::default()).unwrap();
    assert_eq!(v.confidence, None);
    let s = Case {
        shape: Shape::Pure(Class::Linear),
        noise: Noise::Light,
        size: SMALL,
    }
    .samples(3);
    let v = analyze(&s, None, &Options::default()).unwrap();
    let c = v.confidence.expect("3 runs: a confidence");
    let total: f64 = v.votes.iter().map(|x| x.share).sum();
    assert!((total - 1.0).abs() < 1e-9, "{:?}", v.votes);
    let own = v.votes.iter().find(|x| x.what == v.class.label()).unwrap();
    assert_eq!(own.share, c);
}

/// select() on this VM: a cost per descriptor that rises about ×4 once the
/// set outgrows a cache, over n = 1..1 000 (as `connect[select]` measured
/// it). A line bent once, not n²: O(n) with the slope change, or — where
/// the bent line does not beat n² clearly — the range O(n)–O(n^2) that
/// holds it, described by the bent line; never n² alone. A pure n² with
/// the same rise is never O(n) alone.
#[test]
fn a_per_item_cost_rising_once_is_linear_not_quadratic() {
    let mut rng = StdRng::seed_from_u64(11);
    let noise = LogNormal::new(0.0, 0.15).unwrap();
    let draw = |rng: &mut StdRng, f: &dyn Fn(f64) -> f64| -> Vec<Sample> {
        (0..5u32)
            .flat_map(|run| {
                let level = 1.0 + 0.04 * (run as f64 - 2.0);
                (0..100)
                    .flat_map(move |l| (0..10).map(move |_| (run, level, 1.0 + l as f64 * 10.0)))
            })
            .map(|(run, level, n)| Sample {
                n,
                ns: level * f(n) * noise.sample(rng),
                run,
            })
            .collect()
    };
    let bent = |n: f64| 150_000.0 + 80.0 * n.min(400.0) + 350.0 * (n - 400.0).max(0.0);
    for seed in 0..4 {
        let mut rng = StdRng::seed_from_u64(seed);
        let v = analyze(&draw(&mut rng, &bent), None, &Options::default()).unwrap();
        assert!(
            [
                Label::Class(Class::Linear),
                Label::Between(Class::Linear, Class::Quadratic)
            ]
            .contains(&v.class),
            "seed {seed}: {}",
            v.words()
        );
        assert!(has(&v, "slope-change"), "seed {seed}: {:?}", v.flags);
        assert!(v.words().contains("per item"), "seed {seed}: {}", v.words());
    }
    let quadratic = |n: f64| 150_000.0 * (1.0 + 1.6 * (n / 1000.0).powi(2));
    let v = analyze(&draw(&mut rng, &quadratic), None, &Options::default()).unwrap();
    assert!(
        v.class.names(Class::Quadratic) && v.class != Label::Class(Class::Linear),
        "{}",
        v.words()
    );
}
