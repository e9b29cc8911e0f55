//! One item of a plan (a benchmark with all its series, or a workload) as
//! the run request that measures it on another system (`scalebench __run
//! --output FILE REQUEST`, the request as JSON: [`RunSpec`]), with every
//! option that shapes what is measured and none that says where this
//! machine's files go. The other system writes a result file of its own;
//! the run here keeps its items in that system's file.

use super::plan::{Target, WorkTarget};
use super::spec::RunSpec;
use crate::systems::qemu::GuestClock;
use crate::workloads::Size;

/// One item of a plan, in the order the plan runs them.
#[derive(Clone, Copy)]
pub enum RemoteItem<'a> {
    /// A benchmark, every series of it (its variants).
    Bench(&'a Target),
    /// A workload.
    Work(&'a WorkTarget),
}

impl RemoteItem<'_> {
    /// Its name as `scalebench list` shows it.
    pub fn name(&self) -> &'static str {
        match self {
            RemoteItem::Bench(t) => t.bench.info().name,
            RemoteItem::Work(w) => w.workload.info().name,
        }
    }
}

/// The run request that measures `item` of a plan of `spec` on another
/// system: a benchmark at the n this plan gives it, a workload at its
/// size with the sweep and its own options, and every option that shapes
/// what is measured; none of where this plan runs (its systems, hosts,
/// profiles and their files).
pub fn item_spec(spec: &RunSpec, item: RemoteItem) -> RunSpec {
    let mut x = RunSpec {
        targets: vec![item.name().to_string()],
        max: None,
        full: false,
        profiles: Vec::new(),
        systems: Vec::new(),
        hosts: Vec::new(),
        guest_bin: None,
        guest_clock: None,
        ssh_config: None,
        ..spec.clone()
    };
    match item {
        RemoteItem::Bench(t) => {
            x.max = Some(t.n);
            x.sweep = None;
            x.warm_up = None;
            x.sample_time = None;
            x.samples = None;
            x.baseline = None;
            x.given = Default::default();
        }
        RemoteItem::Work(w) => x.full = w.size == Size::Full,
    }
    x
}

/// `scalebench`'s arguments (without the program) that measure `item` of
/// `spec`'s plan on another system ([`item_spec`]) under the tuning
/// profile `profile` there (a built-in name or a file there), if any, a
/// guest told what its clock counts (`clock`: instructions travel as the
/// request's `own_clock`), its
/// result file written to `out` there: `__run --output OUT REQUEST`,
/// quiet, with no HTML report (agent protocol 3).
pub fn item_args(
    spec: &RunSpec,
    item: RemoteItem,
    profile: Option<&str>,
    clock: Option<GuestClock>,
    out: &str,
) -> Vec<String> {
    let mut x = item_spec(spec, item);
    x.profiles = profile.into_iter().map(String::from).collect();
    x.own_clock = clock.filter(|c| *c == GuestClock::Instructions);
    vec![
        "__run".to_string(),
        "--output".to_string(),
        out.to_string(),
        x.to_json(),
    ]
}
