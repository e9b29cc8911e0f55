//! What a sysctl's name looks like, and the ranges the kernels hold the
//! values of the numeric sysctls the profiles use to: a profile asking for
//! a value outside them (`vm.swappiness = 1000`) is refused when it is read
//! — by `profile check` and before a run measures anything — instead of by
//! the kernel halfway through applying it. A sysctl not listed here may
//! have any value (the running kernel still judges it: `apply`).

use super::{Os, Wanted};

/// The largest value of a C `int`, where many sysctls are kept.
const INT_MAX: i128 = i32::MAX as i128;

/// The values a sysctl takes: `count` whole numbers (one, or a pair such
/// as a port range, low first when `ordered`), each from `least` to
/// `most`, as `source` states it.
struct Range {
    os: Os,
    name: &'static str,
    count: usize,
    least: i128,
    most: i128,
    ordered: bool,
    source: &'static str,
}

const fn one(os: Os, name: &'static str, least: i128, most: i128, source: &'static str) -> Range {
    Range {
        os,
        name,
        count: 1,
        least,
        most,
        ordered: false,
        source,
    }
}

/// Every numeric sysctl of the built-in profiles whose range the kernel
/// states (its documentation or the bounds of its sysctl table); those
/// kept in a C `int` with no other bound take what an `int` holds.
const RANGES: &[Range] = &[
    one(
        Os::Linux,
        "vm.swappiness",
        0,
        200,
        "Documentation/admin-guide/sysctl/vm.rst",
    ),
    one(Os::Linux, "vm.dirty_ratio", 0, 100, "a percentage (vm.rst)"),
    one(
        Os::Linux,
        "vm.dirty_background_ratio",
        0,
        100,
        "a percentage (vm.rst)",
    ),
    one(
        Os::Linux,
        "kernel.numa_balancing",
        0,
        3,
        "Documentation/admin-guide/sysctl/kernel.rst",
    ),
    one(
        Os::Linux,
        "net.ipv4.tcp_tw_reuse",
        0,
        2,
        "Documentation/networking/ip-sysctl.rst",
    ),
    one(
        Os::Linux,
        "net.core.somaxconn",
        0,
        INT_MAX,
        "net/core/sysctl_net_core.c",
    ),
    one(
        Os::Linux,
        "net.core.busy_read",
        0,
        INT_MAX,
        "net/core/sysctl_net_core.c",
    ),
    one(
        Os::Linux,
        "net.core.busy_poll",
        0,
        INT_MAX,
        "net/core/sysctl_net_core.c",
    ),
    one(
        Os::Linux,
        "net.core.netdev_max_backlog",
        -INT_MAX - 1,
        INT_MAX,
        "a C int",
    ),
    one(
        Os::Linux,
        "net.ipv4.tcp_max_syn_backlog",
        -INT_MAX - 1,
        INT_MAX,
        "a C int",
    ),
    one(
        Os::Linux,
        "net.ipv4.tcp_fastopen",
        -INT_MAX - 1,
        INT_MAX,
        "a C int",
    ),
    one(
        Os::Linux,
        "fs.file-max",
        0,
        i64::MAX as i128,
        "fs/file_table.c",
    ),
    Range {
        os: Os::Linux,
        name: "net.ipv4.ip_local_port_range",
        count: 2,
        least: 1,
        most: 65535,
        ordered: true,
        source: "ip-sysctl.rst: two ports, the first not above the second",
    },
    one(
        Os::FreeBsd,
        "kern.ipc.somaxconn",
        1,
        u32::MAX as i128 / 3,
        "sys/kern/uipc_socket.c",
    ),
];

/// Whether `name` is a sysctl's name: words of letters, digits, `_` and
/// `-` joined by single dots, at least two, the first starting with a
/// letter (`vm.swappiness`, `dev.cpu.0.cx_lowest`).
pub fn check_name(name: &str) -> Result<(), String> {
    let words: Vec<&str> = name.split('.').collect();
    let ok = words.len() >= 2
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && words.iter().all(|w| {
            !w.is_empty()
                && !w.starts_with('-')
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        });
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a sysctl name (words of letters, digits, `_` and `-` joined by dots: `vm.swappiness`)"
        ))
    }
}

/// Whether `wanted` is a value sysctl `name` of `os` can take, where its
/// range is known; when not, why, naming the sysctl and its range (the
/// caller names the value).
pub fn check_value(os: Os, name: &str, wanted: &Wanted) -> Result<(), String> {
    let Some(r) = RANGES.iter().find(|r| r.os == os && r.name == name) else {
        return Ok(());
    };
    let range = if r.count == 1 {
        format!("{} to {}", r.least, r.most)
    } else {
        format!(
            "{} numbers from {} to {}{}",
            r.count,
            r.least,
            r.most,
            if r.ordered {
                ", the first not above the second"
            } else {
                ""
            }
        )
    };
    let refused = |why: &str| Err(format!("{why}: {name} takes {range} ({})", r.source));
    let v = match wanted {
        Wanted::AtLeast(_) | Wanted::AtMost(_) if r.count > 1 => {
            return refused("a bound needs one number");
        }
        Wanted::AtLeast(b) if i128::from(*b) > r.most => return refused("out of range"),
        Wanted::AtMost(b) if i128::from(*b) < r.least => return refused("out of range"),
        Wanted::AtLeast(_) | Wanted::AtMost(_) => return Ok(()),
        Wanted::Exact(v) => v,
    };
    let words: Vec<&str> = v.split_whitespace().collect();
    let numbers: Vec<i128> = match words.iter().map(|w| w.parse::<i128>()).collect() {
        Ok(n) => n,
        Err(_) => return refused("not a whole number"),
    };
    if numbers.len() != r.count {
        return refused(&format!(
            "{} number{} given",
            numbers.len(),
            if numbers.len() == 1 { "" } else { "s" }
        ));
    }
    if numbers.iter().any(|n| !(r.least..=r.most).contains(n)) {
        return refused("out of range");
    }
    if r.ordered && numbers.windows(2).any(|p| p[0] > p[1]) {
        return refused("the first is above the second");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exact(v: &str) -> Wanted {
        Wanted::Exact(v.into())
    }

    #[test]
    fn sysctl_names_are_dotted_words() {
        for ok in [
            "vm.swappiness",
            "fs.file-max",
            "dev.cpu.0.cx_lowest",
            "machdep.mwait.CX.idle",
            "net.ipv4.conf.all.rp_filter",
        ] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in [
            "swappiness",
            "vm..swappiness",
            "vm.swappiness.",
            ".vm.swappiness",
            "0vm.x",
            "vm.-x",
            "vm/swappiness",
            "../x",
            "vm.swap piness",
            "",
        ] {
            let e = check_name(bad).unwrap_err();
            assert!(e.contains("is not a sysctl name"), "{bad}: {e}");
        }
    }

    #[test]
    fn values_outside_a_known_range_are_refused_naming_key_value_and_range() {
        let l = |n: &str, w: Wanted| check_value(Os::Linux, n, &w);
        let e = l("vm.swappiness", exact("1000")).unwrap_err();
        assert!(
            e.starts_with("out of range: vm.swappiness takes 0 to 200 ("),
            "{e}"
        );
        assert!(l("vm.swappiness", exact("200")).is_ok());
        assert!(l("vm.swappiness", exact("-1")).is_err());
        assert!(
            l("vm.swappiness", exact("lots"))
                .unwrap_err()
                .contains("not a whole number")
        );
        assert!(l("vm.swappiness", Wanted::AtLeast(300)).is_err());
        assert!(l("vm.swappiness", Wanted::AtMost(300)).is_ok());
        assert!(l("vm.dirty_ratio", exact("101")).is_err());
        assert!(l("net.ipv4.tcp_tw_reuse", exact("3")).is_err());
        assert!(l("net.core.somaxconn", exact("2147483648")).is_err());
        assert!(l("net.core.somaxconn", Wanted::AtLeast(4096)).is_ok());
        let ports = |v: &str| l("net.ipv4.ip_local_port_range", exact(v));
        assert!(ports("1024 65535").is_ok());
        assert!(ports("1024 65536").unwrap_err().contains("out of range"));
        assert!(ports("2000 1000").unwrap_err().contains("first is above"));
        assert!(ports("1024").unwrap_err().contains("1 number given"));
        assert!(
            l("net.ipv4.ip_local_port_range", Wanted::AtLeast(1))
                .unwrap_err()
                .contains("a bound needs one number")
        );
        // Unknown to the table: any value (the kernel judges it).
        assert!(l("vm.frobnicate", exact("99999999999999")).is_ok());
        // Another OS's sysctl of the same name is not this one.
        assert!(check_value(Os::FreeBsd, "vm.swappiness", &exact("1000")).is_ok());
        assert!(check_value(Os::FreeBsd, "kern.ipc.somaxconn", &exact("0")).is_err());
    }
}
