//! Text wrapped to the terminal's width, for the terminal writers
//! (report, compare, history).

use std::io::Write;

/// Terminal width the report keeps to.
pub const WIDTH: usize = 100;

/// Writes `text` after `first`, wrapped at spaces to [`WIDTH`] columns;
/// continuation lines are indented two columns more than `first`.
pub fn wrapped(out: &mut dyn Write, first: &str, text: &str) -> std::io::Result<()> {
    // A number and its unit stay on one line, and so do a number's digit
    // groups, `n = …` and a count with what it counts; such spaces are
    // written as plain spaces.
    const KEEP: char = '\u{a0}';
    let text = [
        "ns", "µs", "ms", "s ", "samples", "runs", "%", "=", "KiB", "MiB", "GiB", "KB", "MB",
    ]
    .iter()
    .fold(text.to_string(), |t, u| {
        t.replace(&format!(" {u}"), &format!("{KEEP}{u}"))
    })
    .replace("= ", &format!("={KEEP}"))
    .replace("samples in ", &format!("samples{KEEP}in{KEEP}"));
    let chars: Vec<char> = text.chars().collect();
    let text: String = chars
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let digits = i > 0
                && i + 1 < chars.len()
                && chars[i - 1].is_ascii_digit()
                && chars[i + 1].is_ascii_digit();
            if c == ' ' && digits { KEEP } else { c }
        })
        .collect();
    let text = text.as_str();
    let cont = " ".repeat(first.chars().count() + 2);
    let mut line = first.to_string();
    let mut len = line.chars().count();
    let mut empty = true;
    for word in text.split(' ') {
        let w = word.chars().count();
        if !empty && len + 1 + w > WIDTH {
            writeln!(out, "{}", line.replace(KEEP, " "))?;
            line = format!("{cont}{word}");
            len = cont.chars().count() + w;
        } else {
            if !empty {
                line.push(' ');
                len += 1;
            }
            line.push_str(word);
            len += w;
        }
        empty = false;
    }
    writeln!(out, "{}", line.replace(KEEP, " "))
}
