//! A table of bad inputs through the binary: each exits non-zero (2 for a
//! usage error, 1 for anything else) with a message that names the thing
//! at fault, and never panics or prints a backtrace. Nothing here measures
//! anything: every case is refused before the first sample.

use std::path::Path;
use std::process::Command;

use crate::common;
use common::bin;

/// One bad input: the arguments (`{dir}` is replaced by a scratch
/// directory holding the files below), the exit code, and words the
/// message must contain.
struct Case {
    args: &'static str,
    code: i32,
    says: &'static str,
}

const fn case(args: &'static str, code: i32, says: &'static str) -> Case {
    Case { args, code, says }
}

/// Usage errors (2) and failures (1).
const CASES: &[Case] = &[
    // run: names, sizes, counts.
    case(
        "run nosuch",
        2,
        "unknown benchmark, workload or suite `nosuch`",
    ),
    case("run forkk", 2, "did you mean `fork`"),
    case("run socket --max 0", 2, "--max"),
    case("run socket --max -1", 2, "--max"),
    case("run socket --max abc", 2, "--max"),
    case("run socket --max 1e3", 2, "--max"),
    case("run socket --max 99999999999999999999999", 2, "--max"),
    case("run socket --runs 0", 2, "--runs"),
    case("run socket --runs 1001", 2, "--runs"),
    case("run socket --runs NaN", 2, "--runs"),
    case("run socket --warm-up-ops x", 2, "--warm-up-ops"),
    case("run socket --warmup x", 2, "--warm-up-ops"),
    // Negative numbers reach the option's check (`--warmup -3`
    // was "unexpected argument '-3'").
    case("run socket --warmup -3", 2, "must be at least 0"),
    case("run socket --label  ", 2, "--label"),
    case("run socket --runs -2", 2, "must be at least 1"),
    case(
        "load -c -5 -n 1 http://127.0.0.1:9/",
        2,
        "must be at least 1",
    ),
    case("run forward --loss-tolerance -1", 2, "must be at least 0 %"),
    case(
        "run http-ipstack --heat-up -1 --sweep connections=1",
        2,
        "must be at least 0s",
    ),
    // The errno by name, the cause once.
    case(
        "report {dir}/missing.json",
        1,
        "No such file or directory (ENOENT)",
    ),
    case("run socket --profile {dir}/missing.toml", 1, "(ENOENT)"),
    case(
        "load http://127.0.0.1:99999/",
        2,
        "error: http://127.0.0.1:99999/: `99999` is not a port",
    ),
    case("run socket --timer sundial", 2, "--timer"),
    case("run socket --pin 99 --max 10", 1, "--pin 99"),
    case("run socket --pin -1", 2, "--pin"),
    case("run socket --pin 1 --no-pin", 2, "--no-pin"),
    case(
        "run connect --backend carrier-pigeon --max 10",
        2,
        "`carrier-pigeon`: unknown backend",
    ),
    // run: sweeps.
    case(
        "run http-shortconn --sweep connections",
        2,
        "VARIABLE=LEVEL",
    ),
    case(
        "run http-shortconn --sweep connections=0,10",
        2,
        "out of range",
    ),
    case(
        "run http-shortconn --sweep connections=10,10",
        2,
        "given twice",
    ),
    case(
        "run http-shortconn --sweep connections=1,NaN",
        2,
        "`NaN` is not a whole number",
    ),
    case(
        "run http-shortconn --sweep clients=1,2",
        2,
        "http-shortconn cannot be swept over clients",
    ),
    case(
        "run socket --sweep connections=1,2",
        2,
        "no workload selected",
    ),
    case(
        "run fs http-ipstack --sweep connections=1,2",
        2,
        "fs cannot be swept over connections (connections is swept by http-ipstack, http-shortconn)",
    ),
    case(
        "run http-ipstack --heat-up 2s",
        2,
        "--warm-up sets how a sweep runs",
    ),
    case(
        "run mail http-ipstack --samples 1",
        2,
        "--samples sets how a sweep runs: http-ipstack is measured once unless --sweep VAR=LEVEL,… is given",
    ),
    case(
        "run pgbench --samples 1 --baseline 2",
        2,
        "--baseline sets how a sweep runs: give --sweep VAR=LEVEL,… too",
    ),
    case(
        "run http-ipstack --sweep connections=1,2 --baseline 3",
        2,
        "--baseline 3: not one of the --sweep levels",
    ),
    case(
        "run http-ipstack --sweep connections=1,2 --sample-time 1ms",
        2,
        "--sample-time",
    ),
    case(
        "run http-ipstack --sweep connections=1,2 --heat-up -1",
        2,
        "--warm-up",
    ),
    case(
        "run http-ipstack --sweep connections=1,2 --samples 0",
        2,
        "--samples",
    ),
    case("run socket --why-seconds 0", 2, "--why-seconds"),
    case("run socket --why-seconds NaN", 2, "--why-seconds"),
    case("run socket --why-seconds 1e300", 2, "--why-seconds"),
    case("run socket --why-seconds -3", 2, "--why-seconds"),
    case("run socket --workdir {dir}/nope --max 10", 1, "{dir}/nope"),
    case(
        "run socket --max 10 -o {dir}/nope/r.json",
        1,
        "does not exist",
    ),
    case("run socket --max 10 -o {dir}/existing.json", 1, "--force"),
    case(
        "run socket --max 10 -o {dir}/r.html",
        1,
        "name the result file .json",
    ),
    case("run socket --max 10 --force -o {dir}", 1, "is a directory"),
    case(
        "run socket --max 10 --force -o /dev/null --no-report",
        1,
        "is a device",
    ),
    case(
        "run socket --max 10 --force -o {dir}/link.json",
        1,
        "symbolic link",
    ),
    case("run --bogus-flag", 2, "--bogus-flag"),
    // A workload's option in a run without that workload.
    case(
        "run socket --max 10 --dir {dir}",
        2,
        "--dir is an option of fs or fs-sizes, which this run does not have",
    ),
    case(
        "run socket --max 10 --mkfs ext4",
        2,
        "--mkfs is an option of fs or",
    ),
    case(
        "run socket mail --max 10 --db-size 1G",
        2,
        "its workloads: mail",
    ),
    // report, export, analyze: files.
    case("report", 2, "no result files given"),
    case("report {dir}/missing.json", 1, "{dir}/missing.json"),
    case("report {dir}/garbage.json", 1, "{dir}/garbage.json: line 1"),
    case("report {dir}/other.json", 1, "not a scalebench result file"),
    case("report {dir}/future.json", 1, "schema version 99"),
    case(
        "report {dir}/stringy.json",
        1,
        "\"schema_version\" is \"4\", not a whole number",
    ),
    case("report {dir}/data.csv", 1, "{dir}/data.csv"),
    case(
        "why {dir}/data.csv",
        1,
        "{dir}/data.csv: not a scalebench result file: not JSON (it begins `",
    ),
    case("report --label noequals", 2, "--relabel noequals"),
    case("report --relabel noequals", 2, "--relabel noequals"),
    case("report --label =x.json", 2, "NAME=FILE"),
    case("report --format pdf {dir}/existing.json", 2, "--format"),
    case(
        "report {dir}/result.json --html {dir}/result.json",
        1,
        "is also an input",
    ),
    case(
        "report {dir}/result.json --svg-dir {dir}/svg",
        2,
        "--svg-dir",
    ),
    case(
        "report {dir}/result.json -f csv -o {dir}/nope/x.csv",
        1,
        "does not exist",
    ),
    case("export", 2, "RESULT.json"),
    case(
        "export {dir}/result.json -o {dir}/result.json",
        1,
        "is also an input",
    ),
    case("export {dir}/result.json -o {dir}", 1, "is a directory"),
    case("export {dir}/result.json -f xml", 2, "--format"),
    case("export {dir}/garbage.json", 1, "{dir}/garbage.json"),
    case("analyze {dir}/missing.csv", 1, "{dir}/missing.csv"),
    case(
        "analyze {dir}/result.json",
        1,
        "a scalebench result file, not CSV",
    ),
    case(
        "analyze {dir}/noheader.csv",
        1,
        "the header must name the columns `n` and `ns`",
    ),
    case("analyze {dir}/badnum.csv", 1, "line 3"),
    case("analyze {dir}/negative.csv", 1, "finite number"),
    case("analyze {dir}/ragged.csv", 1, "fields where the header has"),
    case("analyze {dir}/headeronly.csv", 1, "no samples"),
    case("analyze {dir}/badrun.csv", 1, "run is not a whole number"),
    case("analyze {dir}/data.csv -f yaml", 2, "--format"),
    // why.
    case("why {dir}/missing.json", 1, "{dir}/missing.json"),
    case("why {dir}/result.json --only nosuch", 1, "--only nosuch"),
    case("why {dir}/result.json --seconds 0", 2, "--seconds"),
    case("why {dir}/result.json --seconds inf", 2, "--seconds"),
    case(
        "why {dir}/result.json -o {dir}/nope/w.json",
        1,
        "does not exist",
    ),
    // serve.
    case("serve", 2, "--root"),
    case("serve --root {dir}/nope", 1, "{dir}/nope"),
    case(
        "serve --root {dir} --idle-timeout 1e300",
        2,
        "--idle-timeout",
    ),
    case("serve --root {dir} --idle-timeout NaN", 2, "--idle-timeout"),
    case("serve --root {dir} --idle-timeout inf", 2, "--idle-timeout"),
    case("serve --root {dir} --idle-timeout -1", 2, "--idle-timeout"),
    case(
        "serve --root {dir} --header-timeout 2days",
        2,
        "--header-timeout",
    ),
    case("serve --root {dir} --addr nowhere", 2, "--addr"),
    case("serve --root {dir} --processes 0", 2, "--processes"),
    case(
        "serve --root {dir} --processes 2 --reuseport 2",
        2,
        "--reuseport",
    ),
    case("serve --root {dir} --backend smoke", 2, "--backend"),
    case(
        "serve --root {dir} --sendfile --readwrite",
        2,
        "--readwrite",
    ),
    // load.
    case("load", 2, "no URL given"),
    case("load http://127.0.0.1:9/", 2, "-n REQUESTS or -d DURATION"),
    case("load https://127.0.0.1:9/ -n 1", 2, "https"),
    case("load ftp://127.0.0.1:9/ -n 1", 2, "ftp://"),
    case("load http://127.0.0.1:9/ -d 1e300", 2, "--duration"),
    case("load http://127.0.0.1:9/ -d 0", 2, "--duration"),
    case("load http://127.0.0.1:9/ -d -5", 2, "--duration"),
    case("load http://127.0.0.1:9/ -d soon", 2, "--duration"),
    case(
        "load http://127.0.0.1:9/ -n 1 --timeout 1e300",
        2,
        "--timeout",
    ),
    case(
        "load http://127.0.0.1:9/ -n 1 --timeout NaN",
        2,
        "--timeout",
    ),
    case("load http://127.0.0.1:9/ -n 1 --rate 0", 2, "--rate"),
    case("load http://127.0.0.1:9/ -n 1 --rate 1e-300", 2, "--rate"),
    case("load http://127.0.0.1:9/ -n 1 --rate inf", 2, "--rate"),
    case("load http://127.0.0.1:9/ -n 0", 2, "--requests"),
    case("load http://127.0.0.1:9/ -n 1 -c 0", 2, "--connections"),
    case("load http://127.0.0.1:9/ -n 1 -t 0", 2, "--threads"),
    case("load --urls {dir}/urls.txt -n 1", 1, "urls.txt, line 3"),
    case("load --urls {dir}/missing.txt -n 1", 1, "{dir}/missing.txt"),
    // suite files.
    case(
        "run {dir}/missing.toml",
        1,
        "cannot read the suite file {dir}/missing.toml",
    ),
    case(
        "run {dir}/typo.toml",
        2,
        "{dir}/typo.toml:4: unknown key `nn` in [benchmark.socket]",
    ),
    case(
        "run {dir}/runs.toml",
        2,
        "{dir}/runs.toml:4: [run] runs = \"0\"",
    ),
    case(
        "run {dir}/garbage.toml",
        2,
        "{dir}/garbage.toml:1: not a TOML file",
    ),
    case(
        "suite show {dir}/typo.toml",
        2,
        "{dir}/typo.toml:4: unknown key `nn`",
    ),
    case(
        "suite show quik",
        2,
        "unknown suite `quik`; did you mean `quick`?",
    ),
    // One rule for the command line and a suite file: wrong in itself, 2.
    case(
        "run pgbench --db-size 160M --pg-scale 10 --dry-run",
        2,
        "--pg-scale",
    ),
    case(
        "run {dir}/pair.toml --dry-run",
        2,
        "{dir}/pair.toml:5: [workload.pgbench]: --pg-scale cannot be used with --db-size",
    ),
    case(
        "suite show {dir}/alone.toml",
        2,
        "{dir}/alone.toml:4: [workload.mail]: --mail-repeats needs --mail-messages",
    ),
    case(
        "run fs --mkfs zfs --dry-run",
        2,
        "`zfs` is not a filesystem type scalebench can make",
    ),
    case(
        "run bigfile --bigfile-size abc --dry-run",
        2,
        "is not a size",
    ),
    case("run fs --fs-size 4G --dry-run", 2, "--mkfs"),
    case("run fs --mount-opts noatime --dry-run", 2, "--mkfs"),
    case(
        "run socket --host server=netns:a --host server=netns:b --dry-run",
        2,
        "--host server=… given twice",
    ),
    case("profile show nosuch", 2, "unknown profile `nosuch`"),
    case(
        "run socket --profile nosuch --dry-run",
        2,
        "unknown profile `nosuch`",
    ),
    // What the machine or a file lacks: 1.
    case(
        "load --urls {dir}/empty-urls.txt -n 1",
        1,
        "--urls {dir}/empty-urls.txt: no URL in it",
    ),
    case(
        "run fs --fit --workdir {dir}/nope --dry-run",
        1,
        "{dir}/nope: not a directory to make the work directory in",
    ),
    // Under git bisect run, a wrong command line stops the bisection.
    case(
        "compare {dir}/result.json --bisect",
        128,
        "stop: the command line is wrong (exit 128)",
    ),
    case(
        "compare {dir}/result.json {dir}/result.json --bisect --threshold abc",
        128,
        "stop: the command line is wrong (exit 128)",
    ),
    case("run data.csv", 2, "`data.csv` is a file, not a benchmark"),
    // top level.
    case("frobnicate", 2, "frobnicate"),
];

/// The results store, the dashboard, and the commands that read
/// directories of result files: every store refused names its path (or
/// URL) and what is there, never with SQLite's words alone; the dashboard
/// follows the output rule of every writer; a file skipped in a directory
/// is named with the reason; an output's name says its format. The scratch
/// files are `store_scratch`'s.
const STORE_CASES: &[Case] = &[
    // dashboard -o: the output rule.
    case(
        "dashboard -o {dir}/nope/site --store {dir}/s.sqlite",
        1,
        "--out {dir}/nope/site: the directory {dir}/nope does not exist",
    ),
    case(
        "dashboard -o {dir}/existing.json --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/existing.json: is a regular file, not a directory",
    ),
    case(
        "dashboard -o {dir}/site-link --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/site-link: is a symbolic link, not a directory",
    ),
    case(
        "dashboard -o {dir}/site-runs-file --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/site-runs-file/runs: is a regular file, not a directory",
    ),
    case(
        "dashboard -o {dir}/site-runs-link --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/site-runs-link/runs: is a symbolic link, not a directory",
    ),
    case(
        "dashboard -o {dir}/site-index-link --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/site-index-link/index.html: is a symbolic link",
    ),
    case(
        "dashboard -o {dir}/site-run-link --store {dir}/s.sqlite --force",
        1,
        ".html: is a symbolic link; scalebench only ever replaces regular files",
    ),
    case(
        "dashboard -o {dir}/site-index-dir --store {dir}/s.sqlite --force",
        1,
        "--out {dir}/site-index-dir/index.html: is a directory",
    ),
    case(
        "dashboard -o {dir}/site-full --store {dir}/s.sqlite",
        1,
        "--out {dir}/site-full: the directory is not empty; use --force",
    ),
    case(
        "dashboard -o {dir}/site-store --force --store {dir}/site-store/index.html",
        1,
        "--out {dir}/site-store/index.html is also the store",
    ),
    case(
        "dashboard -o {dir}/site-new --store {dir}/missing.sqlite",
        1,
        "no store at {dir}/missing.sqlite: no such file",
    ),
    case(
        "dashboard -o {dir}/site-new --store {dir}/notdb.sqlite",
        1,
        "store {dir}/notdb.sqlite: not an SQLite database",
    ),
    // --store: what is there, named.
    case(
        "results list --store {dir}/notdb.sqlite",
        1,
        "store {dir}/notdb.sqlite: not an SQLite database",
    ),
    case(
        "results add {dir}/result.json --store {dir}/notdb.sqlite",
        1,
        "store {dir}/notdb.sqlite: not an SQLite database",
    ),
    case(
        "results list --store {dir}/empty.sqlite",
        1,
        "store {dir}/empty.sqlite: an empty file, not an SQLite store",
    ),
    case(
        "results add {dir}/result.json --store {dir}/empty.sqlite",
        1,
        "store {dir}/empty.sqlite: an empty file, not an SQLite store",
    ),
    case(
        "results list --store {dir}/fifo",
        1,
        "store {dir}/fifo: is a FIFO, not an SQLite store file",
    ),
    case(
        "results add {dir}/result.json --store {dir}/fifo",
        1,
        "store {dir}/fifo: is a FIFO, not an SQLite store file",
    ),
    case(
        "results list --store /dev/null",
        1,
        "store /dev/null: is a device, not an SQLite store file",
    ),
    case(
        "results prune --keep-last 1 --store /dev/null",
        1,
        "store /dev/null: is a device, not an SQLite store file",
    ),
    case(
        "results list --store {dir}",
        1,
        "store {dir}: is a directory, not an SQLite store file",
    ),
    case(
        "results add {dir}/result.json --store {dir}",
        1,
        "store {dir}: is a directory, not an SQLite store file",
    ),
    case(
        "results list --store {dir}/dangling.sqlite",
        1,
        "store {dir}/dangling.sqlite: a symbolic link to nothing",
    ),
    case(
        "results add {dir}/result.json --store {dir}/dangling.sqlite",
        1,
        "store {dir}/dangling.sqlite: a symbolic link to nothing",
    ),
    // Only `results add` makes a store, and only where nothing is.
    case(
        "results list --store {dir}/missing.sqlite",
        1,
        "no store at {dir}/missing.sqlite: no such file",
    ),
    case(
        "results show abcd --store {dir}/missing.sqlite",
        1,
        "no store at {dir}/missing.sqlite",
    ),
    case(
        "results prune --keep-last 1 --store {dir}/missing.sqlite",
        1,
        "no store at {dir}/missing.sqlite",
    ),
    case(
        "results add {dir}/result.json --store {dir}/nope/s.sqlite",
        1,
        "store {dir}/nope/s.sqlite: the directory {dir}/nope does not exist",
    ),
    case(
        "results list --store postgres:garbage",
        2,
        "--store postgres:garbage: not a PostgreSQL URL",
    ),
    case(
        "results add {dir}/result.json --store postgres:garbage",
        2,
        "--store postgres:garbage: not a PostgreSQL URL",
    ),
    case(
        "results list --store postgres://ann:secret@h:notaport/db",
        2,
        "--store postgres://ann:***@h:notaport/db: invalid connection string: invalid value for option `port`",
    ),
    // Query words reach the store the same way.
    case(
        "report label=x --store {dir}/notdb.sqlite",
        1,
        "store {dir}/notdb.sqlite: not an SQLite database",
    ),
    case(
        "compare label=x {dir}/result.json --store {dir}/fifo",
        1,
        "store {dir}/fifo: is a FIFO",
    ),
    // A number far out of range is echoed as given, not in 309 digits.
    case(
        "why {dir}/result.json --seconds 1e308",
        2,
        "`1e308`: a profile window is 0.2 to 60 seconds",
    ),
    // The image site's flags are fs's own: fs-sizes makes no site and
    // serves nothing (`--files` was taken and changed nothing).
    case(
        "run fs-sizes --files 10",
        2,
        "--files is an option of fs, which this run does not have (its workloads: fs-sizes)",
    ),
    case(
        "run httpreq --serve-files cached",
        2,
        "--serve-files is an option of http-ipstack or http-shortconn or fs or bigfile, which",
    ),
    // analyze: an n past 2^53 and an empty file, said so.
    case(
        "analyze {dir}/big.csv",
        1,
        "line 2: n must be at most 2^53 (9007199254740992), not 1e308",
    ),
    case(
        "analyze {dir}/empty.csv",
        1,
        "(found: an empty line: is the file empty?)",
    ),
    // An n past what a result file holds exactly is refused, not rounded.
    case(
        "history {dir}/result.json {dir}/result.json --at 18446744073709551615",
        2,
        "must be at most 9007199254740992",
    ),
    case(
        "history label=x --store {dir}/empty.sqlite",
        1,
        "store {dir}/empty.sqlite: an empty file",
    ),
    case(
        "report label=nosuch --store {dir}/s.sqlite",
        1,
        "query `label=nosuch`: no run in store {dir}/s.sqlite matches",
    ),
    // A wrong query word is told before the store is opened: the same
    // usage error whether or not the store is there.
    case(
        "results show since=yesterday --store {dir}/missing.sqlite",
        2,
        "results show: query `since=yesterday`: expected a day",
    ),
    case(
        "compare since=yesterday {dir}/result.json --store {dir}/missing.sqlite",
        2,
        "BASE: query `since=yesterday`: expected a day",
    ),
    case(
        "results list since=yesterday --store {dir}/s.sqlite",
        2,
        "query `since=yesterday`: expected a day",
    ),
    // No output over the store.
    case(
        "results show latest --json -o {dir}/s.sqlite --force --store {dir}/s.sqlite",
        1,
        "--output {dir}/s.sqlite is also the store",
    ),
    case(
        "report latest -f json -o {dir}/s.sqlite --force --store {dir}/s.sqlite",
        1,
        "--output {dir}/s.sqlite is also the store",
    ),
    // Directories of result files: what is skipped is named.
    case(
        "report {dir}/onlybad",
        1,
        "warning: {dir}/onlybad/garbage.json: skipped: not a scalebench result file",
    ),
    case(
        "export {dir}/onlybad",
        1,
        "{dir}/onlybad: a directory with no scalebench result file",
    ),
    case(
        "results add {dir}/onlybad --store {dir}/s.sqlite",
        1,
        "warning: {dir}/onlybad/other.json: skipped: not a scalebench result file",
    ),
    case("report {dir}/broken", 1, "{dir}/broken/half.json: line 1"),
    case("export {dir}/broken", 1, "{dir}/broken/half.json: line 1"),
    case(
        "results add {dir}/broken --store {dir}/s.sqlite",
        1,
        "{dir}/broken/half.json: line 1",
    ),
    // An output's name says its format.
    case(
        "export {dir}/result.json -o {dir}/e.json",
        2,
        "--output {dir}/e.json: its extension names the json format, which this command does not write (csv, sweep-csv)",
    ),
    case(
        "export {dir}/result.json -f sweep-csv -o {dir}/e.json",
        2,
        "--format sweep-csv contradicts --output {dir}/e.json",
    ),
    case(
        "report {dir}/result.json -f csv -o {dir}/r.json",
        2,
        "--format csv contradicts --output {dir}/r.json",
    ),
    // The cause once, with one input or several.
    case(
        "report {dir}/result.json {dir}/missing.json",
        1,
        "{dir}/missing.json: cannot read it: No such file or directory (ENOENT)",
    ),
    case(
        "export {dir}/garbage.json {dir}/result.json {dir}/other.json",
        1,
        "{dir}/garbage.json: line 1",
    ),
];

/// The scratch files of `STORE_CASES`, beside `scratch`'s (whose
/// `result.json` goes into the store `s.sqlite`).
fn store_scratch(dir: &Path) {
    let w = |name: &str, text: &[u8]| std::fs::write(dir.join(name), text).unwrap();
    let mkdir = |name: &str| std::fs::create_dir(dir.join(name)).unwrap();
    let link = |to: &str, name: &str| std::os::unix::fs::symlink(to, dir.join(name)).unwrap();
    w("notdb.sqlite", b"hello, not a database\n");
    w("empty.sqlite", b"");
    let fifo = std::ffi::CString::new(dir.join("fifo").to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    link("nothing.sqlite", "dangling.sqlite");
    let added = bin()
        .args(["results", "add"])
        .arg(dir.join("result.json"))
        .arg("--store")
        .arg(dir.join("s.sqlite"))
        .output()
        .unwrap();
    assert!(added.status.success());
    // `added ID PATH`: the run's page is runs/ID.html.
    let out = String::from_utf8(added.stdout).unwrap();
    let id = out.split_whitespace().nth(1).unwrap().to_string();
    mkdir("site-real");
    link("site-real", "site-link");
    mkdir("site-runs-file");
    w("site-runs-file/runs", b"mine");
    mkdir("site-runs-link");
    link("../site-real", "site-runs-link/runs");
    mkdir("site-index-link");
    link("../existing.json", "site-index-link/index.html");
    mkdir("site-run-link");
    mkdir("site-run-link/runs");
    link(
        "../../existing.json",
        &format!("site-run-link/runs/{id}.html"),
    );
    mkdir("site-index-dir");
    mkdir("site-index-dir/index.html");
    mkdir("site-full");
    w("site-full/notes.txt", b"mine");
    mkdir("site-store");
    std::fs::copy(dir.join("s.sqlite"), dir.join("site-store/index.html")).unwrap();
    mkdir("onlybad");
    w("onlybad/garbage.json", b"{ this is not json");
    w("onlybad/other.json", br#"{"hello": "world"}"#);
    mkdir("broken");
    std::fs::copy(dir.join("result.json"), dir.join("broken/good.json")).unwrap();
    w(
        "broken/half.json",
        br#"{"schema": "scalebench-result", "schema_version": 8, "label": "#,
    );
}

/// What `STORE_CASES` must have left as it was, and made nothing of.
fn store_untouched(dir: &Path) {
    let sqlite = |p: &str| {
        std::fs::read(dir.join(p))
            .unwrap()
            .starts_with(b"SQLite format 3\0")
    };
    assert!(sqlite("s.sqlite") && sqlite("site-store/index.html"));
    assert_eq!(std::fs::read(dir.join("empty.sqlite")).unwrap(), b"");
    assert_eq!(
        std::fs::read_to_string(dir.join("site-runs-file/runs")).unwrap(),
        "mine"
    );
    for made in [
        "missing.sqlite",
        "nothing.sqlite",
        "postgres:garbage",
        "site-new",
        "e.json",
        "r.json",
    ] {
        assert!(!dir.join(made).exists(), "{made} was made");
    }
    let real: Vec<_> = std::fs::read_dir(dir.join("site-real")).unwrap().collect();
    assert!(real.is_empty(), "nothing written through a link");
}

/// Addresses, servers, profiles, test beds and systems: refused by name
/// before anything is sent or booted (files from [`net_scratch`]).
const NET_CASES: &[Case] = &[
    // Every address is read alike: an IPv6 address without brackets gets
    // its fix, credentials are refused (the password not repeated).
    case("load http://::1:8080/ -n 1", 2, "`[::1]:8080`"),
    case("load http://::1/ -n 1", 2, "`[::1]`"),
    case(
        "load http://bench:secret@127.0.0.1:9/ -n 1",
        2,
        "`bench:…@` gives a user and password: credentials in an address are not supported",
    ),
    case("load http://127.0.0.1:0/ -n 1", 2, "port 0"),
    case("load http://[::1/ -n 1", 2, "an unclosed `[`"),
    case(
        "load http://127.0.0.1:9/ -n 1 --source 127.0.0.1:80",
        2,
        "`127.0.0.1:80`: an address alone, without a port",
    ),
    case("smtp-send ::1:25 -n 1", 2, "`[::1]:25`"),
    case("smtp-send bench:secret@127.0.0.1:25 -n 1", 2, "credentials"),
    case("smtp-send 127.0.0.1:0 -n 1", 2, "port 0"),
    case(
        "smtp-send 127.0.0.1:9 -d 1 --warm-up 5s --interval 1s",
        2,
        "--warm-up 5s is not shorter than -d 1s: no interval would be tallied",
    ),
    case(
        "smtp-send 127.0.0.1:9 -d 5 --warm-up 1s",
        2,
        "--warm-up 1s: it delays the interval tallies; give --interval too",
    ),
    case(
        "load http://127.0.0.1:9/ -n 1 --source ::1",
        1,
        "source address ::1 is IPv6 and URL http://127.0.0.1:9/ (127.0.0.1:9) is not",
    ),
    case(
        "load https://127.0.0.1:9/ -n 1",
        2,
        "https is not supported",
    ),
    case("load http:///x -n 1", 2, "no host after http://"),
    case(
        "smtp-send 127.0.0.1:25 -n 1 --bind [::1",
        2,
        "`[::1` is not an IP address",
    ),
    case("serve --root {dir} --addr ::1:8080", 2, "`[::1]:8080`"),
    case("serve --root {dir} --addr 127.0.0.1", 2, "has no port"),
    case(
        "serve --root {dir}/nope --object x=5 --object x=6",
        2,
        "--object x is given twice",
    ),
    case(
        "smtp-sink --addr localhost:2525",
        2,
        "`localhost` is not an IP address",
    ),
    case("smtp-sink --addr ::1:2525", 2, "`[::1]:2525`"),
    case(
        "run socket --max 10 --host server=ssh:bench:secret@192.0.2.1",
        2,
        "a password cannot be given",
    ),
    case(
        "run socket --max 10 --system far=ssh:2001:db8::1",
        2,
        "`[2001:db8::1]`",
    ),
    case("run mail --mail-server ::1:25", 2, "`[::1]:25`"),
    case(
        "run pgbench --pg-server postgresql://bench@::1:5432/db",
        2,
        "`[::1]:5432`",
    ),
    // Profiles: a value out of a known range, named with the range; a
    // name that is no sysctl's.
    case(
        "profile check {dir}/swappy.toml",
        1,
        "linux.sysctl.\"vm.swappiness\" = 1000: out of range: vm.swappiness takes 0 to 200",
    ),
    case(
        "run socket --max 10 --profile {dir}/swappy.toml",
        1,
        "error: --profile {dir}/swappy.toml: linux.sysctl.\"vm.swappiness\" = 1000: out of range",
    ),
    case(
        "profile check {dir}/ports.toml",
        1,
        "\"net.ipv4.ip_local_port_range\" = 2000 1000: the first is above the second",
    ),
    case(
        "profile check {dir}/busy.toml",
        1,
        "\"net.core.somaxconn\" = >=3000000000: out of range",
    ),
    case(
        "profile check {dir}/sysname.toml",
        1,
        "`swappiness` is not a sysctl name",
    ),
    case(
        "profile check {dir}/nofile.toml",
        1,
        "limits.nofile = 0: too few for the run itself (it needs at least 64)",
    ),
    // A kernel, a RAM disk, a module tree, a guest binary that are none
    // are refused before anything boots.
    case(
        "run socket --max 10 --system k=kernel:{dir}",
        1,
        "--system k: kernel {dir}: a directory, not a file",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/notes.txt",
        1,
        "--system k: kernel {dir}/notes.txt: not an x86 Linux kernel image",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,modules={dir}/notes.txt",
        1,
        "modules={dir}/notes.txt: not a directory",
    ),
    case(
        "run socket --max 10 --system i=image:{dir},ssh=root",
        1,
        "--system i: image {dir}: a directory, not a file",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,cmdline=",
        2,
        "`cmdline=` needs a value",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,initrd={dir}/notes.txt",
        1,
        "--system k: initrd={dir}/notes.txt: not a RAM disk: it begins with 6e 6f 74 65",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,initrd={dir}/empty.img",
        1,
        "initrd={dir}/empty.img: empty: not a RAM disk",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,initrd={dir}/photo.jpg",
        1,
        "initrd={dir}/photo.jpg: not a RAM disk: it begins with ff d8 ff e0",
    ),
    case(
        "run socket --max 10 --system k=kernel:{dir}/vmlinuz,initrd={dir}/nope.img",
        1,
        "initrd={dir}/nope.img: No such file or directory (ENOENT)",
    ),
    // Kernels by version: the version and the options, the cache.
    case(
        "run socket --max 10 --system v=kernel:debian:6.2",
        2,
        "kernel:debian:6.2: `6.2` is not a Debian kernel version: 5.10, 6.1, 6.12, 7.2, sid",
    ),
    case(
        "run socket --max 10 --system v=kernel:debian:6.1,modules={dir}",
        2,
        "`modules` is not an option of kernel:debian: (cpus, memory, accel, cmdline, flavour, seed)",
    ),
    case(
        "run socket --max 10 --system v=kernel:debian:6.1,seed=one",
        2,
        "seed=one: `one` is not a whole number",
    ),
    case(
        "run socket --max 10 --system v=image:{dir}/d.img,ssh=root,seed=1",
        2,
        "`seed` is not an option of image: (ssh, bin, cpus, memory, key, accel)",
    ),
    case(
        "run socket --max 10 --system v=kernel:debian:6.1,flavour=arm64",
        2,
        "kernel:debian:6.1: flavour=arm64: `arm64` is not a Debian kernel flavour: cloud (the default), generic, rt",
    ),
    case(
        "run socket --max 10 --system v=kernel:debian:linux-image-6.1.0-57-cloud-amd64,flavour=generic",
        2,
        "`linux-image-6.1.0-57-cloud-amd64` is a cloud kernel: flavour=generic is for a line or sid, a package's name says its own",
    ),
    case(
        "kernels fetch 6.1,flavour=rt-arm64",
        2,
        "`rt-arm64` is not a Debian kernel flavour",
    ),
    case(
        "kernels fetch linux-image-6.1.0-57-cloud-amd64-dbg",
        2,
        "a debug symbols package holds no bootable kernel",
    ),
    case("kernels prune", 2, "<VERSION|--all>"),
    case(
        "kernels list --cache {dir}",
        1,
        "kernel cache {dir}: a directory that is not scalebench's kernel cache",
    ),
    // A server that refuses: its cause once (psql's own "psql: error:"
    // not repeated, the row's error not said again after the message).
    case(
        "run pgbench --pg-server postgresql://127.0.0.1:9/postgres --sweep clients=1 -q --no-report -o {dir}/pg.json",
        1,
        "pgbench: setup: psql: connection to server at \"127.0.0.1\", port 9 failed: Connection refused",
    ),
];

/// The scratch files the cases name.
fn scratch(dir: &Path) {
    let w = |name: &str, text: &str| std::fs::write(dir.join(name), text).unwrap();
    w("existing.json", "not mine to lose");
    w("garbage.json", "{ this is not json");
    w("other.json", r#"{"hello": "world"}"#);
    w(
        "future.json",
        r#"{"schema": "scalebench-result", "schema_version": 99}"#,
    );
    w(
        "stringy.json",
        r#"{"schema": "scalebench-result", "schema_version": "4"}"#,
    );
    w("data.csv", "n,ns\n1,100\n2,200\n3,300\n");
    w("noheader.csv", "1,100\n2,200\n");
    w("badnum.csv", "n,ns\n1,100\n2,fast\n");
    w("negative.csv", "n,ns\n1,100\n2,-200\n");
    w("ragged.csv", "n,ns\n1,100\n2,200,7\n");
    w("headeronly.csv", "n,ns\n");
    w("big.csv", "n,ns\n1e308,5\n");
    w("empty.csv", "");
    w("badrun.csv", "n,ns,run\n1,100,first\n");
    w("urls.txt", "http://127.0.0.1:9/\n# a comment\nftp://x/\n");
    let suite = "format = \"scalebench-suite/1\"\nname = \"s\"\n";
    w("typo.toml", &format!("{suite}[benchmark.socket]\nnn = 5\n"));
    w(
        "runs.toml",
        &format!("{suite}[run]\nruns = 0\n[benchmark.socket]\n"),
    );
    w("garbage.toml", "[[[\n");
    // Flags that do not go together, as on the command line.
    w(
        "pair.toml",
        &format!("{suite}[workload.pgbench]\ndb-size = \"160M\"\npg-scale = 10\n"),
    );
    w(
        "alone.toml",
        &format!("{suite}[workload.mail]\nmail-repeats = 3\n"),
    );
    w("empty-urls.txt", "# nothing here\n");
    std::os::unix::fs::symlink(dir.join("existing.json"), dir.join("link.json")).unwrap();
    // A real result file to refuse writing over.
    let ok = bin()
        .args([
            "run",
            "socket",
            "--max",
            "50",
            "--runs",
            "1",
            "-q",
            "--no-report",
            "-o",
        ])
        .arg(dir.join("result.json"))
        .status()
        .unwrap();
    assert!(ok.success());
}

/// The scratch files of [`NET_CASES`]: profiles with values out of range,
/// a kernel (any file: refused before it is read) and files that are no
/// RAM disk.
fn net_scratch(dir: &Path) {
    let w = |name: &str, text: &[u8]| std::fs::write(dir.join(name), text).unwrap();
    let profile = |sysctls: &str| {
        format!(
            "format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n[linux.sysctl]\n{sysctls}\n"
        )
        .into_bytes()
    };
    w("swappy.toml", &profile("\"vm.swappiness\" = 1000"));
    w(
        "ports.toml",
        &profile("\"net.ipv4.ip_local_port_range\" = \"2000 1000\""),
    );
    w(
        "busy.toml",
        &profile("\"net.core.somaxconn\" = \">=3000000000\""),
    );
    w("sysname.toml", &profile("swappiness = 10"));
    w(
        "nofile.toml",
        b"format = \"scalebench-profile/1\"\nname = \"t\"\ndescription = \"d\"\n[limits]\nnofile = 0\n",
    );
    // The head of an x86 kernel image (a bzImage) that says its release:
    // what is read before the RAM disk.
    let mut kernel = vec![0u8; 0x1000];
    kernel[0x202..0x206].copy_from_slice(b"HdrS");
    kernel[0x206..0x208].copy_from_slice(&0x20fu16.to_le_bytes());
    kernel[0x20e..0x210].copy_from_slice(&(0x800u16 - 0x200).to_le_bytes());
    kernel[0x800..0x811].copy_from_slice(b"0.0.0-scalebench ");
    w("vmlinuz", &kernel);
    w("notes.txt", b"notes, not a RAM disk\n");
    w("empty.img", b"");
    w("photo.jpg", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00");
}

/// Whether an `error:` line, or a reason under it (`  NAME: …`), says one
/// cause twice ("No such file or directory (os error 2): No such
/// file or directory (os error 2)"), or a reason line comes twice.
fn repeats_a_cause(err: &str) -> bool {
    let reasons: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("error: ").or_else(|| l.strip_prefix("  ")))
        .collect();
    reasons
        .iter()
        .enumerate()
        .any(|(i, l)| reasons[i + 1..].contains(l))
        || reasons.iter().any(|l| {
            let parts: Vec<&str> = l.split(": ").filter(|p| p.len() > 8).collect();
            parts
                .iter()
                .enumerate()
                .any(|(i, p)| parts[i + 1..].contains(p))
        })
}

#[test]
fn every_bad_input_is_refused_by_name_without_a_panic() {
    assert!(CASES.len() >= 60, "{} cases", CASES.len());
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    scratch(dir);
    store_scratch(dir);
    net_scratch(dir);
    let d = dir.to_str().unwrap();
    let mut failures = Vec::new();
    for c in CASES.iter().chain(STORE_CASES).chain(NET_CASES) {
        let args: Vec<String> = c
            .args
            .split_whitespace()
            .map(|a| a.replace("{dir}", d))
            .collect();
        let out = Command::new(env!("CARGO_BIN_EXE_scalebench"))
            .args(&args)
            .current_dir(dir)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let says = c.says.replace("{dir}", d);
        let problems: Vec<&str> = [
            (out.status.code() != Some(c.code), "exit code"),
            (!err.contains(&says), "message"),
            (
                err.contains("panicked") || err.contains("stack backtrace"),
                "panic",
            ),
            (err.contains("(os error"), "errno not named"),
            (repeats_a_cause(&err), "cause repeated"),
        ]
        .into_iter()
        .filter(|(bad, _)| *bad)
        .map(|(_, what)| what)
        .collect();
        if !problems.is_empty() {
            failures.push(format!(
                "`{}`: wrong {} (exit {:?}, want {}; want {says:?} in):\n{err}",
                c.args,
                problems.join(", "),
                out.status.code(),
                c.code
            ));
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("existing.json")).unwrap(),
        "not mine to lose"
    );
    assert!(!dir.join("nope").exists(), "no directory was created");
    store_untouched(dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_series_twice_in_one_file_is_said_so() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path().join("r.json");
    let ok = bin()
        .args([
            "run",
            "socket",
            "--max",
            "50",
            "--runs",
            "1",
            "-q",
            "--no-report",
            "-o",
        ])
        .arg(&r)
        .status()
        .unwrap();
    assert!(ok.success());
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&r).unwrap()).unwrap();
    let b = doc["benchmarks"][0].clone();
    doc["benchmarks"].as_array_mut().unwrap().push(b);
    std::fs::write(&r, serde_json::to_vec(&doc).unwrap()).unwrap();
    // Said once: in the terminal report on the terminal, on stderr
    // beside any other.
    for format in ["terminal", "json"] {
        let out = bin()
            .arg("report")
            .arg(&r)
            .args(["-f", format])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        let said = |text: &str| {
            text.matches("the series socket appears more than once")
                .count()
        };
        let on_stdout = match format {
            "json" => 0,
            _ => said(&String::from_utf8_lossy(&out.stdout)),
        };
        assert_eq!(on_stdout + said(&err), 1, "{format}: {err}");
    }
}
