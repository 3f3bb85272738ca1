//! The Monitor's list in columns: which columns there are (CWD and COMMAND
//! once a shell has run a command), the order they are dropped in when the
//! terminal is narrow (never ID or STATE), their widths fitted to the
//! terminal, and each row's cells in them (long text cut with `…`, a
//! directory kept by its end, numbers never). No I/O; time is an input.

use super::row::Row;
use crate::cells::{age, fit, truncate, width};
use time::OffsetDateTime;

/// A column of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Id,
    Kind,
    Title,
    /// A shell's working directory.
    Cwd,
    /// A shell's command running, or its last with its status.
    Command,
    Seq,
    /// Time since the Tick's last `tick/update`, or a shell's last command
    /// started or ended (`-` for a shell without integration).
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
pub const COLUMNS: [Col; 12] = [
    Col::Id,
    Col::Kind,
    Col::Title,
    Col::Cwd,
    Col::Command,
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
pub const DROP_ORDER: [Col; 9] = [
    Col::Views,
    Col::Calls,
    Col::Seq,
    Col::Kind,
    Col::Updated,
    Col::Cwd,
    Col::Title,
    Col::Command,
    Col::Active,
];

/// Whether the list has CWD and COMMAND: once a shell has run a command
/// (a shell just opened has nothing to show there but where it started,
/// which the detail line says).
fn shells_shown(rows: &[Row]) -> bool {
    rows.iter().any(Row::has_shell_command)
}

/// The columns `rows` are shown in, at most: [`COLUMNS`], without CWD and
/// COMMAND until a shell has run a command.
pub fn columns(rows: &[Row]) -> Vec<Col> {
    let shells = shells_shown(rows);
    COLUMNS
        .into_iter()
        .filter(|c| shells || !matches!(c, Col::Cwd | Col::Command))
        .collect()
}

/// [`DROP_ORDER`] (of the [`columns`] shown) with APPROVE: first while no
/// call waits for approval, last (after ACTIVE) while one does, for the
/// person looking.
pub fn drop_order(rows: &[Row]) -> Vec<Col> {
    let waiting = rows.iter().any(|r| r.approvals_waiting > 0);
    let shown = columns(rows);
    let mut order: Vec<Col> = DROP_ORDER
        .into_iter()
        .filter(|c| shown.contains(c))
        .collect();
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
            Col::Cwd => "CWD",
            Col::Command => "COMMAND",
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
            Col::Cwd => r
                .shell
                .as_ref()
                .map_or("-".into(), |s| s.cwd_cell(usize::MAX)),
            Col::Command => r
                .shell
                .as_ref()
                .map_or("-".into(), |s| s.command_cell(now, usize::MAX)),
            Col::Seq => r.seq.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
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
            Col::Cwd => need.min(20),
            // The status (`exit 2 · 3.1s`) and the start of the command.
            Col::Command => need.min(28),
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
/// of [`drop_order`] goes; then the text columns give way (STATE, CWD,
/// TITLE, COMMAND, KIND, ID, each to its comfortable width, then all to a
/// minimum); what is left over goes to STATE, the last.
pub fn layout(rows: &[Row], cols: usize, now: OffsetDateTime) -> Layout {
    let need = |c: Col| -> usize {
        rows.iter()
            .map(|r| width(&c.field(r, now)))
            .chain([c.header().len()])
            .max()
            .unwrap_or(0)
    };
    let mut shown: Layout = columns(rows).into_iter().map(|c| (c, need(c))).collect();
    let total = |l: &Layout, f: &dyn Fn(Col, usize) -> usize| -> usize {
        l.iter().map(|&(c, w)| f(c, w)).sum::<usize>() + l.len().saturating_sub(1)
    };
    for drop in drop_order(rows) {
        if total(&shown, &|c, w| c.comfortable(w)) <= cols {
            break;
        }
        shown.retain(|&(c, _)| c != drop);
    }
    let order = [
        Col::State,
        Col::Cwd,
        Col::Title,
        Col::Command,
        Col::Kind,
        Col::Id,
    ];
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
/// `violation`…): the detail line has the whole reason. A shell's
/// directory keeps its end, and its command its status, in their width.
pub fn row_fields(r: &Row, layout: &Layout, now: OffsetDateTime) -> Vec<String> {
    layout
        .iter()
        .map(|&(c, w)| match (&r.ended, c, &r.shell) {
            (_, Col::Cwd, Some(shell)) => shell.cwd_cell(w),
            (_, Col::Command, Some(shell)) => shell.command_cell(now, w),
            (Some(e), Col::State, _) if width(&c.field(r, now)) > w => e.kind.clone(),
            _ => c.field(r, now),
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
        assert_eq!(shown(200), columns(&r));
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
            for c in columns(&r) {
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

    /// CWD and COMMAND come with a shell that ran a command; narrowed,
    /// the directory keeps its end and the command its status.
    #[test]
    fn a_shells_directory_and_command_have_columns_of_their_own() {
        assert!(!columns(&rows()).contains(&Col::Cwd));
        let mut r = rows();
        r.extend(Row::all_from_json(&serde_json::json!([{
            "id": "shell:w", "state": "running", "pid": 7, "argv": ["bash"],
            "shell": {"shell": "bash", "kind": "injected", "active": true},
            "shell_state": {"seq": 4, "cwd": "/home/ada/src/tickloop/view-monitor",
                "at_prompt": true, "running": null, "commands_total": 2,
                "last": {"n": 2, "command": "cargo test --workspace", "exit": 101,
                    "started": "2026-11-29T20:59:00Z", "ended": "2026-11-29T20:59:41Z",
                    "duration_ms": 41000}}
        }])));
        assert_eq!(r[2].kind.as_deref(), Some("bash"));
        assert_eq!(r[2].seq, Some(4));
        assert!(columns(&r).contains(&Col::Cwd) && columns(&r).contains(&Col::Command));
        let w = layout(&r, 100, now());
        let cells: Vec<(Col, String)> = w
            .iter()
            .map(|c| c.0)
            .zip(row_fields(&r[2], &w, now()))
            .collect();
        let cell = |col| {
            cells
                .iter()
                .find(|(c, _)| *c == col)
                .map(|(_, t)| t.as_str())
        };
        assert_eq!(cell(Col::Cwd), Some("…/view-monitor"), "{w:?}");
        let command = cell(Col::Command).unwrap_or_default();
        assert!(
            command.starts_with("exit 101 · 41s · cargo test") && command.ends_with('…'),
            "{command:?} in {w:?}"
        );
        // COMMAND outlasts TITLE and CWD as the terminal narrows.
        let at = |cols| -> Vec<Col> { layout(&r, cols, now()).iter().map(|c| c.0).collect() };
        assert_eq!(
            at(70),
            vec![Col::Id, Col::Title, Col::Command, Col::Active, Col::State]
        );
        assert_eq!(at(60), vec![Col::Id, Col::Command, Col::Active, Col::State]);
    }
}
