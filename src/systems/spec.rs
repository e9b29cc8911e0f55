//! `run --system NAME=SPEC`: which systems a plan runs on, side by side.
//!
//! ```text
//! NAME=local                                     this machine (the default system)
//! NAME=kernel:PATH[,initrd=P][,modules=DIR][,cpus=N][,memory=SIZE][,accel=A][,seed=N][,profile=P][,cmdline=TEXT]
//! NAME=kernel:debian:VERSION[,flavour=F][,cpus=N][,memory=SIZE][,accel=A][,seed=N][,profile=P][,cmdline=TEXT]
//! NAME=image:PATH,ssh=USER[,key=FILE][,bin=P][,cpus=N][,memory=SIZE][,accel=A][,profile=P]
//! NAME=ssh:[USER@]HOST[:PORT][,bin=P][,profile=P]
//! ```
//!
//! `profile=` names a tuning profile (built in, or a file here) that the
//! system applies to itself for the run and puts back after it, so that
//! one system tuned and one not alternate in one run.
//!
//! `cmdline=` takes the rest of the argument, commas included (a kernel
//! command line has its own: `console=ttyS0,115200`), so it comes last.
//! A kernel file whose path begins `debian:` is given as `./debian:…`.

use crate::hosts::ssh::Target;
use std::path::PathBuf;

/// The most vCPUs a guest may have.
pub const MAX_CPUS: u32 = 64;
/// A guest's memory when not given.
pub const DEFAULT_MEMORY: u64 = 2 << 30;
/// The least memory a guest may have: a kernel and scalebench need it.
pub const MIN_MEMORY: u64 = 256 << 20;

/// One `--system` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SystemSpec {
    /// The system's name: its result file and its column in the report.
    pub name: String,
    /// Where and how it runs.
    pub kind: Kind,
    /// A tuning profile it applies to itself (a built-in name or a file
    /// here); never for `local` (`run --profile` tunes this machine).
    pub profile: Option<String>,
}

/// How a system runs the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// This machine, in this process.
    Local,
    /// A Linux kernel booted in QEMU over this machine's root filesystem.
    Kernel(KernelSpec),
    /// A Linux kernel fetched from Debian's archive by version, then
    /// booted as [`Kind::Kernel`].
    Debian(DebianSpec),
    /// A disk image of any OS booted in QEMU, driven over ssh.
    Image(ImageSpec),
    /// Another machine over ssh.
    Ssh {
        /// Where to ssh to.
        target: Target,
        /// The scalebench binary there (else the one on its PATH).
        bin: Option<PathBuf>,
    },
}

/// What a guest gets: vCPUs, memory, and how QEMU runs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// Virtual CPUs (default: as many as this machine has, at most 2).
    pub cpus: Option<u32>,
    /// Memory in bytes.
    pub memory: u64,
    /// KVM or emulation (`accel=`; default: KVM if a probe guest boots).
    pub accel: AccelAsk,
}

/// `accel=`: how a guest is run, as asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AccelAsk {
    /// KVM if a guest under it prints its kernel's banner within a few
    /// seconds, else emulation (`accel=auto`, the default).
    #[default]
    Probe,
    /// KVM, without the probe (`accel=kvm`).
    Kvm,
    /// QEMU's emulation, without the probe (`accel=tcg`): where KVM is
    /// known to hang, the probe's seconds saved.
    Tcg,
}

impl std::str::FromStr for AccelAsk {
    type Err = String;

    fn from_str(s: &str) -> Result<AccelAsk, String> {
        match s {
            "auto" => Ok(AccelAsk::Probe),
            "kvm" => Ok(AccelAsk::Kvm),
            "tcg" => Ok(AccelAsk::Tcg),
            other => Err(format!(
                "accel={other}: auto (KVM if it boots a guest, else emulation), kvm or tcg"
            )),
        }
    }
}

impl std::fmt::Display for AccelAsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AccelAsk::Probe => "auto",
            AccelAsk::Kvm => "kvm",
            AccelAsk::Tcg => "tcg",
        })
    }
}

/// `kernel:PATH[,initrd=…][,modules=DIR][,cpus=N][,memory=SIZE][,cmdline=…]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelSpec {
    /// The kernel image (`/boot/vmlinuz-…`).
    pub kernel: PathBuf,
    /// An initramfs to load the kernel's modules from instead of its own
    /// module tree.
    pub initrd: Option<PathBuf>,
    /// The kernel's module tree when it is not `/lib/modules/RELEASE`:
    /// that directory, or the root it was installed under (`make
    /// modules_install INSTALL_MOD_PATH=DIR`). A kernel with neither loads
    /// no module: what the guest needs must be built in.
    pub modules: Option<PathBuf>,
    /// Words added to the kernel command line.
    pub cmdline: Option<String>,
    /// vCPUs and memory.
    pub machine: Machine,
    /// `seed=N`: for a guest counting instructions, which fixed clock its
    /// boot reads ([`crate::systems::qemu::rtc_base`]), and so which
    /// random secrets (hash seeds) its kernel draws; none: seed 0.
    pub seed: Option<u32>,
}

/// `kernel:debian:VERSION[,flavour=F][,cpus=N][,memory=SIZE][,cmdline=…]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebianSpec {
    /// Which kernel: a line (`6.1`), `sid`, or a package's name.
    pub asked: super::debian::Asked,
    /// Words added to the kernel command line.
    pub cmdline: Option<String>,
    /// vCPUs and memory.
    pub machine: Machine,
    /// `seed=N`, as [`KernelSpec::seed`].
    pub seed: Option<u32>,
}

impl DebianSpec {
    /// The kernel to boot once `held` is the resolved kernel: its image
    /// and module tree in the cache.
    pub fn kernel(&self, held: &super::debian::cache::Held) -> KernelSpec {
        KernelSpec {
            kernel: held.kernel(),
            initrd: None,
            modules: Some(held.modules()),
            cmdline: self.cmdline.clone(),
            machine: self.machine,
            seed: self.seed,
        }
    }
}

/// `image:PATH,ssh=USER[,key=FILE][,bin=…][,cpus=N][,memory=SIZE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageSpec {
    /// The disk image.
    pub image: PathBuf,
    /// The user to ssh in as.
    pub user: String,
    /// The private key to log in with (else ssh's own choice).
    pub key: Option<PathBuf>,
    /// The scalebench binary in the guest (else the one on its PATH).
    pub bin: Option<PathBuf>,
    /// vCPUs and memory.
    pub machine: Machine,
}

impl SystemSpec {
    /// Whether the system runs in a QEMU guest.
    pub fn is_guest(&self) -> bool {
        matches!(
            self.kind,
            Kind::Kernel(_) | Kind::Debian(_) | Kind::Image(_)
        )
    }
}

impl std::fmt::Display for SystemSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let m = |f: &mut std::fmt::Formatter<'_>, m: &Machine| -> std::fmt::Result {
            if let Some(c) = m.cpus {
                write!(f, ",cpus={c}")?;
            }
            write!(f, ",memory={}M", m.memory >> 20)?;
            if m.accel != AccelAsk::Probe {
                write!(f, ",accel={}", m.accel)?;
            }
            Ok(())
        };
        let seed = |f: &mut std::fmt::Formatter<'_>, s: Option<u32>| -> std::fmt::Result {
            match s {
                Some(s) => write!(f, ",seed={s}"),
                None => Ok(()),
            }
        };
        write!(f, "{}=", self.name)?;
        // Before `cmdline=`, which takes the rest.
        let p = |f: &mut std::fmt::Formatter<'_>| -> std::fmt::Result {
            match &self.profile {
                Some(p) => write!(f, ",profile={p}"),
                None => Ok(()),
            }
        };
        match &self.kind {
            Kind::Local => write!(f, "local"),
            Kind::Kernel(k) => {
                write!(f, "kernel:{}", k.kernel.display())?;
                if let Some(i) = &k.initrd {
                    write!(f, ",initrd={}", i.display())?;
                }
                if let Some(d) = &k.modules {
                    write!(f, ",modules={}", d.display())?;
                }
                m(f, &k.machine)?;
                seed(f, k.seed)?;
                p(f)?;
                if let Some(c) = &k.cmdline {
                    write!(f, ",cmdline={c}")?;
                }
                Ok(())
            }
            Kind::Debian(d) => {
                write!(f, "kernel:debian:{}", d.asked)?;
                m(f, &d.machine)?;
                seed(f, d.seed)?;
                p(f)?;
                if let Some(c) = &d.cmdline {
                    write!(f, ",cmdline={c}")?;
                }
                Ok(())
            }
            Kind::Image(i) => {
                write!(f, "image:{},ssh={}", i.image.display(), i.user)?;
                if let Some(k) = &i.key {
                    write!(f, ",key={}", k.display())?;
                }
                if let Some(b) = &i.bin {
                    write!(f, ",bin={}", b.display())?;
                }
                m(f, &i.machine)?;
                p(f)
            }
            Kind::Ssh { target, bin } => {
                write!(f, "ssh:{target}")?;
                if let Some(b) = bin {
                    write!(f, ",bin={}", b.display())?;
                }
                p(f)
            }
        }
    }
}

/// A system's name: letters, digits, `.`, `_`, `-`, at most 32, not
/// starting with `.` or `-` (it names a file).
pub fn check_name(n: &str) -> Result<(), String> {
    if n.is_empty() {
        return Err("a system needs a name: NAME=SPEC".into());
    }
    if n.len() > 32
        || n.starts_with(['.', '-'])
        || !n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
    {
        return Err(format!(
            "`{n}` is not a system name (letters, digits, `.`, `_`, `-`; at most 32)"
        ));
    }
    Ok(())
}

/// The `KEY=VALUE` options after a spec's first part, `cmdline=` taking
/// the rest.
fn options(rest: &str) -> Result<Vec<(&str, &str)>, String> {
    let mut out = Vec::new();
    let mut left = rest;
    while !left.is_empty() {
        if let Some(c) = left.strip_prefix("cmdline=") {
            if c.trim().is_empty() {
                return Err("`cmdline=` needs a value (it takes the rest of the spec)".into());
            }
            if c.contains(['\n', '\r', '\0']) {
                return Err("`cmdline=`: one line, without control characters".into());
            }
            out.push(("cmdline", c));
            break;
        }
        let (item, tail) = left.split_once(',').unwrap_or((left, ""));
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| format!("`{item}`: expected KEY=VALUE"))?;
        if v.is_empty() {
            return Err(format!("`{k}=` needs a value"));
        }
        if out.iter().any(|(o, _)| *o == k) {
            return Err(format!("`{k}` given twice"));
        }
        out.push((k, v));
        left = tail;
    }
    Ok(out)
}

/// Reads `cpus=`, `memory=` and `accel=` into a [`Machine`].
fn machine(
    cpus: Option<&str>,
    memory: Option<&str>,
    accel: Option<&str>,
) -> Result<Machine, String> {
    let cpus = cpus
        .map(|c| crate::values::whole::<u32>(1, MAX_CPUS)(c).map_err(|e| format!("cpus={c}: {e}")))
        .transpose()?;
    let memory = match memory {
        None => DEFAULT_MEMORY,
        Some(m) => {
            let b = crate::values::bytes(m).map_err(|e| format!("memory={m}: {e}"))?;
            if b < MIN_MEMORY {
                return Err(format!("memory={m}: a guest needs at least 256M"));
            }
            if b > 1 << 40 {
                return Err(format!("memory={m}: at most 1T"));
            }
            b
        }
    };
    let accel = accel.map(str::parse).transpose()?.unwrap_or_default();
    Ok(Machine {
        cpus,
        memory,
        accel,
    })
}

/// Reads `seed=`: a whole number up to a billion.
fn seed(s: Option<&str>) -> Result<Option<u32>, String> {
    s.map(|v| {
        crate::values::whole::<u32>(0, 1_000_000_000)(v).map_err(|e| format!("seed={v}: {e}"))
    })
    .transpose()
}

/// Takes `keys` out of `opts`; any other key is refused, naming `what`'s
/// keys.
fn take<'a>(
    opts: Vec<(&'a str, &'a str)>,
    keys: &[&str],
    what: &str,
) -> Result<Vec<Option<&'a str>>, String> {
    if let Some((k, _)) = opts.iter().find(|(k, _)| !keys.contains(k)) {
        return Err(format!(
            "`{k}` is not an option of {what} ({})",
            keys.join(", ")
        ));
    }
    Ok(keys
        .iter()
        .map(|k| opts.iter().find(|(o, _)| o == k).map(|(_, v)| *v))
        .collect())
}

/// A path given in a spec: not empty.
fn path(p: &str, what: &str) -> Result<PathBuf, String> {
    if p.is_empty() {
        return Err(format!("{what}: a path is needed"));
    }
    Ok(PathBuf::from(p))
}

/// `spec` without its `profile=VALUE` item (every kind but `local` takes
/// one, before `cmdline=`, which takes the rest), and that value.
fn take_profile(spec: &str) -> Result<(String, Option<String>), String> {
    let (head, cmdline) = match spec.find(",cmdline=") {
        Some(i) => spec.split_at(i),
        None => (spec, ""),
    };
    // A kernel command line's words are apart by spaces: `,profile=` in
    // it is this option given too late.
    if cmdline.contains(",profile=") {
        return Err(
            "`profile=` after `cmdline=`, which takes the rest: give profile= before it".into(),
        );
    }
    let mut profile = None;
    let mut kept = Vec::new();
    for item in head.split(',') {
        match item.strip_prefix("profile=") {
            Some("") => return Err("`profile=` needs a value (a built-in name or a file)".into()),
            Some(_) if profile.is_some() => return Err("`profile` given twice".into()),
            Some(p) => profile = Some(p.to_string()),
            None => kept.push(item),
        }
    }
    Ok((format!("{}{cmdline}", kept.join(",")), profile))
}

impl std::str::FromStr for SystemSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<SystemSpec, String> {
        let (name, spec) = s.split_once('=').ok_or_else(|| {
            format!("`{s}`: expected NAME=SPEC (a=local, b=kernel:/boot/vmlinuz-…, c=image:disk.qcow2,ssh=root, d=ssh:user@host)")
        })?;
        check_name(name)?;
        let (spec, profile) = take_profile(spec)?;
        let spec = spec.as_str();
        if spec == "local" && profile.is_some() {
            return Err(
                "local,profile=…: this machine is tuned by `run --profile`, not by a system option"
                    .into(),
            );
        }
        let kind = if spec == "local" {
            Kind::Local
        } else if let Some(r) = spec.strip_prefix("kernel:debian:") {
            let (v, rest) = r.split_once(',').unwrap_or((r, ""));
            let o = take(
                options(rest)?,
                &["cpus", "memory", "accel", "cmdline", "flavour", "seed"],
                "kernel:debian:",
            )?;
            let mut asked: super::debian::Asked =
                v.parse().map_err(|e| format!("kernel:debian:{v}: {e}"))?;
            if let Some(f) = o[4] {
                asked = f
                    .parse()
                    .and_then(|f| asked.with_flavour(f))
                    .map_err(|e| format!("kernel:debian:{v}: flavour={f}: {e}"))?;
            }
            Kind::Debian(DebianSpec {
                asked,
                machine: machine(o[0], o[1], o[2])?,
                cmdline: o[3].map(str::to_string),
                seed: seed(o[5])?,
            })
        } else if let Some(r) = spec.strip_prefix("kernel:") {
            let (p, rest) = r.split_once(',').unwrap_or((r, ""));
            let o = take(
                options(rest)?,
                &[
                    "initrd", "modules", "cpus", "memory", "accel", "cmdline", "seed",
                ],
                "kernel:",
            )?;
            Kind::Kernel(KernelSpec {
                kernel: path(p, "kernel:")?,
                initrd: o[0].map(|i| path(i, "initrd=")).transpose()?,
                modules: o[1].map(|d| path(d, "modules=")).transpose()?,
                machine: machine(o[2], o[3], o[4])?,
                cmdline: o[5].map(str::to_string),
                seed: seed(o[6])?,
            })
        } else if let Some(r) = spec.strip_prefix("image:") {
            let (p, rest) = r.split_once(',').unwrap_or((r, ""));
            let o = take(
                options(rest)?,
                &["ssh", "bin", "cpus", "memory", "key", "accel"],
                "image:",
            )?;
            let user = o[0].ok_or("image: needs ssh=USER (the user to log in as)")?;
            format!("{user}@localhost")
                .parse::<Target>()
                .map_err(|e| format!("ssh={user}: {e}"))?;
            Kind::Image(ImageSpec {
                image: path(p, "image:")?,
                user: user.to_string(),
                bin: o[1].map(|b| path(b, "bin=")).transpose()?,
                machine: machine(o[2], o[3], o[5])?,
                key: o[4].map(|k| path(k, "key=")).transpose()?,
            })
        } else if let Some(r) = spec.strip_prefix("ssh:") {
            let (t, rest) = r.split_once(',').unwrap_or((r, ""));
            let o = take(options(rest)?, &["bin"], "ssh:")?;
            Kind::Ssh {
                target: t.parse().map_err(|e| format!("ssh:{t}: {e}"))?,
                bin: o[0].map(|b| path(b, "bin=")).transpose()?,
            }
        } else {
            return Err(format!(
                "`{spec}`: a system is `local`, `kernel:PATH`, `kernel:debian:VERSION`, `image:PATH,ssh=USER` or `ssh:USER@HOST`"
            ));
        };
        Ok(SystemSpec {
            name: name.to_string(),
            kind,
            profile,
        })
    }
}

/// Checks a run's systems together: names unique, at most one `local`.
pub fn check(specs: &[SystemSpec]) -> Result<(), String> {
    for (i, s) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.name == s.name) {
            return Err(format!("--system {}: the name is given twice", s.name));
        }
    }
    if specs.iter().filter(|s| s.kind == Kind::Local).count() > 1 {
        return Err("--system: this machine (`local`) can be one system only".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<SystemSpec, String> {
        s.parse()
    }

    #[test]
    fn every_kind_parses_with_its_options() {
        assert_eq!(p("me=local").unwrap().kind, Kind::Local);
        let k =
            p("rt=kernel:/boot/vmlinuz-6.1-rt,cpus=2,memory=1G,cmdline=console=ttyS0,115200 quiet")
                .unwrap();
        let Kind::Kernel(k) = k.kind else {
            panic!("{k:?}")
        };
        assert_eq!(k.kernel, PathBuf::from("/boot/vmlinuz-6.1-rt"));
        assert_eq!(
            k.machine,
            Machine {
                cpus: Some(2),
                memory: 1 << 30,
                accel: AccelAsk::Probe,
            }
        );
        assert_eq!(k.cmdline.as_deref(), Some("console=ttyS0,115200 quiet"));
        // accel= on every guest kind, kept by the written form.
        for spec in [
            "a=kernel:/k,accel=tcg",
            "a=kernel:debian:6.1,accel=tcg",
            "a=image:/d.img,ssh=root,accel=tcg",
        ] {
            let s = p(spec).unwrap();
            let again = p(&s.to_string()).unwrap();
            assert_eq!(s, again, "{spec}");
            assert!(s.to_string().contains(",accel=tcg"), "{s}");
        }
        let Kind::Kernel(k) = p("a=kernel:/k,accel=kvm").unwrap().kind else {
            panic!()
        };
        assert_eq!(k.machine.accel, AccelAsk::Kvm);
        let Kind::Kernel(k) = p("a=kernel:/k,accel=auto").unwrap().kind else {
            panic!()
        };
        assert_eq!(k.machine.accel, AccelAsk::Probe);
        assert!(!p("a=kernel:/k").unwrap().to_string().contains("accel"));
        let e = p("a=kernel:/k,accel=hvf").unwrap_err();
        assert!(e.starts_with("accel=hvf: auto"), "{e}");
        assert!(
            p("a=ssh:h,accel=tcg")
                .unwrap_err()
                .contains("`accel` is not an option of ssh:")
        );
        assert_eq!((k.initrd, k.modules), (None, None));
        let Kind::Kernel(k) = p("ab=kernel:/w/bzImage,modules=/w/mods").unwrap().kind else {
            panic!()
        };
        assert_eq!(k.modules, Some(PathBuf::from("/w/mods")));
        let Kind::Debian(d) = p("v=kernel:debian:6.12,cpus=1").unwrap().kind else {
            panic!()
        };
        assert_eq!((d.asked.dist.name, d.machine.cpus), ("trixie", Some(1)));
        // A file named debian:… is given with its directory.
        let Kind::Kernel(k) = p("f=kernel:./debian:6.1").unwrap().kind else {
            panic!()
        };
        assert_eq!(k.kernel, PathBuf::from("./debian:6.1"));
        let i = p("fbsd=image:/v/fbsd.qcow2,ssh=root,bin=/usr/local/bin/scalebench").unwrap();
        let Kind::Image(i) = i.kind else { panic!() };
        assert_eq!(
            (i.user.as_str(), i.machine.memory),
            ("root", DEFAULT_MEMORY)
        );
        assert_eq!(i.bin, Some(PathBuf::from("/usr/local/bin/scalebench")));
        assert_eq!(i.key, None);
        let Kind::Image(i) = p("d=image:/d.img,key=/k/id,ssh=root").unwrap().kind else {
            panic!()
        };
        assert_eq!(i.key, Some(PathBuf::from("/k/id")));
        let s = p("far=ssh:bench@[2001:db8::1]:2222,bin=/opt/sb").unwrap();
        let Kind::Ssh { target, bin } = s.kind else {
            panic!()
        };
        assert_eq!(
            (target.host.as_str(), target.port),
            ("2001:db8::1", Some(2222))
        );
        assert_eq!(bin, Some(PathBuf::from("/opt/sb")));
    }

    #[test]
    fn a_spec_prints_as_it_parses() {
        for s in [
            "a=local",
            "b=kernel:/k,initrd=/i,cpus=1,memory=512M,cmdline=x=1,y",
            "b=kernel:/k,modules=/m/lib,memory=512M",
            "v=kernel:debian:6.1,cpus=1,memory=1024M,cmdline=quiet,x",
            "v=kernel:debian:linux-image-6.12.118+deb13-cloud-amd64,memory=2048M",
            "c=image:/d.img,ssh=root,bin=/b,memory=2048M",
            "c=image:/d.img,ssh=root,key=/k,cpus=2",
            "d=ssh:u@h:22,bin=/b",
            "t=kernel:/k,profile=throughput,cmdline=quiet,x",
            "t=kernel:debian:6.1,memory=1024M,profile=/p/t.toml",
            "t=image:/d.img,ssh=root,profile=latency",
            "t=ssh:u@h,profile=t.toml",
            "s=kernel:/k,memory=512M,seed=7,cmdline=quiet",
            "s=kernel:debian:6.12,memory=1024M,seed=0",
        ] {
            let spec = p(s).unwrap();
            assert_eq!(p(&spec.to_string()).unwrap(), spec, "{s}");
        }
        // Anywhere before cmdline=, and only the one after cmdline= is the
        // kernel's.
        let t = p("t=kernel:/k,profile=x.toml,cpus=1,cmdline=a profile=b").unwrap();
        assert_eq!(t.profile.as_deref(), Some("x.toml"));
        let Kind::Kernel(k) = &t.kind else {
            panic!("{t:?}")
        };
        assert_eq!(k.cmdline.as_deref(), Some("a profile=b"));
        assert_eq!(p("a=kernel:/k").unwrap().profile, None);
        // seed= is a kernel guest's, absent unless given.
        let Kind::Debian(d) = p("s=kernel:debian:6.12,seed=3").unwrap().kind else {
            panic!()
        };
        assert_eq!(d.seed, Some(3));
        assert!(!p("a=kernel:/k").unwrap().to_string().contains("seed"));
    }

    #[test]
    fn bad_specs_name_their_fault() {
        for (s, says) in [
            ("local", "expected NAME=SPEC"),
            ("=local", "needs a name"),
            ("a/b=local", "not a system name"),
            ("-x=local", "not a system name"),
            ("a=vm:/x", "a system is `local`"),
            ("a=kernel:", "kernel:: a path is needed"),
            ("a=kernel:/k,cpus=0", "cpus=0: must be at least 1"),
            ("a=kernel:/k,cpus=x", "cpus=x: `x` is not a whole number"),
            ("a=kernel:/k,memory=10M", "at least 256M"),
            ("a=kernel:/k,memory=lots", "memory=lots"),
            ("a=kernel:/k,ssh=root", "`ssh` is not an option of kernel:"),
            (
                "a=local,profile=t",
                "this machine is tuned by `run --profile`",
            ),
            ("a=kernel:/k,profile=", "`profile=` needs a value"),
            ("a=kernel:/k,profile=a,profile=b", "`profile` given twice"),
            (
                "a=kernel:/k,cmdline=quiet,profile=t",
                "`profile=` after `cmdline=`",
            ),
            ("a=kernel:/k,cpus=1,cpus=2", "`cpus` given twice"),
            ("a=kernel:/k,cpus", "`cpus`: expected KEY=VALUE"),
            ("a=kernel:/k,initrd=", "`initrd=` needs a value"),
            ("a=kernel:/k,modules=", "`modules=` needs a value"),
            ("a=kernel:/k,cmdline=", "`cmdline=` needs a value"),
            ("a=kernel:/k,cmdline=a\nb", "one line"),
            (
                "a=kernel:debian:6.2",
                "kernel:debian:6.2: `6.2` is not a Debian kernel version",
            ),
            (
                "a=kernel:debian:",
                "kernel:debian:: `` is not a Debian kernel version",
            ),
            (
                "a=kernel:debian:6.1,modules=/m",
                "`modules` is not an option of kernel:debian: (cpus, memory, accel, cmdline, flavour, seed)",
            ),
            ("a=kernel:/k,seed=x", "seed=x: `x` is not a whole number"),
            ("a=kernel:/k,seed=-1", "seed=-1"),
            ("a=kernel:/k,seed=2000000000", "seed=2000000000"),
            (
                "a=image:/d.img,ssh=root,seed=1",
                "`seed` is not an option of image:",
            ),
            ("a=kernel:debian:6.1,cpus=0", "cpus=0: must be at least 1"),
            ("a=image:/d.img", "needs ssh=USER"),
            ("a=image:/d.img,ssh=r@t", "ssh=r@t"),
            ("a=ssh:", "ssh:: "),
            ("a=ssh:h,cpus=2", "`cpus` is not an option of ssh:"),
        ] {
            let e = p(s).unwrap_err();
            assert!(e.contains(says), "{s}: {e}");
        }
    }

    #[test]
    fn names_are_unique_and_this_machine_is_one_system() {
        let a = p("a=local").unwrap();
        let b = p("b=kernel:/k").unwrap();
        assert!(check(&[a.clone(), b.clone()]).is_ok());
        assert!(
            check(&[b.clone(), b.clone()])
                .unwrap_err()
                .contains("given twice")
        );
        let a2 = p("a2=local").unwrap();
        assert!(check(&[a, a2]).unwrap_err().contains("one system only"));
        assert!(b.is_guest());
    }
}
