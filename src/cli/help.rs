//! The text after each command's options in `--help`: examples that run
//! as written (a test runs the ones marked so) and the exit statuses.

/// The exit statuses, the same for every command.
macro_rules! exit_status {
    () => {
        "Exit status:
  0    everything asked for was done
  1    something failed (a benchmark, an unreadable file, what this machine
       lacks, an output refused); the message names it, and what was
       measured is kept
  2    a usage error: what was asked is wrong in itself, on the command line
       or in a suite file (an unknown option or name, a value outside its
       stated range, options that do not go together); nothing was done
  3    compare --fail-on found what it names
  130  ^C, SIGTERM or SIGHUP ended run or load early (what was measured is
       still written)"
    };
}

/// Examples, then the exit statuses.
macro_rules! with_status {
    ($examples:literal) => {
        concat!("Examples:\n", $examples, "\n\n", exit_status!())
    };
}

/// The exit statuses, the same for every command.
pub const EXIT_STATUS: &str = exit_status!();

/// `scalebench --help`.
pub const TOP: &str = with_status!(
    "  scalebench run                          the quick suite (about a minute here)
  scalebench run socket fork --max 5000   two benchmarks up to n = 5000
  scalebench report results/              the verdicts of every result file there
  scalebench compare base.json new.json --fail-on regression
  scalebench help run                     a command's options and examples"
);

/// `list --help`.
pub const LIST: &str = with_status!(
    "  scalebench list                 every benchmark and workload
  scalebench list --json          the same for a program"
);

/// `run --help`.
pub const RUN: &str = with_status!(
    "  scalebench run                                   the quick suite
  scalebench run full                              the full suite (about an hour)
  scalebench run socket bind --max 10000 -o r.json two benchmarks, a named file
  scalebench run fork --runs auto                  runs until both ends of n are known
  scalebench run http-shortconn --sweep connections=1,10,100
  scalebench run socket --profile default,dragonfly-linux   two tunings, alternating
  scalebench run nightly.toml --runs 3             a suite file, its runs replaced
  scalebench run socket --system here=local --system rt=kernel:/boot/vmlinuz-6.1.0-56-rt-amd64"
);

/// `suite --help`.
pub const SUITE: &str = with_status!(
    "  scalebench suite list                    the built-in suites
  scalebench suite show quick              the quick suite's file
  scalebench suite show nightly.toml       a suite file, checked"
);

/// `report --help`.
pub const REPORT: &str = with_status!(
    "  scalebench report r.json                         verdicts in the terminal
  scalebench report a.json b.json --html both.html every sample of both, charted
  scalebench report results/                       every result file in a directory
  scalebench report --relabel before=a.json --relabel after=b.json
  scalebench report r.json -f json                 for a program"
);

/// `compare --help`.
pub const COMPARE: &str = with_status!(
    "  scalebench compare base.json new.json
  scalebench compare base.json new.json --fail-on regression   exit 3 on a regression
  scalebench compare base.json new.json -f markdown -o comment.md
  scalebench compare --base 'label=linux-6.1 latest' --new r.json   against the store"
);

/// `history --help`.
pub const HISTORY: &str = with_status!(
    "  scalebench history results/                      every figure across the files there
  scalebench history a.json b.json c.json --benchmark bind --at 5000
  scalebench history results/ -f html -o history.html
  scalebench history 'label=linux-6.1 last=10'     the store's last ten runs of a label"
);

/// `export --help`.
pub const EXPORT: &str = with_status!(
    "  scalebench export r.json                         every sample as CSV
  scalebench export r.json -f sweep-csv -o sweeps.csv
  scalebench export r.json | scalebench analyze -"
);

/// `analyze --help`.
pub const ANALYZE: &str = with_status!(
    "  scalebench analyze samples.csv                   columns n,ns[,run]
  scalebench export r.json | scalebench analyze -  re-judge exported samples"
);

/// `sysinfo --help`.
pub const SYSINFO: &str = with_status!(
    "  scalebench sysinfo
  scalebench sysinfo --json"
);

/// `serve --help`.
pub const SERVE: &str = with_status!(
    "  scalebench serve --root /srv/www --addr 127.0.0.1:8080
  scalebench serve --root /tmp/www --object f11k.bin=11264 --addr 127.0.0.1:8080"
);

/// `load --help`.
pub const LOAD: &str = with_status!(
    "  scalebench load http://127.0.0.1:8080/ -c 100 -d 10s
  scalebench load http://127.0.0.1:8080/f11k.bin -c 1000 -k 1 -n 100000 --json"
);

/// `smtp-sink --help`.
pub const SMTP_SINK: &str = with_status!("  scalebench smtp-sink --addr 127.0.0.1:2525");

/// `smtp-send --help`.
pub const SMTP_SEND: &str = with_status!(
    "  scalebench smtp-send 127.0.0.1:2525 -s 100 -n 10000
  scalebench smtp-send 127.0.0.1:2525 -s 1000 -d 30s --size 4096"
);

/// `profile --help`.
pub const PROFILE: &str = with_status!(
    "  scalebench profile list
  scalebench profile show dragonfly-linux
  scalebench profile check dragonfly-linux       what would change here (nothing is)"
);

/// `restore --help`.
pub const RESTORE: &str = with_status!("  scalebench restore");

/// `why --help`.
pub const WHY: &str = with_status!(
    "  scalebench why r.json                            profile every benchmark of r.json
  scalebench why r.json --only bind -o r-why.json"
);

/// `testbed --help`.
pub const TESTBED: &str = with_status!(
    "  scalebench testbed up --name lab --hosts 3 --sshd
  scalebench testbed status --name lab
  scalebench testbed down --name lab"
);

/// `completions --help`.
pub const COMPLETIONS: &str = with_status!(
    "  scalebench completions bash > /etc/bash_completion.d/scalebench
  scalebench completions zsh > ~/.zfunc/_scalebench
  scalebench completions fish > ~/.config/fish/completions/scalebench.fish"
);

/// `man --help`.
pub const MAN: &str = with_status!(
    "  scalebench man | man -l -                        read it now
  scalebench man -o /usr/local/share/man/man1      install every page"
);

/// `results --help`.
pub const RESULTS: &str = with_status!(
    "  scalebench results add r.json                    keep a finished run in the store
  scalebench results list 'label=linux-6.1'        its runs, oldest first
  scalebench results show 'label=linux-6.1 latest' one run's verdicts
  scalebench results prune --keep-last 20          the 20 latest runs of each label stay
  scalebench compare --base 'label=linux-6.1 latest' --new r.json"
);

/// `results add --help`.
pub const RESULTS_ADD: &str = with_status!(
    "  scalebench results add r.json                    into the default store
  scalebench results add results/ --store team.sqlite
  scalebench results add r.json --store postgres://bench@db.example/scalebench"
);

/// `results list --help`.
pub const RESULTS_LIST: &str = with_status!(
    "  scalebench results list                          every stored run
  scalebench results list 'label=linux-6.1 last=5'
  scalebench results list 'kernel=6.1* since=2026-11-01' --json"
);

/// `dashboard --help`.
pub const DASHBOARD: &str = with_status!(
    "  scalebench dashboard -o site/                    every stored run; open site/index.html
  scalebench dashboard 'since=2026-11-01' -o site/ --store team.sqlite
  scalebench dashboard -o site/ --force --threshold 5"
);

/// `results show --help`.
pub const RESULTS_SHOW: &str = with_status!(
    "  scalebench results show 3f2a9c1b                 a run by (a prefix of) its id
  scalebench results show 'label=linux-6.1 latest'
  scalebench results show 3f2a9c1b --json -o r.json  the result file as it was added"
);

/// `results prune --help`.
pub const RESULTS_PRUNE: &str = with_status!(
    "  scalebench results prune --keep-last 20 --dry-run   what would go
  scalebench results prune --keep-last 20              the 20 latest runs of each label stay
  scalebench results prune 'host=old-box' --before 2026-01-01"
);

/// `kernels --help`.
pub const KERNELS: &str = with_status!(
    "  scalebench kernels fetch 6.1 6.12              the newest of two lines, into the cache
  scalebench kernels list                        what is cached
  scalebench kernels prune 6.1                   remove the 6.1 kernels
  scalebench run socket --system a=kernel:debian:6.1 --system b=kernel:debian:6.12"
);

/// `kernels list --help`.
pub const KERNELS_LIST: &str = with_status!(
    "  scalebench kernels list                        line, package, version, release, size, when
  scalebench kernels list --json                 every field, for a program
  scalebench kernels list --cache /srv/kernels   another cache"
);

/// `kernels fetch --help`.
pub const KERNELS_FETCH: &str = with_status!(
    "  scalebench kernels fetch 6.12                  trixie's newest cloud kernel
  scalebench kernels fetch 5.10 6.1 6.12 sid     one of each line
  scalebench kernels fetch 6.1,flavour=generic    bookworm's newest generic kernel (JFS and all)
  scalebench kernels fetch linux-image-6.1.0-57-cloud-amd64"
);

/// `kernels prune --help`.
pub const KERNELS_PRUNE: &str = with_status!(
    "  scalebench kernels prune 6.1 --dry-run         what would go
  scalebench kernels prune sid                   sid's kernels
  scalebench kernels prune --all                 every kernel and apt's indices"
);

#[cfg(test)]
mod tests {
    #[test]
    fn every_command_text_ends_with_the_exit_statuses() {
        for t in [
            super::TOP,
            super::LIST,
            super::RUN,
            super::REPORT,
            super::COMPARE,
            super::HISTORY,
            super::RESULTS,
            super::RESULTS_ADD,
            super::RESULTS_LIST,
            super::RESULTS_SHOW,
            super::RESULTS_PRUNE,
            super::KERNELS,
            super::KERNELS_LIST,
            super::KERNELS_FETCH,
            super::KERNELS_PRUNE,
            super::EXPORT,
            super::ANALYZE,
            super::SYSINFO,
            super::SERVE,
            super::LOAD,
            super::SMTP_SINK,
            super::SMTP_SEND,
            super::PROFILE,
            super::SUITE,
            super::RESTORE,
            super::WHY,
            super::TESTBED,
            super::COMPLETIONS,
            super::MAN,
        ] {
            assert!(t.starts_with("Examples:\n  scalebench "), "{t}");
            assert!(t.ends_with(super::EXIT_STATUS), "{t}");
        }
    }
}
