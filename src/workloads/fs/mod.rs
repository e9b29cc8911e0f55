//! The filesystem workloads, after the seeds' "Round 2" (an image site
//! unpacked, updated, served cold and warm, deleted) and the Rothman–Buckman
//! file-size test.
//!
//! - `fs`: the image site ([`corpus`]): (a) unpack archive 1 with our own
//!   extractor ([`extract`]); (b) unpack archive 2, in request order, on top;
//!   (c) drop the caches and replay the request log over HTTP (100
//!   connections, 10 requests each) against `scalebench serve` with 1
//!   process, (d) again with 32; (e) both again warm; (f) delete it all.
//!   Every phase is timed with its throughput sampled every 250 ms, and the
//!   sync after a writing phase is timed on its own.
//! - `fs-sizes`: write and read many files of 8, 16 and 128 KB (`--sizes`),
//!   with and without an fsync per file ([`sizes`]).
//!
//! Both run on every place asked for: directories (`--dir`) and filesystems
//! made on loop devices (`--mkfs`), one after the other, each a `target` of
//! the rows.

mod cold;
pub mod corpus;
pub mod extract;
pub mod ops;
mod options;
mod sizes;
pub mod target;

pub use cold::ColdBy;
pub use options::FsOptions;

pub use sizes::FsSizes;
pub use target::{FsSpec, Place, parse_bytes, parse_mkfs};

use super::http::{Server, ServerSpec};
use super::{Info, Size, Workload, WorkloadOptions, finish};
use crate::ctx::Ctx;
use crate::harness::phase::{self, DEFAULT_INTERVAL};
use crate::harness::progress::Progress;
use crate::net::load::{self, Target as LoadTarget};
use crate::results::{PhaseStats, WorkloadResult, WorkloadRow};
use crate::stop::interrupted;
use corpus::{Archive, Corpus, Spec};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Default loop filesystem size, at least.
pub const DEFAULT_FS_SIZE: u64 = 4 << 30;

/// The loop filesystem size when none is given: 4 GiB, or room for `need`
/// with a quarter to spare, in whole GiB.
pub fn default_fs_size(need: u64) -> u64 {
    let want = need.saturating_add(need / 4);
    DEFAULT_FS_SIZE.max(want.div_ceil(1 << 30).saturating_mul(1 << 30))
}

/// The `fs` workload.
pub struct Fs;

static FS: Info = Info {
    name: "fs",
    what: "the image site: unpack a generated tar.gz of images and thumbnails with plain system calls, unpack a second archive in request order on top, replay the request log over HTTP (100 connections) cold and warm with 1 and 32 server processes, delete everything; every phase timed, throughput every 250 ms",
    quick: false,
    between_hosts: false,
    several_clients: false,
};

/// One phase row.
fn phase_row(
    label: &str,
    target: &str,
    params: BTreeMap<String, serde_json::Value>,
    phase: Option<PhaseStats>,
    load: Option<crate::results::LoadStats>,
    error: Option<String>,
) -> WorkloadRow {
    WorkloadRow {
        label: label.to_string(),
        target: Some(target.to_string()),
        params,
        load,
        phase,
        sweep: None,
        error,
    }
}

/// Makes `place` (the `index`-th of the run) ready for a workload needing
/// `need`; on failure, the `setup` row that says why, under the
/// place's label.
fn prepare_place(
    place: &Place,
    index: usize,
    ctx: &Ctx,
    opts: &WorkloadOptions,
    need: target::Need,
) -> Result<target::Target, Box<WorkloadRow>> {
    let fs: FsOptions = opts.own();
    target::prepare(
        place,
        ctx.workdir(),
        index,
        fs.fs_size.unwrap_or_else(|| default_fs_size(need.bytes)),
        fs.mount_opts.as_deref().or(opts.profile_mounts.as_deref()),
        need,
    )
    .map_err(|e| {
        let label = match place {
            Place::Dir(d) | Place::WorkDir(d) => format!("dir {}", d.display()),
            Place::Mkfs(s) => s.kind.clone(),
        };
        Box::new(phase_row(
            "setup",
            &label,
            BTreeMap::new(),
            None,
            None,
            Some(e),
        ))
    })
}

/// The note for a result some of whose targets could not drop their
/// caches (`suffix` says what that means for the rows).
fn warm_only_note(infos: &[serde_json::Value], suffix: &str) -> Option<String> {
    infos
        .iter()
        .any(|i| {
            i["cache"]
                .as_str()
                .is_some_and(|c| c.starts_with("warm only"))
        })
        .then(|| format!("warm only: the caches could not be dropped{suffix}"))
}

/// Unpacks one archive of `corpus` into `site` as a timed phase, then
/// syncs (timed apart).
fn unpack(corpus: &Arc<Corpus>, which: Archive, site: &Path) -> Result<PhaseStats, String> {
    let (reader, generator) = corpus::spawn_archive(Arc::clone(corpus), which);
    let (mut stats, r) = phase::run("files", DEFAULT_INTERVAL, |c| {
        let mut gz = flate2::read::GzDecoder::new(reader);
        let got = extract::extract(&mut gz, site, c)?;
        // Read to the end: the gzip trailer (and its CRC check), and the
        // generator never finds its reader gone.
        std::io::copy(&mut gz, &mut std::io::sink())?;
        Ok::<_, extract::ExtractError>(got)
    });
    // The generator ends when the reader is dropped (with the extractor).
    let g = generator.join();
    r.map_err(|e| e.to_string())?;
    match g {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(format!("generating the archive: {e}")),
        Err(_) => return Err("the archive generator panicked".into()),
    }
    stats.sync_seconds = Some(ops::sync_dir(site).map_err(|e| e.to_string())?);
    Ok(stats)
}

/// Replays `urls` with 100 connections of 10 requests each as a timed phase.
fn replay(
    server: &Server,
    paths: &[String],
) -> Result<(PhaseStats, crate::results::LoadStats), String> {
    let targets = paths
        .iter()
        .map(|p| LoadTarget::parse(&format!("{}{p}", server.url)).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let (stats, r) = phase::run("requests", DEFAULT_INTERVAL, |c| {
        load::run(&load::LoadOptions {
            per_connection: Some(10),
            total: Some(paths.len() as u64),
            // Cold caches on slow disks: a request may wait on many reads.
            timeout: Duration::from_secs(60),
            live: Some(Arc::clone(c)),
            ..load::LoadOptions::new(targets, 100)
        })
    });
    let o = r.map_err(|e| e.to_string())?;
    Ok((stats, o.stats()))
}

/// A place in words, for a note: its directory, or the work directory a
/// loop image of its kind goes in.
fn place_name(p: &Place, ctx: &Ctx) -> String {
    match p {
        Place::Dir(d) | Place::WorkDir(d) => d.display().to_string(),
        Place::Mkfs(s) => format!("{} (--mkfs {})", ctx.workdir().display(), s.kind),
    }
}

/// The fewest files `--fit` shrinks the site to: below, the site stays as
/// asked (and the place's own check refuses it, saying why).
const FIT_MIN_FILES: u64 = 1000;

/// The share of a site that `room` holds with a tenth to spare, of what it
/// needs in all (`needed`) less the part that does not shrink with it
/// (`fixed`); unbounded where the room is not known.
fn fit_share(room: Option<u64>, needed: u64, fixed: u64) -> f64 {
    room.map_or(f64::INFINITY, |r| {
        (0.9 * r as f64 - fixed as f64).max(0.0) / (needed as f64 - fixed as f64).max(1.0)
    })
}

/// The corpus `asked` shrunk (`--fit`) until every place's room holds it
/// with a tenth to spare: files and bytes by one factor, the requests as
/// asked. Its plan, and a note saying from what and why when it shrank,
/// or why it did not (below [`FIT_MIN_FILES`]: the site as asked).
fn fit_corpus(asked: Spec, rooms: &[(String, target::Room)]) -> (Spec, Corpus, Option<String>) {
    let mut spec = asked;
    let mut corpus = Corpus::new(spec);
    let fixed = target::disk_need(0, 0);
    let mut first: Option<String> = None;
    for _ in 0..8 {
        let (files, bytes) = corpus.final_totals();
        let need = target::disk_need(files, bytes);
        let worst = rooms
            .iter()
            .flat_map(|(name, room)| {
                let inodes = crate::units::fmt_n(room.inodes.unwrap_or(0) as f64);
                [
                    (
                        fit_share(room.bytes, need.bytes, fixed.bytes),
                        format!("{name} has {} free", target::human(room.bytes.unwrap_or(0))),
                    ),
                    (
                        fit_share(room.inodes, need.inodes, fixed.inodes),
                        format!("{name} has {inodes} inodes free"),
                    ),
                ]
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        let Some((f, why)) = worst.filter(|w| w.0 < 1.0) else {
            break;
        };
        let why = first.get_or_insert_with(|| {
            format!(
                "{why}, the site as asked needs about {} and {} inodes",
                target::human(need.bytes),
                crate::units::fmt_n(need.inodes as f64)
            )
        });
        spec.files = (spec.files as f64 * f * 0.99) as u64;
        spec.bytes = (spec.bytes as f64 * f * 0.99) as u64;
        if spec.files < FIT_MIN_FILES {
            let note = format!(
                "not fitted (--fit): {why}; fitted it would hold fewer than {} files, no measure of the site",
                crate::units::fmt_n(FIT_MIN_FILES as f64)
            );
            return (asked, Corpus::new(asked), Some(note));
        }
        corpus = Corpus::new(spec);
    }
    let note = first.map(|why| {
        format!(
            "fitted to this machine (--fit): {} files and {} asked, {} files and {} run: {why}",
            crate::units::fmt_n(asked.files as f64),
            target::human(asked.bytes),
            crate::units::fmt_n(spec.files as f64),
            target::human(spec.bytes)
        )
    });
    (spec, corpus, note)
}

/// The corpus `asked` fitted (`--fit`) to the room of every place the
/// workload measures in `ctx`: [`fit_corpus`] of their rooms.
fn fitted(opts: &WorkloadOptions, ctx: &Ctx, asked: Spec) -> (Spec, Corpus, Option<String>) {
    let fs: FsOptions = opts.own();
    let rooms: Vec<(String, target::Room)> = fs
        .places(ctx)
        .iter()
        .map(|p| {
            (
                place_name(p, ctx),
                target::room(p, ctx.workdir(), fs.fs_size),
            )
        })
        .collect();
    fit_corpus(asked, &rooms)
}

/// Sizes of a run: (files, bytes, requests).
fn corpus_size(opts: &WorkloadOptions) -> Spec {
    let fs: FsOptions = opts.own();
    let (files, bytes) = match opts.size {
        Size::Quick => (20_000, 200_000_000),
        Size::Full => (1_000_000, 10_000_000_000),
    };
    Spec {
        seed: fs.seed,
        files: fs.files.unwrap_or(files).max(2),
        bytes: fs.bytes.unwrap_or(bytes),
        requests: fs.requests.unwrap_or(10_000).max(1),
    }
}

/// The phases, in order, as labelled in results.
pub const PHASES: [&str; 7] = [
    "unpack",
    "unpack 2 (request order)",
    "replay cold, 1 process",
    "replay cold, 32 processes",
    "replay warm, 1 process",
    "replay warm, 32 processes",
    "delete",
];

impl Workload for Fs {
    fn info(&self) -> &'static Info {
        &FS
    }

    fn flags(&self) -> &'static [super::WorkloadFlag] {
        options::FS_FLAGS
    }

    fn options(&self, asked: &super::Asked) -> Result<Option<super::Own>, super::FlagError> {
        FsOptions::own(asked)
    }

    fn dirs(&self, opts: &WorkloadOptions) -> Vec<PathBuf> {
        opts.own::<FsOptions>().dirs()
    }

    fn mounting(&self, opts: &WorkloadOptions) -> super::Mounting {
        opts.own::<FsOptions>().mounting()
    }

    fn measured_dirs(&self, opts: &WorkloadOptions, workdir: &Path) -> Vec<PathBuf> {
        opts.own::<FsOptions>().existing(workdir)
    }

    fn size_words(&self, opts: &WorkloadOptions, here: Option<&Ctx>) -> Option<String> {
        let s = corpus_size(opts);
        let asked = format!(
            "{} files, {}, {} requests",
            units::fmt_n(s.files as f64),
            units::fmt_bytes(s.bytes),
            units::fmt_n(s.requests as f64),
        );
        Some(match (opts.fit, here) {
            (false, _) => asked,
            (true, None) => {
                format!(
                    "{asked}; --fit sizes it to what its places hold when it runs, unseen here (params.fitted says)"
                )
            }
            (true, Some(ctx)) => match fitted(opts, ctx, s).2 {
                Some(note) => format!("{asked}; {note}"),
                None => format!("{asked}; every place holds them as asked (--fit changes nothing)"),
            },
        })
    }

    fn run(&self, ctx: &Ctx, opts: &WorkloadOptions, progress: &mut Progress) -> WorkloadResult {
        let asked = corpus_size(opts);
        progress.phase("generating the corpus plan");
        let places = opts.own::<FsOptions>().places(ctx);
        let (spec, corpus, fitted) = if opts.fit {
            fitted(opts, ctx, asked)
        } else {
            (asked, Corpus::new(asked), None)
        };
        let corpus = Arc::new(corpus);
        let (files, bytes) = corpus.final_totals();
        let need = target::disk_need(files, bytes);
        let mut params = BTreeMap::new();
        params.insert("seed".into(), json!(spec.seed));
        params.insert("files".into(), json!(files));
        params.insert("bytes".into(), json!(bytes));
        params.insert("requests".into(), json!(spec.requests));
        let site = Site {
            archives: [Archive::Site, Archive::Requests].map(|a| (a, corpus.archive_totals(a))),
            bytes,
            paths: corpus.log().iter().map(|&f| corpus.path(f)).collect(),
            corpus,
        };
        for (k, (_, (n, b))) in site.archives.iter().enumerate() {
            params.insert(format!("archive{}_files", k + 1), json!(n));
            params.insert(format!("archive{}_bytes", k + 1), json!(b));
        }
        params.insert("connections".into(), json!(100));
        params.insert("requests_per_connection".into(), json!(10));
        params.insert(
            "interval_ms".into(),
            json!(DEFAULT_INTERVAL.as_millis() as u64),
        );

        let fs_opts: FsOptions = opts.own();
        params.insert("preload".into(), json!(fs_opts.preload));
        fs_opts.path.record(&mut params, true);
        if let Some(note) = &fitted {
            params.insert("fitted".into(), json!(note));
        }
        let per_target = PHASES.len() as u64 + if fs_opts.preload { 2 } else { 0 };
        progress.begin(FS.name, per_target * places.len() as u64);
        let mut rows = Vec::new();
        let mut notes: Vec<String> = fitted.into_iter().collect();
        let mut infos = Vec::new();
        for (i, place) in places.iter().enumerate() {
            if interrupted() {
                break;
            }
            let t = match prepare_place(place, i, ctx, opts, need) {
                Ok(t) => t,
                Err(row) => {
                    rows.push(*row);
                    progress.advance(per_target);
                    continue;
                }
            };
            let mut info = t.info.clone();
            info["label"] = json!(t.label);
            let (r, note) = run_target(ctx, &fs_opts, &site, &t, progress, &mut notes);
            if let Some(n) = note {
                info["cache"] = json!(n);
            }
            infos.push(info);
            rows.extend(r);
        }
        params.insert("targets".into(), json!(infos));
        progress.finish(&format!("{} phases", rows.len()));
        notes.extend(warm_only_note(&infos, " (see targets)"));
        finish(&FS, params, rows, notes)
    }
}

/// The generated site and what is known of it before anything is written.
struct Site {
    corpus: Arc<Corpus>,
    /// The request log as URL paths.
    paths: Vec<String>,
    /// Bytes of the site after both archives.
    bytes: u64,
    /// Each archive with its (files, bytes).
    archives: [(Archive, (usize, u64)); 2],
}

/// Every phase on one target (notes on cold rows that were not cold into
/// `notes`). Returns the rows and, when the caches could not be dropped,
/// the note saying so (`warm only: …` or `evicted …`).
fn run_target(
    ctx: &Ctx,
    fs: &FsOptions,
    site_plan: &Site,
    t: &target::Target,
    progress: &mut Progress,
    notes: &mut Vec<String>,
) -> (Vec<WorkloadRow>, Option<String>) {
    let mut rows = Vec::new();
    let site: PathBuf = t.root.join("site");
    let label = t.label.as_str();
    if let Err(e) = std::fs::create_dir(&site) {
        rows.push(phase_row(
            "setup",
            label,
            BTreeMap::new(),
            None,
            None,
            Some(format!("{}: {e}", site.display())),
        ));
        return (rows, None);
    }
    if !unpack_archives(site_plan, t, &site, progress, &mut rows) {
        return (rows, None);
    }
    let mut replay = Replays {
        ctx,
        fs,
        label,
        site: &site,
        image: t.image.as_deref(),
        progress,
        notes,
    };
    let cache_note = replay.all(site_plan, &mut rows);
    delete_all(site_plan, t, progress, &mut rows);
    (rows, cache_note)
}

/// Phases (a) and (b): the two archives unpacked into `site` on target
/// `t`, a row each into `rows`. False when the run on this target ends
/// here (an archive failed, or ^C), its files removed.
fn unpack_archives(
    site_plan: &Site,
    t: &target::Target,
    site: &Path,
    progress: &mut Progress,
    rows: &mut Vec<WorkloadRow>,
) -> bool {
    let label = t.label.as_str();
    let corpus = &site_plan.corpus;
    for (name, &(which, (files, bytes))) in PHASES[..2].iter().zip(&site_plan.archives) {
        progress.phase(&format!("{label}: {name}"));
        let mut p = BTreeMap::new();
        p.insert("archive_files".into(), json!(files));
        p.insert("archive_bytes".into(), json!(bytes));
        match unpack(corpus, which, site) {
            Ok(s) => rows.push(phase_row(name, label, p, Some(s), None, None)),
            Err(e) => {
                rows.push(phase_row(name, label, p, None, None, Some(e)));
                // Nothing to serve: delete what there is and stop here.
                let _ = ops::remove_tree(&t.root, &crate::net::load::ItemCounters::default());
                return false;
            }
        }
        progress.advance(1);
        if interrupted() {
            let _ = ops::remove_tree(&t.root, &crate::net::load::ItemCounters::default());
            return false;
        }
    }
    true
}

/// What the replays of one target share.
struct Replays<'a, 'c> {
    ctx: &'a Ctx<'c>,
    fs: &'a FsOptions,
    label: &'a str,
    site: &'a Path,
    /// The loop device image under the target, if it has one.
    image: Option<&'a Path>,
    progress: &'a mut Progress,
    notes: &'a mut Vec<String>,
}

/// The files of the request log `paths` under `site`, each once, for
/// [`cold::resident`].
fn sample_files(site: &Path, paths: &[String]) -> Vec<PathBuf> {
    let mut seen = std::collections::HashSet::new();
    paths
        .iter()
        .filter(|p| seen.insert(p.as_str()))
        .take(cold::SAMPLE)
        .map(|p| site.join(p.trim_start_matches('/')))
        .collect()
}

impl Replays<'_, '_> {
    /// Phases (c)–(e): the request log replayed against a server of the
    /// site, cold and warm, by one process and by 32, a row each into
    /// `rows` (and before each cold one, with `--fs-preload`, the `find`
    /// row). Returns the note saying the caches could not be dropped, if
    /// they could not.
    fn all(&mut self, site_plan: &Site, rows: &mut Vec<WorkloadRow>) -> Option<String> {
        let paths = &site_plan.paths[..];
        let sample = sample_files(self.site, paths);
        let label = self.label;
        let mut cache_note = None;
        let mut cold_ran = false;
        let mut primed = false;
        for (k, (cold, processes)) in [(true, 1u32), (true, 32), (false, 1), (false, 32)]
            .into_iter()
            .enumerate()
        {
            if interrupted() {
                break;
            }
            let base = PHASES[2 + k];
            let name = if cold && self.fs.preload {
                base.replace("replay cold", "replay cold after find")
            } else {
                base.to_string()
            };
            self.progress.phase(&format!("{label}: {name}"));
            let mut p = BTreeMap::new();
            p.insert("processes".into(), json!(processes));
            p.insert("cache".into(), json!(if cold { "cold" } else { "warm" }));
            if cold {
                match cold::make_cold(self.fs.cold, self.ctx.workdir(), &sample) {
                    Err(e) => {
                        cache_note = Some(format!("warm only: {e}"));
                        let why = format!("not run: {e}");
                        rows.push(phase_row(&name, label, p, None, None, Some(why)));
                        self.progress.advance(1 + u64::from(self.fs.preload));
                        continue;
                    }
                    Ok(c) => {
                        p.extend(c.params);
                        cache_note = c.evicted.or(cache_note);
                        self.notes
                            .extend(cold::still_warm_note(label, &name, c.share));
                    }
                }
                if let Some(img) = self.image {
                    let below = cold::image_resident(img, &sample);
                    p.insert("image_resident_after".into(), json!(below));
                    self.notes
                        .extend(cold::image_resident_note(label, &name, below));
                }
                if self.fs.preload {
                    rows.push(self.find_row(base));
                }
            }
            let server = Server::start(
                &self.ctx.hosts().client,
                self.site,
                &[],
                processes,
                false,
                false,
                ServerSpec::scalebench(self.fs.path),
            );
            let server = match server {
                Ok(s) => s,
                Err(e) => {
                    rows.push(phase_row(&name, label, p, None, None, Some(e)));
                    self.progress.advance(1);
                    continue;
                }
            };
            if !cold && !primed && !cold_ran {
                // The cold rows did not run: read everything once first, so
                // that "warm" means warm.
                let _ = replay(&server, paths);
                primed = true;
            }
            p.insert("server_info".into(), server.info());
            rows.push(replay_row(&server, paths, &name, label, p));
            cold_ran |= cold;
            drop(server);
            self.progress.advance(1);
        }
        cache_note
    }

    /// The `find` before the replay `before`: every directory of the site
    /// read, timed as a phase of its own.
    fn find_row(&mut self, before: &str) -> WorkloadRow {
        let name = format!("find, before {before}");
        self.progress.phase(&format!("{}: {name}", self.label));
        let (s, r) = phase::run("directories", DEFAULT_INTERVAL, |c| {
            ops::walk_dirs(self.site, c)
        });
        self.progress.advance(1);
        let mut p = BTreeMap::new();
        match r {
            Ok(entries) => {
                p.insert("entries".into(), json!(entries));
                phase_row(&name, self.label, p, Some(s), None, None)
            }
            Err(e) => phase_row(&name, self.label, p, None, None, Some(e.to_string())),
        }
    }
}

/// The row of phase `name` on target `label` (with params `p`): the
/// request log `paths` replayed once against `server`, an error when not
/// every request was answered.
fn replay_row(
    server: &Server,
    paths: &[String],
    name: &str,
    label: &str,
    p: BTreeMap<String, serde_json::Value>,
) -> WorkloadRow {
    match replay(server, paths) {
        Ok((s, l)) => {
            let error = (l.requests != paths.len() as u64 || l.failed > 0).then(|| {
                format!(
                    "{} of {} requests answered, {} failed",
                    l.requests,
                    paths.len(),
                    l.failed
                )
            });
            phase_row(name, label, p, Some(s), Some(l), error)
        }
        Err(e) => phase_row(name, label, p, None, None, Some(e)),
    }
}

/// Phase (f): everything on target `t` deleted, its row into `rows`.
fn delete_all(
    site_plan: &Site,
    t: &target::Target,
    progress: &mut Progress,
    rows: &mut Vec<WorkloadRow>,
) {
    let label = t.label.as_str();
    progress.phase(&format!("{label}: delete"));
    let (mut s, r) = phase::run("files", DEFAULT_INTERVAL, |c| ops::remove_tree(&t.root, c));
    match r {
        Ok(()) => {
            s.sync_seconds = ops::sync_dir(&t.root).ok();
            // The bytes removed are the site's (not counted per file: that
            // would take a stat each inside the timed phase).
            s.bytes = site_plan.bytes;
            rows.push(phase_row(
                PHASES[6],
                label,
                BTreeMap::new(),
                Some(s),
                None,
                None,
            ));
        }
        Err(e) => {
            rows.push(phase_row(
                PHASES[6],
                label,
                BTreeMap::new(),
                None,
                None,
                Some(e.to_string()),
            ));
        }
    }
    progress.advance(1);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(mib: u64) -> Vec<(String, target::Room)> {
        vec![(
            "/small".to_string(),
            target::Room {
                bytes: Some(mib << 20),
                inodes: None,
            },
        )]
    }

    #[test]
    fn a_fitted_site_holds_in_its_room_with_a_tenth_to_spare_or_is_left_as_asked() {
        let asked = Spec {
            seed: 1,
            files: 100_000,
            bytes: 1 << 30,
            requests: 100,
        };
        let (spec, corpus, note) = fit_corpus(asked, &room(128));
        let (files, bytes) = corpus.final_totals();
        let need = target::disk_need(files, bytes);
        assert!(need.bytes as f64 <= 0.9 * (128 << 20) as f64, "{need:?}");
        assert!(
            spec.files >= FIT_MIN_FILES && spec.files < asked.files,
            "{spec:?}"
        );
        let note = note.unwrap();
        assert!(
            note.starts_with("fitted to this machine (--fit): 100 000 files"),
            "{note}"
        );
        // Room enough: as asked, nothing said.
        let (spec, _, note) = fit_corpus(asked, &room(64 << 10));
        assert_eq!((spec.files, note), (asked.files, None));
        // Too little for a thousand files: as asked, said why.
        let (spec, _, note) = fit_corpus(asked, &room(72));
        assert_eq!(spec.files, asked.files);
        assert!(
            note.unwrap()
                .starts_with("not fitted (--fit): /small has 72.0 MiB free")
        );
    }
}
