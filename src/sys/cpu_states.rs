//! Per-CPU time counters as the BSD kernels and macOS hand them out, turned
//! into [`CpuTicks`].
//!
//! Each system gives, per CPU, the time spent in each CPU state (user,
//! nice, system, interrupt, idle …), in an order and a number of states of
//! its own. Turning those arrays into busy and total ticks is kept here,
//! free of system calls, so that it is tested on every system and not only
//! where the counters come from; `bsd.rs` does the reading.

use super::CpuTicks;

/// One [`CpuTicks`] per CPU from `raw`, which holds `states` counters per
/// CPU one CPU after the other, the one at index `idle` being idle time:
/// total is the sum of a CPU's counters, busy all of it but idle. A
/// trailing partial CPU is left out.
pub fn ticks_from_states(raw: &[u64], states: usize, idle: usize) -> Vec<CpuTicks> {
    assert!(idle < states, "the idle state {idle} is not among {states}");
    raw.chunks_exact(states)
        .map(|cpu| {
            // Saturating, so that total >= idle even for nonsense input.
            let total = cpu.iter().fold(0u64, |t, &x| t.saturating_add(x));
            CpuTicks {
                busy: total - cpu[idle],
                total,
                steal: None,
            }
        })
        .collect()
}

/// The state counters of the online CPUs in OpenBSD's `struct cpustats`
/// records (`KERN_CPUSTATS`: `uint64_t cs_time[CPUSTATES]` then `uint64_t
/// cs_flags`, `sys/sched.h`), one record per CPU in `raw`: those whose
/// flags have `online` set, offline ones (`hw.smt=0`, for one) left out.
#[cfg(any(test, target_os = "openbsd"))]
pub fn online_cpustats(raw: &[u64], states: usize, online: u64) -> Vec<u64> {
    raw.chunks_exact(states + 1)
        .filter(|record| record[states] & online != 0)
        .flat_map(|record| &record[..states])
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(busy: u64, total: u64) -> CpuTicks {
        CpuTicks {
            busy,
            total,
            steal: None,
        }
    }

    #[test]
    fn five_states_with_idle_last() {
        // FreeBSD kern.cp_times, NetBSD kern.cp_time, DragonFly's
        // kinfo_cputime fields: user, nice, sys, intr, idle.
        let raw = [10, 1, 5, 2, 100, 0, 0, 0, 0, 50];
        assert_eq!(
            ticks_from_states(&raw, 5, 4),
            [ticks(18, 118), ticks(0, 50)]
        );
    }

    #[test]
    fn idle_need_not_be_last() {
        // macOS cpu_ticks: user, system, idle, nice.
        let raw = [30, 20, 40, 10];
        assert_eq!(ticks_from_states(&raw, 4, 2), [ticks(60, 100)]);
    }

    #[test]
    fn a_partial_cpu_is_left_out() {
        assert_eq!(
            ticks_from_states(&[1, 2, 3, 4, 5, 6, 7], 6, 5),
            [ticks(15, 21)]
        );
        assert!(ticks_from_states(&[], 5, 4).is_empty());
    }

    #[test]
    fn huge_counters_saturate_instead_of_overflowing() {
        let t = ticks_from_states(&[u64::MAX, 1, 7], 3, 2);
        assert_eq!(t, [ticks(u64::MAX - 7, u64::MAX)]);
    }

    #[test]
    fn openbsd_offline_cpus_are_left_out() {
        // Two cpustats records (six states, then flags): CPU 0 online, CPU 1
        // offline; spin (index 3) counts as busy.
        let raw = [
            1, 2, 3, 4, 5, 100, 1, //
            9, 9, 9, 9, 9, 900, 0,
        ];
        let states = online_cpustats(&raw, 6, 1);
        assert_eq!(states, [1, 2, 3, 4, 5, 100]);
        assert_eq!(ticks_from_states(&states, 6, 5), [ticks(15, 115)]);
    }
}
