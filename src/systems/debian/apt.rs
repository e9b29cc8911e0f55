//! Debian's apt under a private configuration and state: its own
//! `apt.conf` (given by `APT_CONFIG`, read before anything of
//! `/etc/apt`, so that none of the machine's configuration, sources,
//! keys or lists is read or changed), its own `sources.list` with
//! `signed-by=` Debian's keyring on every line, its own lists and cache,
//! no dpkg status. Signatures are checked as apt checks them; nothing
//! here allows an unsigned or unauthenticated archive.

use super::Dist;
use crate::harness::reaper::{Finished, run_bounded};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Debian's keyring (package `debian-archive-keyring`).
pub const KEYRING: &str = "/usr/share/keyrings/debian-archive-keyring.gpg";
/// Where the packages come from instead of Debian's archive: a `file:`
/// directory or a loopback `http://` address holding every suite (tests,
/// an offline copy).
pub const ARCHIVE_ENV: &str = "SCALEBENCH_DEBIAN_ARCHIVE";
/// The keyring that archive is signed with (only with [`ARCHIVE_ENV`]).
pub const KEYRING_ENV: &str = "SCALEBENCH_DEBIAN_KEYRING";

/// How long `apt-get update` may take.
const UPDATE_LIMIT: Duration = Duration::from_secs(600);
/// How long downloading a kernel's packages may take.
const DOWNLOAD_LIMIT: Duration = Duration::from_secs(1800);
/// How long a question to `apt-cache` may take.
const QUERY_LIMIT: Duration = Duration::from_secs(120);

/// Debian's programs this needs, found.
#[derive(Debug, Clone)]
pub struct Tools {
    /// `apt-get` (package `apt`).
    pub apt_get: PathBuf,
    /// `apt-cache` (package `apt`).
    pub apt_cache: PathBuf,
    /// `dpkg-deb` (package `dpkg`).
    pub dpkg_deb: PathBuf,
    /// `depmod` (package `kmod`).
    pub depmod: PathBuf,
}

/// `program` on `PATH` or in the directories Debian keeps programs in
/// (`depmod` is in `/usr/sbin`, often not on a user's `PATH`).
fn find(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// Debian's tools and keyring, or an error naming what is missing (and
/// on another OS than Linux, that).
pub fn tools(keyring: &Path) -> Result<Tools, String> {
    if std::env::consts::OS != "linux" {
        return Err(format!(
            "kernel:debian: fetches with Debian's apt-get, dpkg-deb and depmod and boots on Linux; this is {}",
            std::env::consts::OS
        ));
    }
    let wanted = [
        ("apt-get", "apt"),
        ("apt-cache", "apt"),
        ("dpkg-deb", "dpkg"),
        ("depmod", "kmod"),
        ("gpgv", "gpgv"),
    ];
    let found: Vec<Option<PathBuf>> = wanted.iter().map(|(p, _)| find(p)).collect();
    let mut missing: Vec<String> = wanted
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|((p, pkg), _)| format!("{p} (package {pkg})"))
        .collect();
    if !keyring.is_file() {
        missing.push(if keyring == Path::new(KEYRING) {
            format!("{KEYRING} (package debian-archive-keyring)")
        } else {
            format!("{} (the keyring {KEYRING_ENV} names)", keyring.display())
        });
    }
    if !missing.is_empty() {
        return Err(format!(
            "kernel:debian: needs Debian's tools, and this machine lacks {}",
            missing.join(", ")
        ));
    }
    let f = |i: usize| found[i].clone().unwrap_or_default();
    Ok(Tools {
        apt_get: f(0),
        apt_cache: f(1),
        dpkg_deb: f(2),
        depmod: f(3),
    })
}

/// Where the suites are, and the keyring that signs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Archive {
    /// Every suite at this URL instead of Debian's archive.
    pub mirror: Option<String>,
    /// The keyring the suites must be signed with.
    pub keyring: PathBuf,
}

impl Archive {
    /// Debian's archive, or the one [`ARCHIVE_ENV`] names (only `file:`
    /// or loopback `http://`: this feature sends traffic to Debian's
    /// archive and nowhere else) signed with [`KEYRING_ENV`]'s keyring.
    pub fn from_env() -> Result<Archive, String> {
        let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
        let (mirror, keyring) = (var(ARCHIVE_ENV), var(KEYRING_ENV));
        match (mirror, keyring) {
            (None, None) => Ok(Archive {
                mirror: None,
                keyring: PathBuf::from(KEYRING),
            }),
            (None, Some(_)) => Err(format!("{KEYRING_ENV} goes with {ARCHIVE_ENV}")),
            (Some(m), k) => {
                check_mirror(&m)?;
                Ok(Archive {
                    mirror: Some(m.trim_end_matches('/').to_string()),
                    keyring: PathBuf::from(k.unwrap_or_else(|| KEYRING.into())),
                })
            }
        }
    }

    /// The URL of `archive` (`debian`, `debian-security`).
    fn uri(&self, archive: &str) -> String {
        match (&self.mirror, archive) {
            (Some(m), _) => m.clone(),
            (None, "debian-security") => "http://security.debian.org/debian-security".into(),
            (None, a) => format!("http://deb.debian.org/{a}"),
        }
    }

    /// Where the packages come from, in words.
    pub fn name(&self) -> String {
        match &self.mirror {
            Some(m) => m.clone(),
            None => "deb.debian.org and security.debian.org".into(),
        }
    }
}

/// A mirror given by [`ARCHIVE_ENV`]: `file:/ABSOLUTE` or
/// `http://LOOPBACK[:PORT]/…`, one word.
fn check_mirror(m: &str) -> Result<(), String> {
    let bad = |why: &str| Err(format!("{ARCHIVE_ENV}={m}: {why}"));
    if m.chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '"')
    {
        return bad("one word, without spaces or quotes");
    }
    if let Some(p) = m.strip_prefix("file:") {
        return if p.starts_with('/') {
            Ok(())
        } else {
            bad("a file: archive needs an absolute path (file:/srv/debian)")
        };
    }
    let Some(rest) = m.strip_prefix("http://") else {
        return bad("only file:/DIR or http:// on loopback (127.0.0.1, [::1], localhost)");
    };
    let host = rest.split('/').next().unwrap_or("");
    let host = match host.strip_prefix('[') {
        Some(h) => h.split(']').next().unwrap_or(""),
        None => host.split(':').next().unwrap_or(""),
    };
    let loopback = host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback());
    if loopback {
        Ok(())
    } else {
        bad("only file:/DIR or http:// on loopback (127.0.0.1, [::1], localhost)")
    }
}

/// The text of `sources.list` for `dist`'s suites.
pub fn sources(dist: &Dist, archive: &Archive) -> String {
    dist.suites
        .iter()
        .map(|(a, suite)| {
            format!(
                "deb [arch=amd64 signed-by={}] {} {suite} main\n",
                archive.keyring.display(),
                archive.uri(a)
            )
        })
        .collect()
}

/// The private `apt.conf` of state directory `dir`: everything of apt's
/// under it, nothing of `/etc/apt` read.
pub fn config(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "Dir::Etc \"{d}/etc\";\n\
         Dir::Etc::main \"/dev/null\";\n\
         Dir::Etc::parts \"{d}/etc/empty\";\n\
         Dir::Etc::sourcelist \"{d}/etc/sources.list\";\n\
         Dir::Etc::sourceparts \"{d}/etc/empty\";\n\
         Dir::Etc::preferences \"/dev/null\";\n\
         Dir::Etc::preferencesparts \"{d}/etc/empty\";\n\
         Dir::Etc::trusted \"/dev/null\";\n\
         Dir::Etc::trustedparts \"{d}/etc/empty\";\n\
         Dir::Etc::netrc \"/dev/null\";\n\
         Dir::Etc::netrcparts \"{d}/etc/empty\";\n\
         Dir::State \"{d}/state\";\n\
         Dir::State::Lists \"{d}/lists\";\n\
         Dir::State::status \"/dev/null\";\n\
         Dir::Cache \"{d}/cache\";\n\
         Dir::Cache::pkgcache \"\";\n\
         Dir::Cache::srcpkgcache \"\";\n\
         Acquire::GzipIndexes \"true\";\n\
         Dir::Log \"{d}/log\";\n\
         Acquire::Languages \"none\";\n\
         APT::Architecture \"amd64\";\n\
         APT::Architectures {{ \"amd64\"; }};\n"
    )
}

/// Why `apt-get update` failed.
#[derive(Debug, PartialEq, Eq)]
pub enum UpdateFailed {
    /// The archive failed a check: a signature missing, bad or by an
    /// unknown key, an index that is not what the signed Release says,
    /// an expired Release. Nothing of it may be used.
    Refused(String),
    /// The archive could not be reached (no network, no such directory).
    Unreachable(String),
}

/// apt's words for an archive that failed its checks.
const REFUSALS: &[&str] = &[
    "is not signed",
    "NO_PUBKEY",
    "BADSIG",
    "EXPKEYSIG",
    "REVKEYSIG",
    "signatures were invalid",
    "signatures couldn't be verified",
    "Hash Sum mismatch",
    "unexpected size",
    "is expired",
    "not valid yet",
    "isn't valid",
    "no longer signed",
];

/// Whether `why`, the words of a refused update, says only that
/// Releases are past their Valid-Until date (every signature good).
pub fn only_expired(why: &str) -> bool {
    why.split("; ")
        .all(|l| l.contains("is expired") || !REFUSALS.iter().any(|r| l.contains(r)))
        && why.contains("is expired")
}

/// apt's errors and warnings in `f`'s output, one line each, once each.
pub fn complaints(f: &Finished) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for l in f.stdout.lines().chain(f.stderr.lines()) {
        let l = l.trim();
        let said = l.strip_prefix("E: ").or_else(|| l.strip_prefix("W: "));
        if let Some(s) = said
            && !v.iter().any(|x| x == s)
        {
            v.push(s.to_string());
        }
    }
    v
}

/// A parsed record of `apt-cache show`: its fields in order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stanza(pub Vec<(String, String)>);

impl Stanza {
    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// The records of a deb822 text (`Field: value`, continuation lines
/// indented, records separated by a blank line).
pub fn stanzas(text: &str) -> Vec<Stanza> {
    let mut out = Vec::new();
    let mut cur = Stanza::default();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.0.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        } else if line.starts_with([' ', '\t']) {
            if let Some((_, v)) = cur.0.last_mut() {
                v.push('\n');
                v.push_str(line.trim());
            }
        } else if let Some((k, v)) = line.split_once(':') {
            cur.0.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    if !cur.0.is_empty() {
        out.push(cur);
    }
    out
}

/// The names a `Depends:` field names, alternatives included, without
/// their versions.
pub fn depends(field: &str) -> Vec<String> {
    field
        .split([',', '|'])
        .filter_map(|d| d.split_whitespace().next())
        .map(|n| n.split(':').next().unwrap_or(n).to_string())
        .collect()
}

/// apt in a state directory of its own.
pub struct Apt {
    tools: Tools,
    dir: PathBuf,
}

impl Apt {
    /// Writes the configuration and sources of `dist` into `dir` (made)
    /// and makes the directories apt needs.
    pub fn prepare(
        tools: &Tools,
        dir: &Path,
        dist: &Dist,
        archive: &Archive,
    ) -> anyhow::Result<Apt> {
        for d in [
            "etc/empty",
            "state",
            "lists/partial",
            "cache/archives/partial",
            "log",
        ] {
            std::fs::create_dir_all(dir.join(d))
                .with_context(|| dir.join(d).display().to_string())?;
        }
        let write = |name: &str, text: String| {
            let p = dir.join(name);
            std::fs::write(&p, text).with_context(|| p.display().to_string())
        };
        write("apt.conf", config(dir))?;
        write("etc/sources.list", sources(dist, archive))?;
        Ok(Apt {
            tools: tools.clone(),
            dir: dir.to_path_buf(),
        })
    }

    /// `program` with the private configuration, in the C locale.
    fn command(&self, program: &Path) -> Command {
        let mut c = Command::new(program);
        c.env("APT_CONFIG", self.dir.join("apt.conf"))
            .env("LC_ALL", "C")
            .env("LANGUAGE", "C");
        c
    }

    /// `apt-get update`: the suites' signed indices, every warning an
    /// error; with `stale_ok`, a Release past its Valid-Until date is
    /// read all the same (its signature still checked: how a snapshot of
    /// the archive is read).
    pub fn update(&self, stale_ok: bool) -> Result<(), UpdateFailed> {
        let mut c = self.command(&self.tools.apt_get);
        if stale_ok {
            c.args(["-o", "Acquire::Check-Valid-Until=false"]);
        }
        c.args(["-q", "--error-on=any", "update"]);
        let f = match run_bounded(&mut c, UPDATE_LIMIT) {
            Ok(f) => f,
            Err(e) => return Err(UpdateFailed::Unreachable(format!("apt-get: {e}"))),
        };
        if f.status.is_some_and(|s| s.success()) {
            return Ok(());
        }
        let said = complaints(&f);
        let text = if said.is_empty() {
            ended(&f)
        } else {
            said.join("; ")
        };
        if said.iter().any(|l| REFUSALS.iter().any(|r| l.contains(r))) {
            Err(UpdateFailed::Refused(text))
        } else {
            Err(UpdateFailed::Unreachable(text))
        }
    }

    /// The candidate record (`apt-cache show --no-all-versions`) of each
    /// of `names`, in order; a name the archive does not have is an
    /// error naming it.
    pub fn show(&self, names: &[&str]) -> anyhow::Result<Vec<Stanza>> {
        let mut c = self.command(&self.tools.apt_cache);
        c.args(["show", "--no-all-versions"]).args(names);
        let f = run_bounded(&mut c, QUERY_LIMIT).context("apt-cache")?;
        let found = stanzas(&f.stdout);
        let mut out = Vec::new();
        for n in names {
            match found.iter().find(|s| s.get("Package") == Some(n)) {
                Some(s) => out.push(s.clone()),
                None => bail!("the archive has no package {n}"),
            }
        }
        if !f.status.is_some_and(|s| s.success()) {
            bail!("apt-cache show {}: {}", names.join(" "), ended(&f));
        }
        Ok(out)
    }

    /// The suite (`bookworm-security`) that has `name` at `version`
    /// (`apt-cache madison`).
    pub fn suite_of(&self, name: &str, version: &str) -> anyhow::Result<String> {
        let mut c = self.command(&self.tools.apt_cache);
        c.args(["madison", name]);
        let f = run_bounded(&mut c, QUERY_LIMIT).context("apt-cache")?;
        madison_suite(&f.stdout, name, version)
            .with_context(|| format!("apt-cache madison {name}: no suite has version {version}"))
    }

    /// `apt-get download NAME=VERSION…` into `into`: apt checks each
    /// `.deb` against the SHA-256 the signed index lists.
    pub fn download(&self, into: &Path, debs: &[(String, String)]) -> anyhow::Result<()> {
        let mut c = self.command(&self.tools.apt_get);
        c.current_dir(into).args(["-q", "download"]);
        c.args(debs.iter().map(|(n, v)| format!("{n}={v}")));
        let f = run_bounded(&mut c, DOWNLOAD_LIMIT).context("apt-get download")?;
        if f.status.is_some_and(|s| s.success()) {
            return Ok(());
        }
        let said = complaints(&f);
        bail!(
            "apt-get download: {}",
            if said.is_empty() {
                ended(&f)
            } else {
                said.join("; ")
            }
        )
    }
}

/// How a program ended, when it did not say why: its status, or that it
/// was stopped.
pub fn ended(f: &Finished) -> String {
    let tail: Vec<&str> = f.stderr.lines().rev().take(3).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    match f.status {
        Some(s) => format!("{s}: {}", tail.join(" / ")),
        None if f.timed_out => "took too long and was stopped".into(),
        None => "interrupted".into(),
    }
}

/// The suite of `name` at `version` in `apt-cache madison`'s output
/// (`pkg | 6.1.192-3 | http://… bookworm-security/main amd64 Packages`).
pub fn madison_suite(text: &str, name: &str, version: &str) -> Option<String> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split('|').map(str::trim).collect();
        if f.len() < 3 || f[0] != name || f[1] != version {
            return None;
        }
        let dist = f[2].split_whitespace().nth(1)?;
        Some(dist.split('/').next().unwrap_or(dist).to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_expired_release_with_good_signatures_is_read_again() {
        let expired = "Release file for http://deb.debian.org/debian/dists/sid/InRelease is expired (invalid since 28d 20h). Updates for this repository will not be applied.";
        assert!(only_expired(expired));
        // apt's note about its sandbox is no refusal.
        assert!(only_expired(&format!(
            "Download is performed unsandboxed as root; {expired}"
        )));
        for bad in [
            "The following signatures couldn't be verified because the public key is not available: NO_PUBKEY 1234",
            "Failed to fetch …/InRelease  Hash Sum mismatch",
        ] {
            assert!(!only_expired(bad), "{bad}");
            assert!(!only_expired(&format!("{expired}; {bad}")), "{bad}");
        }
        assert!(!only_expired("Could not resolve 'deb.debian.org'"));
    }

    #[test]
    fn records_and_their_dependencies_are_read() {
        let text = "Package: linux-image-7.2.13+deb14-cloud-amd64\nVersion: 7.2.13-1\n\
                    Depends: dracut | initramfs-tools (>= 0.120+deb8u2) | linux-initramfs-tool, linux-base-7.2.13+deb14-cloud-amd64 (= 7.2.13-1),\n linux-binary-7.2.13+deb14-cloud-amd64 (= 7.2.13-1)\n\
                    Description: Linux 7.2\n  more\n\nPackage: b\nVersion: 1\n";
        let s = stanzas(text);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].get("version"), Some("7.2.13-1"));
        assert_eq!(s[1].get("Package"), Some("b"));
        let d = depends(s[0].get("Depends").unwrap());
        assert_eq!(
            d,
            [
                "dracut",
                "initramfs-tools",
                "linux-initramfs-tool",
                "linux-base-7.2.13+deb14-cloud-amd64",
                "linux-binary-7.2.13+deb14-cloud-amd64"
            ]
        );
    }

    #[test]
    fn the_suite_comes_from_madison() {
        let m = "linux-image-cloud-amd64 |  6.1.192-3 | http://security.debian.org/debian-security bookworm-security/main amd64 Packages\n\
                 linux-image-cloud-amd64 |  6.1.176-1 | http://deb.debian.org/debian bookworm/main amd64 Packages\n";
        assert_eq!(
            madison_suite(m, "linux-image-cloud-amd64", "6.1.176-1").as_deref(),
            Some("bookworm")
        );
        assert_eq!(
            madison_suite(m, "linux-image-cloud-amd64", "6.1.192-3").as_deref(),
            Some("bookworm-security")
        );
        assert_eq!(madison_suite(m, "linux-image-cloud-amd64", "6.1.1-1"), None);
    }

    #[test]
    fn a_mirror_is_a_local_directory_or_loopback() {
        for ok in [
            "file:/srv/debian",
            "http://127.0.0.1:8080/debian",
            "http://[::1]:9/d",
            "http://localhost/d",
        ] {
            assert_eq!(check_mirror(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            (
                "http://deb.example.org/debian",
                "only file:/DIR or http:// on loopback",
            ),
            ("https://127.0.0.1/d", "only file:/DIR"),
            ("file:srv", "absolute path"),
            ("file:/a b", "one word"),
            ("http://10.0.0.1/d", "loopback"),
        ] {
            let e = check_mirror(bad).unwrap_err();
            assert!(e.contains(says) && e.contains(ARCHIVE_ENV), "{bad}: {e}");
        }
    }

    #[test]
    fn every_source_is_signed_by_the_keyring() {
        let a = Archive {
            mirror: None,
            keyring: PathBuf::from(KEYRING),
        };
        let bookworm = super::super::DISTS
            .iter()
            .find(|d| d.name == "bookworm")
            .unwrap();
        let s = sources(bookworm, &a);
        assert_eq!(s.lines().count(), 3);
        assert!(
            s.lines()
                .all(|l| l.starts_with(&format!("deb [arch=amd64 signed-by={KEYRING}] http://")))
        );
        assert!(s.contains("http://security.debian.org/debian-security bookworm-security main"));
        assert!(s.contains("http://deb.debian.org/debian bookworm main"));
        let c = config(Path::new("/c/apt/bookworm"));
        assert!(c.contains("Dir::Etc::main \"/dev/null\";"));
        assert!(c.contains("Dir::State::Lists \"/c/apt/bookworm/lists\";"));
        assert!(!c.contains("AllowUnauthenticated") && !c.contains("Insecure"));
    }
}
