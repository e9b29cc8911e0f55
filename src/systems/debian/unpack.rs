//! A kernel's packages unpacked (`dpkg-deb -x`) into one root, and what
//! is where in it: the image (`boot/vmlinuz-RELEASE`, or from the 7.2
//! packages on `usr/lib/modules/RELEASE/vmlinuz`), the module tree
//! (`lib/modules/RELEASE`, or `usr/lib/modules/RELEASE` from 6.12 on),
//! the configuration (`boot/config-RELEASE`, or the tree's `config`);
//! then `depmod` makes the tree's `modules.dep`, which Debian's packages
//! leave to their postinst.

use super::apt::{Tools, ended};
use crate::harness::reaper::run_bounded;
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long unpacking one package, or depmod, may take.
const LIMIT: Duration = Duration::from_secs(600);

/// What is where in an unpacked kernel, relative to its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The kernel image.
    pub kernel: PathBuf,
    /// Its release, as its boot header says it.
    pub release: String,
    /// The module tree.
    pub modules: PathBuf,
    /// The configuration file and the package it came from.
    pub config: Option<(PathBuf, String)>,
}

/// Unpacks each `(package, .deb)` into `root` in turn, noting which one
/// brought a configuration file.
pub fn unpack(tools: &Tools, debs: &[(String, PathBuf)], root: &Path) -> anyhow::Result<Layout> {
    std::fs::create_dir_all(root).with_context(|| root.display().to_string())?;
    let mut config_from: Vec<(PathBuf, String)> = Vec::new();
    for (package, deb) in debs {
        let before = configs(root);
        let mut c = Command::new(&tools.dpkg_deb);
        c.arg("-x").arg(deb).arg(root);
        let f = run_bounded(&mut c, LIMIT).context("dpkg-deb")?;
        if !f.status.is_some_and(|s| s.success()) {
            bail!("dpkg-deb -x {}: {}", deb.display(), ended(&f));
        }
        for p in configs(root) {
            if !before.contains(&p) {
                config_from.push((p, package.clone()));
            }
        }
    }
    let names: Vec<&str> = debs.iter().map(|(p, _)| p.as_str()).collect();
    layout(root, &config_from, &names.join(", "))
}

/// The configuration files under `root`: `boot/config-*` and
/// `{usr/,}lib/modules/*/config`, relative to it.
fn configs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = entries(&root.join("boot"))
        .into_iter()
        .filter(|n| n.starts_with("config-"))
        .map(|n| Path::new("boot").join(n))
        .collect();
    for base in ["lib/modules", "usr/lib/modules"] {
        for r in entries(&root.join(base)) {
            let p = Path::new(base).join(&r).join("config");
            if root.join(&p).is_file() {
                v.push(p);
            }
        }
    }
    v
}

/// The names in directory `d` (none when it is missing).
fn entries(d: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(d)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Finds the image, its release, its tree and its configuration in
/// `root`; `what` names the packages for messages.
fn layout(root: &Path, configs: &[(PathBuf, String)], what: &str) -> anyhow::Result<Layout> {
    let mut images: Vec<PathBuf> = entries(&root.join("boot"))
        .into_iter()
        .filter(|n| n.starts_with("vmlinuz-"))
        .map(|n| Path::new("boot").join(n))
        .collect();
    for base in ["lib/modules", "usr/lib/modules"] {
        for r in entries(&root.join(base)) {
            let p = Path::new(base).join(&r).join("vmlinuz");
            if root.join(&p).is_file() && !root.join(base).is_symlink() {
                images.push(p);
            }
        }
    }
    let kernel = match images.as_slice() {
        [one] => one.clone(),
        [] => bail!("{what}: no kernel image in it (boot/vmlinuz-*, usr/lib/modules/*/vmlinuz)"),
        many => bail!(
            "{what}: several kernel images in it ({})",
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let release = super::super::kernel::release(&root.join(&kernel))
        .with_context(|| format!("{what}: {}", kernel.display()))?;
    let modules = ["lib/modules", "usr/lib/modules"]
        .iter()
        .map(|b| Path::new(b).join(&release))
        .find(|p| root.join(p).is_dir() && !root.join(p).is_symlink())
        .with_context(|| {
            format!("{what}: no module tree of {release} in it (lib/modules/{release}, usr/lib/modules/{release})")
        })?;
    let config = configs
        .iter()
        .find(|(p, _)| {
            *p == Path::new("boot").join(format!("config-{release}"))
                || *p == modules.join("config")
        })
        .cloned();
    Ok(Layout {
        kernel,
        release,
        modules,
        config,
    })
}

/// Runs `depmod` on the tree of `layout` under `root`, reached as
/// `lib/modules/RELEASE` and as `usr/lib/modules/RELEASE` (links made
/// for the one the packages lack: kmod looks in one or the other by its
/// version), and checks it made `modules.dep`.
pub fn depmod(tools: &Tools, root: &Path, layout: &Layout) -> anyhow::Result<()> {
    link_trees(root, &layout.modules)?;
    let mut c = Command::new(&tools.depmod);
    c.arg("-b").arg(root).arg(&layout.release);
    let f = run_bounded(&mut c, LIMIT).context("depmod")?;
    if !f.status.is_some_and(|s| s.success()) {
        bail!(
            "depmod -b {} {}: {}",
            root.display(),
            layout.release,
            ended(&f)
        );
    }
    let dep = root.join(&layout.modules).join("modules.dep");
    if !dep.is_file() {
        bail!(
            "depmod -b {} {} made no {}",
            root.display(),
            layout.release,
            dep.display()
        );
    }
    Ok(())
}

/// Makes `lib/modules` and `usr/lib/modules` under `root` both lead to
/// the directory that holds `tree`, linking the one that is missing.
fn link_trees(root: &Path, tree: &Path) -> anyhow::Result<()> {
    let (lib, usr) = (root.join("lib/modules"), root.join("usr/lib/modules"));
    let link = |at: &Path, to: &str| -> anyhow::Result<()> {
        if at.exists() || at.is_symlink() {
            return Ok(());
        }
        if let Some(p) = at.parent() {
            std::fs::create_dir_all(p).with_context(|| p.display().to_string())?;
        }
        std::os::unix::fs::symlink(to, at).with_context(|| at.display().to_string())
    };
    if tree.starts_with("usr") {
        link(&lib, "../usr/lib/modules")
    } else {
        link(&usr, "../../lib/modules")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bzImage's first bytes saying `release`.
    fn image(release: &str) -> Vec<u8> {
        let mut v = vec![0u8; 0x1000];
        v[0x202..0x206].copy_from_slice(b"HdrS");
        v[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
        v[0x20e..0x210].copy_from_slice(&(0x800u16 - 0x200).to_le_bytes());
        v[0x800..0x800 + release.len()].copy_from_slice(release.as_bytes());
        v
    }

    fn put(root: &Path, rel: &str, data: &[u8]) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, data).unwrap();
    }

    #[test]
    fn the_image_tree_and_config_are_found_in_both_layouts() {
        let t = tempfile::tempdir().unwrap();
        // 6.1: /boot and /lib/modules.
        let old = t.path().join("old");
        let r = "6.1.0-57-cloud-amd64";
        put(&old, &format!("boot/vmlinuz-{r}"), &image(r));
        put(&old, &format!("boot/config-{r}"), b"CONFIG_X=y\n");
        put(&old, &format!("lib/modules/{r}/kernel/a.ko"), b"");
        let cf = vec![(PathBuf::from(format!("boot/config-{r}")), "img".to_string())];
        let l = layout(&old, &cf, "img").unwrap();
        assert_eq!(l.release, r);
        assert_eq!(l.kernel, PathBuf::from(format!("boot/vmlinuz-{r}")));
        assert_eq!(l.modules, PathBuf::from(format!("lib/modules/{r}")));
        assert_eq!(l.config, Some(cf[0].clone()));
        link_trees(&old, &l.modules).unwrap();
        assert!(
            old.join(format!("usr/lib/modules/{r}/kernel/a.ko"))
                .exists()
        );
        // 7.2: everything in /usr/lib/modules/RELEASE, the config from
        // another package.
        let new = t.path().join("new");
        let r = "7.2.13+deb14-cloud-amd64";
        put(&new, &format!("usr/lib/modules/{r}/vmlinuz"), &image(r));
        put(
            &new,
            &format!("usr/lib/modules/{r}/config"),
            b"CONFIG_X=y\n",
        );
        assert_eq!(
            configs(&new),
            [PathBuf::from(format!("usr/lib/modules/{r}/config"))]
        );
        let cf = vec![(configs(&new)[0].clone(), "linux-base".to_string())];
        let l = layout(&new, &cf, "img").unwrap();
        assert_eq!(
            l.kernel,
            PathBuf::from(format!("usr/lib/modules/{r}/vmlinuz"))
        );
        assert_eq!(l.modules, PathBuf::from(format!("usr/lib/modules/{r}")));
        assert_eq!(l.config.unwrap().1, "linux-base");
        link_trees(&new, &l.modules).unwrap();
        assert!(new.join(format!("lib/modules/{r}/vmlinuz")).exists());
        // Linked, the image is still found once.
        assert_eq!(layout(&new, &[], "img").unwrap().release, r);
    }

    #[test]
    fn a_package_without_a_kernel_or_a_tree_is_refused_by_name() {
        let t = tempfile::tempdir().unwrap();
        let e = layout(t.path(), &[], "linux-image-x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("linux-image-x: no kernel image in it"), "{e}");
        put(t.path(), "boot/vmlinuz-1.2.3", &image("1.2.3"));
        let e = layout(t.path(), &[], "linux-image-x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("no module tree of 1.2.3"), "{e}");
        put(t.path(), "boot/vmlinuz-1.2.4", &image("1.2.4"));
        let e = layout(t.path(), &[], "linux-image-x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("several kernel images"), "{e}");
    }
}
