//! Tuning profiles: named sets of sysctls, resource limits, settings and
//! mount options that a run is made under (`run --profile default,NAME`),
//! with what needs a reboot or a kernel build recorded beside them.
//!
//! A profile is a TOML file in the format [`FORMAT`] (documented in
//! `docs/profiles.md`); the built-in ones ([`BUILT_IN`]) are the tunings of
//! the source documents and two Linux profiles in the spirit of tuned's.
//! Settings are per OS (`[linux.sysctl]`, `[freebsd.sysctl]`, …); `limits`
//! at the top apply everywhere. [`apply`] changes the system and puts it
//! back, with a journal on disk for a run killed on the way.

pub mod apply;
pub mod ranges;
pub(crate) mod remount;

use crate::sys::{Rlimit, Setting};
use serde::Deserialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The format line every profile file starts with.
pub const FORMAT: &str = "scalebench-profile/1";

/// The built-in profiles: name and TOML text.
pub const BUILT_IN: [(&str, &str); 6] = [
    ("default", include_str!("../../profiles/default.toml")),
    (
        "rothman-freebsd",
        include_str!("../../profiles/rothman-freebsd.toml"),
    ),
    (
        "dragonfly-linux",
        include_str!("../../profiles/dragonfly-linux.toml"),
    ),
    (
        "dragonfly-bsd",
        include_str!("../../profiles/dragonfly-bsd.toml"),
    ),
    ("throughput", include_str!("../../profiles/throughput.toml")),
    ("latency", include_str!("../../profiles/latency.toml")),
];

/// An operating system a profile can have settings for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Os {
    /// Linux.
    Linux,
    /// FreeBSD.
    FreeBsd,
    /// NetBSD.
    NetBsd,
    /// OpenBSD.
    OpenBsd,
    /// DragonFly BSD.
    DragonFly,
    /// macOS.
    MacOs,
}

impl Os {
    /// Every OS, in the order shown.
    pub const ALL: [Os; 6] = [
        Os::Linux,
        Os::FreeBsd,
        Os::NetBsd,
        Os::OpenBsd,
        Os::DragonFly,
        Os::MacOs,
    ];

    /// Its section name in a profile file (`std::env::consts::OS`).
    pub fn key(self) -> &'static str {
        match self {
            Os::Linux => "linux",
            Os::FreeBsd => "freebsd",
            Os::NetBsd => "netbsd",
            Os::OpenBsd => "openbsd",
            Os::DragonFly => "dragonfly",
            Os::MacOs => "macos",
        }
    }

    /// The OS this build runs on, if a profile can name it.
    pub fn this() -> Option<Os> {
        Os::ALL
            .into_iter()
            .find(|o| o.key() == std::env::consts::OS)
    }
}

/// What a profile asks of a numeric or textual value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// Exactly this (whitespace between words does not matter).
    Exact(String),
    /// At least this: raised when lower, left alone when higher (`">=N"`).
    AtLeast(u64),
    /// At most this: lowered when higher (`"<=N"`).
    AtMost(u64),
}

impl Wanted {
    fn parse(v: &toml::Value) -> Result<Wanted, String> {
        let s = match v {
            toml::Value::Integer(i) => return Ok(Wanted::Exact(i.to_string())),
            toml::Value::Boolean(b) => return Ok(Wanted::Exact(u8::from(*b).to_string())),
            toml::Value::String(s) => s.trim(),
            other => {
                return Err(format!(
                    "`{other}`: a value is a whole number, true or false, or a string"
                ));
            }
        };
        let bound = |rest: &str| {
            rest.trim()
                .parse::<u64>()
                .map_err(|_| format!("`{s}`: a bound must be a whole number (\">=65535\")"))
        };
        if let Some(rest) = s.strip_prefix(">=") {
            return Ok(Wanted::AtLeast(bound(rest)?));
        }
        if let Some(rest) = s.strip_prefix("<=") {
            return Ok(Wanted::AtMost(bound(rest)?));
        }
        if s.is_empty() || s.contains(['\n', '\r']) {
            return Err(format!("`{s}` is not a value"));
        }
        Ok(Wanted::Exact(words(s)))
    }

    /// Whether `current` already is what is wanted; `None` when a bound
    /// is asked of a value that is not a number.
    pub fn met_by(&self, current: &str) -> Option<bool> {
        match self {
            Wanted::Exact(v) => Some(words(current) == *v),
            Wanted::AtLeast(b) => Some(current.trim().parse::<u64>().ok()? >= *b),
            Wanted::AtMost(b) => Some(current.trim().parse::<u64>().ok()? <= *b),
        }
    }

    /// The value to write when `met_by` is false.
    pub fn target(&self) -> String {
        match self {
            Wanted::Exact(v) => v.clone(),
            Wanted::AtLeast(b) | Wanted::AtMost(b) => b.to_string(),
        }
    }
}

impl fmt::Display for Wanted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wanted::Exact(v) => write!(f, "{v}"),
            Wanted::AtLeast(b) => write!(f, ">={b}"),
            Wanted::AtMost(b) => write!(f, "<={b}"),
        }
    }
}

/// Words of `s` joined by one space (`1024\t65535` → `1024 65535`).
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One thing a profile asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A sysctl by its OS-specific name.
    Sysctl {
        /// `net.core.somaxconn`, `kern.ipc.somaxconn`, …
        name: String,
        /// Its value.
        wanted: Wanted,
    },
    /// A resource limit of the run (soft, raising the hard one when
    /// needed).
    Limit {
        /// Which.
        limit: Rlimit,
        /// Its value.
        wanted: Wanted,
    },
    /// A setting that is not a sysctl (CPU governor, transparent huge
    /// pages).
    Setting {
        /// Which.
        setting: Setting,
        /// Its value.
        wanted: String,
    },
    /// Mount options for the filesystems the fs workloads make (`--mkfs`).
    Mount {
        /// `noatime`, `async`, …
        options: Vec<String>,
    },
    /// tunefs(8) arguments for the BSDs' filesystems (soft updates:
    /// `-n enable`): recorded, applied by hand in single-user mode.
    Tunefs {
        /// The arguments.
        args: String,
    },
    /// A change that needs a reboot or a kernel build: recorded, never
    /// applied; compared with the running value where a sysctl shows it.
    Boot {
        /// What to change (`MAXUSERS 512`, `kern.ipc.nmbclusters=60000`).
        what: String,
        /// Where (`kernel configuration`, `/boot/loader.conf`).
        how: String,
        /// The sysctl that shows the running value, if any.
        sysctl: Option<String>,
        /// The value asked for, to compare with it.
        value: Option<Wanted>,
    },
    /// Something the source did that scalebench does not do (firewall
    /// off, a network card's polling): recorded.
    Note(String),
}

impl What {
    /// The kind as recorded (`sysctl`, `limit`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            What::Sysctl { .. } => "sysctl",
            What::Limit { .. } => "limit",
            What::Setting { .. } => "setting",
            What::Mount { .. } => "mount",
            What::Tunefs { .. } => "tunefs",
            What::Boot { .. } => "boot",
            What::Note(_) => "note",
        }
    }
}

/// A setting and the OS it is for (`None`: every OS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileItem {
    /// The OS, or every OS.
    pub os: Option<Os>,
    /// What it asks for.
    pub what: What,
}

/// A tuning profile, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TuningProfile {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where its settings come from.
    pub source: Option<String>,
    /// `built-in`, or the file it was read from.
    pub origin: String,
    /// Notes for every OS.
    pub notes: Vec<String>,
    /// Its settings, in file order per OS (every-OS limits first).
    pub items: Vec<ProfileItem>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    format: String,
    name: String,
    description: String,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    limits: toml::Table,
    #[serde(default)]
    linux: Option<RawSection>,
    #[serde(default)]
    freebsd: Option<RawSection>,
    #[serde(default)]
    netbsd: Option<RawSection>,
    #[serde(default)]
    openbsd: Option<RawSection>,
    #[serde(default)]
    dragonfly: Option<RawSection>,
    #[serde(default)]
    macos: Option<RawSection>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSection {
    #[serde(default)]
    sysctl: toml::Table,
    #[serde(default)]
    limits: toml::Table,
    #[serde(default)]
    settings: toml::Table,
    #[serde(default)]
    mount_options: Vec<String>,
    #[serde(default)]
    tunefs: Vec<String>,
    #[serde(default)]
    boot: Vec<RawBoot>,
    #[serde(default)]
    notes: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoot {
    what: String,
    how: String,
    #[serde(default)]
    sysctl: Option<String>,
    #[serde(default)]
    value: Option<toml::Value>,
}

/// The limit a profile names (`nofile`, `nproc`, `as`, `stack`, or the C
/// name).
fn limit_named(name: &str) -> Result<Rlimit, String> {
    let n = name.to_ascii_lowercase();
    let n = n.strip_prefix("rlimit_").unwrap_or(&n);
    Ok(match n {
        "nofile" => Rlimit::Files,
        "nproc" => Rlimit::Processes,
        "as" => Rlimit::AddressSpace,
        "stack" => Rlimit::Stack,
        _ => return Err(format!("unknown limit `{name}` (nofile, nproc, as, stack)")),
    })
}

fn limits(os: Option<Os>, raw: &toml::Table, at: &str) -> Result<Vec<ProfileItem>, String> {
    raw.iter()
        .map(|(k, v)| {
            let limit = limit_named(k).map_err(|e| format!("{at}limits: {e}"))?;
            let wanted = Wanted::parse(v).map_err(|e| format!("{at}limits.{k}: {e}"))?;
            if let Wanted::Exact(x) = &wanted
                && x != "unlimited"
                && x.parse::<u64>().is_err()
            {
                return Err(format!(
                    "{at}limits.{k}: `{x}` is not a number or \"unlimited\""
                ));
            }
            // A run needs descriptors and processes of its own.
            let least = if limit == Rlimit::Files { 64 } else { 1 };
            let most = match &wanted {
                Wanted::Exact(x) => x.parse::<u64>().ok(),
                Wanted::AtMost(b) => Some(*b),
                Wanted::AtLeast(_) => None,
            };
            if most.is_some_and(|m| m < least) {
                return Err(format!(
                    "{at}limits.{k} = {wanted}: too few for the run itself (it needs at least {least})"
                ));
            }
            Ok(ProfileItem {
                os,
                what: What::Limit { limit, wanted },
            })
        })
        .collect()
}

fn section(os: Os, raw: RawSection) -> Result<Vec<ProfileItem>, String> {
    let at = format!("{}.", os.key());
    let mut items = Vec::new();
    let some = Some(os);
    for (name, v) in &raw.sysctl {
        ranges::check_name(name).map_err(|e| format!("{at}sysctl: {e}"))?;
        let wanted = Wanted::parse(v).map_err(|e| format!("{at}sysctl.\"{name}\": {e}"))?;
        ranges::check_value(os, name, &wanted)
            .map_err(|e| format!("{at}sysctl.\"{name}\" = {wanted}: {e}"))?;
        items.push(ProfileItem {
            os: some,
            what: What::Sysctl {
                name: name.clone(),
                wanted,
            },
        });
    }
    items.extend(limits(some, &raw.limits, &at)?);
    for (name, v) in &raw.settings {
        let setting = Setting::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| {
                format!(
                    "{at}settings: unknown setting `{name}` (cpu_governor, transparent_hugepages)"
                )
            })?;
        let wanted = match Wanted::parse(v).map_err(|e| format!("{at}settings.{name}: {e}"))? {
            Wanted::Exact(w) => w,
            other => {
                return Err(format!(
                    "{at}settings.{name}: `{other}`: give the value itself"
                ));
            }
        };
        items.push(ProfileItem {
            os: some,
            what: What::Setting { setting, wanted },
        });
    }
    if !raw.mount_options.is_empty() {
        if let Some(o) = raw
            .mount_options
            .iter()
            .find(|o| o.is_empty() || o.contains([',', ' ']))
        {
            return Err(format!(
                "{at}mount_options: `{o}`: one option per string, no commas or spaces"
            ));
        }
        items.push(ProfileItem {
            os: some,
            what: What::Mount {
                options: raw.mount_options,
            },
        });
    }
    for args in raw.tunefs {
        items.push(ProfileItem {
            os: some,
            what: What::Tunefs { args },
        });
    }
    for b in raw.boot {
        let value = b
            .value
            .as_ref()
            .map(Wanted::parse)
            .transpose()
            .map_err(|e| format!("{at}boot `{}`: {e}", b.what))?;
        if let Some(name) = &b.sysctl {
            ranges::check_name(name).map_err(|e| format!("{at}boot `{}`: {e}", b.what))?;
            if let Some(v) = &value {
                ranges::check_value(os, name, v)
                    .map_err(|e| format!("{at}boot `{}`: {name} = {v}: {e}", b.what))?;
            }
        }
        items.push(ProfileItem {
            os: some,
            what: What::Boot {
                what: b.what,
                how: b.how,
                sysctl: b.sysctl,
                value,
            },
        });
    }
    items.extend(raw.notes.into_iter().map(|n| ProfileItem {
        os: some,
        what: What::Note(n),
    }));
    Ok(items)
}

/// Why a profile cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// Its file cannot be read.
    #[error("cannot read the profile file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// Its text is not a valid profile.
    #[error("profile {origin}: {why}")]
    Invalid {
        /// The file, or `built-in`.
        origin: String,
        /// What is wrong, naming the key.
        why: String,
    },
    /// No built-in profile has the name.
    #[error(
        "unknown profile `{name}`{near} (built-in: {built_in}; or the path of a .toml profile file)"
    )]
    Unknown {
        /// The name given.
        name: String,
        /// `: did you mean …?`, or nothing.
        near: String,
        /// The built-in profiles' names.
        built_in: String,
    },
}

impl ProfileError {
    /// Whether the name asked for is no profile at all (a usage error,
    /// exit status 2), rather than a file that cannot be read or used.
    pub fn is_usage(&self) -> bool {
        matches!(self, ProfileError::Unknown { .. })
    }
}

impl ProfileError {
    /// What is wrong, for a message that names the profile already.
    pub fn why(&self) -> String {
        match self {
            ProfileError::Read { source, .. } => {
                format!(
                    "cannot read it: {}",
                    crate::sys::errno_words(&source.to_string())
                )
            }
            ProfileError::Invalid { why, .. } => why.clone(),
            ProfileError::Unknown { .. } => self.to_string(),
        }
    }
}

impl TuningProfile {
    /// Reads a profile from TOML text; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<TuningProfile, ProfileError> {
        let err = |why: String| ProfileError::Invalid {
            origin: origin.to_string(),
            why,
        };
        let raw: RawProfile = toml::from_str(text).map_err(|e| err(e.to_string()))?;
        if raw.format != FORMAT {
            return Err(err(format!(
                "format `{}` is not one this scalebench reads ({FORMAT})",
                raw.format
            )));
        }
        if raw.name.is_empty()
            || !raw
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(err(format!(
                "name `{}`: use letters, digits, - and _ only",
                raw.name
            )));
        }
        let mut items = limits(None, &raw.limits, "").map_err(err)?;
        let sections = [
            (Os::Linux, raw.linux),
            (Os::FreeBsd, raw.freebsd),
            (Os::NetBsd, raw.netbsd),
            (Os::OpenBsd, raw.openbsd),
            (Os::DragonFly, raw.dragonfly),
            (Os::MacOs, raw.macos),
        ];
        for (os, s) in sections {
            if let Some(s) = s {
                items.extend(section(os, s).map_err(err)?);
            }
        }
        Ok(TuningProfile {
            name: raw.name,
            description: raw.description,
            source: raw.source,
            origin: origin.to_string(),
            notes: raw.notes,
            items,
        })
    }

    /// A built-in profile by name, or a profile file by path (a name with
    /// a `/` or ending in `.toml`).
    pub fn find(name: &str) -> Result<TuningProfile, ProfileError> {
        if is_path(name) {
            let path = PathBuf::from(name);
            let text = match std::fs::read_to_string(&path) {
                Ok(t) => t,
                Err(source) => return Err(ProfileError::Read { path, source }),
            };
            return TuningProfile::parse(&text, &path.display().to_string());
        }
        match BUILT_IN.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => TuningProfile::parse(text, "built-in"),
            None => {
                let near = BUILT_IN
                    .iter()
                    .map(|(n, _)| (strsim::jaro_winkler(name, n), *n))
                    .filter(|(score, _)| *score >= 0.8)
                    .max_by(|a, b| a.0.total_cmp(&b.0))
                    .map_or(String::new(), |(_, n)| format!(": did you mean `{n}`?"));
                Err(ProfileError::Unknown {
                    name: name.to_string(),
                    near,
                    built_in: BUILT_IN.map(|(n, _)| n).join(", "),
                })
            }
        }
    }

    /// Every built-in profile.
    pub fn built_in() -> Vec<TuningProfile> {
        BUILT_IN
            .iter()
            .map(|(_, t)| TuningProfile::parse(t, "built-in").expect("built-in profiles parse"))
            .collect()
    }

    /// The settings that apply on `os` (its own and every-OS ones).
    pub fn for_os(&self, os: Option<Os>) -> impl Iterator<Item = &ProfileItem> {
        self.items
            .iter()
            .filter(move |i| i.os.is_none() || (os.is_some() && i.os == os))
    }

    /// The other systems this profile has settings for.
    pub fn elsewhere(&self, os: Option<Os>) -> Vec<Os> {
        let mut v: Vec<Os> = self
            .items
            .iter()
            .filter_map(|i| i.os)
            .filter(|o| Some(*o) != os)
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// The mount options it gives the filesystems the run makes, on `os`.
    pub fn mount_options(&self, os: Option<Os>) -> Option<String> {
        let v: Vec<&str> = self
            .for_os(os)
            .filter_map(|i| match &i.what {
                What::Mount { options } => Some(options.iter().map(String::as_str)),
                _ => None,
            })
            .flatten()
            .collect();
        (!v.is_empty()).then(|| v.join(","))
    }
}

/// Where a profile file is.
pub fn is_path(name: &str) -> bool {
    name.contains('/') || Path::new(name).extension().is_some_and(|e| e == "toml")
}

/// One line of a profile's settings, for `profile show` and the reports.
pub fn describe(what: &What) -> String {
    match what {
        What::Sysctl { name, wanted } => format!("sysctl {name} = {wanted}"),
        What::Limit { limit, wanted } => format!("limit {} = {wanted}", limit.name()),
        What::Setting { setting, wanted } => format!("setting {} = {wanted}", setting.name()),
        What::Mount { options } => format!("mount options {}", options.join(",")),
        What::Tunefs { args } => format!("tunefs {args} (single-user mode, by hand)"),
        What::Boot {
            what, how, value, ..
        } => match value {
            Some(v) if !what.contains(&v.to_string()) => format!("{what} = {v} ({how})"),
            _ => format!("{what} ({how})"),
        },
        What::Note(n) => format!("note: {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_profile_parses_and_is_named_as_listed() {
        for (name, text) in BUILT_IN {
            let p =
                TuningProfile::parse(text, "built-in").unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(p.name, name);
            assert!(!p.description.is_empty(), "{name}");
        }
        let d = TuningProfile::find("default").unwrap();
        assert!(d.items.is_empty(), "default touches nothing");
        // The seeds' tunings are where they belong.
        let r = TuningProfile::find("rothman-freebsd").unwrap();
        assert!(r.for_os(Some(Os::Linux)).next().is_none());
        assert_eq!(r.elsewhere(Some(Os::Linux)), vec![Os::FreeBsd]);
        assert!(r.for_os(Some(Os::FreeBsd)).any(|i| matches!(&i.what,
            What::Sysctl { name, wanted } if name == "net.inet.tcp.delayed_ack" && *wanted == Wanted::Exact("0".into()))));
        assert_eq!(r.mount_options(Some(Os::FreeBsd)).as_deref(), Some("async"));
        let l = TuningProfile::find("dragonfly-linux").unwrap();
        assert!(l.for_os(Some(Os::Linux)).any(|i| matches!(&i.what,
            What::Limit { limit: Rlimit::Files, wanted } if *wanted == Wanted::AtLeast(40960))));
    }

    #[test]
    fn values_exact_and_bounded() {
        let p = |s: &str| Wanted::parse(&toml::Value::String(s.into()));
        assert_eq!(p(">=65535").unwrap(), Wanted::AtLeast(65535));
        assert_eq!(p("<= 10").unwrap(), Wanted::AtMost(10));
        assert_eq!(
            p("1024\t 65535").unwrap(),
            Wanted::Exact("1024 65535".into())
        );
        assert!(p(">=lots").unwrap_err().contains("whole number"));
        assert_eq!(
            Wanted::parse(&toml::Value::Integer(7)).unwrap(),
            Wanted::Exact("7".into())
        );
        assert_eq!(
            Wanted::parse(&toml::Value::Boolean(true)).unwrap(),
            Wanted::Exact("1".into())
        );
        let w = Wanted::AtLeast(100);
        assert_eq!(w.met_by("128"), Some(true));
        assert_eq!(w.met_by("99"), Some(false));
        assert_eq!(w.met_by("x"), None);
        assert_eq!(Wanted::AtMost(100).met_by("99"), Some(true));
        assert_eq!(
            Wanted::Exact("1024 65535".into()).met_by("1024\t65535"),
            Some(true)
        );
        assert_eq!(w.target(), "100");
    }

    #[test]
    fn bad_profiles_are_refused_with_the_thing_at_fault() {
        let head = "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n";
        let bad = |body: &str, wants: &str| {
            let e = format!(
                "{:#}",
                TuningProfile::parse(&format!("{head}{body}"), "t.toml").unwrap_err()
            );
            assert!(e.contains(wants) && e.contains("t.toml"), "{e}");
        };
        bad("[linux.sysctl]\n\"../x\" = 1\n", "not a sysctl name");
        bad(
            "[linux.sysctl]\nswappiness = 1\n",
            "`swappiness` is not a sysctl name",
        );
        bad(
            "[linux.sysctl]\n\"vm.swappiness\" = 1000\n",
            "linux.sysctl.\"vm.swappiness\" = 1000: out of range: vm.swappiness takes 0 to 200",
        );
        bad(
            "[linux.sysctl]\n\"net.ipv4.ip_local_port_range\" = \"1024 70000\"\n",
            "ip_local_port_range\" = 1024 70000: out of range",
        );
        bad("[linux.sysctl]\n\"a.b\" = \">=x\"\n", "a.b");
        bad("[limits]\nnofiles = 5\n", "unknown limit `nofiles`");
        bad("[limits]\nnofile = \"many\"\n", "not a number");
        bad(
            "[limits]\nnofile = 0\n",
            "limits.nofile = 0: too few for the run itself (it needs at least 64)",
        );
        bad("[limits]\nnproc = \"<=0\"\n", "at least 1");
        bad(
            "[linux.settings]\ngovernor = \"performance\"\n",
            "unknown setting `governor`",
        );
        bad(
            "[linux]\nmount_options = [\"noatime,async\"]\n",
            "one option per string",
        );
        bad("[linux]\nsysctls = {}\n", "sysctls");
        bad("[hurd.sysctl]\n", "hurd");
        let e = TuningProfile::parse("format = \"x/9\"\nname = \"t\"\ndescription = \"d\"\n", "f")
            .unwrap_err()
            .to_string();
        assert!(e.contains("x/9") && e.contains(FORMAT), "{e}");
        let e = TuningProfile::find("nosuch").unwrap_err().to_string();
        assert!(
            e.contains("`nosuch`") && e.contains("dragonfly-linux"),
            "{e}"
        );
        let e = TuningProfile::find("/nonexistent/p.toml").unwrap_err();
        assert!(e.to_string().contains("/nonexistent/p.toml"), "{e}");
        assert_eq!(
            e.why(),
            "cannot read it: No such file or directory (ENOENT)"
        );
        let e = TuningProfile::parse("name = 1", "t.toml").unwrap_err();
        assert!(!e.why().contains("t.toml"), "{}", e.why());
    }

    #[test]
    fn every_os_limits_apply_everywhere_and_sections_only_to_their_os() {
        let text = "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n\
                    [limits]\nnofile = \">=1000\"\n[linux.sysctl]\n\"vm.swappiness\" = 10\n\
                    [freebsd.sysctl]\n\"kern.maxfiles\" = 65536\n";
        let p = TuningProfile::parse(text, "t").unwrap();
        let kinds = |os| {
            p.for_os(Some(os))
                .map(|i| describe(&i.what))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(Os::Linux),
            ["limit RLIMIT_NOFILE = >=1000", "sysctl vm.swappiness = 10"]
        );
        assert_eq!(
            kinds(Os::FreeBsd),
            [
                "limit RLIMIT_NOFILE = >=1000",
                "sysctl kern.maxfiles = 65536"
            ]
        );
        assert_eq!(kinds(Os::MacOs), ["limit RLIMIT_NOFILE = >=1000"]);
        assert_eq!(p.elsewhere(Some(Os::Linux)), [Os::FreeBsd]);
    }
}
