//! The host side of a `kernel:` system: boots a Linux kernel in QEMU with
//! a RAM disk holding the static scalebench as init ([`super::guest`]) and
//! the modules it needs from the kernel's own module tree (none for a
//! kernel with everything built in), this machine's
//! root shared read-only (9p, or virtio-fs through virtiofsd where the
//! kernel has no 9p) and a writable directory for result files; then runs
//! scalebench commands in it over a virtio-serial port. QEMU and
//! virtiofsd are child groups: killed and reaped on every way out, and
//! armed to die with scalebench. Acceleration is probed: KVM when a guest
//! under it prints its kernel's banner within seconds, else TCG with the
//! reason (`docs/comparing.md`: on this machine KVM hangs after the BIOS).

use super::cpio::Archive;
use super::guest::{self, Share};
use super::kernel::{self, Modules};
use super::spec::{AccelAsk, ImageSpec, KernelSpec};
use crate::harness::reaper::ChildGroup;
use anyhow::{Context, bail};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where Debian's QEMU keeps its virtiofsd.
pub const VIRTIOFSD: &str = "/usr/lib/qemu/virtiofsd";
/// The QEMU binary.
pub const QEMU: &str = "qemu-system-x86_64";

/// A booted guest answering commands.
pub struct Guest {
    dir: PathBuf,
    qemu: ChildGroup,
    daemons: Vec<ChildGroup>,
    port: UnixStream,
    reader: BufReader<UnixStream>,
    qmp: Qmp,
    /// The guest kernel's release, as it said.
    pub release: String,
    /// How the shares come.
    pub share: Share,
    /// How the guest runs: KVM, or TCG (emulated) and why.
    pub accel: Accel,
    /// What its clock counts.
    pub clock: GuestClock,
    /// With `clock` instructions: the fixed time its real-time clock
    /// read at boot ([`rtc_base`]).
    pub rtc_base: Option<String>,
    /// Where its modules came from, in words (for a kernel without a
    /// module tree: none loaded, and why that should do).
    pub modules: String,
    n: u32,
}

/// What a command in the guest did.
#[derive(Debug)]
pub struct Ran {
    /// Its exit code.
    pub code: i32,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
}

/// How long a KVM guest has to print its kernel's banner.
pub const KVM_PROBE: Duration = Duration::from_secs(5);

/// What an emulated guest's clock counts (`run --guest-clock`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GuestClock {
    /// QEMU's instruction counting (`-icount shift=0,sleep=off`): guest
    /// time advances one nanosecond per instruction executed, so that a
    /// figure is a count of instructions, the same on every run and
    /// every host; caches, memory and contention between CPUs cost
    /// nothing in it. One vCPU.
    #[default]
    Instructions,
    /// The host's time as QEMU emulates: every vCPU its own thread, costs
    /// drifting with the host's load.
    Time,
}

/// What a guest whose clock counts instructions boots with beside the
/// rest: no address space randomization, so that every run's process is
/// laid out alike and its counts repeat (docs/kernels.md has the
/// figures). The recorded kernel command line shows it; a guest that
/// must be randomized runs with `--guest-clock time`.
/// `scalebench.clock=instructions` tells the guest's scalebench that its
/// clock counts instructions ([`crate::sys::clock_counts_instructions`]):
/// its `--why` then says instructions, not µs of CPU.
pub const COUNTED_CMDLINE: &str = "norandmaps scalebench.clock=instructions";

impl GuestClock {
    /// Its name: `instructions` or `time`.
    pub fn name(self) -> &'static str {
        match self {
            GuestClock::Instructions => "instructions",
            GuestClock::Time => "time",
        }
    }

    /// `--guest-clock`: `instructions` or `time`.
    pub fn parse(s: &str) -> Result<GuestClock, String> {
        match s.trim() {
            "instructions" => Ok(GuestClock::Instructions),
            "time" => Ok(GuestClock::Time),
            other => Err(format!("`{other}`: instructions or time")),
        }
    }
}

/// QEMU's `-icount` shift: a guest nanosecond is 2^shift instructions.
pub const ICOUNT_SHIFT: u32 = 0;

/// How a guest runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Accel {
    /// Hardware virtualization; why it was used.
    Kvm(String),
    /// QEMU's emulation; why KVM was not used.
    Tcg(String),
}

/// The reason recorded for a guest run as `accel=` said, without a probe.
const ASKED: &str = "as accel= asked";

impl Accel {
    /// How a guest runs as `asked` (`accel=`): KVM or emulation as named,
    /// else as [`Accel::probe`] finds with `kernel` (none: emulation).
    pub fn chosen(asked: AccelAsk, kernel: Option<&Path>, dir: &Path) -> Accel {
        match (asked, kernel) {
            (AccelAsk::Kvm, _) => Accel::Kvm(format!("accel=kvm: {ASKED}")),
            (AccelAsk::Tcg, _) => Accel::Tcg(format!("accel=tcg: {ASKED}")),
            (AccelAsk::Probe, Some(k)) => Accel::probe(k, dir),
            (AccelAsk::Probe, None) => Accel::Tcg("no kernel in /boot to probe KVM with".into()),
        }
    }

    /// KVM if a guest of `kernel` under it prints the kernel's banner
    /// within [`KVM_PROBE`] (a nested hypervisor may hang it after the
    /// BIOS), else TCG with the reason. The probe's console goes to `dir`.
    pub fn probe(kernel: &Path, dir: &Path) -> Accel {
        match probe_kvm(kernel, dir) {
            Ok(()) => Accel::Kvm(format!(
                "a KVM guest printed its kernel's banner within {}s",
                KVM_PROBE.as_secs()
            )),
            Err(why) => Accel::Tcg(why),
        }
    }

    /// QEMU's arguments for it, its guest's clock counting `clock`
    /// ([`Accel::clock`]).
    fn args(&self, clock: GuestClock) -> Vec<String> {
        let v: Vec<&str> = match (self.clock(clock), self) {
            (_, Accel::Kvm(_)) => vec!["-accel", "kvm", "-cpu", "host"],
            // Instruction counting needs one thread for every vCPU; a
            // sleeping guest skips to its next timer (no host time in any
            // figure).
            (GuestClock::Instructions, _) => {
                let icount = format!("shift={ICOUNT_SHIFT},sleep=off");
                return ["-accel", "tcg,thread=single", "-icount", &icount]
                    .map(String::from)
                    .to_vec();
            }
            (GuestClock::Time, _) => vec!["-accel", "tcg,thread=multi"],
        };
        v.into_iter().map(String::from).collect()
    }

    /// What the guest's clock counts when `asked`: a KVM guest's counts
    /// time (QEMU counts instructions only when it emulates).
    pub fn clock(&self, asked: GuestClock) -> GuestClock {
        match self {
            Accel::Kvm(_) => GuestClock::Time,
            Accel::Tcg(_) => asked,
        }
    }

    /// Why this acceleration: for TCG, why not KVM.
    pub fn reason(&self) -> String {
        match self {
            Accel::Kvm(why) | Accel::Tcg(why) => why.clone(),
        }
    }

    /// Whether the guest is emulated.
    pub fn emulated(&self) -> bool {
        matches!(self, Accel::Tcg(_))
    }
}

impl std::fmt::Display for Accel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Accel::Kvm(_) => f.write_str("KVM"),
            Accel::Tcg(why) => write!(f, "TCG, emulated: {why}"),
        }
    }
}

/// The vCPUs of a guest whose clock counts `clock`: those `asked`, else
/// this machine's up to two; under instruction counting one (QEMU runs
/// every vCPU on one thread then: a guest of two never got ready here in
/// 95 s), and more are refused by name.
fn vcpus(asked: Option<u32>, clock: GuestClock) -> anyhow::Result<u32> {
    match (asked, clock) {
        (Some(c), GuestClock::Instructions) if c > 1 => anyhow::bail!(
            "cpus={c}: a guest whose clock counts instructions (QEMU's -icount) runs one vCPU; give cpus=1, or --guest-clock time for {c} vCPUs in host time"
        ),
        (Some(c), _) => Ok(c),
        (None, GuestClock::Instructions) => Ok(1),
        (None, GuestClock::Time) => Ok(crate::sys::cpu_count().clamp(1, 2) as u32),
    }
}

/// QEMU's arguments for a guest with no display, monitor or network
/// that ends instead of rebooting, its serial console going to `console`.
fn headless(console: &Path) -> Vec<String> {
    [
        "-display",
        "none",
        "-monitor",
        "none",
        "-no-reboot",
        "-nic",
        "none",
    ]
    .into_iter()
    .map(String::from)
    .chain(["-serial".into(), format!("file:{}", opt(console))])
    .collect()
}

/// Boots `kernel` under KVM with no RAM disk and waits for its banner.
fn probe_kvm(kernel: &Path, dir: &Path) -> Result<(), String> {
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_err()
    {
        return Err("no usable /dev/kvm".into());
    }
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let log = dir.join("kvm-probe.log");
    let mut cmd = Command::new(QEMU);
    cmd.args(["-accel", "kvm", "-cpu", "host", "-m", "256M", "-smp", "1"])
        .args(headless(&log))
        .arg("-kernel")
        .arg(kernel)
        .args([
            "-append",
            "console=ttyS0 earlyprintk=ttyS0 loglevel=7 panic=-1",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut g = ChildGroup::spawn(&mut cmd).map_err(|e| format!("start {QEMU}: {e}"))?;
    let end = Instant::now() + KVM_PROBE;
    while Instant::now() < end {
        let text = std::fs::read(&log).unwrap_or_default();
        if text.windows(13).any(|w| w == b"Linux version") {
            return Ok(());
        }
        if let Ok(Some(s)) = g.child().try_wait() {
            return Err(format!(
                "QEMU with KVM ended ({s}) before the kernel's banner"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!(
        "a KVM guest printed no kernel banner within {}s",
        KVM_PROBE.as_secs()
    ))
}

/// Escapes a value for a QEMU option list (a comma is doubled).
fn opt(p: &Path) -> String {
    p.display().to_string().replace(',', ",,")
}

/// Whether the ELF program in `elf` asks for a program interpreter (a
/// dynamic loader): such a program cannot be a guest's init. `None` when
/// it is not a 64-bit little-endian ELF file.
pub fn needs_loader(elf: &[u8]) -> Option<bool> {
    const PT_INTERP: u32 = 3;
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let u16_at = |o: usize| Some(u16::from_le_bytes(elf.get(o..o + 2)?.try_into().ok()?) as usize);
    let phoff = u64::from_le_bytes(elf.get(0x20..0x28)?.try_into().ok()?) as usize;
    let (size, count) = (u16_at(0x36)?, u16_at(0x38)?);
    for i in 0..count {
        let o = phoff.checked_add(i.checked_mul(size)?)?;
        if u32::from_le_bytes(elf.get(o..o + 4)?.try_into().ok()?) == PT_INTERP {
            return Some(true);
        }
    }
    Some(false)
}

/// Writes the RAM disk: the static binary as `/init`, the directories it
/// mounts on, `dev/console`, and the modules with their load order; after
/// the RAM disk `first` if given (`initrd=`: the kernel unpacks both, the
/// later entries replacing the earlier, so its `/init` is this one and
/// its module tree is where the guest loads modules from).
fn write_initrd(
    path: &Path,
    first: Option<&Path>,
    init: &Path,
    modules: &[PathBuf],
    (host, seed): (&str, &[u8]),
) -> anyhow::Result<()> {
    let mut f = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| path.display().to_string())?,
    );
    if let Some(p) = first {
        let mut from = std::fs::File::open(p).with_context(|| format!("initrd={}", p.display()))?;
        let n =
            std::io::copy(&mut from, &mut f).with_context(|| format!("initrd={}", p.display()))?;
        // The next archive starts on a 4-byte boundary.
        f.write_all(&[0; 3][..((4 - n % 4) % 4) as usize])?;
    }
    let mut a = Archive::new(f);
    for d in ["dev", "proc", "sys", "tmp", "mnt", "mnt/root", "modules"] {
        a.dir(d, 0o755)?;
    }
    a.char_dev("dev/console", 0o600, 5, 1)?;
    let bin =
        std::fs::read(init).with_context(|| format!("static scalebench {}", init.display()))?;
    match needs_loader(&bin) {
        Some(false) => {}
        Some(true) => bail!(
            "{} is dynamically linked: a guest's init must be static (cargo build --release --target x86_64-unknown-linux-musl)",
            init.display()
        ),
        None => bail!("{} is not a 64-bit ELF program", init.display()),
    }
    a.file("init", 0o755, &bin)?;
    let mut order = String::new();
    for (i, m) in modules.iter().enumerate() {
        let name = format!(
            "{i:02}-{}",
            m.file_name().unwrap_or_default().to_string_lossy()
        );
        let data = std::fs::read(m).with_context(|| m.display().to_string())?;
        a.file(&format!("modules/{name}"), 0o644, &data)?;
        order.push_str(&name);
        order.push('\n');
    }
    a.file(guest::MODULE_ORDER, 0o644, order.as_bytes())?;
    a.file(guest::HOST_FILE, 0o644, &guest::host_file(host))?;
    a.file(guest::SEED_FILE, 0o600, seed)?;
    a.finish()?.flush()?;
    Ok(())
}

/// The kernel command line of a `kernel:` guest sharing by `share`, its
/// module tree `tree`, its clock counting `clock`. No word of it names
/// the guest (its name is in the RAM disk): a kernel mixes its command
/// line into the secrets it draws at boot.
fn kernel_cmdline(
    spec: &KernelSpec,
    share: Share,
    tree: Option<&Path>,
    clock: GuestClock,
) -> String {
    let mut append = format!(
        "console=ttyS0 panic=-1 quiet loglevel=4 {}{}",
        guest::SHARE_PARAM,
        share.name(),
    );
    if spec.initrd.is_some() {
        append = format!("{append} {}", guest::FROM_RAM_DISK);
    }
    if let Some(t) = tree.and_then(Path::to_str) {
        // A path with white space cannot be one word of the command
        // line: the guest then loads nothing on demand.
        if !t.contains(char::is_whitespace) {
            append = format!("{append} {}{t}", guest::MODULE_TREE_PARAM);
        }
    }
    if clock == GuestClock::Instructions {
        append = format!("{append} {COUNTED_CMDLINE}");
    }
    if let Some(c) = &spec.cmdline {
        append = format!("{append} {c}");
    }
    append
}

/// The fixed time a guest counting instructions boots with on its
/// real-time clock for `seed=N`: 2026-01-01 00:00:00 UTC, N seconds on
/// (QEMU's `-rtc base=` form, without the zone). A kernel mixes the time
/// it reads at boot, with its command line and the cycle counter, into
/// the secrets it draws before any device has spoken (the network's hash
/// seed among them); the counter is instructions here, so two boots of
/// one kernel with one seed draw the same secrets, and figures that hang
/// on where those secrets put a hash table's collisions (bind-port's)
/// agree from boot to boot as they do from run to run (docs/kernels.md).
pub fn rtc_base(seed: u32) -> String {
    let t = std::time::UNIX_EPOCH + Duration::from_secs(RTC_EPOCH + u64::from(seed));
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .trim_end_matches('Z')
        .to_string()
}

/// 2026-01-01 00:00:00 UTC in seconds since 1970.
const RTC_EPOCH: u64 = 1_767_225_600;

/// QEMU's arguments for the guest's real-time clock: for a guest counting
/// instructions, the fixed time `base` of [`rtc_base`], running with the
/// guest (`clock=vm`); none for a guest counting time (`base` none),
/// whose boot is not repeatable anyway.
fn rtc_args(base: Option<&str>) -> Vec<String> {
    base.map(|b| vec!["-rtc".into(), format!("base={b},clock=vm")])
        .unwrap_or_default()
}

/// Waits up to `limit` for `path` to appear.
fn wait_for(path: &Path, limit: Duration, qemu: &mut ChildGroup) -> anyhow::Result<()> {
    let end = Instant::now() + limit;
    while !path.exists() {
        if let Some(s) = qemu.child().try_wait()? {
            bail!("ended ({s}) before {} appeared", path.display());
        }
        if Instant::now() > end {
            bail!("{} did not appear within {limit:?}", path.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Connects to QEMU's listening socket `path`, waiting up to `limit` for
/// it to listen: the socket's file appears at its bind(), a moment before
/// its listen(), and a connection in between is refused (seen here under
/// load: `qmp.sock: Connection refused`).
fn connect_when_listening(
    path: &Path,
    limit: Duration,
    qemu: &mut ChildGroup,
) -> anyhow::Result<UnixStream> {
    let end = Instant::now() + limit;
    loop {
        match UnixStream::connect(path) {
            Ok(s) => return Ok(s),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) && Instant::now() <= end =>
            {
                if let Some(s) = qemu.child().try_wait()? {
                    bail!("ended ({s}) before {} listened", path.display());
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!(
                    "{} (waited {limit:?} for it to listen)",
                    path.display()
                )));
            }
        }
    }
}

/// Starts virtiofsd for `source` on `socket`.
fn virtiofsd(socket: &Path, source: &Path, cache: &str) -> anyhow::Result<ChildGroup> {
    let mut cmd = Command::new(VIRTIOFSD);
    cmd.arg(format!("--socket-path={}", socket.display()))
        .args(["-o", &format!("source={}", source.display())])
        .args(["-o", &format!("cache={cache}")])
        // The default sandbox cannot pivot_root from `/`.
        .args(["-o", "sandbox=chroot", "--rlimit-nofile=0", "-f"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut g = ChildGroup::spawn(&mut cmd).with_context(|| format!("start {VIRTIOFSD}"))?;
    wait_for(socket, Duration::from_secs(10), &mut g).context("virtiofsd")?;
    Ok(g)
}

/// The QEMU arguments sharing `/` and `out` as `share` says.
fn share_args(share: Share, dir: &Path, out: &Path, memory_mb: u64) -> Vec<String> {
    match share {
        Share::NineP => vec![
            "-fsdev".into(),
            "local,id=r,path=/,security_model=passthrough,readonly=on,multidevs=remap".into(),
            "-device".into(),
            format!("virtio-9p-pci,fsdev=r,mount_tag={}", guest::ROOT_TAG),
            "-fsdev".into(),
            format!("local,id=o,path={},security_model=passthrough", opt(out)),
            "-device".into(),
            format!("virtio-9p-pci,fsdev=o,mount_tag={}", guest::OUT_TAG),
        ],
        Share::VirtioFs => vec![
            "-object".into(),
            format!("memory-backend-memfd,id=mem,size={memory_mb}M,share=on"),
            "-numa".into(),
            "node,memdev=mem".into(),
            "-chardev".into(),
            format!("socket,id=vr,path={}", opt(&dir.join("root.sock"))),
            "-device".into(),
            format!("vhost-user-fs-pci,chardev=vr,tag={}", guest::ROOT_TAG),
            "-chardev".into(),
            format!("socket,id=vo,path={}", opt(&dir.join("out.sock"))),
            "-device".into(),
            format!("vhost-user-fs-pci,chardev=vo,tag={}", guest::OUT_TAG),
        ],
    }
}

/// The last lines of the guest's console, for an error.
/// Whether the guest's console in `dir` shows its kernel's panic.
fn kernel_panicked(dir: &Path) -> bool {
    std::fs::read(dir.join("console.log"))
        .is_ok_and(|t| t.windows(26).any(|w| w == b"Kernel panic - not syncing"))
}

fn console_tail(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("console.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(15)..].join("\n  ");
    if tail.is_empty() {
        "the console stayed empty".into()
    } else {
        format!("the console's last lines:\n  {tail}")
    }
}

/// The modules a guest loads and the share they make possible.
struct Found {
    share: Share,
    /// The module files, in load order.
    files: Vec<PathBuf>,
    /// Where they came from, in words.
    said: String,
    /// The kernel's module tree on this machine (`…/lib/modules/RELEASE`),
    /// which the guest shows at its own `/lib/modules/RELEASE`, so that
    /// what it loads on demand (`loop`, a filesystem) is found.
    tree: Option<PathBuf>,
}

/// The modules kernel `release` (booted as `spec` says) needs: from its
/// module tree (`modules=DIR`, else `/lib/modules/RELEASE`); with no tree,
/// none, the share chosen by its configuration when one is found
/// ([`kernel::config_file`]), else 9p, assumed built in.
fn modules_for(spec: &KernelSpec, release: &str, virtiofsd: bool) -> anyhow::Result<Found> {
    let no_virtiofsd = || {
        anyhow::anyhow!(
            "kernel {release} has no 9p, and virtio-fs needs {VIRTIOFSD} (Debian's qemu-system-x86)"
        )
    };
    if let Some(initrd) = &spec.initrd {
        return from_ram_disk(spec, initrd, release, virtiofsd);
    }
    let Some(mods) = Modules::find(spec.modules.as_deref(), release)? else {
        let tree = Path::new("/lib/modules").join(release);
        let (share, said) = match kernel::config_file(&spec.kernel, release) {
            Some((path, text)) => {
                let share = kernel::builtin_share(&text).map_err(|e| {
                    anyhow::anyhow!(
                        "kernel {release} has no module tree ({}; modules=DIR names one) and its configuration {} has {e}: a guest would not get ready",
                        tree.display(),
                        path.display()
                    )
                })?;
                let said = format!(
                    "none: no module tree {}, and {} has virtio and {} built in",
                    tree.display(),
                    path.display(),
                    share.name()
                );
                (share, said)
            }
            None => (
                Share::NineP,
                format!(
                    "none: no module tree {} and no config-{release} beside the kernel or in /boot; virtio, its console and 9p assumed built in",
                    tree.display()
                ),
            ),
        };
        if share == Share::VirtioFs && !virtiofsd {
            return Err(no_virtiofsd());
        }
        return Ok(Found {
            share,
            files: Vec::new(),
            said,
            tree: None,
        });
    };
    let share = if mods.has("9p") && mods.has("9pnet_virtio") {
        Share::NineP
    } else if virtiofsd {
        Share::VirtioFs
    } else {
        return Err(no_virtiofsd());
    };
    let mut names: Vec<&str> = share.modules().to_vec();
    names.push("virtio_console");
    let files = mods.load_order(&names)?;
    let said = format!("{} from {}", files.len(), mods.dir().display());
    let tree = std::fs::canonicalize(mods.dir()).ok();
    Ok(Found {
        share,
        files,
        said,
        tree,
    })
}

/// With `initrd=`: the guest loads its modules from that RAM disk's own
/// tree (`/lib/modules/RELEASE` in it), and the share is the one the
/// kernel's configuration has, as modules or built in (9p when no
/// configuration is found).
fn from_ram_disk(
    spec: &KernelSpec,
    initrd: &Path,
    release: &str,
    virtiofsd: bool,
) -> anyhow::Result<Found> {
    // A file that is no RAM disk would boot into a kernel panic.
    super::cpio::check_ram_disk(initrd).map_err(anyhow::Error::msg)?;
    let share = match kernel::config_file(&spec.kernel, release) {
        Some((path, text)) => kernel::configured_share(&text).with_context(|| {
            format!(
                "kernel {release}: its configuration {} has neither 9p (CONFIG_NET_9P_VIRTIO, CONFIG_9P_FS) nor virtio-fs (CONFIG_VIRTIO_FS): a guest would not get ready",
                path.display()
            )
        })?,
        None => Share::NineP,
    };
    if share == Share::VirtioFs && !virtiofsd {
        bail!(
            "kernel {release} has no 9p, and virtio-fs needs {VIRTIOFSD} (Debian's qemu-system-x86)"
        );
    }
    let mut names = share.modules().to_vec();
    names.push("virtio_console");
    Ok(Found {
        share,
        files: Vec::new(),
        said: format!(
            "{} from the RAM disk {} (its lib/modules/{release})",
            names.join(", "),
            initrd.display()
        ),
        tree: None,
    })
}

/// Why a guest did not get ready, from its console (where its init says
/// what failed) when it is about the shares or the command port: the
/// kernel options that were missing. `modules` is [`Guest::modules`].
pub fn diagnose(console: &str, share: Share, modules: &str) -> Option<String> {
    let line = console
        .lines()
        .rev()
        .find(|l| l.contains("scalebench guest:"))?;
    let (fs, options) = match share {
        Share::NineP => ("9p", "CONFIG_NET_9P, CONFIG_NET_9P_VIRTIO, CONFIG_9P_FS"),
        Share::VirtioFs => ("virtiofs", "CONFIG_FUSE_FS, CONFIG_VIRTIO_FS"),
    };
    let what = if line.contains(&format!("mount {fs} {}", guest::ROOT_TAG)) {
        if line.contains("No such device") {
            format!("its kernel has no {fs} filesystem ({options})")
        } else if line.contains("No such file or directory") {
            format!(
                "its kernel found no virtio device tagged {}: virtio PCI or the {fs} transport is missing (CONFIG_VIRTIO_PCI; {options})",
                guest::ROOT_TAG
            )
        } else {
            format!("it could not mount this machine's root over {fs}")
        }
    } else if line.contains("no virtio-serial port") {
        "its kernel has no virtio console (CONFIG_VIRTIO_CONSOLE) or virtio PCI (CONFIG_VIRTIO_PCI)"
            .to_string()
    } else {
        return None;
    };
    let how = if modules.starts_with("none") {
        format!(
            "; modules loaded: {modules}; build them in (=y) or give the kernel's modules with kernel:PATH,modules=DIR"
        )
    } else {
        format!("; modules loaded: {modules}")
    };
    Some(format!("{what}{how}"))
}

/// Starts QEMU as `cmd` says, with its QMP socket in `dir`, its output
/// to nowhere and its errors to `dir/qemu.err`; waits for the socket and
/// connects to it.
fn start(cmd: &mut Command, dir: &Path) -> anyhow::Result<(ChildGroup, Qmp)> {
    let qmp = dir.join("qmp.sock");
    cmd.arg("-qmp")
        .arg(format!("unix:{},server=on,wait=off", opt(&qmp)))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("qemu.err"))?);
    let mut qemu = ChildGroup::spawn(cmd).with_context(|| format!("start {QEMU}"))?;
    let stream =
        connect_when_listening(&qmp, Duration::from_secs(20), &mut qemu).context("QEMU")?;
    let qmp = Qmp::on(stream)?;
    Ok((qemu, qmp))
}

/// QEMU's machine protocol (QMP) on a Unix socket: JSON commands, one
/// answer each (events between are passed over).
struct Qmp {
    w: UnixStream,
    r: BufReader<UnixStream>,
}

impl Qmp {
    /// Speaks QMP on `w`, connected: leaves the greeting's negotiation
    /// mode.
    fn on(w: UnixStream) -> anyhow::Result<Qmp> {
        w.set_read_timeout(Some(Duration::from_secs(30)))?;
        let mut q = Qmp {
            r: BufReader::new(w.try_clone()?),
            w,
        };
        let greeting = q.read()?;
        if greeting.get("QMP").is_none() {
            bail!("QMP: no greeting ({greeting})");
        }
        q.execute("qmp_capabilities")?;
        Ok(q)
    }

    /// The next message that is not an event.
    fn read(&mut self) -> anyhow::Result<serde_json::Value> {
        loop {
            let mut line = String::new();
            if self.r.read_line(&mut line)? == 0 {
                bail!("QMP: QEMU closed its socket");
            }
            let v: serde_json::Value =
                serde_json::from_str(&line).with_context(|| format!("QMP: `{}`", line.trim()))?;
            if v.get("event").is_none() {
                return Ok(v);
            }
        }
    }

    /// Pins vCPU i's thread to host CPU i modulo this machine's CPUs; the
    /// host CPU of each vCPU, in vCPU order.
    fn pin_vcpus(&mut self) -> anyhow::Result<Vec<usize>> {
        let cpus = self.execute("query-cpus-fast")?;
        let online = crate::sys::cpu_count().max(1);
        let mut threads: Vec<(usize, i32)> = cpus
            .as_array()
            .context("QMP query-cpus-fast: not a list")?
            .iter()
            .filter_map(|c| {
                Some((
                    c.get("cpu-index")?.as_u64()? as usize,
                    i32::try_from(c.get("thread-id")?.as_i64()?).ok()?,
                ))
            })
            .collect();
        threads.sort();
        let mut pins = Vec::new();
        for (i, tid) in threads {
            let cpu = i % online;
            crate::sys::pin_thread(tid, cpu)
                .with_context(|| format!("pin vCPU {i} (thread {tid}) to CPU {cpu}"))?;
            pins.push(cpu);
        }
        Ok(pins)
    }

    /// Runs `command`; what it returned.
    fn execute(&mut self, command: &str) -> anyhow::Result<serde_json::Value> {
        writeln!(self.w, "{}", serde_json::json!({ "execute": command }))?;
        let v = self.read()?;
        match (v.get("return"), v.get("error")) {
            (Some(r), _) => Ok(r.clone()),
            (None, Some(e)) => bail!("QMP {command}: {e}"),
            _ => bail!("QMP {command}: `{v}`"),
        }
    }
}

impl Guest {
    /// Stops the guest's vCPUs and its clock: a guest waiting for its
    /// turn takes no CPU time from the system measured meanwhile.
    pub fn pause(&mut self) -> anyhow::Result<()> {
        self.qmp.execute("stop").map(drop)
    }

    /// Lets the guest run again and sets its clock to this machine's.
    pub fn resume(&mut self) -> anyhow::Result<()> {
        self.qmp.execute("cont")?;
        self.set_clock()
    }

    /// Sets the guest's clock to this machine's.
    fn set_clock(&mut self) -> anyhow::Result<()> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        self.port.write_all(guest::clock_line(now).as_bytes())?;
        Ok(())
    }

    /// Pins vCPU i's thread to host CPU i modulo this machine's CPUs; the
    /// host CPU of each vCPU, in vCPU order.
    pub fn pin_vcpus(&mut self) -> anyhow::Result<Vec<usize>> {
        self.qmp.pin_vcpus()
    }

    /// Boots `spec` as host `name` with `init` (a static scalebench) in
    /// `dir` (made; the caller's, removed by the caller), waiting up to
    /// `limit` for the guest to be ready.
    pub fn boot(
        spec: &KernelSpec,
        name: &str,
        init: &Path,
        dir: &Path,
        limit: Duration,
        clock: GuestClock,
    ) -> anyhow::Result<Guest> {
        let release = kernel::release(&spec.kernel)?;
        let found = modules_for(spec, &release, Path::new(VIRTIOFSD).exists())?;
        let share = found.share;
        std::fs::create_dir_all(dir)?;
        let out = dir.join("out");
        std::fs::create_dir_all(&out)?;
        let mut daemons = Vec::new();
        if share == Share::VirtioFs {
            daemons.push(virtiofsd(&dir.join("root.sock"), Path::new("/"), "auto")?);
            daemons.push(virtiofsd(&dir.join("out.sock"), &out, "none")?);
        }
        let memory_mb = spec.machine.memory >> 20;
        let accel = Accel::chosen(spec.machine.accel, Some(&spec.kernel), dir);
        let clock = accel.clock(clock);
        let append = kernel_cmdline(spec, share, found.tree.as_deref(), clock);
        let counted = (clock == GuestClock::Instructions).then(|| spec.seed.unwrap_or(0));
        let rtc = counted.map(rtc_base);
        let initrd = dir.join("initrd.cpio");
        let seed = guest::seed_file(counted).context("random bytes for the guest's seed")?;
        let modules = &found.files;
        write_initrd(
            &initrd,
            spec.initrd.as_deref(),
            init,
            modules,
            (name, &seed),
        )?;
        let port = dir.join("ch.sock");
        let mut cmd = Command::new(QEMU);
        let cpus = vcpus(spec.machine.cpus, clock)?;
        cmd.args(accel.args(clock))
            .args(["-smp", &cpus.to_string()])
            .args(["-m", &format!("{memory_mb}M")])
            .args(headless(&dir.join("console.log")))
            .arg("-kernel")
            .arg(&spec.kernel)
            .arg("-initrd")
            .arg(&initrd)
            .args(["-append", &append])
            .args(rtc_args(rtc.as_deref()))
            .args(share_args(share, dir, &out, memory_mb))
            .args(["-device", "virtio-serial-pci", "-chardev"])
            .arg(format!(
                "socket,id=ch,path={},server=on,wait=off",
                opt(&port)
            ))
            .args([
                "-device",
                &format!("virtserialport,chardev=ch,name={}", guest::PORT),
            ]);
        let (mut qemu, qmp) = start(&mut cmd, dir)?;
        let stream =
            connect_when_listening(&port, Duration::from_secs(20), &mut qemu).context("QEMU")?;
        let mut g = Guest {
            dir: dir.to_path_buf(),
            qemu,
            daemons,
            reader: BufReader::new(stream.try_clone()?),
            port: stream,
            qmp,
            release: String::new(),
            share,
            accel,
            clock,
            rtc_base: rtc,
            modules: found.said,
            n: 0,
        };
        let line = g.line(limit).map_err(|e| {
            let console = std::fs::read_to_string(dir.join("console.log")).unwrap_or_default();
            match diagnose(&console, share, g.modules.as_str()) {
                Some(why) => e.context(format!("the guest did not get ready: {why}")),
                None => e.context("the guest did not get ready"),
            }
        })?;
        g.release = guest::parse_ready(&line).map_err(anyhow::Error::msg)?;
        // Its clock read the fixed time of `rtc_args` at boot: this
        // machine's from now on.
        g.set_clock()?;
        Ok(g)
    }

    /// The host's side of the guest's writable directory.
    pub fn out_dir(&self) -> PathBuf {
        self.dir.join("out")
    }

    /// Reads one line from the guest within `limit`, watching QEMU.
    fn line(&mut self, limit: Duration) -> anyhow::Result<String> {
        let end = Instant::now() + limit;
        let mut line = String::new();
        loop {
            self.port
                .set_read_timeout(Some(Duration::from_millis(500)))?;
            match self.reader.read_line(&mut line) {
                Ok(0) => bail!("the guest closed its port; {}", console_tail(&self.dir)),
                Ok(_) if line.ends_with('\n') => return Ok(line),
                Ok(_) => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock
                            | std::io::ErrorKind::TimedOut
                            | std::io::ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(e.into()),
            }
            if let Some(s) = self.qemu.child().try_wait()? {
                bail!("QEMU ended ({s}); {}", console_tail(&self.dir));
            }
            if crate::stop::interrupted() {
                bail!("interrupted");
            }
            if Instant::now() > end {
                bail!("no answer within {limit:?}; {}", console_tail(&self.dir));
            }
        }
    }

    /// Runs scalebench with `args` in the guest, waiting up to `limit`.
    pub fn run(&mut self, args: &[String], limit: Duration) -> anyhow::Result<Ran> {
        self.n += 1;
        self.port.write_all(guest::run_line(args).as_bytes())?;
        let code = guest::parse_done(&self.line(limit)?).map_err(anyhow::Error::msg)?;
        let read = |ext: &str| -> String {
            let mut s = String::new();
            let p = self.out_dir().join(format!("cmd-{}.{ext}", self.n));
            if let Ok(mut f) = std::fs::File::open(p) {
                let _ = f.read_to_string(&mut s);
            }
            s
        };
        Ok(Ran {
            code,
            stdout: read("out"),
            stderr: read("err"),
        })
    }

    /// Powers the guest off and waits for QEMU (then kills what is left).
    pub fn close(mut self) -> anyhow::Result<()> {
        let _ = self.port.write_all(b"poweroff\n");
        let end = Instant::now() + Duration::from_secs(30);
        while self.qemu.child().try_wait()?.is_none() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Guest {
    fn drop(&mut self) {
        // QEMU and virtiofsd go with their groups; virtiofsd leaves a pid
        // file named after its socket under /run/virtiofsd.
        self.daemons.clear();
        for s in ["root.sock", "out.sock"] {
            let sock = self.dir.join(s);
            let _ = std::fs::remove_file(pid_file(&sock));
            let _ = std::fs::remove_file(sock);
        }
    }
}

/// Where virtiofsd keeps the pid file of the daemon on `socket`.
const VIRTIOFSD_RUN: &str = "/run/virtiofsd";

/// The pid file virtiofsd writes for `socket`: its path with `/` as `.`.
fn pid_file(socket: &Path) -> PathBuf {
    let name = socket.display().to_string().replace('/', ".");
    Path::new(VIRTIOFSD_RUN).join(format!("{name}.pid"))
}

/// Removes the virtiofsd pid files of the guests of a dead run whose work
/// directory was `dir` (QEMU and virtiofsd died with it); what was
/// removed, in words.
pub fn release_stale(dir: &Path) -> Vec<String> {
    let marker = dir.display().to_string().replace('/', ".");
    let mut v = Vec::new();
    for e in std::fs::read_dir(VIRTIOFSD_RUN)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(&format!("{marker}.")) && std::fs::remove_file(e.path()).is_ok() {
            v.push(format!("removed {}", e.path().display()));
        }
    }
    v
}

/// The newest Linux kernel image in `/boot`, to probe KVM with when the
/// system to boot is a disk image (the probe asks about the hypervisor,
/// not about the guest).
fn probe_kernel() -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir("/boot")
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
        })
        .collect();
    v.sort();
    v.pop()
}

/// A free TCP port on 127.0.0.1 (for QEMU to forward to the guest's ssh).
fn free_port() -> anyhow::Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// A disk image of any OS booted in QEMU from its own boot loader, with
/// QEMU's user network and the guest's port 22 forwarded to a port of
/// this machine's loopback; what it writes goes to a temporary overlay
/// (`-snapshot`): the image is never changed. Reached over ssh by its
/// caller.
pub struct ImageGuest {
    dir: PathBuf,
    qemu: ChildGroup,
    qmp: Qmp,
    /// The port of 127.0.0.1 forwarded to the guest's ssh.
    pub port: u16,
    /// How the guest runs: KVM, or TCG (emulated) and why.
    pub accel: Accel,
    /// What its clock counts.
    pub clock: GuestClock,
}

impl ImageGuest {
    /// Boots `spec` in `dir` (made; the caller's, removed by the caller).
    pub fn boot(spec: &ImageSpec, dir: &Path, clock: GuestClock) -> anyhow::Result<ImageGuest> {
        let image = &spec.image;
        let mut head = Vec::with_capacity(512);
        std::fs::File::open(image)
            .and_then(|f| f.take(512).read_to_end(&mut head))
            .with_context(|| format!("image {}", image.display()))?;
        let format =
            disk_format(&head).map_err(|e| anyhow::anyhow!("image {}: {e}", image.display()))?;
        std::fs::create_dir_all(dir)?;
        let probe = probe_kernel();
        let accel = Accel::chosen(spec.machine.accel, probe.as_deref(), dir);
        let clock = accel.clock(clock);
        let cpus = vcpus(spec.machine.cpus, clock)?;
        let port = free_port()?;
        let mut cmd = Command::new(QEMU);
        cmd.args(accel.args(clock))
            .args(["-smp", &cpus.to_string()])
            .args(["-m", &format!("{}M", spec.machine.memory >> 20)])
            .args(headless(&dir.join("console.log")))
            .arg("-drive")
            .arg(format!(
                "file={},format={format},if=virtio,snapshot=on",
                opt(image)
            ))
            .args(["-nic"])
            .arg(format!(
                "user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:{port}-:22"
            ));
        let (qemu, qmp) = start(&mut cmd, dir)?;
        Ok(ImageGuest {
            dir: dir.to_path_buf(),
            qemu,
            qmp,
            port,
            accel,
            clock,
        })
    }

    /// Why it will not come up, if so: QEMU is gone, or its kernel
    /// panicked (a disk image's kernel line may lack `panic=`, and then
    /// the guest halts and QEMU runs on: a TCG guest on a busy machine
    /// panicked "IO-APIC + timer doesn't work!" and the run waited out its
    /// 600 s for ssh).
    pub fn ended(&mut self) -> Option<String> {
        match self.qemu.child().try_wait() {
            Ok(Some(s)) => Some(format!("QEMU ended ({s}); {}", console_tail(&self.dir))),
            _ if kernel_panicked(&self.dir) => {
                Some(format!("its kernel panicked; {}", console_tail(&self.dir)))
            }
            _ => None,
        }
    }

    /// The last lines of its console, for an error.
    pub fn console(&self) -> String {
        console_tail(&self.dir)
    }

    /// Stops its vCPUs and clock.
    pub fn pause(&mut self) -> anyhow::Result<()> {
        self.qmp.execute("stop").map(drop)
    }

    /// Lets it run again.
    pub fn resume(&mut self) -> anyhow::Result<()> {
        self.qmp.execute("cont").map(drop)
    }

    /// Pins its vCPU threads ([`Guest::pin_vcpus`]).
    pub fn pin_vcpus(&mut self) -> anyhow::Result<Vec<usize>> {
        self.qmp.pin_vcpus()
    }

    /// Ends it: QMP `quit`, then waits up to 10 s for QEMU to exit and
    /// kills what is left. Its disk's writes went to a temporary overlay
    /// (`snapshot=on`), so there is nothing to shut down cleanly: an ACPI
    /// powerdown, which the Debian image of `scripts/debian-image`
    /// ignores, kept every run of an `image:` system waiting 30 s here.
    pub fn close(mut self) {
        let _ = self.qmp.execute("quit");
        let end = Instant::now() + Duration::from_secs(10);
        while matches!(self.qemu.child().try_wait(), Ok(None)) && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The QEMU format of a disk image from its first bytes (`qcow2`, `vmdk`,
/// `vdi`, `vhdx`, else `raw`); an error for a compressed file, which
/// would boot nothing.
pub fn disk_format(head: &[u8]) -> Result<&'static str, String> {
    const COMPRESSED: [(&[u8], &str, &str); 4] = [
        (b"\xfd7zXZ\0", "xz", "unxz"),
        (b"\x1f\x8b", "gzip", "gunzip"),
        (b"\x28\xb5\x2f\xfd", "zstd", "unzstd"),
        (b"BZh", "bzip2", "bunzip2"),
    ];
    if let Some((_, what, tool)) = COMPRESSED.iter().find(|(m, _, _)| head.starts_with(m)) {
        return Err(format!(
            "compressed with {what}: decompress it first ({tool} -k FILE)"
        ));
    }
    if head.len() < 512 {
        return Err(format!(
            "{} bytes: too short to be a disk image",
            head.len()
        ));
    }
    Ok(if head.starts_with(b"QFI\xfb") {
        "qcow2"
    } else if head.starts_with(b"KDMV") {
        "vmdk"
    } else if head.get(0x40..0x44) == Some(&[0x7f, 0x10, 0xda, 0xbe]) {
        "vdi"
    } else if head.starts_with(b"vhdxfile") {
        "vhdx"
    } else {
        "raw"
    })
}

/// What [`run_once`] did.
pub struct Once {
    /// The guest kernel's release.
    pub release: String,
    /// How the shares came.
    pub share: Share,
    /// How the guest ran.
    pub accel: Accel,
    /// What the command did.
    pub ran: Ran,
}

/// Where and how [`run_once`] runs its guest.
pub struct OnceOptions<'a> {
    /// A new directory to copy the guest's writable directory to.
    pub keep: Option<&'a Path>,
    /// Where to make the work directory (none: the system's temporary
    /// directory).
    pub workdir: Option<&'a Path>,
    /// How long the boot, and then the command, may take.
    pub limit: Duration,
    /// What the guest's clock counts.
    pub clock: GuestClock,
}

/// Boots `spec` as host `name` with `init` in a work directory of its
/// own, runs scalebench with `args` there, copies the guest's writable
/// directory to `o.keep` if given, powers the guest off and removes
/// everything else.
pub fn run_once(
    spec: &KernelSpec,
    name: &str,
    init: &Path,
    args: &[String],
    o: &OnceOptions,
) -> anyhow::Result<Once> {
    let work = crate::harness::workdir::WorkDir::create(o.workdir)?;
    let dir = work.path().join("guest");
    let mut g = Guest::boot(spec, name, init, &dir, o.limit, o.clock)?;
    let ran = g.run(args, o.limit)?;
    if let Some(k) = o.keep {
        std::fs::create_dir(k).with_context(|| k.display().to_string())?;
        for e in std::fs::read_dir(g.out_dir())? {
            let e = e?;
            if e.file_type()?.is_file() {
                std::fs::copy(e.path(), k.join(e.file_name()))?;
            }
        }
    }
    let (release, share, accel) = (g.release.clone(), g.share, g.accel.clone());
    g.close()?;
    Ok(Once {
        release,
        share,
        accel,
        ran,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_kernel_panic_on_the_console_is_seen() {
        let t = tempfile::tempdir().unwrap();
        assert!(!super::kernel_panicked(t.path()), "no console yet");
        let log = t.path().join("console.log");
        std::fs::write(&log, "[    0.0] Linux version 6.1.0\n[    1.2] Run /init\n").unwrap();
        assert!(!super::kernel_panicked(t.path()));
        std::fs::write(
            &log,
            "[    0.068000] ---[ end Kernel panic - not syncing: IO-APIC + timer doesn't work! ]---\n",
        )
        .unwrap();
        assert!(super::kernel_panicked(t.path()));
    }

    use super::*;

    #[test]
    fn a_socket_bound_but_not_yet_listening_is_waited_for() {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("q.sock");
        // Bound, not listening: its file is there and a connect is refused.
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        drop(listener);
        std::fs::remove_file(&path).unwrap();
        // SAFETY: plain socket calls on a descriptor this test owns.
        let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
        assert!(fd >= 0);
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
        addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
        for (d, b) in addr
            .sun_path
            .iter_mut()
            .zip(path.as_os_str().as_encoded_bytes())
        {
            *d = *b as libc::c_char;
        }
        let len = std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t;
        let bound = unsafe { libc::bind(fd.as_raw_fd(), (&raw const addr).cast(), len) };
        assert_eq!(bound, 0);
        assert_eq!(
            UnixStream::connect(&path).unwrap_err().kind(),
            std::io::ErrorKind::ConnectionRefused
        );
        let raw = fd.as_raw_fd();
        let later = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            // SAFETY: the descriptor outlives this thread (joined below).
            assert_eq!(unsafe { libc::listen(raw, 1) }, 0);
        });
        let mut child = ChildGroup::spawn(Command::new("sleep").arg("30")).expect("sleep runs");
        let s = connect_when_listening(&path, Duration::from_secs(10), &mut child);
        later.join().unwrap();
        assert!(s.is_ok(), "{s:?}");
        // One that never listens: refused by name within the limit.
        let never = dir.path().join("never.sock");
        let e = connect_when_listening(&never, Duration::from_millis(100), &mut child).unwrap_err();
        assert!(format!("{e:#}").contains("never.sock"), "{e:#}");
    }

    #[test]
    fn accel_given_skips_the_probe_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let nothing = dir.path().join("no-kernel");
        // No probe runs: the kernel named does not even exist.
        let tcg = Accel::chosen(AccelAsk::Tcg, Some(&nothing), dir.path());
        assert!(tcg.emulated());
        assert_eq!(tcg.reason(), "accel=tcg: as accel= asked");
        let kvm = Accel::chosen(AccelAsk::Kvm, Some(&nothing), dir.path());
        assert!(!kvm.emulated());
        assert_eq!(kvm.reason(), "accel=kvm: as accel= asked");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let none = Accel::chosen(AccelAsk::Probe, None, dir.path());
        assert!(none.reason().contains("no kernel in /boot"), "{none}");
    }

    #[test]
    fn an_emulated_guest_counts_instructions_on_one_vcpu_unless_told_time() {
        let tcg = Accel::Tcg("no KVM".into());
        let args = tcg.args(GuestClock::Instructions).join(" ");
        assert_eq!(args, "-accel tcg,thread=single -icount shift=0,sleep=off");
        assert_eq!(
            tcg.args(GuestClock::Time).join(" "),
            "-accel tcg,thread=multi"
        );
        // KVM keeps time whatever is asked.
        let kvm = Accel::Kvm("probed".into());
        assert_eq!(kvm.clock(GuestClock::Instructions), GuestClock::Time);
        assert_eq!(kvm.args(GuestClock::Instructions)[1], "kvm");
        // One vCPU under instruction counting; more refused by name.
        assert_eq!(vcpus(None, GuestClock::Instructions).unwrap(), 1);
        assert_eq!(vcpus(Some(1), GuestClock::Instructions).unwrap(), 1);
        let e = vcpus(Some(2), GuestClock::Instructions)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cpus=2: a guest whose clock counts instructions"),
            "{e}"
        );
        assert_eq!(vcpus(Some(2), GuestClock::Time).unwrap(), 2);
        assert!((1..=2).contains(&vcpus(None, GuestClock::Time).unwrap()));
        assert_eq!(GuestClock::parse("time"), Ok(GuestClock::Time));
        assert!(
            GuestClock::parse("cycles")
                .unwrap_err()
                .contains("instructions or time")
        );
    }

    #[test]
    fn a_disk_image_format_is_read_from_its_first_bytes() {
        let with = |magic: &[u8], at: usize| {
            let mut v = vec![0u8; 512];
            v[at..at + magic.len()].copy_from_slice(magic);
            v
        };
        assert_eq!(disk_format(&with(b"QFI\xfb", 0)), Ok("qcow2"));
        assert_eq!(disk_format(&with(b"KDMV", 0)), Ok("vmdk"));
        assert_eq!(
            disk_format(&with(&[0x7f, 0x10, 0xda, 0xbe], 0x40)),
            Ok("vdi")
        );
        assert_eq!(disk_format(&with(b"vhdxfile", 0)), Ok("vhdx"));
        // A boot sector, or anything else: raw.
        assert_eq!(disk_format(&with(b"\x55\xaa", 510)), Ok("raw"));
        let e = disk_format(&with(b"\xfd7zXZ\0", 0)).unwrap_err();
        assert!(e.contains("xz") && e.contains("unxz -k"), "{e}");
        assert!(
            disk_format(&with(b"\x1f\x8b", 0))
                .unwrap_err()
                .contains("gzip")
        );
        assert!(disk_format(b"abc").unwrap_err().contains("3 bytes"));
    }

    #[test]
    fn a_dynamic_program_is_told_from_a_static_one() {
        // This test binary is linked dynamically against the C library.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(needs_loader(&me), Some(true));
        // An ELF header whose one program header is PT_LOAD.
        let mut elf = vec![0u8; 0x40 + 0x38];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x20..0x28].copy_from_slice(&0x40u64.to_le_bytes());
        elf[0x36..0x38].copy_from_slice(&0x38u16.to_le_bytes());
        elf[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        elf[0x40..0x44].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(needs_loader(&elf), Some(false));
        elf[0x40..0x44].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(needs_loader(&elf), Some(true));
        assert_eq!(needs_loader(b"#!/bin/sh\n"), None);
        elf[0x40..0x44].copy_from_slice(&1u32.to_le_bytes());
        elf[0x38..0x3a].copy_from_slice(&9u16.to_le_bytes());
        assert_eq!(needs_loader(&elf), None, "headers past the end");
    }
    #[test]
    fn a_counting_guest_boots_at_a_fixed_time_and_one_counting_time_does_not() {
        assert_eq!(rtc_base(0), "2026-01-01T00:00:00");
        assert_eq!(rtc_base(3_661), "2026-01-01T01:01:01");
        assert_eq!(
            rtc_args(Some(&rtc_base(0))),
            ["-rtc", "base=2026-01-01T00:00:00,clock=vm"]
        );
        assert!(rtc_args(None).is_empty());
    }

    /// A kernel spec for an image in `dir`, with `modules=` if given.
    fn spec(dir: &Path, modules: Option<PathBuf>) -> KernelSpec {
        KernelSpec {
            kernel: dir.join("bzImage"),
            initrd: None,
            modules,
            cmdline: None,
            machine: crate::systems::spec::Machine {
                cpus: Some(1),
                memory: 512 << 20,
                accel: AccelAsk::Probe,
            },
            seed: None,
        }
    }

    /// A release no machine has a module tree for.
    const REL: &str = "0.0.0-scalebench-test";

    #[test]
    fn a_kernel_without_a_module_tree_loads_nothing() {
        let t = tempfile::tempdir().unwrap();
        let s = spec(t.path(), None);
        // No configuration: 9p, assumed built in, and said so.
        let f = modules_for(&s, REL, true).unwrap();
        assert_eq!((f.share, f.files.len()), (Share::NineP, 0));
        assert!(
            f.said
                .starts_with("none: no module tree /lib/modules/0.0.0"),
            "{}",
            f.said
        );
        assert!(f.said.contains("assumed built in"), "{}", f.said);
        // A configuration beside the image chooses the share.
        let config = t.path().join(format!("config-{REL}"));
        let base = "CONFIG_VIRTIO_PCI=y\nCONFIG_VIRTIO_CONSOLE=y\nCONFIG_BLK_DEV_INITRD=y\n\
                    CONFIG_DEVTMPFS=y\nCONFIG_TMPFS=y\nCONFIG_PROC_FS=y\nCONFIG_SYSFS=y\n";
        std::fs::write(
            &config,
            format!("{base}CONFIG_FUSE_FS=y\nCONFIG_VIRTIO_FS=y\n"),
        )
        .unwrap();
        let f = modules_for(&s, REL, true).unwrap();
        assert_eq!((f.share, f.files.len()), (Share::VirtioFs, 0));
        assert!(f.said.contains(&config.display().to_string()), "{}", f.said);
        let e = modules_for(&s, REL, false).err().unwrap().to_string();
        assert!(e.contains("virtio-fs needs"), "{e}");
        // One that builds in neither share is refused before booting.
        std::fs::write(&config, base).unwrap();
        let e = modules_for(&s, REL, true).err().unwrap().to_string();
        assert!(e.contains("has no module tree"), "{e}");
        assert!(e.contains("modules=DIR"), "{e}");
        assert!(
            e.contains("either 9p (CONFIG_NET_9P, CONFIG_NET_9P_VIRTIO, CONFIG_9P_FS)"),
            "{e}"
        );
    }

    #[test]
    fn modules_come_from_the_tree_given() {
        let t = tempfile::tempdir().unwrap();
        let tree = t.path().join("lib/modules").join(REL);
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(
            tree.join("modules.dep"),
            "kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko\n\
             kernel/net/9p/9pnet.ko:\n\
             kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko\n\
             kernel/drivers/char/virtio_console.ko:\n",
        )
        .unwrap();
        std::fs::write(
            tree.join("modules.builtin"),
            "kernel/drivers/virtio/virtio_pci.ko\n",
        )
        .unwrap();
        let f = modules_for(&spec(t.path(), Some(t.path().to_path_buf())), REL, true).unwrap();
        assert_eq!(f.share, Share::NineP);
        let names: Vec<String> = f
            .files
            .iter()
            .map(|p| kernel::module_name(p.to_str().unwrap()))
            .collect();
        assert_eq!(names, ["9pnet", "9pnet_virtio", "9p", "virtio_console"]);
        assert!(f.files.iter().all(|p| p.starts_with(&tree)));
        assert_eq!(f.said, format!("4 from {}", tree.display()));
        let e = modules_for(&spec(t.path(), Some(t.path().join("nope"))), REL, true)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("modules="), "{e}");
    }

    #[test]
    fn a_guest_that_cannot_mount_its_share_says_which_options_are_missing() {
        let none = "none: no module tree /lib/modules/6.1.192-kab-a";
        let console = "[    1.0] Run /init as init process\n\
            scalebench guest: mount 9p sbroot on /mnt/root: No such device (os error 19)\n\
            [    1.2] reboot: Power down\n";
        let d = diagnose(console, Share::NineP, none).unwrap();
        assert!(
            d.starts_with("its kernel has no 9p filesystem (CONFIG_NET_9P"),
            "{d}"
        );
        assert!(d.contains("kernel:PATH,modules=DIR"), "{d}");
        let console = "scalebench guest: mount virtiofs sbroot on /mnt/root: No such file or directory (os error 2)\n";
        let d = diagnose(console, Share::VirtioFs, "3 from /lib/modules/x").unwrap();
        assert!(d.contains("no virtio device tagged sbroot"), "{d}");
        assert!(
            d.contains("CONFIG_VIRTIO_FS") && !d.contains("modules=DIR"),
            "{d}"
        );
        let console = "scalebench guest: no virtio-serial port named sb.ctl\n";
        let d = diagnose(console, Share::NineP, none).unwrap();
        assert!(d.contains("CONFIG_VIRTIO_CONSOLE"), "{d}");
        // Anything else is left to the console's tail.
        assert_eq!(
            diagnose("scalebench guest: chroot: x\n", Share::NineP, none),
            None
        );
        assert_eq!(diagnose("Kernel panic\n", Share::NineP, none), None);
    }
}
