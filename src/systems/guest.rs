//! The guest side of a `kernel:` system: scalebench (the static build) as
//! PID 1 of a Linux guest booted by [`super::qemu`]. It mounts what a
//! system needs, brings up `lo`, loads the modules the RAM disk carries,
//! mounts this machine's root (read-only) and a writable directory for
//! result files from the host, changes root, and then answers commands
//! on a virtio-serial port ([`PORT`]):
//!
//! ```text
//! guest → host   ready PROTOCOL RELEASE
//! host → guest   run ["__run","--output","/tmp/out/r.json","{…}"]
//! guest → host   done CODE          (output in /tmp/out/cmd-N.{out,err})
//! host → guest   poweroff
//! ```
//!
//! Anything that fails is said on the console and powers the guest off:
//! the host then sees QEMU end without `ready` and shows the console.

/// The version of the protocol above (3: the commands run are agent
/// protocol 3's, `__run` with a run request that may carry `own-clock`).
pub const PROTOCOL: u32 = 3;
/// The name of the command port.
pub const PORT: &str = "sb.ctl";
/// The mount tag of this machine's root.
pub const ROOT_TAG: &str = "sbroot";
/// The mount tag of the writable directory.
pub const OUT_TAG: &str = "sbout";
/// Where the writable directory is inside the guest's root.
pub const OUT_DIR: &str = "/tmp/out";
/// The kernel command line parameter naming how the shares come
/// (`sb.share=9p` or `sb.share=virtiofs`).
pub const SHARE_PARAM: &str = "sb.share=";
/// The RAM disk's file holding the guest's host name (its system's
/// name), padded ([`host_file`]). Not on the kernel command line, which
/// a kernel mixes into the secrets it draws at boot: two guests of one
/// kernel named apart would draw different ones.
pub const HOST_FILE: &str = "host";
/// The length [`host_file`] pads a name to: Linux's longest host name.
const HOST_FILE_LEN: usize = 64;

/// The contents of [`HOST_FILE`] for `name`: the name and a newline,
/// padded with spaces to [`HOST_FILE_LEN`] bytes (so that the RAM disk is
/// the same size whatever the guest is called); a longer name as it is.
pub fn host_file(name: &str) -> Vec<u8> {
    let mut v = format!("{name}\n").into_bytes();
    if v.len() < HOST_FILE_LEN {
        v.resize(HOST_FILE_LEN, b' ');
    }
    v
}

/// The RAM disk's file of bytes the guest's init gives its kernel's
/// random generator as entropy before it reports ready ([`seed_file`]),
/// so that the generator is seeded at once, as on a running machine,
/// instead of after about a billion instructions of timer jitter.
pub const SEED_FILE: &str = "seed";

/// The contents of [`SEED_FILE`]: for a guest counting instructions
/// booted with `seed=N` (`counted`), 32 bytes fixed by N, so that two
/// guests of one kernel draw alike (as their jitter, counted in
/// instructions, made them draw alike before); for any other guest 32
/// random bytes of this machine's.
pub fn seed_file(counted: Option<u32>) -> std::io::Result<Vec<u8>> {
    let Some(n) = counted else {
        let mut b = vec![0u8; 32];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut b)?;
        return Ok(b);
    };
    // Fixed bytes, not secret ones (a counted guest's secrets were never
    // secret: its jitter is a count of instructions).
    let mut r = crate::harness::splitmix::Rng::new(u64::from(n), SEED_STREAM);
    Ok((0..4).flat_map(|_| r.next_u64().to_le_bytes()).collect())
}

/// The stream of [`crate::harness::splitmix::Rng`] a counting guest's
/// seed is drawn from.
const SEED_STREAM: u64 = 0x5EED;

/// The host name in [`HOST_FILE`]'s contents; `None` when empty.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn host_of(file: &str) -> Option<&str> {
    Some(file.trim()).filter(|h| !h.is_empty())
}
/// The kernel command line word telling the guest to load its modules
/// from the RAM disk's own module tree (`initrd=`), not from
/// [`MODULE_ORDER`].
pub const FROM_RAM_DISK: &str = "sb.modules=initrd";
/// The kernel command line parameter naming the kernel's module tree on
/// the host (`sb.modtree=/…/lib/modules/RELEASE`), which the guest binds
/// on its `/lib/modules/RELEASE` when the host's root has none there, so
/// that a module loaded on demand (`modprobe loop`, a filesystem's at its
/// first mount) is found.
pub const MODULE_TREE_PARAM: &str = "sb.modtree=";
/// The file of the RAM disk listing its modules in load order.
pub const MODULE_ORDER: &str = "modules/order";

pub use super::kernel::Share;

/// The share named on a kernel command line ([`SHARE_PARAM`]).
pub fn share_from_cmdline(cmdline: &str) -> Option<Share> {
    match param(cmdline, SHARE_PARAM)? {
        "9p" => Some(Share::NineP),
        "virtiofs" => Some(Share::VirtioFs),
        _ => None,
    }
}

/// The value of the kernel command line parameter `key` (`sb.share=`).
pub fn param<'c>(cmdline: &'c str, key: &str) -> Option<&'c str> {
    cmdline.split_whitespace().find_map(|w| w.strip_prefix(key))
}

/// A command line from the host: `run [JSON words]`, `clock SECONDS.NANOS`
/// or `poweroff`.
#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    /// Run scalebench with these arguments.
    Run(Vec<String>),
    /// Set the clock to this time since the epoch (the host's, sent before
    /// each command: a guest the host paused lags behind).
    Clock(std::time::Duration),
    /// Power off.
    PowerOff,
}

/// The host's line setting the guest's clock to `since_epoch`.
pub fn clock_line(since_epoch: std::time::Duration) -> String {
    format!(
        "clock {}.{:09}\n",
        since_epoch.as_secs(),
        since_epoch.subsec_nanos()
    )
}

/// Reads one command line.
pub fn parse_command(line: &str) -> Result<Command, String> {
    let line = line.trim_end_matches(['\n', '\r']);
    if line == "poweroff" {
        return Ok(Command::PowerOff);
    }
    if let Some(t) = line.strip_prefix("clock ") {
        // Nine digits of nanoseconds, as `clock_line` writes them.
        return match t.split_once('.') {
            Some((s, ns)) if ns.len() == 9 && ns.bytes().all(|b| b.is_ascii_digit()) => {
                match (s.parse::<u64>(), ns.parse::<u32>()) {
                    (Ok(s), Ok(ns)) => Ok(Command::Clock(std::time::Duration::new(s, ns))),
                    _ => Err(format!("`{line}`: expected clock SECONDS.NANOS")),
                }
            }
            _ => Err(format!("`{line}`: expected clock SECONDS.NANOS")),
        };
    }
    let words = line
        .strip_prefix("run ")
        .ok_or_else(|| format!("unknown command `{line}`"))?;
    let args: Vec<String> = serde_json::from_str(words).map_err(|e| format!("`{words}`: {e}"))?;
    Ok(Command::Run(args))
}

/// The host's line for running `args`.
pub fn run_line(args: &[String]) -> String {
    format!(
        "run {}\n",
        serde_json::to_string(args).expect("strings serialize")
    )
}

/// Reads `ready PROTOCOL RELEASE`: the guest's kernel release.
pub fn parse_ready(line: &str) -> Result<String, String> {
    let mut w = line.split_whitespace();
    match (w.next(), w.next().map(str::parse::<u32>), w.next()) {
        (Some("ready"), Some(Ok(PROTOCOL)), Some(release)) => Ok(release.to_string()),
        (Some("ready"), Some(Ok(p)), _) => Err(format!(
            "the guest speaks protocol {p}, this scalebench {PROTOCOL}"
        )),
        _ => Err(format!("expected `ready`, got `{}`", line.trim_end())),
    }
}

/// Reads `done CODE`.
pub fn parse_done(line: &str) -> Result<i32, String> {
    line.trim_end()
        .strip_prefix("done ")
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("expected `done CODE`, got `{}`", line.trim_end()))
}

/// PID 1's work; never returns (the guest powers off).
#[cfg(target_os = "linux")]
pub fn init() -> ! {
    if let Err(e) = linux::serve() {
        sys::say!("scalebench guest: {e:#}");
    }
    let e = crate::sys::guest::power_off();
    sys::say!("scalebench guest: power off failed: {e}");
    // PID 1 exiting panics the kernel, which with panic=-1 and QEMU's
    // -no-reboot ends the guest too.
    std::process::exit(1)
}

#[cfg(target_os = "linux")]
mod linux {
    use super::*;
    use crate::sys::guest as g;
    use anyhow::Context;
    use std::io::{BufRead, Write};
    use std::path::Path;

    /// Mounts the guest's own filesystems under `root`.
    fn kernel_filesystems(root: &Path) -> anyhow::Result<()> {
        for (fs, dir) in [
            ("proc", "proc"),
            ("sysfs", "sys"),
            ("devtmpfs", "dev"),
            ("tmpfs", "tmp"),
        ] {
            g::mount(fs, &root.join(dir), fs, false, None)?;
        }
        Ok(())
    }

    /// Loads the modules the share and the command port need from the RAM
    /// disk's own tree (`initrd=`), in `modules.dep`'s order.
    fn ram_disk_modules(cmdline: &str) -> anyhow::Result<()> {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")?;
        let share = share_from_cmdline(cmdline)
            .with_context(|| format!("no {SHARE_PARAM} on the kernel command line"))?;
        let mods = crate::systems::kernel::Modules::open(Path::new("/"), release.trim())
            .context("the RAM disk given by initrd=")?;
        let mut names = share.modules().to_vec();
        names.push("virtio_console");
        for f in mods
            .load_order(&names)
            .context("the RAM disk given by initrd=")?
        {
            g::load_module(&f)?;
        }
        Ok(())
    }

    /// Loads the RAM disk's modules in the order it lists them (or from
    /// its own module tree: [`FROM_RAM_DISK`]).
    fn modules(cmdline: &str) -> anyhow::Result<()> {
        if cmdline.split_whitespace().any(|w| w == FROM_RAM_DISK) {
            return ram_disk_modules(cmdline);
        }
        let order =
            std::fs::read_to_string(Path::new("/").join(MODULE_ORDER)).context(MODULE_ORDER)?;
        for m in order.lines().filter(|l| !l.is_empty()) {
            g::load_module(&Path::new("/modules").join(m))?;
        }
        Ok(())
    }

    /// Mounts the host's root read-only on /mnt/root and the writable
    /// directory in it, with the guest's own filesystems.
    fn shares(share: Share) -> anyhow::Result<()> {
        let root = Path::new("/mnt/root");
        let (fs, ro_data, rw_data) = match share {
            Share::NineP => (
                "9p",
                Some("trans=virtio,version=9p2000.L,msize=524288,cache=loose"),
                Some("trans=virtio,version=9p2000.L,msize=524288"),
            ),
            Share::VirtioFs => ("virtiofs", None, None),
        };
        g::mount(ROOT_TAG, root, fs, true, ro_data)?;
        kernel_filesystems(root)?;
        let out = root.join(OUT_DIR.trim_start_matches('/'));
        std::fs::create_dir_all(&out).context("mkdir /tmp/out")?;
        g::mount(OUT_TAG, &out, fs, false, rw_data)?;
        // This binary, where the changed root can run it.
        std::fs::copy("/init", root.join("tmp/scalebench")).context("copy /init")?;
        g::change_root(root)?;
        Ok(())
    }

    /// Shows the kernel's own module tree (on the host, [`MODULE_TREE_PARAM`])
    /// at `/lib/modules/RELEASE` of the changed root when that has none:
    /// a tmpfs over `/lib/modules` holding a read-only bind of the tree.
    /// What fails is said on the console; the guest goes on without.
    fn module_tree(cmdline: &str) {
        let Some(tree) = param(cmdline, MODULE_TREE_PARAM) else {
            return;
        };
        let shown = || -> anyhow::Result<()> {
            let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")?;
            let at = Path::new("/lib/modules").join(release.trim());
            if at.join("modules.dep").exists() {
                return Ok(());
            }
            g::mount("tmpfs", Path::new("/lib/modules"), "tmpfs", false, None)?;
            std::fs::create_dir(&at).with_context(|| format!("mkdir {}", at.display()))?;
            g::bind_read_only(Path::new(tree), &at)?;
            Ok(())
        };
        if let Err(e) = shown() {
            sys::say!("scalebench guest: the module tree {tree}: {e:#}");
        }
    }

    /// Runs one command; its exit code.
    fn run(args: &[String], n: u32) -> anyhow::Result<i32> {
        let out = Path::new(OUT_DIR);
        let o = std::fs::File::create(out.join(format!("cmd-{n}.out")))?;
        let e = std::fs::File::create(out.join(format!("cmd-{n}.err")))?;
        let status = std::process::Command::new("/tmp/scalebench")
            .args(args)
            .current_dir(out)
            // The kernel starts PID 1 with no PATH; the programs a run
            // calls (losetup, mkfs, mount, modprobe) are in these.
            .env(
                "PATH",
                "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            )
            .stdin(std::process::Stdio::null())
            .stdout(o)
            .stderr(e)
            .status()
            .context("run /tmp/scalebench")?;
        // Orphans of the command are this PID 1's to reap.
        g::reap_orphans();
        Ok(status.code().unwrap_or(128 + 9))
    }

    pub(super) fn serve() -> anyhow::Result<()> {
        kernel_filesystems(Path::new("/"))?;
        g::loopback_up()?;
        let cmdline = std::fs::read_to_string("/proc/cmdline")?;
        modules(&cmdline)?;
        // In the RAM disk's root, before the shares replace it.
        let host = std::fs::read_to_string(Path::new("/").join(HOST_FILE)).unwrap_or_default();
        if let Some(h) = host_of(&host) {
            g::set_hostname(h).with_context(|| format!("sethostname {h}"))?;
        }
        let seed = std::fs::read(Path::new("/").join(SEED_FILE)).unwrap_or_default();
        if !seed.is_empty()
            && let Err(e) = g::credit_seed(&seed)
        {
            sys::say!("scalebench guest: the seed of the random generator: {e}");
        }
        let share = share_from_cmdline(&cmdline)
            .with_context(|| format!("no {SHARE_PARAM} on the kernel command line"))?;
        shares(share)?;
        module_tree(&cmdline);
        let port = g::virtio_port(Path::new("/sys"), PORT)
            .with_context(|| format!("no virtio-serial port named {PORT}"))?;
        let mut w = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&port)?;
        let mut r = std::io::BufReader::new(w.try_clone()?);
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease")?;
        // Measured as a running machine is: with its random generator
        // seeded (docs/kernels.md, "A seeded generator").
        if !g::crng_seeded(std::time::Duration::from_secs(60)) {
            sys::say!("scalebench guest: the kernel's random generator is not seeded after 60 s");
        }
        writeln!(w, "ready {PROTOCOL} {}", release.trim())?;
        let mut line = String::new();
        let mut n = 0;
        loop {
            n += 1;
            line.clear();
            if r.read_line(&mut line)? == 0 {
                anyhow::bail!("the host closed the command port");
            }
            match parse_command(&line) {
                Ok(Command::PowerOff) => return Ok(()),
                Ok(Command::Clock(t)) => {
                    if let Err(e) = g::set_clock(t) {
                        sys::say!("scalebench guest: cannot set the clock: {e}");
                    }
                    n -= 1;
                }
                Ok(Command::Run(args)) => {
                    let code = run(&args, n).unwrap_or_else(|e| {
                        sys::say!("scalebench guest: {e:#}");
                        127
                    });
                    writeln!(w, "done {code}")?;
                }
                Err(e) => anyhow::bail!("{e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_answers_round_trip() {
        let args: Vec<String> = ["run", "socket", "--label", "a \"b\"\n"]
            .map(String::from)
            .into();
        assert_eq!(parse_command(&run_line(&args)).unwrap(), Command::Run(args));
        assert_eq!(parse_command("poweroff\n").unwrap(), Command::PowerOff);
        assert!(
            parse_command("rm -rf /\n")
                .unwrap_err()
                .contains("unknown command")
        );
        assert!(parse_command("run [1,2]\n").is_err());
        assert_eq!(
            parse_ready(&format!("ready {PROTOCOL} 6.1.0-56-cloud-amd64\n")).unwrap(),
            "6.1.0-56-cloud-amd64"
        );
        assert!(parse_ready("ready 9 x").unwrap_err().contains("protocol 9"));
        // A guest of protocol 1 ran `run ITEM --out FILE`: refused by name.
        assert!(
            parse_ready("ready 1 x")
                .unwrap_err()
                .contains("the guest speaks protocol 1")
        );
        assert!(parse_ready("Linux version").is_err());
        assert_eq!(parse_done("done 3\n").unwrap(), 3);
        let t = std::time::Duration::new(1_700_000_000, 5);
        assert_eq!(clock_line(t), "clock 1700000000.000000005\n");
        assert_eq!(parse_command(&clock_line(t)).unwrap(), Command::Clock(t));
        for bad in [
            "clock 1",
            "clock 1.5",
            "clock x.000000000",
            "clock 1.00000000x",
        ] {
            assert!(parse_command(bad).is_err(), "{bad}");
        }
        assert!(parse_done("done x").is_err());
    }

    #[test]
    fn the_share_comes_from_the_kernel_command_line() {
        assert_eq!(
            share_from_cmdline("console=ttyS0 sb.share=virtiofs quiet"),
            Some(Share::VirtioFs)
        );
        assert_eq!(share_from_cmdline("sb.share=9p"), Some(Share::NineP));
        assert_eq!(share_from_cmdline("sb.share=nfs"), None);
        assert_eq!(share_from_cmdline("quiet"), None);
        assert_eq!(
            param("quiet sb.modtree=/m sb.share=9p", MODULE_TREE_PARAM),
            Some("/m")
        );
        assert_eq!(param("quiet", MODULE_TREE_PARAM), None);
        // The host name file: one size for every short name.
        for name in ["a", "cloud", "v6.12"] {
            let f = host_file(name);
            assert_eq!(f.len(), 64, "{name}");
            assert_eq!(host_of(std::str::from_utf8(&f).unwrap()), Some(name));
        }
        assert_eq!(host_file(&"x".repeat(70)).len(), 71);
        assert_eq!(host_of("   \n"), None);
        // The seed: fixed by seed=N for a guest counting instructions,
        // random for any other; 32 bytes either way.
        let (a, b) = (seed_file(Some(0)).unwrap(), seed_file(Some(1)).unwrap());
        assert_eq!((a.len(), b.len()), (32, 32));
        assert_eq!(a, seed_file(Some(0)).unwrap());
        assert_ne!(a, b);
        let (r, q) = (seed_file(None).unwrap(), seed_file(None).unwrap());
        assert_eq!(r.len(), 32);
        assert_ne!(r, q);
        for s in [Share::NineP, Share::VirtioFs] {
            assert_eq!(
                share_from_cmdline(&format!("{SHARE_PARAM}{}", s.name())),
                Some(s)
            );
            assert_eq!(s.modules()[0], "virtio_pci");
        }
    }
}
