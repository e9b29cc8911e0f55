//! From samples to a verdict: buckets along n, the rise between the low
//! and high ends with a bootstrap interval, one model family behind the
//! class, the words, the exponent and the flags, and a confidence that
//! re-runs the whole judgement on resampled runs. The method is described
//! in `docs/analysis.md`; every threshold is named there.

#![deny(missing_docs)]

pub mod buckets;
pub mod compare;
pub mod fit;
pub mod flags;
pub mod judge;
pub mod models;
pub mod recorded;
pub mod resample;
pub mod stacks;
pub mod sweep;
pub mod verify;
pub mod warmup;

pub use buckets::{Bucket, Sample};
pub use fit::{Class, Fit};
pub use judge::Model;
pub use models::{Bent, Bent2, Power, Segmented};
pub use resample::Level;

use ::units::fmt_n;
use serde::Serialize;

/// Analysis settings.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// τ: a rise between the ends below this (relative) is flat; a growth
    /// class needs the rise's lower bound above it.
    pub tolerance: f64,
    /// Two-sided level of the rise interval (0.90: each bound is a 95 %
    /// one-sided bound).
    pub level: f64,
    /// Decades of n needed to tell n, n log n and n² apart.
    pub min_decades: f64,
    /// Bootstrap replicas.
    pub replicas: usize,
    /// Seed of the bootstrap (verdicts are reproducible).
    pub seed: u64,
    /// Threads for the replicas (the result does not depend on it).
    pub threads: usize,
    /// Judge recorded series again even where the result file keeps a
    /// verdict this analysis made ([`recorded::kept`]).
    pub rejudge: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            tolerance: 0.20,
            level: 0.90,
            min_decades: 1.5,
            replicas: 200,
            seed: 0x5ca1ab1e,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            rejudge: false,
        }
    }
}

/// An estimate with an interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, serde::Deserialize)]
pub struct Estimate {
    /// Point estimate.
    pub value: f64,
    /// Lower end of the interval.
    pub lo: f64,
    /// Upper end of the interval.
    pub hi: f64,
}

/// What a verdict calls a series: a growth class, or why it names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// One of the five classes.
    Class(Class),
    /// The rise's interval straddles the tolerance: neither flat nor
    /// growing can be said.
    Undecided,
    /// Grows faster than linearly, but n is not spread over enough decades
    /// to tell n log n from n² (or from a per-item cost that rises).
    Superlinear,
    /// Grows, and no class of the family fits; the model that does is
    /// named instead.
    NoFit,
    /// Grows, and the data cannot rule out any growth class from the
    /// first to the second (lower first): more than [`HELD`] of the
    /// resampled runs could not tell another class from the one they
    /// named, or fewer than [`DECIDED`] of them name the data's label and
    /// more than [`SPLIT`] name another class (see `stated`). One steady,
    /// never confidently wrong answer ("O(log n)–O(n)") rather than one
    /// that flips between runs of a suite or names one wrong class.
    ///
    /// From O(1) (`O(1)–O(log n)`): flat within the tolerance, yet surely
    /// rising — by half of it or more, or by more than 5 % where the rise
    /// cannot be shown to stay a third of it below it — shaped like the
    /// upper class: both are true, neither alone is the whole truth.
    /// Decided when [`DECIDED`] of the replicas name a class in it.
    Between(Class, Class),
}

/// The share of resampled runs above which a second growth class cannot be
/// set aside at the level [`DECIDED`] asks: a growing series whose
/// replicas name two classes each more often than this, and neither in
/// [`DECIDED`] of them, gets a split label.
pub const SPLIT: f64 = 1.0 - DECIDED;

/// The share of resampled runs above which a growth class they could not
/// tell from the one they named ([`Verdict::held_votes`]) is held in the
/// verdict's range. A third, not [`SPLIT`]: a class one replica in ten
/// cannot tell apart is a class the next suite's data may tell apart,
/// and the words would flip between runs (fork-maps here: n log n held
/// by 3.5–27 % of the replicas in six runs, bind-fresh's n² by 48–88 %).
pub const HELD: f64 = 1.0 / 3.0;

/// The share of resampled runs that must agree on one label for a verdict
/// to be decided (a run that stops when decided stops there; below it, a
/// range of growth classes is named as such).
pub const DECIDED: f64 = 0.9;

impl Label {
    /// The label as written (`O(n)`, `undecided`, `superlinear`, `no fit`,
    /// `O(log n)–O(n)`).
    pub fn label(self) -> &'static str {
        match self {
            Label::Class(c) => c.label(),
            Label::Undecided => "undecided",
            Label::Superlinear => "superlinear",
            Label::NoFit => "no fit",
            Label::Between(a, b) => match (a.min(b), a.max(b)) {
                (Class::Constant, Class::Log) => "O(1)–O(log n)",
                (Class::Constant, Class::Linear) => "O(1)–O(n)",
                (Class::Constant, Class::NLogN) => "O(1)–O(n log n)",
                (Class::Constant, Class::Quadratic) => "O(1)–O(n^2)",
                (Class::Log, Class::Linear) => "O(log n)–O(n)",
                (Class::Log, Class::NLogN) => "O(log n)–O(n log n)",
                (Class::Log, Class::Quadratic) => "O(log n)–O(n^2)",
                (Class::Linear, Class::NLogN) => "O(n)–O(n log n)",
                (Class::Linear, Class::Quadratic) => "O(n)–O(n^2)",
                (Class::NLogN, Class::Quadratic) => "O(n log n)–O(n^2)",
                // Not made: a range of one class.
                _ => "split",
            },
        }
    }

    /// Parses [`Label::label`].
    pub fn parse(s: &str) -> Option<Label> {
        match s {
            "undecided" => Some(Label::Undecided),
            "superlinear" => Some(Label::Superlinear),
            "no fit" => Some(Label::NoFit),
            _ => match s.split_once('–') {
                Some((a, b)) => {
                    let (a, b) = (Class::parse(a)?, Class::parse(b)?);
                    (a < b).then_some(Label::Between(a, b))
                }
                None => Class::parse(s).map(Label::Class),
            },
        }
    }

    /// Whether the label names class `c`, alone or within a range of
    /// classes (`O(log n)–O(n log n)` names O(n) too).
    pub fn names(self, c: Class) -> bool {
        match self {
            Label::Class(x) => x == c,
            Label::Between(a, b) => a.min(b) <= c && c <= a.max(b),
            _ => false,
        }
    }

    /// The class, when the label is one.
    pub fn class(self) -> Option<Class> {
        match self {
            Label::Class(c) => Some(c),
            _ => None,
        }
    }

    /// Whether the label says the cost grows (a class above O(1),
    /// superlinear, or growth no class fits).
    pub fn grows(self) -> bool {
        !matches!(self, Label::Class(Class::Constant) | Label::Undecided)
    }

    /// A small integer for styling (0–4 the classes, 5 undecided, 6
    /// superlinear, 7 no fit).
    pub fn index(self) -> usize {
        match self {
            Label::Class(c) => c as usize,
            Label::Undecided => 5,
            Label::Superlinear => 6,
            Label::NoFit => 7,
            Label::Between(_, b) => b as usize,
        }
    }
}

impl std::fmt::Display for Label {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

impl Serialize for Label {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

impl<'de> serde::Deserialize<'de> for Label {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Label::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not a verdict's label")))
    }
}

/// How a drift was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriftSource {
    /// Runs that visited n in opposite orders (up against down, up-down
    /// against down-up) disagree.
    Directions,
    /// A re-timing at low n, at another time than the run's own low n,
    /// disagrees with the run.
    Recheck,
}

/// Something about a series its label does not say.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "flag", rename_all = "kebab-case")]
pub enum Flag {
    /// A jump between two segments.
    Step {
        /// Where it jumps.
        at_n: f64,
        /// Cost just before, ns.
        from_ns: f64,
        /// Cost just after, ns.
        to_ns: f64,
    },
    /// Linear cost whose slope rises at one n (a structure leaving a cache).
    SlopeChange {
        /// Where.
        at_n: f64,
        /// ns per item before.
        before_ns: f64,
        /// ns per item after.
        after_ns: f64,
    },
    /// A share of samples on a second, slower curve within runs.
    Bimodal {
        /// Share of samples on it (where it shows).
        share: f64,
        /// Its cost relative to the main curve at low n.
        ratio_low: f64,
        /// … and at high n.
        ratio_high: f64,
        /// Its own growth class, if it can be told.
        class: Option<Class>,
    },
    /// Runs disagree: some flat, some rising or falling.
    RunsDisagree {
        /// The runs, in order.
        runs: Vec<u32>,
        /// Each run's own rise between the ends (relative).
        rises: Vec<f64>,
    },
    /// The cost changed with time during the runs, not with n.
    Drift {
        /// Factor by which the cost changed over one run's time.
        factor: f64,
        /// How it was seen.
        source: DriftSource,
    },
    /// The first buckets are far above the curve of the rest and fall
    /// toward it (a transient at the start of the runs); they are left out
    /// of the fits.
    WarmUp {
        /// Up to where.
        until_n: f64,
        /// The first bucket over the rest's curve there.
        excess: f64,
    },
    /// The cost falls as n grows.
    Falls {
        /// Cost at high n over cost at low n.
        ratio: f64,
    },
    /// The timer's own cost is a large part of what is measured.
    TimerBound {
        /// Median timer overhead, ns.
        overhead_ns: f64,
        /// Overhead over the median sample.
        share: f64,
    },
    /// The spread within buckets is as large as the cost itself.
    Noisy {
        /// Median over buckets of (p90 − p10) / median.
        spread: f64,
    },
}

/// Signed percentage (`+12 %`, `−3 %`).
/// How far even its upper bound must fall below 0 for an `O(1)` to be
/// said to fall ("falls by at least 9 %"); above it the bound is said as
/// "at most +0.0 %" (a fall of 0.7 % is within any run's noise).
const FALL_WORDS: f64 = 0.05;

fn pct(x: f64) -> String {
    let v = x * 100.0;
    let digits = if v.abs() < 10.0 { 1 } else { 0 };
    if v < 0.0 {
        format!("−{:.digits$} %", -v)
    } else {
        format!("+{v:.digits$} %")
    }
}

/// A factor (`×1.64`, `×950`).
fn times(x: f64) -> String {
    if x >= 100.0 {
        format!("×{x:.0}")
    } else if x >= 10.0 {
        format!("×{x:.1}")
    } else {
        format!("×{x:.2}")
    }
}

impl Flag {
    /// The flag's short name (`step`, `bimodal`, …).
    pub fn name(&self) -> &'static str {
        match self {
            Flag::Step { .. } => "step",
            Flag::SlopeChange { .. } => "slope-change",
            Flag::Bimodal { .. } => "bimodal",
            Flag::RunsDisagree { .. } => "runs-disagree",
            Flag::Drift { .. } => "drift",
            Flag::WarmUp { .. } => "warm-up",
            Flag::Falls { .. } => "falls",
            Flag::TimerBound { .. } => "timer-bound",
            Flag::Noisy { .. } => "noisy",
        }
    }

    /// The flag in words, its costs in time.
    pub fn describe(&self) -> String {
        self.describe_in(::units::Cost::Time)
    }

    /// The flag in words, its costs in `cost`'s unit.
    pub fn describe_in(&self, cost: ::units::Cost) -> String {
        match self {
            Flag::Step {
                at_n,
                from_ns,
                to_ns,
            } => format!(
                "step at n ≈ {}: {} → {} ({} in one step)",
                fmt_n(*at_n),
                cost.fmt(*from_ns),
                cost.fmt(*to_ns),
                times(to_ns / from_ns)
            ),
            Flag::SlopeChange {
                at_n,
                before_ns,
                after_ns,
            } => format!(
                "slope change at n ≈ {}: {} per item before, {} after (a structure outgrowing a cache?)",
                fmt_n(*at_n),
                cost.fmt(*before_ns),
                cost.fmt(*after_ns)
            ),
            Flag::Bimodal {
                share,
                ratio_low,
                ratio_high,
                class,
            } => {
                let ratio = if (ratio_high / ratio_low - 1.0).abs() < 0.2 {
                    format!("{ratio_low:.1}× slower")
                } else {
                    format!("{ratio_low:.1}× slower at low n, {ratio_high:.1}× at high n")
                };
                let grows = class.map_or(String::new(), |c| format!(", itself {c}"));
                format!(
                    "bimodal: {:.0} % of samples on a second curve within runs, {ratio}{grows}",
                    share * 100.0
                )
            }
            Flag::RunsDisagree { runs, rises } => {
                let per: Vec<String> = runs
                    .iter()
                    .zip(rises)
                    .map(|(r, x)| format!("run {}: {}", r + 1, pct(*x)))
                    .collect();
                format!(
                    "runs disagree: some flat, some not, between the ends ({})",
                    per.join(", ")
                )
            }
            Flag::Drift { factor, source } => match source {
                DriftSource::Directions => format!(
                    "drift: runs that visited n in opposite orders disagree: time within a run, not n, changed the cost {} between the two",
                    times(*factor)
                ),
                DriftSource::Recheck => format!(
                    "drift: re-timed at low n at the other end of each run, the cost was {} what the run measured there: time, not only n, moved it",
                    times(*factor)
                ),
            },
            Flag::WarmUp { until_n, excess } => format!(
                "warm-up: up to n ≈ {} the cost is up to {} the curve of the rest, falling toward it (a transient at the start of the runs?); left out of the fit",
                fmt_n(*until_n),
                times(*excess)
            ),
            Flag::Falls { ratio } => {
                format!("falls: high-n cost is {} the low-n cost", times(*ratio))
            }
            Flag::TimerBound { overhead_ns, share } => format!(
                "timer-bound: the timer's own cost ({}) is {:.0} % of the median sample",
                cost.fmt(*overhead_ns),
                share * 100.0
            ),
            Flag::Noisy { spread } => format!(
                "noisy: p10–p90 spans {:.0} % of the median within buckets",
                spread * 100.0
            ),
        }
    }
}

/// A share of the bootstrap replicas.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Vote {
    /// A label (`O(1)`, `undecided`) or a flag name.
    pub what: String,
    /// Share of replicas (0–1).
    pub share: f64,
}

/// What is known of one run beyond its samples.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunInfo {
    /// Run id (as in [`Sample::run`]).
    pub run: u32,
    /// Whether it visited n from high to low (or started at the top and
    /// came down first, against runs that started going up).
    pub downwards: bool,
    /// Samples (n, ns) re-timed at low n, far in time from the run's own
    /// low-n samples.
    pub recheck: Vec<(f64, f64)>,
    /// Whether the re-timing came after the run (else before it).
    pub recheck_after: bool,
}

/// The verdict on one series.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Verdict {
    /// The label: a growth class, or `undecided`, `superlinear`, `no fit`,
    /// or a range of growth classes the data cannot tell apart.
    pub class: Label,
    /// Share of bootstrap replicas (whole runs resampled, then samples
    /// within runs) whose whole judgement gave the same label (of a split,
    /// either of its classes); `None` (unknown) with fewer than 3 runs.
    pub confidence: Option<f64>,
    /// Every label the replicas gave, with its share.
    pub votes: Vec<Vote>,
    /// Every flag the replicas raised, with the share that raised it.
    pub flag_votes: Vec<Vote>,
    /// Every growth class the replicas held, with the share that held it:
    /// named it, or named a class they could not tell from it
    /// ([`judge::Judgement::near`]). Empty in files written before
    /// 2026-12-06.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub held_votes: Vec<Vote>,
    /// The model behind the label.
    pub model: Model,
    /// Fits of every class, simplest first.
    pub fits: Vec<Fit>,
    /// The best `a + b·nᵖ`, when something grows.
    pub power: Option<Power>,
    /// Another class that fits about as well: the data cannot tell the
    /// two apart.
    pub alternative: Option<Class>,
    /// The rise between the ends, high/low − 1, with its interval.
    pub rise: Estimate,
    /// The tolerance τ the rise was judged against.
    pub tolerance: f64,
    /// Decades of n the buckets span.
    pub span_decades: f64,
    /// Exponent p of the growing part (`a + b·nᵖ`) with a 95 % interval,
    /// when the series grows.
    pub exponent: Option<Estimate>,
    /// Local exponent of the growing part over the lower and the upper
    /// half of n, when it matters (superlinear, no fit).
    pub local_exponent: Option<(f64, f64)>,
    /// Interquartile mean of the cost (and median n) of the tenth of the
    /// samples with the smallest n.
    pub low: Level,
    /// … and of the tenth with the largest n.
    pub high: Level,
    /// Samples analysed.
    pub samples: usize,
    /// Runs they came from.
    pub runs: usize,
    /// Median timer overhead, ns, when known.
    pub overhead_ns: Option<f64>,
    /// Per-n summaries.
    pub buckets: Vec<Bucket>,
    /// Structure the label does not describe.
    pub flags: Vec<Flag>,
}

impl Verdict {
    /// How sure a flat verdict's rise is ([`judge`]'s range from O(1)):
    /// `surely rising` where its lower bound is above 5 %, `perhaps
    /// rising` where noise leaves the lower bound below that.
    fn rising_words(&self) -> &'static str {
        if self.rise.lo > judge::NEAR {
            "surely rising"
        } else {
            "perhaps rising"
        }
    }

    /// Whether the verdict is decided: resampled whole runs (3 at least)
    /// agree on one label, a class or why none fits, in [`DECIDED`] of
    /// the replicas. `Ok` says why in words, `Err` why not: too few runs,
    /// undecided, a range of classes the data cannot tell apart, or too
    /// little agreement.
    pub fn decided(&self) -> Result<String, String> {
        let Some(share) = self.confidence else {
            return Err(format!("{} runs: resampling whole runs needs 3", self.runs));
        };
        let agree = format!("{:.0} % of resampled runs", share * 100.0);
        match self.class {
            Label::Undecided => Err(format!(
                "undecided: the rise {} straddles the tolerance {}",
                self.interval(),
                pct(self.tolerance)
            )),
            Label::Between(Class::Constant, _) if share >= DECIDED => Ok(format!(
                "{} in {agree}: flat within the tolerance {}, yet {} {}",
                self.class,
                pct(self.tolerance),
                self.rising_words(),
                self.interval()
            )),
            Label::Between(..) => Err(format!(
                "{}: the data cannot tell the classes in it apart ({agree} name one of them)",
                self.class
            )),
            l if share < DECIDED => Err(format!("{l} in {agree}, {:.0} % needed", DECIDED * 100.0)),
            l => Ok(format!("{l} in {agree}, rise {}", self.interval())),
        }
    }

    /// Whether a flat verdict's words turn on where its bound lies: `O(1)`
    /// or the range from it, a measured rise above 5 % yet not surely
    /// above half of τ, and an upper bound at or above half of τ — near
    /// the two thirds of τ where a bound makes such a rise the range from
    /// O(1) ([`judge`]'s "perhaps rising"). Three runs of one cost rising
    /// 10 % here called it `O(1)` in one round and `O(1)–O(log n)` in the
    /// next; more runs narrow the bound, so a series that stops once
    /// decided makes more of them first.
    pub fn on_the_edge(&self) -> bool {
        let flat = matches!(
            self.class,
            Label::Class(Class::Constant) | Label::Between(Class::Constant, _)
        );
        let half = self.tolerance / 2.0;
        flat && self.rise.value > judge::NEAR && self.rise.lo < half && self.rise.hi >= half
    }

    /// high / low cost.
    pub fn ratio(&self) -> f64 {
        self.high.ns / self.low.ns
    }

    /// The ends: "3.10 µs at n = 10 → 3.20 µs at n = 10 000 (×1.03)".
    pub fn ends(&self) -> String {
        self.ends_in(::units::Cost::Time)
    }

    /// The ends, their costs in `cost`'s unit.
    pub fn ends_in(&self, cost: ::units::Cost) -> String {
        format!(
            "{} at n = {} → {} at n = {} ({})",
            cost.fmt(self.low.ns),
            fmt_n(self.low.n),
            cost.fmt(self.high.ns),
            fmt_n(self.high.n),
            times(self.ratio())
        )
    }

    fn range(&self) -> String {
        format!("n = {}..{}", fmt_n(self.low.n), fmt_n(self.high.n))
    }

    fn interval(&self) -> String {
        format!(
            "{} ({}..{})",
            pct(self.rise.value),
            pct(self.rise.lo),
            pct(self.rise.hi)
        )
    }

    /// The verdict in one sentence, label first; its numbers are the
    /// ones the label was decided on.
    pub fn words(&self) -> String {
        self.words_in(::units::Cost::Time)
    }

    /// The verdict in one sentence, its costs in `cost`'s unit (time, or
    /// instructions for a guest that counted them).
    pub fn words_in(&self, cost: ::units::Cost) -> String {
        let ends = self.ends_in(cost);
        match (&self.class, &self.model) {
            (_, Model::Segmented(s)) => format!("{}; {ends}", describe_segments(s, self.tolerance)),
            (Label::Class(Class::Constant), _) => {
                // "Falls" where even the upper bound is a fall worth the
                // word (below −5 %, as the `falls` flag), not −0.0 %.
                let bound = if self.rise.hi < -FALL_WORDS {
                    format!(
                        "falls by at least {}",
                        pct(-self.rise.hi).trim_start_matches('+')
                    )
                } else {
                    format!("at most {}", pct(self.rise.hi.max(0.0)))
                };
                format!("O(1): {bound} over {}; {ends}", self.range())
            }
            (Label::Undecided, _) => format!(
                "undecided: {} over {} (flat below {}); {ends}",
                self.interval(),
                self.range(),
                pct(self.tolerance)
            ),
            (Label::Class(c), Model::Bent(b)) => format!(
                "{c}: {} per item up to n ≈ {}, {} per item after; {ends}",
                cost.fmt(b.before),
                fmt_n(b.knot),
                cost.fmt(b.after)
            ),
            (Label::Class(c), Model::Bent2(b)) => format!(
                "{c}: {} per item up to n ≈ {}, {} up to n ≈ {}, {} after; {ends}",
                cost.fmt(b.slopes[0]),
                fmt_n(b.knots[0]),
                cost.fmt(b.slopes[1]),
                fmt_n(b.knots[1]),
                cost.fmt(b.slopes[2])
            ),
            (Label::Class(c), _) => {
                format!("{c}: {} over {}; {ends}", self.interval(), self.range())
            }
            (Label::Superlinear, _) => format!(
                "superlinear: {} over {}{} (n, n log n and n² cannot be told apart over {:.1} decades of n); {ends}",
                self.interval(),
                self.range(),
                self.local_words(),
                self.span_decades
            ),
            (Label::NoFit, m) => format!(
                "no fit: no single class fits, {} does{}; {ends}",
                describe_model_in(m, cost),
                self.local_words()
            ),
            (l @ Label::Between(Class::Constant, _), m) => format!(
                "{l}: {} over {}, flat within the tolerance {} yet {}, as {} does; {ends}",
                self.interval(),
                self.range(),
                pct(self.tolerance),
                self.rising_words(),
                describe_model_in(m, cost)
            ),
            (l @ Label::Between(a, b), m) => {
                // Two classes of the range each named by more than SPLIT.
                let split = self
                    .votes
                    .iter()
                    .filter(|x| x.share > SPLIT + 1e-9)
                    .filter(|x| Class::parse(&x.what).is_some_and(|c| l.names(c)))
                    .count()
                    > 1;
                let why = match (self.alternative.filter(|&x| x == *a || x == *b), m) {
                    (Some(x), Model::Bent(_) | Model::Bent2(_)) => format!(
                        "a line whose cost per item rises ({}) fits about as well as {x}",
                        describe_model_in(m, cost)
                    ),
                    _ if split => "the resampled runs split between the classes".to_string(),
                    _ => "the classes in it fit about as well (in the data or its resampled runs)"
                        .to_string(),
                };
                format!(
                    "{l}: {} over {}, {why}; {ends}",
                    self.interval(),
                    self.range()
                )
            }
        }
    }

    fn local_words(&self) -> String {
        self.local_exponent.map_or(String::new(), |(a, b)| {
            format!(", local exponent {a:.1} → {b:.1}")
        })
    }

    /// The fitted model in words ("1.80 µs + 0.13 ns·n").
    pub fn model(&self) -> String {
        describe_model(&self.model)
    }

    /// The fitted model in words, in `cost`'s unit.
    pub fn model_in(&self, cost: ::units::Cost) -> String {
        describe_model_in(&self.model, cost)
    }

    /// Flag names joined by `;` (for tables).
    pub fn flag_names(&self) -> String {
        self.flags
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(";")
    }

    /// The model's cost at n (for drawing the fitted curve).
    pub fn curve(&self, n: f64) -> f64 {
        self.model.at(n)
    }
}

/// A coefficient in ns (or instructions) with enough digits.
fn coef(b: f64, cost: ::units::Cost) -> String {
    let (b, unit) = match cost {
        ::units::Cost::Time => (b, "ns"),
        ::units::Cost::Instructions { shift } => (b * (1u64 << shift.min(40)) as f64, "instr"),
    };
    if b.abs() >= 0.01 {
        format!("{b:.3} {unit}")
    } else {
        format!("{b:.3e} {unit}")
    }
}

/// A model in words ("1.80 µs + 0.130 ns·n").
pub fn describe_model(m: &Model) -> String {
    describe_model_in(m, ::units::Cost::Time)
}

/// A model in words, its costs in `cost`'s unit.
pub fn describe_model_in(m: &Model, cost: ::units::Cost) -> String {
    match m {
        Model::Smooth(f) => {
            let term = match f.class {
                Class::Constant => return cost.fmt(f.a),
                Class::Log => "ln(n+1)",
                Class::Linear => "n",
                Class::NLogN => "n·ln(n+1)",
                Class::Quadratic => "n²",
            };
            format!("{} + {}·{term}", cost.fmt(f.a), coef(f.b, cost))
        }
        Model::Power(p) => format!("{} + {}·n^{:.2}", cost.fmt(p.a), coef(p.b, cost), p.p),
        Model::Bent(b) => format!(
            "{} + {}·n, {}·n beyond n ≈ {}",
            cost.fmt(b.a),
            coef(b.before, cost),
            coef(b.after, cost),
            fmt_n(b.knot)
        ),
        Model::Bent2(b) => format!(
            "{} + {}·n, {}·n beyond n ≈ {}, {}·n beyond n ≈ {}",
            cost.fmt(b.a),
            coef(b.slopes[0], cost),
            coef(b.slopes[1], cost),
            fmt_n(b.knots[0]),
            coef(b.slopes[2], cost),
            fmt_n(b.knots[1])
        ),
        Model::Segmented(s) => describe_segments(s, 0.0),
    }
}

/// Segments in words: "O(1) up to n ≈ 13 500, then ×950 in one step";
/// "O(n), +60 %, up to n ≈ 13 500, then ×600".
fn describe_segments(s: &Segmented, tau: f64) -> String {
    let seg = |i: usize| {
        let g = &s.segments[i];
        let r = g.rise();
        if g.line && r.abs() >= tau.max(0.05) {
            format!("O(n), {},", pct(r))
        } else {
            "O(1)".to_string()
        }
    };
    let mut out = String::new();
    for i in 0..s.jumps_at.len() {
        let (from, to) = s.jump(i);
        if i == 0 {
            out.push_str(&format!(
                "{} up to n ≈ {}, then {} in one step",
                seg(0),
                fmt_n(s.jumps_at[0]),
                times(to / from)
            ));
        } else {
            out.push_str(&format!(
                ", {} up to n ≈ {}, then {}",
                seg(i).trim_end_matches(','),
                fmt_n(s.jumps_at[i]),
                times(to / from)
            ));
        }
    }
    let last = s.segments.len() - 1;
    let tail = &s.segments[last];
    if tail.line && tail.rise().abs() >= tau.max(0.05) {
        out.push_str(&format!(
            ", then O(n), {} to n = {}",
            pct(tail.rise()),
            fmt_n(tail.to_n)
        ));
    }
    out
}

/// Why a series cannot be judged.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Insufficient {
    /// Not enough samples.
    #[error("only {0} samples (at least 10 are needed)")]
    TooFewSamples(usize),
    /// n does not vary enough.
    #[error("n takes only {0} distinct values (at least 3 are needed)")]
    TooFewN(usize),
}

/// Judges a series. `overhead_ns` is the median timer overhead, if known.
pub fn analyze(
    samples: &[Sample],
    overhead_ns: Option<f64>,
    opts: &Options,
) -> Result<Verdict, Insufficient> {
    analyze_runs(samples, &[], overhead_ns, opts)
}

/// Judges a series whose runs are described by `runs` (direction, a
/// re-timing at low n): as [`analyze`], plus the `drift` flag.
pub fn analyze_runs(
    samples: &[Sample],
    runs: &[RunInfo],
    overhead_ns: Option<f64>,
    opts: &Options,
) -> Result<Verdict, Insufficient> {
    let Pointwise {
        measured,
        samples,
        point,
        span,
        median_ns,
        runs_seen,
        data,
    } = pointwise(samples, runs)?;
    let reps = resample::replicas(&data, opts.replicas, opts.seed, opts.threads);
    let ctx = judge::Context {
        interval: rise_interval(&point, &reps, opts.level),
        span,
        overhead_ns,
        median_ns,
        prefer: None,
    };
    let j = judge::judge(&point, &ctx, opts);

    // Every replica judged whole.
    let judged: Vec<judge::Judgement> = reps.iter().map(|r| judge::judge(r, &ctx, opts)).collect();
    // Which growth class: where the data's own judgement names one and
    // two thirds of the replicas name another, that one. The choice among
    // classes that fit about as well is the least stable part of a
    // verdict, and the replicas' majority is steadier than one draw.
    let j = match bagged_class(&j, &judged) {
        Some(c) if runs_seen >= 3 => rejudged_for(c, &point, &ctx, opts).unwrap_or(j),
        _ => j,
    };
    let confidence =
        (runs_seen >= 3 && !judged.is_empty()).then(|| share_of(&judged, |x| x.label == j.label));
    let held_votes = held_votes(&judged);
    let (label, confidence) = stated(
        &j,
        confidence,
        |c| share_of(&judged, |x| x.label == Label::Class(c)),
        |c| vote_share(&held_votes, c),
    );
    let exponent = exponent_of(&j, &judged);
    let mut flags = j.flags;
    if let Some(d) = flags::drift(&measured, runs, opts.tolerance / 2.0) {
        flags.push(d);
    }
    Ok(Verdict {
        class: label,
        confidence,
        votes: label_votes(&judged),
        flag_votes: flag_votes(&judged, &reps),
        held_votes,
        model: j.model,
        fits: j.fits,
        power: j.power,
        alternative: j.alternative,
        rise: Estimate {
            value: j.rise.0,
            lo: j.rise.1,
            hi: j.rise.2,
        },
        tolerance: opts.tolerance,
        span_decades: span,
        exponent,
        local_exponent: j.local,
        low: point.low,
        high: point.high,
        samples: samples.len(),
        runs: runs_seen,
        overhead_ns,
        buckets: point.buckets,
        flags,
    })
}

/// What a verdict draws from the data itself, before any replica: the
/// samples judged and their summary.
pub(crate) struct Pointwise {
    /// The samples measured (finite ones).
    pub measured: Vec<Sample>,
    /// … with each run's re-timings: what is judged.
    pub samples: Vec<Sample>,
    /// Their summary.
    pub point: resample::Summary,
    /// Decades of n it spans.
    pub span: f64,
    /// The median sample, ns.
    pub median_ns: f64,
    /// Runs the samples came from.
    pub runs_seen: usize,
    /// The samples as the bootstrap draws from them.
    pub data: resample::Data,
}

/// The data's own part of a judgement: the samples and their summary.
pub(crate) fn pointwise(samples: &[Sample], runs: &[RunInfo]) -> Result<Pointwise, Insufficient> {
    let measured: Vec<Sample> = samples
        .iter()
        .filter(|s| s.n.is_finite() && s.ns.is_finite())
        .copied()
        .collect();
    let samples = with_rechecks(&measured, runs);
    if samples.len() < 10 {
        return Err(Insufficient::TooFewSamples(samples.len()));
    }
    let data = resample::Data::new(&samples);
    let point = resample::summarize(&data.full(), &data, true);
    if point.buckets.len() < 3 {
        return Err(Insufficient::TooFewN(point.buckets.len()));
    }
    let span = span_decades(&point);
    let mut all: Vec<f64> = samples.iter().map(|s| s.ns).collect();
    let median_ns = buckets::median_of(&mut all);
    let mut runs_seen: Vec<u32> = samples.iter().map(|s| s.run).collect();
    runs_seen.sort_unstable();
    runs_seen.dedup();
    Ok(Pointwise {
        measured,
        samples,
        data,
        point,
        span,
        median_ns,
        runs_seen: runs_seen.len(),
    })
}

/// The data judged again preferring growth class `c` (the one most
/// replicas named), when that judgement names it.
pub(crate) fn rejudged_for(
    c: Class,
    point: &resample::Summary,
    ctx: &judge::Context,
    opts: &Options,
) -> Option<judge::Judgement> {
    let k = judge::judge(
        point,
        &judge::Context {
            prefer: Some(c),
            ..*ctx
        },
        opts,
    );
    (k.label == Label::Class(c)).then_some(k)
}

/// The samples measured, and each run's re-timing at low n as its own
/// samples: the low end of a run that cannot go both ways is so measured
/// at both ends of the run's time, and a drift or a spell of slow
/// operations at one end of a run falls on both ends of n (the drift flag
/// still compares the two).
fn with_rechecks(measured: &[Sample], runs: &[RunInfo]) -> Vec<Sample> {
    measured
        .iter()
        .copied()
        .chain(runs.iter().flat_map(|r| {
            r.recheck
                .iter()
                .filter(|x| x.0.is_finite() && x.1.is_finite())
                .map(move |&(n, ns)| Sample { n, ns, run: r.run })
        }))
        .collect()
}

/// The rise interval: percentiles of the replicas' ratios at confidence
/// `level`, as factors of the point ratio (each replica is judged with
/// the same factors around its own ratio).
fn rise_interval(point: &resample::Summary, reps: &[resample::Summary], level: f64) -> (f64, f64) {
    let ratio = point.ratio();
    let mut ratios: Vec<f64> = reps
        .iter()
        .map(|r| r.ratio())
        .filter(|r| r.is_finite())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    if ratios.is_empty() || ratio.is_nan() || ratio <= 0.0 || !ratio.is_finite() {
        (1.0, 1.0)
    } else {
        (
            buckets::quantile(&ratios, tail) / ratio,
            buckets::quantile(&ratios, 1.0 - tail) / ratio,
        )
    }
}

/// Decades of n the buckets span, from the first with n > 0.
pub(crate) fn span_decades(point: &resample::Summary) -> f64 {
    let positive: Vec<f64> = point
        .buckets
        .iter()
        .map(|b| b.n)
        .filter(|&n| n > 0.0)
        .collect();
    match (positive.first(), point.buckets.last()) {
        (Some(&lo), Some(hi)) if hi.n > lo => (hi.n / lo).log10(),
        _ => 0.0,
    }
}

/// The share of the judgements for which `f` holds (0 when there are
/// none).
fn share_of(judged: &[judge::Judgement], f: impl Fn(&judge::Judgement) -> bool) -> f64 {
    judged.iter().filter(|x| f(x)).count() as f64 / judged.len().max(1) as f64
}

/// Each label the replicas named, with its share, most named first.
fn label_votes(judged: &[judge::Judgement]) -> Vec<Vote> {
    let mut labels: Vec<Label> = judged.iter().map(|x| x.label).collect();
    labels.sort();
    labels.dedup();
    let mut votes: Vec<Vote> = labels
        .iter()
        .map(|&l| Vote {
            what: l.label().to_string(),
            share: share_of(judged, |x| x.label == l),
        })
        .collect();
    votes.sort_by(|a, b| b.share.total_cmp(&a.share));
    votes
}

/// Each flag the replicas raised, with its share. The second curve is
/// looked for in every SHADOW_EVERY-th replica only: its share is among
/// those.
fn flag_votes(judged: &[judge::Judgement], reps: &[resample::Summary]) -> Vec<Vote> {
    let mut names: Vec<&str> = judged
        .iter()
        .flat_map(|x| x.flags.iter().map(Flag::name))
        .collect();
    names.sort_unstable();
    names.dedup();
    let looked: Vec<(&judge::Judgement, bool)> = judged
        .iter()
        .zip(reps)
        .map(|(j, r)| (j, r.shadow.is_some()))
        .collect();
    names
        .iter()
        .map(|&n| {
            let pool: Vec<&judge::Judgement> = looked
                .iter()
                .filter(|(_, shadow)| *shadow || n != "bimodal")
                .map(|(j, _)| *j)
                .collect();
            let with = pool
                .iter()
                .filter(|x| x.flags.iter().any(|f| f.name() == n))
                .count();
            Vote {
                what: n.to_string(),
                share: with as f64 / pool.len().max(1) as f64,
            }
        })
        .collect()
}

/// The growth exponent of a growing series that is not a structure, with
/// the 95 % interval of the replicas' exponents.
fn exponent_of(j: &judge::Judgement, judged: &[judge::Judgement]) -> Option<Estimate> {
    match (j.label.grows(), &j.power) {
        (true, Some(p)) if !matches!(j.model, Model::Segmented(_)) => {
            let mut ps: Vec<f64> = judged.iter().filter_map(|x| x.power.map(|p| p.p)).collect();
            ps.sort_by(f64::total_cmp);
            Some(Estimate {
                value: p.p,
                lo: buckets::quantile(&ps, 0.025).min(p.p),
                hi: buckets::quantile(&ps, 0.975).max(p.p),
            })
        }
        _ => None,
    }
}

/// The label a verdict states, with its confidence, from the data's own
/// judgement `j`, the share of the replicas naming its label
/// (`confidence`, when there are runs enough), each growth class's share
/// of the replicas (`share`) and the share holding it (`held`:
/// [`Verdict::held_votes`]). The growth classes the data cannot rule out
/// are its own; every class more than [`HELD`] of the replicas held —
/// named, or could not tell from the one they named
/// ([`judge::Judgement::near`]), so that heavy noise over n² is not read
/// as a plain O(n) — and, where fewer than [`DECIDED`] of the replicas
/// name the data's label, every class more than [`SPLIT`] of them name.
/// The replicas' shares, not the data's own near classes: one draw of
/// the data falls either side of a criterion's margin, while the share of
/// 200 replicas moves smoothly. More than one class: the range from the
/// lowest to the highest (`O(log n)–O(n log n)`), with the share of the
/// replicas naming a class in it; one: the data's own label.
pub(crate) fn stated(
    j: &judge::Judgement,
    confidence: Option<f64>,
    share: impl Fn(Class) -> f64,
    held: impl Fn(Class) -> f64,
) -> (Label, Option<f64>) {
    // A flat curve that surely rises: the range from O(1) to its shape.
    let rising = j.rises_within();
    if !j.label.grows() && !rising {
        return (j.label, confidence);
    }
    let growth = &Class::ALL[1..];
    let mut classes: Vec<Class> = Vec::new();
    if let Label::Class(c) = j.label {
        classes.push(c);
    }
    // Its shape is the data's own guess among classes a small rise cannot
    // tell apart: every class near it (the shape among them) is in the
    // range.
    if rising {
        classes.extend(j.near.iter().copied());
    }
    classes.extend(growth.iter().copied().filter(|&c| held(c) > HELD + 1e-9));
    if confidence.is_some_and(|c| c < DECIDED) {
        classes.extend(growth.iter().copied().filter(|&c| share(c) > SPLIT + 1e-9));
    }
    match (classes.iter().min(), classes.iter().max()) {
        (Some(&lo), Some(&hi)) if lo != hi => {
            let either = Class::ALL
                .iter()
                .filter(|&&c| lo <= c && c <= hi)
                .map(|&c| share(c))
                .sum();
            (Label::Between(lo, hi), confidence.map(|_| either))
        }
        _ => (j.label, confidence),
    }
}

/// The share `votes` give class `c` (0 when they do not name it).
pub(crate) fn vote_share(votes: &[Vote], c: Class) -> f64 {
    votes
        .iter()
        .find(|x| x.what == c.label())
        .map_or(0.0, |x| x.share)
}

/// Each growth class the replicas held — named, or could not tell from
/// the class they named — with the share that held it, most held first.
fn held_votes(judged: &[judge::Judgement]) -> Vec<Vote> {
    let mut votes: Vec<Vote> = Class::ALL[1..]
        .iter()
        .map(|&c| Vote {
            what: c.label().to_string(),
            share: share_of(judged, |x| {
                x.label == Label::Class(c) || x.near.contains(&c)
            }),
        })
        .filter(|v| v.share > 0.0)
        .collect();
    votes.sort_by(|a, b| b.share.total_cmp(&a.share));
    votes
}

/// The growth class at least two thirds of the replicas named, when the
/// data's own judgement names a different growth class.
fn bagged_class(j: &judge::Judgement, judged: &[judge::Judgement]) -> Option<Class> {
    bagged_of(j.label, |c| {
        share_of(judged, |x| x.label == Label::Class(c))
    })
}

/// [`bagged_class`] from the data's own label and each growth class's
/// share of the replicas.
pub(crate) fn bagged_of(own: Label, share: impl Fn(Class) -> f64) -> Option<Class> {
    let own = match own {
        Label::Class(c) if c != Class::Constant => c,
        _ => return None,
    };
    let top = Class::ALL[1..].iter().copied().max_by(|&a, &b| {
        share(a)
            .total_cmp(&share(b))
            .then((b as usize).cmp(&(a as usize)))
    })?;
    (top != own && 3.0 * share(top) >= 2.0 - 1e-9).then_some(top)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Five flat runs over n = 0..1000 whose first tenth of operations
    /// (low n, at the start of each run) is 40 % slower: a spell at the
    /// start of each run, not a cost of n.
    fn slow_start() -> Vec<Sample> {
        (0..5u32)
            .flat_map(|run| {
                (0..1000).map(move |i| Sample {
                    n: i as f64,
                    ns: if i < 100 { 1400.0 } else { 1000.0 }
                        + ((i * 7 + run as usize) % 13) as f64,
                    run,
                })
            })
            .collect()
    }

    /// A judgement that only carries a label.
    fn labelled(label: Label) -> judge::Judgement {
        judge::Judgement {
            label,
            model: Model::Smooth(Fit {
                class: Class::Constant,
                a: 1.0,
                b: 0.0,
                chi2: 0.0,
            }),
            alternative: None,
            near: Vec::new(),
            fits: Vec::new(),
            power: None,
            local: None,
            flags: Vec::new(),
            rise: (0.0, 0.0, 0.0),
        }
    }

    fn replicas(labels: &[(Label, usize)]) -> Vec<judge::Judgement> {
        labels
            .iter()
            .flat_map(|&(l, k)| std::iter::repeat_with(move || labelled(l)).take(k))
            .collect()
    }

    #[test]
    fn the_replicas_majority_names_the_growth_class() {
        let (n, nlogn) = (Label::Class(Class::Linear), Label::Class(Class::NLogN));
        let own = labelled(nlogn);
        // Two thirds or more name O(n): O(n).
        let r = replicas(&[(n, 80), (nlogn, 20)]);
        assert_eq!(bagged_class(&own, &r), Some(Class::Linear));
        let r = replicas(&[(n, 67), (nlogn, 13), (Label::Undecided, 20)]);
        assert_eq!(bagged_class(&own, &r), Some(Class::Linear));
        // A bare majority is not enough; nor is agreement a change.
        let r = replicas(&[(n, 52), (nlogn, 48)]);
        assert_eq!(bagged_class(&own, &r), None);
        assert_eq!(bagged_class(&labelled(n), &replicas(&[(n, 90)])), None);
        // Flat, undecided and the other labels are the data's own.
        let r = replicas(&[(n, 100)]);
        for l in [
            Label::Class(Class::Constant),
            Label::Undecided,
            Label::Superlinear,
            Label::NoFit,
        ] {
            assert_eq!(bagged_class(&labelled(l), &r), None, "{l}");
        }
    }

    /// [`stated`] of a judgement labelled `label`, the share `confidence`
    /// of the replicas `r` naming it, and the shares `held` of the
    /// replicas holding a class (beside those naming it): the label and
    /// share, when it is a range.
    fn split_label(
        label: Label,
        held: &[(Class, f64)],
        confidence: f64,
        r: &[judge::Judgement],
    ) -> Option<(Label, f64)> {
        let share = |c| share_of(r, |x| x.label == Label::Class(c));
        let holding = |c| held.iter().find(|x| x.0 == c).map_or(share(c), |x| x.1);
        match stated(&labelled(label), Some(confidence), share, holding) {
            (l @ Label::Between(..), c) => Some((l, c.unwrap())),
            _ => None,
        }
    }

    #[test]
    fn evidence_split_between_two_growth_classes_is_named_as_both() {
        let c = |c| Label::Class(c);
        let (log, lin, nlogn, quad) = (Class::Log, Class::Linear, Class::NLogN, Class::Quadratic);
        // The data said "no fit", the replicas mostly O(log n), often O(n).
        let r = replicas(&[(c(log), 60), (c(lin), 25), (Label::NoFit, 15)]);
        let (l, share) = split_label(Label::NoFit, &[], 0.15, &r).unwrap();
        assert_eq!(l, Label::Between(log, lin));
        assert!((share - 0.85).abs() < 1e-9);
        assert_eq!(l.label(), "O(log n)–O(n)");
        // A second class at 10 % or less is no split; nor is a decided label.
        let r = replicas(&[(c(lin), 85), (c(quad), 8), (Label::NoFit, 7)]);
        assert_eq!(split_label(c(lin), &[], 0.85, &r), None);
        let r = replicas(&[(c(lin), 90), (c(quad), 10)]);
        assert_eq!(split_label(c(lin), &[], 0.9, &r), None);
        let r = replicas(&[(c(lin), 86), (c(quad), 14)]);
        assert_eq!(
            split_label(c(lin), &[], 0.86, &r).map(|x| x.0),
            Some(Label::Between(lin, quad))
        );
        // Every class over 10 % is held: the range from the lowest to the
        // highest, with the share of every class in it.
        let r = replicas(&[
            (c(lin), 60),
            (c(log), 15),
            (c(nlogn), 12),
            (c(quad), 5),
            (Label::Undecided, 8),
        ]);
        let (l, share) = split_label(c(lin), &[], 0.6, &r).unwrap();
        assert_eq!(
            (l, l.label()),
            (Label::Between(log, nlogn), "O(log n)–O(n log n)")
        );
        assert!((share - 0.87).abs() < 1e-9, "{share}");
        assert!(l.names(lin) && l.names(log) && l.names(nlogn) && !l.names(quad));
        // A class more than a third of the replicas could not tell from
        // the one they named is held even where every replica names the
        // data's class; a third or less is not.
        let r = replicas(&[(c(lin), 100)]);
        assert_eq!(
            split_label(c(lin), &[(quad, 0.34)], 1.0, &r),
            Some((Label::Between(lin, quad), 1.0))
        );
        assert_eq!(split_label(c(lin), &[(nlogn, 1.0 / 3.0)], 1.0, &r), None);
        // Flat and undecided are never split, whatever the replicas say.
        let r = replicas(&[(c(log), 50), (c(lin), 50)]);
        assert_eq!(
            split_label(c(Class::Constant), &[(log, 1.0)], 0.0, &r),
            None
        );
        assert_eq!(split_label(Label::Undecided, &[], 0.0, &r), None);
    }

    #[test]
    fn every_label_reads_back_from_its_text() {
        let mut all = vec![Label::Undecided, Label::Superlinear, Label::NoFit];
        all.extend(Class::ALL.iter().map(|&c| Label::Class(c)));
        for (i, &a) in Class::ALL.iter().enumerate() {
            for &b in &Class::ALL[i + 1..] {
                all.push(Label::Between(a, b));
            }
        }
        assert_eq!(all.len(), 3 + 5 + 10);
        for l in all {
            assert_eq!(Label::parse(l.label()), Some(l), "{l}");
            let json = serde_json::to_string(&l).unwrap();
            assert_eq!(serde_json::from_str::<Label>(&json).unwrap(), l);
        }
        assert_eq!(Label::parse("O(n)–O(log n)"), None);
        assert_eq!(Label::parse("O(n)–O(1)"), None);
        assert_eq!(Label::parse("O(n)–O(n)"), None);
        assert!(serde_json::from_str::<Label>("\"O(n³)\"").is_err());
    }

    /// Five runs of a cost rising `rise` (relative) as log n does over
    /// n = 10..1 000, with a deterministic wobble of ±0.5 %.
    fn log_rising(rise: f64) -> Vec<Sample> {
        let g = |n: f64| (n + 1.0).ln();
        (0..5u32)
            .flat_map(|run| {
                (10..1000).map(move |i| {
                    let n = i as f64;
                    let wobble = ((i * 7 + run as usize) % 11) as f64 / 1000.0;
                    let up = (g(n) - g(10.0)) / (g(999.0) - g(10.0));
                    Sample {
                        n,
                        ns: 1000.0 * (1.0 + rise * up) * (1.0 + wobble),
                        run,
                    }
                })
            })
            .collect()
    }

    #[test]
    fn an_o1_is_said_to_fall_only_when_even_its_bound_falls_by_5_percent() {
        let opts = Options::default();
        // A fall of 1 %: "at most +0.0 %", not "falls by at least 0.7 %".
        let v = analyze(&log_rising(-0.01), None, &opts).unwrap();
        assert_eq!(v.class, Label::Class(Class::Constant), "{}", v.words());
        assert!(v.rise.hi < 0.0, "{:?}", v.rise);
        assert!(
            v.words().starts_with("O(1): at most +0.0 % over"),
            "{}",
            v.words()
        );
        // A fall of 30 %: said so.
        let v = analyze(&log_rising(-0.3), None, &opts).unwrap();
        assert!(
            v.words().starts_with("O(1): falls by at least "),
            "{}",
            v.words()
        );
    }

    #[test]
    fn a_cost_surely_rising_within_tau_is_the_range_from_o1_to_its_shape() {
        let opts = Options::default();
        // 14 % between the ends (bucket medians at n = 59 and 950) as
        // log n: flat by τ (20 %), yet surely rising.
        let v = analyze(&log_rising(0.25), None, &opts).unwrap();
        assert_eq!(
            v.class,
            Label::Between(Class::Constant, Class::Log),
            "{}",
            v.words()
        );
        assert!(v.rise.hi < opts.tolerance && v.rise.lo >= opts.tolerance / 2.0);
        let w = v.words();
        assert!(
            w.starts_with("O(1)–O(log n): +")
                && w.contains("flat within the tolerance +20 % yet surely rising"),
            "{w}"
        );
        let why = v.decided().unwrap();
        assert!(why.starts_with("O(1)–O(log n) in "), "{why}");
        assert_eq!(Label::parse(v.class.label()), Some(v.class));
        // 3 %: a plain O(1), its bound holding the rise.
        let v = analyze(&log_rising(0.03), None, &opts).unwrap();
        assert_eq!(v.class, Label::Class(Class::Constant), "{}", v.words());
        assert!(v.words().starts_with("O(1): at most +"), "{}", v.words());
        // 38 % between the ends: growth, no O(1) in it.
        let v = analyze(&log_rising(0.8), None, &opts).unwrap();
        assert_eq!(v.class, Label::Class(Class::Log), "{}", v.words());
    }

    #[test]
    fn a_rise_near_tau_that_noise_leaves_unsure_is_the_range_perhaps_rising() {
        let opts = Options::default();
        // Five runs rising as log n by 0 to 24 % (12 % on average): the
        // whole runs, resampled, leave the lower bound at or below 5 %
        // and the upper one near τ — perhaps rising, not a plain O(1).
        let per_run = [0.0, 0.24, 0.06, 0.18, 0.12];
        let samples: Vec<Sample> = log_rising(1.0)
            .into_iter()
            .map(|s| {
                let up = s.ns / 1000.0;
                let r = per_run[s.run as usize];
                Sample {
                    ns: 1000.0 * (1.0 + r * (up - 1.0)),
                    ..s
                }
            })
            .collect();
        let v = analyze(&samples, None, &opts).unwrap();
        let w = v.words();
        assert!(
            v.rise.lo <= 0.05 && v.rise.value > 0.05 && v.rise.hi >= opts.tolerance * 2.0 / 3.0,
            "{:?}: {w}",
            v.rise
        );
        assert!(v.rise.hi < opts.tolerance, "{:?}: {w}", v.rise);
        assert!(matches!(v.class, Label::Between(Class::Constant, _)), "{w}");
        assert!(
            w.contains("flat within the tolerance +20 % yet perhaps rising"),
            "{w}"
        );
    }

    #[test]
    fn a_flat_verdict_is_on_the_edge_where_its_bound_nears_perhaps_rising() {
        let opts = Options::default();
        let base = analyze(&log_rising(0.03), None, &opts).unwrap();
        let with = |class: Label, lo: f64, value: f64, hi: f64| Verdict {
            class,
            rise: Estimate { value, lo, hi },
            ..base.clone()
        };
        let flat = Label::Class(Class::Constant);
        let range = Label::Between(Class::Constant, Class::Log);
        // fork-cleanup's three rounds here: +10 % (7.8..14), +9.5 %
        // (7.4..12), +9.6 % (8.3..11).
        assert!(with(range, 0.078, 0.10, 0.14).on_the_edge());
        assert!(with(flat, 0.074, 0.095, 0.12).on_the_edge());
        assert!(with(flat, 0.083, 0.096, 0.11).on_the_edge());
        // Its bound well below half of τ, its rise within 5 %, surely
        // above half of τ, or a growth class: not.
        assert!(!with(flat, 0.047, 0.061, 0.075).on_the_edge());
        assert!(!with(flat, -0.02, 0.03, 0.12).on_the_edge());
        assert!(!with(range, 0.11, 0.14, 0.18).on_the_edge());
        assert!(!with(Label::Class(Class::Log), 0.078, 0.10, 0.14).on_the_edge());
    }

    #[test]
    fn a_verdict_is_decided_with_three_runs_that_agree() {
        let opts = Options::default();
        let flat = slow_start();
        let three: Vec<Sample> = flat.iter().filter(|s| s.run < 3).copied().collect();
        let v = analyze(&three, None, &opts).unwrap();
        let why = v.decided().unwrap();
        assert!(why.starts_with("O(1) in "), "{why}");
        let two: Vec<Sample> = flat.iter().filter(|s| s.run < 2).copied().collect();
        let v = analyze(&two, None, &opts).unwrap();
        assert!(v.decided().unwrap_err().contains("needs 3"));
        // A range is not decided: more runs may settle it.
        let split = Verdict {
            class: Label::Between(Class::Log, Class::Linear),
            confidence: Some(0.95),
            ..analyze(&three, None, &opts).unwrap()
        };
        assert!(
            split
                .decided()
                .unwrap_err()
                .contains("cannot tell the classes in it apart")
        );
        let weak = Verdict {
            class: Label::Class(Class::Linear),
            confidence: Some(0.8),
            ..split
        };
        assert!(weak.decided().unwrap_err().contains("90 % needed"));
    }

    #[test]
    fn a_recheck_counts_as_the_runs_own_low_n() {
        let opts = Options::default();
        let samples = slow_start();
        let bare: Vec<RunInfo> = (0..5)
            .map(|run| RunInfo {
                run,
                ..Default::default()
            })
            .collect();
        let without = analyze_runs(&samples, &bare, None, &opts).unwrap();
        // Re-timed after each run, at its usual cost.
        let rechecked: Vec<RunInfo> = (0..5)
            .map(|run| RunInfo {
                run,
                recheck: (0..100)
                    .map(|i| (i as f64, 1000.0 + (i % 13) as f64))
                    .collect(),
                recheck_after: true,
                ..Default::default()
            })
            .collect();
        let with = analyze_runs(&samples, &rechecked, None, &opts).unwrap();
        assert_eq!(without.samples, 5000);
        assert_eq!(with.samples, 5500, "the re-timings are judged too");
        assert!(without.rise.value < -0.2, "{:?}", without.rise);
        assert!(
            with.rise.value > without.rise.value + 0.1,
            "{:?} against {:?}",
            with.rise,
            without.rise
        );
        // The drift flag still compares the re-timing with the run alone.
        assert!(
            with.flags.iter().any(|f| matches!(f, Flag::Drift { .. })),
            "{:?}",
            with.flags
        );
    }
}
