//! `scalebench __boot NAME=kernel:PATH -- ARGS…` (or
//! `NAME=kernel:debian:VERSION`): one command in a guest.

use super::BootArgs;
use crate::systems::spec::{Kind, SystemSpec};
use anyhow::{Context, bail};
use std::process::ExitCode;
use std::time::Duration;

/// Boots the system, runs the command, prints what it printed; exits
/// with its code.
pub fn boot(b: &BootArgs) -> anyhow::Result<ExitCode> {
    let spec: SystemSpec = b.system.parse().map_err(anyhow::Error::msg)?;
    // ^C stops the download or the guest, which are killed and reaped.
    crate::harness::reaper::install();
    // A kernel of the cache stays held (kept from `kernels prune`) until
    // the guest is gone.
    let (k, _held) = match &spec.kind {
        Kind::Kernel(k) => (k.clone(), None),
        Kind::Debian(d) => {
            let cache = crate::systems::debian::cache::Cache::locate(None)?;
            let r = crate::systems::debian::fetch::resolve(&d.asked, &cache, &mut |m| {
                sys::say!("{}: {m}", spec.name)
            })?;
            sys::say!(
                "{}: kernel:debian:{} is {}",
                spec.name,
                d.asked,
                r.summary()
            );
            (d.kernel(&r.held), Some(r.held))
        }
        _ => bail!("__boot {}: only a kernel: system boots here", b.system),
    };
    let k = &k;
    if let Some(keep) = &b.keep
        && keep.exists()
    {
        bail!(
            "--keep {}: exists (a new directory is made)",
            keep.display()
        );
    }
    let init = match &b.init {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("this binary")?,
    };
    let limit = Duration::from_secs(b.limit);
    let once = crate::systems::qemu::run_once(
        k,
        &spec.name,
        &init,
        &b.args,
        &crate::systems::qemu::OnceOptions {
            keep: b.keep.as_deref(),
            workdir: b.workdir.as_deref(),
            limit,
            clock: b.guest_clock.unwrap_or_default(),
        },
    )?;
    sys::say!(
        "{}: Linux {} under QEMU ({}), shares by {}",
        spec.name,
        once.release,
        once.accel,
        once.share.name()
    );
    sys::stop::out_raw(&once.ran.stdout);
    sys::stop::say_raw(&once.ran.stderr);
    Ok(ExitCode::from(u8::try_from(once.ran.code).unwrap_or(1)))
}
