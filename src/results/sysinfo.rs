//! Collects the [`SystemInfo`] a result file carries.

use super::{Cpu, Limit, SystemInfo, WorkdirInfo};
use crate::sys::{self, Knob, Rlimit};
use std::collections::BTreeMap;
use std::path::Path;

/// Every knob recorded in a result file's `system.sysctls`.
pub const RECORDED_KNOBS: [Knob; 10] = [
    Knob::FilesSystem,
    Knob::FilesPerProcess,
    Knob::PortRange,
    Knob::Processes,
    Knob::ProcessesPerUser,
    Knob::Mappings,
    Knob::ListenBacklog,
    Knob::TimeWaitReuse,
    Knob::TimeWaitBuckets,
    Knob::SegmentLifetime,
];

/// Current resource limits, by C name.
pub fn limits() -> BTreeMap<String, Limit> {
    Rlimit::ALL
        .iter()
        .filter_map(|&r| {
            let (soft, hard) = sys::get_rlimit(r)?;
            Some((r.name().to_string(), Limit { soft, hard }))
        })
        .collect()
}

/// Values of the given knobs, by OS-specific sysctl name.
pub fn sysctls(knobs: &[Knob]) -> BTreeMap<String, String> {
    knobs.iter().flat_map(|k| sys::knob_values(*k)).collect()
}

/// Describes the filesystem holding `dir`.
pub fn workdir(dir: &Path) -> WorkdirInfo {
    let m = sys::mount_of(dir).unwrap_or_default();
    WorkdirInfo {
        path: dir.display().to_string(),
        fs_type: m.fs_type,
        mount_point: m.mount_point,
        device: m.device,
        mount_options: m.options,
        free_bytes: sys::free_bytes(dir),
    }
}

/// Collects everything about this machine; `dir` is the work directory.
pub fn collect(dir: Option<&Path>) -> SystemInfo {
    let u = sys::uname();
    let sysctls = sysctls(&RECORDED_KNOBS);
    let mut tuning = sys::tuning();
    tuning.sysctls.retain(|k, _| !sysctls.contains_key(k));
    SystemInfo {
        os: u.sysname,
        os_release: u.release,
        os_version: u.version,
        arch: std::env::consts::ARCH.to_string(),
        hostname: u.nodename,
        cpu: Cpu {
            model: sys::cpu_model(),
            count: sys::cpu_count(),
            mhz: sys::cpu_mhz(),
        },
        memory_bytes: sys::memory_bytes(),
        libc: sys::libc_version(),
        limits: limits(),
        sysctls,
        workdir: dir.map(workdir),
        tuning,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_the_essentials() {
        let dir = tempfile::tempdir().unwrap();
        let s = collect(Some(dir.path()));
        assert!(!s.os.is_empty() && !s.os_release.is_empty());
        assert!(s.cpu.count >= 1);
        assert!(s.limits.contains_key("RLIMIT_NOFILE"));
        let w = s.workdir.unwrap();
        assert!(!w.fs_type.is_empty(), "{w:?}");
        assert!(w.free_bytes.is_some());
    }

    #[test]
    fn a_system_record_without_tuning_still_loads_and_round_trips() {
        let mut v = serde_json::to_value(collect(None)).unwrap();
        v.as_object_mut().unwrap().remove("tuning");
        let s: SystemInfo = serde_json::from_value(v).unwrap();
        assert_eq!(s.tuning, Default::default());
        // An empty record is written as an empty object.
        assert_eq!(
            serde_json::to_value(&s).unwrap()["tuning"],
            serde_json::json!({})
        );
    }
}
