//! Terminal tables that keep their columns aligned and never cut a word: a
//! cell too wide for its column wraps at word boundaries within it
//! (`comfy-table`), the table as wide as the terminal's 100 columns.

use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, LineStyle, Table, TableStyle, Width,
};

/// The width every terminal table fits (as the rest of the report).
pub const WIDTH: u16 = 100;

/// `rows` under `header`, columns separated by two spaces and the header
/// underlined; the columns in `right` aligned right; a column whose
/// index is in `keep` never wrapped (names, numbers).
pub fn render(header: &[&str], rows: &[Vec<String>], right: &[usize], keep: &[usize]) -> String {
    // No borders: only the line under the header.
    let style = TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));
    let mut t = Table::new();
    t.load_style(style)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_width(WIDTH)
        .set_header(header.to_vec());
    for r in rows {
        t.add_row(r.clone());
    }
    for (i, head) in header.iter().enumerate() {
        if let Some(c) = t.column_mut(i) {
            c.set_padding((0, 2));
            if right.contains(&i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
            if keep.contains(&i) {
                let w = std::iter::once(*head)
                    .chain(rows.iter().filter_map(|r| r.get(i).map(String::as_str)))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(1) as u16;
                c.set_constraint(ColumnConstraint::Absolute(Width::Fixed(w + 2)));
            }
        }
    }
    t.lines()
        .map(|l| l.trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_cells_wrap_at_words_and_columns_stay_aligned() {
        let long = "fork() until the parent has read the byte the new child wrote to a pipe (dynamically linked forker)";
        let rows = vec![
            vec![
                "socket".to_string(),
                "open descriptors".into(),
                "socket()".into(),
            ],
            vec!["fork".to_string(), "live children".into(), long.into()],
        ];
        let t = super::render(&["benchmark", "n", "timed"], &rows, &[], &[0, 1]);
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 100), "{t}");
        // Every word of the long cell is there whole.
        for w in long.split_whitespace() {
            assert!(t.split_whitespace().any(|x| x == w), "{w}: {t}");
        }
        // The third column starts at the same place on every line.
        let at = lines[0].find("timed").unwrap();
        for l in lines
            .iter()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('─'))
        {
            let col: String = l.chars().skip(at).take(1).collect();
            assert!(!col.trim().is_empty(), "{l}\n{t}");
        }
        assert!(lines[1].starts_with('─'), "{t}");
    }
}
