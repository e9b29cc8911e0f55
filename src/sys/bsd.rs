//! The BSDs and macOS: `sysctl(8)`, `statfs(2)` and `mount(8)`.

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

/// Reads one sysctl.
pub fn sysctl(name: &str) -> Option<String> {
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-')
    {
        return None;
    }
    let out = Command::new("sysctl").arg("-n").arg(name).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!v.is_empty()).then_some(v)
}

/// Busy and total time of each CPU so far, in ticks: FreeBSD's
/// `kern.cp_times` (user, nice, system, interrupt, idle per CPU); `None`
/// on the other systems here.
pub fn cpu_ticks() -> Option<Vec<super::CpuTicks>> {
    #[cfg(target_os = "freebsd")]
    {
        let name = c"kern.cp_times";
        let mut len: libc::size_t = 0;
        // SAFETY: asking for the size only.
        if unsafe {
            libc::sysctlbyname(
                name.as_ptr(),
                std::ptr::null_mut(),
                &mut len,
                std::ptr::null(),
                0,
            )
        } != 0
        {
            return None;
        }
        let mut buf = vec![0 as libc::c_long; len / std::mem::size_of::<libc::c_long>()];
        let mut len = buf.len() * std::mem::size_of::<libc::c_long>();
        // SAFETY: `buf` holds `len` bytes.
        if unsafe {
            libc::sysctlbyname(
                name.as_ptr(),
                buf.as_mut_ptr().cast(),
                &mut len,
                std::ptr::null(),
                0,
            )
        } != 0
        {
            return None;
        }
        buf.truncate(len / std::mem::size_of::<libc::c_long>());
        let v: Vec<super::CpuTicks> = buf
            .chunks_exact(5)
            .map(|c| {
                let total: u64 = c.iter().map(|&x| x as u64).sum();
                super::CpuTicks {
                    busy: total - c[4] as u64,
                    total,
                }
            })
            .collect();
        (!v.is_empty()).then_some(v)
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        None
    }
}

/// The current clock of each CPU in MHz: `dev.cpu.N.freq` (FreeBSD,
/// DragonFly, where cpufreq is loaded); `None` elsewhere.
pub fn cpu_clocks_mhz() -> Option<Vec<f64>> {
    if !cfg!(any(target_os = "freebsd", target_os = "dragonfly")) {
        return None;
    }
    let n = super::cpu_count();
    let v: Vec<f64> = (0..n)
        .map_while(|i| sysctl(&format!("dev.cpu.{i}.freq"))?.parse().ok())
        .collect();
    (v.len() == n).then_some(v)
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
pub fn pin_to_cpu(cpu: usize) -> Result<(), String> {
    #[cfg(target_os = "freebsd")]
    {
        if cpu >= 8 * std::mem::size_of::<libc::cpuset_t>() {
            return Err(format!("CPU {cpu} is beyond what an affinity mask holds"));
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
                return Err(std::io::Error::last_os_error().to_string());
            }
        }
        Ok(())
    }
    #[cfg(not(target_os = "freebsd"))]
    {
        let _ = cpu;
        Err("CPU pinning is implemented for Linux and FreeBSD only".into())
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
pub fn make_fs(_kind: &str, _dev: &str) -> std::io::Result<()> {
    Err(no_disks())
}

/// File-backed disks: not implemented here yet.
pub fn mount_fs(_dev: &str, _dir: &Path, _kind: &str, _options: &str) -> std::io::Result<()> {
    Err(no_disks())
}

/// File-backed disks: not implemented here yet.
pub fn unmount_fs(_dir: &Path) -> std::io::Result<()> {
    Err(no_disks())
}
