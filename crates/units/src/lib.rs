//! Human-readable numbers: durations and byte counts with a unit chosen
//! by size, counts with thousands separated: the one formatter of every
//! floor, outside the analysis so that rewording a figure does not change
//! the analysis's identity.

#![deny(missing_docs)]

/// Formats nanoseconds as ns, µs, ms or s with three significant digits.
pub fn fmt_ns(ns: f64) -> String {
    let (v, unit) = if ns.abs() < 1e3 {
        (ns, "ns")
    } else if ns.abs() < 1e6 {
        (ns / 1e3, "µs")
    } else if ns.abs() < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    if unit == "ns" {
        // Per-item slopes can be well below a nanosecond.
        if v.abs() < 1.0 && v != 0.0 {
            format!("{v:.3} ns")
        } else if v.abs() < 10.0 {
            format!("{v:.1} ns")
        } else {
            format!("{v:.0} ns")
        }
    } else {
        format!("{v:.digits$} {unit}")
    }
}

/// What a recorded cost counts: time, or — for a guest whose clock QEMU
/// advances by instructions (`-icount`) — instructions, each recorded
/// nanosecond being 2^shift of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Cost {
    /// Nanoseconds of time.
    #[default]
    Time,
    /// Instructions executed: a recorded nanosecond is `2^shift` of them.
    Instructions {
        /// QEMU's `-icount` shift.
        shift: u32,
    },
}

impl Cost {
    /// A recorded cost (`ns` as the result file holds it) in its unit:
    /// `4.21 µs`, or `4 214 instr` and `12.9 k instr` for instructions.
    pub fn fmt(self, ns: f64) -> String {
        match self {
            Cost::Time => fmt_ns(ns),
            Cost::Instructions { shift } => fmt_instructions(ns * (1u64 << shift.min(40)) as f64),
        }
    }

    /// A recorded cost in at most nine characters, for a table's column:
    /// as [`Cost::fmt`] for time, `4.22k ins`, `13.0k ins`, `812 ins` for
    /// instructions.
    pub fn fmt_short(self, ns: f64) -> String {
        let Cost::Instructions { shift } = self else {
            return fmt_ns(ns);
        };
        let x = ns * (1u64 << shift.min(40)) as f64;
        let (v, unit) = if x.abs() < 1e3 {
            return format!("{x:.0} ins");
        } else if x.abs() < 1e6 {
            (x / 1e3, "k")
        } else if x.abs() < 1e9 {
            (x / 1e6, "M")
        } else {
            (x / 1e9, "G")
        };
        let digits = if v.abs() >= 100.0 {
            0
        } else if v.abs() >= 10.0 {
            1
        } else {
            2
        };
        format!("{v:.digits$}{unit} ins")
    }

    /// The unit's name in a table's header or a chart's axis:
    /// `time` or `instructions`.
    pub fn name(self) -> &'static str {
        match self {
            Cost::Time => "time",
            Cost::Instructions { .. } => "instructions",
        }
    }

    /// Whether it counts instructions.
    pub fn counts_instructions(self) -> bool {
        matches!(self, Cost::Instructions { .. })
    }
}

/// Formats a count of instructions with three significant digits from a
/// thousand up (`12.9 k instr`, `1.20 M instr`), whole below (`4 instr`),
/// and to three decimals below one (a per-item slope).
pub fn fmt_instructions(x: f64) -> String {
    let (v, unit) = if x.abs() < 1e4 {
        (x, "")
    } else if x.abs() < 1e6 {
        (x / 1e3, "k ")
    } else if x.abs() < 1e9 {
        (x / 1e6, "M ")
    } else {
        (x / 1e9, "G ")
    };
    if unit.is_empty() {
        return if v.abs() < 1.0 && v != 0.0 {
            format!("{v:.3} instr")
        } else if v.abs() < 10.0 {
            format!("{v:.1} instr")
        } else {
            format!("{} instr", fmt_n(v))
        };
    }
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {unit}instr")
}

/// Formats a count with a space every three digits (`10 000`).
pub fn fmt_n(n: f64) -> String {
    let r = n.round();
    if !(0.0..1e18).contains(&r) {
        return format!("{n:.0}");
    }
    let s = (r as u64).to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// Formats a byte count in binary units with three significant digits:
/// `512 bytes`, `12.0 KiB`, `870 MiB`, `1.50 GiB`, `1.00 TiB`.
pub fn fmt_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} byte{}", if b == 1 { "" } else { "s" });
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", UNITS[unit])
}

/// Formats a memory size as the system record shows it: GiB with one
/// decimal (`23.5 GiB`).
pub fn fmt_gib(b: u64) -> String {
    format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64)
}

/// Formats a memory size in GiB with one decimal from 1 GiB up, below it
/// in whole MiB (`2.0 GiB`, `512 MiB`).
pub fn fmt_memory(b: u64) -> String {
    if b >= 1 << 30 {
        fmt_gib(b)
    } else {
        format!("{:.0} MiB", b as f64 / (1u64 << 20) as f64)
    }
}

/// A count with what it counts, singular for one: `1 file`, `10 000
/// files`.
pub fn fmt_count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", fmt_n(n as f64), if n == 1 { one } else { many })
}

/// Seconds in a short human form (`312 ms`, `4.21 s`, `12m05s`).
pub fn fmt_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 100.0 {
        format!("{s:.2} s")
    } else {
        let m = (s / 60.0).floor();
        format!("{m:.0}m{:02.0}s", s - 60.0 * m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(fmt_count(1, "file", "files"), "1 file");
        assert_eq!(fmt_count(0, "file", "files"), "0 files");
        assert_eq!(fmt_count(20_000, "file", "files"), "20 000 files");
    }

    #[test]
    fn costs_are_shown_in_their_unit() {
        assert_eq!(Cost::Time.fmt(4214.0), "4.21 µs");
        let i = Cost::Instructions { shift: 0 };
        assert_eq!(i.fmt(4214.0), "4 214 instr");
        assert_eq!(i.fmt(12974.0), "13.0 k instr");
        assert_eq!(i.fmt(92976.0), "93.0 k instr");
        assert_eq!(i.fmt(1_234_567.0), "1.23 M instr");
        assert_eq!(i.fmt(48.4), "48 instr");
        assert_eq!(i.fmt(3.5), "3.5 instr");
        assert_eq!(i.fmt(0.35), "0.350 instr");
        // A shift of 2: each recorded nanosecond is four instructions.
        assert_eq!(Cost::Instructions { shift: 2 }.fmt(1000.0), "4 000 instr");
        assert_eq!((i.name(), Cost::Time.name()), ("instructions", "time"));
        for (x, short) in [
            (812.0, "812 ins"),
            (4222.0, "4.22k ins"),
            (12974.0, "13.0k ins"),
            (129_740.0, "130k ins"),
            (1_297_400.0, "1.30M ins"),
        ] {
            assert_eq!(i.fmt_short(x), short);
            assert!(short.chars().count() <= 9);
        }
        assert_eq!(Cost::Time.fmt_short(4214.0), "4.21 µs");
        assert!(i.counts_instructions() && !Cost::Time.counts_instructions());
    }

    #[test]
    fn byte_counts_pick_their_unit() {
        assert_eq!(fmt_bytes(0), "0 bytes");
        assert_eq!(fmt_bytes(1), "1 byte");
        assert_eq!(fmt_bytes(12 << 10), "12.0 KiB");
        assert_eq!(fmt_bytes(870 << 20), "870 MiB");
        assert_eq!(fmt_bytes(3 << 29), "1.50 GiB");
        assert_eq!(fmt_bytes(1 << 40), "1.00 TiB");
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(fmt_ns(850.0), "850 ns");
        assert_eq!(fmt_ns(0.052), "0.052 ns");
        assert_eq!(fmt_ns(4.26), "4.3 ns");
        assert_eq!(fmt_ns(0.0), "0.0 ns");
        assert_eq!(fmt_ns(3100.0), "3.10 µs");
        assert_eq!(fmt_ns(231_000.0), "231 µs");
        assert_eq!(fmt_ns(12_500_000.0), "12.5 ms");
        assert_eq!(fmt_ns(2.5e9), "2.50 s");
    }

    #[test]
    fn memory_sizes_as_the_record_shows_them() {
        assert_eq!(fmt_gib(3 << 29), "1.5 GiB");
        assert_eq!(fmt_memory(2 << 30), "2.0 GiB");
        assert_eq!(fmt_memory(512 << 20), "512 MiB");
        assert_eq!(fmt_memory((1 << 30) - 1), "1024 MiB");
    }

    #[test]
    fn counts_are_grouped() {
        assert_eq!(fmt_n(0.0), "0");
        assert_eq!(fmt_n(999.0), "999");
        assert_eq!(fmt_n(10_000.0), "10 000");
        assert_eq!(fmt_n(1_234_567.0), "1 234 567");
    }
}
