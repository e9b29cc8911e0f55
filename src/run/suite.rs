//! Suite files: a TOML file naming the benchmarks and workloads of a run,
//! each with its size, the workloads' own options and the `run` options
//! it runs with (docs/suites.md). The built-in suites `quick`, `full` and
//! `kernels` are such files ([`BUILT_IN`], from `suites/`).
//!
//! Here a file is read into what it runs ([`SuiteItem`]) and its settings
//! ([`Setting`]), each with the line it is on: names, sizes and the
//! workloads' options are checked here (each option by its own
//! [`WorkloadFlag`]'s choices and check), and anything wrong is refused naming
//! the file, the line and the key. The `[run]` table is a run request
//! ([`RunSpec`]: `scalebench run`'s options by their long names, each
//! value read as the flag reads it); [`with_files`] lays the command
//! line's request over the files' and [`attribute`] names the file, line
//! and key of an option the plan refuses.

use super::spec::{OptionError, RunSpec};
use crate::bench::{self, Benchmark};
use crate::workloads::{self, Asked, Given, Size, Workload, WorkloadFlag};
use anyhow::{Context, anyhow};
use serde::Deserialize;
use serde::de::IntoDeserializer;
use std::ops::Range;
use toml::Spanned;
use toml::de::{DeString, DeTable, DeValue};

/// The options a suite's `[run]` may set, by their long names: those
/// that shape what is measured. Where the result files go, the work
/// directory, the label and the progress belong to the machine that runs
/// it, and each benchmark's n and each workload's size to its own table.
pub const RUN_KEYS: &[&str] = &[
    "runs",
    "runs-max",
    "runs-target",
    "warm-up-ops",
    "order",
    "within",
    "timer",
    "pin",
    "no-pin",
    "backend",
    "ipv6",
    "fit",
    "record-sysctl",
    "profile",
    "system",
    "host",
    "why",
    "why-seconds",
    "sweep",
    "warm-up",
    "sample-time",
    "samples",
    "baseline",
    "monitor",
    "monitor-interval",
    "perf-events",
    "guest-clock",
];

/// The format a suite file names (`format = "scalebench-suite/1"`).
pub const FORMAT: &str = "scalebench-suite/1";

/// The built-in suites by name, each the text of `suites/NAME.toml`.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("quick", include_str!("../../suites/quick.toml")),
    ("full", include_str!("../../suites/full.toml")),
    ("kernels", include_str!("../../suites/kernels.toml")),
    ("seeds", include_str!("../../suites/seeds.toml")),
];

/// The keys of a file's top level.
const TOP_KEYS: &str = "format, name, description, [run], [benchmark.NAME], [workload.NAME]";

/// One thing a suite runs.
#[derive(Clone, Copy)]
pub enum SuiteItem {
    /// A benchmark (all its series) at this n.
    Bench {
        /// The benchmark.
        bench: &'static dyn Benchmark,
        /// Items per run.
        n: u64,
    },
    /// A workload at this size.
    Work {
        /// The workload.
        workload: &'static dyn Workload,
        /// Its size.
        size: Size,
    },
}

impl std::fmt::Debug for SuiteItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SuiteItem::Bench { bench, n } => write!(f, "benchmark {} n={n}", bench.info().name),
            SuiteItem::Work { workload, size } => {
                write!(f, "workload {} {size:?}", workload.info().name)
            }
        }
    }
}

/// The value of a setting, as the command line takes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A switch (`ipv6 = true`): given or not.
    Switch(bool),
    /// One value (`runs = 3`, `timer = "tsc"`).
    One(String),
    /// Several (`profile = ["default", "throughput"]`): the option given
    /// once for each.
    Many(Vec<String>),
}

impl Value {
    /// The value as the file wrote it, near enough for a message.
    pub fn shown(&self) -> String {
        match self {
            Value::Switch(b) => b.to_string(),
            Value::One(v) => format!("{v:?}"),
            Value::Many(vs) => format!("{vs:?}"),
        }
    }
}

/// One option a suite sets: a `run` option of its `[run]` table, or a
/// workload's own option in the workload's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// Its table: `[run]` or `[workload.NAME]`.
    pub table: String,
    /// The option's long name (`runs`, `dir`).
    pub key: String,
    /// What it is set to.
    pub value: Value,
    /// The line the key is on (1-based).
    pub line: usize,
}

/// A suite, read and checked.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Its name (`quick`, `nightly`).
    pub name: String,
    /// What it is for, in words (may be empty).
    pub description: String,
    /// Where it came from: the file's path as given, or `NAME` for a
    /// built-in suite.
    pub origin: String,
    /// The file's text.
    pub text: String,
    /// What it runs, in the file's order (a run measures its benchmarks
    /// before its workloads).
    pub items: Vec<SuiteItem>,
    /// The `[run]` options, in the file's order, each with its line.
    pub run: Vec<Setting>,
    /// The workloads' own options, in the file's order, each once.
    pub flags: Vec<Setting>,
    /// The run request the file makes: its `[run]` options and the
    /// workloads' own.
    pub spec: RunSpec,
}

/// Whether a run target names a suite file rather than a benchmark,
/// workload or built-in suite: it holds a `/` or ends in `.toml`.
pub fn is_path(target: &str) -> bool {
    target.contains('/') || target.ends_with(".toml")
}

impl Suite {
    /// A built-in suite by name.
    pub fn built_in(name: &str) -> Option<Suite> {
        BUILT_IN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
            // A test reads every built-in suite.
            Suite::parse(text, n).expect("a built-in suite reads")
        })
    }

    /// The suite file at `path`.
    pub fn read(path: &str) -> anyhow::Result<Suite> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the suite file {path}"))?;
        Suite::parse(&text, path)
    }

    /// A built-in suite's name or a suite file's path.
    pub fn find(name: &str) -> anyhow::Result<Suite> {
        if is_path(name) {
            return Suite::read(name);
        }
        Suite::built_in(name).ok_or_else(|| {
            let near = nearest_in(name, BUILT_IN.iter().map(|(k, _)| *k))
                .map_or(String::new(), |k| format!("; did you mean `{k}`?"));
            usage(format!(
                "unknown suite `{name}`{near} (built in: {}; or the path of a .toml suite file)",
                BUILT_IN
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }

    /// Reads a suite from TOML `text`; `origin` names it in errors
    /// (`ORIGIN:LINE: …`).
    pub fn parse(text: &str, origin: &str) -> anyhow::Result<Suite> {
        let doc = Doc { origin, text };
        let root = DeTable::parse(text).map_err(|e| {
            doc.err(
                e.span().unwrap_or(0..0),
                format!("not a TOML file: {}", e.message().trim()),
            )
        })?;
        let mut s = Suite {
            name: String::new(),
            description: String::new(),
            origin: origin.to_string(),
            text: text.to_string(),
            items: Vec::new(),
            run: Vec::new(),
            flags: Vec::new(),
            spec: RunSpec::default(),
        };
        let (mut format, mut name) = (None, None);
        for (k, v) in root.get_ref() {
            match k.get_ref().as_ref() {
                "format" => format = Some((doc.string(v, "format")?, v.span())),
                "name" => name = Some((doc.string(v, "name")?, v.span())),
                "description" => s.description = doc.string(v, "description")?,
                "run" => {
                    s.run = doc.run(v)?;
                    s.spec = doc.run_spec(v, &s.run)?;
                }
                "benchmark" => {
                    for (name, t) in doc.table(v, "benchmark", "[benchmark.NAME]")? {
                        s.items.push(doc.bench(name, t)?);
                    }
                }
                "workload" => {
                    for (name, t) in doc.table(v, "workload", "[workload.NAME]")? {
                        let (item, flags) = doc.work(name, t)?;
                        s.items.push(item);
                        doc.add_flags(&mut s.flags, flags)?;
                    }
                }
                other => {
                    return Err(doc.err(
                        k.span(),
                        format!("unknown key `{other}` (known: {TOP_KEYS})"),
                    ));
                }
            }
        }
        doc.head(&mut s, format, name)?;
        doc.work_options(&s)?;
        s.spec.given = s.given();
        Ok(s)
    }

    /// The workloads' options as the command line would give them.
    pub fn given(&self) -> Given {
        let mut g = Given::default();
        for x in &self.flags {
            let split = workloads::flags()
                .iter()
                .any(|(f, _)| f.name == x.key && f.split);
            let values: Vec<String> = match &x.value {
                Value::Switch(false) => continue,
                Value::Switch(true) => Vec::new(),
                Value::One(v) => vec![v.clone()],
                Value::Many(vs) => vs.clone(),
            };
            let values = if split {
                values
                    .iter()
                    .flat_map(|v| v.split(',').map(str::to_string))
                    .collect()
            } else {
                values
            };
            g.set(&x.key, values);
        }
        g
    }
}

/// A file being read: its name for messages and its text for lines.
struct Doc<'a> {
    origin: &'a str,
    text: &'a str,
}

/// A key of a table and its value.
type Entry<'e, 'i> = (&'e Spanned<DeString<'i>>, &'e Spanned<DeValue<'i>>);

impl Doc<'_> {
    /// The line (1-based) of byte `at`.
    fn line(&self, at: usize) -> usize {
        let at = at.min(self.text.len());
        self.text.as_bytes()[..at]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// An error at `span`: `ORIGIN:LINE: message`.
    fn err(&self, span: Range<usize>, message: impl std::fmt::Display) -> anyhow::Error {
        usage(format!(
            "{}:{}: {message}",
            self.origin,
            self.line(span.start)
        ))
    }

    /// The format and the name, both required, checked.
    fn head(
        &self,
        s: &mut Suite,
        format: Option<(String, Range<usize>)>,
        name: Option<(String, Range<usize>)>,
    ) -> anyhow::Result<()> {
        let Some((format, at)) = format else {
            return Err(self.err(
                0..0,
                format!("no `format` key (a suite file says format = \"{FORMAT}\")"),
            ));
        };
        if format != FORMAT {
            return Err(self.err(
                at,
                format!("format `{format}` is not one this scalebench reads ({FORMAT})"),
            ));
        }
        let Some((name, at)) = name else {
            return Err(self.err(0..0, "no `name` key (the suite's name)"));
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(self.err(
                at,
                format!("name `{name}`: use letters, digits, -, _ and . only"),
            ));
        }
        s.name = name;
        if s.items.is_empty() {
            return Err(self.err(
                0..0,
                "it names no benchmark and no workload ([benchmark.NAME], [workload.NAME])",
            ));
        }
        Ok(())
    }

    /// A string value.
    fn string(&self, v: &Spanned<DeValue>, key: &str) -> anyhow::Result<String> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            other => Err(self.err(
                v.span(),
                format!("`{key}`: a string, not {}", a(other.type_str())),
            )),
        }
    }

    /// A table's entries, in the file's order; `key` and `shape` name it
    /// in the error when it is something else.
    fn table<'e, 'i>(
        &self,
        v: &'e Spanned<DeValue<'i>>,
        key: &str,
        shape: &str,
    ) -> anyhow::Result<Vec<Entry<'e, 'i>>> {
        match v.get_ref() {
            DeValue::Table(t) => Ok(t.iter().collect()),
            other => Err(self.err(
                v.span(),
                format!("`{key}`: a table ({shape}), not {}", a(other.type_str())),
            )),
        }
    }

    /// One value of an option as the command line takes it: a string or
    /// a number as written.
    fn scalar(&self, v: &Spanned<DeValue>, at: &str) -> anyhow::Result<String> {
        match v.get_ref() {
            DeValue::String(s) => Ok(s.to_string()),
            DeValue::Integer(i) => Ok(i128::from_str_radix(i.as_str(), i.radix())
                .map_or_else(|_| i.to_string(), |x| x.to_string())),
            DeValue::Float(f) => Ok(f.as_str().to_string()),
            other => Err(self.err(
                v.span(),
                format!("{at}: a string or a number, not {}", a(other.type_str())),
            )),
        }
    }

    /// A setting's value, of any shape (the command line checks `[run]`'s).
    fn value(&self, v: &Spanned<DeValue>, at: &str) -> anyhow::Result<Value> {
        Ok(match v.get_ref() {
            DeValue::Boolean(b) => Value::Switch(*b),
            DeValue::Array(xs) => Value::Many(
                xs.iter()
                    .map(|x| self.scalar(x, at))
                    .collect::<anyhow::Result<_>>()?,
            ),
            _ => Value::One(self.scalar(v, at)?),
        })
    }

    /// The `[run]` table's settings, each a known key.
    fn run(&self, v: &Spanned<DeValue>) -> anyhow::Result<Vec<Setting>> {
        self.table(v, "run", "[run]")?
            .into_iter()
            .map(|(k, x)| {
                let key = k.get_ref().to_string();
                if !RUN_KEYS.contains(&key.as_str()) {
                    return Err(self.err(
                        k.span(),
                        format!(
                            "unknown key `{key}` in [run] (known: {})",
                            RUN_KEYS.join(", ")
                        ),
                    ));
                }
                Ok(Setting {
                    table: "[run]".into(),
                    value: self.value(x, &format!("[run] {key}"))?,
                    key,
                    line: self.line(k.span().start),
                })
            })
            .collect()
    }

    /// The `[run]` table as a run request, each value read as its flag
    /// reads it; `no-pin = true` is `pin = "off"`. An error names the
    /// line and the key (`settings`: the table's, with their lines).
    fn run_spec(&self, v: &Spanned<DeValue>, settings: &[Setting]) -> anyhow::Result<RunSpec> {
        let DeValue::Table(t) = v.get_ref() else {
            return Ok(RunSpec::default());
        };
        let mut table = DeTable::new();
        let mut pin = None;
        for (k, x) in t {
            match (k.get_ref().as_ref(), x.get_ref()) {
                ("no-pin", DeValue::Boolean(true)) => pin = Some(k.clone()),
                ("no-pin", DeValue::Boolean(false)) => {}
                ("no-pin", other) => {
                    return Err(self.err(
                        x.span(),
                        format!("[run] no-pin: true or false, not {}", a(other.type_str())),
                    ));
                }
                _ => {
                    table.insert(k.clone(), x.clone());
                }
            }
        }
        if let Some(k) = pin {
            if let Some((p, _)) = table.iter().find(|(p, _)| p.get_ref() == "pin") {
                return Err(self.err(p.span(), "[run] pin: give pin or no-pin, not both"));
            }
            let off = DeValue::String(std::borrow::Cow::Borrowed("off"));
            table.insert(
                Spanned::new(k.span(), "pin".into()),
                Spanned::new(k.span(), off),
            );
        }
        let value = Spanned::new(v.span(), DeValue::Table(table));
        RunSpec::deserialize(value.into_deserializer()).map_err(|e| {
            let line = self.line(e.span().map_or(v.span().start, |r| r.start));
            let words = e.message().trim();
            match settings.iter().find(|x| x.line == line) {
                Some(x) => self.err(
                    e.span().unwrap_or(0..0),
                    format!("[run] {} = {}: {words}", x.key, x.value.shown()),
                ),
                None => self.err(e.span().unwrap_or(0..0), format!("[run]: {words}")),
            }
        })
    }

    /// A benchmark's table: `n`, or `size` (`quick`, `full`: the
    /// benchmark's n in that built-in suite); neither: its quick n.
    fn bench(&self, name: &Spanned<DeString>, v: &Spanned<DeValue>) -> anyhow::Result<SuiteItem> {
        let n = name.get_ref().as_ref();
        let Some(bench) = bench::find(n) else {
            let why = if workloads::find(n).is_some() {
                format!("`{n}` is a workload: [workload.{n}]")
            } else {
                unknown("benchmark", n)
            };
            return Err(self.err(name.span(), why));
        };
        let at = format!("[benchmark.{n}]");
        let (mut count, mut size) = (None, None);
        for (k, x) in self.table(v, &format!("benchmark.{n}"), &at)? {
            match k.get_ref().as_ref() {
                "n" => count = Some((self.count(x, &at)?, x.span())),
                "size" => size = Some(self.size(x, &at)?),
                other => {
                    return Err(self.err(
                        k.span(),
                        format!("unknown key `{other}` in {at} (known: n, size)"),
                    ));
                }
            }
        }
        let i = bench.info();
        let n = match (count, size) {
            (Some((_, at_n)), Some(_)) => {
                return Err(self.err(at_n, format!("{at}: give n or size, not both")));
            }
            (Some((n, _)), None) => n,
            (None, Some(Size::Full)) => i.full_n,
            (None, _) => i.quick_n,
        };
        Ok(SuiteItem::Bench { bench, n })
    }

    /// `n`: a whole number, at least 1.
    fn count(&self, v: &Spanned<DeValue>, at: &str) -> anyhow::Result<u64> {
        let DeValue::Integer(i) = v.get_ref() else {
            return Err(self.err(
                v.span(),
                format!("{at} n: a whole number, not {}", a(v.get_ref().type_str())),
            ));
        };
        let text = self.scalar(v, at)?;
        crate::values::whole::<u64>(1, u64::MAX)(&text)
            .map_err(|e| self.err(v.span(), format!("{at} n = {i}: {e}")))
    }

    /// `size`: `quick` or `full`.
    fn size(&self, v: &Spanned<DeValue>, at: &str) -> anyhow::Result<Size> {
        match self.string(v, "size")?.as_str() {
            "quick" => Ok(Size::Quick),
            "full" => Ok(Size::Full),
            other => Err(self.err(v.span(), format!("{at} size = \"{other}\": quick or full"))),
        }
    }

    /// A workload's table: `size` and its own options.
    fn work(
        &self,
        name: &Spanned<DeString>,
        v: &Spanned<DeValue>,
    ) -> anyhow::Result<(SuiteItem, Vec<Setting>)> {
        let n = name.get_ref().as_ref();
        let Some(workload) = workloads::find(n) else {
            let why = if bench::find(n).is_some() {
                format!("`{n}` is a benchmark: [benchmark.{n}]")
            } else {
                unknown("workload", n)
            };
            return Err(self.err(name.span(), why));
        };
        let at = format!("[workload.{n}]");
        let (mut size, mut flags) = (Size::Quick, Vec::new());
        for (k, x) in self.table(v, &format!("workload.{n}"), &at)? {
            let key = k.get_ref().as_ref();
            if key == "size" {
                size = self.size(x, &at)?;
                continue;
            }
            let Some(flag) = workload.flags().iter().find(|f| f.name == key) else {
                let known: Vec<&str> = std::iter::once("size")
                    .chain(workload.flags().iter().map(|f| f.name))
                    .collect();
                return Err(self.err(
                    k.span(),
                    format!("unknown key `{key}` in {at} (known: {})", known.join(", ")),
                ));
            };
            flags.push(Setting {
                table: at.clone(),
                key: key.to_string(),
                value: self.flag_value(flag, x, &at)?,
                line: self.line(k.span().start),
            });
        }
        Ok((SuiteItem::Work { workload, size }, flags))
    }

    /// A workload option's value, of its flag's shape, each value checked
    /// as the command line checks it (its choices, its check; a list flag
    /// comma by comma).
    fn flag_value(
        &self,
        f: &WorkloadFlag,
        v: &Spanned<DeValue>,
        at: &str,
    ) -> anyhow::Result<Value> {
        let key = f.name;
        let kind = a(v.get_ref().type_str());
        let value = match (f.value, v.get_ref()) {
            (None, DeValue::Boolean(b)) => return Ok(Value::Switch(*b)),
            (None, _) => {
                return Err(self.err(
                    v.span(),
                    format!("{at} {key}: a switch, true or false, not {kind}"),
                ));
            }
            (Some(_), DeValue::Array(_)) if !f.many => {
                return Err(self.err(v.span(), format!("{at} {key}: one value, not an array")));
            }
            (Some(name), DeValue::Boolean(_)) => {
                return Err(self.err(
                    v.span(),
                    format!("{at} {key}: a value ({name}), not a boolean"),
                ));
            }
            (Some(_), _) => self.value(v, &format!("{at} {key}"))?,
        };
        let values = match &value {
            Value::One(x) => vec![x.clone()],
            Value::Many(xs) => xs.clone(),
            Value::Switch(_) => Vec::new(),
        };
        for x in &values {
            let pieces: Vec<&str> = if f.split {
                x.split(',').collect()
            } else {
                vec![x.as_str()]
            };
            for p in pieces {
                check_one(f, p)
                    .map_err(|e| self.err(v.span(), format!("{at} {key} = {x:?}: {e}")))?;
            }
        }
        Ok(value)
    }

    /// Every workload's options made from the suite's, as the plan will
    /// make them ([`Workload::options`], with no hosts and no sweep: the
    /// plan checks those again with the whole run's); an error goes to
    /// the line of the option it names, else to the workload's table.
    fn work_options(&self, s: &Suite) -> anyhow::Result<()> {
        let given = s.given();
        let asked = Asked {
            given: &given,
            hosts: &[],
            sweep: None,
            here: true,
        };
        // Flags that do not go together, as the command line refuses them.
        let sweep = s.run.iter().any(|x| x.key == "sweep");
        if let Err(e) = crate::workloads::check_pairs(&given, sweep) {
            let at = s
                .flags
                .iter()
                .find(|x| e.flag.as_deref() == Some(x.key.as_str()));
            let (line, table) = at.map_or((1, ""), |x| (x.line, x.table.as_str()));
            return Err(e.into_error(&format!("{}:{line}: {table}: ", self.origin)));
        }
        for item in &s.items {
            let SuiteItem::Work { workload, .. } = item else {
                continue;
            };
            let Err(e) = workload.options(&asked) else {
                continue;
            };
            let name = workload.info().name;
            let table = format!("[workload.{name}]");
            let named = s
                .flags
                .iter()
                .filter(|x| workload.flags().iter().any(|f| f.name == x.key))
                .find(|x| e.flag.as_deref() == Some(x.key.as_str()));
            let line = match named {
                Some(x) => x.line,
                None => self
                    .text
                    .lines()
                    .position(|l| l.trim_start().starts_with(&table))
                    .map_or(1, |i| i + 1),
            };
            return Err(e.into_error(&format!("{}:{line}: {table}: ", self.origin)));
        }
        Ok(())
    }

    /// Adds a workload's options to the suite's: an option that workloads
    /// share (`dir` of fs and fs-sizes) is one option of the run, as on
    /// the command line, so two tables may give it only the same value.
    fn add_flags(&self, all: &mut Vec<Setting>, new: Vec<Setting>) -> anyhow::Result<()> {
        for s in new {
            match all.iter().find(|o| o.key == s.key) {
                Some(o) if o.value == s.value => {}
                Some(o) => {
                    return Err(usage(format!(
                        "{}:{}: {} {} = {}: {} (line {}) sets it to {}; an option workloads share is one option of the run, as on the command line",
                        self.origin,
                        s.line,
                        s.table,
                        s.key,
                        s.value.shown(),
                        o.table,
                        o.line,
                        o.value.shown()
                    )));
                }
                None => all.push(s),
            }
        }
        Ok(())
    }
}

/// What was asked is wrong (a suite file is a run request as the command
/// line is): the binary exits 2.
fn usage(words: String) -> anyhow::Error {
    crate::sys::values::Usage(words).into()
}

/// The long name of the request's option a setting sets (`no-pin` is
/// `pin`).
fn spec_key(setting: &str) -> &str {
    if setting == "no-pin" { "pin" } else { setting }
}

/// `ORIGIN:LINE: TABLE KEY`, the start of a message about a setting.
fn at(s: &Suite, x: &Setting) -> String {
    format!("{}:{}: {} {}", s.origin, x.line, x.table, x.key)
}

/// The suite files among `given`'s targets read (and the built-in suites
/// that set options), and `given` laid over their requests: an option the command line gives replaces the files'
/// (and no message will name the file for it); two files that set one
/// option must set it alike. The files' items go to the plan by their
/// paths.
pub fn with_files(given: RunSpec) -> anyhow::Result<(RunSpec, Vec<Suite>)> {
    // Built-in suites that set options (`seeds`) are laid under the
    // command line as files are.
    let mut suites: Vec<Suite> = given
        .targets
        .iter()
        .filter_map(|t| match is_path(t) {
            true => Some(Suite::read(t)),
            false => Suite::built_in(t)
                .filter(|s| !s.run.is_empty() || !s.flags.is_empty())
                .map(Ok),
        })
        .collect::<anyhow::Result<_>>()?;
    let mut seen: Vec<(usize, Setting)> = Vec::new();
    for (i, s) in suites.iter().enumerate() {
        for x in s.run.iter().chain(&s.flags) {
            let key = spec_key(&x.key);
            match seen.iter().find(|(_, o)| spec_key(&o.key) == key) {
                Some((_, o)) if o.value == x.value => {}
                Some((j, o)) => {
                    return Err(usage(format!(
                        "{} = {}: {}:{} sets it to {}; give an option once for the whole run",
                        at(s, x),
                        x.value.shown(),
                        suites[*j].origin,
                        o.line,
                        o.value.shown()
                    )));
                }
                None => seen.push((i, x.clone())),
            }
        }
    }
    let mine: Vec<String> = given
        .keys()
        .into_iter()
        .chain(given.given.names().map(str::to_string))
        .collect();
    let mut files = RunSpec::default();
    for s in &mut suites {
        files = files.over(&s.spec);
        s.run
            .retain(|x| !mine.iter().any(|k| k == spec_key(&x.key)));
        s.flags.retain(|x| !mine.contains(&x.key));
    }
    // A suite's time goal yields to a size, runs or systems side by side
    // the command line asks for.
    let sized = ["max", "runs", "full", "profile", "system"];
    if mine.iter().any(|k| sized.contains(&k.as_str())) {
        files.within = None;
        for s in &mut suites {
            s.run.retain(|x| spec_key(&x.key) != "within");
        }
    }
    Ok((given.over(&files), suites))
}

/// An error of the plan about an option a suite file set
/// ([`OptionError`]), with the file, line and key put first; any other
/// error as it is.
pub fn attribute(e: anyhow::Error, suites: &[Suite]) -> anyhow::Error {
    let Some(o) = e.downcast_ref::<OptionError>() else {
        return e;
    };
    let set = suites
        .iter()
        .flat_map(|s| s.run.iter().chain(&s.flags).map(move |x| (s, x)))
        .find(|(_, x)| spec_key(&x.key) == o.key);
    match set {
        Some((s, x)) if o.usage => usage(format!("{}: {}", at(s, x), o.words)),
        Some((s, x)) => anyhow!("{}: {}", at(s, x), o.words),
        None => e,
    }
}

/// One value of workload flag `f`, checked as the command line checks it.
fn check_one(f: &WorkloadFlag, v: &str) -> Result<(), String> {
    if !f.choices.is_empty() {
        if f.choices.iter().any(|(c, _)| *c == v) {
            return Ok(());
        }
        let choices: Vec<&str> = f.choices.iter().map(|(c, _)| *c).collect();
        return Err(format!("not one of {}", choices.join(", ")));
    }
    f.check.map_or(Ok(()), |check| check(v))
}

/// `an integer`, `a string`.
fn a(what: &str) -> String {
    let article = if what.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {what}")
}

/// The closest known name to `name`, if any is close.
pub(crate) fn nearest(name: &str) -> Option<&'static str> {
    let known = crate::bench::REGISTRY
        .iter()
        .map(|b| b.info().name)
        .chain(crate::workloads::WORKLOADS.iter().map(|w| w.info().name))
        .chain(BUILT_IN.iter().map(|(n, _)| *n));
    nearest_in(name, known)
}

/// The one of `known` nearest to `name`, if any is near (a typo's).
fn nearest_in(name: &str, known: impl Iterator<Item = &'static str>) -> Option<&'static str> {
    known
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(s, _)| *s > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

/// An unknown benchmark or workload, with the nearest known name.
fn unknown(kind: &str, name: &str) -> String {
    let hint = nearest(name).map_or(String::new(), |k| format!("; did you mean `{k}`?"));
    format!("unknown {kind} `{name}`{hint} (`scalebench list` shows them all)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::REGISTRY;
    use crate::workloads::WORKLOADS;

    /// A file's first lines: its format and name.
    const HEAD: &str = "format = \"scalebench-suite/1\"\nname = \"t\"\n";

    /// The error reading `HEAD` + `body` from `t.toml`.
    fn refused(body: &str) -> String {
        let text = format!("{HEAD}{body}");
        match Suite::parse(&text, "t.toml") {
            Ok(s) => panic!("read: {:?}\n{text}", s.items),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn a_file_reads_in_order_with_its_sizes_settings_and_lines() {
        let text = format!(
            "{HEAD}description = \"two of each\"\n\
             [run]\n\
             runs = 3\n\
             profile = [\"default\", \"throughput\"]\n\
             ipv6 = true\n\
             runs-target = 2.5\n\
             [benchmark.fork]\n\
             size = \"full\"\n\
             [benchmark.socket]\n\
             n = 1_000\n\
             [benchmark.bind]\n\
             [workload.mail]\n\
             size = \"full\"\n\
             mail-size = 4096\n\
             [workload.fs]\n\
             dir = [\"/tmp\", \"/var/tmp\"]\n\
             fs-preload = true\n\
             [workload.fs-sizes]\n\
             sizes = \"8K,16K\"\n"
        );
        let s = Suite::parse(&text, "t.toml").unwrap();
        assert_eq!(
            (s.name.as_str(), s.description.as_str()),
            ("t", "two of each")
        );
        let fork = bench::find("fork").unwrap().info();
        let bind = bench::find("bind").unwrap().info();
        assert_eq!(
            format!("{:?}", s.items),
            format!(
                "[benchmark fork n={}, benchmark socket n=1000, benchmark bind n={}, workload mail Full, workload fs Quick, workload fs-sizes Quick]",
                fork.full_n, bind.quick_n
            )
        );
        let run: Vec<(&str, &Value, usize)> = s
            .run
            .iter()
            .map(|x| (x.key.as_str(), &x.value, x.line))
            .collect();
        assert_eq!(
            run,
            [
                ("runs", &Value::One("3".into()), 5),
                (
                    "profile",
                    &Value::Many(vec!["default".into(), "throughput".into()]),
                    6
                ),
                ("ipv6", &Value::Switch(true), 7),
                ("runs-target", &Value::One("2.5".into()), 8),
            ]
        );
        // The request they make, each value read as its flag reads it.
        assert_eq!(s.spec.runs, Some(crate::values::Runs::Fixed(3)));
        assert_eq!(s.spec.profiles, ["default", "throughput"]);
        assert!(s.spec.ipv6);
        assert_eq!(s.spec.runs_target, Some(0.025));
        let flags: Vec<(&str, &str, usize)> = s
            .flags
            .iter()
            .map(|x| (x.table.as_str(), x.key.as_str(), x.line))
            .collect();
        assert_eq!(
            flags,
            [
                ("[workload.mail]", "mail-size", 16),
                ("[workload.fs]", "dir", 18),
                ("[workload.fs]", "fs-preload", 19),
                ("[workload.fs-sizes]", "sizes", 21),
            ]
        );
        // As the command line would give them: a list flag split at commas.
        let g = s.given();
        assert_eq!(g.value("mail-size"), Some("4096"));
        assert_eq!(g.values("dir"), ["/tmp", "/var/tmp"]);
        assert!(g.has("fs-preload") && g.values("fs-preload").is_empty());
        assert_eq!(g.values("sizes"), ["8K", "16K"]);
    }

    #[test]
    fn unknown_keys_and_names_are_refused_by_file_line_and_key() {
        for (body, want) in [
            (
                "colour = 1\n",
                "t.toml:3: unknown key `colour` (known: format, name, description, [run]",
            ),
            (
                "[benchmark.socket]\nn = 10\nfoo = 1\n",
                "t.toml:5: unknown key `foo` in [benchmark.socket] (known: n, size)",
            ),
            (
                "\n[workload.mail]\nsize = \"quick\"\nbogus = true\n",
                "t.toml:6: unknown key `bogus` in [workload.mail] (known: size, mail-",
            ),
            (
                "[benchmark.sockt]\n",
                "t.toml:3: unknown benchmark `sockt`; did you mean `socket`?",
            ),
            (
                "[workload.nope-at-all]\n",
                "t.toml:3: unknown workload `nope-at-all`",
            ),
            (
                "[benchmark.mail]\n",
                "t.toml:3: `mail` is a workload: [workload.mail]",
            ),
            (
                "[workload.fork]\n",
                "t.toml:3: `fork` is a benchmark: [benchmark.fork]",
            ),
            (
                "benchmark = 3\n",
                "t.toml:3: `benchmark`: a table ([benchmark.NAME]), not an integer",
            ),
            (
                "[benchmark]\nsocket = 3\n",
                "t.toml:4: `benchmark.socket`: a table ([benchmark.socket]), not an integer",
            ),
        ] {
            let e = refused(body);
            assert!(e.starts_with(want), "{body:?}:\n{e}\nwanted: {want}");
        }
    }

    #[test]
    fn bad_values_and_types_are_refused_by_file_line_and_key() {
        for (body, want) in [
            (
                "[benchmark.socket]\nn = 0\n",
                "t.toml:4: [benchmark.socket] n = 0: must be at least 1",
            ),
            (
                "[benchmark.socket]\nn = -5\n",
                "t.toml:4: [benchmark.socket] n = -5: must be at least 1",
            ),
            (
                "[benchmark.socket]\nn = \"10\"\n",
                "t.toml:4: [benchmark.socket] n: a whole number, not a string",
            ),
            (
                "[benchmark.socket]\nn = 1.5\n",
                "t.toml:4: [benchmark.socket] n: a whole number, not a float",
            ),
            (
                "[benchmark.socket]\nsize = \"huge\"\n",
                "t.toml:4: [benchmark.socket] size = \"huge\": quick or full",
            ),
            (
                "[benchmark.socket]\nsize = 3\n",
                "t.toml:4: `size`: a string, not an integer",
            ),
            (
                "[benchmark.socket]\nsize = \"full\"\nn = 5\n",
                "t.toml:5: [benchmark.socket]: give n or size, not both",
            ),
            (
                "[workload.fs]\nfs-preload = \"yes\"\n",
                "t.toml:4: [workload.fs] fs-preload: a switch, true or false, not a string",
            ),
            (
                "[workload.mail]\nmail-size = true\n",
                "t.toml:4: [workload.mail] mail-size: a value (BYTES), not a boolean",
            ),
            (
                "[workload.mail]\nmail-size = [1, 2]\n",
                "t.toml:4: [workload.mail] mail-size: one value, not an array",
            ),
            (
                "[workload.mail]\nmail-size = 5\n",
                "t.toml:4: [workload.mail] mail-size = \"5\": must be at least 87",
            ),
            (
                "[workload.fs]\nfs-cold = \"warm\"\n",
                "t.toml:4: [workload.fs] fs-cold = \"warm\": not one of auto, drop, evict",
            ),
            (
                "[workload.fs-sizes]\nsizes = [\"8K,x\"]\n",
                "t.toml:4: [workload.fs-sizes] sizes = \"8K,x\": ",
            ),
            (
                "[workload.fs]\ndir = [\"/tmp\", {a = 1}]\n",
                "t.toml:4: [workload.fs] dir: a string or a number, not a table",
            ),
            (
                "[run]\nruns = {a = 1}\n[benchmark.socket]\n",
                "t.toml:4: [run] runs: a string or a number, not a table",
            ),
            (
                "[workload.fs]\ndir = \"/tmp\"\n[workload.fs-sizes]\n\ndir = \"/var/tmp\"\n",
                "t.toml:7: [workload.fs-sizes] dir = \"/var/tmp\": [workload.fs] (line 4) sets it to \"/tmp\"",
            ),
        ] {
            let e = refused(body);
            assert!(e.starts_with(want), "{body:?}:\n{e}\nwanted: {want}");
        }
        // The same option alike in two tables is one option.
        let s = Suite::parse(
            &format!("{HEAD}[workload.fs]\ndir = \"/tmp\"\n[workload.fs-sizes]\ndir = \"/tmp\"\n"),
            "t.toml",
        )
        .unwrap();
        assert_eq!(s.flags.len(), 1);
    }

    #[test]
    fn a_workload_option_its_workload_refuses_is_named_by_line() {
        // fs checks the filesystem type itself (the flag takes any): the
        // option's line.
        let e = refused("[workload.fs]\nfiles = 300\n\nmkfs = \"zfs\"\n");
        assert!(
            e.starts_with("t.toml:6: [workload.fs]: --mkfs: `zfs` is not a filesystem type"),
            "{e}"
        );
    }

    #[test]
    fn the_head_is_required_and_files_that_are_not_toml_are_named() {
        let e = Suite::parse("name = \"x\"\n[benchmark.socket]\n", "t.toml").unwrap_err();
        assert!(
            e.to_string().starts_with("t.toml:1: no `format` key"),
            "{e}"
        );
        let e = Suite::parse("format = \"scalebench-suite/9\"\n", "t.toml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("t.toml:1: format `scalebench-suite/9` is not one"),
            "{e}"
        );
        let e = Suite::parse(
            "format = \"scalebench-suite/1\"\n[benchmark.socket]\n",
            "t.toml",
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("t.toml:1: no `name` key"), "{e}");
        for bad in ["\"a b\"", "\"\"", "3"] {
            let e = Suite::parse(
                &format!("format = \"scalebench-suite/1\"\nname = {bad}\n[benchmark.socket]\n"),
                "t.toml",
            )
            .unwrap_err();
            assert!(e.to_string().starts_with("t.toml:2: "), "{bad}: {e}");
        }
        assert!(refused("").starts_with("t.toml:1: it names no benchmark and no workload"));
        let e = refused("\n[benchmark.socket\n");
        assert!(e.starts_with("t.toml:4: not a TOML file: "), "{e}");
        let e = refused("[benchmark.socket]\n[benchmark.socket]\n");
        assert!(e.starts_with("t.toml:4: not a TOML file: "), "{e}");
        let e = Suite::read("/nonexistent/x.toml").unwrap_err();
        assert!(
            format!("{e:#}").contains("cannot read the suite file /nonexistent/x.toml"),
            "{e:#}"
        );
        let e = Suite::find("quik").unwrap_err().to_string();
        assert!(
            e.contains("unknown suite `quik`") && e.contains("quick, full"),
            "{e}"
        );
        assert!(
            is_path("a.toml") && is_path("./a") && !is_path("quick") && !is_path("fork-static")
        );
    }

    #[test]
    fn every_registered_benchmark_and_workload_is_in_the_built_in_suites_at_its_sizes() {
        for (name, text) in BUILT_IN
            .iter()
            .filter(|(n, _)| ["quick", "full"].contains(n))
        {
            let s = Suite::parse(text, name).unwrap();
            assert_eq!(&s.name, name);
            assert!(!s.description.is_empty() && s.run.is_empty() && s.flags.is_empty());
            let full = *name == "full";
            let mut want: Vec<String> = REGISTRY
                .iter()
                .map(|b| {
                    let i = b.info();
                    format!(
                        "benchmark {} n={}",
                        i.name,
                        if full { i.full_n } else { i.quick_n }
                    )
                })
                .collect();
            let size = if full { Size::Full } else { Size::Quick };
            want.extend(
                WORKLOADS
                    .iter()
                    .filter(|w| full || w.info().quick)
                    .map(|w| format!("workload {} {size:?}", w.info().name)),
            );
            let got: Vec<String> = s.items.iter().map(|i| format!("{i:?}")).collect();
            assert_eq!(got, want, "suites/{name}.toml");
        }
    }

    #[test]
    fn the_seeds_suite_is_the_full_one_at_the_seeds_sizes_as_they_ran_it() {
        let find = |n: &str| {
            let text = BUILT_IN.iter().find(|(m, _)| *m == n).unwrap().1;
            Suite::parse(text, n).unwrap()
        };
        let (seeds, full) = (find("seeds"), find("full"));
        let shown = |s: &Suite| s.items.iter().map(|i| format!("{i:?}")).collect::<Vec<_>>();
        assert_eq!(shown(&seeds), shown(&full), "every item, at full size");
        let run: Vec<(&str, String)> = seeds
            .run
            .iter()
            .map(|x| (x.key.as_str(), x.value.shown()))
            .collect();
        assert_eq!(
            run,
            [
                ("runs", "\"5\"".to_string()),
                ("order", "\"up\"".to_string()),
                ("fit", "true".to_string())
            ]
        );
        let flags: Vec<(&str, String)> = seeds
            .flags
            .iter()
            .map(|x| (x.key.as_str(), x.value.shown()))
            .collect();
        assert_eq!(
            flags,
            [
                ("files", "\"3000000\"".to_string()),
                ("bytes", "\"21G\"".to_string()),
                ("pg-scale", "\"800\"".to_string()),
                ("mail-messages", "\"200000\"".to_string())
            ]
        );
    }

    #[test]
    fn the_kernels_suite_holds_the_kernel_benchmarks_at_guest_sizes() {
        let text = BUILT_IN.iter().find(|(n, _)| *n == "kernels").unwrap().1;
        let s = Suite::parse(text, "kernels").unwrap();
        assert!(
            s.description.contains("between kernel versions"),
            "{}",
            s.description
        );
        let names: Vec<&str> = s
            .items
            .iter()
            .map(|i| match i {
                SuiteItem::Bench { bench, n } => {
                    assert!(*n <= bench.info().full_n, "{}: n = {n}", bench.info().name);
                    bench.info().name
                }
                SuiteItem::Work { workload, .. } => panic!("workload {}", workload.info().name),
            })
            .collect();
        assert_eq!(
            names,
            [
                "socket",
                "socket-threads",
                "bind",
                "bind-port",
                "fork",
                "fork-maps",
                "mmap",
                "connect-ports"
            ]
        );
        // As the other built-in suites: the run's options are the command line's.
        assert!(s.run.is_empty() && s.flags.is_empty());
    }
}
