//! Kernels by version from Debian's archive (`kernel:debian:VERSION`,
//! `scalebench kernels list|fetch|prune`). The first tests need no
//! network: a local archive (`file:`) that the test signs with a key it
//! makes, holding a kernel package built from this machine's Debian cloud
//! kernel (installed by scripts/test) without its `modules.dep`, so that
//! the whole first run goes through: signatures checked, download,
//! unpacking, depmod, the cache hit of the second resolve, list, prune,
//! the refusal of an archive that fails its checks, and a boot whose
//! result file names the package. The last boots a real kernel from
//! Debian's archive, through the persistent cache (downloaded once).

#![cfg(all(target_os = "linux", target_arch = "x86_64"))]

use crate::common;
use crate::static_build::static_binary;
use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The suites of the release whose kernel line is `line`.
fn suites(line: &str) -> [String; 3] {
    let dist = match line {
        "6.1" => "bookworm",
        "6.12" => "trixie",
        other => {
            panic!("this machine's cloud kernel is of line {other}: the test knows 6.1 and 6.12")
        }
    };
    [
        dist.to_string(),
        format!("{dist}-updates"),
        format!("{dist}-security"),
    ]
}

/// This machine's newest Debian cloud kernel: its image and release.
fn host_kernel() -> (PathBuf, String) {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/boot")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("vmlinuz-") && n.ends_with("-cloud-amd64")
        })
        .collect();
    found.sort();
    let image = found
        .pop()
        .expect("no /boot/vmlinuz-*-cloud-amd64: scripts/test installs linux-image-cloud-amd64");
    let release = image
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_start_matches("vmlinuz-")
        .to_string();
    (image, release)
}

/// The first two numbers of a release (`6.1` of `6.1.0-57-cloud-amd64`).
fn line_of(release: &str) -> String {
    let mut p = release.split(['.', '-', '+']);
    format!("{}.{}", p.next().unwrap(), p.next().unwrap())
}

fn sha256(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `program` (a test peer scripts/test installs) and checks it ends
/// well.
fn run(cmd: &mut Command, what: &str) -> String {
    let o = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: {e} (scripts/test installs it)"));
    assert!(o.status.success(), "{what}: {}", common::text(&o.stderr));
    common::text(&o.stdout)
}

/// A throwaway gpg home with one signing key; its agent is stopped on
/// drop.
struct Gpg {
    home: PathBuf,
}

impl Gpg {
    fn new(home: PathBuf) -> Gpg {
        std::fs::create_dir_all(&home).unwrap();
        std::fs::set_permissions(&home, std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .unwrap();
        let g = Gpg { home };
        run(
            g.cmd().args([
                "--passphrase",
                "",
                "--quick-gen-key",
                "scalebench test archive <test@scalebench.invalid>",
                "ed25519",
                "sign",
                "never",
            ]),
            "gpg --quick-gen-key",
        );
        g
    }

    fn cmd(&self) -> Command {
        let mut c = Command::new("gpg");
        c.env("GNUPGHOME", &self.home)
            .args(["--batch", "--yes", "-q"]);
        c
    }

    /// The public key, as a keyring file for `signed-by=`.
    fn export(&self, to: &Path) {
        let o = self.cmd().arg("--export").output().expect("gpg");
        assert!(o.status.success() && !o.stdout.is_empty());
        std::fs::write(to, o.stdout).unwrap();
    }

    /// Signs `release` into `inrelease` (clear-signed).
    fn clearsign(&self, release: &Path, inrelease: &Path) {
        run(
            self.cmd()
                .arg("--clearsign")
                .arg("-o")
                .arg(inrelease)
                .arg(release),
            "gpg --clearsign",
        );
    }
}

impl Drop for Gpg {
    fn drop(&mut self) {
        let _ = Command::new("gpgconf")
            .env("GNUPGHOME", &self.home)
            .args(["--kill", "all"])
            .output();
    }
}

/// The kernel package: this machine's cloud kernel image, its
/// configuration, and the modules a guest loads (with their dependencies,
/// from this machine's modules.dep), without modules.dep.
fn kernel_package(dir: &Path, release: &str, version: &str) -> PathBuf {
    let (image, _) = host_kernel();
    let root = dir.join("pkg");
    let tree = Path::new("/lib/modules").join(release);
    let put = |rel: &str, from: &Path| {
        let to = root.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from, &to).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    };
    put(&format!("boot/vmlinuz-{release}"), &image);
    put(
        &format!("boot/config-{release}"),
        &Path::new("/boot").join(format!("config-{release}")),
    );
    let dep = std::fs::read_to_string(tree.join("modules.dep")).unwrap();
    for line in dep.lines() {
        let (file, needs) = line.split_once(':').unwrap();
        let name = file.rsplit('/').next().unwrap();
        if ["virtio_pci.ko", "virtiofs.ko", "virtio_console.ko"]
            .iter()
            .any(|m| name.starts_with(m))
        {
            for f in std::iter::once(file).chain(needs.split_whitespace()) {
                put(&format!("lib/modules/{release}/{f}"), &tree.join(f));
            }
        }
    }
    for f in ["modules.builtin", "modules.order"] {
        put(&format!("lib/modules/{release}/{f}"), &tree.join(f));
    }
    let control = root.join("DEBIAN/control");
    std::fs::create_dir_all(control.parent().unwrap()).unwrap();
    std::fs::write(
        &control,
        format!(
            "Package: linux-image-{release}\nVersion: {version}\nArchitecture: amd64\n\
             Maintainer: scalebench tests <test@scalebench.invalid>\n\
             Description: this machine's cloud kernel, packaged for a test\n"
        ),
    )
    .unwrap();
    let deb = dir.join("image.deb");
    run(
        Command::new("dpkg-deb")
            .args(["--root-owner-group", "-Zgzip", "-z1", "-b"])
            .arg(&root)
            .arg(&deb),
        "dpkg-deb -b",
    );
    deb
}

/// A signed archive of one kernel in a directory: the release of this
/// machine's cloud kernel line, its point release holding an older meta
/// package, its security suite the newer one and the image package.
struct Archive {
    root: PathBuf,
    keyring: PathBuf,
    gpg: Gpg,
    release: String,
    line: String,
    version: String,
    deb: PathBuf,
}

impl Archive {
    fn new(dir: &Path) -> Archive {
        let (_, release) = host_kernel();
        let line = line_of(&release);
        let version = format!("{line}.999-1");
        let root = dir.join("archive");
        let pool = root.join("pool/main/l/linux");
        std::fs::create_dir_all(&pool).unwrap();
        let built = kernel_package(dir, &release, &version);
        let deb = pool.join(format!("linux-image-{release}_{version}_amd64.deb"));
        std::fs::rename(built, &deb).unwrap();
        let gpg = Gpg::new(dir.join("gnupg"));
        let keyring = dir.join("archive-keyring.gpg");
        gpg.export(&keyring);
        let a = Archive {
            root,
            keyring,
            gpg,
            release,
            line,
            version,
            deb,
        };
        for s in suites(&a.line) {
            a.write_suite(&s, &a.packages(&s));
            a.sign(&s);
        }
        a
    }

    /// The Packages index of suite `s`.
    fn packages(&self, s: &str) -> String {
        let meta = |v: &str, image: &str| {
            format!(
                "Package: linux-image-cloud-amd64\nVersion: {v}\nArchitecture: amd64\n\
                 Depends: {image} (= {v})\nFilename: pool/main/l/linux/meta_{v}.deb\nSize: 1000\n\
                 SHA256: {}\nDescription: meta\n\n",
                "0".repeat(64)
            )
        };
        if s.ends_with("-security") {
            let bytes = std::fs::read(&self.deb).unwrap();
            let image = format!("linux-image-{}", self.release);
            format!(
                "{}Package: {image}\nVersion: {}\nArchitecture: amd64\nDepends: kmod\n\
                 Filename: pool/main/l/linux/{}\nSize: {}\nSHA256: {}\nDescription: kernel\n\n",
                meta(&self.version, &image),
                self.version,
                self.deb.file_name().unwrap().to_string_lossy(),
                bytes.len(),
                sha256(&bytes)
            )
        } else if s.ends_with("-updates") {
            String::new()
        } else {
            meta(
                &format!("{}.100-1", self.line),
                "linux-image-0.0.0-1-cloud-amd64",
            )
        }
    }

    /// Writes suite `s`'s index and its (unsigned) Release.
    fn write_suite(&self, s: &str, packages: &str) {
        let d = self.root.join("dists").join(s);
        std::fs::create_dir_all(d.join("main/binary-amd64")).unwrap();
        std::fs::write(d.join("main/binary-amd64/Packages"), packages).unwrap();
        let release = format!(
            "Origin: scalebench test\nSuite: {s}\nCodename: {s}\n\
             Date: Sat, 01 Jan 2000 00:00:00 UTC\nArchitectures: amd64\nComponents: main\n\
             SHA256:\n {} {} main/binary-amd64/Packages\n",
            sha256(packages.as_bytes()),
            packages.len()
        );
        std::fs::write(d.join("Release"), release).unwrap();
    }

    /// Signs suite `s`'s Release into its InRelease.
    fn sign(&self, s: &str) {
        let d = self.root.join("dists").join(s);
        self.gpg.clearsign(&d.join("Release"), &d.join("InRelease"));
    }

    fn security(&self) -> String {
        suites(&self.line)[2].clone()
    }

    /// Makes suite `s`'s index one past its Valid-Until date (as a stale
    /// mirror serves), signed as before.
    fn expire(&self, s: &str) {
        let path = self.root.join("dists").join(s).join("Release");
        let text = std::fs::read_to_string(&path).unwrap().replacen(
            "Architectures:",
            "Valid-Until: Sun, 02 Jan 2000 00:00:00 UTC\nArchitectures:",
            1,
        );
        std::fs::write(&path, text).unwrap();
        self.sign(s);
    }

    /// `scalebench ARGS` against this archive.
    fn sb(&self, args: &[&str]) -> std::process::Output {
        common::bin()
            .env(
                "SCALEBENCH_DEBIAN_ARCHIVE",
                format!("file:{}", self.root.display()),
            )
            .env("SCALEBENCH_DEBIAN_KEYRING", &self.keyring)
            .env_remove("SCALEBENCH_KERNEL_CACHE")
            .args(args)
            .output()
            .unwrap()
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_kernel_is_fetched_from_a_signed_archive_once_then_listed_and_pruned() {
    let t = tempfile::tempdir().unwrap();
    let a = Archive::new(t.path());
    let cache = t.path().join("cache");
    let c = cache.to_str().unwrap();
    let line = a.line.as_str();
    // An empty cache: nothing listed, nothing made by looking.
    let o = a.sb(&["kernels", "list", "--cache", c]);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    assert_eq!(
        common::text(&o.stdout),
        format!("no kernel cached in {c}\n")
    );
    assert!(!cache.exists());
    // The first fetch: the newest of the line is the security suite's.
    let o = a.sb(&["kernels", "fetch", line, "--cache", c]);
    let (out, err) = (common::text(&o.stdout), common::text(&o.stderr));
    assert!(o.status.success(), "{err}");
    let image = format!("linux-image-{}", a.release);
    assert!(
        out.starts_with(&format!(
            "{line}: {image} {} ({}), release {}: downloaded ",
            a.version,
            a.security(),
            a.release
        )),
        "{out}{err}"
    );
    // Unpacked, and depmod made the module tree's modules.dep: the same
    // dependencies as this machine's own tree.
    let entry = cache.join(format!("{image}_{}", a.version));
    let tree = entry.join(format!("root/lib/modules/{}", a.release));
    let made = std::fs::read_to_string(tree.join("modules.dep")).unwrap();
    let host = std::fs::read_to_string(
        Path::new("/lib/modules")
            .join(&a.release)
            .join("modules.dep"),
    )
    .unwrap();
    // (In another order: depmod orders by what else the tree holds.)
    let virtiofs = |d: &str| {
        let mut w: Vec<String> = d
            .lines()
            .find(|l| l.contains("/virtiofs.ko:"))
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        w.sort();
        w
    };
    assert!(virtiofs(&made).len() > 1, "{made}");
    assert_eq!(virtiofs(&made), virtiofs(&host));
    assert!(
        entry
            .join(format!("root/boot/vmlinuz-{}", a.release))
            .is_file()
    );
    assert!(!entry.join("debs").exists(), "the .debs are not kept");
    // The second resolve finds it cached: the package may be gone from
    // the archive, nothing is downloaded.
    std::fs::remove_file(&a.deb).unwrap();
    let o = a.sb(&["kernels", "fetch", line, "--cache", c]);
    let out = common::text(&o.stdout);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    assert!(out.trim_end().ends_with(": cached"), "{out}");
    // The archive out of reach: the cached kernel of the line, said so.
    let o = common::bin()
        .env(
            "SCALEBENCH_DEBIAN_ARCHIVE",
            format!("file:{}/nowhere", t.path().display()),
        )
        .env("SCALEBENCH_DEBIAN_KEYRING", &a.keyring)
        .args(["kernels", "fetch", line, "--cache", c])
        .output()
        .unwrap();
    let out = common::text(&o.stdout);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    assert!(
        out.contains(": cached (the archive could not be reached: "),
        "{out}"
    );
    // Listed: line, package, version, release, size, when.
    let o = a.sb(&["kernels", "list", "--cache", c, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let k = &doc["kernels"][0];
    assert_eq!(doc["kernels"].as_array().unwrap().len(), 1, "{doc}");
    assert_eq!(
        (&k["line"], &k["package"], &k["version"], &k["release"]),
        (
            &serde_json::json!(line),
            &serde_json::json!(image),
            &serde_json::json!(a.version),
            &serde_json::json!(a.release)
        )
    );
    assert!(k["bytes"].as_u64().unwrap() > 1 << 20, "{k}");
    assert!(k["fetched"].as_str().unwrap().ends_with('Z'), "{k}");
    let o = a.sb(&["kernels", "list", "--cache", c]);
    let text = common::text(&o.stdout);
    assert!(
        text.contains(&format!("{line:<5} {image} {}", a.version)),
        "{text}"
    );
    assert!(text.contains(&format!("release {},", a.release)), "{text}");
    // Pruned: another line matches nothing, a dry run removes nothing,
    // then the kernel goes; the cache keeps its tag, lock and apt's
    // indices, and nothing beside the cache is touched.
    std::fs::write(t.path().join("beside"), "mine").unwrap();
    let o = a.sb(&["kernels", "prune", "sid", "--cache", c]);
    assert!(common::text(&o.stdout).starts_with(&format!("nothing in {c} matches sid")));
    let o = a.sb(&["kernels", "prune", line, "--dry-run", "--cache", c]);
    assert!(common::text(&o.stdout).starts_with(&format!("would remove {line} {image}")));
    assert!(entry.is_dir());
    let o = a.sb(&["kernels", "prune", line, "--cache", c]);
    let out = common::text(&o.stdout);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    assert!(
        out.starts_with(&format!(
            "removed {line} {image} {} ({}), ",
            a.version, a.release
        )),
        "{out}"
    );
    assert_eq!(names(&cache), ["CACHEDIR.TAG", "apt", "lock"]);
    let o = a.sb(&["kernels", "prune", "--all", "--cache", c]);
    assert!(o.status.success());
    assert_eq!(names(&cache), ["CACHEDIR.TAG", "lock"]);
    assert_eq!(
        std::fs::read_to_string(t.path().join("beside")).unwrap(),
        "mine"
    );
}

#[test]
fn two_fetches_at_once_share_one_download_and_one_whole_entry() {
    let t = tempfile::tempdir().unwrap();
    let a = Archive::new(t.path());
    let cache = t.path().join("cache");
    let start = || {
        common::bin()
            .env(
                "SCALEBENCH_DEBIAN_ARCHIVE",
                format!("file:{}", a.root.display()),
            )
            .env("SCALEBENCH_DEBIAN_KEYRING", &a.keyring)
            .env("SCALEBENCH_KERNEL_CACHE", &cache)
            .args(["kernels", "fetch", &a.line])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (one, two) = (start(), start());
    let mut said: Vec<String> = [one, two]
        .into_iter()
        .map(|c| {
            let o = c.wait_with_output().unwrap();
            assert!(o.status.success(), "{}", common::text(&o.stderr));
            let out = common::text(&o.stdout);
            out.rsplit(": ").next().unwrap().trim().to_string()
        })
        .collect();
    said.sort();
    assert_eq!(said.len(), 2);
    assert_eq!(said[0], "cached", "{said:?}");
    assert!(said[1].starts_with("downloaded "), "{said:?}");
    // One entry, whole; nothing half-made left beside it.
    let o = a.sb(&[
        "kernels",
        "list",
        "--json",
        "--cache",
        cache.to_str().unwrap(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["kernels"].as_array().unwrap().len(), 1, "{doc}");
    assert!(doc["damaged"].as_array().unwrap().is_empty(), "{doc}");
    assert!(
        !names(&cache).iter().any(|n| n.starts_with(".partial")),
        "{:?}",
        names(&cache)
    );
}

#[test]
fn an_archive_that_fails_its_checks_is_refused_by_name_even_with_a_kernel_cached() {
    let t = tempfile::tempdir().unwrap();
    let a = Archive::new(t.path());
    let line = a.line.clone();
    let sec = a.security();
    let dists = a.root.join("dists");
    let good = t.path().join("good-dists");
    run(Command::new("cp").arg("-a").arg(&dists).arg(&good), "cp -a");
    let other = Gpg::new(t.path().join("other-gnupg"));
    let restore = || {
        std::fs::remove_dir_all(&dists).unwrap();
        run(Command::new("cp").arg("-a").arg(&good).arg(&dists), "cp -a");
    };
    // A cache holding the line's kernel already: a refusal is not
    // papered over with it.
    let cached = t.path().join("cached");
    let o = a.sb(&[
        "kernels",
        "fetch",
        &line,
        "--cache",
        cached.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::text(&o.stderr));
    let s = dists.join(&sec);
    // Each spoiled in turn; `again`: also refused where the cache holds
    // the line's kernel and apt's indices from the good archive (a
    // changed index under an unchanged InRelease is not even read
    // there: apt keeps the indices that InRelease signed).
    type Spoil<'a> = Box<dyn Fn() + 'a>;
    let cases: Vec<(&str, Spoil, &str, bool)> = vec![
        (
            "InRelease changed after signing",
            Box::new(|| {
                let p = s.join("InRelease");
                let text = std::fs::read_to_string(&p).unwrap();
                std::fs::write(
                    &p,
                    text.replace("Origin: scalebench test", "Origin: someone else"),
                )
                .unwrap();
            }),
            "BADSIG",
            true,
        ),
        (
            "unsigned",
            Box::new(|| std::fs::remove_file(s.join("InRelease")).unwrap()),
            // "is not signed", or where it was: "is no longer signed".
            "signed.",
            true,
        ),
        (
            "signed by another key",
            Box::new(|| other.clearsign(&s.join("Release"), &s.join("InRelease"))),
            "NO_PUBKEY",
            true,
        ),
        (
            "an index that is not what the signed Release says",
            Box::new(|| {
                let p = s.join("main/binary-amd64/Packages");
                let text = std::fs::read_to_string(&p).unwrap();
                std::fs::write(
                    &p,
                    text.replace("Description: kernel", "Description: changed"),
                )
                .unwrap();
            }),
            "Hash Sum mismatch",
            false,
        ),
    ];
    for (i, (what, spoil, says, again)) in cases.into_iter().enumerate() {
        spoil();
        let fresh = t.path().join(format!("fresh-{i}"));
        let caches = if again {
            vec![fresh.clone(), cached.clone()]
        } else {
            vec![fresh.clone()]
        };
        for cache in caches {
            let o = a.sb(&[
                "kernels",
                "fetch",
                &line,
                "--cache",
                cache.to_str().unwrap(),
            ]);
            let err = common::text(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{what}: {err}");
            assert!(
                err.contains(&format!(
                    "error: kernel:debian:{line}: Debian's archive (file:"
                )) && err.contains("failed apt's checks, so nothing of it is used")
                    && err.contains(says)
                    && err.contains(&sec),
                "{what}: {err}"
            );
            assert!(common::text(&o.stdout).is_empty(), "{what}");
        }
        let o = a.sb(&["kernels", "list", "--cache", fresh.to_str().unwrap()]);
        assert!(
            common::text(&o.stdout).starts_with("no kernel cached"),
            "{what}"
        );
        restore();
    }
    // Only Debian's archive, or a local one.
    let o = common::bin()
        .env(
            "SCALEBENCH_DEBIAN_ARCHIVE",
            "http://mirror.example.org/debian",
        )
        .args([
            "kernels",
            "fetch",
            &line,
            "--cache",
            cached.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = common::text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("SCALEBENCH_DEBIAN_ARCHIVE=http://mirror.example.org/debian: only file:/DIR or http:// on loopback"),
        "{err}"
    );
}

/// The result file's record of a `kernel:debian:` guest, checked
/// against what the cache says it booted.
fn assert_recorded(doc: &serde_json::Value, asked: &str) -> serde_json::Value {
    common::assert_valid(doc);
    let s = &doc["system"];
    let p = &s["kernel_package"];
    assert_eq!(p["archive"], "debian", "{p}");
    assert_eq!(p["asked"], asked);
    assert_eq!(
        p["release"], s["os_release"],
        "the guest ran the package's kernel"
    );
    assert_eq!(
        p["package"],
        format!("linux-image-{}", p["release"].as_str().unwrap())
    );
    let deb = &p["debs"][0];
    assert_eq!(
        (&deb["package"], &deb["version"]),
        (&p["package"], &p["version"])
    );
    assert_eq!(deb["sha256"].as_str().unwrap().len(), 64);
    let config = &p["config"];
    assert!(
        config["path"]
            .as_str()
            .unwrap()
            .ends_with(s["os_release"].as_str().unwrap()),
        "{p}"
    );
    assert!(
        s["kernel_config"]["options"].as_object().unwrap().len() > 1000,
        "{s}"
    );
    for b in doc["benchmarks"].as_array().unwrap() {
        assert_eq!(b["status"], "ok", "{}", b["name"]);
    }
    p.clone()
}

#[test]
fn a_fetched_kernel_boots_and_the_result_file_names_its_package() {
    let t = tempfile::tempdir().unwrap();
    let a = Archive::new(t.path());
    // Its security suite, which holds the kernel, is served stale: read
    // all the same, said, and recorded.
    a.expire(&a.security());
    let deb_sha = sha256(&std::fs::read(&a.deb).unwrap());
    let config = std::fs::read(Path::new("/boot").join(format!("config-{}", a.release))).unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let o = common::bin()
        .env(
            "SCALEBENCH_DEBIAN_ARCHIVE",
            format!("file:{}", a.root.display()),
        )
        .env("SCALEBENCH_DEBIAN_KEYRING", &a.keyring)
        .env("SCALEBENCH_KERNEL_CACHE", t.path().join("cache"))
        .args(["run", "socket", "--max", "20", "--runs", "1", "--no-report"])
        .args(["--guest-clock", "time"])
        .arg("--system")
        .arg(format!(
            "v={}",
            format_args!("kernel:debian:{},cpus=1,memory=1G,accel=tcg", a.line)
        ))
        .arg("--guest-bin")
        .arg(static_binary())
        .arg("--workdir")
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "v: kernel:debian:{} is linux-image-{} {} (",
            a.line, a.release, a.version
        )),
        "{stderr}"
    );
    let doc = common::load(&out);
    let p = assert_recorded(&doc, &a.line);
    assert_eq!(p["version"], a.version.as_str());
    assert_eq!(p["suite"], a.security());
    assert_eq!(p["debs"][0]["sha256"], deb_sha);
    assert_eq!(p["config"]["sha256"], sha256(&config));
    assert_eq!(p["config"]["path"], format!("/boot/config-{}", a.release));
    assert!(
        stderr.contains("an index past its Valid-Until date"),
        "{stderr}"
    );
    assert!(
        p["index_stale"].as_str().unwrap().contains("is expired"),
        "{p}"
    );
    assert!(p.get("archive_unreachable").is_none(), "{p}");
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new()
    );
    assert_eq!(common::scalebench_entries(&work), Vec::<String>::new());
}

/// `scalebench run ARGS --system SYSTEM` against Debian's archive
/// itself and the persistent kernel cache (`~/.cache/scalebench/kernels`:
/// a second run of the tests downloads nothing), in a work directory of
/// its own that no process names afterwards; the result file.
fn run_from_debians_archive(args: &[&str], system: &str) -> serde_json::Value {
    let t = tempfile::tempdir().unwrap();
    let work = t.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = t.path().join("r.json");
    let o = common::bin()
        .env_remove("SCALEBENCH_DEBIAN_ARCHIVE")
        .env_remove("SCALEBENCH_DEBIAN_KEYRING")
        .env_remove("SCALEBENCH_KERNEL_CACHE")
        .arg("run")
        .args(args)
        .args(["--runs", "1", "--no-report", "--system", system])
        .arg("--guest-bin")
        .arg(static_binary())
        .arg("--workdir")
        .arg(&work)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = common::text(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(
        common::processes_naming(work.to_str().unwrap()),
        Vec::<u32>::new()
    );
    common::load(&out)
}

/// Debian's archive itself, once: trixie's newest cloud kernel resolved,
/// fetched into the persistent cache ([`run_from_debians_archive`]),
/// booted, and named in the result file.
#[test]
fn a_kernel_from_debians_archive_boots_by_its_version() {
    let doc = run_from_debians_archive(
        &["socket", "--max", "50", "--guest-clock", "time"],
        "a=kernel:debian:6.12,cpus=1,memory=1G,accel=tcg",
    );
    let p = assert_recorded(&doc, "6.12");
    assert!(
        p["package"]
            .as_str()
            .unwrap()
            .starts_with("linux-image-6.12."),
        "{p}"
    );
    assert!(p["suite"].as_str().unwrap().starts_with("trixie"), "{p}");
    assert_eq!(
        p["config"]["path"],
        format!("/boot/config-{}", p["release"].as_str().unwrap())
    );
}

/// JFS and ReiserFS, two of the seeds' Linux filesystems, actually made
/// and measured: this machine's kernel has neither, Debian's generic
/// kernel has both as modules. `flavour=generic` fetches bookworm's
/// (persistent cache), the guest shows the kernel's module tree at its
/// `/lib/modules/RELEASE`, `losetup` finds `loop` loaded on demand, each
/// first mount loads its filesystem, and each target is a filesystem of
/// its kind made by its mkfs on a loop device, in the guest's memory.
#[test]
fn jfs_and_reiserfs_are_made_and_measured_in_debians_generic_kernel() {
    let doc = run_from_debians_archive(
        &[
            "fs",
            "--mkfs",
            "jfs,reiserfs",
            "--files",
            "100",
            "--bytes",
            "1M",
            "--requests",
            "100",
        ],
        "g=kernel:debian:6.1,flavour=generic,cpus=1,memory=1G,accel=tcg",
    );
    let p = assert_recorded(&doc, "6.1,flavour=generic");
    let package = p["package"].as_str().unwrap();
    assert!(
        package.starts_with("linux-image-6.1.") && package.ends_with("-amd64"),
        "{p}"
    );
    assert!(!package.contains("cloud"), "the generic flavour: {p}");
    let fs = common::workload(&doc, "fs");
    assert_eq!(fs["status"], "ok", "{}", fs["message"]);
    let targets = fs["params"]["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2, "{targets:?}");
    for (target, kind) in targets.iter().zip(["jfs", "reiserfs"]) {
        assert_eq!(
            (&target["fs_type"], &target["made"], &target["mkfs"]),
            (&kind.into(), &true.into(), &kind.into()),
            "{target}"
        );
        assert!(
            target["device"].as_str().unwrap().starts_with("/dev/loop"),
            "{target}"
        );
    }
    let rows = fs["rows"].as_array().unwrap();
    for kind in ["jfs", "reiserfs"] {
        let of = |label: &str| {
            rows.iter()
                .any(|r| r["label"] == label && r["target"] == kind)
        };
        assert!(of("unpack") && of("delete"), "{kind}: {fs}");
    }
    for r in rows {
        assert!(r["error"].is_null(), "{r}");
        if r["params"]["cache"] == "cold" {
            // The image is in the guest's /tmp, a tmpfs: said, not hidden.
            assert_eq!(r["params"]["image_resident_after"], 1.0, "{r}");
        }
    }
}
