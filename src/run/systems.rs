//! The systems a run measures side by side (`run --system NAME=SPEC`):
//! this machine, measured in this process as always; Linux kernels booted
//! in QEMU ([`crate::systems::qemu`]), paused between their turns; and
//! other machines over ssh ([`crate::hosts::ssh`]). Each system other
//! than this machine runs one item of the plan at a time as `scalebench
//! run ITEM …` ([`super::remote`]); what it measured comes back as a
//! result file of its own, whose series and workloads join that system's
//! file here. Its system record is its own, with how it ran
//! (`virtualization`: a guest's KVM, or TCG emulation and why, and its
//! vCPUs' pins).

use super::RunOptions;
use super::files::Recording;
use super::remote::{RemoteItem, item_args};
use crate::harness::progress::Progress;
use crate::hosts::ssh::{Session, Target};
use crate::results::{self, BenchResult, Params, ResultFile, Status, SystemInfo, WorkloadResult};
use crate::systems::debian::cache::Held;
use crate::systems::debian::fetch::{How, Resolved};
use crate::systems::qemu::{Guest, ImageGuest};
use crate::systems::spec::{ImageSpec, KernelSpec, Kind, SystemSpec};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a guest has to boot and answer.
const BOOT_LIMIT: Duration = Duration::from_secs(180);
/// How long one item may take in a guest (an emulated full-size workload
/// is long; a guest that takes longer is taken for hung).
const ITEM_LIMIT: Duration = Duration::from_secs(6 * 3600);
/// How long a disk image has to boot until its sshd answers (an emulated
/// Debian with systemd takes about a minute here).
const IMAGE_BOOT_LIMIT: Duration = Duration::from_secs(600);
/// How long a resumed image's sshd has to answer again.
const CONNECT_LIMIT: Duration = Duration::from_secs(60);
/// How long a short command (`--version`, `sysinfo`) may take in a guest.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// One system of the run, opened.
pub enum Opened {
    /// This machine: the plan runs here, in this process.
    Here,
    /// A guest, booted, paused until its turn; or a machine over ssh.
    Remote(Box<RemoteSystem>),
}

/// How a system other than this machine is reached.
enum At {
    /// A guest booted here.
    Guest(Guest),
    /// A disk image booted here, over ssh.
    Image(Box<ImageAt>),
    /// A machine over ssh, with this version of scalebench there.
    Ssh(Session),
}

/// A system other than this machine: how it is reached and what it has
/// run.
pub struct RemoteSystem {
    name: String,
    at: At,
    /// Its system record, with how it ran.
    pub system: SystemInfo,
    items: u32,
    /// Why the system is gone, once it is.
    lost: Option<String>,
    /// Its own tuning profile (`profile=`: a built-in name or a file here).
    profile: Option<String>,
    /// A `kernel:debian:` guest's kernel, held in the cache (so that
    /// `kernels prune` leaves it) while the guest runs.
    _kernel: Option<Held>,
}

/// The static scalebench a guest boots with: `asked`, else this program
/// if it is static, else the musl build beside it
/// (`target/x86_64-unknown-linux-musl/PROFILE/scalebench` for
/// `target/PROFILE/scalebench`).
pub fn guest_binary(asked: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(a) = asked {
        let bytes = std::fs::read(a).with_context(|| format!("--guest-bin {}", a.display()))?;
        if crate::systems::qemu::needs_loader(&bytes) != Some(false) {
            bail!(
                "--guest-bin {}: a kernel: system boots a static scalebench as its init, and this is no static executable (cargo build --release --target {}-unknown-linux-musl makes one)",
                a.display(),
                std::env::consts::ARCH
            );
        }
        return Ok(a.to_path_buf());
    }
    let me = std::env::current_exe().context("where this program is")?;
    let bytes = std::fs::read(&me).with_context(|| me.display().to_string())?;
    if crate::systems::qemu::needs_loader(&bytes) == Some(false) {
        return Ok(me);
    }
    let musl = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    let beside = me.parent().and_then(|profile| {
        let target = profile.parent()?;
        Some(
            target
                .join(&musl)
                .join(profile.file_name()?)
                .join("scalebench"),
        )
    });
    match beside {
        Some(b) if b.is_file() => Ok(b),
        _ => bail!(
            "a kernel: system boots a static scalebench as its init, and {} is linked dynamically; build one (rustup target add {musl}; cargo build --release --target {musl}) and it is found beside this one, or name it with --guest-bin",
            me.display()
        ),
    }
}

/// Opens every system of `specs`: guests booted in `workdir` (checked to
/// run this very version, their vCPUs pinned, then paused), ssh machines
/// connected (this build copied there, or `bin=` checked), the system
/// record of each taken.
pub fn open(
    specs: &[SystemSpec],
    plan: &super::plan::RunPlan,
    o: &RunOptions,
    workdir: &Path,
    progress: &mut Progress,
) -> anyhow::Result<Vec<Opened>> {
    let mut v = Vec::new();
    let mut bin: Option<PathBuf> = None;
    for s in specs {
        let Some((at, resolved)) = reach(s, plan, workdir, &mut bin, progress)
            .with_context(|| format!("--system {}", s.name))?
        else {
            v.push(Opened::Here);
            continue;
        };
        let mut r =
            RemoteSystem::ready(s, at, o).with_context(|| format!("--system {}", s.name))?;
        if let (Kind::Debian(d), Some(k)) = (&s.kind, &resolved) {
            for note in record_package(&mut r.system, &d.asked.to_string(), k) {
                progress.note_run(&format!("{}: {note}", s.name));
            }
        }
        r._kernel = resolved.map(|k| k.held);
        progress.note_run(&r.summary());
        v.push(Opened::Remote(Box::new(r)));
    }
    Ok(v)
}

/// What a `kernel:debian:` guest's result file records of its kernel:
/// the package, and the package's configuration where the guest found
/// none of its own (Debian's kernels have no `/proc/config.gz`, and this
/// machine's `/boot` has not theirs). Notes on what does not agree.
fn record_package(system: &mut SystemInfo, asked: &str, k: &Resolved) -> Vec<String> {
    let mut notes = Vec::new();
    let h = &k.held;
    let mut record = h.entry.record(asked);
    record.index_stale = k.stale.clone();
    if let How::Offline(why) = &k.how {
        record.archive_unreachable = Some(why.clone());
    }
    system.kernel_package = Some(record);
    if system.kernel_config.is_none()
        && let Some(p) = h.config()
    {
        match std::fs::read_to_string(&p) {
            Ok(text) => {
                system.kernel_config = Some(results::KernelConfig {
                    source: p.display().to_string(),
                    options: results::sysinfo::config_options(&text),
                })
            }
            Err(e) => notes.push(format!("its configuration {}: {e}", p.display())),
        }
    }
    if system.os_release != h.entry.release {
        notes.push(format!(
            "the guest says release {} where {} {} holds {}",
            system.os_release, h.entry.package, h.entry.version, h.entry.release
        ));
    }
    notes
}

/// Boots `k` as guest `s` in `dir`, with the guests' static scalebench
/// (`bin`, found once).
fn boot(
    s: &SystemSpec,
    k: &KernelSpec,
    plan: &super::plan::RunPlan,
    dir: &Path,
    bin: &mut Option<PathBuf>,
    progress: &mut Progress,
) -> anyhow::Result<At> {
    let bin = match bin {
        Some(b) => b.clone(),
        None => bin.insert(guest_binary(plan.guest_bin.as_deref())?).clone(),
    };
    progress.note_run(&format!(
        "{}: booting {} in QEMU",
        s.name,
        k.kernel.display()
    ));
    Ok(At::Guest(Guest::boot(
        k,
        &s.name,
        &bin,
        dir,
        BOOT_LIMIT,
        plan.guest_clock,
    )?))
}

/// Boots or connects to system `s` (none for this machine), with the
/// cached kernel a `kernel:debian:` guest boots; `bin` is the guests'
/// static scalebench, found once.
fn reach(
    s: &SystemSpec,
    plan: &super::plan::RunPlan,
    workdir: &Path,
    bin: &mut Option<PathBuf>,
    progress: &mut Progress,
) -> anyhow::Result<Option<(At, Option<Resolved>)>> {
    // Each in a directory of its own (ssh's control socket is named
    // after this process).
    let dir = workdir.join(format!("sys-{}", s.name));
    Ok(Some((
        match &s.kind {
            Kind::Local => return Ok(None),
            Kind::Kernel(k) => boot(s, k, plan, &dir, bin, progress)?,
            Kind::Debian(d) => {
                // The static scalebench first: a guest that cannot boot
                // fetches nothing.
                if bin.is_none() {
                    *bin = Some(guest_binary(plan.guest_bin.as_deref())?);
                }
                let cache = crate::systems::debian::cache::Cache::locate(None)?;
                let r = crate::systems::debian::fetch::resolve(&d.asked, &cache, &mut |m| {
                    progress.note_run(&format!("{}: {m}", s.name))
                })?;
                progress.note_run(&format!(
                    "{}: kernel:debian:{} is {}",
                    s.name,
                    d.asked,
                    r.summary()
                ));
                let at = boot(s, &d.kernel(&r.held), plan, &dir, bin, progress)?;
                return Ok(Some((at, Some(r))));
            }
            Kind::Ssh { target, bin } => {
                progress.note_run(&format!("{}: connecting to {target}", s.name));
                let bin = bin.as_ref().map(|b| b.display().to_string());
                std::fs::create_dir_all(&dir)?;
                let ssh = plan.ssh_config.as_deref();
                At::Ssh(Session::open_with(target, ssh, &dir, bin.as_deref())?)
            }
            Kind::Image(i) => {
                progress.note_run(&format!(
                    "{}: booting {} in QEMU",
                    s.name,
                    i.image.display()
                ));
                // Booted and connected: its first turn (the checks and the
                // record) goes on in this session.
                let mut at = ImageAt::boot(i, &dir, plan.ssh_config.as_deref(), plan.guest_clock)?;
                at.connect(IMAGE_BOOT_LIMIT)?;
                At::Image(Box::new(at))
            }
        },
        None,
    )))
}

/// A disk image booted here and reached over ssh through its forwarded
/// port; an ssh session is open only during its turns (a paused guest
/// cannot answer ssh's keep-alives).
struct ImageAt {
    guest: ImageGuest,
    target: Target,
    config: PathBuf,
    bin: Option<String>,
    dir: PathBuf,
    session: Option<Session>,
}

impl ImageAt {
    /// Boots `spec` in `dir` and writes the ssh configuration that reaches
    /// it (`ssh_config`, the run's own, included first).
    fn boot(
        spec: &ImageSpec,
        dir: &Path,
        ssh_config: Option<&Path>,
        clock: crate::systems::qemu::GuestClock,
    ) -> anyhow::Result<ImageAt> {
        let guest = ImageGuest::boot(spec, dir, clock)?;
        let config = dir.join("ssh_config");
        let mut text = String::new();
        if let Some(c) = ssh_config {
            text += &format!("Include {}\n", std::path::absolute(c)?.display());
        }
        text += &format!(
            "Host sbguest\n  HostName 127.0.0.1\n  Port {}\n  User {}\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n",
            guest.port, spec.user
        );
        if let Some(k) = &spec.key {
            text += &format!(
                "  IdentityFile {}\n  IdentitiesOnly yes\n",
                std::path::absolute(k)?.display()
            );
        }
        std::fs::write(&config, text)?;
        Ok(ImageAt {
            guest,
            target: format!("{}@sbguest", spec.user)
                .parse()
                .map_err(anyhow::Error::msg)?,
            config,
            bin: spec.bin.as_ref().map(|b| b.display().to_string()),
            dir: dir.to_path_buf(),
            session: None,
        })
    }

    /// Opens the ssh session, trying for up to `limit` (a booting guest
    /// refuses until its sshd runs).
    fn connect(&mut self, limit: Duration) -> anyhow::Result<()> {
        let end = std::time::Instant::now() + limit;
        loop {
            match Session::open_with(
                &self.target,
                Some(&self.config),
                &self.dir,
                self.bin.as_deref(),
            ) {
                Ok(s) => {
                    self.session = Some(s);
                    return Ok(());
                }
                Err(e) => {
                    if let Some(why) = self.guest.ended() {
                        bail!("{why}");
                    }
                    if crate::stop::interrupted() {
                        bail!("interrupted");
                    }
                    if std::time::Instant::now() > end {
                        bail!(
                            "no ssh within {}s: {e:#}; {}",
                            limit.as_secs(),
                            self.guest.console()
                        );
                    }
                }
            }
            std::thread::sleep(Duration::from_secs(2));
        }
    }

    /// The open session.
    fn session(&self) -> anyhow::Result<&Session> {
        self.session.as_ref().context("no ssh session")
    }
}

impl At {
    /// Its turn begins: a guest resumed (its clock set), an image's ssh
    /// session opened.
    fn begin(&mut self) -> anyhow::Result<()> {
        match self {
            At::Guest(g) => g.resume(),
            At::Image(i) if i.session.is_some() => Ok(()),
            At::Image(i) => {
                i.guest.resume()?;
                i.connect(CONNECT_LIMIT)
            }
            At::Ssh(_) => Ok(()),
        }
    }

    /// Its turn ends: an image's session closed, a guest paused.
    fn end(&mut self) -> anyhow::Result<()> {
        match self {
            At::Guest(g) => g.pause(),
            At::Image(i) => {
                if let Some(mut s) = i.session.take() {
                    s.close();
                }
                i.guest.pause()
            }
            At::Ssh(_) => Ok(()),
        }
    }

    /// Runs `scalebench ARGS` there, in its turn: exit code (`None`:
    /// stopped here), standard output, standard error.
    fn run(
        &mut self,
        args: &[String],
        limit: Duration,
    ) -> anyhow::Result<(Option<i32>, String, String)> {
        match self {
            At::Guest(g) => {
                let r = g.run(args, limit)?;
                Ok((Some(r.code), r.stdout, r.stderr))
            }
            At::Image(i) => i.session()?.run_supervised(args, limit),
            At::Ssh(s) => s.run_supervised(args, limit),
        }
    }

    /// Where a result file named `name` goes there, in its turn.
    fn out_path(&self, name: &str) -> String {
        match self {
            At::Guest(_) => format!("{}/{name}", crate::systems::guest::OUT_DIR),
            At::Image(i) => format!(
                "{}/{name}",
                i.session.as_ref().map_or("/tmp", |s| s.dir.as_str())
            ),
            At::Ssh(s) => format!("{}/{name}", s.dir),
        }
    }

    /// The result file at `there` ([`At::out_path`]), in its turn.
    fn result(&self, there: &str, name: &str) -> Result<ResultFile, String> {
        let s = match self {
            At::Guest(g) => {
                return results::load(&g.out_dir().join(name))
                    .map_err(|e| format!("{:#}", anyhow::Error::new(e)));
            }
            At::Image(i) => i.session().map_err(|e| e.to_string())?,
            At::Ssh(s) => s,
        };
        let text = s
            .read_file(there, COMMAND_LIMIT)
            .map_err(|e| format!("{e:#}"))?;
        results::parse(&text, Path::new(there)).map_err(|e| e.to_string())
    }
}

/// `scalebench ARGS` at `at`, in its turn, for a short answer: its
/// standard output, or an error quoting its standard error.
fn ask(at: &mut At, args: &[String]) -> anyhow::Result<String> {
    match at.run(args, COMMAND_LIMIT)? {
        (Some(0), out, _) => Ok(out),
        (code, _, err) => bail!(
            "scalebench {} there ended with {}: {}",
            args.join(" "),
            code.map_or("a signal".to_string(), |c| c.to_string()),
            err.trim()
        ),
    }
}

impl RemoteSystem {
    /// The system checked to run a scalebench of this agent protocol, a
    /// guest's vCPUs pinned, its record taken.
    fn ready(s: &SystemSpec, mut at: At, o: &RunOptions) -> anyhow::Result<RemoteSystem> {
        at.begin()?;
        let system = Self::checked(s, &mut at, o);
        at.end()?;
        Ok(RemoteSystem {
            name: s.name.clone(),
            at,
            system: system?,
            items: 0,
            lost: None,
            profile: s.profile.clone(),
            _kernel: None,
        })
    }

    /// In the system's turn: its scalebench checked, a guest's vCPUs
    /// pinned, its record taken.
    fn checked(s: &SystemSpec, at: &mut At, o: &RunOptions) -> anyhow::Result<SystemInfo> {
        // Another build (another OS, arch or C library) is welcome if it
        // speaks this agent protocol.
        let said = ask(at, &["__hello".into()])?;
        crate::hosts::agent::check_hello(&said).map_err(anyhow::Error::msg)?;
        let pinned = match at {
            At::Guest(g) => Some(g.pin_vcpus()),
            At::Image(i) => Some(i.guest.pin_vcpus()),
            At::Ssh(_) => None,
        };
        let pins = match pinned {
            Some(Err(e)) => {
                sys::say!("note: {}: vCPUs not pinned: {e:#}", s.name);
                Vec::new()
            }
            Some(Ok(p)) => p,
            None => Vec::new(),
        };
        let mut args = vec!["sysinfo".to_string(), "--json".into()];
        if !o.spec.record_sysctl.is_empty() {
            args.extend(["--record-sysctl".into(), o.spec.record_sysctl.join(",")]);
        }
        let mut system: SystemInfo =
            serde_json::from_str(&ask(at, &args)?).context("its sysinfo --json")?;
        let accel = match &*at {
            At::Guest(g) => Some((&g.accel, g.clock, g.rtc_base.clone())),
            At::Image(i) => Some((&i.guest.accel, i.guest.clock, None)),
            At::Ssh(_) => None,
        };
        if let Some((a, clock, rtc_base)) = accel {
            let seen = system.virtualization.take().unwrap_or_default();
            let counted = clock == crate::systems::qemu::GuestClock::Instructions;
            system.virtualization = Some(results::Virtualization {
                kind: if a.emulated() { "tcg" } else { "kvm" }.into(),
                emulated: a.emulated(),
                hypervisor: seen.hypervisor,
                reason: Some(a.reason()),
                vcpu_pins: pins,
                clock: Some(clock.name().into()),
                icount_shift: counted.then_some(crate::systems::qemu::ICOUNT_SHIFT),
                rtc_base,
            });
        }
        Ok(system)
    }

    /// The system in a line.
    fn summary(&self) -> String {
        match &self.at {
            At::Guest(g) => format!(
                "{}: Linux {} under QEMU ({}), shares by {}",
                self.name,
                g.release,
                g.accel,
                g.share.name()
            ),
            At::Image(i) => format!(
                "{}: {} {} under QEMU ({}), over ssh at 127.0.0.1:{}",
                self.name, self.system.os, self.system.os_release, i.guest.accel, i.guest.port
            ),
            At::Ssh(s) => format!(
                "{}: {} {} over ssh, scalebench {}",
                self.name, self.system.os, self.system.os_release, s.binary
            ),
        }
    }

    /// Runs `item` there and keeps what it measured in `rec`: its series
    /// or workload, or a failed one saying why there is none.
    pub fn run_item(
        &mut self,
        o: &RunOptions,
        item: RemoteItem,
        rec: &mut Recording,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        if self.lost.is_none() {
            progress.note_run(&format!("{}: {} …", self.name, item.name()));
        }
        let measured = match &self.lost {
            Some(why) => Err(why.clone()),
            None => self.measure(o, item),
        };
        match measured {
            Ok(f) => {
                progress.note_run(&format!(
                    "{}: {} done in {:.1} s: {}",
                    self.name,
                    item.name(),
                    started.elapsed().as_secs_f64(),
                    statuses(&f)
                ));
                merge(rec, f, &self.system)
            }
            // ^C: nothing of the item came back; the run says what each
            // file kept.
            Err(_) if crate::stop::interrupted() => {}
            Err(why) => {
                let why = format!("{}: {}: {why}", self.name, item.name());
                progress.note_run(&why);
                fail(rec, item, why);
            }
        }
        rec.save()
    }

    /// Runs `item`: the result file it wrote there, whatever it kept (an
    /// interrupted item keeps its finished series), or why there is none.
    fn measure(&mut self, o: &RunOptions, item: RemoteItem) -> Result<ResultFile, String> {
        self.items += 1;
        let name = format!("item-{}.json", self.items);
        let began = self.at.begin();
        let there = self.at.out_path(&name);
        if let Err(e) = began {
            return Err(self.gone(&e));
        }
        // The system's own profile could not be put there: this item
        // fails, the system goes on (its turn ended).
        let profile = match self.profile_there() {
            Ok(p) => p,
            Err(e) => {
                let _ = self.at.end();
                return Err(format!("{e:#}"));
            }
        };
        let clock = match &self.at {
            At::Guest(g) => Some(g.clock),
            At::Image(i) => Some(i.guest.clock),
            At::Ssh(_) => None,
        };
        let args = item_args(&o.spec, item, profile.as_deref(), clock, &there);
        let ran = self.at.run(&args, ITEM_LIMIT);
        let file = self.at.result(&there, &name);
        let ran = ran.and_then(|r| self.at.end().map(|()| r));
        match ran {
            Ok((Some(_), _, _)) if file.is_ok() => file,
            Ok((code, _, err)) => {
                let tail: Vec<&str> = err.lines().rev().take(5).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                file.map_err(|e| {
                    format!(
                        "scalebench ended with {} and no result file ({e}): {}",
                        code.map_or("a signal".to_string(), |c| c.to_string()),
                        tail.join(" / ")
                    )
                })
            }
            Err(e) => {
                let why = self.gone(&e);
                file.map_err(|_| why)
            }
        }
    }

    /// Why the system is gone after `e`, in words; kept for the items
    /// left unless a stop signal ended it.
    fn gone(&mut self, e: &anyhow::Error) -> String {
        let why = format!("the system is gone: {e:#}");
        if !crate::stop::interrupted() {
            self.lost = Some(why.clone());
        }
        why
    }

    /// The system's own tuning profile (`profile=`) as the run there names
    /// it, in its turn: a built-in by name; a file here copied there first
    /// (into the guest's output directory, or the session's scratch
    /// directory) under its own file name.
    fn profile_there(&mut self) -> anyhow::Result<Option<String>> {
        let Some(p) = &self.profile else {
            return Ok(None);
        };
        if !crate::tuning::is_path(p) {
            return Ok(Some(p.clone()));
        }
        let text = std::fs::read(p).with_context(|| format!("profile={p}"))?;
        // A name of its own there (beside the item files and, over ssh,
        // the scalebench copied there).
        let file = "profile-of-this-system.toml";
        let there = self.at.out_path(file);
        match &self.at {
            At::Guest(g) => std::fs::write(g.out_dir().join(file), &text)
                .with_context(|| format!("profile={p}: into the guest's directory"))?,
            At::Image(i) => i.session()?.write_file(&there, &text, COMMAND_LIMIT)?,
            At::Ssh(s) => s.write_file(&there, &text, COMMAND_LIMIT)?,
        }
        Ok(Some(there))
    }

    /// Powers a guest off; closes an ssh session (its scratch directory
    /// removed there). What was done, in words.
    pub fn close(self) -> Vec<String> {
        match self.at {
            At::Guest(mut g) => {
                let _ = g.resume();
                match g.close() {
                    Ok(()) => Vec::new(),
                    Err(e) => vec![format!("{e:#}")],
                }
            }
            At::Image(i) => {
                let mut i = *i;
                if let Some(mut s) = i.session.take() {
                    s.close();
                }
                let _ = i.guest.resume();
                i.guest.close();
                Vec::new()
            }
            At::Ssh(mut s) => s.close(),
        }
    }
}

/// Each series and workload of `f` with how it ended (`socket ok`).
fn statuses(f: &ResultFile) -> String {
    let v: Vec<String> = f
        .benchmarks
        .iter()
        .map(|b| format!("{} {}", b.series, b.status.as_str()))
        .chain(
            f.workloads
                .iter()
                .map(|w| format!("{} {}", w.name, w.status.as_str())),
        )
        .collect();
    if v.is_empty() {
        "nothing measured".into()
    } else {
        v.join(", ")
    }
}

/// Judges here each series of `f` that came without a verdict (the other
/// system leaves its verdicts to the asker, `__run`) and keeps it with
/// the series: judged once, on this machine's CPUs, not under emulation.
fn judge_arrived(f: &mut ResultFile) {
    use crate::analysis::recorded;
    let opts = crate::analysis::Options::default();
    for b in f
        .benchmarks
        .iter_mut()
        .filter(|b| b.verdict.is_none() && !b.runs.is_empty())
    {
        if let Ok(v) = recorded::judge_fresh(b, &opts) {
            recorded::keep(b, &v, &opts);
        }
    }
}

/// Adds what a guest measured to `rec`, with the guest's record and
/// timer (the first file it sends sets them); series that came without
/// a verdict are judged here first ([`judge_arrived`]).
fn merge(rec: &mut Recording, mut f: ResultFile, system: &SystemInfo) {
    judge_arrived(&mut f);
    if rec.file.benchmarks.is_empty() && rec.file.workloads.is_empty() {
        rec.file.timer = f.timer.clone();
    }
    rec.file.system = system.clone();
    // The system's own profile (`profile=`), applied there for each item:
    // recorded once, partial if any application was, and the system
    // record shows what it set.
    if let Some(p) = f.profile {
        match &mut rec.file.profile {
            Some(r) => merge_profile(r, p),
            None => rec.file.profile = Some(p),
        }
    }
    if let Some(p) = &rec.file.profile {
        super::session::overlay(&mut rec.file.system, p);
    }
    rec.file.benchmarks.extend(f.benchmarks);
    rec.file.workloads.extend(f.workloads);
}

/// Adds what one item's application of a system's profile did to the
/// record of the items before: partial if any was; a change applied there
/// (an item's filesystem remounted) replaces one that was only recorded or
/// unchanged, and a change no item before made is added.
fn merge_profile(r: &mut results::TuningRecord, p: results::TuningRecord) {
    use results::ChangeStatus;
    r.partial |= p.partial;
    for c in p.changes {
        match r
            .changes
            .iter_mut()
            .find(|x| x.kind == c.kind && x.name == c.name)
        {
            Some(x) if c.status == ChangeStatus::Applied && x.status != ChangeStatus::Applied => {
                *x = c
            }
            Some(_) => {}
            None => r.changes.push(c),
        }
    }
}

/// Records `item` as failed in `rec`, saying why.
fn fail(rec: &mut Recording, item: RemoteItem, why: String) {
    match item {
        RemoteItem::Bench(t) => {
            let info = t.bench.info();
            rec.file.benchmarks.push(BenchResult {
                name: info.name.into(),
                series: info.name.into(),
                n_meaning: info.n_meaning.into(),
                timed: info.timed.into(),
                max_matters: t.bench.max_matters().map(String::from),
                pairs_with: t.bench.pairs_with().map(String::from),
                status: Status::Failed,
                message: Some(why),
                params: Params {
                    requested_n: t.n,
                    n: t.n,
                    runs: 0,
                    warmup_ops: 0,
                    extra: Default::default(),
                },
                caps: Vec::new(),
                environment: Default::default(),
                runs: Vec::new(),
                profile: None,
                verdict: None,
                monitor: None,
            })
        }
        RemoteItem::Work(w) => {
            let info = w.workload.info();
            rec.file.workloads.push(WorkloadResult {
                name: info.name.into(),
                what: info.what.into(),
                status: Status::Failed,
                message: Some(why),
                params: Default::default(),
                rows: Vec::new(),
                monitor: None,
            })
        }
    }
}

/// Powers off every guest of `systems` and closes every ssh session,
/// saying what was done.
pub fn close(systems: Vec<Opened>, progress: &mut Progress) {
    for s in systems {
        if let Opened::Remote(r) = s {
            let name = r.name.clone();
            for note in r.close() {
                progress.note_run(&format!("{name}: {note}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::{ChangeStatus, ProfileChange, TuningRecord};

    #[test]
    fn series_that_come_without_a_verdict_are_judged_as_they_join() {
        let mut f = crate::run::end::tests::fixture();
        assert!(f.benchmarks.iter().any(|b| !b.runs.is_empty()));
        for b in &mut f.benchmarks {
            b.verdict = None;
        }
        judge_arrived(&mut f);
        let opts = crate::analysis::Options::default();
        for b in f.benchmarks.iter().filter(|b| !b.runs.is_empty()) {
            let kept = crate::analysis::recorded::kept(b, &opts);
            assert!(kept.is_some(), "{}: no verdict kept", b.series);
            assert_eq!(
                kept.map(Ok),
                Some(crate::analysis::recorded::judge_fresh(b, &opts))
            );
        }
    }

    fn change(name: &str, status: ChangeStatus) -> ProfileChange {
        ProfileChange {
            kind: "mount".into(),
            name: name.into(),
            wanted: "noatime".into(),
            old: None,
            new: None,
            status,
            reason: None,
        }
    }

    #[test]
    fn a_system_s_profile_record_gathers_what_every_item_applied() {
        let rec = |changes: Vec<ProfileChange>, partial| TuningRecord {
            name: "t".into(),
            description: String::new(),
            origin: "built-in".into(),
            partial,
            changes,
            elsewhere: Vec::new(),
        };
        // A benchmark item only records the mount options; the fs item
        // remounts its filesystem; a later item finds it as it was.
        let mut r = rec(vec![change("mount options", ChangeStatus::Recorded)], false);
        merge_profile(
            &mut r,
            rec(
                vec![
                    change("mount options", ChangeStatus::Applied),
                    change("/srv", ChangeStatus::Applied),
                ],
                true,
            ),
        );
        merge_profile(
            &mut r,
            rec(vec![change("mount options", ChangeStatus::Recorded)], false),
        );
        let got: Vec<(&str, ChangeStatus)> = r
            .changes
            .iter()
            .map(|c| (c.name.as_str(), c.status))
            .collect();
        assert_eq!(
            got,
            [
                ("mount options", ChangeStatus::Applied),
                ("/srv", ChangeStatus::Applied)
            ]
        );
        assert!(r.partial);
    }
}
