//! Everything that differs between operating systems, in one place.
//!
//! The rest of scalebench asks this module abstract questions ("what is the
//! ephemeral port range?", "which filesystem holds this path?") and gets an
//! answer or `None`; the `cfg` branches live here and nowhere else. Linux
//! reads `/proc`; the BSDs and macOS ask `sysctl` and `statfs(2)` (and
//! macOS Mach for its CPU counters).

#![deny(missing_docs)]

use std::path::Path;

#[cfg(any(target_os = "linux", target_os = "android"))]
mod linux;
#[cfg(any(target_os = "linux", target_os = "android"))]
use linux as os;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod cgroups;
#[cfg(target_os = "linux")]
pub mod guest;
#[cfg(target_os = "linux")]
pub use guest::pin_thread;

/// Pins a thread to a CPU: Linux only here (QEMU's vCPU threads).
#[cfg(not(target_os = "linux"))]
pub fn pin_thread(tid: i32, cpu: usize) -> std::io::Result<()> {
    let _ = (tid, cpu);
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "pinning another thread is built for Linux only",
    ))
}

/// Whether the kernel's random number generator is seeded, waiting for
/// it up to `limit`: at once on any machine that has run a while; a
/// system just booted (a guest under emulation) may take seconds, and
/// until then every random draw in the kernel costs more than on a
/// running machine ([`guest::crng_seeded`]). `None` where not asked
/// (other systems than Linux).
pub fn random_seeded(limit: std::time::Duration) -> Option<bool> {
    #[cfg(target_os = "linux")]
    {
        Some(guest::crng_seeded(limit))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = limit;
        None
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod guards;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod mountinfo;
#[cfg(any(target_os = "linux", target_os = "android"))]
mod nics;

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod bsd;
// The CPU counters of the systems that `bsd.rs` reads them on; built on
// Linux too, for its tests.
pub mod counters;
#[cfg(any(
    test,
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "netbsd",
    target_os = "openbsd",
    target_vendor = "apple"
))]
mod cpu_states;
pub mod filelock;
pub mod hardware;
pub mod ifaddrs;
pub mod memlimit;
pub mod netns;
pub mod procs;
pub mod stop;
pub mod storage;
pub mod swap;
pub mod tuning;
pub mod values;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
use bsd as os;

pub use os::{
    bind_address_no_port, count_mappings, cpu_clocks_mhz, cpu_mhz, cpu_model, cpu_ticks,
    defer_accept, die_with_parent, disk_attach, disk_detach, drop_caches, group_cpu_seconds,
    invariant_tsc, kernel_config, libc_version, make_fs, may_raise_hard_limits, memory_bytes,
    mount_fs, mount_of, open_beneath, pin_to_cpu, private_descriptor_table, process_alive,
    read_setting, release_mounts_under, remount, sendfile, set_child_subreaper, set_sysctl,
    setting_choices, setting_writable, sync_fs, sysctl_writable, time_wait_count, tuning,
    unmount_fs, whole_loopback_net, write_setting,
};

/// A system setting that is not a sysctl but that a tuning profile may
/// change (Linux sysfs files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    /// The CPU frequency governor of every CPU (`performance`).
    Governor,
    /// Transparent huge pages (`always`, `madvise`, `never`).
    TransparentHugepages,
}

impl Setting {
    /// Every setting.
    pub const ALL: [Setting; 2] = [Setting::Governor, Setting::TransparentHugepages];

    /// Its name in a profile file.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Governor => "cpu_governor",
            Setting::TransparentHugepages => "transparent_hugepages",
        }
    }
}

/// Whether this system's clock counts instructions rather than time: a
/// QEMU guest run under `-icount` by a scalebench, which says so on the
/// kernel command line (`scalebench.clock=instructions`; Linux, where a guest's kernel
/// command line is /proc/cmdline; false elsewhere).
pub fn clock_counts_instructions() -> bool {
    std::fs::read_to_string("/proc/cmdline").is_ok_and(|c| {
        c.split_whitespace()
            .any(|w| w == "scalebench.clock=instructions")
    })
}

/// A System V shared memory segment as `shmctl(IPC_STAT)` tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShmStat {
    /// Its key; `None` where this build cannot read a segment's key.
    pub key: Option<i64>,
    /// Processes attached to it.
    pub attached: u64,
    /// Its size.
    pub bytes: u64,
}

/// The System V shared memory segment `id`; `None` when there is none.
#[allow(clippy::unnecessary_cast)] // the field types differ between systems
pub fn shm_stat(id: i32) -> Option<ShmStat> {
    // SAFETY: shmctl IPC_STAT into a zeroed plain struct.
    let mut ds: libc::shmid_ds = unsafe { std::mem::zeroed() };
    if unsafe { libc::shmctl(id, libc::IPC_STAT, &mut ds) } != 0 {
        return None;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    let key = Some(i64::from(ds.shm_perm.__key));
    #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
    let key = Some(i64::from(ds.shm_perm.key));
    #[cfg(target_vendor = "apple")]
    let key = Some(i64::from(ds.shm_perm._key));
    #[cfg(not(any(
        all(target_os = "linux", target_env = "gnu"),
        target_os = "freebsd",
        target_os = "dragonfly",
        target_vendor = "apple"
    )))]
    let key = None;
    Some(ShmStat {
        key,
        attached: ds.shm_nattch as u64,
        bytes: ds.shm_segsz as u64,
    })
}

/// Removes the System V shared memory segment `id` if its key is `key`
/// and no process is attached: `Some(Ok(true))` removed, `Some(Ok(false))`
/// gone or not that one or in use, `None` where this build cannot read a
/// segment's key.
pub fn shm_remove_unused(id: i32, key: i64) -> Option<std::io::Result<bool>> {
    let Some(st) = shm_stat(id) else {
        return Some(Ok(false));
    };
    let found = st.key?;
    if found != key || st.attached != 0 {
        return Some(Ok(false));
    }
    // SAFETY: removing the segment named by the caller.
    if unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) } == 0 {
        Some(Ok(true))
    } else {
        Some(Err(std::io::Error::last_os_error()))
    }
}

/// `shmat`'s read-only flag (`<sys/shm.h>`; the libc crate lacks it for
/// NetBSD and OpenBSD, where it has the same value).
#[cfg(not(any(target_os = "netbsd", target_os = "openbsd")))]
const SHM_RDONLY: libc::c_int = libc::SHM_RDONLY;
#[cfg(any(target_os = "netbsd", target_os = "openbsd"))]
const SHM_RDONLY: libc::c_int = 0o10000;

/// The first `len` bytes (at most its size) of the System V shared
/// memory segment `id`, attached read-only for the copy.
pub fn shm_read(id: i32, len: usize) -> std::io::Result<Vec<u8>> {
    let st = shm_stat(id).ok_or_else(|| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let len = len.min(usize::try_from(st.bytes).unwrap_or(usize::MAX));
    // SAFETY: attaching read-only at an address the system chooses.
    let p = unsafe { libc::shmat(id, std::ptr::null(), SHM_RDONLY) };
    if p as isize == -1 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the segment is at least `len` bytes and mapped readable.
    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
    // SAFETY: detaching what was attached above.
    unsafe { libc::shmdt(p) };
    Ok(v)
}

/// The name of a POSIX shared memory object as a C string (`/NAME`).
fn posix_shm_name(name: &str) -> std::io::Result<std::ffi::CString> {
    std::ffi::CString::new(format!("/{name}"))
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))
}

/// The contents of the POSIX shared memory object `/NAME` (at most
/// `limit` bytes).
pub fn posix_shm_read(name: &str, limit: usize) -> std::io::Result<Vec<u8>> {
    let c = posix_shm_name(name)?;
    // SAFETY: opening read-only by a NUL-terminated name.
    let fd = unsafe { libc::shm_open(c.as_ptr(), libc::O_RDONLY, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just opened and is ours to close.
    let f = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    let len = usize::try_from(f.metadata()?.len())
        .unwrap_or(usize::MAX)
        .min(limit);
    if len == 0 {
        return Ok(Vec::new());
    }
    // SAFETY: mapping `len` bytes of the object read-only and shared.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&f),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `len` bytes are mapped readable at `p`.
    let v = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }.to_vec();
    // SAFETY: unmapping what was mapped above.
    unsafe { libc::munmap(p, len) };
    Ok(v)
}

/// Removes the POSIX shared memory object `/NAME`; `Ok(false)` when there
/// is none.
pub fn posix_shm_unlink(name: &str) -> std::io::Result<bool> {
    let c = posix_shm_name(name)?;
    // SAFETY: unlinking by a NUL-terminated name.
    if unsafe { libc::shm_unlink(c.as_ptr()) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::ENOENT) {
        Ok(false)
    } else {
        Err(e)
    }
}

unsafe extern "C" {
    #[cfg_attr(
        any(target_os = "linux", target_os = "android"),
        link_name = "__errno_location"
    )]
    #[cfg_attr(
        any(target_os = "freebsd", target_vendor = "apple"),
        link_name = "__error"
    )]
    #[cfg_attr(
        any(target_os = "netbsd", target_os = "openbsd"),
        link_name = "__errno"
    )]
    #[cfg_attr(target_os = "dragonfly", link_name = "__dfly_error")]
    fn errno_location() -> *mut libc::c_int;
}

/// This thread's errno (async-signal-safe: a signal handler saves it).
pub fn errno() -> i32 {
    // SAFETY: the C library returns this thread's errno slot.
    unsafe { *errno_location() }
}

/// Sets this thread's errno (a signal handler puts it back).
pub fn set_errno(v: i32) {
    // SAFETY: the C library returns this thread's errno slot.
    unsafe { *errno_location() = v };
}

/// Time one CPU has spent so far ([`cpu_ticks`]), in the OS's ticks
/// (microseconds on DragonFly): only shares of it count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTicks {
    /// Not idle (and not waiting for I/O).
    pub busy: u64,
    /// All of it.
    pub total: u64,
    /// Stolen by the hypervisor (the virtual CPU wanted to run and the
    /// host ran something else), a part of `busy` and `total`; `None`
    /// where the OS has no such counter (the BSDs, macOS, Linux before
    /// 2.6.11).
    pub steal: Option<u64>,
}

/// The share of CPU time, in percent of all the CPUs' time, stolen by the
/// hypervisor between two [`cpu_ticks`] readings, rounded to 0.01;
/// `None` without a steal counter, when the CPUs came or went between
/// the readings, or when no time passed.
pub fn steal_percent(before: &[CpuTicks], after: &[CpuTicks]) -> Option<f64> {
    if before.len() != after.len() {
        return None;
    }
    let sum = |v: &[CpuTicks]| -> Option<(u64, u64)> {
        v.iter().try_fold((0u64, 0u64), |(s, t), c| {
            Some((s.saturating_add(c.steal?), t.saturating_add(c.total)))
        })
    };
    let (s0, t0) = sum(before)?;
    let (s1, t1) = sum(after)?;
    let total = t1.checked_sub(t0).filter(|&t| t > 0)?;
    let steal = s1.checked_sub(s0)?.min(total);
    Some((steal as f64 / total as f64 * 10_000.0).round() / 100.0)
}

/// Whether scalebench can pin a process to a CPU on this OS ([`pin_to_cpu`]).
pub const CAN_PIN: bool = cfg!(any(target_os = "linux", target_os = "freebsd"));

/// Why [`CAN_PIN`] is false.
pub const NO_PINNING: &str = "CPU pinning is implemented for Linux and FreeBSD only";

/// Pins the calling thread to one CPU until dropped, then restores the
/// affinity it had.
pub struct PinGuard(os::SavedAffinity);

impl PinGuard {
    /// Pins to `cpu`; an error says why it is not possible here.
    pub fn new(cpu: usize) -> Result<PinGuard, String> {
        let saved = os::save_affinity().ok_or_else(|| NO_PINNING.to_string())?;
        pin_to_cpu(cpu).map_err(|e| format!("CPU {cpu}: {e}"))?;
        Ok(PinGuard(saved))
    }
}

impl Drop for PinGuard {
    fn drop(&mut self) {
        os::restore_affinity(&self.0);
    }
}

/// A kernel tunable that matters to some benchmark, named abstractly; each
/// OS maps it to its own sysctl names (see [`knob_names`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    /// System-wide open file limit.
    FilesSystem,
    /// Per-process open file ceiling.
    FilesPerProcess,
    /// Ephemeral (anonymous) port range used by bind(port 0).
    PortRange,
    /// System-wide process limit (or pid_max).
    Processes,
    /// Per-user process limit, where the OS has one.
    ProcessesPerUser,
    /// Memory mappings per process.
    Mappings,
    /// Listen backlog ceiling.
    ListenBacklog,
    /// Whether a new outgoing connection may take over a TIME_WAIT
    /// socket's port (Linux `tcp_tw_reuse`).
    TimeWaitReuse,
    /// Most TIME_WAIT sockets the system keeps (beyond it they are dropped
    /// at once).
    TimeWaitBuckets,
    /// The maximum segment lifetime TIME_WAIT lasts twice of (the BSDs'
    /// `net.inet.tcp.msl`; fixed at 60 s on Linux).
    SegmentLifetime,
}

/// The knobs that decide how many short-lived connections can be opened
/// and closed per second: the ephemeral port range and TIME_WAIT's length,
/// reuse and ceiling.
pub const TIME_WAIT_KNOBS: [Knob; 4] = [
    Knob::PortRange,
    Knob::TimeWaitReuse,
    Knob::TimeWaitBuckets,
    Knob::SegmentLifetime,
];

/// The OS-specific sysctl names that make up `knob` (empty when this OS has
/// no such tunable).
pub fn knob_names(knob: Knob) -> &'static [&'static str] {
    os::knob_names(knob)
}

/// Reads a sysctl by its OS-specific name (`kernel.pid_max`,
/// `kern.maxproc`, …); `None` when it does not exist or cannot be read.
pub fn sysctl(name: &str) -> Option<String> {
    os::sysctl(name)
}

/// The three load averages out of `/proc/loadavg` (`0.52 0.31 0.20 1/234
/// 5678`) or `vm.loadavg` (`{ 0.52 0.31 0.20 }`).
pub(crate) fn parse_load_average(s: &str) -> Option<[f64; 3]> {
    let mut v = s
        .split_whitespace()
        .filter(|w| *w != "{" && *w != "}")
        .map(|w| w.parse::<f64>().ok());
    Some([v.next()??, v.next()??, v.next()??])
}

/// The `n` busiest processes but `skip` out of `ps -A -o pid=,pcpu=,comm=`
/// (`  123  12.5 /usr/sbin/foo`), busiest first, leaving out the idle ones.
#[cfg(any(test, not(any(target_os = "linux", target_os = "android"))))]
pub(crate) fn parse_ps_busiest(out: &str, skip: u32, n: usize) -> Vec<self::tuning::BusyProcess> {
    let mut v: Vec<self::tuning::BusyProcess> = out
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let pid: u32 = f.next()?.parse().ok()?;
            let percent: f64 = f.next()?.replace(',', ".").parse().ok()?;
            let cmd = f.collect::<Vec<_>>().join(" ");
            let name = cmd.rsplit('/').next().unwrap_or(&cmd).to_string();
            (pid != skip && percent > 0.0 && !name.is_empty())
                .then_some(self::tuning::BusyProcess { pid, name, percent })
        })
        .collect();
    v.sort_by(|a, b| b.percent.total_cmp(&a.percent).then(a.pid.cmp(&b.pid)));
    v.truncate(n);
    v
}

/// Every (name, value) pair that makes up `knob` on this system.
pub fn knob_values(knob: Knob) -> Vec<(String, String)> {
    knob_names(knob)
        .iter()
        .filter_map(|n| sysctl(n).map(|v| (n.to_string(), v)))
        .collect()
}

/// The ephemeral port range as (first, last), inclusive.
pub fn port_range() -> Option<(u32, u32)> {
    let vals: Vec<u32> = knob_values(Knob::PortRange)
        .iter()
        .flat_map(|(_, v)| {
            v.split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect();
    match vals.as_slice() {
        [a, b] => Some((*a.min(b), *a.max(b))),
        _ => None,
    }
}

/// The system's process ceiling (smallest of the process knobs).
pub fn process_ceiling() -> Option<(u64, String)> {
    [Knob::Processes, Knob::ProcessesPerUser]
        .iter()
        .flat_map(|k| knob_values(*k))
        .filter_map(|(n, v)| v.trim().parse::<u64>().ok().map(|x| (x, n)))
        .min_by_key(|(x, _)| *x)
}

/// The per-process mapping ceiling, where the OS has one.
pub fn mapping_ceiling() -> Option<(u64, String)> {
    knob_values(Knob::Mappings)
        .into_iter()
        .filter_map(|(n, v)| v.trim().parse::<u64>().ok().map(|x| (x, n)))
        .min_by_key(|(x, _)| *x)
}

/// The hypervisor as the CPU names it: the signature of CPUID leaf
/// 0x40000000 (`KVMKVMKVM`, `TCGTCGTCGTCG`, `Microsoft Hv`), read only
/// when CPUID leaf 1 says a hypervisor is present (ECX bit 31); `None` on
/// bare metal, and when the signature is empty or not printable.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub fn hypervisor_signature() -> Option<String> {
    #[cfg(target_arch = "x86")]
    use std::arch::x86::__cpuid;
    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::__cpuid;
    #[cfg(target_arch = "x86")]
    if !std::arch::x86::has_cpuid() {
        return None;
    }
    // SAFETY: the CPU has CPUID (every x86_64 one; checked above on x86);
    // a leaf it does not know returns zeros or the highest leaf's values,
    // which the check of leaf 1 rules out.
    #[allow(unused_unsafe)]
    let (present, r) = unsafe { (__cpuid(1).ecx >> 31 == 1, __cpuid(0x4000_0000)) };
    if !present {
        return None;
    }
    let bytes: Vec<u8> = [r.ebx, r.ecx, r.edx]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    signature_text(&bytes)
}

/// The hypervisor where there is no CPUID: Linux's `/sys/hypervisor/type`
/// (`xen`); `None` elsewhere.
#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
pub fn hypervisor_signature() -> Option<String> {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        let t = std::fs::read_to_string("/sys/hypervisor/type").ok()?;
        signature_text(t.as_bytes())
    } else {
        None
    }
}

/// A hypervisor signature as text: NULs and blanks at its ends cut; `None`
/// when nothing is left or it is not printable ASCII.
pub fn signature_text(sig: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(sig).ok()?;
    let s = s.trim_matches(|c: char| c == '\0' || c.is_ascii_whitespace());
    (!s.is_empty() && s.chars().all(|c| c.is_ascii_graphic() || c == ' ')).then(|| s.to_string())
}

/// `uname(2)` fields.
#[derive(Debug, Clone, Default)]
pub struct Uname {
    /// OS name (`Linux`, `FreeBSD`, …).
    pub sysname: String,
    /// Host name.
    pub nodename: String,
    /// Kernel release (`6.18.0`).
    pub release: String,
    /// Kernel version string (build date, config).
    pub version: String,
    /// Machine architecture.
    pub machine: String,
}

/// A NUL-terminated C character array as a string.
pub(crate) fn c_chars(f: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = f
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Calls `uname(2)`.
pub fn uname() -> Uname {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return Uname::default();
    }
    Uname {
        sysname: c_chars(&u.sysname),
        nodename: c_chars(&u.nodename),
        release: c_chars(&u.release),
        version: c_chars(&u.version),
        machine: c_chars(&u.machine),
    }
}

/// Time on a cheap monotonic clock, from an arbitrary fixed point, for
/// timeouts that need no better than a few milliseconds: the kernel's
/// tick-updated clock (CLOCK_MONOTONIC_COARSE on Linux, CLOCK_MONOTONIC_FAST
/// on FreeBSD and DragonFly), read without a system call where the OS maps
/// its clock into the process; CLOCK_MONOTONIC elsewhere.
pub fn coarse_now() -> std::time::Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec it is given.
    unsafe { libc::clock_gettime(os::COARSE_CLOCK, &mut ts) };
    std::time::Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Number of online CPUs (of the machine, not of this process's affinity
/// mask).
pub fn cpu_count() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    }
}

/// The filesystem that holds a path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mount {
    /// Filesystem type (`ext4`, `tmpfs`, `ufs`, `apfs` …).
    pub fs_type: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// The device or source it was mounted from.
    pub device: String,
    /// Mount options, comma separated.
    pub options: String,
}

/// The soft limit on open descriptors (RLIMIT_NOFILE) now; `None` when
/// unlimited or unreadable.
pub fn open_files_limit() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `rl`.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0
        || rl.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    #[allow(clippy::unnecessary_cast)] // rlim_t is not u64 everywhere
    Some(rl.rlim_cur as u64)
}

/// Open descriptors of this process: on Linux those /proc/self/fd lists;
/// elsewhere (or without /proc) counted portably with `fcntl(F_GETFD)` up
/// to the soft limit ([`probed_fds`]).
pub fn count_open_fds() -> usize {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(n) = linux::listed_fds() {
        return n;
    }
    probed_fds()
}

/// Open descriptors, each asked for with `fcntl(F_GETFD)` up to the soft
/// limit (at most 2^20): one call per descriptor that could be open. In a
/// guest whose limit was raised to 2^20 that was three million calls a
/// series under emulation, about 3 s.
fn probed_fds() -> usize {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into `rl`.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
    let max = rl.rlim_cur.min(1 << 20) as i32;
    // SAFETY: F_GETFD only asks whether the descriptor is open.
    (0..max)
        .filter(|&fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1)
        .count()
}

/// statvfs(2) of the filesystem holding `path`.
fn statvfs(path: &Path) -> Option<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs is plain data; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0).then_some(s)
}

/// Free bytes for unprivileged users on the filesystem holding `path`.
#[allow(clippy::unnecessary_cast)] // 32-bit fields on macOS and some BSDs
pub fn free_bytes(path: &Path) -> Option<u64> {
    let s = statvfs(path)?;
    Some((s.f_bavail as u64).saturating_mul(s.f_frsize as u64))
}

/// Free inodes for unprivileged users on the filesystem holding `path`;
/// `None` where the filesystem does not count them (it makes inodes as
/// files are made: btrfs reports no total).
#[allow(clippy::unnecessary_cast)] // 32-bit fields on macOS and some BSDs
pub fn free_inodes(path: &Path) -> Option<u64> {
    let s = statvfs(path)?;
    (s.f_files != 0).then_some(s.f_favail as u64)
}

/// Makes a FIFO at `path`, readable and writable by its owner only.
pub fn mkfifo(path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Waits up to `limit` for descriptor `fd` to have something to read (or
/// its end); whether it has.
pub fn wait_readable(fd: i32, limit: std::time::Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one pollfd, for the time given.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// An error in words: its message, then each of its causes, joined by
/// `: ` — for an error that must become words (a result file's field, a
/// parameter), so that its causes are not lost.
pub fn error_words(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut at = e.source();
    while let Some(c) = at {
        out.push_str(": ");
        out.push_str(&c.to_string());
        at = c.source();
    }
    out
}

/// `text` with every `(os error N)` the standard library writes after an
/// errno's description replaced by the errno's name: `Connection refused
/// (ECONNREFUSED)`.
pub fn errno_words(text: &str) -> String {
    const MARK: &str = "(os error ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(MARK) {
        let after = &rest[i + MARK.len()..];
        let digits = after.bytes().take_while(u8::is_ascii_digit).count();
        match (
            after[..digits].parse::<i32>(),
            after[digits..].starts_with(')'),
        ) {
            (Ok(n), true) if !errno_name(n).starts_with("errno ") => {
                out.push_str(&rest[..i]);
                out.push('(');
                out.push_str(&errno_name(n));
                out.push(')');
                rest = &after[digits + 1..];
            }
            _ => {
                out.push_str(&rest[..i + MARK.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The symbolic name of an errno value (`EADDRINUSE`), or `errno N` for
/// one not listed: the values resource limits and network calls produce.
pub fn errno_name(e: i32) -> String {
    let known = [
        (libc::EMFILE, "EMFILE"),
        (libc::ENFILE, "ENFILE"),
        (libc::EAGAIN, "EAGAIN"),
        (libc::ENOMEM, "ENOMEM"),
        (libc::EADDRINUSE, "EADDRINUSE"),
        (libc::EADDRNOTAVAIL, "EADDRNOTAVAIL"),
        (libc::ENOBUFS, "ENOBUFS"),
        (libc::EINTR, "EINTR"),
        (libc::EACCES, "EACCES"),
        (libc::EPERM, "EPERM"),
        (libc::ENOENT, "ENOENT"),
        (libc::EINVAL, "EINVAL"),
        (libc::EBADF, "EBADF"),
        (libc::ECONNREFUSED, "ECONNREFUSED"),
        (libc::ECONNRESET, "ECONNRESET"),
        (libc::ECONNABORTED, "ECONNABORTED"),
        (libc::ETIMEDOUT, "ETIMEDOUT"),
        (libc::EPIPE, "EPIPE"),
        (libc::ENOTCONN, "ENOTCONN"),
        (libc::EHOSTUNREACH, "EHOSTUNREACH"),
        (libc::ENETUNREACH, "ENETUNREACH"),
        (libc::EINPROGRESS, "EINPROGRESS"),
        (libc::ENOSPC, "ENOSPC"),
        (libc::EDQUOT, "EDQUOT"),
        (libc::EEXIST, "EEXIST"),
        (libc::ENOTDIR, "ENOTDIR"),
        (libc::EISDIR, "EISDIR"),
        (libc::ENOTEMPTY, "ENOTEMPTY"),
        (libc::EROFS, "EROFS"),
        (libc::EBUSY, "EBUSY"),
        (libc::ENODEV, "ENODEV"),
        (libc::ENXIO, "ENXIO"),
        (libc::ESRCH, "ESRCH"),
        (libc::ECHILD, "ECHILD"),
        (libc::EXDEV, "EXDEV"),
        (libc::ELOOP, "ELOOP"),
        (libc::ENAMETOOLONG, "ENAMETOOLONG"),
        (libc::EFBIG, "EFBIG"),
        (libc::EMLINK, "EMLINK"),
        (libc::ETXTBSY, "ETXTBSY"),
        (libc::EIO, "EIO"),
        (libc::E2BIG, "E2BIG"),
        (libc::ENOSYS, "ENOSYS"),
        (libc::EOPNOTSUPP, "EOPNOTSUPP"),
        (libc::EAFNOSUPPORT, "EAFNOSUPPORT"),
        (libc::EPROTONOSUPPORT, "EPROTONOSUPPORT"),
        (libc::ENETDOWN, "ENETDOWN"),
        (libc::EHOSTDOWN, "EHOSTDOWN"),
        (libc::EMSGSIZE, "EMSGSIZE"),
        (libc::ENOTSOCK, "ENOTSOCK"),
        (libc::EISCONN, "EISCONN"),
        (libc::EALREADY, "EALREADY"),
        (libc::ENOTTY, "ENOTTY"),
        (libc::ERANGE, "ERANGE"),
    ];
    known
        .iter()
        .find(|(v, _)| *v == e)
        .map(|(_, n)| n.to_string())
        .unwrap_or_else(|| format!("errno {e}"))
}

#[cfg(test)]
mod tests {

    #[test]
    #[cfg(target_os = "linux")]
    fn a_machine_that_has_run_a_while_has_its_random_generator_seeded() {
        assert_eq!(
            super::random_seeded(std::time::Duration::from_secs(5)),
            Some(true)
        );
    }

    #[test]
    fn errno_numbers_become_names() {
        let e = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            errno_words(&format!("cannot read x: {e}")),
            "cannot read x: No such file or directory (ENOENT)"
        );
        assert_eq!(
            errno_words("(os error 99999) (os error"),
            "(os error 99999) (os error"
        );
        assert_eq!(errno_words("plain"), "plain");
    }
    use super::*;

    #[test]
    fn signatures_are_cut_at_their_nuls_and_must_be_printable() {
        assert_eq!(
            signature_text(b"KVMKVMKVM\0\0\0").as_deref(),
            Some("KVMKVMKVM")
        );
        assert_eq!(
            signature_text(b"TCGTCGTCGTCG").as_deref(),
            Some("TCGTCGTCGTCG")
        );
        assert_eq!(signature_text(b"xen\n").as_deref(), Some("xen"));
        assert_eq!(signature_text(&[0; 12]), None);
        assert_eq!(signature_text(&[0xff, 0x01, b'a']), None);
    }

    #[test]
    fn the_coarse_clock_moves_forward() {
        let a = coarse_now();
        std::thread::sleep(std::time::Duration::from_millis(60));
        let b = coarse_now();
        assert!(b >= a, "went back: {a:?} then {b:?}");
        // Its resolution is a kernel tick (1 to 10 ms): 60 ms show.
        assert!(b - a >= std::time::Duration::from_millis(40), "{:?}", b - a);
    }

    #[test]
    fn load_averages_parse_from_proc_and_sysctl() {
        assert_eq!(
            parse_load_average("0.52 0.31 0.20 1/234 5678"),
            Some([0.52, 0.31, 0.2])
        );
        assert_eq!(
            parse_load_average("{ 1.00 2.50 0.05 }"),
            Some([1.0, 2.5, 0.05])
        );
        assert_eq!(parse_load_average("0.1 x 0.3"), None);
        assert_eq!(parse_load_average(""), None);
    }

    #[test]
    fn ps_output_ranks_the_busiest_without_us_or_the_idle() {
        let out = "    1   0.0 /sbin/init\n  200  12.5 /usr/local/bin/postgres\n  300  40,0 sshd\n  400  99.0 scalebench\n  junk\n  500   3.1 /usr/bin/my prog\n";
        let r = parse_ps_busiest(out, 400, 5);
        let got: Vec<(u32, &str, f64)> = r
            .iter()
            .map(|p| (p.pid, p.name.as_str(), p.percent))
            .collect();
        assert_eq!(
            got,
            vec![
                (300, "sshd", 40.0),
                (200, "postgres", 12.5),
                (500, "my prog", 3.1)
            ]
        );
        assert_eq!(parse_ps_busiest(out, 400, 1).len(), 1);
    }

    #[test]
    fn steal_is_the_share_of_all_cpus_time_between_readings() {
        let t = |busy, total, steal| CpuTicks { busy, total, steal };
        let before = [t(10, 100, Some(1)), t(20, 100, Some(3))];
        let after = [t(60, 200, Some(11)), t(70, 200, Some(3))];
        // 10 of 200 ticks stolen.
        assert_eq!(steal_percent(&before, &after), Some(5.0));
        let third = [t(0, 100, Some(0))];
        let later = [t(0, 400, Some(1))];
        assert_eq!(steal_percent(&third, &later), Some(0.33));
        // No counter, no time, CPUs that came or went, counters that went
        // back: nothing to say.
        let bsd = [t(10, 100, None)];
        assert_eq!(steal_percent(&bsd, &[t(20, 200, None)]), None);
        assert_eq!(steal_percent(&before, &before), None);
        assert_eq!(steal_percent(&before, &after[..1]), None);
        assert_eq!(
            steal_percent(&after, &[t(0, 900, Some(0)), t(0, 900, Some(0))]),
            None
        );
    }

    #[test]
    fn uname_names_this_system() {
        let u = uname();
        assert!(!u.sysname.is_empty());
        assert!(!u.release.is_empty());
    }

    #[test]
    fn open_fds_counts_new_descriptors() {
        let files: Vec<_> = (0..64)
            .map(|_| std::fs::File::open("/dev/null").unwrap())
            .collect();
        // Other test threads may close their own files meanwhile, but ours
        // and stdio stay open.
        assert!(count_open_fds() >= files.len() + 3);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn listed_descriptors_are_the_probed_ones() {
        // Other test threads open and close files meanwhile: the two
        // counts are taken until two in a row agree (a listing that left
        // its own descriptor in would be one more every time).
        let files: Vec<_> = (0..40)
            .map(|_| std::fs::File::open("/dev/null").unwrap())
            .collect();
        let agreed = (0..200).any(|_| {
            let a = probed_fds();
            let l = linux::listed_fds().unwrap();
            a == l && probed_fds() == a
        });
        assert!(
            agreed,
            "listed {:?}, probed {}",
            linux::listed_fds(),
            probed_fds()
        );
        drop(files);
    }

    #[test]
    fn mount_of_root_is_known() {
        let m = mount_of(Path::new("/")).expect("mount of /");
        assert_eq!(m.mount_point, "/");
        assert!(!m.fs_type.is_empty());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn time_wait_is_counted_and_its_knobs_read() {
        assert!(time_wait_count().is_some());
        let names: Vec<String> = TIME_WAIT_KNOBS
            .iter()
            .flat_map(|k| knob_values(*k))
            .map(|(n, _)| n)
            .collect();
        for n in [
            "net.ipv4.ip_local_port_range",
            "net.ipv4.tcp_tw_reuse",
            "net.ipv4.tcp_max_tw_buckets",
        ] {
            assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
        }
        assert!(whole_loopback_net());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn port_range_is_sane() {
        let (a, b) = port_range().expect("port range");
        assert!(a > 0 && b >= a && b <= 65535);
    }

    #[test]
    fn a_thread_may_take_a_descriptor_table_of_its_own_holding_only_stdio() {
        let mut p = [-1i32; 2];
        // SAFETY: pipe() fills two descriptors.
        assert_eq!(unsafe { libc::pipe(p.as_mut_ptr()) }, 0);
        let open = |fd: i32| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
        let (own, seen, first) = std::thread::spawn(move || {
            let own = private_descriptor_table().unwrap();
            // Looked at before this table opens anything of its own (its
            // pipe below may take the numbers the parent's pipe has).
            let seen = open(p[0]) || open(p[1]);
            // SAFETY: a fresh pipe, closed below.
            let mut q = [-1i32; 2];
            assert_eq!(unsafe { libc::pipe(q.as_mut_ptr()) }, 0);
            // SAFETY: closing the thread's own pipe.
            unsafe { libc::close(q[0]) };
            unsafe { libc::close(q[1]) };
            (own, seen, q[0])
        })
        .join()
        .unwrap();
        assert_eq!(own, cfg!(any(target_os = "linux", target_os = "android")));
        if own {
            // The thread's table held 0, 1 and 2 only: its first descriptor is 3.
            assert!(!seen && first == 3, "{seen} {first}");
        } else {
            assert!(seen);
        }
        // This thread's table is untouched.
        assert!(open(p[0]) && open(p[1]));
        // SAFETY: closing our pipe.
        unsafe { libc::close(p[0]) };
        unsafe { libc::close(p[1]) };
    }
}

/// The resource limits scalebench records and raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rlimit {
    /// RLIMIT_NOFILE: open descriptors.
    Files,
    /// RLIMIT_NPROC: processes of this user.
    Processes,
    /// RLIMIT_AS: address space.
    AddressSpace,
    /// RLIMIT_STACK: stack size.
    Stack,
}

impl Rlimit {
    /// Every limit, in the order recorded.
    pub const ALL: [Rlimit; 4] = [
        Rlimit::Files,
        Rlimit::Processes,
        Rlimit::AddressSpace,
        Rlimit::Stack,
    ];

    /// The C name (`RLIMIT_NOFILE`).
    pub fn name(self) -> &'static str {
        match self {
            Rlimit::Files => "RLIMIT_NOFILE",
            Rlimit::Processes => "RLIMIT_NPROC",
            Rlimit::AddressSpace => "RLIMIT_AS",
            Rlimit::Stack => "RLIMIT_STACK",
        }
    }

    /// The resource number, or `None` where this OS lacks the limit
    /// (OpenBSD has no `RLIMIT_AS`).
    fn resource(self) -> Option<libc::c_int> {
        Some(
            (match self {
                Rlimit::Files => libc::RLIMIT_NOFILE,
                Rlimit::Processes => libc::RLIMIT_NPROC,
                #[cfg(not(target_os = "openbsd"))]
                Rlimit::AddressSpace => libc::RLIMIT_AS,
                #[cfg(target_os = "openbsd")]
                Rlimit::AddressSpace => return None,
                Rlimit::Stack => libc::RLIMIT_STACK,
            }) as libc::c_int,
        )
    }
}

/// A limit as (soft, hard); `None` is unlimited.
pub type LimitPair = (Option<u64>, Option<u64>);

/// Reads a resource limit.
pub fn get_rlimit(which: Rlimit) -> Option<LimitPair> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let resource = which.resource()?;
    // SAFETY: getrlimit writes into `rl`.
    if unsafe { libc::getrlimit(resource as _, &mut rl) } != 0 {
        return None;
    }
    // rlim_t is signed on FreeBSD and DragonFly; limits are never negative.
    #[allow(clippy::unnecessary_cast)] // u64 -> u64 elsewhere
    let conv = |v: libc::rlim_t| (v != libc::RLIM_INFINITY).then_some(v as u64);
    Some((conv(rl.rlim_cur), conv(rl.rlim_max)))
}

/// Sets a resource limit.
pub fn set_rlimit(which: Rlimit, limit: LimitPair) -> std::io::Result<()> {
    let conv = |v: Option<u64>| v.map_or(libc::RLIM_INFINITY, |x| x as libc::rlim_t);
    let rl = libc::rlimit {
        rlim_cur: conv(limit.0),
        rlim_max: conv(limit.1),
    };
    let Some(resource) = which.resource() else {
        return Err(std::io::ErrorKind::Unsupported.into());
    };
    // SAFETY: setrlimit reads `rl`.
    if unsafe { libc::setrlimit(resource as _, &rl) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Processes currently running on the system, where the OS tells cheaply.
pub fn count_processes() -> Option<u64> {
    if cfg!(any(target_os = "linux", target_os = "android")) {
        let dir = std::fs::read_dir("/proc").ok()?;
        Some(
            dir.filter_map(|e| e.ok())
                .filter(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .bytes()
                        .all(|b| b.is_ascii_digit())
                })
                .count() as u64,
        )
    } else {
        None
    }
}
