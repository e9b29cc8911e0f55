//! The pgbench workload's options: its flags, their defaults and checks,
//! and the `__agent pgbench` helper (a throwaway cluster on a server
//! host).

use super::BYTES_PER_SCALE;
use super::conninfo::Conninfo;
use crate::workloads::FlagError;
use crate::workloads::{Asked, Own, WorkloadFlag};
use std::path::PathBuf;

/// Which transactions pgbench runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `-S`: one indexed SELECT per transaction (DragonFly's).
    SelectOnly,
    /// The default TPC-B-like transaction: three UPDATEs, a SELECT, an
    /// INSERT.
    Tpcb,
}

impl Mode {
    /// Its name on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            Mode::SelectOnly => "select-only",
            Mode::Tpcb => "tpcb",
        }
    }
}

/// Options of the pgbench workload.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PgOptions {
    /// Target database size in bytes (the scale factor follows; default:
    /// quick 160 MB, full 1.6 GB).
    pub db_bytes: Option<u64>,
    /// The scale factor given directly (`--pg-scale`, as DragonFly's 800),
    /// instead of one following the database size.
    pub scale: Option<u64>,
    /// Modes, each a row (default: select-only).
    pub modes: Vec<Mode>,
    /// Connect over the unix socket instead of TCP.
    pub socket: bool,
    /// Sweep the database size against the memory it may use instead of
    /// the clients (the swapcache experiment).
    pub memory_sweep: bool,
    /// The memory the database may use (default: quick 256 MB, full 1 GB).
    pub memory_bytes: Option<u64>,
    /// With the memory sweep, sweep again with a second tier of memory
    /// (`--pg-second-tier swap[:DIR]`).
    pub second_tier: Option<SecondTier>,
    /// An existing server by libpq connection string instead of the
    /// throwaway cluster (checked by [`conninfo::Conninfo::parse`]).
    pub server: Option<String>,
    /// On a given server, drop and remake pgbench tables that were there
    /// before the run (without it such a server is refused).
    pub drop_tables: bool,
    /// Where the server and the clients run.
    pub pin: Pin,
}

/// Where the throwaway cluster's processes and pgbench run. With one
/// client on this 2-vCPU VM, TPS was 9 600–10 500 with both on one CPU
/// and 3 900–4 500 on two (every round trip a cross-CPU wake-up), and
/// unpinned runs land on either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pin {
    /// Left to the scheduler.
    #[default]
    None,
    /// Server and pgbench on CPU 0.
    Together,
    /// Server on CPU 0, pgbench on CPU 1.
    Apart,
}

impl Pin {
    /// (server CPU, client CPU).
    pub fn cpus(self) -> (Option<usize>, Option<usize>) {
        match self {
            Pin::None => (None, None),
            Pin::Together => (Some(0), Some(0)),
            Pin::Apart => (Some(0), Some(1)),
        }
    }

    /// Where it pins, in words.
    pub fn words(self) -> &'static str {
        match self {
            Pin::None => "none",
            Pin::Together => "server and pgbench on CPU 0",
            Pin::Apart => "server on CPU 0, pgbench on CPU 1",
        }
    }
}

/// A second tier of memory for the memory sweep: a swap file, in `dir`
/// (default: the work directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecondTier {
    /// Where the swap file goes (a directory on the device that stands
    /// in for the SSD); `None`: the work directory.
    pub dir: Option<PathBuf>,
}

/// `--pg-second-tier swap[:DIR]`.
pub fn second_tier(s: &str) -> Result<SecondTier, String> {
    match s.split_once(':') {
        None if s == "swap" => Ok(SecondTier { dir: None }),
        Some(("swap", d)) if !d.is_empty() => Ok(SecondTier {
            dir: Some(PathBuf::from(d)),
        }),
        _ => Err(format!(
            "`{s}`: swap (a swap file in the work directory) or swap:DIR (in DIR)"
        )),
    }
}

/// The smallest `--db-size`: one scale unit.
pub const MIN_DB_BYTES: u64 = BYTES_PER_SCALE;
/// The largest `--db-size` (and `--pg-memory`): 1 TiB.
pub const MAX_DB_BYTES: u64 = 1 << 40;

/// A size option of the workload (`--db-size`, `--pg-memory`) read and
/// held to its stated bounds: 16M (one scale unit) to 1T.
pub fn size_option(s: &str) -> Result<u64, String> {
    let b = crate::values::bytes(s)?;
    if !(MIN_DB_BYTES..=MAX_DB_BYTES).contains(&b) {
        return Err(format!(
            "{} is outside 16M (one pgbench scale unit) to 1T",
            crate::units::fmt_bytes(b)
        ));
    }
    Ok(b)
}

const PG: &str = "PostgreSQL";

/// The flags of the pgbench workload.
pub static FLAGS: &[WorkloadFlag] = &[
    WorkloadFlag {
        check: Some(|s| size_option(s).map(drop)),
        ..WorkloadFlag::value(
            "db-size",
            "SIZE",
            PG,
            "pgbench: the database size the scale factor follows (`160M`; default quick 160 MB, full 1.6 GB; 16M to 1T). The free space it needs is checked before loading.",
        )
    },
    WorkloadFlag {
        check: Some(|s| pg_scale(s).map(drop)),
        conflicts: &["db-size", "memory-sweep"],
        ..WorkloadFlag::value(
            "pg-scale",
            "N",
            PG,
            "pgbench: the scale factor itself (`800`, as DragonFly's runs; 1 to 68719, the scale of --db-size's largest, 1T; about 16 MB of tables each), instead of one following --db-size.",
        )
    },
    WorkloadFlag {
        many: true,
        split: true,
        choices: &[
            (
                "select-only",
                "`-S`: one indexed SELECT per transaction (DragonFly's)",
            ),
            (
                "tpcb",
                "The default TPC-B-like transaction: three UPDATEs, a SELECT, an INSERT",
            ),
        ],
        ..WorkloadFlag::value(
            "pg-mode",
            "MODE,…",
            PG,
            "pgbench: the transactions, each a row (default select-only).",
        )
    },
    WorkloadFlag {
        check: Some(|s| Conninfo::parse(s).map(drop)),
        conflicts: &["memory-sweep", "pg-socket"],
        secret: true,
        ..WorkloadFlag::value(
            "pg-server",
            "CONNINFO",
            PG,
            "pgbench: an existing server by libpq connection string (`host=db port=5432 user=bench dbname=bench`, or a postgresql:// URI) instead of a throwaway cluster. It must name the server (host=, hostaddr=, service= or the URI's host): libpq's defaults are not used. Its pgbench tables are made (`pgbench -i`) and dropped at the end; a server that has them already is refused unless --pg-drop-tables.",
        )
    },
    WorkloadFlag {
        requires: &["pg-server"],
        ..WorkloadFlag::switch(
            "pg-drop-tables",
            PG,
            "pgbench --pg-server: drop and remake the server's pgbench tables (pgbench_accounts, _branches, _history, _tellers) when it has them already; they are left, remade, at the end.",
        )
    },
    WorkloadFlag {
        choices: &[
            ("none", "Left to the scheduler"),
            ("together", "Server and pgbench on CPU 0"),
            ("apart", "Server on CPU 0, pgbench on CPU 1"),
        ],
        conflicts: &["pg-server"],
        ..WorkloadFlag::value(
            "pg-pin",
            "PIN",
            PG,
            "pgbench: where the throwaway cluster and pgbench run (default none: left to the scheduler; together: both on CPU 0; apart: server on CPU 0, pgbench on CPU 1).",
        )
    },
    WorkloadFlag::switch(
        "pg-socket",
        PG,
        "pgbench: connect over the unix socket instead of TCP to 127.0.0.1.",
    ),
    WorkloadFlag {
        conflicts: &["sweep"],
        sweeps: true,
        ..WorkloadFlag::switch(
            "memory-sweep",
            PG,
            "pgbench: sweep the database size from half to twice the memory it may use (a memory cgroup on Linux), caches dropped at each level, instead of the clients.",
        )
    },
    WorkloadFlag {
        check: Some(|s| size_option(s).map(drop)),
        requires: &["memory-sweep"],
        ..WorkloadFlag::value(
            "pg-memory",
            "SIZE",
            PG,
            "pgbench --memory-sweep: the memory the database may use (`256M`; default quick 256 MB, full 1 GB; 16M to 1T).",
        )
    },
    WorkloadFlag {
        check: Some(|s| second_tier(s).map(drop)),
        requires: &["memory-sweep"],
        ..WorkloadFlag::value(
            "pg-second-tier",
            "swap[:DIR]",
            PG,
            "pgbench --memory-sweep: sweep again with a second tier of memory, as DragonFly's swapcache on an SSD: a swap file (in DIR, default the work directory; Linux) that PostgreSQL's shared buffers, sized to hold the whole database, spill into.",
        )
    },
];

impl PgOptions {
    /// The options from the flags given, checked before anything runs.
    pub fn of(asked: &Asked) -> Result<PgOptions, FlagError> {
        let g = asked.given;
        let pin = match g.value("pg-pin") {
            None | Some("none") => Pin::None,
            Some("together") => Pin::Together,
            Some("apart") => Pin::Apart,
            Some(other) => {
                return Err(FlagError::of(
                    "pg-pin",
                    format!("--pg-pin {other}: none, together or apart"),
                ));
            }
        };
        if pin != Pin::None && !crate::sys::CAN_PIN {
            return Err(FlagError::of(
                "pg-pin",
                format!("--pg-pin: {}", crate::sys::NO_PINNING),
            ));
        }
        if pin == Pin::Apart && crate::sys::cpu_count() < 2 {
            return Err(FlagError::of(
                "pg-pin",
                "--pg-pin apart needs two CPUs; this machine has one",
            )
            .failed());
        }
        // The pins are CPUs of this machine: a server on another one
        // would be recorded as pinned where it was not.
        if pin != Pin::None
            && let Some(s) = asked.hosts.iter().find(|h| {
                h.role == crate::hosts::Role::Server
                    && matches!(h.reach, crate::hosts::Reach::Ssh(_))
            })
        {
            return Err(FlagError::of(
                "pg-pin",
                format!(
                    "--pg-pin: the server host {} is another machine, whose CPUs this one cannot pin",
                    s.reach
                ),
            ));
        }
        let modes = g
            .values("pg-mode")
            .iter()
            .map(|m| match m.as_str() {
                "select-only" => Ok(Mode::SelectOnly),
                "tpcb" => Ok(Mode::Tpcb),
                other => Err(FlagError::of(
                    "pg-mode",
                    format!("--pg-mode {other}: select-only or tpcb"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(s) = g.value("pg-server") {
            Conninfo::parse(s)
                .map_err(|e| FlagError::of("pg-server", format!("--pg-server: {e}")))?;
        }
        if g.has("memory-sweep") && asked.sweep.is_some_and(|s| s.baseline.is_some()) {
            return Err(FlagError::of(
                "baseline",
                "--baseline: a memory sweep's baseline is its smallest size (0.5)",
            ));
        }
        let socket = g.has("pg-socket");
        if socket
            && let Some(s) = asked.hosts.iter().find(|h| {
                h.role == crate::hosts::Role::Server && h.reach != crate::hosts::Reach::Local
            })
        {
            return Err(FlagError::of(
                "pg-socket",
                format!(
                    "--pg-socket: the database is on the server host {}, reached over TCP",
                    s.reach
                ),
            ));
        }
        Ok(PgOptions {
            db_bytes: g.parsed("db-size", size_option)?,
            scale: g.parsed("pg-scale", pg_scale)?,
            modes,
            socket,
            memory_sweep: g.has("memory-sweep"),
            memory_bytes: g.parsed("pg-memory", size_option)?,
            second_tier: match g.parsed("pg-second-tier", second_tier)? {
                Some(SecondTier { dir: Some(d) }) if !d.is_dir() => {
                    return Err(FlagError::of(
                        "pg-second-tier",
                        format!("--pg-second-tier swap:{}: not a directory", d.display()),
                    )
                    .failed());
                }
                t => t,
            },
            server: g.value("pg-server").map(String::from),
            drop_tables: g.has("pg-drop-tables"),
            pin,
        })
    }

    /// [`PgOptions::of`] as the workload's own options.
    pub fn own(asked: &Asked) -> Result<Option<Own>, FlagError> {
        Ok(Some(std::sync::Arc::new(PgOptions::of(asked)?)))
    }
}

/// The arguments of `__agent pgbench`: a throwaway cluster on a server
/// host.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentArgs {
    /// Directory to make the cluster in (must not exist).
    pub dir: PathBuf,
    /// Address to listen on (port 0: a free one).
    pub addr: std::net::SocketAddr,
    /// The client's address: the only one allowed in (trust).
    pub allow: std::net::IpAddr,
    /// max_connections.
    pub max_connections: u32,
    /// Settings NAME=VALUE for the server.
    pub settings: Vec<(String, String)>,
    /// Pin the server to this CPU.
    pub cpu: Option<usize>,
}

impl AgentArgs {
    /// The arguments as `__agent pgbench` takes them.
    pub fn to_args(&self) -> Vec<String> {
        let mut v = vec![
            "--dir".to_string(),
            self.dir.display().to_string(),
            "--addr".into(),
            self.addr.to_string(),
            "--allow".into(),
            self.allow.to_string(),
            "--max-connections".into(),
            self.max_connections.to_string(),
        ];
        for (k, val) in &self.settings {
            v.push("--set".into());
            v.push(format!("{k}={val}"));
        }
        if let Some(c) = self.cpu {
            v.push("--cpu".into());
            v.push(c.to_string());
        }
        v
    }

    /// Reads them back; an error names the argument at fault.
    pub fn parse(args: &[String]) -> Result<AgentArgs, String> {
        let mut dir = None;
        let mut addr = None;
        let mut allow = None;
        let mut max_connections = 100;
        let mut settings = Vec::new();
        let mut cpu = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = || {
                it.next()
                    .cloned()
                    .ok_or_else(|| format!("{a}: a value is needed"))
            };
            let bad = |v: &str| format!("{a} {v}: not valid");
            match a.as_str() {
                "--dir" => dir = Some(PathBuf::from(value()?)),
                "--addr" => {
                    let v = value()?;
                    addr = Some(v.parse().map_err(|_| bad(&v))?);
                }
                "--allow" => {
                    let v = value()?;
                    allow = Some(v.parse().map_err(|_| bad(&v))?);
                }
                "--max-connections" => {
                    let v = value()?;
                    max_connections = v.parse().map_err(|_| bad(&v))?;
                }
                "--set" => {
                    let v = value()?;
                    let (k, val) = v
                        .split_once('=')
                        .ok_or_else(|| format!("--set {v}: expected NAME=VALUE"))?;
                    settings.push((k.to_string(), val.to_string()));
                }
                "--cpu" => {
                    let v = value()?;
                    cpu = Some(v.parse().map_err(|_| bad(&v))?);
                }
                other => return Err(format!("`{other}`: not an argument of __agent pgbench")),
            }
        }
        Ok(AgentArgs {
            dir: dir.ok_or("--dir is needed")?,
            addr: addr.ok_or("--addr is needed")?,
            allow: allow.ok_or("--allow is needed")?,
            max_connections,
            settings,
            cpu,
        })
    }
}

/// `--pg-scale`, as both its check and its reading parse it.
fn pg_scale(s: &str) -> Result<u64, String> {
    // As far as --db-size reaches: 1T of tables.
    crate::values::whole::<u64>(1, super::scale_for(1 << 40))(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workloads::Given;

    fn asked(flags: &[(&str, &[&str])]) -> Result<PgOptions, FlagError> {
        let mut g = Given::default();
        for (f, v) in flags {
            g.set(f, v.iter().map(|s| s.to_string()).collect());
        }
        PgOptions::of(&Asked {
            given: &g,
            hosts: &[],
            sweep: None,
            here: true,
        })
    }

    #[test]
    fn flags_make_the_options_and_bad_values_name_the_flag() {
        let o = asked(&[
            ("db-size", &["160M"]),
            ("pg-mode", &["tpcb", "select-only"]),
            ("pg-pin", &["together"]),
        ])
        .unwrap();
        assert_eq!(o.db_bytes, Some(160 << 20));
        assert_eq!(o.modes, vec![Mode::Tpcb, Mode::SelectOnly]);
        assert_eq!(o.pin, Pin::Together);
        assert_eq!(asked(&[]).unwrap(), PgOptions::default());
        let e = asked(&[("db-size", &["10T"])]).unwrap_err();
        assert_eq!(e.flag.as_deref(), Some("db-size"));
        assert!(
            e.words.starts_with("--db-size 10T: ") && e.words.contains("outside 16M"),
            "{e}"
        );
        let e = asked(&[("pg-server", &["garbage"])]).unwrap_err();
        assert_eq!(e.flag.as_deref(), Some("pg-server"));
        assert!(e.words.starts_with("--pg-server: "), "{e}");
    }

    #[test]
    fn pins_are_refused_for_a_server_on_another_machine() {
        let mut g = Given::default();
        g.set("pg-pin", vec!["apart".into()]);
        let on = |host: &str| {
            let hosts = [host.parse::<crate::hosts::HostSpec>().unwrap()];
            PgOptions::of(&Asked {
                given: &g,
                hosts: &hosts,
                sweep: None,
                here: true,
            })
        };
        let e = on("server=ssh:root@198.18.1.2").unwrap_err();
        assert_eq!(e.flag.as_deref(), Some("pg-pin"));
        assert!(
            e.words.contains("ssh:root@198.18.1.2 is another machine"),
            "{e}"
        );
        // A namespace of this machine shares its CPUs.
        assert_eq!(on("server=netns:sb-s").unwrap().pin, Pin::Apart);
    }

    #[test]
    fn agent_arguments_go_there_and_back() {
        let a = AgentArgs {
            dir: "/tmp/x/pg".into(),
            addr: "10.0.0.2:0".parse().unwrap(),
            allow: "10.0.0.1".parse().unwrap(),
            max_connections: 14,
            settings: vec![("shared_buffers".into(), "64MB".into())],
            cpu: Some(0),
        };
        assert_eq!(AgentArgs::parse(&a.to_args()).unwrap(), a);
        let e = AgentArgs::parse(&["--dir".into()]).unwrap_err();
        assert!(e.contains("--dir: a value is needed"), "{e}");
        let e = AgentArgs::parse(&["--bogus".into()]).unwrap_err();
        assert!(e.contains("`--bogus`"), "{e}");
    }
}
