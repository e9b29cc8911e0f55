//! Collects the [`SystemInfo`] a result file carries.

use super::{Cpu, FilesystemInfo, KernelConfig, Limit, SystemInfo, Virtualization, WorkdirInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use sys::{self, CpuTicks, Knob, Rlimit};

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

/// What a run asks to have recorded beyond the usual.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extra<'a> {
    /// Further directories the run uses (`run --dir`): their filesystems
    /// go into `system.filesystems`.
    pub dirs: &'a [PathBuf],
    /// Further sysctls to record in `system.sysctls` (`--record-sysctl`).
    pub sysctls: &'a [String],
}

/// The filesystems that hold `dirs`, each once (by mount point, the first
/// directory on it named); directories whose filesystem cannot be found
/// are left out.
pub fn filesystems<'a>(dirs: impl IntoIterator<Item = &'a Path>) -> Vec<FilesystemInfo> {
    let mut v: Vec<FilesystemInfo> = Vec::new();
    for d in dirs {
        let Some(m) = sys::mount_of(d) else { continue };
        if v.iter().any(|f| f.mount_point == m.mount_point) {
            continue;
        }
        v.push(FilesystemInfo {
            path: d.display().to_string(),
            fs_type: m.fs_type,
            mount_point: m.mount_point,
            block: sys::hardware::block_device(&m.device).ok(),
            device: m.device,
            mount_options: m.options,
        });
    }
    v
}

/// The sysctls `names` (each split at commas) by name, and the names this
/// system does not have.
pub fn named_sysctls(names: &[String]) -> (BTreeMap<String, String>, Vec<String>) {
    let mut found = BTreeMap::new();
    let mut absent: Vec<String> = Vec::new();
    for n in names.iter().flat_map(|n| n.split(',')).map(str::trim) {
        if n.is_empty() || found.contains_key(n) || absent.iter().any(|a| a == n) {
            continue;
        }
        match sys::sysctl(n) {
            Some(v) => {
                found.insert(n.to_string(), v);
            }
            None => absent.push(n.to_string()),
        }
    }
    (found, absent)
}

/// Collects everything about this machine; `dir` is the work directory.
/// A sysctl of `extra` that this system does not have is named on
/// standard error and left out of the record.
pub fn collect(dir: Option<&Path>, extra: &Extra) -> SystemInfo {
    let u = sys::uname();
    let mut sysctls = sysctls(&RECORDED_KNOBS);
    let (named, absent) = named_sysctls(extra.sysctls);
    for n in absent {
        sys::say!("note: --record-sysctl {n}: no such sysctl here (recorded as absent)");
    }
    sysctls.extend(named);
    let mut tuning = sys::tuning();
    tuning.sysctls.retain(|k, _| !sysctls.contains_key(k));
    let kernel_config = kernel_config(&u.release);
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
            topology: sys::hardware::cpu_topology(),
        },
        memory_bytes: sys::memory_bytes(),
        libc: sys::libc_version(),
        limits: limits(),
        sysctls,
        workdir: dir.map(workdir),
        filesystems: filesystems(
            dir.into_iter()
                .chain(extra.dirs.iter().map(PathBuf::as_path)),
        ),
        tuning,
        virtualization: Some(virtualization(sys::hypervisor_signature())),
        kernel_config,
        kernel_package: None,
    }
}

/// The CPUID signature of QEMU's TCG emulator.
pub const TCG_SIGNATURE: &str = "TCGTCGTCGTCG";

/// How this system runs, as it can tell for itself from the hypervisor its
/// CPU names: `tcg` and emulated when that is QEMU's TCG emulator, else
/// `native` (the machine as found, perhaps a virtual machine).
pub fn virtualization(hypervisor: Option<String>) -> Virtualization {
    let tcg = hypervisor.as_deref() == Some(TCG_SIGNATURE);
    Virtualization {
        kind: if tcg { "tcg" } else { "native" }.into(),
        emulated: tcg,
        reason: tcg.then(|| "the CPU names QEMU's TCG emulator".into()),
        hypervisor,
        vcpu_pins: Vec::new(),
        clock: None,
        icount_shift: None,
        rtc_base: None,
    }
}

/// The running kernel's build configuration, where the OS has one
/// ([`sys::kernel_config`]); `None` where it has none or nothing in it is
/// an option.
pub fn kernel_config(release: &str) -> Option<KernelConfig> {
    let (source, text) = sys::kernel_config(release)?;
    let options = config_options(&text);
    (!options.is_empty()).then_some(KernelConfig { source, options })
}

/// The options set in a kernel configuration's text: its `CONFIG_X=value`
/// lines (`# CONFIG_Y is not set`, comments and anything else left out).
pub fn config_options(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (name, value) = l.trim_end().split_once('=')?;
            let ok = name.strip_prefix("CONFIG_").is_some_and(|rest| {
                !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            });
            ok.then(|| (name.to_string(), value.to_string()))
        })
        .collect()
}

/// The CPU counters at the start of a stretch of time, to say how much of
/// it the hypervisor stole ([`sys::steal_percent`]).
#[derive(Debug, Clone)]
pub struct StealMeter(Option<Vec<CpuTicks>>);

impl StealMeter {
    /// Reads the counters now.
    pub fn start() -> StealMeter {
        StealMeter(sys::cpu_ticks())
    }

    /// The share stolen since [`StealMeter::start`], in percent; `None`
    /// where the OS has no steal counter.
    pub fn percent(&self) -> Option<f64> {
        sys::steal_percent(self.0.as_deref()?, &sys::cpu_ticks()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collects_the_essentials() {
        let dir = tempfile::tempdir().unwrap();
        let s = collect(Some(dir.path()), &Extra::default());
        assert!(!s.os.is_empty() && !s.os_release.is_empty());
        assert!(s.cpu.count >= 1);
        assert!(s.limits.contains_key("RLIMIT_NOFILE"));
        let w = s.workdir.unwrap();
        assert!(!w.fs_type.is_empty(), "{w:?}");
        assert!(w.free_bytes.is_some());
        assert_eq!(s.filesystems.len(), 1, "{:?}", s.filesystems);
        assert_eq!(s.filesystems[0].mount_point, w.mount_point);
    }

    #[test]
    fn extra_dirs_add_their_filesystems_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = [
            PathBuf::from("/proc"),
            PathBuf::from("/"),
            dir.path().into(),
        ];
        let extra = Extra {
            dirs: &dirs,
            ..Default::default()
        };
        let s = collect(Some(dir.path()), &extra);
        let points: Vec<&str> = s
            .filesystems
            .iter()
            .map(|f| f.mount_point.as_str())
            .collect();
        let mut unique = points.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(points.len(), unique.len(), "{points:?}");
        // The work directory first, named by its own path.
        assert_eq!(s.filesystems[0].path, dir.path().display().to_string());
        assert!(points.contains(&"/"), "{points:?}");
        if cfg!(target_os = "linux") {
            let proc_fs = s.filesystems.iter().find(|f| f.mount_point == "/proc");
            assert_eq!(
                proc_fs.map(|f| f.fs_type.as_str()),
                Some("proc"),
                "{points:?}"
            );
        }
        assert_eq!(filesystems([Path::new("/nonexistent/dir")]), vec![]);
    }

    #[test]
    fn named_sysctls_are_recorded_and_unknown_ones_left_out() {
        let name = if cfg!(target_os = "linux") {
            "kernel.ostype"
        } else {
            "kern.ostype"
        };
        let (found, absent) = named_sysctls(&[format!("{name}, kernel.nosuch"), name.into()]);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(!found[name].is_empty(), "{found:?}");
        assert_eq!(absent, ["kernel.nosuch"]);
        let extra = Extra {
            sysctls: &[name.to_string()],
            ..Default::default()
        };
        let s = collect(None, &extra);
        assert!(s.sysctls.contains_key(name));
        assert!(!s.tuning.sysctls.contains_key(name));
    }

    #[test]
    fn config_options_keep_only_options_set() {
        let text = "#\n# Automatically generated file; DO NOT EDIT.\nCONFIG_CC_VERSION_TEXT=\"gcc (Debian 12.2.0-14) 12.2.0\"\nCONFIG_SMP=y\n# CONFIG_PREEMPT is not set\nCONFIG_NR_CPUS=64 \n\nCONFIG_=y\nCONFIG_BAD-NAME=y\nNOT_CONFIG=y\nCONFIG_EMPTY=\n";
        let o = config_options(text);
        assert_eq!(o.len(), 4, "{o:?}");
        assert_eq!(o["CONFIG_SMP"], "y");
        assert_eq!(o["CONFIG_NR_CPUS"], "64");
        assert_eq!(o["CONFIG_EMPTY"], "");
        assert_eq!(
            o["CONFIG_CC_VERSION_TEXT"],
            "\"gcc (Debian 12.2.0-14) 12.2.0\""
        );
        assert!(!o.contains_key("CONFIG_PREEMPT"));
    }

    #[test]
    fn a_tcg_cpu_is_emulated_and_any_other_is_native() {
        let v = virtualization(Some(TCG_SIGNATURE.into()));
        assert_eq!((v.kind.as_str(), v.emulated), ("tcg", true));
        assert_eq!(
            v.reason.as_deref(),
            Some("the CPU names QEMU's TCG emulator")
        );
        for h in [Some("KVMKVMKVM"), Some("Microsoft Hv"), None] {
            let v = virtualization(h.map(str::to_string));
            assert_eq!((v.kind.as_str(), v.emulated), ("native", false), "{h:?}");
            assert_eq!(v.hypervisor.as_deref(), h);
            assert_eq!(v.reason, None);
        }
    }

    #[test]
    fn the_record_names_this_machines_virtualization_and_kernel_config() {
        let s = collect(None, &Extra::default());
        let v = s.virtualization.expect("always recorded");
        assert_eq!(v.hypervisor, sys::hypervisor_signature());
        assert_eq!(v.emulated, v.hypervisor.as_deref() == Some(TCG_SIGNATURE));
        // The CPU's word agrees with what the OS read of it.
        if cfg!(target_os = "linux") && cfg!(target_arch = "x86_64") {
            let flags = std::fs::read_to_string("/proc/cpuinfo").unwrap();
            let under = flags
                .lines()
                .find(|l| l.starts_with("flags"))
                .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
            assert_eq!(v.hypervisor.is_some(), under, "{v:?}");
        }
        // Where the kernel keeps its configuration, it is recorded whole.
        let found = sys::kernel_config(&s.os_release);
        assert_eq!(s.kernel_config.is_some(), found.is_some());
        if let (Some(k), Some((source, text))) = (s.kernel_config, found) {
            assert_eq!(k.source, source);
            let set = text.lines().filter(|l| l.starts_with("CONFIG_")).count();
            assert_eq!(k.options.len(), set, "{source}");
        }
    }

    #[test]
    fn a_steal_meter_reads_a_share_or_nothing() {
        let m = StealMeter::start();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let p = m.percent();
        assert!(p.is_none_or(|p| (0.0..=100.0).contains(&p)), "{p:?}");
        assert_eq!(p.is_some(), cfg!(target_os = "linux"));
    }

    #[test]
    fn a_system_record_without_tuning_still_loads_and_round_trips() {
        let mut v = serde_json::to_value(collect(None, &Extra::default())).unwrap();
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
