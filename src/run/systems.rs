//! The systems a run measures side by side (`run --system NAME=SPEC`):
//! this machine, measured in this process as always, and Linux kernels
//! booted in QEMU ([`crate::systems::qemu`]), each running one item of
//! the plan at a time as `scalebench run ITEM …` ([`super::remote`]) while
//! the others wait paused. What a guest measured comes back as a result
//! file of its own, whose series and workloads join that system's file
//! here; its system record is the guest's own, with how it ran
//! (`virtualization`: KVM, or emulated by TCG and why; its vCPUs' pins).

use super::RunOptions;
use super::files::Recording;
use super::remote::{Item, item_args};
use crate::harness::progress::Progress;
use crate::results::{self, BenchResult, Params, ResultFile, Status, SystemInfo, WorkloadResult};
use crate::systems::qemu::Guest;
use crate::systems::spec::{Kind, SystemSpec};
use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a guest has to boot and answer.
const BOOT_LIMIT: Duration = Duration::from_secs(180);
/// How long one item may take in a guest (an emulated full-size workload
/// is long; a guest that takes longer is taken for hung).
const ITEM_LIMIT: Duration = Duration::from_secs(6 * 3600);
/// How long a short command (`--version`, `sysinfo`) may take in a guest.
const COMMAND_LIMIT: Duration = Duration::from_secs(120);

/// One system of the run, opened.
pub enum Opened {
    /// This machine: the plan runs here, in this process.
    Here,
    /// A guest, booted, paused until its turn.
    Guest(Box<GuestSystem>),
}

/// A `kernel:` system: its guest and what it has run.
pub struct GuestSystem {
    name: String,
    guest: Guest,
    /// The guest's system record, with how it ran.
    pub system: SystemInfo,
    items: u32,
    /// Why the guest is gone, once it is.
    lost: Option<String>,
}

/// The static scalebench a guest boots with: `asked`, else this program
/// if it is static, else the musl build beside it
/// (`target/x86_64-unknown-linux-musl/PROFILE/scalebench` for
/// `target/PROFILE/scalebench`).
pub fn guest_binary(asked: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(a) = asked {
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
/// run this very version, their vCPUs pinned, their system records
/// taken), then paused.
pub fn open(
    specs: &[SystemSpec],
    guest_bin: Option<&Path>,
    o: &RunOptions,
    workdir: &Path,
    progress: &mut Progress,
) -> anyhow::Result<Vec<Opened>> {
    let mut v = Vec::new();
    let mut bin: Option<PathBuf> = None;
    for s in specs {
        match &s.kind {
            Kind::Local => v.push(Opened::Here),
            Kind::Kernel(k) => {
                let bin = match &bin {
                    Some(b) => b.clone(),
                    None => bin.insert(guest_binary(guest_bin)?).clone(),
                };
                progress.note_run(&format!(
                    "{}: booting {} in QEMU",
                    s.name,
                    k.kernel.display()
                ));
                let dir = workdir.join(format!("guest-{}", s.name));
                let guest = Guest::boot(k, &bin, &dir, BOOT_LIMIT)
                    .with_context(|| format!("--system {}", s.name))?;
                let g = GuestSystem::ready(s, guest, o)
                    .with_context(|| format!("--system {}", s.name))?;
                progress.note_run(&g.summary());
                v.push(Opened::Guest(Box::new(g)));
            }
            Kind::Image(_) | Kind::Ssh { .. } => {
                bail!("--system {}: not built yet", s.name)
            }
        }
    }
    Ok(v)
}

impl GuestSystem {
    /// The booted guest checked, its vCPUs pinned, its record taken, and
    /// paused.
    fn ready(s: &SystemSpec, mut guest: Guest, o: &RunOptions) -> anyhow::Result<GuestSystem> {
        let ours = format!("scalebench {}", env!("CARGO_PKG_VERSION"));
        let v = guest.run(&["--version".into()], COMMAND_LIMIT)?;
        if v.stdout.trim() != ours {
            bail!(
                "the guest's scalebench says `{}`, this is `{ours}`: build the static one again",
                v.stdout.trim()
            );
        }
        let pins = guest.pin_vcpus().unwrap_or_else(|e| {
            eprintln!("note: {}: vCPUs not pinned: {e:#}", s.name);
            Vec::new()
        });
        let mut args = vec!["sysinfo".to_string(), "--json".into()];
        if !o.record_sysctl.is_empty() {
            args.extend(["--record-sysctl".into(), o.record_sysctl.join(",")]);
        }
        let r = guest.run(&args, COMMAND_LIMIT)?;
        if r.code != 0 {
            bail!(
                "sysinfo in the guest failed ({}): {}",
                r.code,
                r.stderr.trim()
            );
        }
        let mut system: SystemInfo =
            serde_json::from_str(&r.stdout).context("the guest's sysinfo --json")?;
        let seen = system.virtualization.take().unwrap_or_default();
        system.virtualization = Some(results::Virtualization {
            kind: if guest.accel.emulated() { "tcg" } else { "kvm" }.into(),
            emulated: guest.accel.emulated(),
            hypervisor: seen.hypervisor,
            reason: Some(guest.accel.reason()),
            vcpu_pins: pins,
        });
        guest.pause()?;
        Ok(GuestSystem {
            name: s.name.clone(),
            guest,
            system,
            items: 0,
            lost: None,
        })
    }

    /// The guest in a line.
    fn summary(&self) -> String {
        format!(
            "{}: Linux {} under QEMU ({}), shares by {}",
            self.name,
            self.guest.release,
            self.guest.accel,
            self.guest.share.name()
        )
    }

    /// Runs `item` in the guest and keeps what it measured in `rec`: its
    /// series or workload, or a failed one saying why there is none.
    pub fn run_item(
        &mut self,
        o: &RunOptions,
        item: Item,
        rec: &mut Recording,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        if self.lost.is_none() {
            progress.note_run(&format!("{}: {} (in the guest) …", self.name, item.name()));
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
            Err(why) => {
                let why = format!("{}: {}: {why}", self.name, item.name());
                progress.note_run(&why);
                fail(rec, item, why);
            }
        }
        rec.save()
    }

    /// Runs `item`: the guest's result file, whatever it kept (an
    /// interrupted item keeps its finished series), or why there is none.
    fn measure(&mut self, o: &RunOptions, item: Item) -> Result<ResultFile, String> {
        self.items += 1;
        let name = format!("item-{}.json", self.items);
        let there = format!("{}/{name}", crate::systems::guest::OUT_DIR);
        let args = item_args(o, item, &there);
        let ran = self
            .guest
            .resume()
            .and_then(|()| self.guest.run(&args, ITEM_LIMIT));
        let paused = self.guest.pause();
        let here = self.guest.out_dir().join(&name);
        let file = results::load(&here).map_err(|e| e.to_string());
        match (ran, paused) {
            (Ok(r), Ok(())) => file.map_err(|e| {
                let tail: Vec<&str> = r.stderr.lines().rev().take(5).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                format!(
                    "scalebench ended with {} and no result file ({e}): {}",
                    r.code,
                    tail.join(" / ")
                )
            }),
            (Err(e), _) | (Ok(_), Err(e)) => {
                let why = format!("the guest is gone: {e:#}");
                if !crate::stop::interrupted() {
                    self.lost = Some(why.clone());
                }
                file.map_err(|_| why)
            }
        }
    }

    /// Powers the guest off.
    pub fn close(self) -> anyhow::Result<()> {
        let mut g = self.guest;
        let _ = g.resume();
        g.close()
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

/// Adds what a guest measured to `rec`, with the guest's record and
/// timer (the first file it sends sets them).
fn merge(rec: &mut Recording, f: ResultFile, system: &SystemInfo) {
    if rec.file.benchmarks.is_empty() && rec.file.workloads.is_empty() {
        rec.file.timer = f.timer.clone();
    }
    rec.file.system = system.clone();
    rec.file.benchmarks.extend(f.benchmarks);
    rec.file.workloads.extend(f.workloads);
}

/// Records `item` as failed in `rec`, saying why.
fn fail(rec: &mut Recording, item: Item, why: String) {
    match item {
        Item::Bench(t) => {
            let info = t.bench.info();
            rec.file.benchmarks.push(BenchResult {
                name: info.name.into(),
                series: info.name.into(),
                n_meaning: info.n_meaning.into(),
                timed: info.timed.into(),
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
            })
        }
        Item::Work(w) => {
            let info = w.workload.info();
            rec.file.workloads.push(WorkloadResult {
                name: info.name.into(),
                what: info.what.into(),
                status: Status::Failed,
                message: Some(why),
                params: Default::default(),
                rows: Vec::new(),
            })
        }
    }
}

/// Powers off every guest of `systems`.
pub fn close(systems: Vec<Opened>, progress: &mut Progress) {
    for s in systems {
        if let Opened::Guest(g) = s {
            let name = g.name.clone();
            if let Err(e) = g.close() {
                progress.note_run(&format!("{name}: {e:#}"));
            }
        }
    }
}
