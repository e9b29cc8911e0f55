//! The `scalebench …` command lines written in README.md and docs/*.md
//! parse with today's command line. A test only: it reads the Markdown,
//! takes every command line inside ``` fences and hands it to the clap
//! definition `main` uses ([`super::command`]: `Cli` with every
//! workload's flags on `run`); nothing is executed.
//!
//! A command line is a line of a fence, joined with the lines a trailing
//! `\` continues, cut at shell operators (`|`, `&&`, `;`, `&`) and without
//! comments and redirections, whose program is `scalebench` — also behind
//! a prompt `$`, `sudo`, `time`, `ip netns exec NS`, `cargo run … --`, or a path
//! ending in `/scalebench`. Skipped, by shape ([`SKIPPED`]): synopsis
//! lines, which show placeholders rather than a command.

use clap::FromArgMatches;
use std::path::Path;

/// The shapes of lines left out, and why: each is a synopsis (the
/// options a command takes), not a command someone would type.
const SKIPPED: &[(&str, &str)] = &[
    (
        "a word opening with an unquoted `[-` or `[` and a capital",
        "an optional part (`[--json]`, `[-n N | -d 10s]`, `[URL…]`)",
    ),
    (
        "a word holding `…`",
        "`and so on` (`URL…`, `[--source ADDR]…`)",
    ),
];

/// One piece of a shell line.
#[derive(Debug, PartialEq)]
enum Token {
    /// A word, quotes removed; `synopsis` when it is one of [`SKIPPED`]'s
    /// shapes.
    Word { text: String, synopsis: bool },
    /// `|`, `||`, `&&`, `;` or `&`: the end of a command.
    End,
}

/// The words of a shell line, without its comment and its redirections
/// (`< /dev/null`, `> comment.md`, `2> err`).
fn tokens(line: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word: Option<(String, bool)> = None;
    let mut redirect = false;
    let mut chars = line.chars().peekable();
    let finish = |w: &mut Option<(String, bool)>, out: &mut Vec<Token>, redirect: &mut bool| {
        if let Some((text, bracket)) = w.take() {
            if *redirect {
                *redirect = false;
            } else {
                let synopsis = bracket || text.contains('…');
                out.push(Token::Word { text, synopsis });
            }
        }
    };
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => finish(&mut word, &mut out, &mut redirect),
            '#' if word.is_none() => break,
            '\'' => {
                let w = word.get_or_insert_with(Default::default);
                for q in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    w.0.push(q);
                }
            }
            '"' => {
                let w = word.get_or_insert_with(Default::default);
                while let Some(q) = chars.next() {
                    match q {
                        '"' => break,
                        '\\' => w.0.extend(chars.next()),
                        q => w.0.push(q),
                    }
                }
            }
            '\\' => {
                let w = word.get_or_insert_with(Default::default);
                w.0.extend(chars.next());
            }
            '<' | '>' => {
                // A file descriptor number before it (`2>`) goes too.
                if word
                    .as_ref()
                    .is_some_and(|(t, _)| t.chars().all(|d| d.is_ascii_digit()))
                {
                    word = None;
                }
                finish(&mut word, &mut out, &mut redirect);
                while chars.peek().is_some_and(|&n| n == '>' || n == '&') {
                    chars.next();
                }
                redirect = true;
            }
            '|' | '&' | ';' => {
                finish(&mut word, &mut out, &mut redirect);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                out.push(Token::End);
            }
            // `[--json]`, `[-6]`, `[URL…]`: a synopsis; `[::1]:80` is not.
            '[' if word.is_none() => {
                let opt = chars
                    .peek()
                    .is_some_and(|&n| n == '-' || n.is_ascii_uppercase());
                word = Some(("[".into(), opt));
            }
            c => word.get_or_insert_with(Default::default).0.push(c),
        }
    }
    finish(&mut word, &mut out, &mut redirect);
    out
}

/// The arguments of a scalebench command, from the words of one simple
/// command: `None` when its program is not scalebench.
fn scalebench_args(words: &[String]) -> Option<Vec<String>> {
    let mut w: &[String] = words;
    loop {
        match w {
            [first, rest @ ..] if ["$", "sudo", "time"].contains(&first.as_str()) => w = rest,
            [ip, netns, exec, _, rest @ ..] if ip == "ip" && netns == "netns" && exec == "exec" => {
                w = rest
            }
            _ => break,
        }
    }
    let rest = match w {
        [cargo, run, rest @ ..] if cargo == "cargo" && run == "run" => {
            let dashes = rest.iter().position(|a| a == "--")?;
            &rest[dashes + 1..]
        }
        [program, rest @ ..] if program == "scalebench" || program.ends_with("/scalebench") => rest,
        _ => return None,
    };
    Some(
        std::iter::once("scalebench".to_string())
            .chain(rest.iter().cloned())
            .collect(),
    )
}

/// A command line found in a Markdown text.
#[derive(Debug)]
struct Found {
    /// The line it starts on (1-based).
    line: usize,
    /// scalebench and its arguments.
    args: Vec<String>,
}

/// Every scalebench command inside the ``` fences of `text`, and how
/// many lines were skipped as synopses.
fn commands(text: &str) -> (Vec<Found>, usize) {
    let (mut found, mut skipped) = (Vec::new(), 0);
    let mut fence = false;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        if lines[i].trim_start().starts_with("```") {
            fence = !fence;
            i += 1;
            continue;
        }
        let mut logical = lines[i].to_string();
        while fence && logical.ends_with('\\') && i + 1 < lines.len() {
            logical.pop();
            i += 1;
            logical.push(' ');
            logical.push_str(lines[i]);
        }
        i += 1;
        if !fence {
            continue;
        }
        let toks = tokens(&logical);
        for cmd in toks.split(|t| *t == Token::End) {
            let words: Vec<String> = cmd
                .iter()
                .filter_map(|t| match t {
                    Token::Word { text, .. } => Some(text.clone()),
                    Token::End => None,
                })
                .collect();
            let Some(args) = scalebench_args(&words) else {
                continue;
            };
            if cmd
                .iter()
                .any(|t| matches!(t, Token::Word { synopsis: true, .. }))
            {
                skipped += 1;
            } else {
                found.push(Found {
                    line: start + 1,
                    args,
                });
            }
        }
    }
    (found, skipped)
}

/// clap's answer to one command line: `None` when it parses (or asks for
/// help) under the options' names, else clap's error or the old
/// spellings it holds.
fn refusal(args: &[String]) -> Option<String> {
    match super::command().try_get_matches_from(args) {
        Ok(m) => super::Cli::from_arg_matches(&m)
            .err()
            .map(|e| e.to_string())
            .or_else(|| old_spellings(args)),
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => None,
        Err(e) => Some(e.to_string()),
    }
}

/// The options of a command line that parse only as an alias, the old
/// spelling of another (`--out` for `--output`): what a guide should not
/// teach. The command `__boot` runs in a guest (after `--`) is checked
/// as a command line of its own.
fn old_spellings(args: &[String]) -> Option<String> {
    let root = super::command();
    let mut cmd = &root;
    let mut words = args.iter().skip(1).peekable();
    while let Some(sub) = words.peek().and_then(|w| cmd.find_subcommand(w.as_str())) {
        cmd = sub;
        words.next();
    }
    let mut old = Vec::new();
    for w in words.by_ref() {
        if w == "--" {
            break;
        }
        let Some(name) = w
            .strip_prefix("--")
            .map(|n| n.split('=').next().unwrap_or(n))
        else {
            continue;
        };
        if cmd.get_arguments().any(|a| a.get_long() == Some(name)) {
            continue;
        }
        if let Some(a) = cmd
            .get_arguments()
            .find(|a| a.get_all_aliases().is_some_and(|v| v.contains(&name)))
        {
            old.push(format!(
                "--{name} is the old spelling of --{}",
                a.get_long().unwrap_or_default()
            ));
        }
    }
    let inner: Vec<String> = words.cloned().collect();
    if cmd.get_name() == "__boot" && !inner.is_empty() {
        let guest = std::iter::once("scalebench".to_string()).chain(inner);
        old.extend(refusal(&guest.collect::<Vec<_>>()).map(|e| format!("in the guest: {e}")));
    }
    (!old.is_empty()).then(|| old.join("; "))
}

/// Every command of `text` that clap refuses, as `FILE:LINE: COMMAND` and
/// clap's words; and how many were checked and skipped.
fn check(name: &str, text: &str) -> (Vec<String>, usize, usize) {
    let (found, skipped) = commands(text);
    let bad = found
        .iter()
        .filter_map(|f| {
            refusal(&f.args)
                .map(|e| format!("{name}:{}: {}\n{}", f.line, f.args.join(" "), e.trim_end()))
        })
        .collect();
    (bad, found.len(), skipped)
}

/// README.md and every docs/*.md, by name.
fn documents() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ beside Cargo.toml")
        .map(|e| {
            e.expect("a docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    names.extend(docs);
    names
        .into_iter()
        .map(|n| {
            let text =
                std::fs::read_to_string(root.join(&n)).unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, text)
        })
        .collect()
}

mod tests {
    use super::*;

    #[test]
    fn every_command_line_in_the_docs_parses() {
        let (mut bad, mut checked, mut skipped) = (Vec::new(), 0, 0);
        for (name, text) in documents() {
            let (b, c, s) = check(&name, &text);
            bad.extend(b);
            checked += c;
            skipped += s;
        }
        assert!(
            bad.is_empty(),
            "{} of {checked} command lines in README.md and docs/ do not parse or use an old spelling:\n\n{}",
            bad.len(),
            bad.join("\n\n")
        );
        // The docs hold dozens; a handful means the extraction broke.
        assert!(
            checked >= 40,
            "only {checked} command lines found ({skipped} skipped)"
        );
        assert!(
            skipped <= checked / 4,
            "{skipped} synopsis lines skipped against {checked} checked: {SKIPPED:?}"
        );
    }

    #[test]
    fn command_lines_are_found_in_fences_only_and_bad_ones_named() {
        let text = "scalebench run --prose-is-not-checked\n\
            ```sh\n\
            scalebench run socket \\\n    --max 10   # a comment --not-a-flag\n\
            sudo time scalebench run fs --mkfs ext4 > log 2> err\n\
            scalebench export r.json | scalebench analyze -\n\
            cargo run --release -- run --dry-run\n\
            ip netns exec sb-x-h1 scalebench serve --root 'a dir' < /dev/null &\n\
            $ target/release/scalebench report --relabel \"a b=r.json\"\n\
            scalebench load URL… [-c 50]\n\
            scalebench testbed status [--json]\n\
            cargo build --release\n\
            scalebench run --not-a-flag\n\
            ```\n\
            scalebench run --after-the-fence\n";
        let (found, skipped) = commands(text);
        let got: Vec<(usize, String)> = found.iter().map(|f| (f.line, f.args.join(" "))).collect();
        let want = [
            (3, "scalebench run socket --max 10"),
            (5, "scalebench run fs --mkfs ext4"),
            (6, "scalebench export r.json"),
            (6, "scalebench analyze -"),
            (7, "scalebench run --dry-run"),
            (8, "scalebench serve --root a dir"),
            (9, "scalebench report --relabel a b=r.json"),
            (13, "scalebench run --not-a-flag"),
        ];
        assert_eq!(got, want.map(|(l, s)| (l, s.to_string())));
        assert_eq!(found[5].args[3], "a dir", "a quoted word stays one");
        assert_eq!(skipped, 2);
        let (bad, checked, _) = check("x.md", text);
        assert_eq!(checked, 8);
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(
            bad[0].starts_with("x.md:13: scalebench run --not-a-flag\n"),
            "{}",
            bad[0]
        );
        assert!(
            bad[0].contains("unexpected argument '--not-a-flag'"),
            "{}",
            bad[0]
        );
    }

    #[test]
    fn a_bad_value_and_a_workload_flag_are_told_apart() {
        // Workload flags exist only in the full definition, not on `Cli`.
        assert_eq!(
            refusal(&words("scalebench run fs --mkfs ext4 --fs-size 4G")),
            None
        );
        assert_eq!(refusal(&words("scalebench run --help")), None);
        let e = refusal(&words("scalebench run --runs 0")).expect("runs 0 is refused");
        assert!(e.contains("--runs"), "{e}");
    }

    #[test]
    fn old_spellings_parse_but_are_named() {
        for (line, want) in [
            (
                "scalebench run socket --out r.json",
                "--out is the old spelling of --output",
            ),
            (
                "scalebench report --label a=r.json",
                "--label is the old spelling of --relabel",
            ),
            (
                "scalebench run mail --heat-up=2s",
                "--heat-up is the old spelling of --warm-up",
            ),
            (
                "scalebench __boot a=kernel:/k -- run --warmup 5",
                "in the guest: --warmup is the old spelling of --warm-up-ops",
            ),
        ] {
            assert_eq!(refusal(&words(line)).as_deref(), Some(want), "{line}");
        }
        // `--label` is run's own option, `--output` the name.
        assert_eq!(refusal(&words("scalebench run --label a -o r.json")), None);
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }
}
