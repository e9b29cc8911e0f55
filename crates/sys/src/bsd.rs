//! The BSDs and macOS: `sysctl(8)` and `sysctl(3)`, `statfs(2)`,
//! `mount(8)`, and Mach's `host_processor_info` on macOS.

use super::{Knob, Mount};
use std::path::Path;
use std::process::Command;

/// The clock behind [`super::coarse_now`].
#[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
pub const COARSE_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC_FAST;
/// The clock behind [`super::coarse_now`].
#[cfg(not(any(target_os = "freebsd", target_os = "dragonfly")))]
pub const COARSE_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC;

/// OS-specific sysctl names of a knob.
pub fn knob_names(knob: Knob) -> &'static [&'static str] {
    let freebsd_like = cfg!(any(
        target_os = "freebsd",
        target_os = "dragonfly",
        target_vendor = "apple"
    ));
    match knob {
        Knob::FilesSystem => &["kern.maxfiles"],
        Knob::FilesPerProcess if freebsd_like => &["kern.maxfilesperproc"],
        Knob::FilesPerProcess => &[],
        Knob::PortRange if freebsd_like => {
            &["net.inet.ip.portrange.first", "net.inet.ip.portrange.last"]
        }
        Knob::PortRange if cfg!(target_os = "netbsd") => {
            &["net.inet.ip.anonportmin", "net.inet.ip.anonportmax"]
        }
        Knob::PortRange => &["net.inet.ip.porthifirst", "net.inet.ip.porthilast"],
        Knob::Processes => &["kern.maxproc"],
        Knob::ProcessesPerUser if freebsd_like => &["kern.maxprocperuid"],
        Knob::ProcessesPerUser => &[],
        Knob::Mappings => &[],
        Knob::ListenBacklog if freebsd_like => &["kern.ipc.somaxconn"],
        Knob::ListenBacklog => &["kern.somaxconn"],
        // The BSDs have no TIME_WAIT reuse switch.
        Knob::TimeWaitReuse => &[],
        Knob::TimeWaitBuckets if cfg!(target_os = "freebsd") => &["net.inet.tcp.maxtcptw"],
        Knob::TimeWaitBuckets => &[],
        Knob::SegmentLifetime if freebsd_like => &["net.inet.tcp.msl"],
        Knob::SegmentLifetime if cfg!(target_os = "netbsd") => &["net.inet.tcp.mslt"],
        Knob::SegmentLifetime => &[],
    }
}

/// TCP sockets in TIME_WAIT now, system-wide: not read on the BSDs and
/// macOS (only netstat(1) lists them; the result records null).
pub fn time_wait_count() -> Option<u64> {
    None
}

/// Whether every address of 127.0.0.0/8 may be connected from without
/// configuring it: not on the BSDs and macOS, where only 127.0.0.1 is
/// configured on lo0 by default.
pub fn whole_loopback_net() -> bool {
    false
}

/// Where the OS has no `IP_BIND_ADDRESS_NO_PORT`: nothing to do, `Ok(false)`
/// (a bound source address then takes its port at bind()).
pub fn bind_address_no_port(_fd: i32) -> std::io::Result<bool> {
    Ok(false)
}

/// Where a thread cannot have a descriptor table of its own (the BSDs and
/// macOS keep one per process): nothing done, `Ok(false)`.
pub fn private_descriptor_table() -> std::io::Result<bool> {
    Ok(false)
}

/// Reads one sysctl.
pub fn sysctl(name: &str) -> Option<String> {
    if !sysctl_name_ok(name) {
        return None;
    }
    let out = Command::new("sysctl").arg("-n").arg(name).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!v.is_empty()).then_some(v)
}

/// Whether `name` is a plain sysctl name (nothing sysctl(8) would read as
/// an option or an assignment).
fn sysctl_name_ok(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
}

/// Writes one sysctl with sysctl(8); the error carries what it said.
pub fn set_sysctl(name: &str, value: &str) -> std::io::Result<()> {
    if !sysctl_name_ok(name) || value.contains('\n') {
        return Err(std::io::Error::other("not a sysctl name and value"));
    }
    let mut cmd = Command::new("sysctl");
    if cfg!(any(target_os = "netbsd", target_vendor = "apple")) {
        cmd.arg("-w");
    }
    let out = cmd.arg(format!("{name}={value}")).output()?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(std::io::Error::other(if said.is_empty() {
        format!("sysctl(8) exited with {}", out.status)
    } else {
        said
    }))
}

/// Whether this process could write the sysctl `name`, as far as can be
/// told without writing it: it exists and we are root (a boot-time
/// tunable still refuses when written).
pub fn sysctl_writable(name: &str) -> Result<(), String> {
    if sysctl(name).is_none() {
        return Err("no such sysctl here".into());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root".into());
    }
    Ok(())
}

/// Reads a named setting: none of them exist here.
pub fn read_setting(_s: super::Setting) -> Option<String> {
    None
}

/// The values the kernel takes for a named setting: none here.
pub fn setting_choices(_s: super::Setting) -> Option<Vec<String>> {
    None
}

/// Whether this process could change a named setting.
pub fn setting_writable(s: super::Setting) -> Result<(), String> {
    Err(format!("{} is a Linux setting", s.name()))
}

/// Changes a named setting.
pub fn write_setting(s: super::Setting, _value: &str) -> std::io::Result<()> {
    Err(std::io::Error::other(setting_writable(s).unwrap_err()))
}

/// Whether process `pid` exists (a zombie counts: kill(2) cannot tell).
pub fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0 && unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
}

/// CPU seconds used by a process group: not read on this system.
pub fn group_cpu_seconds(_pgid: i32) -> Option<f64> {
    None
}

/// Whether this process may raise a hard resource limit (root may).
pub fn may_raise_hard_limits() -> Option<bool> {
    // SAFETY: geteuid has no preconditions.
    Some(unsafe { libc::geteuid() } == 0)
}

/// Reads the sysctl `name` into `buf`; returns how many `T` it filled.
#[cfg(any(
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "netbsd",
    target_vendor = "apple"
))]
fn sysctl_by_name<T: Copy>(name: &std::ffi::CStr, buf: &mut [T]) -> Option<usize> {
    let mut len = std::mem::size_of_val(buf);
    // SAFETY: `buf` holds `len` bytes; every caller's `T` is plain data
    // (integers, C structs) that any bytes the kernel writes make valid.
    let r = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (r == 0).then(|| len / std::mem::size_of::<T>())
}

/// The size in bytes of the sysctl `name`'s value.
#[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
fn sysctl_size(name: &std::ffi::CStr) -> Option<usize> {
    let mut len: libc::size_t = 0;
    // SAFETY: asking for the size only.
    let r = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            std::ptr::null_mut(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    (r == 0).then_some(len)
}

/// The sysctl `name`'s value as an unsigned integer, whether the kernel
/// keeps it in 4 bytes or in 8.
#[cfg(any(
    target_os = "freebsd",
    target_os = "dragonfly",
    target_os = "netbsd",
    target_vendor = "apple"
))]
fn sysctl_uint_by_name(name: &std::ffi::CStr) -> Option<u64> {
    let mut buf = [0u8; 8];
    match sysctl_by_name(name, &mut buf)? {
        4 => Some(u64::from(u32::from_ne_bytes(buf[..4].try_into().ok()?))),
        8 => Some(u64::from_ne_bytes(buf)),
        _ => None,
    }
}

/// Reads the sysctl with the MIB `mib` into `buf`; returns how many `T` it
/// filled.
#[cfg(any(target_os = "netbsd", target_os = "openbsd"))]
fn sysctl_by_mib<T: Copy>(mib: &[libc::c_int], buf: &mut [T]) -> std::io::Result<usize> {
    let mut len = std::mem::size_of_val(buf);
    // SAFETY: `buf` holds `len` bytes; every caller's `T` is plain data
    // (integers, C structs) that any bytes the kernel writes make valid.
    let r = unsafe {
        libc::sysctl(
            mib.as_ptr(),
            mib.len() as libc::c_uint,
            buf.as_mut_ptr().cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if r == 0 {
        Ok(len / std::mem::size_of::<T>())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Busy and total time of each CPU so far, in ticks (busy: all but idle),
/// from its states ([`cpu_state_records`]); `None` where they cannot be
/// read.
pub fn cpu_ticks() -> Option<Vec<super::CpuTicks>> {
    let (raw, layout) = cpu_state_records()?;
    let v: Vec<super::CpuTicks> = super::cpu_states::states_from(&raw, &layout)
        .iter()
        .map(super::counters::CpuStates::ticks)
        .collect();
    (!v.is_empty()).then_some(v)
}

/// The time of each CPU in each state so far, in ticks, and where each
/// state sits in a CPU's record: FreeBSD's `kern.cp_times`, NetBSD's
/// `kern.cp_time` with room for every CPU (both user, nice, system,
/// interrupt, idle per CPU); OpenBSD's `KERN_CPUSTATS` for each CPU (user,
/// nice, system, spin, interrupt, idle), the online ones only; DragonFly's
/// `kern.cputime` (user, nice, system, interrupt, idle of each CPU, in
/// microseconds); macOS's `host_processor_info` (user, system, idle, nice
/// of each CPU, 32-bit counters that wrap); `None` on the other systems
/// here.
fn cpu_state_records() -> Option<(Vec<u64>, super::cpu_states::Layout)> {
    #[allow(unused_imports)]
    use super::cpu_states::Layout;
    #[cfg(target_os = "freebsd")]
    let v = {
        let name = c"kern.cp_times";
        let mut buf =
            vec![0 as libc::c_long; sysctl_size(name)? / std::mem::size_of::<libc::c_long>()];
        let n = sysctl_by_name(name, &mut buf)?;
        let raw: Vec<u64> = buf[..n].iter().map(|&x| x as u64).collect();
        // sys/resource.h: CP_USER, CP_NICE, CP_SYS, CP_INTR, CP_IDLE.
        (raw, Layout::FIVE)
    };
    #[cfg(target_os = "netbsd")]
    let v = {
        // sys/sched.h: CP_USER, CP_NICE, CP_SYS, CP_INTR, CP_IDLE.
        let states = Layout::FIVE.states;
        let mut ncpu: [libc::c_int; 1] = [0];
        sysctl_by_mib(&[libc::CTL_HW, libc::HW_NCPU], &mut ncpu).ok()?;
        // Given a buffer of exactly one CPU's size the kernel sums all CPUs;
        // given one for hw.ncpu CPUs it returns each (init_sysctl.c,
        // sysctl_kern_cptime). With one CPU the two are the same.
        let mut raw = vec![0u64; usize::try_from(ncpu[0]).ok()?.max(1) * states];
        let n = sysctl_by_mib(&[libc::CTL_KERN, libc::KERN_CP_TIME], &mut raw).ok()?;
        raw.truncate(n);
        (raw, Layout::FIVE)
    };
    #[cfg(target_os = "openbsd")]
    let v = {
        // sys/sched.h: CP_USER, CP_NICE, CP_SYS, CP_SPIN, CP_INTR, CP_IDLE;
        // struct cpustats { uint64_t cs_time[CPUSTATES]; uint64_t cs_flags; }.
        // Unlike KERN_CPTIME2, it says whether the CPU is online: with
        // hw.smt=0 half the CPUs are not, and their idle would count.
        const CPUSTATES: usize = 6;
        const CPUSTATS_ONLINE: u64 = 0x0001;
        let mut ncpu: [libc::c_int; 1] = [0];
        sysctl_by_mib(&[libc::CTL_HW, libc::HW_NCPU], &mut ncpu).ok()?;
        let mut raw = Vec::new();
        for cpu in 0..ncpu[0] {
            let mut record = [0u64; CPUSTATES + 1];
            match sysctl_by_mib(&[libc::CTL_KERN, libc::KERN_CPUSTATS, cpu], &mut record) {
                Ok(n) if n == record.len() => raw.extend_from_slice(&record),
                // No CPU with that unit number.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {}
                _ => return None,
            }
        }
        let states = super::cpu_states::online_cpustats(&raw, CPUSTATES, CPUSTATS_ONLINE);
        let layout = Layout {
            states: CPUSTATES,
            spin: Some(3),
            intr: Some(4),
            idle: 5,
            ..Layout::FIVE
        };
        (states, layout)
    };
    #[cfg(target_os = "dragonfly")]
    let v = {
        // A struct kinfo_cputime (sys/kinfo.h) for each CPU; kern.cp_time
        // is only their sum.
        let name = c"kern.cputime";
        // SAFETY: kinfo_cputime is plain data; all zeros is a valid value.
        let zero: libc::kinfo_cputime = unsafe { std::mem::zeroed() };
        let mut buf = vec![zero; sysctl_size(name)? / std::mem::size_of_val(&zero)];
        let n = sysctl_by_name(name, &mut buf)?;
        let raw: Vec<u64> = buf[..n]
            .iter()
            .flat_map(|c| [c.cp_user, c.cp_nice, c.cp_sys, c.cp_intr, c.cp_idle])
            .collect();
        (raw, Layout::FIVE)
    };
    #[cfg(target_vendor = "apple")]
    let v = {
        let layout = Layout {
            states: libc::CPU_STATE_MAX as usize,
            user: libc::CPU_STATE_USER as usize,
            nice: libc::CPU_STATE_NICE as usize,
            system: libc::CPU_STATE_SYSTEM as usize,
            intr: None,
            spin: None,
            idle: libc::CPU_STATE_IDLE as usize,
        };
        (mach_cpu_load()?, layout)
    };
    #[cfg(not(any(
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd",
        target_vendor = "apple"
    )))]
    let v: (Vec<u64>, Layout) = return None;
    (!v.0.is_empty()).then_some(v)
}

/// The system's counters for the monitor: the CPU states and clocks and
/// the interfaces' packets everywhere; context switches, interrupts,
/// forks, faults and free memory from `vm.stats` on FreeBSD and
/// DragonFly, the run queue from `vm.vmtotal` on FreeBSD; faults and free
/// and file-backed memory from `host_statistics64` on macOS. NetBSD's and
/// OpenBSD's `uvmexp` are not read: those counters are `None` there.
pub fn counters() -> super::counters::Counters {
    // Only FreeBSD, DragonFly and macOS add to it below.
    #[allow(unused_mut)]
    let mut c = super::counters::Counters {
        cpus: cpu_state_records()
            .map(|(raw, layout)| super::cpu_states::states_from(&raw, &layout))
            .filter(|v| !v.is_empty()),
        mhz: cpu_clocks_mhz(),
        net: super::ifaddrs::link_counters(),
        ..Default::default()
    };
    #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
    {
        let get = |name: &std::ffi::CStr| sysctl_uint_by_name(name);
        c.context_switches = get(c"vm.stats.sys.v_swtch");
        c.interrupts = get(c"vm.stats.sys.v_intr");
        c.forks = [
            c"vm.stats.vm.v_forks",
            c"vm.stats.vm.v_vforks",
            c"vm.stats.vm.v_rforks",
        ]
        .into_iter()
        .map(get)
        .sum();
        c.page_faults = get(c"vm.stats.vm.v_vm_faults");
        c.major_faults = get(c"vm.stats.vm.v_io_faults");
        let page = get(c"vm.stats.vm.v_page_size");
        c.memory_free = get(c"vm.stats.vm.v_free_count")
            .zip(page)
            .map(|(n, p)| n * p);
    }
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: vmtotal is plain data; all zeros is a valid value.
        let mut t: [libc::vmtotal; 1] = [unsafe { std::mem::zeroed() }];
        if sysctl_by_name(c"vm.vmtotal", &mut t) == Some(1) {
            c.running = u64::try_from(t[0].t_rq).ok();
            c.blocked = u64::try_from(t[0].t_dw).ok();
        }
    }
    #[cfg(target_vendor = "apple")]
    mach_vm_counters(&mut c);
    c
}

/// Faults, page-ins, free and file-backed memory from
/// `host_statistics64(HOST_VM_INFO64)`.
#[cfg(target_vendor = "apple")]
#[allow(deprecated)]
fn mach_vm_counters(c: &mut super::counters::Counters) {
    // SAFETY: vm_statistics64 is plain data; all zeros is a valid value.
    let mut vm: libc::vm_statistics64 = unsafe { std::mem::zeroed() };
    let mut count = (std::mem::size_of::<libc::vm_statistics64>()
        / std::mem::size_of::<libc::integer_t>())
        as libc::mach_msg_type_number_t;
    // SAFETY: the kernel fills at most `count` integers of `vm`.
    let r = unsafe {
        libc::host_statistics64(
            libc::mach_host_self(),
            libc::HOST_VM_INFO64,
            (&mut vm as *mut libc::vm_statistics64).cast(),
            &mut count,
        )
    };
    if r != libc::KERN_SUCCESS {
        return;
    }
    // SAFETY: sysconf has no preconditions.
    let page = u64::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    c.page_faults = Some(vm.faults);
    c.major_faults = Some(vm.pageins);
    c.memory_free = Some(u64::from(vm.free_count) * page);
    c.memory_cached = Some(u64::from(vm.external_page_count) * page);
}

/// `cpu_ticks[CPU_STATE_MAX]` of each CPU, one CPU after the other, from
/// `host_processor_info(PROCESSOR_CPU_LOAD_INFO)`.
// libc marks mach_host_self and mach_task_self deprecated in favour of the
// mach2 crate; they are the same calls, and not worth a crate here.
#[cfg(target_vendor = "apple")]
#[allow(deprecated)]
fn mach_cpu_load() -> Option<Vec<u64>> {
    // Each mach_host_self() adds a reference to the host port: one will do.
    static HOST: std::sync::OnceLock<libc::mach_port_t> = std::sync::OnceLock::new();
    // SAFETY: no arguments; returns a send right to the host port.
    let host = *HOST.get_or_init(|| unsafe { libc::mach_host_self() });
    let mut cpus: libc::natural_t = 0;
    let mut info: libc::processor_info_array_t = std::ptr::null_mut();
    let mut count: libc::mach_msg_type_number_t = 0;
    // SAFETY: the kernel fills the three out-parameters.
    let r = unsafe {
        libc::host_processor_info(
            host,
            libc::PROCESSOR_CPU_LOAD_INFO,
            &mut cpus,
            &mut info,
            &mut count,
        )
    };
    if r != libc::KERN_SUCCESS || info.is_null() {
        return None;
    }
    let states = libc::CPU_STATE_MAX as usize;
    // SAFETY: the kernel mapped `count` integer_t at `info`: `cpus` records
    // of processor_cpu_load_info, whose counters are unsigned.
    let raw: Vec<u64> = unsafe { std::slice::from_raw_parts(info, count as usize) }
        .iter()
        .take(cpus as usize * states)
        .map(|&x| u64::from(x as u32))
        .collect();
    // SAFETY: gives back the memory host_processor_info mapped, once, after
    // the last use of it.
    unsafe {
        libc::vm_deallocate(
            libc::mach_task_self(),
            info as libc::vm_address_t,
            count as libc::vm_size_t * std::mem::size_of::<libc::integer_t>(),
        );
    }
    Some(raw)
}

/// The current clock of each CPU in MHz: `dev.cpu.N.freq` (FreeBSD,
/// DragonFly, where cpufreq is loaded); on NetBSD the one clock all CPUs
/// share, `machdep.est.frequency.current` (Intel) or
/// `machdep.powernow.frequency.current` (AMD) where ACPI P-states or
/// est/powernow run, else `machdep.cpu.frequency.current` (some ARM
/// boards); on OpenBSD the one clock all CPUs share, `hw.cpuspeed`; on
/// Intel Macs `hw.cpufrequency`, the nominal clock, as macOS tells no
/// current one (Apple silicon has not even that); `None` elsewhere.
pub fn cpu_clocks_mhz() -> Option<Vec<f64>> {
    #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
    {
        let n = super::cpu_count();
        // Read in place (sysctlbyname), not through sysctl(8): the sweep
        // samples every CPU's clock twice a second.
        let v: Vec<f64> = (0..n)
            .map_while(|i| {
                let name = std::ffi::CString::new(format!("dev.cpu.{i}.freq")).ok()?;
                sysctl_uint_by_name(&name).map(|mhz| mhz as f64)
            })
            .collect();
        (v.len() == n).then_some(v)
    }
    #[cfg(target_os = "netbsd")]
    {
        let mhz = [
            c"machdep.est.frequency.current",
            c"machdep.powernow.frequency.current",
            c"machdep.cpu.frequency.current",
        ]
        .into_iter()
        .find_map(sysctl_uint_by_name)?;
        same_clock_for_all(mhz as f64)
    }
    #[cfg(target_os = "openbsd")]
    {
        // sys/sysctl.h: HW_CPUSPEED, an int in MHz; libc lacks the constant.
        const HW_CPUSPEED: libc::c_int = 12;
        let mut mhz: [libc::c_int; 1] = [0];
        sysctl_by_mib(&[libc::CTL_HW, HW_CPUSPEED], &mut mhz).ok()?;
        same_clock_for_all(f64::from(mhz[0]))
    }
    #[cfg(target_vendor = "apple")]
    {
        let hz = sysctl_uint_by_name(c"hw.cpufrequency")?;
        same_clock_for_all(hz as f64 / 1e6)
    }
    #[cfg(not(any(
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd",
        target_vendor = "apple"
    )))]
    {
        None
    }
}

/// `mhz` for each CPU, on systems whose CPUs all run at one clock; `None`
/// if it is no clock.
#[cfg(any(target_os = "netbsd", target_os = "openbsd", target_vendor = "apple"))]
fn same_clock_for_all(mhz: f64) -> Option<Vec<f64>> {
    (mhz > 0.0).then(|| vec![mhz; super::cpu_count()])
}

/// The CPU model name.
pub fn cpu_model() -> Option<String> {
    if cfg!(target_vendor = "apple") {
        sysctl("machdep.cpu.brand_string")
    } else {
        sysctl("hw.model")
    }
}

/// The CPU clock in MHz as the OS reports it.
pub fn cpu_mhz() -> Option<f64> {
    let hz = |name: &str| sysctl(name)?.parse::<f64>().ok().map(|v| v / 1e6);
    let mhz = |name: &str| sysctl(name)?.parse::<f64>().ok();
    if cfg!(target_vendor = "apple") {
        hz("hw.cpufrequency")
    } else if cfg!(target_os = "netbsd") {
        hz("machdep.tsc_freq")
    } else if cfg!(target_os = "openbsd") {
        mhz("hw.cpuspeed")
    } else {
        mhz("hw.clockrate")
    }
}

/// Whether the TSC runs at a constant rate in every power state.
pub fn invariant_tsc() -> Option<bool> {
    if cfg!(target_os = "freebsd") {
        sysctl("kern.timecounter.invariant_tsc").map(|v| v == "1")
    } else {
        None
    }
}

/// Physical memory in bytes.
pub fn memory_bytes() -> Option<u64> {
    let name = if cfg!(target_vendor = "apple") {
        "hw.memsize"
    } else if cfg!(any(target_os = "netbsd", target_os = "openbsd")) {
        "hw.physmem64"
    } else {
        "hw.physmem"
    };
    sysctl(name)?.parse().ok()
}

/// `1` → `on`, `0` → `off` (SMT switches).
fn on_off(v: String) -> Option<String> {
    match v.as_str() {
        "1" => Some("on".into()),
        "0" => Some("off".into()),
        _ => None,
    }
}

/// The busiest other processes by ps(1)'s %CPU (a decaying average over
/// the last minute or so, not a sample).
fn busiest() -> Option<Vec<super::tuning::BusyProcess>> {
    let out = Command::new("ps")
        .args(["-A", "-o", "pid=,pcpu=,comm="])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let out = String::from_utf8_lossy(&out.stdout);
    Some(super::parse_ps_busiest(&out, std::process::id(), 5))
}

/// The machine's settings and state now, from whichever of these sysctls
/// this system has.
pub fn tuning() -> super::tuning::Tuning {
    let joined = |names: &[&str]| {
        let v: Vec<String> = names.iter().filter_map(|n| sysctl(n)).collect();
        (!v.is_empty()).then(|| v.join(" "))
    };
    let machine = if cfg!(target_vendor = "apple") {
        sysctl("hw.model")
    } else if cfg!(target_os = "openbsd") {
        joined(&["hw.vendor", "hw.product"])
    } else if cfg!(target_os = "netbsd") {
        joined(&["machdep.dmi.system-vendor", "machdep.dmi.system-product"])
    } else {
        None
    };
    let hypervisor = if cfg!(target_vendor = "apple") {
        sysctl("kern.hv_vmm_present").map(|v| {
            if v == "0" {
                "none".into()
            } else {
                "yes".into()
            }
        })
    } else if cfg!(target_os = "netbsd") {
        sysctl("machdep.hypervisor")
    } else {
        sysctl("kern.vm_guest")
    };
    let smt = if cfg!(target_os = "openbsd") {
        sysctl("hw.smt").and_then(on_off)
    } else {
        sysctl("machdep.hyperthreading_allowed").and_then(on_off)
    };
    let mitigations = [
        "vm.pmap.pti",
        "hw.ibrs_active",
        "hw.spec_store_bypass_disable_active",
        "hw.mds_disable_state",
    ]
    .iter()
    .filter(|_| cfg!(target_os = "freebsd"))
    .filter_map(|n| Some((n.to_string(), sysctl(n)?)))
    .collect();
    let sysctls = [
        "kern.hz",
        "kern.ipc.nmbclusters",
        "kern.maxfiles",
        "kern.maxproc",
        "net.inet.tcp.msl",
        "dev.cpu.0.cx_lowest",
        "dev.cpu.0.cx_usage",
    ]
    .iter()
    .filter_map(|n| Some((n.to_string(), sysctl(n)?)))
    .collect();
    super::tuning::Tuning {
        governor: if cfg!(target_os = "openbsd") {
            sysctl("hw.perfpolicy")
        } else {
            None
        },
        smt,
        microcode: if cfg!(target_vendor = "apple") {
            sysctl("machdep.cpu.microcode_version")
        } else {
            None
        },
        mitigations,
        clocksource: sysctl("kern.timecounter.hardware"),
        hypervisor,
        machine,
        load_average: sysctl("vm.loadavg").and_then(|v| super::parse_load_average(&v)),
        busiest: busiest(),
        sysctls,
        nics: nics(),
        firewall: Some(firewall()),
        security: Some(super::tuning::Security {
            securelevel: sysctl("kern.securelevel"),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The packet filters' rules: pf's (`pfctl -s rules`, every BSD and
/// macOS) and ipfw's (`ipfw list`, FreeBSD and DragonFly), counted as the
/// lines those print; a filter whose tool is missing or refuses (not
/// root, pf not enabled) is named in `unreadable`.
fn firewall() -> super::tuning::Firewall {
    let lines = |tool: &str, args: &[&str]| -> Result<u64, String> {
        let out = Command::new(tool)
            .args(args)
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|e| format!("{tool}: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("{tool}: {}", err.trim()));
        }
        Ok(String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as u64)
    };
    let mut f = super::tuning::Firewall::default();
    match lines("pfctl", &["-s", "rules"]) {
        Ok(n) => f.pf_rules = Some(n),
        Err(e) => f.unreadable.push(e),
    }
    if cfg!(any(target_os = "freebsd", target_os = "dragonfly")) {
        match lines("ipfw", &["list"]) {
            Ok(n) => f.ipfw_rules = Some(n),
            Err(e) => f.unreadable.push(e),
        }
    }
    f
}

/// The network interfaces that are up, loopback left out, by
/// `getifaddrs(3)`: name and MTU (from the link-level entry's `if_data`;
/// NetBSD's `if_data` is not in the libc crate, so no MTU there). Drivers,
/// rings and offloads are not read here.
fn nics() -> Option<Vec<super::tuning::Nic>> {
    // net/if.h: the same on every BSD and macOS.
    const IFF_UP: libc::c_uint = 0x1;
    const IFF_LOOPBACK: libc::c_uint = 0x8;
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list freed below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return None;
    }
    let mut v: Vec<super::tuning::Nic> = Vec::new();
    let mut p = head;
    while !p.is_null() {
        // SAFETY: a node of the list getifaddrs made, not yet freed.
        let a = unsafe { &*p };
        p = a.ifa_next;
        let flags = a.ifa_flags;
        // SAFETY: ifa_addr, when set, points to a sockaddr.
        let link =
            !a.ifa_addr.is_null() && i32::from(unsafe { (*a.ifa_addr).sa_family }) == libc::AF_LINK;
        if !link || flags & IFF_UP == 0 || flags & IFF_LOOPBACK != 0 || a.ifa_name.is_null() {
            continue;
        }
        // SAFETY: ifa_name is a NUL-terminated string.
        let name = unsafe { std::ffi::CStr::from_ptr(a.ifa_name) }
            .to_string_lossy()
            .into_owned();
        if v.iter().any(|n| n.name == name) {
            continue;
        }
        #[cfg(not(target_os = "netbsd"))]
        // SAFETY: a link-level entry's ifa_data, when set, is its if_data.
        let mtu = (!a.ifa_data.is_null())
            .then(|| u64::from(unsafe { (*(a.ifa_data as *const libc::if_data)).ifi_mtu }));
        #[cfg(target_os = "netbsd")]
        let mtu = None;
        v.push(super::tuning::Nic {
            name,
            mtu,
            ..Default::default()
        });
    }
    // SAFETY: the list getifaddrs made, freed once.
    unsafe { libc::freeifaddrs(head) };
    Some(v)
}

/// The kernel's build configuration: none. The BSDs and macOS keep no
/// `CONFIG_…` file; FreeBSD has `sysctl kern.conftxt`, in another form and
/// only when the kernel was built with `options INCLUDE_CONFIG_FILE`,
/// which scalebench does not read (it has never run there).
pub fn kernel_config(_release: &str) -> Option<(String, String)> {
    None
}

/// The C library and its version.
pub fn libc_version() -> String {
    let u = super::uname();
    format!("system libc ({} {})", u.sysname, u.release)
}

use super::c_chars as cstr;

/// (type, mounted on, mounted from) of the filesystem holding `path`.
fn statfs_names(path: &Path) -> Option<(String, String, String)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    #[cfg(target_os = "netbsd")]
    {
        // SAFETY: statvfs is plain data; the path is NUL-terminated.
        let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        Some((
            cstr(&s.f_fstypename),
            cstr(&s.f_mntonname),
            cstr(&s.f_mntfromname),
        ))
    }
    #[cfg(not(target_os = "netbsd"))]
    {
        // SAFETY: statfs is plain data; the path is NUL-terminated.
        let mut s: libc::statfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
            return None;
        }
        Some((
            cstr(&s.f_fstypename),
            cstr(&s.f_mntonname),
            cstr(&s.f_mntfromname),
        ))
    }
}

/// Options of the mount at `mount_point`, from `mount(8)`'s output lines of
/// the form `/dev/ada0p2 on / (ufs, local, soft-updates)`.
fn mount_options(mount_point: &str) -> String {
    let Ok(out) = Command::new("mount").output() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let needle = format!(" on {mount_point} (");
    text.lines()
        .find_map(|l| {
            let start = l.find(&needle)? + needle.len();
            let end = l.rfind(')')?;
            Some(l.get(start..end)?.replace(", ", ","))
        })
        .unwrap_or_default()
}

/// The mounted filesystem that holds `path`.
pub fn mount_of(path: &Path) -> Option<Mount> {
    let (fs_type, mount_point, device) = statfs_names(path)?;
    let options = mount_options(&mount_point);
    Some(Mount {
        fs_type,
        mount_point,
        device,
        options,
    })
}

/// Pins the calling process to one CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    #[cfg(target_os = "freebsd")]
    {
        if cpu >= 8 * std::mem::size_of::<libc::cpuset_t>() {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: cpuset_t is plain data, set with the libc macros.
        unsafe {
            let mut set: libc::cpuset_t = std::mem::zeroed();
            libc::CPU_SET(cpu, &mut set);
            if libc::cpuset_setaffinity(
                libc::CPU_LEVEL_WHICH,
                libc::CPU_WHICH_PID,
                -1,
                std::mem::size_of::<libc::cpuset_t>(),
                &set,
            ) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        let _ = cpu;
        // Allocates: never called between fork and exec where
        // `CAN_PIN` is false.
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            crate::NO_PINNING,
        ))
    }
}

/// A saved CPU affinity mask.
pub struct SavedAffinity(
    #[cfg(target_os = "freebsd")] libc::cpuset_t,
    #[cfg(not(target_os = "freebsd"))] (),
);

/// The calling process's CPU affinity, where scalebench can set it.
pub fn save_affinity() -> Option<SavedAffinity> {
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: cpuset_t is plain data that cpuset_getaffinity fills.
        unsafe {
            let mut set: libc::cpuset_t = std::mem::zeroed();
            (libc::cpuset_getaffinity(
                libc::CPU_LEVEL_WHICH,
                libc::CPU_WHICH_PID,
                -1,
                std::mem::size_of::<libc::cpuset_t>(),
                &mut set,
            ) == 0)
                .then_some(SavedAffinity(set))
        }
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        None
    }
}

/// Restores a saved affinity.
pub fn restore_affinity(a: &SavedAffinity) {
    #[cfg(target_os = "freebsd")]
    // SAFETY: setting a mask that was valid when saved.
    unsafe {
        libc::cpuset_setaffinity(
            libc::CPU_LEVEL_WHICH,
            libc::CPU_WHICH_PID,
            -1,
            std::mem::size_of::<libc::cpuset_t>(),
            &a.0,
        );
    }
    #[cfg(not(target_os = "freebsd"))]
    let _ = a;
}

/// Makes this process the reaper of orphaned descendants, where the OS
/// can; returns whether it worked.
pub fn set_child_subreaper() -> bool {
    #[cfg(target_os = "freebsd")]
    {
        // SAFETY: procctl on our own pid with no data argument.
        unsafe {
            libc::procctl(
                libc::P_PID,
                libc::getpid() as libc::id_t,
                libc::PROC_REAP_ACQUIRE,
                std::ptr::null_mut(),
            ) == 0
        }
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        false
    }
}

/// Memory mappings of this process, where the OS tells.
pub fn count_mappings() -> Option<usize> {
    None
}

/// Opens `rel` below the directory `dir` without leaving it, in one
/// lookup: FreeBSD (13 and later) with `O_RESOLVE_BENEATH` (a `..` or a
/// link leading out fails with `ENOTCAPABLE`, which the caller refuses as
/// any other error; never run here: no FreeBSD has run this code). The
/// other systems say `Unsupported`, and the caller checks the real path
/// itself.
pub fn open_beneath(dir: i32, rel: &std::ffi::CStr) -> std::io::Result<std::fs::File> {
    #[cfg(target_os = "freebsd")]
    {
        use std::os::fd::FromRawFd;
        let flags = libc::O_RDONLY
            | libc::O_CLOEXEC
            | libc::O_NONBLOCK
            | libc::O_NOCTTY
            | libc::O_RESOLVE_BENEATH;
        // SAFETY: openat with a valid C string.
        let fd = unsafe { libc::openat(dir, rel.as_ptr(), flags) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor openat just gave, owned by nobody else.
        Ok(unsafe { std::fs::File::from_raw_fd(fd) })
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        let _ = (dir, rel);
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// Sends up to `count` bytes of `file` from `offset` to the socket `sock`;
/// returns how many were sent. FreeBSD, DragonFly and macOS have
/// sendfile(2) (with their own signatures); NetBSD and OpenBSD do not, and
/// say so, so that the caller falls back to read and write.
pub fn sendfile(sock: i32, file: i32, offset: u64, count: usize) -> std::io::Result<usize> {
    #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
    {
        let mut sent: libc::off_t = 0;
        // SAFETY: sendfile(2) between two descriptors the caller owns.
        let r = unsafe {
            libc::sendfile(
                file,
                sock,
                offset as libc::off_t,
                count,
                std::ptr::null_mut(),
                &mut sent,
                0,
            )
        };
        // A partial send returns -1 with EAGAIN but reports what went out.
        if r < 0 && sent == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(sent as usize)
    }
    #[cfg(target_vendor = "apple")]
    {
        let mut len: libc::off_t = count as libc::off_t;
        // SAFETY: sendfile(2) between two descriptors the caller owns.
        let r = unsafe {
            libc::sendfile(
                file,
                sock,
                offset as libc::off_t,
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if r < 0 && len == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(len as usize)
    }
    #[cfg(not(any(
        target_os = "freebsd",
        target_os = "dragonfly",
        target_vendor = "apple"
    )))]
    {
        let _ = (sock, file, offset, count);
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "no sendfile(2) on this OS",
        ))
    }
}
/// Wakes a listening socket's accept only once a connection's first
/// data has arrived: FreeBSD's and NetBSD's `dataready` accept filter (the
/// accf_data module must be loaded), where there is one. Returns what was
/// set, in words.
pub fn defer_accept(listener: i32) -> std::io::Result<&'static str> {
    #[cfg(any(target_os = "freebsd", target_os = "netbsd"))]
    {
        // SAFETY: accept_filter_arg is plain bytes.
        let mut arg: libc::accept_filter_arg = unsafe { std::mem::zeroed() };
        for (d, s) in arg.af_name.iter_mut().zip(b"dataready") {
            *d = *s as libc::c_char;
        }
        // SAFETY: setsockopt with a pointer to a struct of the right size.
        let r = unsafe {
            libc::setsockopt(
                listener,
                libc::SOL_SOCKET,
                libc::SO_ACCEPTFILTER,
                &arg as *const libc::accept_filter_arg as *const libc::c_void,
                std::mem::size_of::<libc::accept_filter_arg>() as libc::socklen_t,
            )
        };
        if r == 0 {
            Ok("accept filter dataready")
        } else {
            Err(std::io::Error::last_os_error())
        }
    }
    #[cfg(not(any(target_os = "freebsd", target_os = "netbsd")))]
    {
        let _ = listener;
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "no deferred accept on this OS",
        ))
    }
}

/// Asks the kernel to send `signal` to this process when its parent dies,
/// where the OS can (procctl on FreeBSD and DragonFly); returns whether it
/// will. Async-signal-safe (one system call), so usable between fork and
/// exec.
pub fn die_with_parent(signal: libc::c_int) -> bool {
    #[cfg(any(target_os = "freebsd", target_os = "dragonfly"))]
    {
        let mut sig: libc::c_int = signal;
        // SAFETY: procctl on our own process with a pointer to an int.
        unsafe {
            libc::procctl(
                libc::P_PID,
                libc::getpid() as libc::id_t,
                libc::PROC_PDEATHSIG_CTL,
                &mut sig as *mut libc::c_int as *mut libc::c_void,
            ) == 0
        }
    }
    #[cfg(not(any(target_os = "freebsd", target_os = "dragonfly")))]
    {
        let _ = signal;
        false
    }
}

/// Emptying the file caches is not possible from user space here: the
/// caller says "warm only".
pub fn drop_caches() -> std::io::Result<()> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "this OS has no way to drop the file caches from user space",
    ))
}

/// Flushes dirty data (sync(2): these systems have no syncfs).
pub fn sync_fs(_fd: i32) -> std::io::Result<()> {
    // SAFETY: sync() has no preconditions.
    unsafe { libc::sync() };
    Ok(())
}

fn no_disks() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "making filesystems on file-backed disks (mdconfig, vnconfig, hdiutil) is not implemented on this OS yet; run on a mounted filesystem with --dir",
    )
}

/// File-backed disks: not implemented here yet (see [`no_disks`]).
pub fn disk_attach(_file: &Path) -> std::io::Result<String> {
    Err(no_disks())
}

/// What a killed run's filesystem workload left mounted below `dir`:
/// nothing here, where file-backed disks are not made yet.
pub fn release_mounts_under(_dir: &Path) -> Vec<String> {
    Vec::new()
}

/// File-backed disks: not implemented here yet.
pub fn disk_detach(_dev: &str) -> std::io::Result<()> {
    Err(no_disks())
}

/// File-backed disks: not implemented here yet.
pub fn make_fs(_kind: &str, _dev: &str, _extra: &[String]) -> std::io::Result<()> {
    Err(no_disks())
}

/// Remounting with other options (`mount -u`): not done here yet.
pub fn remount(_dir: &Path, _options: &str) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// File-backed disks: not implemented here yet.
pub fn mount_fs(_dev: &str, _dir: &Path, _kind: &str, _options: &str) -> std::io::Result<()> {
    Err(no_disks())
}

/// File-backed disks: not implemented here yet.
pub fn unmount_fs(_dir: &Path) -> std::io::Result<()> {
    Err(no_disks())
}
