//! What a QEMU guest's init (scalebench as PID 1 of a Linux guest) asks
//! of its kernel: mounts, the loopback interface up, modules loaded, a
//! root to change to, the virtio-serial port found by name, power off.
//! Linux only: a guest of another OS is driven over ssh instead.

use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

fn cstr(p: &Path) -> io::Result<CString> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL in a path"))
}

fn check(r: libc::c_int, what: &str) -> io::Result<()> {
    if r == 0 {
        Ok(())
    } else {
        let e = io::Error::last_os_error();
        Err(io::Error::new(e.kind(), format!("{what}: {e}")))
    }
}

/// `mount(source, target, fstype, flags, data)`.
pub fn mount(
    source: &str,
    target: &Path,
    fstype: &str,
    read_only: bool,
    data: Option<&str>,
) -> io::Result<()> {
    let s = CString::new(source)?;
    let t = cstr(target)?;
    let f = CString::new(fstype)?;
    let d = data.map(CString::new).transpose()?;
    let flags = if read_only { libc::MS_RDONLY } else { 0 };
    // SAFETY: every pointer is a valid C string or null, alive for the call.
    let r = unsafe {
        libc::mount(
            s.as_ptr(),
            t.as_ptr(),
            f.as_ptr(),
            flags,
            d.as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr().cast::<libc::c_void>()),
        )
    };
    check(
        r,
        &format!("mount {fstype} {source} on {}", target.display()),
    )
}

/// Binds directory `source` on `target`, read-only: a second mount of
/// the same files (`mount --bind -o ro`).
pub fn bind_read_only(source: &Path, target: &Path) -> io::Result<()> {
    let s = cstr(source)?;
    let t = cstr(target)?;
    let what = format!("bind {} on {}", source.display(), target.display());
    let null = std::ptr::null::<libc::c_char>();
    // SAFETY: valid C strings or null, alive for the calls.
    check(
        unsafe {
            libc::mount(
                s.as_ptr(),
                t.as_ptr(),
                null,
                libc::MS_BIND,
                std::ptr::null(),
            )
        },
        &what,
    )?;
    // A bind takes MS_RDONLY only when remounted.
    let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY;
    // SAFETY: as above.
    check(
        unsafe { libc::mount(null, t.as_ptr(), null, flags, std::ptr::null()) },
        &what,
    )
}

/// Sets the loopback interface up: a guest's kernel leaves it down
/// (connections to 127.0.0.1 fail with ENETUNREACH until then).
pub fn loopback_up() -> io::Result<()> {
    let s = std::net::UdpSocket::bind("0.0.0.0:0").or_else(|_| std::net::UdpSocket::bind("[::]:0"));
    // Binding needs no interface up; a socket of any family does for the
    // ioctls.
    let s = s?;
    // SAFETY: a zeroed ifreq is valid; the name fits with its NUL.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, b) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *d = *b as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS fills ifr's flags for the named interface.
    let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCGIFFLAGS as _, &mut ifr) };
    check(r, "SIOCGIFFLAGS lo")?;
    // SAFETY: the union's flags member is what SIOCGIFFLAGS wrote.
    unsafe { ifr.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short };
    // SAFETY: as above, setting the flags read with IFF_UP added.
    let r = unsafe { libc::ioctl(s.as_raw_fd(), libc::SIOCSIFFLAGS as _, &ifr) };
    check(r, "SIOCSIFFLAGS lo")
}

/// Whether the kernel's random number generator is seeded, waiting for
/// it up to `limit` (a blocking `getrandom`, which since Linux 5.4 makes
/// entropy from timer jitter while it waits). A machine that has run a
/// while always is seeded; a guest just booted, with no hardware random
/// source, may not be for its whole run, and until then every
/// `get_random_u32()` in the kernel (bind's port 0 among them) draws a
/// whole ChaCha block instead of its share of a batch: a cost no
/// running machine pays.
pub fn crng_seeded(limit: std::time::Duration) -> bool {
    // Whether a draw succeeded; a kernel without getrandom (before 3.17)
    // cannot be asked and counts as seeded; EINTR is asked again.
    let draw = |flags: libc::c_uint| loop {
        let mut b = [0u8; 16];
        // SAFETY: getrandom writes at most b.len() bytes into b.
        let r = unsafe { libc::getrandom(b.as_mut_ptr().cast(), b.len(), flags) };
        if r == b.len() as isize {
            return true;
        }
        match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::ENOSYS) => return true,
            _ => return false,
        }
    };
    if draw(libc::GRND_NONBLOCK) {
        return true;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    // The thread cannot be cancelled: if the limit passes first, it stays
    // blocked (and harmless) until the generator is seeded.
    std::thread::spawn(move || {
        let _ = tx.send(draw(0));
    });
    rx.recv_timeout(limit).unwrap_or(false)
}

/// Gives the kernel's random generator `seed` as entropy, credited in
/// full (`RNDADDENTROPY` on /dev/urandom; root only): 32 bytes seed it at
/// once, where a guest under emulation otherwise spins through about a
/// billion instructions of timer jitter first (`try_to_generate_entropy`,
/// about 3 s of the host's time under QEMU's instruction counting).
pub fn credit_seed(seed: &[u8]) -> io::Result<()> {
    /// `struct rand_pool_info` with room for the seed.
    #[repr(C)]
    struct PoolInfo {
        entropy_count: libc::c_int,
        buf_size: libc::c_int,
        buf: [u8; 64],
    }
    if seed.len() > 64 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a seed of at most 64 bytes",
        ));
    }
    let mut info = PoolInfo {
        entropy_count: (seed.len() * 8) as libc::c_int,
        buf_size: seed.len() as libc::c_int,
        buf: [0; 64],
    };
    info.buf[..seed.len()].copy_from_slice(seed);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/urandom")?;
    /// `_IOW('R', 0x03, int[2])`.
    const RNDADDENTROPY: libc::c_ulong = 0x4008_5203;
    // SAFETY: the kernel reads `info`'s header and `buf_size` bytes of its
    // buffer, all inside the struct.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), RNDADDENTROPY as _, &info) };
    check(r, "RNDADDENTROPY")
}

/// Loads the kernel module in `file`; one already loaded is fine. A
/// compressed one (`.ko.xz`, `.ko.zst`, `.ko.gz`) is the kernel's to
/// decompress (`CONFIG_MODULE_DECOMPRESS`; an error otherwise).
pub fn load_module(file: &Path) -> io::Result<()> {
    /// `MODULE_INIT_COMPRESSED_FILE` (Linux 5.17).
    const COMPRESSED: libc::c_int = 4;
    let flags = match file.extension().and_then(|e| e.to_str()) {
        Some("xz" | "zst" | "gz") => COMPRESSED,
        _ => 0,
    };
    let f = std::fs::File::open(file)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", file.display())))?;
    let params = c"";
    // SAFETY: finit_module with an open descriptor, an empty parameter
    // string and flags the kernel checks.
    let r = unsafe {
        libc::syscall(
            libc::SYS_finit_module,
            f.as_raw_fd(),
            params.as_ptr(),
            flags,
        )
    };
    if r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EEXIST) {
        return Ok(());
    }
    check(-1, &format!("load module {}", file.display()))
}

/// Makes `dir` the root of this process (`chroot`, then `chdir("/")`).
pub fn change_root(dir: &Path) -> io::Result<()> {
    let d = cstr(dir)?;
    // SAFETY: a valid C string.
    check(unsafe { libc::chroot(d.as_ptr()) }, "chroot")?;
    std::env::set_current_dir("/")
}

/// The device of the virtio-serial port named `name`, from the ports'
/// names under `sys` (`/sys/class/virtio-ports/vport0p1/name`): without
/// udev there is no `/dev/virtio-ports/NAME`.
pub fn virtio_port(sys: &Path, name: &str) -> Option<PathBuf> {
    let dir = sys.join("class/virtio-ports");
    let mut found: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .filter(|e| std::fs::read_to_string(e.path().join("name")).is_ok_and(|n| n.trim() == name))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    found.sort();
    found.first().map(|p| Path::new("/dev").join(p))
}

/// Reaps every child that has ended (PID 1 inherits the orphans).
pub fn reap_orphans() {
    // SAFETY: waitpid on any child, not blocking.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

/// Flushes the filesystems and powers the machine off (QEMU started with
/// `-no-reboot` then exits). Returns only on failure.
pub fn power_off() -> io::Error {
    // SAFETY: sync has no preconditions; reboot with POWER_OFF ends the
    // machine (PID 1 in a guest may ask).
    unsafe {
        libc::sync();
        libc::reboot(libc::RB_POWER_OFF);
    }
    io::Error::last_os_error()
}

/// Sets the real-time clock to `since_epoch` (a guest the host paused
/// lags behind the host's time).
pub fn set_clock(since_epoch: std::time::Duration) -> io::Result<()> {
    let ts = libc::timespec {
        tv_sec: since_epoch.as_secs() as _,
        tv_nsec: since_epoch.subsec_nanos() as _,
    };
    // SAFETY: a valid timespec; setting the clock is PID 1's to ask.
    if unsafe { libc::clock_settime(libc::CLOCK_REALTIME, &ts) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sets the host name (the kernel has none of its own: `(none)`).
pub fn set_hostname(name: &str) -> io::Result<()> {
    // SAFETY: a buffer of `len` bytes; the kernel copies it.
    if unsafe { libc::sethostname(name.as_ptr().cast(), name.len() as _) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Pins thread `tid` (a Linux thread id, such as a QEMU vCPU's) to `cpu`.
pub fn pin_thread(tid: i32, cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data, set with the libc macros.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_machine_has_its_random_generator_seeded() {
        assert!(crng_seeded(std::time::Duration::from_secs(5)));
    }

    #[test]
    fn a_seed_is_credited_as_root_and_a_long_one_refused() {
        // Random bytes of the machine's own: crediting them changes
        // nothing a running machine relies on.
        let mut seed = [0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut seed)
            .unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            credit_seed(&seed).unwrap();
        } else {
            let e = credit_seed(&seed).unwrap_err();
            assert!(e.to_string().contains("RNDADDENTROPY"), "{e}");
        }
        let e = credit_seed(&[0; 65]).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_port_is_found_by_its_name_not_its_number() {
        let t = tempfile::tempdir().unwrap();
        for (port, name) in [
            ("vport0p1", "other"),
            ("vport1p1", "sb.ctl"),
            ("vport1p2", "x"),
        ] {
            let d = t.path().join("class/virtio-ports").join(port);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("name"), format!("{name}\n")).unwrap();
        }
        assert_eq!(
            virtio_port(t.path(), "sb.ctl"),
            Some(PathBuf::from("/dev/vport1p1"))
        );
        assert_eq!(virtio_port(t.path(), "nosuch"), None);
        assert_eq!(virtio_port(&t.path().join("none"), "sb.ctl"), None);
    }

    #[test]
    fn loading_a_module_that_is_not_one_fails_with_its_name() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("bogus.ko");
        std::fs::write(&f, b"not an ELF object").unwrap();
        // Without CAP_SYS_MODULE: EPERM; with it: ENOEXEC. Never loaded.
        let e = load_module(&f).unwrap_err().to_string();
        assert!(e.contains("bogus.ko"), "{e}");
        let e = load_module(&t.path().join("missing.ko"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.ko"), "{e}");
    }
}
