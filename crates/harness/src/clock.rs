//! The benchmark clock: CLOCK_MONOTONIC, or on x86_64 the time-stamp
//! counter calibrated against it.
//!
//! Benchmarks never read time themselves: the harness hands a [`Stopwatch`]
//! to each operation, which brackets exactly the timed call. Samples are
//! stored as raw nanoseconds; the clock's own overhead is measured per run
//! ([`Clock::measure_overhead`]) and stored beside them, never subtracted.

use super::rawclock::{self, Source};
use results::{Overhead, TimerKind};

/// Errors choosing or calibrating a timer.
#[derive(Debug, thiserror::Error)]
pub enum ClockError {
    /// `--timer tsc` on a CPU without a time-stamp counter.
    #[error("--timer tsc needs an x86_64 CPU; this is {0}")]
    NoTsc(&'static str),
    /// The calibration gave an implausible frequency.
    #[error("TSC calibration failed: {0:.0} Hz is not plausible")]
    BadCalibration(f64),
}

/// A calibrated clock.
#[derive(Debug, Clone)]
pub struct Clock {
    kind: TimerKind,
    source: Source,
    /// Nanoseconds per tick (1 for CLOCK_MONOTONIC).
    ns_per_tick: f64,
    tsc_hz: Option<f64>,
}

impl Clock {
    /// Sets up a clock; for the TSC this calibrates for about 60 ms.
    pub fn new(kind: TimerKind) -> Result<Clock, ClockError> {
        match kind {
            TimerKind::Monotonic => Ok(Clock {
                kind,
                source: Source::Monotonic,
                ns_per_tick: 1.0,
                tsc_hz: None,
            }),
            #[cfg(target_arch = "x86_64")]
            TimerKind::Tsc => {
                let hz = calibrate_tsc();
                if !(1e7..1e11).contains(&hz) {
                    return Err(ClockError::BadCalibration(hz));
                }
                Ok(Clock {
                    kind,
                    source: Source::Tsc,
                    ns_per_tick: 1e9 / hz,
                    tsc_hz: Some(hz),
                })
            }
            #[cfg(not(target_arch = "x86_64"))]
            TimerKind::Tsc => Err(ClockError::NoTsc(std::env::consts::ARCH)),
        }
    }

    /// Which timer this is.
    pub fn kind(&self) -> TimerKind {
        self.kind
    }

    /// The raw counter this clock reads (shared with the fork helper).
    pub fn source(&self) -> Source {
        self.source
    }

    /// The calibrated TSC frequency, if this is the TSC clock.
    pub fn tsc_hz(&self) -> Option<f64> {
        self.tsc_hz
    }

    /// Reads the raw counter.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        self.source.read()
    }

    /// Converts ticks to nanoseconds (rounded).
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> u64 {
        if self.ns_per_tick == 1.0 {
            ticks
        } else {
            (ticks as f64 * self.ns_per_tick).round() as u64
        }
    }

    /// Times `rounds` back-to-back pairs of clock reads.
    pub fn measure_overhead(&self, rounds: usize) -> Overhead {
        let rounds = rounds.max(1);
        let mut d: Vec<u64> = (0..rounds)
            .map(|_| {
                let a = self.now();
                let b = self.now();
                self.ticks_to_ns(b.wrapping_sub(a))
            })
            .collect();
        d.sort_unstable();
        Overhead {
            min_ns: d[0] as f64,
            median_ns: d[d.len() / 2] as f64,
        }
    }
}

/// Estimates the TSC frequency from three 20 ms busy windows against
/// CLOCK_MONOTONIC; the median is kept.
#[cfg(target_arch = "x86_64")]
fn calibrate_tsc() -> f64 {
    let mut est: Vec<f64> = (0..3)
        .map(|_| {
            let m0 = rawclock::monotonic_ns();
            let t0 = rawclock::tsc();
            while rawclock::monotonic_ns() - m0 < 20_000_000 {
                std::hint::spin_loop();
            }
            let m1 = rawclock::monotonic_ns();
            let t1 = rawclock::tsc();
            (t1 - t0) as f64 * 1e9 / (m1 - m0) as f64
        })
        .collect();
    est.sort_by(f64::total_cmp);
    est[1]
}

/// Brackets one timed operation. Handed to a benchmark's `Run::op`.
pub struct Stopwatch<'c> {
    clock: &'c Clock,
    start: u64,
    ticks: Option<u64>,
}

impl<'c> Stopwatch<'c> {
    /// A stopwatch on `clock`, not yet started.
    pub fn new(clock: &'c Clock) -> Self {
        Stopwatch {
            clock,
            start: 0,
            ticks: None,
        }
    }

    /// Marks the start of the timed call.
    #[inline(always)]
    pub fn start(&mut self) {
        self.start = self.clock.now();
    }

    /// Marks the end of the timed call.
    #[inline(always)]
    pub fn stop(&mut self) {
        self.ticks = Some(self.clock.now().wrapping_sub(self.start));
    }

    /// Runs `call`, bracketed by `sw` when one is given (the same
    /// operation is often done untimed while setting up).
    #[inline(always)]
    pub fn maybe<T>(sw: Option<&mut Stopwatch>, call: impl FnOnce() -> T) -> T {
        match sw {
            Some(sw) => {
                sw.start();
                let r = call();
                sw.stop();
                r
            }
            None => call(),
        }
    }

    /// Records ticks measured elsewhere with the same counter (the fork
    /// helper reads the same [`Source`]).
    pub fn record_ticks(&mut self, ticks: u64) {
        self.ticks = Some(ticks);
    }

    /// Takes the measurement in nanoseconds, resetting the stopwatch.
    pub fn take_ns(&mut self) -> Option<u64> {
        self.ticks.take().map(|t| self.clock.ticks_to_ns(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_overhead_is_small_and_ordered() {
        let c = Clock::new(TimerKind::Monotonic).unwrap();
        let o = c.measure_overhead(1000);
        assert!(o.min_ns <= o.median_ns);
        assert!(o.median_ns < 100_000.0, "{o:?}");
    }

    #[test]
    fn stopwatch_measures_a_sleep() {
        let c = Clock::new(TimerKind::Monotonic).unwrap();
        let mut sw = Stopwatch::new(&c);
        assert_eq!(sw.take_ns(), None);
        sw.start();
        std::thread::sleep(std::time::Duration::from_millis(2));
        sw.stop();
        let ns = sw.take_ns().unwrap();
        assert!(ns >= 2_000_000, "{ns}");
        assert_eq!(sw.take_ns(), None, "take resets");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn tsc_agrees_with_monotonic() {
        let c = Clock::new(TimerKind::Tsc).unwrap();
        let m = Clock::new(TimerKind::Monotonic).unwrap();
        let (a, b) = (c.now(), m.now());
        std::thread::sleep(std::time::Duration::from_millis(30));
        let (da, db) = (c.ticks_to_ns(c.now() - a), m.now() - b);
        let ratio = da as f64 / db as f64;
        assert!((0.97..1.03).contains(&ratio), "tsc/monotonic = {ratio}");
    }
}
