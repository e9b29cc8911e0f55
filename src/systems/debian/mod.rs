//! `kernel:debian:VERSION`: a Linux kernel named by its version, fetched
//! from Debian's archive into a cache and booted as `kernel:PATH` boots.
//!
//! VERSION is a line — `5.10` (bullseye), `6.1` (bookworm), `6.12`
//! (trixie), `7.2` (sid) — or `sid` (whatever sid has), or a package's
//! full name (`linux-image-6.1.0-57-cloud-amd64`). A line takes the
//! newest `cloud-amd64` kernel of its release, security and point updates
//! included: what `linux-image-cloud-amd64` depends on there. Debian's
//! own tools do the work under a private configuration ([`apt`]): `apt-get
//! update` checks the archive's signatures against Debian's keyrings,
//! `apt-get download` the packages' checksums, `dpkg-deb -x` unpacks, and
//! `depmod` makes the module tree's `modules.dep` (packages carry none).
//! What was fetched stays in a cache ([`cache`]) with the exact package
//! names and versions, which a guest's result file records.
//!
//! Debian's tools run on Linux only; elsewhere, or where one is missing,
//! the error names what is missing.

pub mod apt;
pub mod cache;
pub mod fetch;
pub mod unpack;

use std::fmt;

/// A Debian release and the suites its kernels come from.
#[derive(Debug, PartialEq, Eq)]
pub struct Dist {
    /// Its code name (`bookworm`).
    pub name: &'static str,
    /// The kernel line it ships (`6.1`).
    pub line: &'static str,
    /// Its suites, each with the archive that holds it (`debian` or
    /// `debian-security`), the point release first.
    pub suites: &'static [(&'static str, &'static str)],
}

/// The releases whose kernels `kernel:debian:` fetches.
pub const DISTS: &[Dist] = &[
    Dist {
        name: "bullseye",
        line: "5.10",
        suites: &[
            ("debian", "bullseye"),
            ("debian", "bullseye-updates"),
            ("debian-security", "bullseye-security"),
        ],
    },
    Dist {
        name: "bookworm",
        line: "6.1",
        suites: &[
            ("debian", "bookworm"),
            ("debian", "bookworm-updates"),
            ("debian-security", "bookworm-security"),
        ],
    },
    Dist {
        name: "trixie",
        line: "6.12",
        suites: &[
            ("debian", "trixie"),
            ("debian", "trixie-updates"),
            ("debian-security", "trixie-security"),
        ],
    },
    Dist {
        name: "sid",
        line: "7.2",
        suites: &[("debian", "sid")],
    },
];

/// Which build of a line (Debian's kernel flavours for amd64): `cloud`
/// (the default: small, virtio built for guests), `generic` (Debian's
/// `amd64`: every driver and filesystem as a module — JFS, for one) or
/// `rt` (PREEMPT_RT).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flavour {
    /// `cloud-amd64`.
    #[default]
    Cloud,
    /// `amd64`.
    Generic,
    /// `rt-amd64`.
    Rt,
}

impl Flavour {
    /// Debian's name of it, the end of its packages' names (`cloud-amd64`).
    pub fn debian(self) -> &'static str {
        match self {
            Flavour::Cloud => "cloud-amd64",
            Flavour::Generic => "amd64",
            Flavour::Rt => "rt-amd64",
        }
    }

    /// Its word in `flavour=` (`cloud`, `generic`, `rt`).
    pub fn word(self) -> &'static str {
        match self {
            Flavour::Cloud => "cloud",
            Flavour::Generic => "generic",
            Flavour::Rt => "rt",
        }
    }

    /// The package every release's newest kernel of this flavour hangs
    /// from (`linux-image-cloud-amd64`).
    pub fn meta(self) -> String {
        format!("linux-image-{}", self.debian())
    }

    /// The flavour a kernel package's name ends with
    /// (`linux-image-6.1.0-57-amd64-unsigned`: generic).
    pub fn of_package(name: &str) -> Option<Flavour> {
        let name = name.strip_suffix("-unsigned").unwrap_or(name);
        [Flavour::Cloud, Flavour::Rt, Flavour::Generic]
            .into_iter()
            .find(|f| name.ends_with(&format!("-{}", f.debian())))
    }
}

impl std::str::FromStr for Flavour {
    type Err = String;

    fn from_str(s: &str) -> Result<Flavour, String> {
        match s {
            "cloud" | "cloud-amd64" => Ok(Flavour::Cloud),
            "generic" | "amd64" => Ok(Flavour::Generic),
            "rt" | "rt-amd64" => Ok(Flavour::Rt),
            _ => Err(format!(
                "`{s}` is not a Debian kernel flavour: cloud (the default), generic, rt"
            )),
        }
    }
}

/// What `kernel:debian:VERSION` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// VERSION as given.
    pub text: String,
    /// The release whose archive holds it.
    pub dist: &'static Dist,
    /// Which kernel of it.
    pub want: Want,
    /// Which build: for a package, the one its name ends with.
    pub flavour: Flavour,
}

impl Asked {
    /// The same kernel of another flavour (`flavour=`); refused for a
    /// package, whose name says its own.
    pub fn with_flavour(self, flavour: Flavour) -> Result<Asked, String> {
        match &self.want {
            Want::Package(p) if self.flavour != flavour => Err(format!(
                "`{p}` is a {} kernel: flavour={} is for a line or sid, a package's name says its own",
                self.flavour.word(),
                flavour.word()
            )),
            _ => Ok(Asked { flavour, ..self }),
        }
    }
}

/// Which kernel of a release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// The newest of this line (`6.1`): the release's must be of it.
    Line(&'static str),
    /// The newest, whatever its line (`sid`).
    Newest,
    /// This package.
    Package(String),
}

impl fmt::Display for Asked {
    /// VERSION, with its flavour where that is not the default nor in a
    /// package's name (`6.1,flavour=generic`, as a system spec says it).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)?;
        match self.want {
            Want::Package(_) => Ok(()),
            _ if self.flavour == Flavour::Cloud => Ok(()),
            _ => write!(f, ",flavour={}", self.flavour.word()),
        }
    }
}

/// The lines and words VERSION may be, for messages.
pub fn choices() -> String {
    let lines: Vec<&str> = DISTS.iter().map(|d| d.line).collect();
    format!(
        "{}, sid, or a package's name (linux-image-…)",
        lines.join(", ")
    )
}

impl std::str::FromStr for Asked {
    type Err = String;

    /// VERSION, or `VERSION,flavour=F` (what [`Asked`]'s Display writes).
    fn from_str(s: &str) -> Result<Asked, String> {
        if let Some((v, f)) = s.split_once(",flavour=") {
            let flavour: Flavour = f.parse()?;
            return v.parse::<Asked>()?.with_flavour(flavour);
        }
        let asked = |dist, want| Asked {
            text: s.to_string(),
            dist,
            want,
            flavour: Flavour::of_package(s).unwrap_or_default(),
        };
        if s == "sid" {
            return Ok(asked(sid(), Want::Newest));
        }
        if let Some(d) = DISTS.iter().find(|d| d.line == s) {
            return Ok(asked(d, Want::Line(d.line)));
        }
        if s.starts_with("linux-image-") {
            check_package_name(s)?;
            let dist = dist_of_package(s).ok_or_else(|| {
                format!(
                    "`{s}`: which Debian release has it is not told by its name (a `+debNN` or a version of {})",
                    DISTS.iter().map(|d| d.line).collect::<Vec<_>>().join(", ")
                )
            })?;
            return Ok(asked(dist, Want::Package(s.to_string())));
        }
        Err(format!(
            "`{s}` is not a Debian kernel version: {}",
            choices()
        ))
    }
}

/// sid's entry in [`DISTS`].
fn sid() -> &'static Dist {
    DISTS.iter().find(|d| d.name == "sid").unwrap_or(&DISTS[0])
}

/// A package name: lowercase letters, digits, `.`, `+`, `-`, `~`, at most
/// 100 (Debian's rules, shorter; it names a directory of the cache).
fn check_package_name(s: &str) -> Result<(), String> {
    if s.len() > 100
        || !s
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || ".+-~".contains(c))
    {
        return Err(format!(
            "`{s}` is not a Debian package name (lowercase letters, digits, `.`, `+`, `-`, `~`)"
        ));
    }
    if s.ends_with("-dbg") {
        return Err(format!(
            "`{s}`: a debug symbols package holds no bootable kernel"
        ));
    }
    Ok(())
}

/// The release whose archive has package `name`: told by a `debNN` in
/// it (`6.12.118+deb13`, `6.1.0-0.deb11.52`), else by the line its
/// version begins with (`linux-image-6.1.0-57-…`).
fn dist_of_package(name: &str) -> Option<&'static Dist> {
    const NUMBERED: [(&str, &str); 4] = [
        ("deb11", "bullseye"),
        ("deb12", "bookworm"),
        ("deb13", "trixie"),
        ("deb14", "sid"),
    ];
    if let Some((_, d)) = NUMBERED.iter().find(|(n, _)| name.contains(n)) {
        return DISTS.iter().find(|x| x.name == *d);
    }
    let version = name.strip_prefix("linux-image-")?;
    DISTS
        .iter()
        .find(|d| version.starts_with(&format!("{}.", d.line)))
}

/// The line (`6.1`) of a Debian package version (`6.1.192-3`,
/// `6.12.118-1~deb12u1`): its first two numbers.
pub fn line_of(version: &str) -> Option<String> {
    let mut parts = version.split(|c: char| !c.is_ascii_digit());
    let (a, b) = (parts.next()?, parts.next()?);
    let sep = version.as_bytes().get(a.len()).copied();
    (!a.is_empty() && !b.is_empty() && sep == Some(b'.')).then(|| format!("{a}.{b}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Asked, String> {
        s.parse()
    }

    #[test]
    fn a_version_is_a_line_sid_or_a_package() {
        for (s, dist, want) in [
            ("5.10", "bullseye", Want::Line("5.10")),
            ("6.1", "bookworm", Want::Line("6.1")),
            ("6.12", "trixie", Want::Line("6.12")),
            ("7.2", "sid", Want::Line("7.2")),
            ("sid", "sid", Want::Newest),
        ] {
            let a = p(s).unwrap();
            assert_eq!((a.dist.name, &a.want), (dist, &want), "{s}");
            assert_eq!(a.to_string(), s);
        }
        for (s, dist) in [
            ("linux-image-6.1.0-57-cloud-amd64", "bookworm"),
            ("linux-image-5.10.0-46-cloud-amd64", "bullseye"),
            ("linux-image-6.12.118+deb13-cloud-amd64", "trixie"),
            ("linux-image-6.12.118+deb12-cloud-amd64", "bookworm"),
            ("linux-image-6.1.0-0.deb11.52-cloud-amd64", "bullseye"),
            ("linux-image-7.2.13+deb14-cloud-amd64", "sid"),
            ("linux-image-6.1.0-57-amd64-unsigned", "bookworm"),
        ] {
            let a = p(s).unwrap();
            assert_eq!(a.dist.name, dist, "{s}");
            assert_eq!(a.want, Want::Package(s.into()));
        }
    }

    #[test]
    fn a_bad_version_is_refused_by_name() {
        for (s, says) in [
            (
                "6",
                "`6` is not a Debian kernel version: 5.10, 6.1, 6.12, 7.2, sid",
            ),
            ("6.2", "`6.2` is not a Debian kernel version"),
            ("", "`` is not a Debian kernel version"),
            ("trixie", "`trixie` is not a Debian kernel version"),
            ("linux-image-4.19.0-27-amd64", "which Debian release has it"),
            ("linux-image-6.1.0-57-AMD64", "not a Debian package name"),
            ("linux-image-6.1/../x", "not a Debian package name"),
            ("linux-image-6.1.0-57-cloud-amd64-dbg", "debug symbols"),
        ] {
            let e = p(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    #[test]
    fn a_flavour_is_asked_for_a_line_and_told_by_a_package() {
        let g = p("6.1,flavour=generic").unwrap();
        assert_eq!(
            (g.want.clone(), g.flavour),
            (Want::Line("6.1"), Flavour::Generic)
        );
        assert_eq!(g.flavour.meta(), "linux-image-amd64");
        assert_eq!(g.to_string(), "6.1,flavour=generic");
        assert_eq!(p(&g.to_string()).unwrap(), g);
        assert_eq!(
            p("sid,flavour=rt").unwrap().flavour.meta(),
            "linux-image-rt-amd64"
        );
        assert_eq!(p("6.1").unwrap().flavour.meta(), "linux-image-cloud-amd64");
        assert_eq!(p("6.1,flavour=cloud").unwrap().to_string(), "6.1");
        for (name, f) in [
            ("linux-image-6.1.0-57-amd64-unsigned", Flavour::Generic),
            ("linux-image-6.1.0-57-amd64", Flavour::Generic),
            ("linux-image-6.1.0-57-cloud-amd64", Flavour::Cloud),
            ("linux-image-6.12.118+deb13-rt-amd64", Flavour::Rt),
        ] {
            assert_eq!(Flavour::of_package(name), Some(f), "{name}");
            assert_eq!(p(name).unwrap().flavour, f, "{name}");
        }
        let e = p("linux-image-6.1.0-57-cloud-amd64,flavour=generic").unwrap_err();
        assert!(e.contains("is a cloud kernel"), "{e}");
        let e = p("6.1,flavour=arm64").unwrap_err();
        assert!(e.contains("`arm64` is not a Debian kernel flavour"), "{e}");
    }

    #[test]
    fn the_line_is_the_versions_first_two_numbers() {
        assert_eq!(line_of("6.1.192-3").as_deref(), Some("6.1"));
        assert_eq!(line_of("6.12.118-1~deb12u1").as_deref(), Some("6.12"));
        assert_eq!(line_of("5.10.262-1").as_deref(), Some("5.10"));
        assert_eq!(line_of("7.2.13-1").as_deref(), Some("7.2"));
        assert_eq!(line_of("7-1"), None);
        assert_eq!(line_of("1:6.1.2-1"), None);
        assert_eq!(line_of(""), None);
    }
}
