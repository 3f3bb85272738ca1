//! A keystroke's echo drawn on the view's own terminal by the terminal
//! thread, as tmux's server draws on its client's: the view lent its
//! terminal ([`tickloop_proto::attach::ViewTty`]) and is not woken on the
//! echo's way. The two take turns with locks on the device's rows
//! ([`tickloop_client::tty_turns`]): the view holds them whenever it draws
//! or shows anything but the Tick's screen cell for cell (a note on the
//! last row it keeps alone); the terminal thread draws only on rows it
//! gets at once, when the view has read every line it was sent, and tells
//! the view what it drew ([`tickloop_proto::attach::ToView::Drawn`])
//! before it lets go. Only what is certain to look the same as the view's
//! own drawing is drawn here: rows of plain ASCII whose changed cells have
//! no attribute; anything else goes to the view as rows, as before.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use tickloop_client::tty_turns::{self, Rows};
use tickloop_proto::attach::{Attrs, Line, RowsChanged, Snapshot, ViewTty};

/// The view's terminal as the launcher opened it: its own file
/// description, non-blocking, so that nothing changes for the view.
pub struct LentTty(OwnedFd);

impl LentTty {
    /// Opens the terminal a view lent: only a terminal's path (`/dev/pts/N`,
    /// `/dev/ttyN`: nothing else is opened, so that no other device sees
    /// an open), and only a terminal device whose number is the one the
    /// view named (a path that opens anything else lends nothing).
    pub fn open(tty: &ViewTty) -> Option<LentTty> {
        open_view_tty(tty, libc::O_WRONLY).map(LentTty)
    }

    /// The turn of `rows` of the terminal, if the view lets go of them now
    /// and does not want them back (never waits).
    fn turn(&self, rows: Rows) -> Option<Turn<'_>> {
        if tty_turns::taken_by_another(self.0.as_fd(), Rows::WANTED) {
            return None;
        }
        tty_turns::take(self.0.as_fd(), rows, false).then_some(Turn(self, rows))
    }

    /// Lets go of every row this launcher kept ([`Turn::keep`]).
    pub fn let_go(&self) {
        tty_turns::give(self.0.as_fd(), Rows::ALL);
    }

    /// Writes `bytes` without waiting: how many the terminal took.
    fn write_now(&self, bytes: &[u8]) -> usize {
        let mut done = 0;
        while done < bytes.len() {
            let rest = &bytes[done..];
            // SAFETY: `rest` is valid for `rest.len()` bytes; the fd is
            // owned by `self` for the call.
            let n = unsafe { libc::write(self.0.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
            match usize::try_from(n) {
                Ok(n) => done += n,
                Err(_)
                    if std::io::Error::last_os_error().kind()
                        == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        done
    }

    /// Draws the echo that turns `last` into `next` (`rows`, their diff)
    /// if this can be done here: the view has read all it was sent on
    /// `sink` and lets go of its terminal, and the change is one this
    /// draws as the view would. What the terminal did not take at once
    /// comes back, for the view to write; the turn lasts until the view
    /// is told.
    pub(super) fn draw(
        &self,
        sink: &OwnedFd,
        last: &Snapshot,
        next: &Snapshot,
        rows: &RowsChanged,
    ) -> Option<(Turn<'_>, String)> {
        // Every row; else all but the last (a note covers it).
        let (turn, covered) = match self.turn(Rows::ALL) {
            Some(turn) => (turn, next.rows),
            None => {
                let above = next.rows.checked_sub(1).filter(|n| *n > 0)?;
                (self.turn(Rows::above(above))?, above)
            }
        };
        let bytes = echo_bytes(last, next, rows, covered)?;
        if !all_read(sink) {
            return None;
        }
        let taken = self.write_now(bytes.as_bytes());
        Some((turn, bytes[taken..].to_string()))
    }
}

/// Opens the terminal a view lent (`access`: `O_WRONLY` or `O_RDWR`; not
/// a controlling terminal, non-blocking): only a terminal's path
/// (`/dev/pts/N`, `/dev/ttyN`: nothing else is opened, so that no other
/// device sees an open), and only a terminal device whose number is the
/// one the view named (a path that opens anything else lends nothing).
pub(super) fn open_view_tty(tty: &ViewTty, access: libc::c_int) -> Option<OwnedFd> {
    let named_a_terminal = tty.path.starts_with("/dev/pts/")
        || tty.path.starts_with("/dev/tty") && tty.path.len() > "/dev/tty".len();
    if !named_a_terminal || tty.path.contains("/../") || tty.path.ends_with("ptmx") {
        return None;
    }
    let path = CString::new(tty.path.as_bytes()).ok()?;
    // SAFETY: `path` is a valid C string for the call.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            access | libc::O_NOCTTY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: stat is plain data, filled by fstat from a valid fd.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let stat_ok = unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } == 0;
    // SAFETY: isatty on a valid fd.
    let is_tty = unsafe { libc::isatty(fd.as_raw_fd()) } == 1;
    let is_char = st.st_mode & libc::S_IFMT == libc::S_IFCHR;
    (stat_ok && is_tty && is_char && st.st_rdev == tty.dev).then_some(fd)
}

/// The launcher's turn on rows of a lent terminal: the view waits until
/// it ends.
pub(super) struct Turn<'a>(&'a LentTty, Rows);

impl Turn<'_> {
    /// The rows stay taken when the turn ends, until
    /// [`LentTty::let_go`].
    pub(super) fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        tty_turns::give(self.0 .0.as_fd(), self.1);
    }
}

/// Whether the view is still there and has read every byte sent on its
/// socket `sink` (the socket's send queue is empty): then it has drawn all
/// it was sent before it let go of its terminal. A view that is leaving
/// shuts its socket down before it lets go of its terminal, so nothing is
/// drawn on the screen it gives back to the person's shell.
fn all_read(sink: &OwnedFd) -> bool {
    if hung_up(sink) {
        return false;
    }
    let mut queued: libc::c_int = 0;
    // SAFETY: TIOCOUTQ (SIOCOUTQ) writes one int, from a valid fd.
    let ok = unsafe { libc::ioctl(sink.as_raw_fd(), libc::TIOCOUTQ, &mut queued) } == 0;
    ok && queued == 0
}

/// Whether the peer of `socket` hung up (or it is in error, or the poll
/// failed).
pub(super) fn hung_up(socket: &OwnedFd) -> bool {
    let mut poll = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call; no wait.
    unsafe { libc::poll(&mut poll, 1, 0) != 0 }
}

/// The bytes that draw the change from `last` to `next` (`rows`, their
/// diff) on a terminal that shows `last` cell for cell in its rows above
/// `shown` (below them, the view's note), with its attributes at their
/// defaults, leaving them so and the cursor at `next`'s; none when that
/// change is not one drawn here: the title, modes, cursor looks or screen
/// changed, or a changed row is not plain ASCII or has attributes from
/// where it changed on. A screen that scrolled is scrolled as a terminal
/// scrolls at its last row (a line feed there), within the rows shown.
pub(crate) fn echo_bytes(
    last: &Snapshot,
    next: &Snapshot,
    rows: &RowsChanged,
    shown: u16,
) -> Option<String> {
    let scrolled = usize::from(rows.scrolled);
    let shown = usize::from(shown.min(next.rows));
    if scrolled >= shown
        || rows.title.is_some()
        || rows.scroll.offset != 0
        || next.alt_screen != last.alt_screen
        || next.modes != last.modes
        || next.cursor.visible != last.cursor.visible
        || next.cursor.shape != last.cursor.shape
        || next.cols != last.cols
        || next.rows != last.rows
    {
        return None;
    }
    let mut out = String::from("\x1b[0m");
    if scrolled > 0 {
        // The rows shown scroll (a region of them when a note covers the
        // last), the region put back after.
        out.push_str(&format!("\x1b[1;{shown}r\x1b[{shown};1H"));
        out.extend(std::iter::repeat_n('\n', scrolled));
        out.push_str("\x1b[r");
    }
    // The rows that changed, and those a scroll within the rows shown
    // left blank (the lines that moved into them were under the note).
    let changed = rows.rows.iter().map(|(row, _)| usize::from(*row));
    let mut drawn: Vec<usize> = changed.chain(shown - scrolled..shown).collect();
    drawn.sort_unstable();
    drawn.dedup();
    let blank_line = Line::default();
    for row in drawn.into_iter().filter(|row| *row < shown) {
        let line = next.lines.get(row)?;
        // What the row shows now: the line that moved up into it.
        let before = match row + scrolled {
            moved if moved < shown => last.lines.get(moved)?,
            _ => &blank_line,
        };
        let (at, text, blank) = changed_cells(before, line)?;
        if text.is_empty() && blank == 0 {
            continue;
        }
        if at + text.len() + blank > usize::from(next.cols) {
            return None;
        }
        out.push_str(&format!("\x1b[{};{}H", row + 1, at + 1));
        out.push_str(&text);
        out.extend(std::iter::repeat_n(' ', blank));
    }
    out.push_str(&format!(
        "\x1b[{};{}H",
        next.cursor.y + 1,
        next.cursor.x + 1
    ));
    Some(out)
}

/// Where `after` starts to differ from `before` (its column), the text
/// from there on, and how many blank cells must follow it to cover what
/// `before` had there; none unless both rows are printable ASCII (a cell
/// each) and the text from there on has no attribute.
fn changed_cells(before: &Line, after: &Line) -> Option<(usize, String, usize)> {
    fn cells(line: &Line) -> Option<Vec<(u8, &Attrs)>> {
        let mut cells = Vec::new();
        for run in &line.runs {
            if !run.text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                return None;
            }
            cells.extend(run.text.bytes().map(|b| (b, &run.attrs)));
        }
        Some(cells)
    }
    let (old, new) = (cells(before)?, cells(after)?);
    let at = old.iter().zip(&new).take_while(|(o, n)| o == n).count();
    let tail = &new[at..];
    if !tail.iter().all(|(_, attrs)| attrs.is_default()) {
        return None;
    }
    let text = tail.iter().map(|(b, _)| char::from(*b)).collect();
    Some((at, text, old.len().saturating_sub(new.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::attach::{Color, Run};

    fn line(runs: &[(&str, Attrs)]) -> Line {
        Line {
            runs: runs
                .iter()
                .map(|(text, attrs)| Run {
                    text: (*text).to_string(),
                    attrs: attrs.clone(),
                })
                .collect(),
        }
    }

    fn screen(lines: &[Line], cursor: (u16, u16)) -> Snapshot {
        let mut snap = Snapshot::blank(20, 4);
        for (i, l) in lines.iter().enumerate() {
            snap.lines[i] = l.clone();
        }
        snap.cursor.x = cursor.0;
        snap.cursor.y = cursor.1;
        snap
    }

    fn plain(text: &str) -> Line {
        line(&[(text, Attrs::default())])
    }

    fn drawn(last: &Snapshot, next: &Snapshot) -> Option<String> {
        let rows = last.diff(next).expect("same size");
        echo_bytes(last, next, &rows, last.rows)
    }

    #[test]
    fn a_typed_character_is_drawn_in_its_cell_and_the_cursor_put_after_it() {
        let last = screen(&[plain("$ ec")], (4, 0));
        let next = screen(&[plain("$ ech")], (5, 0));
        assert_eq!(
            drawn(&last, &next).as_deref(),
            Some("\x1b[0m\x1b[1;5Hh\x1b[1;6H")
        );
    }

    #[test]
    fn a_rubbed_out_character_is_covered_with_a_blank() {
        let last = screen(&[plain("$ ech")], (5, 0));
        let next = screen(&[plain("$ ec")], (4, 0));
        assert_eq!(
            drawn(&last, &next).as_deref(),
            Some("\x1b[0m\x1b[1;5H \x1b[1;5H")
        );
    }

    #[test]
    fn a_coloured_prompt_before_the_change_is_left_as_it_is() {
        let green = Attrs {
            fg: Some(Color::Index(2)),
            ..Attrs::default()
        };
        let last = screen(
            &[line(&[("me", green.clone()), ("$ ", Attrs::default())])],
            (4, 0),
        );
        let next = screen(&[line(&[("me", green), ("$ l", Attrs::default())])], (5, 0));
        assert_eq!(
            drawn(&last, &next).as_deref(),
            Some("\x1b[0m\x1b[1;5Hl\x1b[1;6H")
        );
    }

    #[test]
    fn what_the_view_must_draw_itself_is_not_drawn_here() {
        let bold = Attrs {
            bold: true,
            ..Attrs::default()
        };
        let last = screen(&[plain("$ ")], (2, 0));
        // Coloured text where it changed.
        let next = screen(&[line(&[("$ ", Attrs::default()), ("l", bold)])], (3, 0));
        assert_eq!(drawn(&last, &next), None);
        // A character of more than ASCII, before or after the change.
        assert_eq!(drawn(&last, &screen(&[plain("$ é")], (3, 0))), None);
        assert_eq!(
            drawn(
                &screen(&[plain("中 ")], (3, 0)),
                &screen(&[plain("中 l")], (4, 0))
            ),
            None
        );
        // The cursor hidden, the title set.
        let mut hidden = screen(&[plain("$ l")], (3, 0));
        hidden.cursor.visible = false;
        assert_eq!(drawn(&last, &hidden), None);
        let mut titled = screen(&[plain("$ l")], (3, 0));
        titled.title = "t".into();
        assert_eq!(drawn(&last, &titled), None);
    }

    #[test]
    fn a_screen_that_scrolled_is_scrolled_with_a_line_feed_at_its_last_row() {
        let full = screen(&[plain("<a>"), plain("<b>"), plain("<c>")], (0, 3));
        let next = screen(&[plain("<b>"), plain("<c>"), plain("<d>")], (0, 3));
        let rows = full.diff(&next).expect("same size");
        assert_eq!(rows.scrolled, 1, "{rows:?}");
        assert_eq!(
            echo_bytes(&full, &next, &rows, 4).as_deref(),
            Some("\x1b[0m\x1b[1;4r\x1b[4;1H\n\x1b[r\x1b[3;1H<d>\x1b[4;1H")
        );
    }

    #[test]
    fn under_a_note_on_the_last_row_the_rows_above_it_scroll_and_are_drawn() {
        // The last row is the view's note: the rows above it scroll as a
        // region, and the note stays.
        let full = screen(&[plain("<a>"), plain("<b>"), plain("<c>")], (0, 3));
        let next = screen(&[plain("<b>"), plain("<c>"), plain("<d>")], (0, 3));
        let rows = full.diff(&next).expect("same size");
        assert_eq!(
            echo_bytes(&full, &next, &rows, 3).as_deref(),
            Some("\x1b[0m\x1b[1;3r\x1b[3;1H\n\x1b[r\x1b[3;1H<d>\x1b[4;1H")
        );
        // The line that moved up from under the note is drawn whole; the
        // last row's change is not drawn.
        let last = screen(&[plain("a"), plain("b"), plain("c"), plain("$ l")], (3, 3));
        let next = screen(
            &[plain("b"), plain("c"), plain("$ l"), plain("out")],
            (3, 3),
        );
        let rows = last.diff(&next).expect("same size");
        assert_eq!(rows.scrolled, 1, "{rows:?}");
        assert_eq!(
            echo_bytes(&last, &next, &rows, 3).as_deref(),
            Some("\x1b[0m\x1b[1;3r\x1b[3;1H\n\x1b[r\x1b[3;1H$ l\x1b[4;4H")
        );
        // Without a scroll, only the rows above the note are drawn.
        let last = screen(&[plain("$ ls")], (4, 0));
        let mut next = screen(&[plain("$ ls")], (4, 0));
        next.lines[3] = plain("x");
        let rows = last.diff(&next).expect("same size");
        assert_eq!(
            echo_bytes(&last, &next, &rows, 3).as_deref(),
            Some("\x1b[0m\x1b[1;5H")
        );
    }

    #[test]
    fn only_a_terminal_is_opened() {
        for path in [
            "/dev/null",
            "/dev/tty",
            "/etc/passwd",
            "/dev/pts/../null",
            "/dev/pts/ptmx",
        ] {
            let tty = ViewTty {
                path: path.into(),
                dev: 0,
            };
            assert!(LentTty::open(&tty).is_none(), "{path} opened");
        }
    }

    #[test]
    fn a_cursor_that_only_moved_is_moved() {
        let last = screen(&[plain("$ ls")], (4, 0));
        let next = screen(&[plain("$ ls")], (3, 0));
        assert_eq!(drawn(&last, &next).as_deref(), Some("\x1b[0m\x1b[1;4H"));
    }
}
