//! Linux: `/proc` and `/sys`.

use super::{Knob, Mount};
use std::path::{Path, PathBuf};

/// The clock behind [`super::coarse_now`].
pub const COARSE_CLOCK: libc::clockid_t = libc::CLOCK_MONOTONIC_COARSE;

/// OS-specific sysctl names of a knob.
pub fn knob_names(knob: Knob) -> &'static [&'static str] {
    match knob {
        Knob::FilesSystem => &["fs.file-max"],
        Knob::FilesPerProcess => &["fs.nr_open"],
        Knob::PortRange => &["net.ipv4.ip_local_port_range"],
        Knob::Processes => &["kernel.pid_max", "kernel.threads-max"],
        Knob::ProcessesPerUser => &[],
        Knob::Mappings => &["vm.max_map_count"],
        Knob::ListenBacklog => &["net.core.somaxconn"],
        Knob::TimeWaitReuse => &["net.ipv4.tcp_tw_reuse"],
        Knob::TimeWaitBuckets => &["net.ipv4.tcp_max_tw_buckets"],
        // TIME_WAIT lasts TCP_TIMEWAIT_LEN (60 s), a compile-time constant.
        Knob::SegmentLifetime => &[],
    }
}

/// TCP sockets in TIME_WAIT now, system-wide (`tw` in /proc/net/sockstat;
/// IPv6 ones are counted there too).
pub fn time_wait_count() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/net/sockstat").ok()?;
    let line = text.lines().find(|l| l.starts_with("TCP:"))?;
    let f: Vec<&str> = line.split_whitespace().collect();
    let i = f.iter().position(|w| *w == "tw")?;
    f.get(i + 1)?.parse().ok()
}

/// Open descriptors of this process as /proc/self/fd lists them, less
/// the one the listing itself holds: as many reads as are open, however
/// high the limit. `None` without /proc.
pub fn listed_fds() -> Option<usize> {
    std::fs::read_dir("/proc/self/fd")
        .ok()?
        .count()
        .checked_sub(1)
}

/// Whether every address of 127.0.0.0/8 is a loopback address this host
/// may connect from without configuring it (true on Linux).
pub fn whole_loopback_net() -> bool {
    true
}

/// Asks a socket about to be bound to a source address to leave the port
/// to connect(), which then picks one unique for the whole address pair
/// (`IP_BIND_ADDRESS_NO_PORT`): without it, bind() would need a port free
/// for every destination and the range would run out at its size.
/// `Ok(false)` where the OS has no such option.
pub fn bind_address_no_port(fd: i32) -> std::io::Result<bool> {
    let on: libc::c_int = 1;
    // SAFETY: setsockopt with a pointer to an int of the right size.
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(true)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Gives the calling thread a descriptor table of its own
/// (`unshare(CLONE_FILES)`), holding only its standard input, output and
/// error (`close_range(3, ~0)`, or a loop up to the soft limit where the
/// kernel predates it): the threads it starts afterwards share the new
/// table, the rest of the process keeps the old one. The new table is
/// sized by the descriptors open when it is made, not by how far the old
/// one ever grew, so that a benchmark sees it grow again. `Ok(true)`.
pub fn private_descriptor_table() -> std::io::Result<bool> {
    // SAFETY: unshare with a flag that affects only this thread's table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: closes this thread's own copies; the process's table keeps
    // its descriptors.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32) };
    if r != 0 {
        let top = super::open_files_limit().unwrap_or(1 << 16).min(1 << 20) as i32;
        for fd in 3..top {
            // SAFETY: as above, one descriptor at a time.
            unsafe { libc::close(fd) };
        }
    }
    Ok(true)
}

/// Reads one sysctl.
pub fn sysctl(name: &str) -> Option<String> {
    let v = std::fs::read_to_string(sysctl_path(name)?).ok()?;
    Some(v.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The file behind a sysctl name, or `None` for a name that could reach
/// outside /proc/sys.
fn sysctl_path(name: &str) -> Option<PathBuf> {
    if name.is_empty() || name.contains("..") || name.contains('/') {
        return None;
    }
    Some(PathBuf::from(format!(
        "/proc/sys/{}",
        name.replace('.', "/")
    )))
}

/// Writes one sysctl; the error says why the kernel refused.
pub fn set_sysctl(name: &str, value: &str) -> std::io::Result<()> {
    let path = sysctl_path(name).ok_or_else(|| std::io::Error::other("not a sysctl name"))?;
    std::fs::write(path, value)
}

/// Whether this process could write the sysctl `name`, without writing
/// it: `Err` says why not (absent, read-only, not root).
pub fn sysctl_writable(name: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let path = sysctl_path(name).ok_or("not a sysctl name")?;
    let meta = std::fs::metadata(&path).map_err(|_| "no such sysctl here".to_string())?;
    if meta.is_dir() {
        return Err("a group of sysctls, not one".into());
    }
    if meta.permissions().mode() & 0o222 == 0 {
        return Err("read-only".into());
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root".into());
    }
    Ok(())
}

/// The cpufreq governor file of every CPU.
fn governor_files() -> Vec<PathBuf> {
    let mut v: Vec<(usize, PathBuf)> = std::fs::read_dir("/sys/devices/system/cpu")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let i: usize = name.strip_prefix("cpu")?.parse().ok()?;
            let f = e.path().join("cpufreq/scaling_governor");
            f.exists().then_some((i, f))
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, f)| f).collect()
}

const THP: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Reads a named setting.
pub fn read_setting(s: super::Setting) -> Option<String> {
    match s {
        super::Setting::Governor => governor(),
        super::Setting::TransparentHugepages => read_line(THP).and_then(|v| selected_choice(&v)),
    }
}

/// The values the kernel takes for a named setting (THP's `always
/// madvise never`; the governors cpufreq offers); `None` where the setting
/// is not here.
pub fn setting_choices(s: super::Setting) -> Option<Vec<String>> {
    let line = match s {
        super::Setting::Governor => {
            let f = governor_files().into_iter().next()?;
            read_line(f.with_file_name("scaling_available_governors").to_str()?)?
        }
        super::Setting::TransparentHugepages => read_line(THP)?,
    };
    let v: Vec<String> = line
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect();
    (!v.is_empty()).then_some(v)
}

/// Whether this process could change a named setting: `Err` says why not.
pub fn setting_writable(s: super::Setting) -> Result<(), String> {
    let files = match s {
        super::Setting::Governor => governor_files(),
        super::Setting::TransparentHugepages => vec![PathBuf::from(THP)],
    };
    if files.is_empty() || !files[0].exists() {
        return Err(match s {
            super::Setting::Governor => "no CPU frequency scaling (cpufreq) here".into(),
            super::Setting::TransparentHugepages => "no transparent huge pages here".into(),
        });
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("needs root".into());
    }
    Ok(())
}

/// Changes a named setting (every CPU's governor).
pub fn write_setting(s: super::Setting, value: &str) -> std::io::Result<()> {
    setting_writable(s).map_err(std::io::Error::other)?;
    let files = match s {
        super::Setting::Governor => governor_files(),
        super::Setting::TransparentHugepages => vec![PathBuf::from(THP)],
    };
    for f in files {
        std::fs::write(f, value)?;
    }
    Ok(())
}

/// Whether this process may raise a hard resource limit
/// (CAP_SYS_RESOURCE in its effective capabilities).
pub fn may_raise_hard_limits() -> Option<bool> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let caps = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    let bits = u64::from_str_radix(caps.trim(), 16).ok()?;
    Some(bits & (1 << 24) != 0)
}

fn cpuinfo_field(key: &str) -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// The CPU model name.
pub fn cpu_model() -> Option<String> {
    cpuinfo_field("model name").or_else(|| cpuinfo_field("Model"))
}

/// The CPU clock in MHz as the OS reports it.
pub fn cpu_mhz() -> Option<f64> {
    cpuinfo_field("cpu MHz")?.parse().ok()
}

/// Busy, total and stolen time of each CPU so far, in the OS's ticks,
/// from /proc/stat (busy: everything but idle and iowait).
pub fn cpu_ticks() -> Option<Vec<super::CpuTicks>> {
    parse_cpu_ticks(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The `cpuN` lines of /proc/stat as [`super::CpuTicks`], from each CPU's
/// states ([`super::counters::proc_stat_cpus`]); steal is absent when the
/// line stops before it.
pub(crate) fn parse_cpu_ticks(stat: &str) -> Option<Vec<super::CpuTicks>> {
    let v: Vec<super::CpuTicks> = super::counters::proc_stat_cpus(stat)
        .iter()
        .map(super::counters::CpuStates::ticks)
        .collect();
    (!v.is_empty()).then_some(v)
}

/// The current clock of each CPU in MHz: cpufreq's scaling_cur_freq, else
/// the "cpu MHz" lines of /proc/cpuinfo.
pub fn cpu_clocks_mhz() -> Option<Vec<f64>> {
    let mut v = Vec::new();
    for i in 0.. {
        match std::fs::read_to_string(format!(
            "/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_cur_freq"
        )) {
            Ok(s) => v.push(s.trim().parse::<f64>().ok()? / 1000.0),
            Err(_) => break,
        }
    }
    if v.is_empty() {
        let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
        v = info
            .lines()
            .filter(|l| l.starts_with("cpu MHz"))
            .filter_map(|l| l.split(':').nth(1)?.trim().parse().ok())
            .collect();
    }
    (!v.is_empty()).then_some(v)
}

/// Whether the TSC runs at a constant rate in every power state.
pub fn invariant_tsc() -> Option<bool> {
    let flags = cpuinfo_field("flags")?;
    let has = |f: &str| flags.split_whitespace().any(|x| x == f);
    Some(has("constant_tsc") && has("nonstop_tsc"))
}

/// Physical memory in bytes.
pub fn memory_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// The C library and its version.
pub fn libc_version() -> String {
    #[cfg(target_env = "gnu")]
    {
        unsafe extern "C" {
            fn gnu_get_libc_version() -> *const libc::c_char;
        }
        // SAFETY: returns a pointer to a static NUL-terminated string.
        let v = unsafe { std::ffi::CStr::from_ptr(gnu_get_libc_version()) };
        format!("glibc {}", v.to_string_lossy())
    }
    #[cfg(target_env = "musl")]
    {
        "musl".to_string()
    }
    #[cfg(not(any(target_env = "gnu", target_env = "musl")))]
    {
        "unknown".to_string()
    }
}

/// Parses one mountinfo line into a [`Mount`].
pub(crate) fn parse_mountinfo_line(line: &str) -> Option<Mount> {
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 {
        return None;
    }
    let mut options = l[5].to_string();
    if let Some(sup) = r.get(2) {
        for o in sup.split(',') {
            if !options.split(',').any(|x| x == o) {
                options.push(',');
                options.push_str(o);
            }
        }
    }
    Some(Mount {
        fs_type: r[0].to_string(),
        mount_point: super::mountinfo::unescape(l[4]),
        device: super::mountinfo::unescape(r[1]),
        options,
    })
}

/// The mounted filesystem that holds `path`.
pub fn mount_of(path: &Path) -> Option<Mount> {
    let path = std::fs::canonicalize(path).ok()?;
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mut best: Option<Mount> = None;
    for m in info.lines().filter_map(parse_mountinfo_line) {
        if path.starts_with(&m.mount_point)
            && best
                .as_ref()
                .is_none_or(|b| m.mount_point.len() >= b.mount_point.len())
        {
            best = Some(m);
        }
    }
    best
}

/// Pins the calling process to one CPU.
pub fn pin_to_cpu(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data, manipulated with the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A saved CPU affinity mask.
pub struct SavedAffinity(libc::cpu_set_t);

/// The calling thread's CPU affinity.
pub fn save_affinity() -> Option<SavedAffinity> {
    // SAFETY: cpu_set_t is plain data that sched_getaffinity fills.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(SavedAffinity(set))
    }
}

/// Restores a saved affinity.
pub fn restore_affinity(a: &SavedAffinity) {
    // SAFETY: setting a mask that was valid when saved.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &a.0) };
}

/// Makes this process the reaper of orphaned descendants, where the OS
/// can; returns whether it worked.
pub fn set_child_subreaper() -> bool {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
}

/// Memory mappings of this process, where the OS tells.
pub fn count_mappings() -> Option<usize> {
    Some(
        std::fs::read_to_string("/proc/self/maps")
            .ok()?
            .lines()
            .count(),
    )
}

/// Sends up to `count` bytes of `file` from `offset` to the socket `sock`;
/// returns how many were sent (a short count or EAGAIN are for the caller).
pub fn sendfile(sock: i32, file: i32, offset: u64, count: usize) -> std::io::Result<usize> {
    let mut off = offset as libc::off_t;
    // SAFETY: plain sendfile(2) between two descriptors the caller owns.
    let r = unsafe { libc::sendfile(sock, file, &mut off, count) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// Opens the file `rel` names below the directory `dir` for reading, in
/// one lookup that never leaves `dir` (openat2 with `RESOLVE_BENEATH` and
/// no magic links, Linux 5.6 and later): a `..` or a symbolic link that
/// would lead out fails (`EXDEV`), links that stay below are followed.
/// `Unsupported` where the kernel has no openat2 (the caller then checks
/// the real path itself).
#[cfg(target_os = "android")]
pub fn open_beneath(_dir: i32, _rel: &std::ffi::CStr) -> std::io::Result<std::fs::File> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// [`open_beneath`] with openat2 (Linux).
#[cfg(not(target_os = "android"))]
pub fn open_beneath(dir: i32, rel: &std::ffi::CStr) -> std::io::Result<std::fs::File> {
    use std::os::fd::FromRawFd;
    // SAFETY: open_how is plain integers.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    // Non-blocking: a FIFO below the root must not hold the server (the
    // caller serves regular files only, and reads them unaffected).
    how.flags = (libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NONBLOCK | libc::O_NOCTTY) as u64;
    how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
    // SAFETY: openat2 with a valid C string and a struct of the size given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            dir,
            rel.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        let e = std::io::Error::last_os_error();
        return Err(match e.raw_os_error() {
            Some(libc::ENOSYS) => std::io::ErrorKind::Unsupported.into(),
            _ => e,
        });
    }
    // SAFETY: a descriptor openat2 just gave, owned by nobody else.
    Ok(unsafe { std::fs::File::from_raw_fd(fd as i32) })
}

/// Asks the kernel to send `signal` to this process when its parent (on
/// Linux: the parent *thread*) dies; returns whether it will.
/// Async-signal-safe (one system call), so usable between fork and exec.
pub fn die_with_parent(signal: libc::c_int) -> bool {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) == 0 }
}

/// Wakes a listening socket's accept only once a connection's first
/// data has arrived (TCP_DEFER_ACCEPT): a request and its connection come
/// in one wakeup. Returns what was set, in words.
pub fn defer_accept(listener: i32) -> std::io::Result<&'static str> {
    let secs: libc::c_int = 1;
    // SAFETY: setsockopt with a pointer to an int of the right size.
    let r = unsafe {
        libc::setsockopt(
            listener,
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            &secs as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok("TCP_DEFER_ACCEPT")
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Writes dirty data to disk, then empties the page, dentry and inode
/// caches (`/proc/sys/vm/drop_caches`); needs root.
pub fn drop_caches() -> std::io::Result<()> {
    // SAFETY: sync() has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", b"3\n")
}

/// Flushes the filesystem holding the open directory `fd` (syncfs(2)).
pub fn sync_fs(fd: i32) -> std::io::Result<()> {
    // SAFETY: syncfs on a descriptor we own.
    if unsafe { libc::syncfs(fd) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Runs a system command, its failure an error naming it with its output.
fn command(program: &str, args: &[&str]) -> std::io::Result<String> {
    let out = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| std::io::Error::new(e.kind(), format!("{program}: {e}")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(std::io::Error::other(format!(
            "`{program} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// Unmounts every filesystem mounted at or below `dir` (deepest first) and
/// detaches every loop device whose backing file lies below it: what a
/// killed run's filesystem workload left behind. Returns what it did or
/// could not do, in words.
pub fn release_mounts_under(dir: &Path) -> Vec<String> {
    let mut notes = Vec::new();
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return notes;
    };
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(parse_mountinfo_line)
        .map(|m| PathBuf::from(m.mount_point))
        .filter(|p| p.starts_with(&dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for p in points {
        match unmount_fs(&p) {
            Ok(()) => notes.push(format!("unmounted {}", p.display())),
            Err(e) => notes.push(format!("could not unmount {}: {e}", p.display())),
        }
    }
    let Ok(devices) = std::fs::read_dir("/sys/block") else {
        return notes;
    };
    for d in devices.flatten() {
        let name = d.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(backing) = std::fs::read_to_string(d.path().join("loop/backing_file")) else {
            continue;
        };
        // A deleted backing file reads "PATH (deleted)".
        let backing = backing.trim().trim_end_matches(" (deleted)");
        if Path::new(backing).starts_with(&dir) {
            let dev = format!("/dev/{name}");
            match disk_detach(&dev) {
                Ok(()) => notes.push(format!("detached {dev}")),
                Err(e) => notes.push(format!("could not detach {dev}: {e}")),
            }
        }
    }
    notes
}

/// Attaches `file` to a free loop device; returns the device path.
pub fn disk_attach(file: &Path) -> std::io::Result<String> {
    let f = file.to_string_lossy();
    // Without its control device, loop is a module nobody loaded (a
    // guest's devtmpfs has no node to load it on first open): load it;
    // when that fails, losetup's own error says what is missing.
    if !Path::new("/dev/loop-control").exists() {
        let _ = command("modprobe", &["-q", "loop"]);
    }
    command("losetup", &["--find", "--show", &f])
}

/// Detaches a loop device.
pub fn disk_detach(dev: &str) -> std::io::Result<()> {
    command("losetup", &["-d", dev]).map(drop)
}

/// Makes a filesystem of type `kind` (ext2, ext3, ext4, xfs, btrfs, jfs, reiserfs) on `dev`.
pub fn make_fs(kind: &str, dev: &str, extra: &[String]) -> std::io::Result<()> {
    let program = format!("mkfs.{kind}");
    let mut args: Vec<&str> = match kind {
        "ext2" | "ext3" | "ext4" => vec!["-q", "-F"],
        "xfs" | "btrfs" => vec!["-q", "-f"],
        // jfs_mkfs: -q also skips its confirmation.
        "jfs" => vec!["-q"],
        // mkreiserfs: -q asks nothing, -f takes a file that is no disk.
        "reiserfs" => vec!["-q", "-f"],
        _ => Vec::new(),
    };
    args.extend(extra.iter().map(String::as_str));
    args.push(dev);
    command(&program, &args).map(drop)
}

/// Mounts `dev` (a filesystem of type `kind`) on `dir` with `options`
/// (comma separated; empty for the defaults).
pub fn mount_fs(dev: &str, dir: &Path, kind: &str, options: &str) -> std::io::Result<()> {
    let d = dir.to_string_lossy();
    let mut args = vec!["-t", kind];
    if !options.is_empty() {
        args.extend(["-o", options]);
    }
    args.extend([dev, &d]);
    command("mount", &args).map(drop)
}

/// Remounts the filesystem mounted at `dir` with exactly `options`
/// (mount(8)'s `-o remount,OPTIONS`, taking nothing from /etc/fstab or the
/// mount table: a flag not given is cleared, so the caller gives every one
/// to keep).
pub fn remount(dir: &Path, options: &str) -> std::io::Result<()> {
    let o = format!("remount,{options}");
    command(
        "mount",
        &["--options-source=disable", "-o", &o, &dir.to_string_lossy()],
    )
    .map(drop)
}

/// Unmounts `dir`.
pub fn unmount_fs(dir: &Path) -> std::io::Result<()> {
    command("umount", &[&dir.to_string_lossy()]).map(drop)
}

/// One line of a sysfs or procfs file, trimmed; `None` when absent or empty.
fn read_line(path: &str) -> Option<String> {
    let v = std::fs::read_to_string(path).ok()?;
    let v = v.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The selected choice of a sysfs multiple choice (`always [madvise]
/// never` → `madvise`); a value without brackets is itself.
pub(crate) fn selected_choice(s: &str) -> Option<String> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    match s.split_whitespace().find(|w| w.starts_with('[')) {
        Some(w) => Some(w.trim_matches(|c| c == '[' || c == ']').to_string()),
        None if !s.contains(' ') => Some(s.to_string()),
        None => None,
    }
}

/// Per-CPU values collapsed into one when they are all equal, else each
/// as `cpuN=value`.
pub(crate) fn collapse_per_cpu(values: &[(usize, String)]) -> Option<String> {
    let (_, first) = values.first()?;
    if values.iter().all(|(_, v)| v == first) {
        return Some(first.clone());
    }
    Some(
        values
            .iter()
            .map(|(i, v)| format!("cpu{i}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// The cpufreq governor of each CPU, collapsed when all are equal.
fn governor() -> Option<String> {
    let v: Vec<(usize, String)> = governor_files()
        .into_iter()
        .filter_map(|f| {
            let i = f.parent()?.parent()?.file_name()?.to_str()?;
            Some((
                i.strip_prefix("cpu")?.parse().ok()?,
                read_line(f.to_str()?)?,
            ))
        })
        .collect();
    collapse_per_cpu(&v)
}

/// Whether the CPUs may boost: cpufreq's `boost`, else intel_pstate's
/// `no_turbo` (inverted).
fn boost() -> Option<bool> {
    if let Some(b) = read_line("/sys/devices/system/cpu/cpufreq/boost") {
        return Some(b == "1");
    }
    read_line("/sys/devices/system/cpu/intel_pstate/no_turbo").map(|v| v == "0")
}

/// Every CPU vulnerability and what the kernel says of it.
fn mitigations() -> std::collections::BTreeMap<String, String> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/cpu/vulnerabilities") else {
        return Default::default();
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let v = read_line(&e.path().to_string_lossy())?;
            Some((name, v))
        })
        .collect()
}

/// The hypervisor, when the CPU says it runs under one (`none` when it
/// says it does not; `None` when it cannot tell, as on most ARM).
fn hypervisor(flags: Option<&str>, machine: Option<&str>) -> Option<String> {
    let flags = flags?;
    if !flags.split_whitespace().any(|f| f == "hypervisor") {
        return Some("none".into());
    }
    read_line("/sys/hypervisor/type")
        .or_else(cpuid_hypervisor)
        .or_else(|| machine.map(str::to_string))
        .or_else(|| Some("yes".into()))
}

/// The hypervisor's name by its CPUID signature (leaf 0x40000000), when
/// the CPU says it runs under one.
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn cpuid_hypervisor() -> Option<String> {
    hypervisor_name(super::hypervisor_signature()?.as_bytes())
}

#[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
fn cpuid_hypervisor() -> Option<String> {
    None
}

/// The running kernel's build configuration as text, and where it was
/// read: `/proc/config.gz` (`CONFIG_IKCONFIG_PROC`), else
/// `/boot/config-RELEASE`; at most 16 MiB of it.
pub fn kernel_config(release: &str) -> Option<(String, String)> {
    use std::io::Read;
    const MAX: u64 = 16 << 20;
    if let Ok(f) = std::fs::File::open("/proc/config.gz") {
        let mut text = String::new();
        let gz = flate2::read::GzDecoder::new(f)
            .take(MAX)
            .read_to_string(&mut text);
        if gz.is_ok() && !text.is_empty() {
            return Some(("/proc/config.gz".into(), text));
        }
    }
    if release.is_empty() || release.contains('/') {
        return None;
    }
    let path = format!("/boot/config-{release}");
    let mut text = String::new();
    std::fs::File::open(&path)
        .ok()?
        .take(MAX)
        .read_to_string(&mut text)
        .ok()?;
    Some((path, text))
}

/// The hypervisor a CPUID signature names (`KVMKVMKVM` → `kvm`); an
/// unknown signature as it is, trimmed.
pub(crate) fn hypervisor_name(sig: &[u8]) -> Option<String> {
    let s = String::from_utf8_lossy(sig);
    let s = s.trim_matches(|c: char| c == '\0' || c.is_whitespace());
    let known = [
        ("KVMKVMKVM", "kvm"),
        ("Microsoft Hv", "hyperv"),
        ("VMwareVMware", "vmware"),
        ("XenVMMXenVMM", "xen"),
        ("TCGTCGTCGTCG", "qemu"),
        ("bhyve bhyve", "bhyve"),
        ("VBoxVBoxVBox", "virtualbox"),
        ("ACRNACRNACRN", "acrn"),
        ("lrpepyh  vr", "parallels"),
    ];
    if s.is_empty() || !s.chars().all(|c| c.is_ascii_graphic() || c == ' ') {
        return None;
    }
    Some(
        known
            .iter()
            .find(|(sig, _)| *sig == s)
            .map_or_else(|| s.to_string(), |(_, name)| name.to_string()),
    )
}

/// The DMI maker and product name.
fn machine() -> Option<String> {
    let parts: Vec<String> = ["sys_vendor", "product_name"]
        .iter()
        .filter_map(|f| read_line(&format!("/sys/class/dmi/id/{f}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// Whether process `pid` lives and is not a zombie (/proc/PID/stat).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// CPU seconds (user + system) used so far by the live processes of
/// process group `pgid` (/proc/*/stat's pgrp), or `None` when none is
/// found.
pub fn group_cpu_seconds(pgid: i32) -> Option<f64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut ticks = 0u64;
    let mut found = false;
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(s) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(close) = s.rfind(')') else { continue };
        let f: Vec<&str> = s[close + 1..].split_whitespace().collect();
        // state ppid pgrp …; utime and stime are fields 11 and 12 after the name.
        if f.get(2).and_then(|g| g.parse::<i32>().ok()) != Some(pgid) {
            continue;
        }
        if let Some((_, t)) = parse_proc_stat(&s) {
            ticks += t;
            found = true;
        }
    }
    found.then(|| ticks as f64 / hz)
}

/// (name, utime + stime) from one /proc/PID/stat.
pub(crate) fn parse_proc_stat(s: &str) -> Option<(String, u64)> {
    let open = s.find('(')?;
    let close = s.rfind(')')?;
    let name = s.get(open + 1..close)?.to_string();
    let f: Vec<&str> = s.get(close + 1..)?.split_whitespace().collect();
    // After the name: state ppid pgrp session tty_nr tpgid flags minflt
    // cminflt majflt cmajflt utime stime …
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some((name, utime + stime))
}

type ProcTimes = std::collections::HashMap<u32, (String, u64)>;

/// CPU ticks used so far by every process but `skip`.
fn proc_times(skip: u32) -> ProcTimes {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return ProcTimes::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            if pid == skip {
                return None;
            }
            let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            Some((pid, parse_proc_stat(&s)?))
        })
        .collect()
}

/// The `n` processes that used the most CPU between two samples `secs`
/// apart, busiest first, leaving out the idle ones.
pub(crate) fn rank_busiest(
    before: &ProcTimes,
    after: &ProcTimes,
    ticks_per_s: f64,
    secs: f64,
    n: usize,
) -> Vec<super::tuning::BusyProcess> {
    let mut v: Vec<super::tuning::BusyProcess> = after
        .iter()
        .filter_map(|(&pid, (name, t))| {
            let (_, t0) = before.get(&pid)?;
            let d = t.checked_sub(*t0).filter(|&d| d > 0)?;
            Some(super::tuning::BusyProcess {
                pid,
                name: name.clone(),
                percent: (d as f64 / ticks_per_s / secs * 1000.0).round() / 10.0,
            })
        })
        .collect();
    v.sort_by(|a, b| b.percent.total_cmp(&a.percent).then(a.pid.cmp(&b.pid)));
    v.truncate(n);
    v
}

/// The busiest other processes over a 200 ms sample.
fn busiest() -> Option<Vec<super::tuning::BusyProcess>> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if hz <= 0 {
        return None;
    }
    let me = std::process::id();
    let t0 = std::time::Instant::now();
    let before = proc_times(me);
    if before.is_empty() {
        return None;
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    let after = proc_times(me);
    let secs = t0.elapsed().as_secs_f64();
    Some(rank_busiest(&before, &after, hz as f64, secs, 5))
}

/// The machine's settings and state now (the busiest processes take a
/// 200 ms sample).
pub fn tuning() -> super::tuning::Tuning {
    let flags = cpuinfo_field("flags");
    let machine = machine();
    super::tuning::Tuning {
        governor: governor(),
        boost: boost(),
        smt: read_line("/sys/devices/system/cpu/smt/control"),
        smt_active: read_line("/sys/devices/system/cpu/smt/active").map(|v| v == "1"),
        microcode: cpuinfo_field("microcode"),
        mitigations: mitigations(),
        kernel_cmdline: read_line("/proc/cmdline"),
        thp_enabled: read_line("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|v| selected_choice(&v)),
        thp_defrag: read_line("/sys/kernel/mm/transparent_hugepage/defrag")
            .and_then(|v| selected_choice(&v)),
        clocksource: read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        hypervisor: hypervisor(flags.as_deref(), machine.as_deref()),
        machine,
        load_average: read_line("/proc/loadavg").and_then(|v| super::parse_load_average(&v)),
        busiest: busiest(),
        sysctls: Default::default(),
        steal_percent: None,
        cgroup_limits: super::cgroups::cgroup_limits(),
        nics: super::nics::nics(),
        firewall: Some(super::guards::firewall()),
        security: Some(super::guards::security()),
        cpuidle: super::hardware::cpu_idle(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_line_parses_with_escapes_and_super_options() {
        let line = "36 35 98:0 / /mnt/my\\040disk rw,noatime master:1 - ext4 /dev/loop0 rw,errors=continue";
        let m = parse_mountinfo_line(line).unwrap();
        assert_eq!(m.mount_point, "/mnt/my disk");
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.device, "/dev/loop0");
        assert_eq!(m.options, "rw,noatime,errors=continue");
    }

    #[test]
    fn proc_stat_gives_busy_total_and_steal_per_cpu() {
        let stat = "cpu  5143903 16382 1405948 2689699 149579 0 274626 87153 0 0\n\
                    cpu0 100 10 50 800 40 0 5 7 3 0\n\
                    cpu1 200 0 100 600 0 0 0 0 0 0\n\
                    intr 12345 0 1\n\
                    ctxt 987\n";
        let t = parse_cpu_ticks(stat).unwrap();
        assert_eq!(
            t,
            [
                crate::CpuTicks {
                    busy: 172,
                    total: 1012,
                    steal: Some(7)
                },
                crate::CpuTicks {
                    busy: 300,
                    total: 900,
                    steal: Some(0)
                }
            ]
        );
        // Kernels before steal (2.6.11) have fewer columns.
        let old = parse_cpu_ticks("cpu0 100 10 50 800 40 0 5\n").unwrap();
        assert_eq!(old[0].steal, None);
        assert_eq!(old[0].total, 1005);
        assert_eq!(parse_cpu_ticks("cpu  1 2 3 4\nintr 1\n"), None);
    }

    #[test]
    fn this_machine_has_a_steal_counter() {
        let t = cpu_ticks().expect("/proc/stat");
        assert!(t.iter().all(|c| c.steal.is_some()), "{t:?}");
        let later = cpu_ticks().unwrap();
        assert!(crate::steal_percent(&t, &later).is_none_or(|p| (0.0..=100.0).contains(&p)));
    }

    #[test]
    fn sysctl_refuses_paths() {
        assert_eq!(sysctl("../../etc/passwd"), None);
        assert!(sysctl("kernel.pid_max").is_some());
    }

    #[test]
    fn the_selected_choice_is_the_bracketed_one() {
        assert_eq!(
            selected_choice("always [madvise] never").as_deref(),
            Some("madvise")
        );
        assert_eq!(
            selected_choice("[always] defer defer+madvise madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(selected_choice("tsc\n").as_deref(), Some("tsc"));
        assert_eq!(selected_choice("a b c"), None);
        assert_eq!(selected_choice(""), None);
    }

    #[test]
    fn equal_governors_collapse_and_different_ones_are_listed() {
        let g = |v: &[&str]| {
            let v: Vec<(usize, String)> = v
                .iter()
                .enumerate()
                .map(|(i, s)| (i, s.to_string()))
                .collect();
            collapse_per_cpu(&v)
        };
        assert_eq!(
            g(&["performance", "performance"]).as_deref(),
            Some("performance")
        );
        assert_eq!(
            g(&["performance", "powersave"]).as_deref(),
            Some("cpu0=performance cpu1=powersave")
        );
        assert_eq!(g(&[]), None);
    }

    #[test]
    fn hypervisor_signatures_name_the_hypervisor() {
        assert_eq!(hypervisor_name(b"KVMKVMKVM\0\0\0").as_deref(), Some("kvm"));
        assert_eq!(hypervisor_name(b"Microsoft Hv").as_deref(), Some("hyperv"));
        assert_eq!(
            hypervisor_name(b"NewVisorNewV").as_deref(),
            Some("NewVisorNewV")
        );
        assert_eq!(hypervisor_name(&[0; 12]), None);
        assert_eq!(hypervisor_name(&[1, 2, 3]), None);
    }

    #[test]
    fn proc_stat_parses_names_with_spaces_and_parentheses() {
        let s =
            "1234 (my (odd) name) S 1 1234 1234 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0";
        assert_eq!(parse_proc_stat(s), Some(("my (odd) name".into(), 300)));
        assert_eq!(parse_proc_stat("1 (init) S 1"), None);
    }

    #[test]
    fn the_busiest_processes_rank_by_ticks_between_samples() {
        let m = |v: &[(u32, &str, u64)]| -> ProcTimes {
            v.iter().map(|&(p, n, t)| (p, (n.to_string(), t))).collect()
        };
        let before = m(&[
            (1, "idle", 10),
            (2, "busy", 100),
            (3, "half", 0),
            (4, "gone", 5),
        ]);
        let after = m(&[
            (1, "idle", 10),
            (2, "busy", 120),
            (3, "half", 10),
            (5, "new", 50),
        ]);
        // 100 ticks/s over 0.2 s: 20 ticks are one whole CPU.
        let r = rank_busiest(&before, &after, 100.0, 0.2, 5);
        let got: Vec<(u32, &str, f64)> = r
            .iter()
            .map(|p| (p.pid, p.name.as_str(), p.percent))
            .collect();
        assert_eq!(got, vec![(2, "busy", 100.0), (3, "half", 50.0)]);
        assert_eq!(rank_busiest(&before, &after, 100.0, 0.2, 1).len(), 1);
    }

    #[test]
    fn tuning_reads_the_kernel_command_line_and_the_load() {
        let t = tuning();
        assert!(t.kernel_cmdline.is_some(), "{t:?}");
        assert!(t.load_average.is_some(), "{t:?}");
        assert!(t.busiest.is_some(), "{t:?}");
    }
}
