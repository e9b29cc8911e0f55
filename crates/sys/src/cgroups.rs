//! Linux: the cgroup limits that cap this process, read from the cgroup
//! filesystems (`/proc/self/cgroup` says which cgroup of each hierarchy
//! this process is in, `/proc/self/mountinfo` where each hierarchy is
//! mounted). A limit anywhere between the process's cgroup and the root
//! caps it, so the tightest of them is recorded.
//!
//! cgroup v2 (the unified hierarchy): `pids.max`, `cpu.max`, `memory.max`
//! and `memory.high`, `max` meaning none. cgroup v1: the `pids`
//! controller's `pids.max`, the `cpu` controller's `cpu.cfs_quota_us` over
//! `cpu.cfs_period_us` (a quota of -1 is none), the `memory` controller's
//! `memory.limit_in_bytes` (values of 2^62 and above are the kernel's
//! "unlimited", rounded down to a page: 9223372036854771712). On a hybrid
//! system both count.

use super::tuning::CgroupLimits;
use std::path::{Path, PathBuf};

/// v1 values this high mean no limit.
const V1_UNLIMITED: u64 = 1 << 62;

/// A mounted cgroup hierarchy.
#[derive(Debug, Clone, PartialEq)]
struct CgroupMount {
    /// The cgroup of the hierarchy mounted there (`/` usually; a cgroup's
    /// own path in a container that mounts only its own cgroup).
    root: String,
    /// Where.
    mount_point: PathBuf,
    /// cgroup v2 (`cgroup2`), else v1.
    v2: bool,
    /// v1: the controllers of the hierarchy (`cpu`, `cpuacct`, …), from
    /// the super options.
    controllers: Vec<String>,
}

/// The cgroup mounts of a mountinfo text.
fn parse_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let l: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            let v2 = match *r.first()? {
                "cgroup2" => true,
                "cgroup" => false,
                _ => return None,
            };
            Some(CgroupMount {
                root: super::mountinfo::unescape(l.get(3)?),
                mount_point: PathBuf::from(super::mountinfo::unescape(l.get(4)?)),
                v2,
                controllers: r
                    .get(2)
                    .map(|o| o.split(',').map(str::to_string).collect())
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// The lines of /proc/self/cgroup as (controllers, path): `4:memory:/a/b`
/// is (["memory"], "/a/b"); the v2 line `0::/a` has no controllers.
fn parse_membership(cgroup: &str) -> Vec<(Vec<String>, String)> {
    cgroup
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_id, ctrl, path) = (f.next()?, f.next()?, f.next()?);
            let ctrl = ctrl
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect();
            Some((ctrl, path.to_string()))
        })
        .collect()
}

/// The directories of the cgroup at `path` and of each ancestor up to the
/// mount's root, innermost first; empty when the cgroup lies outside what
/// is mounted.
fn chain(m: &CgroupMount, path: &str) -> Vec<PathBuf> {
    let Ok(rel) = Path::new(path).strip_prefix(&m.root) else {
        return Vec::new();
    };
    let mut dir = m.mount_point.join(rel);
    let mut v = vec![dir.clone()];
    while dir != m.mount_point && dir.pop() {
        v.push(dir.clone());
    }
    v
}

/// A number, or `None` for `max` or anything else.
fn number(s: &str) -> Option<u64> {
    s.trim().parse().ok()
}

/// v2 `cpu.max` (`50000 100000`, `max 100000`) as CPUs.
fn cpu_max(s: &str) -> Option<f64> {
    let mut f = s.split_whitespace();
    let quota: f64 = f.next()?.parse().ok()?;
    let period: f64 = f.next().map_or(Some(100_000.0), |p| p.parse().ok())?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// The limits of the cgroups `membership` names, read with `read` (a file's
/// contents) from the hierarchies `mountinfo` mounts.
fn limits_from(
    membership: &str,
    mountinfo: &str,
    read: &dyn Fn(&Path) -> Option<String>,
) -> CgroupLimits {
    fn tighter<T: PartialOrd>(a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b < a { b } else { a }),
            (a, b) => a.or(b),
        }
    }
    let mounts = parse_mounts(mountinfo);
    let mut out = CgroupLimits::default();
    for (ctrl, path) in parse_membership(membership) {
        let v2 = ctrl.is_empty();
        for m in mounts
            .iter()
            .filter(|m| m.v2 == v2 && (v2 || ctrl.iter().any(|c| m.controllers.contains(c))))
        {
            let has = |c: &str| v2 || m.controllers.iter().any(|x| x == c);
            for dir in chain(m, &path) {
                let get = |f: &str| read(&dir.join(f));
                if has("pids") {
                    out.pids = tighter(out.pids, get("pids.max").as_deref().and_then(number));
                }
                if v2 {
                    out.cpus = tighter(out.cpus, get("cpu.max").as_deref().and_then(cpu_max));
                    for f in ["memory.max", "memory.high"] {
                        out.memory_bytes =
                            tighter(out.memory_bytes, get(f).as_deref().and_then(number));
                    }
                    continue;
                }
                if has("cpu") {
                    let quota = get("cpu.cfs_quota_us").and_then(|q| q.trim().parse::<i64>().ok());
                    let period = get("cpu.cfs_period_us").as_deref().and_then(number);
                    if let (Some(q), Some(p)) = (quota, period)
                        && q > 0
                        && p > 0
                    {
                        out.cpus = tighter(out.cpus, Some(q as f64 / p as f64));
                    }
                }
                if has("memory") {
                    let limit = get("memory.limit_in_bytes")
                        .as_deref()
                        .and_then(number)
                        .filter(|&b| b < V1_UNLIMITED);
                    out.memory_bytes = tighter(out.memory_bytes, limit);
                }
            }
        }
    }
    out
}

/// The cgroup limits that cap this process; `None` without cgroups.
pub fn cgroup_limits() -> Option<CgroupLimits> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    Some(limits_from(&membership, &mountinfo, &|p| {
        std::fs::read_to_string(p).ok()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn reader(files: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let m: HashMap<PathBuf, String> = files
            .iter()
            .map(|(p, v)| (PathBuf::from(p), format!("{v}\n")))
            .collect();
        move |p: &Path| m.get(p).cloned()
    }

    /// This machine's layout: v1 controllers, an empty unified hierarchy.
    const V1_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    const V1_MEMBERSHIP: &str = "\
9:name=systemd:/
8:pids:/user.slice
4:memory:/process_api/da02
1:cpu,cpuacct:/jobs/a
0::/
";

    #[test]
    fn v1_limits_are_read_up_to_the_root_and_the_tightest_wins() {
        let read = reader(&[
            ("/sys/fs/cgroup/pids/user.slice/pids.max", "max"),
            ("/sys/fs/cgroup/pids/pids.max", "4000"),
            (
                "/sys/fs/cgroup/memory/process_api/da02/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "2147483648",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.cfs_quota_us", "-1"),
            (
                "/sys/fs/cgroup/cpu,cpuacct/jobs/a/cpu.cfs_period_us",
                "100000",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/jobs/cpu.cfs_quota_us", "150000"),
            (
                "/sys/fs/cgroup/cpu,cpuacct/jobs/cpu.cfs_period_us",
                "100000",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1"),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000"),
        ]);
        let l = limits_from(V1_MEMBERSHIP, V1_MOUNTS, &read);
        assert_eq!(
            l,
            CgroupLimits {
                pids: Some(4000),
                cpus: Some(1.5),
                memory_bytes: Some(2 << 30),
            }
        );
    }

    #[test]
    fn unlimited_v1_values_cap_nothing() {
        let read = reader(&[
            (
                "/sys/fs/cgroup/memory/process_api/da02/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854775807",
            ),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1"),
            ("/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000"),
            ("/sys/fs/cgroup/pids/user.slice/pids.max", "max"),
        ]);
        let l = limits_from(V1_MEMBERSHIP, V1_MOUNTS, &read);
        assert_eq!(l, CgroupLimits::default());
        assert!(CgroupLimits::nothing_caps(&Some(l)));
    }

    #[test]
    fn v2_limits_take_the_tightest_of_max_and_high_over_the_ancestors() {
        let mounts = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let membership = "0::/system.slice/bench.service\n";
        let read = reader(&[
            ("/sys/fs/cgroup/system.slice/bench.service/pids.max", "max"),
            (
                "/sys/fs/cgroup/system.slice/bench.service/cpu.max",
                "max 100000",
            ),
            (
                "/sys/fs/cgroup/system.slice/bench.service/memory.max",
                "max",
            ),
            (
                "/sys/fs/cgroup/system.slice/bench.service/memory.high",
                "1073741824",
            ),
            ("/sys/fs/cgroup/system.slice/pids.max", "512"),
            ("/sys/fs/cgroup/system.slice/cpu.max", "50000 100000"),
            ("/sys/fs/cgroup/system.slice/memory.max", "4294967296"),
        ]);
        let l = limits_from(membership, mounts, &read);
        assert_eq!(
            l,
            CgroupLimits {
                pids: Some(512),
                cpus: Some(0.5),
                memory_bytes: Some(1 << 30),
            }
        );
    }

    #[test]
    fn a_container_mounting_its_own_cgroup_reads_it_at_the_mount_point() {
        // The mount's root is the container's cgroup; /proc/self/cgroup
        // names it in full (no cgroup namespace).
        let mounts = "30 23 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let read = reader(&[("/sys/fs/cgroup/cpu.max", "200000 100000")]);
        let l = limits_from("0::/docker/abc\n", mounts, &read);
        assert_eq!(l.cpus, Some(2.0));
        // A cgroup outside what is mounted is not guessed at.
        let l = limits_from("0::/elsewhere\n", mounts, &read);
        assert_eq!(l, CgroupLimits::default());
    }

    #[test]
    fn membership_and_mounts_parse() {
        assert_eq!(
            parse_membership("4:memory:/a/b\n0::/\n12:cpu,cpuacct:/x:y\n"),
            vec![
                (vec!["memory".to_string()], "/a/b".to_string()),
                (vec![], "/".to_string()),
                (vec!["cpu".into(), "cpuacct".into()], "/x:y".to_string()),
            ]
        );
        let m = parse_mounts(V1_MOUNTS);
        assert_eq!(m.len(), 5, "{m:?}");
        assert!(m[0].controllers.contains(&"cpuacct".to_string()) && !m[0].v2);
        assert!(m[4].v2);
        assert_eq!(cpu_max("max"), None);
        assert_eq!(cpu_max("250000 100000"), Some(2.5));
    }

    #[test]
    fn this_process_cgroups_are_read() {
        let l = cgroup_limits().expect("/proc/self/cgroup on Linux");
        // Whatever caps this machine's tests, a cap is a sane number.
        assert!(l.cpus.is_none_or(|c| c > 0.0), "{l:?}");
        assert!(l.memory_bytes.is_none_or(|b| b < V1_UNLIMITED), "{l:?}");
    }
}
