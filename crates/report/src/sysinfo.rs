//! `scalebench sysinfo` in words: the system record a run keeps, one
//! line per fact, as the command prints it.

use std::io::Write;

/// Writes system record `s` as `sysinfo` prints it.
pub fn write_text(s: &results::SystemInfo, w: &mut dyn Write) -> crate::Result<()> {
    writeln!(w, "os          {} {} ({})", s.os, s.os_release, s.arch)?;
    writeln!(w, "version     {}", s.os_version)?;
    writeln!(w, "host        {}", s.hostname)?;
    writeln!(
        w,
        "cpu         {} × {}{}",
        s.cpu.count,
        s.cpu.model.as_deref().unwrap_or("unknown"),
        s.cpu
            .mhz
            .map_or(String::new(), |m| format!(" at {m:.0} MHz"))
    )?;
    let recorded = s.tuning.readings_recorded();
    let not_exposed = format!("{} by this system", crate::settings::NOT_EXPOSED);
    match &s.cpu.topology {
        Some(t) => writeln!(w, "topology    {}", t.words())?,
        None if recorded => writeln!(w, "topology    {not_exposed}")?,
        None => {}
    }
    match &s.tuning.cpuidle {
        Some(i) => writeln!(w, "cpuidle     {}", i.words())?,
        None if recorded => writeln!(w, "cpuidle     {not_exposed}")?,
        None => {}
    }
    if let Some(m) = s.memory_bytes {
        writeln!(w, "memory      {}", units::fmt_gib(m))?;
    }
    writeln!(w, "libc        {}", s.libc)?;
    for (k, v) in &s.limits {
        let f = |x: Option<u64>| x.map_or("unlimited".to_string(), |v| v.to_string());
        writeln!(w, "limit       {k} = {} / {}", f(v.soft), f(v.hard))?;
    }
    for (k, v) in &s.sysctls {
        writeln!(w, "sysctl      {k} = {v}")?;
    }
    if let Some(d) = &s.workdir {
        writeln!(
            w,
            "temp dir    {} on {} ({}, {}) mounted {}",
            d.path, d.mount_point, d.fs_type, d.device, d.mount_options
        )?;
    }
    // The work directory's filesystem is the line above; a run adds
    // those of its --dir directories.
    for f in s.filesystems.iter().skip(usize::from(s.workdir.is_some())) {
        writeln!(
            w,
            "filesystem  {} on {} ({}, {}) mounted {}",
            f.path, f.mount_point, f.fs_type, f.device, f.mount_options
        )?;
    }
    for f in &s.filesystems {
        let words = match &f.block {
            Some(b) => b.words(),
            None if !f.device.starts_with("/dev/") => format!("none ({} is no device)", f.device),
            None if recorded => not_exposed.clone(),
            None => continue,
        };
        writeln!(w, "block dev   {}: {words}", f.mount_point)?;
    }
    write_virtualization(s, w)?;
    write_tuning(&s.tuning, w)
}

/// How the system ran (native, or a KVM or TCG guest) and where its
/// kernel's build configuration was read.
fn write_virtualization(s: &results::SystemInfo, w: &mut dyn Write) -> crate::Result<()> {
    if let Some(v) = &s.virtualization {
        let mut words = vec![match v.kind.as_str() {
            "native" => "native: the machine as found".to_string(),
            k => format!("{k} guest"),
        }];
        if v.emulated {
            words.push("CPU emulated: times are not the speed of any machine".into());
        }
        if let Some(r) = &v.reason {
            words.push(r.clone());
        }
        if !v.vcpu_pins.is_empty() {
            let pins: Vec<String> = v.vcpu_pins.iter().map(|p| p.to_string()).collect();
            words.push(format!("vCPUs pinned to host CPUs {}", pins.join(" ")));
        }
        writeln!(w, "virtual     {}", words.join("; "))?;
    }
    match &s.kernel_config {
        Some(c) => writeln!(
            w,
            "kconfig     {} ({} options set)",
            c.source,
            c.options.len()
        )?,
        None => writeln!(
            w,
            "kconfig     not exposed (no /proc/config.gz, no /boot/config-{})",
            s.os_release
        )?,
    }
    Ok(())
}

/// The tuning part of `sysinfo`: governor, SMT, THP, load, the busiest
/// processes, steal, cgroup limits, NICs, mitigations.
fn write_tuning(t: &results::Tuning, w: &mut dyn Write) -> crate::Result<()> {
    let yes_no = |b: bool| if b { "on" } else { "off" }.to_string();
    let exposed = |v: Option<String>| {
        Some(v.unwrap_or_else(|| format!("{} by this system", crate::settings::NOT_EXPOSED)))
    };
    let fields = [
        ("governor", exposed(t.governor.clone())),
        ("boost", exposed(t.boost.map(yes_no))),
        ("smt", t.smt.clone()),
        ("smt active", t.smt_active.map(yes_no)),
        ("microcode", t.microcode.clone()),
        ("cmdline", t.kernel_cmdline.clone()),
        ("thp", t.thp_enabled.clone()),
        ("thp defrag", t.thp_defrag.clone()),
        ("clocksource", t.clocksource.clone()),
        ("hypervisor", t.hypervisor.clone()),
        ("machine", t.machine.clone()),
        (
            "load",
            t.load_average
                .map(|[a, b, c]| format!("{a:.2} {b:.2} {c:.2} (1, 5, 15 min)")),
        ),
    ];
    for (k, v) in fields {
        if let Some(v) = v {
            writeln!(w, "{k:<11} {v}")?;
        }
    }
    if let Some(b) = &t.busiest {
        if b.is_empty() {
            writeln!(w, "busiest     no other process used CPU over 200 ms")?;
        }
        for p in b {
            writeln!(
                w,
                "busiest     {:>5.1} %  {} (pid {})",
                p.percent, p.name, p.pid
            )?;
        }
    }
    for (k, v) in &t.sysctls {
        writeln!(w, "sysctl      {k} = {v}")?;
    }
    if let Some(p) = t.steal_percent {
        writeln!(
            w,
            "steal       {p:.2} % of CPU time stolen by the hypervisor over this command's 0.2 s"
        )?;
    }
    if let Some(l) = &t.cgroup_limits {
        writeln!(w, "cgroup      {}", cgroup_words(l))?;
    }
    if let Some(nics) = &t.nics {
        if nics.is_empty() {
            writeln!(w, "nic         none up but loopback")?;
        }
        for n in nics {
            writeln!(w, "nic         {}", nic_words(n))?;
        }
    }
    if let Some(f) = &t.firewall {
        writeln!(w, "firewall    {}", f.words())?;
    }
    if let Some(s) = &t.security {
        writeln!(w, "security    {}", s.words())?;
    }
    for (k, v) in &t.mitigations {
        writeln!(w, "mitigation  {k}: {v}")?;
    }
    Ok(())
}

/// A cgroup record in words: `memory 2.0 GiB, 1.5 CPUs, 4000 processes`.
fn cgroup_words(l: &results::CgroupLimits) -> String {
    let mut v = Vec::new();
    if let Some(b) = l.memory_bytes {
        v.push(format!("memory {}", units::fmt_memory(b)));
    }
    if let Some(c) = l.cpus {
        v.push(format!("{c} CPUs"));
    }
    if let Some(p) = l.pids {
        v.push(format!("{p} processes"));
    }
    if v.is_empty() {
        "no cgroup limit caps this process".into()
    } else {
        format!("capped at {}", v.join(", "))
    }
}

/// A network interface in words: `eth0 virtio_net, mtu 1500, rings rx 256
/// tx 256, offloads tso on, gso on, …`.
fn nic_words(n: &results::Nic) -> String {
    let mut v = vec![match &n.driver {
        Some(d) => format!("{} {d}", n.name),
        None => n.name.clone(),
    }];
    if let Some(s) = n.speed_mbps {
        v.push(format!("{s} Mbit/s"));
    }
    if let Some(m) = n.mtu {
        v.push(format!("mtu {m}"));
    }
    if n.rx_ring.is_some() || n.tx_ring.is_some() {
        let r = |x: Option<u32>| x.map_or("?".into(), |x| x.to_string());
        v.push(format!("rings rx {} tx {}", r(n.rx_ring), r(n.tx_ring)));
    }
    if let Some(q) = n.queue_words() {
        v.push(q);
    }
    let offloads = n.offloads.known();
    if !offloads.is_empty() {
        let words: Vec<String> = offloads
            .iter()
            .map(|(k, on)| format!("{k} {}", if *on { "on" } else { "off" }))
            .collect();
        v.push(format!("offloads {}", words.join(" ")));
    }
    v.join(", ")
}
