//! Per-CPU time counters as the BSD kernels and macOS hand them out, turned
//! into [`CpuStates`] (and from those, busy and total ticks).
//!
//! Each system gives, per CPU, the time spent in each CPU state (user,
//! nice, system, interrupt, idle …), in an order and a number of states of
//! its own. Turning those arrays into states is kept here,
//! free of system calls, so that it is tested on every system and not only
//! where the counters come from; `bsd.rs` does the reading.

use super::counters::CpuStates;

/// Where each CPU state sits in one CPU's record of state counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Counters per CPU.
    pub states: usize,
    /// User time.
    pub user: usize,
    /// Nice time.
    pub nice: usize,
    /// System time.
    pub system: usize,
    /// Interrupt time, where there is such a state.
    pub intr: Option<usize>,
    /// Time spinning on a lock (OpenBSD), counted as interrupt time.
    pub spin: Option<usize>,
    /// Idle time.
    pub idle: usize,
}

impl Layout {
    /// User, nice, system, interrupt, idle: FreeBSD's, NetBSD's and
    /// DragonFly's order.
    #[cfg_attr(target_vendor = "apple", allow(dead_code))]
    pub const FIVE: Layout = Layout {
        states: 5,
        user: 0,
        nice: 1,
        system: 2,
        intr: Some(3),
        spin: None,
        idle: 4,
    };
}

/// One [`CpuStates`] per CPU from `raw`, which holds `layout.states`
/// counters per CPU one CPU after the other. A trailing partial CPU is
/// left out.
pub fn states_from(raw: &[u64], layout: &Layout) -> Vec<CpuStates> {
    let at = |cpu: &[u64], i: Option<usize>| i.and_then(|i| cpu.get(i)).copied().unwrap_or(0);
    raw.chunks_exact(layout.states)
        .map(|cpu| CpuStates {
            user: cpu[layout.user],
            nice: cpu[layout.nice],
            system: cpu[layout.system],
            irq: at(cpu, layout.intr).saturating_add(at(cpu, layout.spin)),
            softirq: None,
            iowait: None,
            steal: None,
            idle: cpu[layout.idle],
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
    use crate::CpuTicks;

    /// Busy and total ticks of each CPU in `raw`, as `cpu_ticks` makes
    /// them on the BSDs and macOS.
    fn ticks_of(raw: &[u64], layout: &Layout) -> Vec<CpuTicks> {
        states_from(raw, layout)
            .iter()
            .map(CpuStates::ticks)
            .collect()
    }

    /// macOS: user, system, idle, nice — no interrupt state.
    const MAC: Layout = Layout {
        states: 4,
        user: 0,
        nice: 3,
        system: 1,
        intr: None,
        spin: None,
        idle: 2,
    };

    /// OpenBSD: user, nice, sys, spin, intr, idle.
    const OPEN: Layout = Layout {
        states: 6,
        user: 0,
        nice: 1,
        system: 2,
        spin: Some(3),
        intr: Some(4),
        idle: 5,
    };

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
            ticks_of(&raw, &Layout::FIVE),
            [ticks(18, 118), ticks(0, 50)]
        );
    }

    #[test]
    fn states_follow_the_layout() {
        let raw = [10, 1, 5, 2, 100, 0, 0, 0, 0, 50];
        let s = states_from(&raw, &Layout::FIVE);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].user, s[0].nice, s[0].system, s[0].irq, s[0].idle),
            (10, 1, 5, 2, 100)
        );
        assert_eq!(s[0].total(), 118, "the same total as the busy/total ticks");
        assert_eq!(s[1].idle, 50);
        // OpenBSD: spin counted as irq.
        let s = states_from(&[1, 2, 3, 4, 5, 6], &OPEN);
        assert_eq!((s[0].irq, s[0].idle), (9, 6));
        let s = states_from(&[30, 20, 40, 10, 1], &MAC);
        assert_eq!(s.len(), 1, "a partial CPU is left out");
        assert_eq!(
            (s[0].user, s[0].system, s[0].idle, s[0].nice, s[0].irq),
            (30, 20, 40, 10, 0)
        );
    }

    #[test]
    fn idle_need_not_be_last() {
        // macOS cpu_ticks: user, system, idle, nice.
        let raw = [30, 20, 40, 10];
        assert_eq!(ticks_of(&raw, &MAC), [ticks(60, 100)]);
    }

    #[test]
    fn a_partial_cpu_is_left_out() {
        assert_eq!(ticks_of(&[1, 2, 3, 4, 5, 6, 7], &OPEN), [ticks(15, 21)]);
        assert!(ticks_of(&[], &Layout::FIVE).is_empty());
    }

    #[test]
    fn huge_counters_saturate_instead_of_overflowing() {
        // user, system, idle, nice.
        let t = ticks_of(&[u64::MAX, 1, 7, 0], &MAC);
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
        assert_eq!(ticks_of(&states, &OPEN), [ticks(15, 115)]);
    }
}
