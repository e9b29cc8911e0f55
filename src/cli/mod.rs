//! The command line: clap definitions, turned into typed options and
//! dispatched to one function per command.

mod boot;
mod choices;
mod commands;
#[cfg(test)]
mod doccheck;
mod docs;
mod help;
mod kernels;
mod load;
mod output;
mod profile;
mod responder;
mod run;
mod serve;
mod smtp;
mod stored;
mod suite;
mod testbed;
use crate::values;
mod why;
mod workflags;

use choices::{CompareFormat, Format, HistoryFormat, Timer};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// `--version`: the version, the commit it was built from, the day, and
/// the identity of its analysis (the stamp of the verdicts it keeps in
/// result files).
pub static LONG_VERSION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "{} (commit {}, built {}, analysis {})",
        env!("CARGO_PKG_VERSION"),
        env!("SCALEBENCH_COMMIT"),
        env!("SCALEBENCH_BUILD_DATE"),
        crate::analysis::recorded::ANALYSIS,
    )
});

/// Does an operating system stay fast as load grows?
#[derive(Debug, Parser)]
#[command(name = "scalebench", version = LONG_VERSION.as_str(), about, long_about = None, after_help = help::TOP)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every benchmark: its name, what n is and what is timed.
    #[command(after_help = help::LIST)]
    List(ListArgs),
    /// Run benchmarks or suites (default: the quick suite) and write a result file.
    #[command(after_help = help::RUN)]
    Run(Box<RunArgs>),
    /// Judge result files and print the verdicts.
    #[command(after_help = help::REPORT)]
    Report(ReportArgs),
    /// Did NEW regress against BASE? Per benchmark and workload row:
    /// improved, unchanged, regressed, class-changed or not comparable,
    /// with the evidence; `--fail-on` makes it an exit code for CI.
    #[command(after_help = help::COMPARE)]
    Compare(CompareArgs),
    /// Follow one figure across many result files (a benchmark's cost at
    /// an n and its class, a workload's throughput), marking where it
    /// changed.
    #[command(after_help = help::HISTORY)]
    History(HistoryArgs),
    /// The results store: add result files to it, list, show and prune
    /// the runs it keeps (SQLite, or PostgreSQL with `--store
    /// postgres://…`; docs/store.md).
    #[command(after_help = help::RESULTS)]
    #[command(subcommand)]
    Results(stored::ResultsCommand),
    /// Linux kernels fetched from Debian's archive by version for `run
    /// --system NAME=kernel:debian:VERSION`: list, fetch and prune the
    /// cache that keeps them (docs/comparing.md).
    #[command(after_help = help::KERNELS)]
    #[command(subcommand)]
    Kernels(kernels::KernelsCommand),
    /// Write a static site from the results store: for each benchmark
    /// series and workload row, its figure over time per system,
    /// regressions marked, each point linking to its run's full report.
    #[command(after_help = help::DASHBOARD)]
    Dashboard(stored::DashboardArgs),
    /// Export every raw sample of result files.
    #[command(after_help = help::EXPORT)]
    Export(ExportArgs),
    /// Judge samples from any tool: a CSV file with columns n,ns[,run].
    #[command(after_help = help::ANALYZE)]
    Analyze(AnalyzeArgs),
    /// Print what scalebench records about this system.
    #[command(after_help = help::SYSINFO)]
    Sysinfo(SysinfoArgs),
    /// Serve static files over HTTP/1.1 (the workloads' web server).
    #[command(after_help = help::SERVE)]
    Serve(ServeArgs),
    /// Load an HTTP server: concurrency, requests per connection, rate, URL replay.
    #[command(after_help = help::LOAD)]
    Load(LoadArgs),
    /// Accept and discard mail over SMTP (the mail workload's sink), counting messages.
    #[command(after_help = help::SMTP_SINK)]
    SmtpSink(SmtpSinkArgs),
    /// Send mail over SMTP with many simultaneous sessions and count what failed.
    #[command(after_help = help::SMTP_SEND)]
    SmtpSend(SmtpSendArgs),
    /// Tuning profiles: list them, show one, or check what this machine
    /// would refuse of one (nothing is changed).
    #[command(after_help = help::PROFILE)]
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Suites: list the built-in ones, or print one (a built-in suite's
    /// file, or a suite file once checked).
    #[command(after_help = help::SUITE)]
    #[command(subcommand)]
    Suite(suite::SuiteCommand),
    /// Put back what a run killed on the way (kill -9) left changed by its
    /// profile, and remove its work directory.
    #[command(after_help = help::RESTORE)]
    Restore(RestoreArgs),
    /// Profile the benchmarks of a result file at low and high n and say
    /// which functions make their cost grow (stored in the file).
    #[command(after_help = help::WHY)]
    Why(WhyArgs),
    /// Test beds: network namespaces joined by veth links, standing in
    /// for hosts (Linux, root).
    #[command(after_help = help::TESTBED)]
    #[command(subcommand)]
    Testbed(testbed::TestbedCommand),
    /// Print the completion script for a shell (bash, zsh, fish,
    /// elvish, powershell).
    #[command(after_help = help::COMPLETIONS)]
    Completions(docs::CompletionsArgs),
    /// Print the manual page, or write every command's into a directory.
    #[command(after_help = help::MAN)]
    Man(docs::ManArgs),
    /// The network benchmarks' server (started by `run`; not for direct use).
    #[command(name = "__responder", hide = true)]
    Responder(ResponderArgs),
    /// This binary's build identity (for `run --host`; not for direct use).
    #[command(name = "__build-id", hide = true)]
    BuildId,
    /// The agent protocol's hello: the protocol this build speaks and
    /// which build it is, one line (for `run --host` and `run --system`;
    /// not for direct use).
    #[command(name = "__hello", hide = true)]
    Hello,
    /// Measures one run request given as JSON (agent protocol 3: what
    /// `run --system` asks of another system; not for direct use).
    #[command(name = "__run", hide = true)]
    RunRequest(RunRequestArgs),
    /// This host's interface addresses, `IP/PREFIX` a line (for `run
    /// --host`; not for direct use).
    #[command(name = "__addresses", hide = true)]
    Addresses,
    /// Runs a subcommand on a host until scalebench's connection ends or
    /// goes silent (for `run --host`; not for direct use).
    #[command(name = "__host-exec", hide = true)]
    HostExec(HostExecArgs),
    /// A workload's helper process, on a server host too (for `run
    /// --host`; not for direct use): `__agent WORKLOAD ARGS…`.
    #[command(name = "__agent", hide = true)]
    Agent(AgentArgs),
    /// Boots a `kernel:` system in QEMU and runs one scalebench command in
    /// it (the pieces `run --system` will drive; for developers):
    /// `__boot NAME=kernel:PATH --init STATIC_SCALEBENCH -- ARGS…`.
    #[command(name = "__boot", hide = true)]
    Boot(BootArgs),
}

/// Options of `__run`.
#[derive(Debug, clap::Args)]
pub struct RunRequestArgs {
    /// The result file (it must not exist).
    #[arg(long = "output", short = 'o', value_name = "FILE")]
    pub out: PathBuf,
    /// The run request, as JSON (`run::spec::RunSpec`).
    #[arg(value_name = "REQUEST")]
    pub request: String,
}

/// Options of `__boot`.
#[derive(Debug, clap::Args)]
pub struct BootArgs {
    /// The system: `NAME=kernel:PATH[,…]`.
    pub system: String,
    /// The static scalebench that runs as the guest's init (default: this
    /// binary, when it is static).
    #[arg(long, value_name = "FILE")]
    pub init: Option<PathBuf>,
    /// Copy the guest's writable directory (result files, the command's
    /// output) to this new directory.
    #[arg(long, value_name = "DIR")]
    pub keep: Option<PathBuf>,
    /// Where to make the work directory (default: the system's temporary
    /// directory).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Seconds to wait for the guest to boot and for the command.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = values::whole::<u64>(1, 86_400))]
    pub limit: u64,
    /// What an emulated guest's clock counts: `instructions` (one vCPU;
    /// the default) or `time` (as `run --guest-clock`).
    #[arg(long, value_name = "instructions|time", value_parser = crate::systems::qemu::GuestClock::parse)]
    pub guest_clock: Option<crate::systems::qemu::GuestClock>,
    /// The scalebench command to run in the guest.
    #[arg(last = true, required = true)]
    pub args: Vec<String>,
}

/// Options of `__host-exec`.
#[derive(Debug, clap::Args)]
pub struct HostExecArgs {
    /// Stop after this many seconds without a byte on standard input.
    #[arg(long, value_name = "SECONDS", default_value_t = 15, value_parser = values::whole::<u64>(0, u64::MAX))]
    pub idle_timeout: u64,
    /// Remove this directory at the end.
    #[arg(long, value_name = "DIR")]
    pub remove_dir: Option<PathBuf>,
    /// The scalebench subcommand and its arguments (none: only wait).
    #[arg(last = true)]
    pub args: Vec<std::ffi::OsString>,
}

/// Options of `__agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The workload whose helper it is.
    pub workload: String,
    /// The helper's arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// `scalebench profile …`.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// The built-in profiles, a line each.
    List {
        /// Print JSON: name, description and the settings each has for
        /// this OS and for which others.
        #[arg(long)]
        json: bool,
    },
    /// Every setting of a profile, for every OS it names.
    Show {
        /// A built-in profile's name or a profile file's path.
        name: String,
        /// Print JSON: the profile's fields and every setting with its OS.
        #[arg(long)]
        json: bool,
    },
    /// What applying a profile here would do: each setting for this OS,
    /// its value now and whether it would be changed, is already so, or
    /// would be refused and why. Changes nothing.
    Check {
        /// A built-in profile's name or a profile file's path.
        name: String,
        /// Print JSON (the record a result file would hold).
        #[arg(long)]
        json: bool,
    },
}

/// Options of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Print JSON: every benchmark (name, n, timed, quick_n, full_n) and
    /// workload (name, what, quick, between_hosts, several_clients).
    #[arg(long)]
    pub json: bool,
}

/// Options of `restore`.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// Where the runs made their work directories (default: the system
    /// temp dir, as `run --workdir`).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
}

/// Options of `load`.
#[derive(Debug, clap::Args)]
pub struct LoadArgs {
    /// URLs (http://host[:port]/path; IPv6 as http://[::1]:port/), taken
    /// round robin.
    #[arg(value_name = "URL")]
    pub urls: Vec<String>,
    /// Read URLs from a file (one per line; `#` comments) and replay them
    /// in file order; the default total is then one pass over the file.
    #[arg(long = "urls", visible_alias = "urls-file", value_name = "FILE")]
    pub urls_file: Option<PathBuf>,
    /// Concurrent connections.
    #[arg(short = 'c', long, default_value_t = 50, value_parser = values::whole::<u32>(1, 1_000_000))]
    pub connections: u32,
    /// Requests per connection before it is closed (1: a new connection
    /// for every request; default: keep connections alive).
    #[arg(short = 'k', long = "requests-per-connection", value_name = "K", value_parser = values::whole::<u64>(1, u64::MAX))]
    pub per_connection: Option<u64>,
    /// Total requests.
    #[arg(short = 'n', long, value_name = "N", value_parser = values::whole::<u64>(1, u64::MAX))]
    pub requests: Option<u64>,
    /// Duration (`10` and `10s` both mean ten seconds; `500ms`, `2m`;
    /// 1 ms to 30 days). With -n the load stops at whichever comes first.
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = values::load_duration, allow_negative_numbers = true)]
    pub duration: Option<std::time::Duration>,
    /// Threads, each with its own event loop.
    #[arg(short = 't', long, default_value_t = 1, value_parser = values::whole::<u32>(1, 1024))]
    pub threads: u32,
    /// Fixed request rate (requests per second in all); latency is then
    /// measured from when each request was due.
    #[arg(long, value_name = "R", value_parser = values::rate, allow_negative_numbers = true)]
    pub rate: Option<f64>,
    /// A request not answered within this fails as a timeout (1 ms to 1 h).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = values::load_timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// Retries of a failed request before it counts as failed.
    #[arg(long, default_value_t = 3, value_parser = values::whole::<u32>(0, u32::MAX))]
    pub retries: u32,
    /// Event backend (default: the best this OS has).
    #[arg(long, value_enum)]
    pub backend: Option<choices::Backend>,
    /// Load this long before measuring, a duration (`5s`; a bare number is
    /// seconds; not counted; needs -d).
    #[arg(long, value_name = "DURATION", value_parser = values::warm_up, requires = "duration")]
    pub warm_up: Option<std::time::Duration>,
    /// Processes to spread the connections over, each a `scalebench load`
    /// (default: as many as the open-files limit needs, usually 1).
    #[arg(long, value_name = "N", value_parser = values::whole::<u32>(1, 32))]
    pub processes: Option<u32>,
    /// Connect from this local address (repeat for several, taken round
    /// robin). Default: the OS's choice, or on Linux for a loopback URL
    /// that needs more ports than one address has, 127.0.0.1, 127.0.0.2, …
    #[arg(long = "source", value_name = "ADDR", value_parser = values::ip_addr)]
    pub sources: Vec<std::net::IpAddr>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress line on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// The measured time in this many rounds, each reported on its own
    /// (with --part: for the process that spreads the load).
    #[arg(long, hide = true, default_value_t = 1, value_parser = values::whole::<u32>(1, 1000), requires = "duration")]
    pub rounds: u32,
    /// Print the outcome as an exact part for a spreading parent (every
    /// count and the histogram's buckets), nothing else.
    #[arg(long, hide = true)]
    pub part: bool,
}

/// Options of `smtp-sink`.
#[derive(Debug, clap::Args)]
pub struct SmtpSinkArgs {
    /// Address to listen on; port 0 picks a free port (printed on start).
    #[arg(long, value_name = "ADDR:PORT", value_parser = values::listen_addr)]
    pub addr: Option<std::net::SocketAddr>,
    /// Listen on ::1 (IPv6) instead of 127.0.0.1 when --addr is not given.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Worker processes, each with a SO_REUSEPORT socket.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = values::whole::<u32>(1, 1024))]
    pub processes: u32,
    /// Wait this long before every reply (the greeting, each batch of
    /// pipelined replies, the end of data), as a slow remote MTA: `0`,
    /// `20ms`, up to 1 minute.
    #[arg(long, value_name = "DURATION", default_value = "0", value_parser = values::reply_delay, allow_negative_numbers = true)]
    pub reply_delay: std::time::Duration,
    /// Event backend (default: the best this OS has).
    #[arg(long, value_enum)]
    pub backend: Option<choices::Backend>,
    /// The name the sink gives itself in its greeting and EHLO reply.
    #[arg(long, default_value = "scalebench.invalid")]
    pub hostname: String,
    /// Print the counts at the end as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Options of `smtp-send`.
#[derive(Debug, clap::Args)]
pub struct SmtpSendArgs {
    /// The SMTP server: IP:PORT, [IPv6]:PORT or HOST:PORT.
    #[arg(value_name = "SERVER", value_parser = values::server_addr)]
    pub server: std::net::SocketAddr,
    /// Simultaneous sessions.
    #[arg(short = 's', long, default_value_t = 100, value_parser = values::whole::<u32>(1, 1_000_000))]
    pub sessions: u32,
    /// Messages to deliver in all.
    #[arg(short = 'n', long, value_name = "N", value_parser = values::whole::<u64>(1, u64::MAX))]
    pub messages: Option<u64>,
    /// Duration (`10`, `10s`, `500ms`, `2m`); with -n whichever comes first.
    #[arg(short = 'd', long, value_name = "DURATION", value_parser = values::load_duration, allow_negative_numbers = true)]
    pub duration: Option<std::time::Duration>,
    /// Messages per session before QUIT.
    #[arg(short = 'k', long = "per-session", default_value_t = 1, value_parser = values::whole::<u64>(1, u64::MAX))]
    pub per_session: u64,
    /// Message size in bytes, headers included (at least 87).
    #[arg(long = "size", value_name = "BYTES", default_value_t = 4096, value_parser = crate::net::smtp::send::message_size)]
    pub size: u64,
    /// Recipients per message.
    #[arg(short = 'r', long, default_value_t = 1, value_parser = values::whole::<u32>(1, 10_000))]
    pub recipients: u32,
    /// Bind each socket to this address before connecting (default: the
    /// unspecified address of the server's family, port 0, as MailEngine
    /// did).
    #[arg(long, value_name = "IP", conflicts_with = "no_bind", value_parser = values::ip_addr)]
    pub bind: Option<std::net::IpAddr>,
    /// Connect without binding first.
    #[arg(long)]
    pub no_bind: bool,
    /// Send MAIL, RCPT and DATA one at a time even when the server offers
    /// PIPELINING.
    #[arg(long)]
    pub no_pipelining: bool,
    /// A reply not received within this fails the session (1 ms to 1 h).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = values::load_timeout, allow_negative_numbers = true)]
    pub timeout: std::time::Duration,
    /// Sender processes (default: as many as the sessions need, given how
    /// many descriptors one process may open).
    #[arg(long, value_name = "N", value_parser = values::whole::<u32>(1, 1024))]
    pub processes: Option<u32>,
    /// Event backend (default: the best this OS has).
    #[arg(long, value_enum)]
    pub backend: Option<choices::Backend>,
    /// Per-interval tallies (for sweeps): untallied time at the start, a
    /// duration (`2s`; a bare number is seconds; `--warmup` is the old
    /// spelling).
    #[arg(long = "warm-up", alias = "warmup", value_name = "DURATION", default_value = "0", value_parser = values::heat_up, allow_negative_numbers = true)]
    pub warmup: std::time::Duration,
    /// Per-interval tallies (for sweeps): the length of each interval.
    #[arg(long, value_name = "DURATION", value_parser = values::sample_time, allow_negative_numbers = true)]
    pub interval: Option<std::time::Duration>,
    /// Print the outcome as JSON (exact histograms included).
    #[arg(long)]
    pub json: bool,
}

/// Options of `serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Directory to serve; nothing outside it is ever served.
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Make this file in --root first (made with the directory if it is
    /// missing): NAME=BYTES, its bytes a fixed pattern; repeatable. The
    /// workloads make their objects this way on the server host.
    #[arg(long = "object", value_name = "NAME=BYTES", value_parser = values::object)]
    pub objects: Vec<(String, usize)>,
    /// Replace an existing --object file of that name (never a link or
    /// anything but a regular file).
    #[arg(long)]
    pub force: bool,
    /// Address to listen on; port 0 picks a free port (printed on start).
    #[arg(long, value_name = "ADDR:PORT", value_parser = values::listen_addr)]
    pub addr: Option<std::net::SocketAddr>,
    /// Listen on ::1 (IPv6) instead of 127.0.0.1 when --addr is not given.
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Event backend (default: io_uring where the kernel has it, else the
    /// best readiness backend this OS has).
    #[arg(long, value_enum)]
    pub backend: Option<choices::Backend>,
    /// Serve with io_uring (Linux 6.1+): multishot accept and receive,
    /// batched sends; the default where available unless --backend names
    /// a readiness backend.
    #[arg(long)]
    pub io_uring: bool,
    /// Serve on the best readiness backend of this OS (epoll, kqueue)
    /// rather than io_uring, without naming it (the workloads' default:
    /// the server host picks its own).
    #[arg(long, conflicts_with_all = ["io_uring", "backend"])]
    pub no_io_uring: bool,
    /// Worker processes sharing one listening socket (bound before they fork).
    #[arg(long, value_name = "N", conflicts_with = "reuseport", value_parser = values::whole::<u32>(1, 1024))]
    pub processes: Option<u32>,
    /// Worker processes with a SO_REUSEPORT socket each.
    #[arg(long, value_name = "N", value_parser = values::whole::<u32>(1, 1024))]
    pub reuseport: Option<u32>,
    /// How a file is found and held: `per-request` (looked up, opened,
    /// sent and closed for each request, as the seeds' servers; what the
    /// web workloads use unless told otherwise) or `cached` (open files and
    /// bodies up to 64 KB kept between requests).
    #[arg(long, value_enum, default_value = "cached")]
    pub files: choices::Files,
    /// Send every body with sendfile(2) (read/write where the OS has none).
    #[arg(long, conflicts_with = "readwrite")]
    pub sendfile: bool,
    /// Send every body with read(2)/write(2) instead of sendfile.
    #[arg(long)]
    pub readwrite: bool,
    /// Requests per connection before the server closes it.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = values::whole::<u64>(0, u64::MAX))]
    pub max_requests: u64,
    /// Close a connection idle this long (seconds or with a unit, up to a
    /// day; 0: never).
    #[arg(long, value_name = "SECONDS", default_value = "15", value_parser = values::server_timeout, allow_negative_numbers = true)]
    pub idle_timeout: values::ServerTimeout,
    /// Close a connection whose request head is not complete this long
    /// after its first byte (seconds or with a unit, up to a day; 0: never).
    #[arg(long, value_name = "SECONDS", default_value = "10", value_parser = values::server_timeout, allow_negative_numbers = true)]
    pub header_timeout: values::ServerTimeout,
    /// Accept connections as soon as they are established, not once their
    /// first data has arrived (TCP_DEFER_ACCEPT on Linux, the dataready
    /// accept filter on FreeBSD and NetBSD; elsewhere accepting is never
    /// deferred).
    #[arg(long)]
    pub no_defer_accept: bool,
    /// A process per connection, as the seeds' fnord under tcpserver: it
    /// accepts, forks a child that serves that connection alone (blocking
    /// reads and writes) and reaps it when the connection closes.
    #[arg(long, conflicts_with_all = ["processes", "reuseport", "io_uring", "backend", "nginx"])]
    pub fork_per_connection: bool,
    /// Run nginx over --root instead: scalebench writes its configuration
    /// (worker_processes from --processes or --reuseport, `reuseport` with
    /// the latter, access log off, sendfile, worker_connections from the
    /// open-files limit) in --nginx-dir, starts it, checks it answers, and
    /// stops it when this ends. Answers `info` on its input with nginx's
    /// version and configuration.
    #[arg(long, conflicts_with_all = ["io_uring", "backend", "readwrite", "sendfile", "files"])]
    pub nginx: bool,
    /// Where nginx's configuration, pid file and logs go (default: a
    /// temporary directory, removed at the end).
    #[arg(long, value_name = "DIR", requires = "nginx")]
    pub nginx_dir: Option<PathBuf>,
}

/// Options of the internal benchmark server.
#[derive(Debug, clap::Args)]
pub struct ResponderArgs {
    /// Event backend.
    #[arg(long, value_enum)]
    pub backend: choices::Backend,
    /// Address to listen on; port 0 picks a free port.
    #[arg(long, default_value = "127.0.0.1:0", value_parser = values::listen_addr)]
    pub addr: std::net::SocketAddr,
    /// Send one byte (`!`) to every new connection.
    #[arg(long)]
    pub greet: bool,
    /// Body length of every response.
    #[arg(long, default_value_t = 128, value_parser = values::whole::<usize>(0, usize::MAX))]
    pub body: usize,
    /// Pin the server to this CPU.
    #[arg(long, value_parser = values::whole::<usize>(0, usize::MAX))]
    pub cpu: Option<usize>,
    /// Connections accepted per readiness event (1: every connection is
    /// noticed through the event backend).
    #[arg(long, default_value_t = 256, value_parser = values::whole::<usize>(0, usize::MAX))]
    pub accept_burst: usize,
    /// The work directory of the run that started this server (it makes
    /// the process recognisable in `ps`; with --from-file the body's file
    /// is made in a directory of its own there).
    #[arg(long)]
    pub run_dir: Option<std::path::PathBuf>,
    /// Answer a GET of `/body.txt` from a file of --body bytes, looked up,
    /// opened, sent with sendfile and closed per request (the seeds'
    /// path), instead of from memory; needs --run-dir.
    #[arg(long, requires = "run_dir", conflicts_with = "greet")]
    pub from_file: bool,
}

/// Options of `run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// Benchmarks, workloads, suites (`quick`, `full`) and suite files
    /// (`FILE.toml`: docs/suites.md) to run, in order. Options given
    /// beside a suite file replace the file's.
    #[arg(value_name = "NAME|SUITE|FILE.toml")]
    pub targets: Vec<String>,
    /// Items per run for every benchmark (overrides the suite's sizes).
    #[arg(long, value_name = "N", value_parser = values::whole::<u64>(1, u64::MAX), allow_negative_numbers = true)]
    pub max: Option<u64>,
    /// Benchmarks and workloads named on their own run at the `full`
    /// suite's sizes (the seeds'), not the quick ones.
    #[arg(long)]
    pub full: bool,
    /// Runs per benchmark, or `auto`: runs are added until both ends of n
    /// are known within --runs-target (after 3 runs, at most --runs-max).
    /// Default: 3 to 8 runs, stopping once the verdict is decided (90 % of
    /// resampled runs agree on one label), after 5 when it is a range of
    /// growth classes the data cannot tell apart; each series records why
    /// it stopped.
    #[arg(long, value_name = "R|auto", value_parser = values::runs, allow_negative_numbers = true)]
    pub runs: Option<values::Runs>,
    /// With --runs auto: the most runs (default 20).
    #[arg(long, value_name = "R", value_parser = values::whole::<u32>(3, 1000), requires = "runs")]
    pub runs_max: Option<u32>,
    /// With --runs auto: how closely both ends of n must be known, the
    /// half-width of the 95 % interval of the runs' mean, in percent
    /// (default 5).
    #[arg(long, value_name = "PERCENT", value_parser = values::percent, requires = "runs")]
    pub runs_target: Option<f64>,
    /// Result file (default: results/<host>-<UTC time>.json, with -2,
    /// -3, … added when taken). It must not exist (see --force), and its
    /// directory must. (`--out` is the old spelling.)
    #[arg(long = "output", short = 'o', alias = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Replace the result file given with --output (and the HTML report
    /// beside it) when they exist; only regular files are ever replaced.
    #[arg(long)]
    pub force: bool,
    /// Timer for every sample [default: monotonic].
    #[arg(long, value_enum)]
    pub timer: Option<Timer>,
    /// Benchmarks: operations done and discarded before the first run
    /// (default n/20, 10–500; `--warmup` is the old spelling).
    #[arg(long = "warm-up-ops", alias = "warmup", value_name = "OPERATIONS", value_parser = values::whole::<u64>(0, u64::MAX))]
    pub warmup: Option<u64>,
    /// Benchmarks: how each run visits n — `passes` (the default: up and
    /// down, so that a drift over a run's time cannot pass for growth) or
    /// `up` (one ascending pass per run, as the seeds measured).
    #[arg(long, value_name = "ORDER", value_parser = crate::harness::series::RunOrder::parse)]
    pub order: Option<crate::harness::series::RunOrder>,
    /// Keep the whole run within this wall time (`60s`, `2min`; `off`:
    /// none): each benchmark series gets a share of what is left (by what
    /// it took on the project's machine) and makes fewer passes, then a
    /// lower n (a cap on `time`, said so), and adds no run that would not
    /// fit — smaller n and fewer runs, so less sure verdicts. One system
    /// and one profile only.
    #[arg(long, value_name = "DURATION", value_parser = values::time_goal)]
    pub within: Option<values::TimeGoal>,
    /// Where to create the work directory (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Name of this system in reports (default: the host name).
    #[arg(long, value_name = "NAME", value_parser = values::label)]
    pub label: Option<String>,
    /// Record these sysctls too in the result file's `system.sysctls`,
    /// comma separated, repeatable (only read; one this system does not
    /// have is named on stderr and left out).
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    pub record_sysctl: Vec<String>,
    /// Measure under these tuning profiles, comma separated (built-in
    /// names or .toml files; `scalebench profile list`): each is applied,
    /// measured under and put back, in turn for every benchmark and
    /// workload, each with its own result file, all in one report.
    /// `default` changes nothing.
    #[arg(long, value_name = "PROFILE,…", value_delimiter = ',')]
    pub profile: Vec<String>,
    /// Where the client or the server of the network benchmarks and
    /// workloads runs: `server=ssh:[USER@]HOST[:PORT][,bin=PATH]` (another
    /// machine; the scalebench at PATH there or on its PATH when it is
    /// this build or another of the same agent protocol — another OS,
    /// arch or C library —, else this one copied there when the host's OS
    /// and arch are this build's), `server=netns:NAME` or
    /// `client=netns:NAME` (a network namespace here, such as a test
    /// bed's host), `ROLE=local` (the default). The server once; the
    /// first client is where scalebench runs and measures; further
    /// `client=netns:…` or `client=ssh:…` share the HTTP workloads' load.
    #[arg(long = "host", value_name = "ROLE=WHERE")]
    pub hosts: Vec<crate::hosts::HostSpec>,
    /// Run the same plan on several systems side by side, each with its
    /// own result file (`<out>-NAME.json`) and all in one report; each
    /// benchmark and workload runs on every system in turn (A B A B), so
    /// that drift falls on all alike. `NAME=local` is this machine;
    /// `NAME=kernel:PATH[,cpus=N][,memory=SIZE][,modules=DIR][,cmdline=…]`
    /// boots that Linux kernel in QEMU over this machine's root,
    /// read-only, with a static build of scalebench as its init (KVM when
    /// it works here, else emulated by TCG and marked so; `accel=kvm|tcg`
    /// on any guest skips the 5 s probe);
    /// `NAME=kernel:debian:VERSION[,flavour=F][,cpus=N][,memory=SIZE]`
    /// boots the newest Debian cloud kernel of a line (5.10, 6.1, 6.12,
    /// 7.2, sid, or a package's name; `flavour=generic` or `rt` for those
    /// builds), fetched from Debian's archive into a cache (`scalebench
    /// kernels`); `seed=N` on either kernel kind: a guest counting
    /// instructions boots with its clock at a fixed time, so that two
    /// boots draw the same random secrets, and N moves it N seconds (other
    /// secrets);
    /// `NAME=image:DISK,ssh=USER[,key=FILE][,bin=PATH]` boots a disk
    /// image of any OS and drives it over ssh; `NAME=ssh:[USER@]HOST[,bin=PATH]`
    /// is another machine; `profile=NAME|FILE` on any but `local` tunes
    /// that system with a tuning profile for each item and puts it back
    /// after (tuned and untuned alternate in one run; before `cmdline=`)
    /// (docs/comparing.md). Repeatable.
    #[arg(long, value_name = "NAME=SPEC", value_parser = parse_system)]
    pub system: Vec<crate::systems::spec::SystemSpec>,
    /// The static scalebench a `kernel:` system boots with (default: this
    /// one if it is static, else the musl build beside it:
    /// target/x86_64-unknown-linux-musl/release/scalebench).
    #[arg(long, value_name = "FILE")]
    pub guest_bin: Option<PathBuf>,
    /// What an emulated guest's clock counts: `instructions` (QEMU's
    /// instruction counting, one vCPU: a figure is the instructions the
    /// guest executed, the same on every run and host, blind to caches,
    /// memory and contention; the default) or `time` (the host's time as
    /// QEMU emulates, several vCPUs, drifting with the host's load).
    /// A KVM guest's clock is time.
    #[arg(long, value_name = "instructions|time", value_parser = crate::systems::qemu::GuestClock::parse)]
    pub guest_clock: Option<crate::systems::qemu::GuestClock>,
    /// ssh's configuration file for `--host …=ssh:` (`ssh -F`; `testbed
    /// status` prints a test bed's).
    #[arg(long, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// Pin the benchmarking process to this CPU. Without it, every
    /// benchmark run is pinned to the first CPU (with the processes it
    /// starts), and the network benchmarks' server to the last.
    #[arg(
        long,
        value_name = "CPU",
        conflicts_with = "no_pin",
        allow_negative_numbers = true,
        value_parser = values::whole::<usize>(0, 65_535)
    )]
    pub pin: Option<usize>,
    /// Pin nothing: leave benchmark runs and servers to the scheduler.
    #[arg(long)]
    pub no_pin: bool,
    /// Event backends for the network benchmarks, comma separated, or
    /// `all` (every backend this OS has; the default).
    #[arg(
        long,
        value_name = "epoll|poll|select|kqueue|all",
        value_delimiter = ',',
        value_parser = crate::run::spec::backend
    )]
    pub backend: Vec<crate::run::spec::BackendPick>,
    /// Network benchmarks over IPv6 (::1) instead of IPv4 (127.0.0.1).
    #[arg(short = '6', long = "ipv6")]
    pub ipv6: bool,
    /// Workloads: one too large for this machine (the fs site, the
    /// pgbench database on its disk) is shrunk to what fits, the result
    /// saying from what and why, instead of refused (the seeds suite sets
    /// it).
    #[arg(long)]
    pub fit: bool,
    /// Print every item the run would measure, in order, with an
    /// estimate of its time and the total; measure nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: print the plan and its estimate as JSON.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    /// No progress output on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Do not write the HTML report beside the result file.
    #[arg(long)]
    pub no_report: bool,
    /// After each benchmark, profile it at low and at high n (the timed
    /// operation and its undo, repeated while a sampling profiler records
    /// call stacks) and say which functions make it grow. Needs perf on
    /// Linux, DTrace on FreeBSD and macOS.
    #[arg(long)]
    pub why: bool,
    /// Length of each profile window, seconds [default: 2].
    #[arg(long, value_name = "SECONDS", value_parser = values::profile_window, allow_negative_numbers = true)]
    pub why_seconds: Option<f64>,
    /// The profiler's program (default: perf on Linux, dtrace elsewhere).
    #[arg(long, value_name = "PROGRAM")]
    pub profiler: Option<String>,
    /// Sweep a workload over levels of one variable instead of measuring it
    /// once: `connections=1,10,100,1000` for the HTTP workloads. Each level
    /// is a heat-up, then samples; the mean of the last three is its figure.
    /// pgbench, mail and forward sweep levels of their own without it; the
    /// three options below set their timings too.
    #[arg(long, value_name = "VAR=L,L,…", value_parser = values::sweep, help_heading = "Sweeps")]
    pub sweep: Option<(String, Vec<f64>)>,
    /// Unmeasured time before each level's samples, a duration (`2s`,
    /// `500ms`; a bare number is seconds; default: quick 1 s, full 10 s;
    /// `--heat-up` is the old spelling).
    #[arg(long = "warm-up", alias = "heat-up", value_name = "DURATION", value_parser = values::heat_up, allow_negative_numbers = true, help_heading = "Sweeps")]
    pub heat_up: Option<std::time::Duration>,
    /// Length of one sample (default: quick 2 s, full 10 s).
    #[arg(long, value_name = "DURATION", value_parser = values::sample_time, allow_negative_numbers = true, help_heading = "Sweeps")]
    pub sample_time: Option<std::time::Duration>,
    /// Samples per level, at least 1 (default: quick 3, full 5); the mean
    /// of the last three is the level's figure.
    #[arg(long, value_name = "K", value_parser = values::whole::<u32>(1, 1000), help_heading = "Sweeps")]
    pub samples: Option<u32>,
    /// The level per-unit efficiency is normalised to (default: the lowest).
    #[arg(long, value_name = "LEVEL", value_parser = values::whole::<u64>(1, 1_000_000), help_heading = "Sweeps")]
    pub baseline: Option<u64>,
    /// What the monitor samples during every series and workload: `on`
    /// (the system's counters: CPU states, context switches, interrupts,
    /// run queue, memory, faults, network; the default), `perf` (those and
    /// `perf stat` counters over the whole machine), `off`.
    #[arg(long, value_name = "on|perf|off", value_parser = crate::run::spec::monitor_kind, help_heading = "Monitor")]
    pub monitor: Option<crate::run::spec::MonitorKind>,
    /// Between the monitor's samples, a duration (default 1 s; 10 ms to
    /// 1 hour).
    #[arg(long, value_name = "DURATION", value_parser = values::monitor_interval, allow_negative_numbers = true, help_heading = "Monitor")]
    pub monitor_interval: Option<std::time::Duration>,
    /// The events `--monitor perf` counts, comma separated (default:
    /// cycles, instructions, cache-misses, branch-misses, cpu-clock,
    /// context-switches, cpu-migrations, page-faults).
    #[arg(
        long,
        value_name = "EVENT,…",
        value_delimiter = ',',
        value_parser = crate::run::spec::perf_event,
        help_heading = "Monitor"
    )]
    pub perf_events: Vec<String>,
}

/// `--system NAME=SPEC`.
fn parse_system(s: &str) -> Result<crate::systems::spec::SystemSpec, String> {
    s.parse()
}

/// Options of `why`.
#[derive(Debug, clap::Args)]
pub struct WhyArgs {
    /// The result file whose benchmarks to profile.
    #[arg(value_name = "RESULT.json")]
    pub file: PathBuf,
    /// Only these benchmarks (names or series, e.g. `bind`, `httpreq[poll]`).
    #[arg(long = "only", value_name = "NAME", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Write the file with the profiles here instead of over the input
    /// (`--out` is the old spelling).
    #[arg(long = "output", short = 'o', alias = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Length of each profile window, seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 2.0, value_parser = values::profile_window, allow_negative_numbers = true)]
    pub seconds: f64,
    /// The profiler's program (default: perf on Linux, dtrace elsewhere).
    #[arg(long, value_name = "PROGRAM")]
    pub profiler: Option<String>,
    /// Where to create the work directory (default: the system temp dir).
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Profile even when the file was measured on another host.
    #[arg(long)]
    pub any_host: bool,
    /// Replace an existing `--out` file (never a link, a directory or
    /// another input).
    #[arg(long)]
    pub force: bool,
    /// No progress output on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Result files; each is one system (or tuning), labelled by the label
    /// it was run with (the host name unless `run --label` said otherwise);
    /// a directory stands for the result files in it, by name; a store
    /// query (`'label=linux-6.1 latest'`) for the stored runs it selects.
    #[arg(value_name = "RESULT.json|DIR|QUERY")]
    pub files: Vec<PathBuf>,
    /// A result file with the label to show for it instead of its own;
    /// repeatable (`--label NAME=FILE` is the old spelling).
    #[arg(long = "relabel", alias = "label", value_name = "NAME=FILE")]
    pub labels: Vec<String>,
    /// Output format [default: from the --output file's extension (.html,
    /// .md, .json, .csv), else terminal; an extension naming another
    /// format is refused].
    #[arg(long, short, value_enum)]
    pub format: Option<Format>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Judge every series again, even where its result file keeps a
    /// verdict made by this analysis with these options from these runs.
    #[arg(long)]
    pub rejudge: bool,
    /// Write the HTML report to this file (the same as `--format html -o FILE`).
    #[arg(long, value_name = "OUT.html", conflicts_with_all = ["format", "output"])]
    pub html: Option<PathBuf>,
    /// With `--format markdown`: write a chart per benchmark into this
    /// directory as SVG and link it (made if only it is missing).
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
    /// Replace existing files (the report, its charts; never a link, a
    /// directory or an input).
    #[arg(long)]
    pub force: bool,
    /// The store queries are asked of.
    #[command(flatten)]
    pub store: stored::StoreArg,
}

/// Options of `compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The result file to compare against, or a store query selecting
    /// one stored run (`'label=linux-6.1 latest'`).
    #[arg(value_name = "BASE.json|QUERY")]
    pub base: Option<PathBuf>,
    /// The result file of the change, or a store query selecting one run.
    #[arg(value_name = "NEW.json|QUERY")]
    pub new: Option<PathBuf>,
    /// BASE given by name (the arguments are then NEW, if it is not
    /// given by name too).
    #[arg(long = "base", value_name = "BASE.json|QUERY")]
    pub base_opt: Option<PathBuf>,
    /// NEW given by name.
    #[arg(long = "new", value_name = "NEW.json|QUERY")]
    pub new_opt: Option<PathBuf>,
    /// The change a cost or throughput must clear, in percent (default:
    /// twice the run-to-run noise of the two files, 10–25 %, for
    /// benchmarks; 10 % for workload figures measured once).
    #[arg(long, value_name = "PERCENT", value_parser = values::percent)]
    pub threshold: Option<f64>,
    /// Exit with status 3 when a row is a regression (slower, less
    /// throughput, or a class that grows faster) or, with `class-change`,
    /// when any class changed.
    #[arg(long, value_enum, value_name = "WHAT", conflicts_with = "bisect")]
    pub fail_on: Option<FailOn>,
    /// Exit for `git bisect run`: 0 when NEW is good (nothing regressed),
    /// 1 when bad (a regression, or a class that grows faster), 125 to
    /// skip it (NEW cannot be read — its kernel did not boot, say — or a
    /// row cannot be judged: missing, failed, undecided); 128 on any other
    /// error (BASE unreadable: the bisection stops).
    #[arg(long)]
    pub bisect: bool,
    /// Output format [default: from the --output file's extension (.md,
    /// .json), else terminal; an extension naming another format is
    /// refused].
    #[arg(long, short, value_enum)]
    pub format: Option<CompareFormat>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing file (never a link, a directory or an input).
    #[arg(long)]
    pub force: bool,
    /// The store queries are asked of.
    #[command(flatten)]
    pub store: stored::StoreArg,
}

/// Options of `history`.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Result files, at least two; a directory stands for the result
    /// files in it, a store query (`'label=linux-6.1 last=10'`) for the
    /// stored runs it selects.
    #[arg(value_name = "RESULT.json|DIR|QUERY", required = true, num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Only this benchmark (its every series) or workload.
    #[arg(long, value_name = "NAME")]
    pub benchmark: Option<String>,
    /// The n a benchmark's cost is read at (default: the largest n every
    /// file measured). At most 2^53, the largest n a result file holds
    /// exactly.
    #[arg(long, value_name = "N", value_parser = values::whole::<u64>(1, 1 << 53))]
    pub at: Option<u64>,
    /// The files' order: by the time their runs started, by label, or as
    /// given.
    #[arg(long, value_enum, default_value_t = HistoryOrder::Time)]
    pub order: HistoryOrder,
    /// Output format [default: from the --output file's extension (.md,
    /// .json, .html), else terminal; an extension naming another format
    /// is refused].
    #[arg(long, short, value_enum)]
    pub format: Option<HistoryFormat>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing file (never a link, a directory or an input).
    #[arg(long)]
    pub force: bool,
    /// The store queries are asked of.
    #[command(flatten)]
    pub store: stored::StoreArg,
}

/// The order of `history`'s files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HistoryOrder {
    /// By the time each run started.
    Time,
    /// By label.
    Label,
    /// As given.
    Given,
}

/// What makes `compare` fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A regression: slower, less throughput, or a class that grows faster.
    Regression,
    /// Any change of growth class.
    ClassChange,
}

/// Options of `export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// Result files; a directory stands for the result files in it.
    #[arg(required = true, value_name = "RESULT.json|DIR")]
    pub files: Vec<PathBuf>,
    /// Output format [default: csv; both are CSV, so an --output name
    /// must end .csv or name no format].
    #[arg(long, short, value_enum)]
    pub format: Option<ExportFormat>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing file (never a link, a directory or an input).
    #[arg(long)]
    pub force: bool,
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// `system,benchmark,run,n,ns,emulated,counts`, one row per sample (the
    /// re-timings at low n that check for drift are not samples: not
    /// exported).
    Csv,
    /// Every sample of every sweep: `system,workload,row,target,variable,
    /// unit,level,sample,t,seconds,value,errors,p50_ns,p99_ns,
    /// mean_latency_ns,level_value,cpu_busy,busy_mhz,emulated`.
    SweepCsv,
}

/// Options of `analyze`.
#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// CSV file with a header naming `n` and `ns` (and optionally `run`); `-` for stdin.
    #[arg(value_name = "FILE.csv")]
    pub file: PathBuf,
    /// Name of the series in the output.
    #[arg(long, default_value = "series")]
    pub name: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t = Format::Terminal)]
    pub format: Format,
}

/// Options of `sysinfo`.
#[derive(Debug, clap::Args)]
pub struct SysinfoArgs {
    /// Print JSON (the `system` object of a result file).
    #[arg(long)]
    pub json: bool,
    /// Show these sysctls too, comma separated, repeatable (as `run
    /// --record-sysctl` records them).
    #[arg(long, value_name = "NAME,…", value_delimiter = ',')]
    pub record_sysctl: Vec<String>,
}

/// An error in words, as `main` prints it: its chain of causes joined by
/// `: `, outermost first, errno numbers by name (`ENOENT`). Each error
/// says only its own part and leaves its cause to its source, so nothing
/// here edits the words; a chain whose cause repeats an outer message
/// ([`repeated`]) is a bug, a panic in a debug build (the tests').
pub fn error_words(e: &anyhow::Error) -> String {
    let words: Vec<String> = e
        .chain()
        .map(|c| crate::sys::errno_words(&c.to_string()))
        .collect();
    debug_assert!(
        repeated(&words).is_none(),
        "an error repeats its cause: {words:?}"
    );
    words.join(": ")
}

/// Whether the command line asks for `compare --bisect`, read word by word
/// (for when it does not parse).
fn bisecting() -> bool {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter().any(|a| a == "compare") && args.iter().any(|a| a == "--bisect")
}

/// The exit status of a command that ended in `e`: 2 where what was asked
/// is wrong in itself (a [`crate::sys::values::Usage`], a run request's
/// [`crate::run::spec::OptionError`] marked usage, a store's malformed
/// location or query, an unknown profile, anywhere in its chain), 1 for
/// any other failure: the statuses `--help` lists.
pub fn exit_status(e: &anyhow::Error) -> std::process::ExitCode {
    let usage = e.chain().any(|c| {
        c.is::<crate::sys::values::Usage>()
            || c.downcast_ref::<crate::run::spec::OptionError>()
                .is_some_and(|o| o.usage)
            || c.downcast_ref::<crate::store::Error>()
                .is_some_and(crate::store::Error::is_usage)
            || c.downcast_ref::<crate::tuning::ProfileError>()
                .is_some_and(crate::tuning::ProfileError::is_usage)
    });
    std::process::ExitCode::from(if usage { 2 } else { 1 })
}

/// The first message of a chain (`words`, outermost first) that an outer
/// message already holds, if one does.
pub fn repeated(words: &[String]) -> Option<&str> {
    words.iter().enumerate().find_map(|(i, w)| {
        let w = w.trim();
        (!w.is_empty() && words[..i].iter().any(|outer| outer.contains(w))).then_some(w)
    })
}

/// Every option that takes a value takes a negative number as its value,
/// so that `--warmup -3` reaches the option's own check ("must be at least
/// 0") instead of clap's "unexpected argument '-3'". Positional arguments
/// are left alone: there `-6` is still the flag it names.
fn negatives_are_values(c: clap::Command) -> clap::Command {
    c.mut_args(|a| {
        if a.get_action().takes_values() && !a.is_positional() {
            a.allow_negative_numbers(true)
        } else {
            a
        }
    })
    .mut_subcommands(negatives_are_values)
}

/// The whole command line's definition: every subcommand, `run` with
/// every workload's flags.
pub(crate) fn command() -> clap::Command {
    use clap::CommandFactory;
    negatives_are_values(Cli::command().mut_subcommand("run", workflags::add))
}

/// Runs the command line; returns the exit code.
pub fn main() -> anyhow::Result<ExitCode> {
    use clap::FromArgMatches;
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        // Under `git bisect run`, a `compare --bisect` command line that
        // does not parse stops the bisection (128) instead of calling the
        // commit bad (2).
        Err(e) if e.use_stderr() && bisecting() => {
            let _ = e.print();
            sys::say!("compare --bisect: stop: the command line is wrong (exit 128)");
            return Ok(ExitCode::from(128));
        }
        Err(e) => e.exit(),
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match cli.command {
        Command::List(a) => commands::list(a.json),
        Command::Run(a) => {
            let m = matches.subcommand_matches("run").expect("run's matches");
            run::run(&a, workflags::given(m))
        }
        Command::RunRequest(a) => run::request(a),
        Command::Report(a) => commands::report(a),
        Command::Compare(a) => commands::compare(a),
        Command::History(a) => commands::history(a),
        Command::Results(c) => stored::run(c),
        Command::Dashboard(a) => stored::dashboard(a),
        Command::Kernels(c) => kernels::run(c),
        Command::Export(a) => commands::export(a),
        Command::Analyze(a) => commands::analyze(a),
        Command::Sysinfo(a) => commands::sysinfo(a),
        Command::Serve(a) => serve::run(a),
        Command::Load(a) => load::run(a),
        Command::SmtpSink(a) => smtp::sink(a),
        Command::SmtpSend(a) => smtp::send(a),
        Command::Profile(c) => profile::run(c),
        Command::Suite(c) => suite::run(c),
        Command::Restore(a) => profile::restore(a),
        Command::Why(a) => why::run(a),
        Command::Testbed(c) => testbed::run(c),
        Command::Completions(a) => docs::completions(&a),
        Command::Man(a) => docs::man(&a),
        Command::Responder(a) => responder::run(a),
        Command::Boot(b) => boot::boot(&b),
        Command::Hello => {
            sys::out!("{}", crate::hosts::agent::Hello::mine());
            Ok(ExitCode::SUCCESS)
        }
        Command::BuildId => {
            sys::out!("{}", crate::hosts::agent::build_id());
            Ok(ExitCode::SUCCESS)
        }
        Command::Addresses => {
            for a in crate::sys::ifaddrs::addresses() {
                sys::out!("{}/{}", a.ip, a.prefix);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::HostExec(a) => Ok(crate::hosts::agent::supervise(
            std::time::Duration::from_secs(a.idle_timeout.max(1)),
            a.remove_dir,
            a.args,
        )),
        Command::Agent(a) => {
            let w = crate::workloads::find(&a.workload)
                .ok_or_else(|| anyhow::anyhow!("__agent {}: no such workload", a.workload))?;
            w.agent(&a.args)
                .unwrap_or_else(|| Err(anyhow::anyhow!("__agent {}: it has no helper", a.workload)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;
    use clap::CommandFactory;

    #[test]
    fn causes_are_joined_outermost_first_and_errnos_by_name() {
        let io = || std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = Err::<(), _>(io()).context("writing a.csv").unwrap_err();
        assert_eq!(
            error_words(&e),
            "writing a.csv: No such file or directory (ENOENT)"
        );
        let e = Err::<(), _>(anyhow::anyhow!("no namespace x"))
            .context("--host server=netns:x")
            .unwrap_err();
        assert_eq!(error_words(&e), "--host server=netns:x: no namespace x");
    }

    #[test]
    fn a_cause_that_repeats_an_outer_message_is_found() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(repeated(&words(&["writing a.csv", "disk full"])), None);
        assert_eq!(
            repeated(&words(&[
                "cannot read r.json: No such file",
                "No such file"
            ])),
            Some("No such file")
        );
        assert_eq!(repeated(&words(&["a", ""])), None);
    }

    #[test]
    fn negative_numbers_reach_the_option_check() {
        let cmd = negatives_are_values(Cli::command());
        let e = cmd
            .try_get_matches_from(["scalebench", "run", "--warmup", "-3"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be at least 0"), "{e}");
        // A flag among positional arguments stays a flag.
        let m = negatives_are_values(Cli::command())
            .try_get_matches_from(["scalebench", "run", "connect", "-6"])
            .unwrap();
        let (_, run) = m.subcommand().unwrap();
        assert!(run.get_flag("ipv6"));
    }

    /// `args` parsed as a whole command line.
    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("scalebench").chain(args.iter().copied()))
    }

    #[test]
    fn one_vocabulary_with_the_old_spellings_as_aliases() {
        // The same option under its name and under its old spelling.
        let pairs: [(&[&str], &[&str]); 7] = [
            (&["run", "-o", "r.json"], &["run", "--out", "r.json"]),
            (&["run", "--output", "r.json"], &["run", "--out", "r.json"]),
            (&["run", "--warm-up-ops", "7"], &["run", "--warmup", "7"]),
            (&["run", "--warm-up", "2s"], &["run", "--heat-up", "2s"]),
            (
                &["why", "r.json", "-o", "w.json"],
                &["why", "r.json", "--out", "w.json"],
            ),
            (
                &["report", "--relabel", "a=r.json"],
                &["report", "--label", "a=r.json"],
            ),
            (
                &["smtp-send", "127.0.0.1:25", "--warm-up", "1s"],
                &["smtp-send", "127.0.0.1:25", "--warmup", "1s"],
            ),
        ];
        for (new, old) in pairs {
            let (a, b) = (parse(new).unwrap(), parse(old).unwrap());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{new:?} vs {old:?}");
        }
        // Every command that writes a file says -o/--output.
        for c in ["run", "why", "report", "compare", "history", "export"] {
            let cmd = Cli::command();
            let sub = cmd.find_subcommand(c).unwrap();
            let o = sub.get_arguments().find(|a| a.get_short() == Some('o'));
            assert_eq!(o.and_then(|a| a.get_long()), Some("output"), "{c}");
        }
        // Each --format offers only what its command writes.
        for (args, bad) in [
            (&["compare", "a", "b", "-f"][..], "csv"),
            (&["compare", "a", "b", "-f"][..], "html"),
            (&["history", "a", "b", "-f"][..], "csv"),
        ] {
            let mut v = args.to_vec();
            v.push(bad);
            let e = parse(&v).unwrap_err().to_string();
            assert!(e.contains(&format!("invalid value '{bad}'")), "{e}");
        }
        assert!(parse(&["history", "a", "b", "-f", "html"]).is_ok());
    }

    #[test]
    fn compare_takes_base_and_new_by_place_or_by_name() {
        let pair = |args: &[&str]| -> Result<(String, String), String> {
            let Command::Compare(a) = parse(args).map_err(|e| e.to_string())?.command else {
                panic!("{args:?}")
            };
            commands::compare_pair(&a)
                .map(|(b, n)| (b.display().to_string(), n.display().to_string()))
                .map_err(|e| e.to_string())
        };
        let want = Ok(("a".to_string(), "b".to_string()));
        assert_eq!(pair(&["compare", "a", "b"]), want);
        assert_eq!(pair(&["compare", "--base", "a", "--new", "b"]), want);
        assert_eq!(pair(&["compare", "--base", "a", "b"]), want);
        assert_eq!(pair(&["compare", "a", "--new", "b"]), want);
        let e = pair(&["compare", "--base", "a", "--new", "b", "c"]).unwrap_err();
        assert!(
            e.contains("compare c: BASE and NEW are given already"),
            "{e}"
        );
        let e = pair(&["compare", "a"]).unwrap_err();
        assert!(e.contains("needs BASE and NEW"), "{e}");
    }
}
