//! Timed phases of a workload: wall-clock time, CPU time and throughput
//! sampled at a fixed interval while the phase runs (the "pump and dump"
//! curve of a filesystem: fast while writes go to the cache, slow while the
//! cache is written back).
//!
//! The phase body advances [`ItemCounters`] as it works; a sampler thread reads
//! them every interval. Counting is two relaxed atomic adds per item, next
//! to system calls that cost microseconds.

// What a phase has done so far: the load generator's own counters, which
// it advances too.
use net::load::ItemCounters;
use results::PhaseStats;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The seeds' and our default sampling interval.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(250);

/// User and system CPU seconds of this process (all threads) so far.
pub fn cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills a plain struct.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) } != 0 {
        return (0.0, 0.0);
    }
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(r.ru_utime), s(r.ru_stime))
}

/// Runs `body` as one timed phase counted in `unit`s, sampling throughput
/// every `interval`. The body advances the counters it is given (and may
/// hand them on, e.g. to the load generator). Returns the phase's statistics and the body's result.
pub fn run<T>(
    unit: &str,
    interval: Duration,
    body: impl FnOnce(&Arc<ItemCounters>) -> T,
) -> (PhaseStats, T) {
    let counters = Arc::new(ItemCounters::default());
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let sampler = {
        let counters = Arc::clone(&counters);
        std::thread::spawn(move || sample(&counters, start, interval, &stop_rx))
    };
    let out = body(&counters);
    let seconds = start.elapsed().as_secs_f64();
    let cpu1 = cpu_seconds();
    drop(stop_tx);
    let throughput = sampler.join().unwrap_or_default();
    let (items, bytes) = counters.get();
    (
        PhaseStats {
            unit: unit.to_string(),
            seconds,
            items,
            bytes,
            sync_seconds: None,
            cpu_user_s: (cpu1.0 - cpu0.0).max(0.0),
            cpu_system_s: (cpu1.1 - cpu0.1).max(0.0),
            interval_ms: interval.as_millis() as u64,
            throughput,
        },
        out,
    )
}

/// The sampler: one `[t, items/s, MB/s]` per interval until the channel
/// closes, then one for the last (partial) interval.
fn sample(
    counters: &ItemCounters,
    start: Instant,
    interval: Duration,
    stop: &mpsc::Receiver<()>,
) -> Vec<[f64; 3]> {
    let mut out = Vec::new();
    let mut last = (0u64, 0u64);
    let mut last_t = 0.0f64;
    let mut k = 1u32;
    loop {
        let due = start + interval * k;
        let done = !matches!(
            stop.recv_timeout(due.saturating_duration_since(Instant::now())),
            Err(mpsc::RecvTimeoutError::Timeout)
        );
        let t = start.elapsed().as_secs_f64();
        let now = counters.get();
        let dt = t - last_t;
        if dt > 1e-6 && (!done || now != last || out.is_empty()) {
            out.push([
                round3(t),
                (now.0 - last.0) as f64 / dt,
                (now.1 - last.1) as f64 / 1e6 / dt,
            ]);
        }
        if done {
            return out;
        }
        last = now;
        last_t = t;
        k += 1;
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_samples_over_time() {
        let (p, v) = run("files", Duration::from_millis(20), |c| {
            for _ in 0..10 {
                c.add(5, 5_000);
                std::thread::sleep(Duration::from_millis(10));
            }
            42
        });
        assert_eq!(v, 42);
        assert_eq!((p.items, p.bytes), (50, 50_000));
        assert_eq!(p.unit, "files");
        assert!(p.seconds >= 0.1, "{}", p.seconds);
        assert!(p.throughput.len() >= 3, "{:?}", p.throughput);
        // Times ascend and the samples add up to what was counted.
        let mut prev = 0.0;
        let mut items = 0.0;
        for s in &p.throughput {
            assert!(s[0] > prev);
            items += s[1] * (s[0] - prev);
            prev = s[0];
        }
        assert!((items - 50.0).abs() < 2.0, "{items}");
        assert!((p.rate() - 50.0 / p.seconds).abs() < 1e-9);
    }

    #[test]
    fn an_instant_phase_still_has_one_sample() {
        let (p, ()) = run("files", Duration::from_secs(5), |c| c.add(1, 10));
        assert_eq!(p.throughput.len(), 1);
        assert!(p.seconds < 5.0);
    }
}
