//! A Linux kernel to boot as a system: its release, read from the image
//! itself (the x86 boot protocol's setup header), and the modules a guest
//! needs from that kernel's own module tree (`/lib/modules/RELEASE`, or
//! the tree `modules=DIR` names), in the order they load (dependencies
//! first), the built-in ones left out. A kernel with no module tree (one
//! built with everything the guest needs built in, `docs/kernel-ab.md`)
//! loads nothing; its configuration, when found beside the image or in
//! `/boot`, says whether what the guest needs is built in.

use anyhow::{Context, bail};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How the guest mounts the host's directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Share {
    /// virtio-9p (generic and rt kernels).
    NineP,
    /// virtio-fs with virtiofsd on the host (every Debian 6.1 kernel).
    VirtioFs,
}

impl Share {
    /// Its value of the guest's `sb.share=` parameter.
    pub fn name(self) -> &'static str {
        match self {
            Share::NineP => "9p",
            Share::VirtioFs => "virtiofs",
        }
    }

    /// The modules a share needs besides those `modules.dep` names, in
    /// order: the PCI transport, then the filesystem.
    pub fn modules(self) -> &'static [&'static str] {
        match self {
            Share::NineP => &["virtio_pci", "9pnet_virtio", "9p"],
            Share::VirtioFs => &["virtio_pci", "virtiofs"],
        }
    }
}

/// Where the setup header starts in a bzImage.
const SETUP_HEADER: usize = 0x1f1;
/// The setup header's magic, `HdrS`, at 0x202.
const MAGIC_AT: usize = 0x202;
/// The boot protocol version (u16) at 0x206.
const PROTOCOL_AT: usize = 0x206;
/// The offset (u16, less 0x200) of the version string, at 0x20e.
const VERSION_AT: usize = 0x20e;

/// The release (`uname -r`) of the kernel in the x86 bzImage `image`,
/// for example `6.1.0-50-cloud-amd64`.
pub fn release(image: &Path) -> anyhow::Result<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(image)
        .with_context(|| format!("kernel {}", image.display()))?
        .take(64 << 10)
        .read_to_end(&mut head)
        .with_context(|| format!("kernel {}", image.display()))?;
    release_of(&head).with_context(|| format!("kernel {}", image.display()))
}

/// [`release`] from the image's first bytes.
pub fn release_of(head: &[u8]) -> anyhow::Result<String> {
    let u16_at = |o: usize| head.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    if head.len() <= SETUP_HEADER || head.get(MAGIC_AT..MAGIC_AT + 4) != Some(b"HdrS") {
        bail!("not an x86 Linux kernel image (bzImage): no boot setup header");
    }
    let protocol = u16_at(PROTOCOL_AT).unwrap_or(0);
    let at = u16_at(VERSION_AT).unwrap_or(0) as usize;
    if protocol < 0x200 || at == 0 {
        bail!("the kernel image does not say its version (boot protocol {protocol:#x})");
    }
    let text = head
        .get(at + 0x200..)
        .context("the kernel image's version string is past its first 64 KiB")?;
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    let words = String::from_utf8_lossy(&text[..end]);
    let release = words.split_whitespace().next().unwrap_or("");
    if release.is_empty() || release.contains('/') || release.starts_with('.') {
        bail!("the kernel image's version string is not a release: `{words}`");
    }
    Ok(release.to_string())
}

/// One kernel's module tree: what each module needs and which are built
/// in.
#[derive(Debug)]
pub struct Modules {
    dir: PathBuf,
    /// Module name → its file (relative to `dir`) and the files it needs.
    deps: HashMap<String, (String, Vec<String>)>,
    builtin: Vec<String>,
}

/// A module's name from its file: `kernel/net/9p/9pnet_virtio.ko.xz` →
/// `9pnet_virtio` (dashes as underscores, as the kernel names them).
pub fn module_name(file: &str) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    let base = base.split(".ko").next().unwrap_or(base);
    base.replace('-', "_")
}

impl Modules {
    /// The module tree of kernel `release`: `given` (a `modules=DIR`: the
    /// tree itself, holding `modules.dep`, or a root it was installed
    /// under with `make modules_install INSTALL_MOD_PATH=DIR`), else
    /// `/lib/modules/RELEASE`. `None` when it is not given and
    /// `/lib/modules/RELEASE` does not exist: the kernel has no modules
    /// here.
    pub fn find(given: Option<&Path>, release: &str) -> anyhow::Result<Option<Modules>> {
        let Some(dir) = given else {
            let dir = Path::new("/lib/modules").join(release);
            return match dir.try_exists() {
                Ok(false) => Ok(None),
                _ => Modules::open(Path::new("/"), release).map(Some),
            };
        };
        if dir.join("modules.dep").exists() {
            return Modules::open_dir(dir, release).map(Some);
        }
        let under = dir.join("lib/modules").join(release);
        if under.join("modules.dep").exists() {
            return Modules::open_dir(&under, release).map(Some);
        }
        bail!(
            "modules={}: neither {} nor {} exists (the tree of kernel {release}, from make modules_install INSTALL_MOD_PATH=DIR)",
            dir.display(),
            dir.join("modules.dep").display(),
            under.join("modules.dep").display()
        )
    }

    /// Reads `root/lib/modules/RELEASE/modules.dep` and `modules.builtin`
    /// (the latter may be missing).
    pub fn open(root: &Path, release: &str) -> anyhow::Result<Modules> {
        Modules::open_dir(&root.join("lib/modules").join(release), release)
    }

    /// Reads `dir/modules.dep` and `dir/modules.builtin` (the latter may
    /// be missing).
    fn open_dir(dir: &Path, release: &str) -> anyhow::Result<Modules> {
        let dir = dir.to_path_buf();
        let dep = dir.join("modules.dep");
        let text = std::fs::read_to_string(&dep).with_context(|| {
            format!(
                "{}: the modules of kernel {release} are not installed here",
                dep.display()
            )
        })?;
        let builtin = std::fs::read_to_string(dir.join("modules.builtin")).unwrap_or_default();
        Ok(Modules::parse(dir, &text, &builtin))
    }

    /// A tree from the texts of `modules.dep` and `modules.builtin`.
    pub fn parse(dir: PathBuf, dep: &str, builtin: &str) -> Modules {
        let deps = dep
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(file, needs)| {
                let needs = needs.split_whitespace().map(str::to_string).collect();
                (module_name(file), (file.to_string(), needs))
            })
            .collect();
        let builtin = builtin.lines().map(module_name).collect();
        Modules { dir, deps, builtin }
    }

    /// The files to load for `names`, dependencies first, each once;
    /// built-in modules need none. A name that is neither is an error.
    pub fn load_order(&self, names: &[&str]) -> anyhow::Result<Vec<PathBuf>> {
        let mut out: Vec<String> = Vec::new();
        for n in names {
            let n = n.replace('-', "_");
            if self.builtin.contains(&n) {
                continue;
            }
            let Some((file, needs)) = self.deps.get(&n) else {
                bail!(
                    "kernel module {n}: neither built in nor in {}",
                    self.dir.display()
                );
            };
            // modules.dep lists every dependency, indirect ones too, the
            // deepest last: loading them in reverse order works.
            for f in needs.iter().rev().chain(std::iter::once(file)) {
                if !out.contains(f) && !self.builtin.contains(&module_name(f)) {
                    out.push(f.clone());
                }
            }
        }
        Ok(out.into_iter().map(|f| self.dir.join(f)).collect())
    }

    /// Whether the kernel has module `name`, built in or as a file.
    pub fn has(&self, name: &str) -> bool {
        let n = name.replace('-', "_");
        self.builtin.contains(&n) || self.deps.contains_key(&n)
    }

    /// The tree's directory (`…/lib/modules/RELEASE`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether `name` is built into the kernel.
    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(&name.replace('-', "_"))
    }
}

/// The configuration of kernel `release` whose image is `image`, if one
/// is found: `config-RELEASE` beside the image (as `scripts/kernel-ab`
/// and Debian's `/boot` keep it), else `/boot/config-RELEASE`. Its path
/// and text.
pub fn config_file(image: &Path, release: &str) -> Option<(PathBuf, String)> {
    let name = format!("config-{release}");
    let beside = image.parent().map(|d| d.join(&name));
    beside
        .into_iter()
        .chain(std::iter::once(Path::new("/boot").join(&name)))
        .find_map(|p| std::fs::read_to_string(&p).ok().map(|t| (p, t)))
}

/// The options a guest needs built in when nothing is loaded: the PCI
/// transport, the command port, the RAM disk and the filesystems its init
/// mounts.
const BUILT_IN: &[&str] = &[
    "VIRTIO_PCI",
    "VIRTIO_CONSOLE",
    "BLK_DEV_INITRD",
    "DEVTMPFS",
    "TMPFS",
    "PROC_FS",
    "SYSFS",
];

/// The options each share needs built in.
fn share_options(share: Share) -> &'static [&'static str] {
    match share {
        Share::NineP => &["NET_9P", "NET_9P_VIRTIO", "9P_FS"],
        Share::VirtioFs => &["FUSE_FS", "VIRTIO_FS"],
    }
}

/// The share a kernel configured by `config` can mount, built in or as
/// modules (`=y` or `=m`): 9p first, else virtio-fs; `None` when it has
/// neither.
pub fn configured_share(config: &str) -> Option<Share> {
    let on = |o: &str| {
        let (y, m) = (format!("CONFIG_{o}=y"), format!("CONFIG_{o}=m"));
        config
            .lines()
            .any(|l| l.trim_end() == y || l.trim_end() == m)
    };
    [Share::NineP, Share::VirtioFs]
        .into_iter()
        .find(|s| share_options(*s).iter().all(|o| on(o)))
}

/// The share a kernel configured by `config` (a `.config`'s text) mounts
/// with no module loaded: 9p when built in, else virtio-fs. An error
/// names the options that are not `=y`.
pub fn builtin_share(config: &str) -> Result<Share, String> {
    let on = |o: &str| {
        let want = format!("CONFIG_{o}=y");
        config.lines().any(|l| l.trim_end() == want)
    };
    let missing = |opts: &[&str]| -> Vec<String> {
        opts.iter()
            .filter(|o| !on(o))
            .map(|o| format!("CONFIG_{o}"))
            .collect()
    };
    let base = missing(BUILT_IN);
    let share = [Share::NineP, Share::VirtioFs]
        .into_iter()
        .find(|s| missing(share_options(*s)).is_empty());
    match (share, base.is_empty()) {
        (Some(s), true) => Ok(s),
        (Some(_), false) => Err(format!("{} not built in (=y)", base.join(", "))),
        (None, _) => {
            let mut m = base;
            m.push(format!(
                "either 9p ({}) or virtio-fs ({})",
                missing(share_options(Share::NineP)).join(", "),
                missing(share_options(Share::VirtioFs)).join(", ")
            ));
            Err(format!("{} not built in (=y)", m.join(", ")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_share_may_be_a_module() {
        let ninep = "CONFIG_NET_9P=m\nCONFIG_NET_9P_VIRTIO=m\nCONFIG_9P_FS=m\n";
        let fs = "CONFIG_FUSE_FS=m\nCONFIG_VIRTIO_FS=y\n";
        assert_eq!(configured_share(ninep), Some(Share::NineP));
        assert_eq!(configured_share(fs), Some(Share::VirtioFs));
        assert_eq!(
            configured_share(&format!("{fs}{ninep}")),
            Some(Share::NineP)
        );
        assert_eq!(
            configured_share("# CONFIG_9P_FS is not set\nCONFIG_FUSE_FS=m\n"),
            None
        );
    }

    /// A bzImage's first bytes with `version` where the header says.
    fn image(version: &str, protocol: u16) -> Vec<u8> {
        let mut v = vec![0u8; 0x4000];
        v[MAGIC_AT..MAGIC_AT + 4].copy_from_slice(b"HdrS");
        v[PROTOCOL_AT..PROTOCOL_AT + 2].copy_from_slice(&protocol.to_le_bytes());
        let at: u16 = 0x3000 - 0x200;
        v[VERSION_AT..VERSION_AT + 2].copy_from_slice(&at.to_le_bytes());
        v[0x3000..0x3000 + version.len()].copy_from_slice(version.as_bytes());
        v
    }

    #[test]
    fn the_release_is_the_version_strings_first_word() {
        let v = "6.1.0-50-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC";
        assert_eq!(
            release_of(&image(v, 0x20f)).unwrap(),
            "6.1.0-50-cloud-amd64"
        );
        assert!(
            release_of(&image(v, 0x100))
                .unwrap_err()
                .to_string()
                .contains("protocol")
        );
        assert!(
            release_of(&[0u8; 100])
                .unwrap_err()
                .to_string()
                .contains("bzImage")
        );
        assert!(release_of(&image("", 0x20f)).is_err());
        let mut bad = image(v, 0x20f);
        bad[VERSION_AT..VERSION_AT + 2].copy_from_slice(&0xfff0u16.to_le_bytes());
        assert!(release_of(&bad).unwrap_err().to_string().contains("64 KiB"));
    }

    #[test]
    fn modules_load_dependencies_first_and_builtins_not_at_all() {
        let dep = "kernel/fs/9p/9p.ko.xz: kernel/net/9p/9pnet.ko.xz kernel/fs/netfs/netfs.ko.xz\n\
                   kernel/net/9p/9pnet_virtio.ko.xz: kernel/net/9p/9pnet.ko.xz\n\
                   kernel/net/9p/9pnet.ko.xz:\n\
                   kernel/fs/netfs/netfs.ko.xz:\n\
                   kernel/fs/fuse/virtiofs.ko: kernel/fs/fuse/fuse.ko\n";
        let m = Modules::parse("/m".into(), dep, "kernel/fs/fuse/fuse.ko\n");
        let order = m.load_order(&["9p", "9pnet-virtio"]).unwrap();
        let names: Vec<String> = order
            .iter()
            .map(|p| module_name(p.to_str().unwrap()))
            .collect();
        assert_eq!(names, ["netfs", "9pnet", "9p", "9pnet_virtio"]);
        assert!(order[0].starts_with("/m/kernel"));
        // virtiofs needs fuse, listed in modules.dep even when built in:
        // a built-in dependency has no file here, but a module does.
        assert!(m.is_builtin("fuse"));
        assert!(m.has("fuse") && m.has("9pnet-virtio") && !m.has("nosuch"));
        assert_eq!(m.load_order(&["fuse"]).unwrap(), Vec::<PathBuf>::new());
        assert_eq!(
            m.load_order(&["virtiofs"]).unwrap(),
            [PathBuf::from("/m/kernel/fs/fuse/virtiofs.ko")]
        );
        let e = m.load_order(&["nosuch"]).unwrap_err().to_string();
        assert!(e.contains("nosuch: neither built in nor in /m"), "{e}");
    }
    #[test]
    fn a_module_tree_is_found_where_given_or_missing_without_error() {
        let t = tempfile::tempdir().unwrap();
        let rel = "6.1.192-kab-test";
        // The tree itself, and a root it was installed under.
        let tree = t.path().join("lib/modules").join(rel);
        std::fs::create_dir_all(&tree).unwrap();
        std::fs::write(tree.join("modules.dep"), "kernel/fs/9p/9p.ko:\n").unwrap();
        for given in [tree.as_path(), t.path()] {
            let m = Modules::find(Some(given), rel).unwrap().unwrap();
            assert_eq!(m.dir(), tree, "{}", given.display());
            assert!(m.has("9p"));
        }
        let e = Modules::find(Some(&t.path().join("lib")), rel)
            .unwrap_err()
            .to_string();
        assert!(e.contains("modules=") && e.contains("modules.dep"), "{e}");
        // No tree under /lib/modules and none given: no modules, no error.
        let none = "0.0.0-scalebench-no-such-release";
        assert!(!Path::new("/lib/modules").join(none).exists());
        assert!(Modules::find(None, none).unwrap().is_none());
    }

    #[test]
    fn a_kernels_configuration_says_which_share_is_built_in() {
        let base: String = BUILT_IN.iter().map(|o| format!("CONFIG_{o}=y\n")).collect();
        let p9 = "CONFIG_NET_9P=y\nCONFIG_NET_9P_VIRTIO=y\nCONFIG_9P_FS=y\n";
        let vfs = "CONFIG_FUSE_FS=y\nCONFIG_VIRTIO_FS=y\n";
        assert_eq!(builtin_share(&format!("{base}{p9}{vfs}")), Ok(Share::NineP));
        assert_eq!(builtin_share(&format!("{base}{vfs}")), Ok(Share::VirtioFs));
        // A module (=m) is not built in.
        let e = builtin_share(&format!("{base}{}", p9.replace("9P_FS=y", "9P_FS=m"))).unwrap_err();
        assert!(e.contains("either 9p (CONFIG_9P_FS)"), "{e}");
        assert!(
            e.contains("virtio-fs (CONFIG_FUSE_FS, CONFIG_VIRTIO_FS)"),
            "{e}"
        );
        let e = builtin_share(&format!(
            "{}{p9}",
            base.replace("CONFIG_VIRTIO_CONSOLE=y", "")
        ))
        .unwrap_err();
        assert_eq!(e, "CONFIG_VIRTIO_CONSOLE not built in (=y)");
    }

    #[test]
    fn the_configuration_is_found_beside_the_image() {
        let t = tempfile::tempdir().unwrap();
        let image = t.path().join("vmlinuz-6.1.192-kab-a");
        let rel = "6.1.192-kab-a-scalebench-test";
        assert!(config_file(&image, rel).is_none());
        std::fs::write(t.path().join(format!("config-{rel}")), "CONFIG_X=y\n").unwrap();
        let (p, text) = config_file(&image, rel).unwrap();
        assert_eq!(
            (p.parent(), text.as_str()),
            (Some(t.path()), "CONFIG_X=y\n")
        );
    }
}
