//! A self-contained flame graph (inline SVG) of folded stacks: root at the
//! bottom, each frame as wide as its samples, kernel frames in one hue and
//! user frames in another, the growing functions (and the stacks they are
//! in) in red. Every rectangle has a `<title>` with its samples.

use super::chart::esc;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A node of the merged stack tree.
#[derive(Default)]
struct Node {
    total: u64,
    children: BTreeMap<String, Node>,
}

const W: f64 = 760.0;
const ROW: f64 = 16.0;
/// Frames narrower than this (pixels) are left out.
const MIN_W: f64 = 0.5;

/// Draws `folded` (as written by `analysis::stacks::fold`); `highlight`
/// holds the frame labels to mark (`inet_bind2_bucket_find [k]`).
pub fn svg(id: &str, title: &str, folded: &[(Vec<String>, u64)], highlight: &[String]) -> String {
    let mut root = Node::default();
    for (stack, count) in folded {
        root.total += count;
        let mut n = &mut root;
        for f in stack {
            n = n.children.entry(f.clone()).or_default();
            n.total += count;
        }
    }
    let depth = max_depth(&root);
    let h = (depth as f64 + 2.0) * ROW + 30.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{}\" class=\"flame\" viewBox=\"0 0 {W} {h:.0}\" role=\"img\" aria-label=\"{}\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"10\">",
        esc(id),
        esc(title)
    );
    let _ = write!(
        s,
        "<text x=\"0\" y=\"14\" font-size=\"13\" font-weight=\"bold\">{}</text>",
        esc(title)
    );
    if root.total > 0 {
        let scale = W / root.total as f64;
        let base = h - ROW;
        draw(&mut s, &root, "all", 0.0, base, scale, highlight, &mut 0);
    }
    s.push_str("</svg>");
    s
}

fn max_depth(n: &Node) -> usize {
    n.children
        .values()
        .map(|c| 1 + max_depth(c))
        .max()
        .unwrap_or(0)
}

/// Whether any frame below `n` (or `n` itself, named `name`) is marked.
fn marked(name: &str, n: &Node, highlight: &[String]) -> bool {
    highlight.iter().any(|h| h == name) || n.children.iter().any(|(k, c)| marked(k, c, highlight))
}

#[allow(clippy::too_many_arguments)]
fn draw(
    s: &mut String,
    n: &Node,
    name: &str,
    x: f64,
    y: f64,
    scale: f64,
    highlight: &[String],
    k: &mut usize,
) {
    let w = n.total as f64 * scale;
    if w < MIN_W {
        return;
    }
    let hot = highlight.iter().any(|h| h == name);
    let kernel = name.ends_with(" [k]");
    let fill = if hot {
        "#d62728".to_string()
    } else if marked(name, n, highlight) && name != "all" {
        "#f4a6a6".to_string()
    } else {
        // A stable shade per name: kernel orange, user blue.
        let hash = name
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(b as u32));
        let v = 170 + (hash % 60);
        if kernel {
            format!("rgb(240,{v},90)")
        } else {
            format!("rgb(110,{},230)", v - 20)
        }
    };
    *k += 1;
    let _ = write!(
        s,
        "<g class=\"frame{}\"><title>{} — {} samples</title><rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{fill}\" rx=\"1\"/>",
        if hot { " hot" } else { "" },
        esc(name),
        n.total,
        ROW - 1.0
    );
    // The name, as far as it fits (about 6 px per character).
    let chars = ((w - 4.0) / 6.0).floor() as usize;
    if chars >= 3 {
        let text: String = if name.chars().count() > chars {
            name.chars()
                .take(chars.saturating_sub(1))
                .collect::<String>()
                + "…"
        } else {
            name.to_string()
        };
        let _ = write!(
            s,
            "<text x=\"{:.2}\" y=\"{:.1}\">{}</text>",
            x + 2.0,
            y + ROW - 4.5,
            esc(&text)
        );
    }
    s.push_str("</g>");
    let mut cx = x;
    for (cn, c) in &n.children {
        draw(s, c, cn, cx, y - ROW, scale, highlight, k);
        cx += c.total as f64 * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_as_wide_as_their_samples_and_growers_are_red() {
        let folded = vec![
            (
                vec![
                    "main".to_string(),
                    "bind [k]".to_string(),
                    "find [k]".to_string(),
                ],
                3,
            ),
            (vec!["main".to_string(), "close [k]".to_string()], 1),
        ];
        let s = svg("f", "t", &folded, &["find [k]".to_string()]);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("<title>main — 4 samples</title>"));
        assert!(s.contains("<title>find [k] — 3 samples</title>"));
        // main spans everything, find three quarters.
        assert!(s.contains("width=\"760.00\""));
        assert!(s.contains("width=\"570.00\""));
        assert!(s.contains("class=\"frame hot\""));
        assert_eq!(s.matches("#d62728").count(), 1);
    }
}
