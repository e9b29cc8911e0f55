//! Why a cost grows: two windows of sampled call stacks, at low and at high
//! n, compared function by function.
//!
//! Method. Each sample is one `1/frequency` slice of CPU time of one of the
//! benchmark's processes (the timing one, its helpers and servers). A
//! function's *self* time is the samples in which it is the innermost
//! frame; its *inclusive* time the samples in which it appears anywhere.
//! Dividing by the operations done in the window gives CPU time per
//! operation, which is comparable between windows even when the operation
//! got slower (shares alone are not: a function that keeps its time loses
//! share when another grows).
//!
//! The growth to explain is the total CPU time per operation, high minus
//! low. Under a quarter of the low window's, nothing is said to grow. Nor
//! when the operation got slower *alike* — less than twice as slow, and no
//! function's share of the samples (self or inclusive) up by five points:
//! a uniform slowdown is what a busy or stolen CPU looks like (a shared
//! CI runner made an O(1) operation a third slower between windows), and
//! a profile cannot tell it from growth spread evenly over every function,
//! so it names none and says so. Else
//! the functions whose self time per operation grew most are named, largest
//! first, while each adds at least a tenth of the growth, up to three and
//! until half of it is explained. When the growth is spread over too many
//! functions for that (no function alone has a tenth), the most specific
//! function whose inclusive time holds 60 % of the growth is named instead
//! (the loop that calls them all).

use results::{FnSamples, Grower, ProfileWindow, StackProfile};
use std::collections::HashMap;

/// One frame of a call stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Frame {
    /// The function (`inet_bind2_bucket_find`, `scalebench::…::walk`), or
    /// `[unknown]` when the profiler could not name it.
    pub function: String,
    /// Whether it runs in the kernel.
    pub kernel: bool,
}

/// One sample: a call stack, leaf (where the CPU was) first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// Process id.
    pub pid: u32,
    /// Command name.
    pub comm: String,
    /// Frames, innermost first.
    pub frames: Vec<Frame>,
}

/// A window's raw material.
#[derive(Debug, Clone)]
pub struct Window {
    /// n held.
    pub n: u64,
    /// Seconds the operations ran.
    pub seconds: f64,
    /// Operations done.
    pub ops: u64,
    /// The stacks sampled.
    pub samples: Vec<Sample>,
}

/// A frame as written in folded stacks and sentences: kernel functions
/// marked ` [k]`.
pub fn label(f: &Frame) -> String {
    if f.kernel {
        format!("{} [k]", f.function)
    } else {
        f.function.clone()
    }
}

/// Folded stacks (`root;…;leaf COUNT`), sorted, one line per distinct
/// stack.
pub fn fold(samples: &[Sample]) -> String {
    let mut m: HashMap<String, u64> = HashMap::new();
    for s in samples {
        let key = s
            .frames
            .iter()
            .rev()
            .map(|f| label(f).replace(';', ":"))
            .collect::<Vec<_>>()
            .join(";");
        *m.entry(key).or_default() += 1;
    }
    let mut v: Vec<(String, u64)> = m.into_iter().collect();
    v.sort();
    let mut out = String::new();
    for (k, c) in v {
        out.push_str(&format!("{k} {c}\n"));
    }
    out
}

/// Parses folded stacks back into (frames root first, count).
pub fn unfold(text: &str) -> Vec<(Vec<String>, u64)> {
    text.lines()
        .filter_map(|l| {
            let (stack, count) = l.rsplit_once(' ')?;
            Some((
                stack.split(';').map(String::from).collect(),
                count.parse().ok()?,
            ))
        })
        .collect()
}

/// Self and inclusive sample counts per function.
fn counts(samples: &[Sample]) -> (HashMap<Frame, u64>, HashMap<Frame, u64>) {
    let mut own: HashMap<Frame, u64> = HashMap::new();
    let mut incl: HashMap<Frame, u64> = HashMap::new();
    for s in samples {
        if let Some(leaf) = s.frames.first() {
            *own.entry(leaf.clone()).or_default() += 1;
        }
        let mut seen: Vec<&Frame> = Vec::with_capacity(s.frames.len());
        for f in &s.frames {
            if !seen.contains(&f) {
                seen.push(f);
                *incl.entry(f.clone()).or_default() += 1;
            }
        }
    }
    (own, incl)
}

/// The largest rise of any function's share of its window's samples, low
/// to high (0.05 = five points).
fn share_rise(
    l: &HashMap<Frame, u64>,
    h: &HashMap<Frame, u64>,
    low: &Window,
    high: &Window,
) -> f64 {
    let share = |c: u64, w: &Window| c as f64 / w.samples.len().max(1) as f64;
    h.iter()
        .map(|(f, &c)| share(c, high) - share(l.get(f).copied().unwrap_or(0), low))
        .fold(0.0, f64::max)
}

fn top(m: &HashMap<Frame, u64>, k: usize) -> Vec<FnSamples> {
    let mut v: Vec<(&Frame, &u64)> = m.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.into_iter()
        .take(k)
        .map(|(f, &c)| FnSamples {
            function: f.function.clone(),
            kernel: f.kernel,
            samples: c,
        })
        .collect()
}

/// Folded stacks over this size are stored compressed.
const FOLDED_INLINE_MAX: usize = 64 << 10;

fn stored(w: &Window) -> ProfileWindow {
    let (own, incl) = counts(&w.samples);
    let folded = fold(&w.samples);
    let (inline, gz) = if folded.len() <= FOLDED_INLINE_MAX {
        (Some(folded), None)
    } else {
        use base64::Engine;
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        let _ = e.write_all(folded.as_bytes());
        let bytes = e.finish().unwrap_or_default();
        (
            None,
            Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
        )
    };
    ProfileWindow {
        n: w.n,
        seconds: w.seconds,
        ops: w.ops,
        samples: w.samples.len() as u64,
        top_self: top(&own, 25),
        top_inclusive: top(&incl, 25),
        folded: inline,
        folded_gzip_base64: gz,
    }
}

/// A percentage as in the sentences: `65 %`, `4 %`, `0.4 %`.
fn pct(x: f64) -> String {
    if x >= 0.0095 || x == 0.0 {
        format!("{:.0} %", x * 100.0)
    } else {
        format!("{:.1} %", x * 100.0)
    }
}

fn fmt_count(n: u64) -> String {
    ::units::fmt_n(n as f64)
}

/// The innermost function that calls the growers in nine of ten of their
/// samples (the loop around them: `do_poll` around `sock_poll`), if any.
fn common_caller(samples: &[Sample], growers: &[Grower]) -> Option<Frame> {
    let is_grower = |f: &Frame| {
        growers
            .iter()
            .any(|g| g.function == f.function && g.kernel == f.kernel)
    };
    let hits: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.frames.first().is_some_and(is_grower))
        .collect();
    if hits.is_empty() {
        return None;
    }
    // Per frame: the samples it is in, and the sum of its depths.
    let mut seen: HashMap<&Frame, (usize, usize)> = HashMap::new();
    for s in &hits {
        let mut mine: Vec<&Frame> = Vec::new();
        for (depth, f) in s.frames.iter().enumerate().skip(1) {
            if is_grower(f) || f.function == "[unknown]" || mine.contains(&f) {
                continue;
            }
            mine.push(f);
            let e = seen.entry(f).or_default();
            e.0 += 1;
            e.1 += depth;
        }
    }
    seen.into_iter()
        .filter(|(_, (c, _))| *c * 10 >= hits.len() * 9)
        .min_by(|a, b| {
            let da = a.1.1 as f64 / a.1.0 as f64;
            let db = b.1.1 as f64 / b.1.0 as f64;
            da.total_cmp(&db).then(a.0.cmp(b.0))
        })
        .map(|(f, _)| f.clone())
}

/// What the clock a profile samples on counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// Time: a sample stands for CPU time.
    Time,
    /// Instructions (a QEMU guest under `-icount`, one nanosecond per
    /// instruction): a sample stands for instructions executed.
    Instructions,
}

impl Clock {
    /// `ns` of this clock, in words: `21.72 µs`, or `21.7 k instructions`.
    fn amount(self, ns: f64) -> String {
        match self {
            Clock::Time => format!("{:.2} µs", ns / 1e3),
            Clock::Instructions => format!("{:.1} k instructions", ns / 1e3),
        }
    }

    /// What is spent per operation: `CPU` or `instructions`.
    fn spent(self) -> &'static str {
        match self {
            Clock::Time => "CPU",
            Clock::Instructions => "instructions",
        }
    }
}

/// Compares the windows: stores them, names the growing functions and says
/// so in a sentence, its costs in what `clock` counts.
pub fn compare(
    profiler: &str,
    event: &str,
    frequency: u32,
    clock: Clock,
    low: &Window,
    high: &Window,
) -> StackProfile {
    let (growing, explanation) = Pair::new(frequency, clock, low, high).explain();
    StackProfile {
        profiler: profiler.into(),
        event: event.into(),
        frequency_hz: frequency,
        windows: vec![stored(low), stored(high)],
        growing,
        explanation: Some(explanation),
        error: None,
    }
}

/// The two windows with their self and inclusive counts and their CPU
/// time per operation.
struct Pair<'a> {
    /// The low-n window.
    low: &'a Window,
    /// The high-n window.
    high: &'a Window,
    /// CPU time a sample stands for, ns.
    period_ns: f64,
    /// What that time counts.
    clock: Clock,
    /// Self counts at low n.
    own_l: HashMap<Frame, u64>,
    /// Inclusive counts at low n.
    incl_l: HashMap<Frame, u64>,
    /// Self counts at high n.
    own_h: HashMap<Frame, u64>,
    /// Inclusive counts at high n.
    incl_h: HashMap<Frame, u64>,
}

impl<'a> Pair<'a> {
    /// Counts the windows, sampled at `frequency` Hz.
    fn new(frequency: u32, clock: Clock, low: &'a Window, high: &'a Window) -> Pair<'a> {
        let (own_l, incl_l) = counts(&low.samples);
        let (own_h, incl_h) = counts(&high.samples);
        Pair {
            low,
            high,
            period_ns: 1e9 / f64::from(frequency.max(1)),
            clock,
            own_l,
            incl_l,
            own_h,
            incl_h,
        }
    }

    /// ` of CPU` after a time, nothing after instructions.
    fn of_cpu(&self) -> &'static str {
        match self.clock {
            Clock::Time => " of CPU",
            Clock::Instructions => "",
        }
    }

    /// CPU time per operation at low and at high n, ns.
    fn totals(&self) -> (f64, f64) {
        (
            self.per_op(self.low.samples.len() as u64, self.low),
            self.per_op(self.high.samples.len() as u64, self.high),
        )
    }

    /// CPU time per operation of `samples` samples in window `w`, ns.
    fn per_op(&self, samples: u64, w: &Window) -> f64 {
        samples as f64 * self.period_ns / w.ops.max(1) as f64
    }

    /// `c` samples' share of window `w`'s.
    fn share(c: u64, w: &Window) -> f64 {
        c as f64 / (w.samples.len().max(1)) as f64
    }

    /// The growing functions and the sentence that explains the growth,
    /// or says why none is named.
    fn explain(&self) -> (Vec<Grower>, String) {
        let (low, high) = (self.low, self.high);
        let (total_l, total_h) = self.totals();
        let growth = total_h - total_l;
        let enough =
            low.samples.len() >= 20 && high.samples.len() >= 20 && low.ops > 0 && high.ops > 0;
        if !enough {
            return (
                Vec::new(),
                format!(
                    "too few samples to say ({} at n = {}, {} at n = {})",
                    low.samples.len(),
                    fmt_count(low.n),
                    high.samples.len(),
                    fmt_count(high.n)
                ),
            );
        }
        if growth < 0.25 * total_l {
            return (
                Vec::new(),
                format!(
                    "nothing grows: {}{} per operation at n = {}, {} at n = {}, spent in the same functions",
                    self.clock.amount(total_l),
                    self.of_cpu(),
                    fmt_count(low.n),
                    self.clock.amount(total_h),
                    fmt_count(high.n)
                ),
            );
        }
        if total_h < 2.0 * total_l
            && share_rise(&self.own_l, &self.own_h, low, high) < 0.05
            && share_rise(&self.incl_l, &self.incl_h, low, high) < 0.05
        {
            return (
                Vec::new(),
                format!(
                    "nothing grows faster than the rest: {}{} per operation at n = {}, {} at n = {}, spent in the same functions in the same proportions (a uniform slowdown: a busy or stolen CPU, or growth spread evenly over everything)",
                    self.clock.amount(total_l),
                    self.of_cpu(),
                    fmt_count(low.n),
                    self.clock.amount(total_h),
                    fmt_count(high.n)
                ),
            );
        }
        let (growing, inclusive) = self.growers(growth);
        let sentence = self.blame(&growing, inclusive);
        (growing, sentence)
    }

    /// Function `f` by `basis` (`self` or `inclusive`), its counts in `l`
    /// (low n) and `h` (high n).
    fn grower(
        &self,
        f: &Frame,
        basis: &str,
        l: &HashMap<Frame, u64>,
        h: &HashMap<Frame, u64>,
    ) -> Grower {
        let cl = l.get(f).copied().unwrap_or(0);
        let ch = h.get(f).copied().unwrap_or(0);
        Grower {
            function: f.function.clone(),
            kernel: f.kernel,
            basis: basis.into(),
            low_share: Self::share(cl, self.low),
            high_share: Self::share(ch, self.high),
            low_ns_per_op: self.per_op(cl, self.low),
            high_ns_per_op: self.per_op(ch, self.high),
        }
    }

    /// The functions to name for `growth` ns per operation: by self time,
    /// largest first, while each adds a tenth, up to three and until half
    /// is explained; else the most specific one whose inclusive time holds
    /// 60 % of it (then `true`).
    fn growers(&self, growth: f64) -> (Vec<Grower>, bool) {
        let mut growing = Vec::new();
        let mut by_self: Vec<Grower> = self
            .own_h
            .keys()
            .map(|f| self.grower(f, "self", &self.own_l, &self.own_h))
            .collect();
        let g = |x: &Grower| x.high_ns_per_op - x.low_ns_per_op;
        by_self.sort_by(|a, b| g(b).total_cmp(&g(a)).then(a.function.cmp(&b.function)));
        let mut explained = 0.0;
        for x in by_self {
            if growing.len() == 3 || explained >= 0.5 * growth || g(&x) < 0.1 * growth {
                break;
            }
            explained += g(&x);
            growing.push(x);
        }
        if !growing.is_empty() {
            return (growing, false);
        }
        // Spread thin: the most specific function that holds most of it.
        let mut cands: Vec<Grower> = self
            .incl_h
            .keys()
            .map(|f| self.grower(f, "inclusive", &self.incl_l, &self.incl_h))
            .filter(|x| g(x) >= 0.6 * growth)
            .collect();
        cands.sort_by(|a, b| {
            a.high_ns_per_op
                .total_cmp(&b.high_ns_per_op)
                .then(a.function.cmp(&b.function))
        });
        match cands.into_iter().next() {
            Some(x) => (vec![x], true),
            None => (growing, false),
        }
    }

    /// The sentence naming the `growing` functions (`inclusive`: by their
    /// inclusive time) and, for self time, their common caller.
    fn blame(&self, growing: &[Grower], inclusive: bool) -> String {
        let (low, high) = (self.low, self.high);
        let (total_l, total_h) = self.totals();
        if growing.is_empty() {
            return format!(
                "{} per operation grows from {} at n = {} to {} at n = {}, spread over many functions with no single one to blame",
                self.clock.spent(),
                self.clock.amount(total_l),
                fmt_count(low.n),
                self.clock.amount(total_h),
                fmt_count(high.n)
            );
        }
        let caller = if inclusive {
            None
        } else {
            common_caller(&high.samples, growing)
        };
        let names: Vec<String> = growing
            .iter()
            .map(|x| {
                label(&Frame {
                    function: x.function.clone(),
                    kernel: x.kernel,
                })
            })
            .collect();
        let hs: f64 = growing.iter().map(|x| x.high_share).sum();
        let ls: f64 = growing.iter().map(|x| x.low_share).sum();
        format!(
            "at n = {}, {} of the time is {} {}{} (at n = {}: {}); {} per operation {} → {}",
            fmt_count(high.n),
            pct(hs.min(1.0)),
            if inclusive { "in or below" } else { "in" },
            names.join(" + "),
            caller.map_or(String::new(), |c| format!(", called from {}", label(&c))),
            fmt_count(low.n),
            pct(ls.min(1.0)),
            self.clock.spent(),
            self.clock.amount(total_l),
            self.clock.amount(total_h)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(frames: &[(&str, bool)]) -> Sample {
        Sample {
            pid: 1,
            comm: "t".into(),
            frames: frames
                .iter()
                .map(|(f, k)| Frame {
                    function: f.to_string(),
                    kernel: *k,
                })
                .collect(),
        }
    }

    fn window(n: u64, ops: u64, parts: &[(usize, &[(&str, bool)])]) -> Window {
        let mut samples = Vec::new();
        for (count, frames) in parts {
            for _ in 0..*count {
                samples.push(s(frames));
            }
        }
        Window {
            n,
            seconds: 2.0,
            ops,
            samples,
        }
    }

    const BIND: &[(&str, bool)] = &[("__inet_bind", true), ("__sys_bind", true), ("main", false)];
    const FIND: &[(&str, bool)] = &[
        ("inet_bind2_bucket_find", true),
        ("__inet_bind", true),
        ("__sys_bind", true),
        ("main", false),
    ];

    #[test]
    fn the_function_that_grows_is_named_with_its_shares() {
        // Same ops; at high n the hash walk takes 13 of 20 samples.
        let low = window(100, 1000, &[(96, BIND), (4, FIND)]);
        let high = window(15_000, 200, &[(70, BIND), (130, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert_eq!(p.growing.len(), 1, "{:?}", p.growing);
        assert_eq!(p.growing[0].function, "inet_bind2_bucket_find");
        assert!(p.growing[0].kernel);
        let e = p.explanation.unwrap();
        assert!(
            e.starts_with(
                "at n = 15 000, 65 % of the time is in inet_bind2_bucket_find [k], called from __inet_bind [k] (at n = 100: 4 %)"
            ),
            "{e}"
        );
        assert_eq!(p.windows[1].top_self[0].function, "inet_bind2_bucket_find");
        assert_eq!(p.windows[1].samples, 200);
    }

    #[test]
    fn a_guest_counting_instructions_is_told_in_instructions() {
        let low = window(100, 1000, &[(90, BIND), (10, FIND)]);
        let high = window(15_000, 1000, &[(95, BIND), (11, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Instructions, &low, &high);
        assert_eq!(
            p.explanation.unwrap(),
            "nothing grows: 100.0 k instructions per operation at n = 100, 106.0 k instructions at n = 15 000, spent in the same functions"
        );
        let grows = window(15_000, 200, &[(70, BIND), (130, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Instructions, &low, &grows);
        let e = p.explanation.unwrap();
        assert!(
            e.ends_with(
                "; instructions per operation 100.0 k instructions → 1000.0 k instructions"
            ),
            "{e}"
        );
        assert!(!e.contains("µs"), "{e}");
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &grows);
        assert!(
            p.explanation
                .unwrap()
                .ends_with("; CPU per operation 100.00 µs → 1000.00 µs")
        );
    }

    #[test]
    fn a_flat_cost_names_nothing() {
        let low = window(100, 1000, &[(90, BIND), (10, FIND)]);
        let high = window(15_000, 1000, &[(95, BIND), (11, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert!(p.growing.is_empty());
        assert!(p.explanation.unwrap().starts_with("nothing grows"));
    }

    #[test]
    fn a_uniform_slowdown_names_nothing_but_a_shifted_profile_does() {
        // Everything a third slower, in the same proportions: the CPU, not
        // the code (seen on a shared CI runner for an O(1) operation).
        let low = window(2000, 1000, &[(980, BIND), (20, FIND)]);
        let high = window(20_000, 1000, &[(1300, BIND), (27, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert!(p.growing.is_empty(), "{:?}", p.growing);
        let e = p.explanation.unwrap();
        assert!(
            e.starts_with("nothing grows faster than the rest: 1000.00 µs"),
            "{e}"
        );
        // The same third, all of it in one function whose share rises.
        let high = window(20_000, 1000, &[(980, BIND), (347, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert_eq!(p.growing[0].function, "inet_bind2_bucket_find");
        // Twice as slow counts even in the same proportions.
        let high = window(20_000, 1000, &[(1960, BIND), (40, FIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert_eq!(p.growing[0].function, "__inet_bind");
    }

    #[test]
    fn growth_spread_over_callees_names_their_common_caller() {
        let mut parts: Vec<(usize, Vec<(&str, bool)>)> = vec![(100, BIND.to_vec())];
        let names: Vec<String> = (0..20).map(|i| format!("leaf{i}")).collect();
        for n in &names {
            parts.push((
                20,
                vec![(n.as_str(), true), ("do_poll", true), ("main", false)],
            ));
        }
        let refs: Vec<(usize, &[(&str, bool)])> = parts.iter().map(|(c, f)| (*c, &f[..])).collect();
        let low = window(
            10,
            1000,
            &[(100, BIND), (2, &[("do_poll", true), ("main", false)])],
        );
        let high = window(10_000, 1000, &refs);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &high);
        assert_eq!(p.growing.len(), 1, "{:?}", p.growing);
        assert_eq!(p.growing[0].function, "do_poll");
        assert_eq!(p.growing[0].basis, "inclusive");
        assert!(p.explanation.unwrap().contains("in or below do_poll [k]"));
    }

    #[test]
    fn folding_round_trips() {
        let w = window(1, 1, &[(3, FIND), (1, BIND)]);
        let f = fold(&w.samples);
        assert_eq!(
            f,
            "main;__sys_bind [k];__inet_bind [k] 1\nmain;__sys_bind [k];__inet_bind [k];inet_bind2_bucket_find [k] 3\n"
        );
        let u = unfold(&f);
        assert_eq!(u[1].1, 3);
        assert_eq!(u[1].0.last().unwrap(), "inet_bind2_bucket_find [k]");
    }

    #[test]
    fn too_few_samples_say_so() {
        let low = window(1, 10, &[(3, BIND)]);
        let p = compare("perf", "cpu-clock", 1000, Clock::Time, &low, &low);
        assert!(p.explanation.unwrap().starts_with("too few samples"));
    }

    #[test]
    fn large_folds_are_compressed_and_read_back() {
        let many: Vec<String> = (0..3000)
            .map(|i| format!("function_number_{i}_with_a_long_name"))
            .collect();
        let samples: Vec<Sample> = many
            .iter()
            .map(|f| s(&[(f.as_str(), false), ("main", false)]))
            .collect();
        let w = Window {
            n: 1,
            seconds: 1.0,
            ops: 1,
            samples,
        };
        let st = stored(&w);
        assert!(st.folded.is_none());
        assert_eq!(st.folded_text().unwrap(), fold(&w.samples));
    }
}
