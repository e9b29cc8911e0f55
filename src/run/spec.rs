//! One run request ([`RunSpec`]): everything that shapes what `scalebench
//! run` measures, typed. The command line converts into it once
//! (`cli/run.rs`), a suite file's `[run]` table deserializes into it
//! ([`super::suite`], with each key's line for errors), and another system
//! receives it as JSON (`scalebench __run`, [`super::remote`]). Each
//! option's value is read by one function (`crate::values`), the same for
//! the flag, the file and the JSON, and written the way the command line
//! takes it: a suite file and the JSON say `runs = "auto"`, `warm-up =
//! "2s"`, `runs-target = 5` (percent) as `run` does.
//!
//! Where the result files go, the work directory, the label and the
//! progress are not here: they belong to the machine that runs it
//! ([`super::RunOptions`]).

use crate::harness::monitor::{PERF_EVENTS, Settings};
use crate::harness::series::RunOrder;
use crate::hosts::HostSpec;
use crate::net::Backend;
use crate::results::TimerKind;
use crate::systems::qemu::GuestClock;
use crate::systems::spec::SystemSpec;
use crate::values::{self, Runs};
use crate::workloads::Given;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Where the benchmarking process runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Pinning {
    /// Each benchmark run on the first CPU, the network benchmarks'
    /// server on the last.
    #[default]
    Default,
    /// On this CPU (`--pin CPU`).
    Cpu(usize),
    /// Nowhere in particular: left to the scheduler (`--no-pin`).
    Off,
}

/// One name of `--backend`: an event backend, or every one the OS has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendPick {
    /// `all`.
    All,
    /// One backend.
    One(Backend),
}

/// What the monitor samples (`--monitor`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum MonitorKind {
    /// The system's counters (the default).
    #[default]
    On,
    /// Those and `perf stat` counters.
    Perf,
    /// Nothing.
    Off,
}

/// One run request. Every field is an option of `scalebench run` by its
/// long name; an option not given is absent from the JSON (and so takes
/// the file's or the default), which is how a command line is laid over
/// a suite file ([`RunSpec::over`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields, default)]
pub struct RunSpec {
    /// Benchmark, workload and suite names and suite files, in order
    /// (none: `quick`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// Items per run for every benchmark.
    #[serde(skip_serializing_if = "Option::is_none", with = "max")]
    pub max: Option<u64>,
    /// Named benchmarks and workloads at the full suite's sizes.
    #[serde(skip_serializing_if = "is_false")]
    pub full: bool,
    /// Runs per benchmark (none: stop once decided).
    #[serde(skip_serializing_if = "Option::is_none", with = "runs")]
    pub runs: Option<Runs>,
    /// `--runs auto`: the most runs.
    #[serde(skip_serializing_if = "Option::is_none", with = "runs_max")]
    pub runs_max: Option<u32>,
    /// `--runs auto`: the half-width to reach, a share (written in
    /// percent).
    #[serde(skip_serializing_if = "Option::is_none", with = "runs_target")]
    pub runs_target: Option<f64>,
    /// Operations done and discarded before a benchmark's first run.
    #[serde(skip_serializing_if = "Option::is_none", with = "warm_up_ops")]
    pub warm_up_ops: Option<u64>,
    /// How each benchmark run visits n (none: in passes up and down).
    #[serde(skip_serializing_if = "Option::is_none", with = "order")]
    pub order: Option<RunOrder>,
    /// The run's time goal (none: as long as it takes).
    #[serde(skip_serializing_if = "Option::is_none", with = "within")]
    pub within: Option<values::TimeGoal>,
    /// The timer of every sample (none: monotonic).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timer: Option<TimerKind>,
    /// Where the benchmarking process runs (`pin = CPU` or `"off"`).
    #[serde(skip_serializing_if = "is_default", with = "pinning")]
    pub pin: Pinning,
    /// The network benchmarks' event backends (none: all).
    #[serde(
        rename = "backend",
        skip_serializing_if = "Vec::is_empty",
        with = "backends"
    )]
    pub backends: Vec<BackendPick>,
    /// The network benchmarks over IPv6.
    #[serde(skip_serializing_if = "is_false")]
    pub ipv6: bool,
    /// Workloads too large for this machine (disk, inodes) shrunk to what
    /// fits, saying so, instead of refused.
    #[serde(skip_serializing_if = "is_false")]
    pub fit: bool,
    /// More sysctls to record.
    #[serde(skip_serializing_if = "Vec::is_empty", with = "comma_list")]
    pub record_sysctl: Vec<String>,
    /// Tuning profiles by name or file.
    #[serde(
        rename = "profile",
        skip_serializing_if = "Vec::is_empty",
        with = "comma_list"
    )]
    pub profiles: Vec<String>,
    /// The systems the plan runs on side by side.
    #[serde(
        rename = "system",
        skip_serializing_if = "Vec::is_empty",
        with = "systems"
    )]
    pub systems: Vec<SystemSpec>,
    /// Where the client and the server run.
    #[serde(rename = "host", skip_serializing_if = "Vec::is_empty", with = "hosts")]
    pub hosts: Vec<HostSpec>,
    /// Profile each benchmark at low and high n afterwards.
    #[serde(skip_serializing_if = "is_false")]
    pub why: bool,
    /// Each profile window, seconds (none: 2).
    #[serde(skip_serializing_if = "Option::is_none", with = "why_seconds")]
    pub why_seconds: Option<f64>,
    /// The profiler's program.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiler: Option<String>,
    /// `--sweep VARIABLE=LEVEL,…`.
    #[serde(skip_serializing_if = "Option::is_none", with = "sweep")]
    pub sweep: Option<(String, Vec<f64>)>,
    /// Unmeasured time before each level's samples.
    #[serde(skip_serializing_if = "Option::is_none", with = "warm_up")]
    pub warm_up: Option<Duration>,
    /// The length of one sample.
    #[serde(skip_serializing_if = "Option::is_none", with = "sample_time")]
    pub sample_time: Option<Duration>,
    /// Samples per level.
    #[serde(skip_serializing_if = "Option::is_none", with = "samples")]
    pub samples: Option<u32>,
    /// The level per-unit efficiency is normalised to.
    #[serde(skip_serializing_if = "Option::is_none", with = "baseline")]
    pub baseline: Option<u64>,
    /// What the monitor samples (none: on).
    #[serde(skip_serializing_if = "Option::is_none", with = "monitor")]
    pub monitor: Option<MonitorKind>,
    /// Between the monitor's samples.
    #[serde(skip_serializing_if = "Option::is_none", with = "monitor_interval")]
    pub monitor_interval: Option<Duration>,
    /// The events `--monitor perf` counts.
    #[serde(skip_serializing_if = "Vec::is_empty", with = "perf_events")]
    pub perf_events: Vec<String>,
    /// The static scalebench a `kernel:` system runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub guest_bin: Option<PathBuf>,
    /// What an emulated guest's clock counts (none: instructions).
    #[serde(skip_serializing_if = "Option::is_none", with = "guest_clock")]
    pub guest_clock: Option<GuestClock>,
    /// What this system's own clock counts, as the system that runs it
    /// as a guest says in the run request it sends (instructions under
    /// QEMU's -icount); none: time, or what its kernel command line says.
    /// Not an option: a run with systems of its own refuses it.
    #[serde(skip_serializing_if = "Option::is_none", with = "guest_clock")]
    pub own_clock: Option<GuestClock>,
    /// ssh's configuration file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssh_config: Option<PathBuf>,
    /// The workloads' own options, by flag (`mail-size`): their values
    /// as given.
    #[serde(rename = "workload", skip_serializing_if = "Given::is_empty")]
    pub given: Given,
}

/// An error about one option of a run request, by its key (`runs-max`):
/// a suite file that set it is named with its line.
#[derive(Debug)]
pub struct OptionError {
    /// The option's long name.
    pub key: &'static str,
    /// What is wrong, in words that name the option (`--runs-max …`).
    pub words: String,
    /// Whether the option is wrong in itself (an unknown name, options
    /// that do not go together: exit status 2), rather than naming what
    /// cannot be used here (a file, this machine: 1).
    pub usage: bool,
}

impl OptionError {
    /// An error about `key`: wrong in itself (a usage error).
    pub fn new(key: &'static str, words: impl Into<String>) -> OptionError {
        OptionError {
            key,
            words: words.into(),
            usage: true,
        }
    }

    /// An error about `key` that names what it gives and cannot be used
    /// here: a file missing or wrong, what this machine lacks.
    pub fn failed(key: &'static str, words: impl Into<String>) -> OptionError {
        OptionError {
            usage: false,
            ..OptionError::new(key, words)
        }
    }
}

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.words)
    }
}

impl std::error::Error for OptionError {}

impl RunSpec {
    /// This request laid over `under` (a suite file's): every option this
    /// one gives stays, the others are `under`'s.
    pub fn over(&self, under: &RunSpec) -> RunSpec {
        let (Ok(serde_json::Value::Object(mine)), Ok(serde_json::Value::Object(mut all))) =
            (serde_json::to_value(self), serde_json::to_value(under))
        else {
            unreachable!("a run request is a JSON object")
        };
        // The workloads' options flag by flag, the others key by key.
        let mut mine = mine;
        if let Some(serde_json::Value::Object(w)) = mine.remove("workload") {
            match all.get_mut("workload") {
                Some(serde_json::Value::Object(under)) => under.extend(w),
                _ => {
                    all.insert("workload".into(), serde_json::Value::Object(w));
                }
            }
        }
        all.extend(mine);
        serde_json::from_value(serde_json::Value::Object(all))
            .expect("a run request reads back what it wrote")
    }

    /// The keys this request gives, by long name.
    pub fn keys(&self) -> Vec<String> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m.keys().cloned().collect(),
            _ => Vec::new(),
        }
    }

    /// The request as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a run request serializes")
    }

    /// A request from JSON, every value checked as the command line
    /// checks it.
    pub fn from_json(text: &str) -> anyhow::Result<RunSpec> {
        serde_json::from_str(text).map_err(|e| anyhow::anyhow!("the run request: {e}"))
    }

    /// The request as a result file records it: the value of a secret
    /// workload option (`pg-server`, a connection string that may hold a
    /// password) replaced by `(redacted)`.
    pub fn redacted(&self) -> RunSpec {
        let mut r = self.clone();
        for (f, _) in crate::workloads::flags() {
            if f.secret && r.given.has(f.name) {
                let n = r.given.values(f.name).len();
                r.given.set(f.name, vec!["(redacted)".to_string(); n]);
            }
        }
        r
    }

    /// The monitor's settings (none: off), checked: perf events only with
    /// `perf`, an interval only with the monitor on, event names that
    /// can be names.
    pub fn monitor_settings(&self) -> Result<Option<Settings>, OptionError> {
        let kind = self.monitor.unwrap_or_default();
        if kind != MonitorKind::Perf && !self.perf_events.is_empty() {
            return Err(OptionError::new(
                "perf-events",
                "--perf-events needs --monitor perf",
            ));
        }
        if kind == MonitorKind::Off {
            if self.monitor_interval.is_some() {
                return Err(OptionError::new(
                    "monitor-interval",
                    "--monitor-interval needs the monitor on (not --monitor off)",
                ));
            }
            return Ok(None);
        }
        let mut events: Vec<String> = self.perf_events.clone();
        if kind == MonitorKind::Perf && events.is_empty() {
            events = PERF_EVENTS.iter().map(|e| e.to_string()).collect();
        }
        Ok(Some(Settings {
            interval: self
                .monitor_interval
                .unwrap_or(Settings::default().interval),
            perf_events: events,
        }))
    }
}

/// Whether a switch is off (not written).
fn is_false(b: &bool) -> bool {
    !*b
}

/// Whether a value is its type's default (not written).
fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// `--backend`'s names: epoll, kqueue, poll, select or all.
pub fn backend(s: &str) -> Result<BackendPick, String> {
    let s = s.trim();
    if s == "all" {
        return Ok(BackendPick::All);
    }
    Backend::parse(s).map(BackendPick::One).ok_or_else(|| {
        format!("`{s}`: unknown backend (choose from epoll, kqueue, poll, select, all)")
    })
}

/// `--perf-events`'s names: one perf event each.
pub fn perf_event(s: &str) -> Result<String, String> {
    let e = s.trim();
    if e.is_empty()
        || !e
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_:./=@".contains(c))
    {
        return Err(format!("`{e}` is not a perf event name"));
    }
    Ok(e.to_string())
}

/// `--monitor`: on, perf or off.
pub fn monitor_kind(s: &str) -> Result<MonitorKind, String> {
    match s.trim() {
        "on" => Ok(MonitorKind::On),
        "perf" => Ok(MonitorKind::Perf),
        "off" => Ok(MonitorKind::Off),
        other => Err(format!("`{other}`: on, perf or off")),
    }
}

/// One value as a suite file or JSON writes it: a string, or a number or
/// a switch as written.
struct Word(String);

impl<'de> Deserialize<'de> for Word {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Word, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Word;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or a number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Word, E> {
                Ok(Word(v.to_string()))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Word, E> {
                Ok(Word(v.to_string()))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Word, E> {
                Ok(Word(v.to_string()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Word, E> {
                Ok(Word(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// One value or several (an array, or a string split at commas when
/// `split`), each as written.
fn words<'de, D: serde::Deserializer<'de>>(d: D, split: bool) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged, expecting = "a string, a number or an array of them")]
    enum OneOrMany {
        One(Word),
        Many(Vec<Word>),
    }
    let all = match OneOrMany::deserialize(d)? {
        OneOrMany::One(w) => vec![w.0],
        OneOrMany::Many(ws) => ws.into_iter().map(|w| w.0).collect(),
    };
    Ok(if split {
        all.iter()
            .flat_map(|w| w.split(','))
            .map(|w| w.trim().to_string())
            .collect()
    } else {
        all
    })
}

/// Serde adapters of `Option<T>` fields: read by the command line's own
/// parser, written as a number (`num`) or as the flag's words (`show`).
macro_rules! one {
    ($name:ident: $t:ty, $parse:expr, num) => {
        one!($name: $t, $parse, |v: &$t, s| serde::Serialize::serialize(v, s));
    };
    ($name:ident: $t:ty, $parse:expr, show $show:expr) => {
        one!($name: $t, $parse, |v: &$t, s: S| s.serialize_str(&$show(v)));
    };
    ($name:ident: $t:ty, $parse:expr, $write:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            pub fn serialize<S: serde::Serializer>(v: &Option<$t>, s: S) -> Result<S::Ok, S::Error> {
                match v {
                    Some(v) => $write(v, s),
                    None => s.serialize_none(),
                }
            }
            pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<$t>, D::Error> {
                let w = <Word as serde::Deserialize>::deserialize(d)?;
                let parse: fn(&str) -> Result<$t, String> = $parse;
                parse(&w.0).map(Some).map_err(serde::de::Error::custom)
            }
        }
    };
}

/// A duration as the command line takes it (`2s`, `500ms`).
fn duration_words(d: &Duration) -> String {
    humantime::format_duration(*d).to_string()
}

one!(max: u64, |s| values::whole::<u64>(1, u64::MAX)(s), num);
one!(runs: Runs, values::runs, show |r: &Runs| match r {
    Runs::Fixed(n) => n.to_string(),
    Runs::Auto => "auto".to_string(),
});
one!(runs_max: u32, |s| values::whole::<u32>(3, 1000)(s), num);
one!(runs_target: f64, values::percent, |v: &f64, s: S| s.serialize_f64(v * 100.0));
one!(warm_up_ops: u64, |s| values::whole::<u64>(0, u64::MAX)(s), num);
one!(order: RunOrder, RunOrder::parse, show |o: &RunOrder| o.name());
one!(within: values::TimeGoal, values::time_goal, show |g: &values::TimeGoal| g.words());
one!(why_seconds: f64, values::profile_window, num);
one!(sweep: (String, Vec<f64>), values::sweep, show |(v, l): &(String, Vec<f64>)| {
    let l: Vec<String> = l.iter().map(f64::to_string).collect();
    format!("{v}={}", l.join(","))
});
one!(warm_up: Duration, values::heat_up, show duration_words);
one!(sample_time: Duration, values::sample_time, show duration_words);
one!(samples: u32, |s| values::whole::<u32>(1, 1000)(s), num);
one!(baseline: u64, |s| values::whole::<u64>(1, 1_000_000)(s), num);
one!(monitor: MonitorKind, monitor_kind, show |m: &MonitorKind| match m {
    MonitorKind::On => "on",
    MonitorKind::Perf => "perf",
    MonitorKind::Off => "off",
});
one!(monitor_interval: Duration, values::monitor_interval, show duration_words);
one!(guest_clock: GuestClock, GuestClock::parse, show |c: &GuestClock| c.name());

/// Serde adapters of list fields: each value read by the command line's
/// own parser, written as the flag's words.
macro_rules! many {
    ($name:ident: $t:ty, split $split:expr, $parse:expr, $show:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            pub fn serialize<S: serde::Serializer>(v: &[$t], s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(v.iter().map($show))
            }
            pub fn deserialize<'de, D: serde::Deserializer<'de>>(
                d: D,
            ) -> Result<Vec<$t>, D::Error> {
                let parse: fn(&str) -> Result<$t, String> = $parse;
                super::words(d, $split)?
                    .iter()
                    .map(|w| parse(w).map_err(serde::de::Error::custom))
                    .collect()
            }
        }
    };
}

many!(comma_list: String, split true, |s| Ok(s.to_string()), |s: &String| s.clone());
many!(perf_events: String, split true, perf_event, |s: &String| s.clone());
many!(backends: BackendPick, split true, backend, |b: &BackendPick| match b {
    BackendPick::All => "all",
    BackendPick::One(b) => b.name(),
});
many!(systems: SystemSpec, split false, |s| s.parse(), |s: &SystemSpec| s.to_string());
many!(hosts: HostSpec, split false, |s| s.parse(), |h: &HostSpec| h.to_string());

/// `pin`: a CPU's number, or `"off"`.
mod pinning {
    use super::*;
    pub fn serialize<S: serde::Serializer>(p: &Pinning, s: S) -> Result<S::Ok, S::Error> {
        match p {
            Pinning::Cpu(c) => s.serialize_u64(*c as u64),
            Pinning::Off => s.serialize_str("off"),
            Pinning::Default => s.serialize_none(),
        }
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Pinning, D::Error> {
        let w = Word::deserialize(d)?;
        if w.0 == "off" {
            return Ok(Pinning::Off);
        }
        values::whole::<usize>(0, 4095)(&w.0)
            .map(Pinning::Cpu)
            .map_err(|e| serde::de::Error::custom(format!("a CPU's number or \"off\": {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request giving every option.
    fn rich() -> RunSpec {
        let mut given = Given::default();
        given.set("mail-size", vec!["4096".into()]);
        given.set("dir", vec!["/tmp".into(), "/var/tmp".into()]);
        RunSpec {
            targets: vec!["socket".into(), "mail".into()],
            max: Some(50),
            full: true,
            runs: Some(Runs::Auto),
            runs_max: Some(7),
            runs_target: Some(0.08),
            warm_up_ops: Some(3),
            order: Some(RunOrder::Up),
            within: Some(values::TimeGoal::Within(Duration::from_secs(90))),
            timer: Some(TimerKind::Tsc),
            pin: Pinning::Cpu(1),
            backends: vec![BackendPick::One(Backend::Poll), BackendPick::All],
            ipv6: true,
            fit: true,
            record_sysctl: vec!["fs.nr_open".into()],
            profiles: vec!["default".into(), "x.toml".into()],
            systems: [
                "a=local",
                "b=kernel:/boot/vmlinuz,cpus=1,memory=512M,cmdline=x=1,y",
                "c=kernel:debian:6.1,cpus=1,memory=1G",
                "d=image:/x.qcow2,ssh=root,key=/k",
            ]
            .map(|s| s.parse().unwrap())
            .to_vec(),
            hosts: vec!["server=netns:sb-b".parse().unwrap()],
            why: true,
            why_seconds: Some(0.5),
            profiler: Some("perf".into()),
            sweep: Some(("connections".into(), vec![1.0, 20.0, 400.0])),
            warm_up: Some(Duration::from_millis(1500)),
            sample_time: Some(Duration::from_millis(250)),
            samples: Some(2),
            baseline: Some(20),
            monitor: Some(MonitorKind::Perf),
            monitor_interval: Some(Duration::from_millis(200)),
            perf_events: vec!["cycles".into()],
            guest_bin: Some("/x/scalebench".into()),
            guest_clock: Some(GuestClock::Time),
            own_clock: Some(GuestClock::Instructions),
            ssh_config: Some("/x/ssh_config".into()),
            given,
        }
    }

    #[test]
    fn a_request_reads_back_what_it_wrote() {
        for spec in [rich(), RunSpec::default()] {
            let json = spec.to_json();
            assert_eq!(RunSpec::from_json(&json).unwrap(), spec, "{json}");
        }
        assert_eq!(
            RunSpec::default().to_json(),
            "{}",
            "nothing given, nothing said"
        );
        // Written as the command line takes it.
        let json = rich().to_json();
        for part in [
            r#""runs":"auto""#,
            r#""runs-target":8.0"#,
            r#""warm-up":"1s 500ms""#,
            r#""sweep":"connections=1,20,400""#,
            r#""backend":["poll","all"]"#,
            r#""pin":1"#,
            r#""workload":{"dir":["/tmp","/var/tmp"],"mail-size":["4096"]}"#,
        ] {
            assert!(json.contains(part), "{part} in {json}");
        }
    }

    #[test]
    fn values_are_checked_as_the_command_line_checks_them() {
        for (json, want) in [
            (r#"{"runs":0}"#, "must be at least 1"),
            (r#"{"runs-max":2}"#, "must be at least 3"),
            (r#"{"backend":"epoll,nope"}"#, "`nope`: unknown backend"),
            (r#"{"monitor":"sometimes"}"#, "on, perf or off"),
            (r#"{"sweep":"connections"}"#, "write VARIABLE=LEVEL"),
            (r#"{"pin":"x"}"#, "a CPU's number or \"off\""),
            (r#"{"output":"r.json"}"#, "unknown field `output`"),
            (r#"{"system":["nothing"]}"#, "nothing"),
        ] {
            let e = RunSpec::from_json(json).unwrap_err().to_string();
            assert!(e.contains(want), "{json}: {e}");
        }
        // A string may hold several values, and numbers come as written.
        let s = RunSpec::from_json(r#"{"backend":"epoll, poll","runs":"3","samples":2}"#).unwrap();
        assert_eq!(
            s.backends,
            [
                BackendPick::One(Backend::Epoll),
                BackendPick::One(Backend::Poll)
            ]
        );
        assert_eq!((s.runs, s.samples), (Some(Runs::Fixed(3)), Some(2)));
    }

    #[test]
    fn a_request_over_another_keeps_its_own_and_takes_the_rest() {
        let file = rich();
        let mine = RunSpec {
            runs: Some(Runs::Fixed(2)),
            pin: Pinning::Off,
            targets: vec!["fork".into()],
            ..RunSpec::default()
        };
        let both = mine.over(&file);
        assert_eq!(both.runs, Some(Runs::Fixed(2)));
        assert_eq!(both.pin, Pinning::Off, "one enum: no pin against pin 1");
        assert_eq!(both.targets, ["fork"]);
        assert_eq!(both.runs_max, file.runs_max);
        assert_eq!(both.given, file.given);
        assert!(both.ipv6 && both.why);
        let mut keys = mine.keys();
        keys.sort();
        assert_eq!(keys, ["pin", "runs", "targets"]);
        assert_eq!(RunSpec::default().over(&file), file);
    }

    #[test]
    fn the_monitor_settings_are_checked_together() {
        let s = |json: &str| RunSpec::from_json(json).unwrap().monitor_settings();
        assert_eq!(s("{}").unwrap().unwrap().interval, Duration::from_secs(1));
        assert!(s(r#"{"monitor":"off"}"#).unwrap().is_none());
        let e = s(r#"{"monitor":"off","monitor-interval":"2s"}"#).unwrap_err();
        assert_eq!(e.key, "monitor-interval");
        let e = s(r#"{"perf-events":"cycles"}"#).unwrap_err();
        assert_eq!(e.key, "perf-events");
        let perf = s(r#"{"monitor":"perf"}"#).unwrap().unwrap();
        assert_eq!(perf.perf_events.len(), PERF_EVENTS.len());
        let e = RunSpec::from_json(r#"{"perf-events":"cycles,a b"}"#).unwrap_err();
        assert!(
            e.to_string().contains("`a b` is not a perf event name"),
            "{e}"
        );
    }
}
