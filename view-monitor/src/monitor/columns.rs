//! The Monitor's list in columns: which columns there are, the order they
//! are dropped in when the terminal is narrow (never ID or STATE), their
//! widths fitted to the terminal, and each row's cells in them (long text
//! cut with `…`, numbers never). No I/O; time is an input.

use super::row::Row;
use crate::cells::{age, fit, truncate, width};
use time::OffsetDateTime;

/// A column of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Id,
    Kind,
    Title,
    Seq,
    /// Time since the Tick's last `tick/update` (`-` for shells).
    Updated,
    /// Time since the program last wrote to its terminal.
    Active,
    Calls,
    /// Calls waiting for a person's approval.
    Approve,
    Views,
    State,
}

/// The columns, left to right.
pub const COLUMNS: [Col; 10] = [
    Col::Id,
    Col::Kind,
    Col::Title,
    Col::Seq,
    Col::Updated,
    Col::Active,
    Col::Calls,
    Col::Approve,
    Col::Views,
    Col::State,
];

/// The order columns are dropped in when the terminal is too narrow for
/// them all; ID and STATE never are. APPROVE is not in it: see
/// [`drop_order`].
pub const DROP_ORDER: [Col; 7] = [
    Col::Views,
    Col::Calls,
    Col::Seq,
    Col::Kind,
    Col::Updated,
    Col::Title,
    Col::Active,
];

/// [`DROP_ORDER`] with APPROVE: first while no call waits for approval,
/// last (after ACTIVE) while one does, for the person looking.
pub fn drop_order(rows: &[Row]) -> Vec<Col> {
    let waiting = rows.iter().any(|r| r.approvals_waiting > 0);
    let mut order = DROP_ORDER.to_vec();
    if waiting {
        order.push(Col::Approve);
    } else {
        order.insert(0, Col::Approve);
    }
    order
}

/// Text columns never get narrower than this unless the terminal itself is.
const MIN_TEXT: usize = 5;

impl Col {
    pub fn header(self) -> &'static str {
        match self {
            Col::Id => "ID",
            Col::Kind => "KIND",
            Col::Title => "TITLE",
            Col::Seq => "SEQ",
            Col::Updated => "UPDATED",
            Col::Active => "ACTIVE",
            Col::Calls => "CALLS",
            Col::Approve => "APPROVE",
            Col::Views => "VIEWS",
            Col::State => "STATE",
        }
    }

    /// Numbers, aligned right and never cut.
    pub fn numeric(self) -> bool {
        matches!(
            self,
            Col::Seq | Col::Updated | Col::Active | Col::Calls | Col::Approve | Col::Views
        )
    }

    /// The cell of `r` in this column.
    pub fn field(self, r: &Row, now: OffsetDateTime) -> String {
        match self {
            Col::Id => r.id.clone(),
            Col::Kind => r.kind.clone().unwrap_or_else(|| "-".into()),
            Col::Title => r.title.clone().unwrap_or_default(),
            Col::Seq => r.seq.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            Col::Updated if r.is_shell() => "-".into(),
            Col::Updated => age(r.last_update_at, now),
            Col::Active => age(r.last_output_at, now),
            // An ended instance has neither (its last status may still count them).
            Col::Calls => live(r, r.calls_in_flight),
            Col::Approve => live(r, r.approvals_waiting),
            Col::Views => live(r, r.views),
            Col::State => r.state_text(),
        }
    }

    /// The width this column should keep before columns are dropped: the
    /// content's, but at most this for text (the rest is cut with `…`).
    fn comfortable(self, need: usize) -> usize {
        match self {
            Col::Id => need.min(16),
            Col::Kind | Col::Title => need.min(10),
            // "running", or the end's kind (the detail line has the reason).
            Col::State => need.min(9),
            _ => need,
        }
    }
}

/// The columns shown and their widths, left to right.
pub type Layout = Vec<(Col, usize)>;

/// The columns for `rows` at a terminal `cols` wide. Every column first
/// gets what its content needs (numbers at least their header); while the
/// shown columns at their [`Col::comfortable`] widths do not fit, the next
/// of [`DROP_ORDER`] goes; then the text columns give way (STATE, TITLE,
/// KIND, ID, each to its comfortable width, then all to a minimum); what is
/// left over goes to STATE, the last.
pub fn layout(rows: &[Row], cols: usize, now: OffsetDateTime) -> Layout {
    let need = |c: Col| -> usize {
        rows.iter()
            .map(|r| width(&c.field(r, now)))
            .chain([c.header().len()])
            .max()
            .unwrap_or(0)
    };
    let mut shown: Layout = COLUMNS.iter().map(|&c| (c, need(c))).collect();
    let total = |l: &Layout, f: &dyn Fn(Col, usize) -> usize| -> usize {
        l.iter().map(|&(c, w)| f(c, w)).sum::<usize>() + l.len().saturating_sub(1)
    };
    for drop in drop_order(rows) {
        if total(&shown, &|c, w| c.comfortable(w)) <= cols {
            break;
        }
        shown.retain(|&(c, _)| c != drop);
    }
    let order = [Col::State, Col::Title, Col::Kind, Col::Id];
    for floor in [None, Some(MIN_TEXT)] {
        for col in order {
            let over = total(&shown, &|_, w| w).saturating_sub(cols);
            if over == 0 {
                break;
            }
            if let Some(entry) = shown.iter_mut().find(|(c, _)| *c == col) {
                let floor = floor.unwrap_or_else(|| col.comfortable(entry.1));
                entry.1 -= over.min(entry.1.saturating_sub(floor));
            }
        }
    }
    let left = cols.saturating_sub(total(&shown, &|_, w| w));
    if let Some(last) = shown.last_mut() {
        last.1 += left;
    }
    shown
}

/// One table line as text: the cells of `fields` (one per `layout` column)
/// separated by a space, cut or padded to `cols`.
pub fn table_line(fields: &[String], layout: &Layout, cols: usize) -> String {
    segments(fields, layout, cols)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

/// A line cut into its columns: `(column, text)`, the text of each padded to
/// its width with the separating space, the last padded to `cols`.
pub(super) fn segments(
    fields: &[String],
    layout: &Layout,
    cols: usize,
) -> Vec<(Option<Col>, String)> {
    let mut out = Vec::new();
    let mut used = 0;
    for (i, (f, &(col, w))) in fields.iter().zip(layout).enumerate() {
        let mut text = String::new();
        if i > 0 {
            text.push(' ');
        }
        if col.numeric() {
            let t = truncate(f, w);
            text.push_str(&" ".repeat(w.saturating_sub(width(&t))));
            text.push_str(&t);
        } else {
            text.push_str(&fit(f, w));
        }
        let text = truncate(&text, cols.saturating_sub(used));
        used += width(&text);
        out.push((Some(col), text));
    }
    if used < cols {
        out.push((None, " ".repeat(cols - used)));
    }
    out
}

/// The fields of a row in `layout`'s columns. A STATE too wide for its
/// column says only how the instance ended (`closed`, `exited`,
/// `violation`…): the detail line has the whole reason.
pub fn row_fields(r: &Row, layout: &Layout, now: OffsetDateTime) -> Vec<String> {
    layout
        .iter()
        .map(|&(c, w)| {
            let full = c.field(r, now);
            match (&r.ended, c) {
                (Some(e), Col::State) if width(&full) > w => e.kind.clone(),
                _ => full,
            }
        })
        .collect()
}

/// The headers of `layout`'s columns.
pub fn header_fields(layout: &Layout) -> Vec<String> {
    layout
        .iter()
        .map(|&(c, _)| c.header().to_string())
        .collect()
}

fn live(r: &Row, n: u64) -> String {
    if r.ended.is_some() {
        "-".into()
    } else {
        n.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::super::row::fixtures::{now, rows};
    use super::*;

    #[test]
    fn layout_fits_every_width() {
        let mut r = rows();
        r[0].title = Some("A very long title that goes on and on and on".into());
        r[1].ended.as_mut().unwrap().reason = "x".repeat(200);
        for cols in [0, 1, 5, 20, 40, 80, 100, 200, 400] {
            let w = layout(&r, cols, now());
            let total: usize = w.iter().map(|(_, w)| w).sum::<usize>() + w.len() - 1;
            if cols >= 40 {
                assert_eq!(total, cols, "{cols}: {w:?}");
            }
            // ID and STATE are never dropped.
            assert_eq!(w.first().map(|c| c.0), Some(Col::Id), "{cols}");
            assert_eq!(w.last().map(|c| c.0), Some(Col::State), "{cols}");
            for row in &r {
                let line = table_line(&row_fields(row, &w, now()), &w, cols);
                assert_eq!(width(&line), cols, "{cols}: {line}");
            }
        }
        // At 80 columns the id is shown whole, the long title cut.
        let w = layout(&r, 80, now());
        let line = table_line(&row_fields(&r[0], &w, now()), &w, 80);
        assert!(line.starts_with("hosted:counter "), "{line}");
        assert!(line.contains('…'), "{line}");
        assert!(line.contains(" 3 "), "{line}");
    }

    #[test]
    fn narrow_terminals_drop_columns_by_priority() {
        let r = rows();
        let shown = |cols| -> Vec<Col> { layout(&r, cols, now()).iter().map(|c| c.0).collect() };
        assert_eq!(shown(200), COLUMNS.to_vec());
        let at60 = shown(60);
        assert!(
            !at60.contains(&Col::Views) && at60.contains(&Col::Active),
            "{at60:?}"
        );
        assert_eq!(shown(32), vec![Col::Id, Col::Active, Col::State]);
        assert_eq!(shown(24), vec![Col::Id, Col::State]);
        // Dropping follows DROP_ORDER as the terminal narrows.
        let mut dropped = Vec::new();
        for cols in (20..=200).rev() {
            for c in COLUMNS {
                if !shown(cols).contains(&c) && !dropped.contains(&c) {
                    dropped.push(c);
                }
            }
        }
        assert_eq!(dropped, drop_order(&r));
        assert_eq!(dropped[0], Col::Approve);
        // A call waiting for approval keeps its column to the last.
        let mut waiting = rows();
        waiting[0].approvals_waiting = 1;
        let shown =
            |cols| -> Vec<Col> { layout(&waiting, cols, now()).iter().map(|c| c.0).collect() };
        assert_eq!(shown(34), vec![Col::Id, Col::Approve, Col::State]);
        assert_eq!(drop_order(&waiting).last(), Some(&Col::Approve));
    }
}
