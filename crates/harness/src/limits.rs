//! Resource limits: raising what may be raised, restoring it afterwards,
//! and working out how many items of each resource a benchmark can hold
//! (its *budget*), with the limit that sets it named in words.

use super::Resource;
use std::collections::BTreeMap;
use sys::{self, Rlimit};

/// Restores the limits it saved when dropped.
pub struct LimitGuard {
    saved: Vec<(Rlimit, sys::LimitPair)>,
    /// What raising did, in words (for the log).
    pub notes: Vec<String>,
}

impl Drop for LimitGuard {
    fn drop(&mut self) {
        for (r, v) in self.saved.iter().rev() {
            let _ = sys::set_rlimit(*r, *v);
        }
    }
}

/// Raises RLIMIT_NOFILE and RLIMIT_NPROC as far as allowed: the hard limit
/// to the kernel's ceiling where permitted, the soft limit to the hard one.
pub fn raise() -> LimitGuard {
    let mut guard = LimitGuard {
        saved: Vec::new(),
        notes: Vec::new(),
    };
    for r in [Rlimit::Files, Rlimit::Processes] {
        let Some(old) = sys::get_rlimit(r) else {
            continue;
        };
        guard.saved.push((r, old));
        let mut hard = old.1;
        if r == Rlimit::Files {
            // Try the kernel ceiling (needs privilege); fall back silently.
            let ceiling = ["fs.nr_open", "kern.maxfilesperproc"]
                .iter()
                .find_map(|k| sys::sysctl(k)?.trim().parse::<u64>().ok());
            if let (Some(c), Some(h)) = (ceiling, hard)
                && c > h
                && sys::set_rlimit(r, (Some(c), Some(c))).is_ok()
            {
                guard
                    .notes
                    .push(format!("{} hard limit raised {h} → {c}", r.name()));
                hard = Some(c);
            }
            if hard.is_none() {
                // Unlimited hard limit (macOS): the soft limit may not exceed
                // the per-process ceiling.
                hard = ceiling;
            }
        }
        if hard != old.0 && sys::set_rlimit(r, (hard, sys::get_rlimit(r).and_then(|x| x.1))).is_ok()
        {
            guard.notes.push(format!(
                "{} soft limit raised {} → {}",
                r.name(),
                fmt_limit(old.0),
                fmt_limit(hard)
            ));
        }
    }
    guard
}

fn fmt_limit(v: Option<u64>) -> String {
    v.map_or("unlimited".into(), |x| x.to_string())
}

/// How many items of a resource can be held, and what sets that number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Items that can still be taken.
    pub max: u64,
    /// The limit in words.
    pub reason: String,
}

/// Headroom kept free for the harness itself (descriptors for the result
/// file, pipes, …).
const RESERVE: u64 = 32;

/// The budget for one resource right now, `None` when nothing known
/// limits it.
pub fn budget(resource: Resource) -> Option<Budget> {
    match resource {
        Resource::Descriptors => {
            let (soft, hard) = sys::get_rlimit(Rlimit::Files)?;
            let soft = soft?;
            let open = sys::count_open_fds() as u64;
            let hard_note = match hard {
                Some(h) if h == soft => {
                    " (= hard limit; raising the hard limit needs root with CAP_SYS_RESOURCE)"
                        .to_string()
                }
                Some(h) => format!(" (hard {h})"),
                None => String::new(),
            };
            Some(Budget {
                max: soft.saturating_sub(open + RESERVE),
                reason: format!(
                    "open-files limit RLIMIT_NOFILE {soft}{hard_note}, {open} already open"
                ),
            })
        }
        Resource::Processes => {
            let mut best: Option<Budget> = None;
            let mut consider = |max: u64, reason: String| {
                if best.as_ref().is_none_or(|b| max < b.max) {
                    best = Some(Budget { max, reason });
                }
            };
            // SAFETY: geteuid has no preconditions.
            let root = unsafe { libc::geteuid() } == 0;
            if let Some((Some(soft), _)) = sys::get_rlimit(Rlimit::Processes) {
                // Linux exempts root from RLIMIT_NPROC.
                if !(root && cfg!(target_os = "linux")) {
                    consider(
                        soft.saturating_sub(256),
                        format!("process limit RLIMIT_NPROC {soft}"),
                    );
                }
            }
            if let Some((ceiling, name)) = sys::process_ceiling() {
                let running = sys::count_processes();
                let used = running.unwrap_or(256) + 64;
                consider(
                    ceiling.saturating_sub(used),
                    format!(
                        "{name} = {ceiling}{}",
                        running.map_or(String::new(), |r| format!(", {r} processes running"))
                    ),
                );
            }
            best
        }
        Resource::Ports => {
            let (a, b) = sys::port_range()?;
            let names = sys::knob_names(sys::Knob::PortRange).join(", ");
            let size = u64::from(b - a + 1);
            Some(Budget {
                max: size.saturating_sub(64),
                reason: format!("ephemeral port range {a}–{b} ({names}): {size} ports"),
            })
        }
        Resource::Mappings => {
            let (ceiling, name) = sys::mapping_ceiling()?;
            let used = sys::count_mappings().unwrap_or(0) as u64;
            Some(Budget {
                max: ceiling.saturating_sub(used + 1024),
                reason: format!("{name} = {ceiling}, {used} mappings in use"),
            })
        }
    }
}

/// The limits and sysctls that matter for a benchmark that holds `uses`
/// and depends on `knobs`, as they are now.
pub fn environment(uses: &[Resource], knobs: &[sys::Knob]) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for r in uses {
        let rl = match r {
            Resource::Descriptors => Some(Rlimit::Files),
            Resource::Processes => Some(Rlimit::Processes),
            _ => None,
        };
        if let Some(rl) = rl
            && let Some((s, h)) = sys::get_rlimit(rl)
        {
            env.insert(
                rl.name().to_string(),
                format!("{} / {}", fmt_limit(s), fmt_limit(h)),
            );
        }
    }
    for k in knobs {
        env.extend(sys::knob_values(*k));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raise_then_restore() {
        let before = sys::get_rlimit(Rlimit::Files).unwrap();
        {
            let _g = raise();
            let during = sys::get_rlimit(Rlimit::Files).unwrap();
            assert_eq!(during.0, during.1.or(during.0), "soft raised to hard");
        }
        assert_eq!(sys::get_rlimit(Rlimit::Files).unwrap(), before);
    }

    #[test]
    fn descriptor_budget_names_the_limit() {
        let b = budget(Resource::Descriptors).unwrap();
        assert!(b.reason.contains("RLIMIT_NOFILE"), "{}", b.reason);
        assert!(b.max > 0);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn port_budget_uses_the_range() {
        let b = budget(Resource::Ports).unwrap();
        assert!(b.reason.contains("ip_local_port_range"), "{}", b.reason);
    }
}
