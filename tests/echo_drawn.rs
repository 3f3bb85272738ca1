//! A view that lends its terminal (`ViewHello::tty`) has a keystroke's
//! echo drawn there by the launcher's terminal thread itself
//! (`launcher/src/terminal/direct.rs`), as tmux's server draws on its
//! client's terminal, and is told what was drawn (`ToView::Drawn`). End to
//! end with a real launcher and a real bash: the view's terminal is a real
//! PTY whose master this test reads, fed to an emulator that first shows
//! the screen the view was sent. What the launcher drew must make that
//! terminal show the view's screen once the view is told (it keeps the
//! rows it drew on, and tells them as one when the view asks for them
//! back, `ViewEvent::TakeRows`: the view is not woken by every echo);
//! while the view holds the terminal's rows
//! (`tickloop_client::tty_turns`), nothing is drawn on them and the echo
//! comes as rows. A view that lends its keys too
//! (`ViewEvent::LendKeys`) has them read by the launcher: what is typed
//! as it is reaches the shell, the rest comes back to the view
//! (`ToView::KeysBack`), and nothing is read once the view holds them.

mod common;

use common::raw_view::raw_view_lending;
use common::{wait_for, Host};
use launcher::emulator::Emulator;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::net::UnixStream;
use tickloop_client::tty_turns::{self, Rows};
use tickloop_proto::attach::{Snapshot, ToView, ViewTty};
use tickloop_proto::wire::{Hello, Role};

const COLS: u16 = 70;
const ROWS: u16 = 12;

/// The person's terminal: a PTY whose master the test reads.
struct Terminal {
    master: File,
    slave: File,
    path: String,
    dev: u64,
    /// The device opened again, for the view's lock.
    lock: File,
}

impl Terminal {
    fn new() -> Terminal {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: ROWS,
            ws_col: COLS,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: openpty fills two descriptors; the name and termios
        // pointers may be null.
        let ok = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &size,
            )
        };
        assert_eq!(ok, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: both were just opened and are owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        // Raw, as the view makes its terminal: each key readable at once.
        // SAFETY: termios is plain data, filled by tcgetattr from a valid
        // descriptor before it is changed and set.
        unsafe {
            let mut mode: libc::termios = std::mem::zeroed();
            assert_eq!(libc::tcgetattr(slave.as_raw_fd(), &mut mode), 0);
            libc::cfmakeraw(&mut mode);
            assert_eq!(libc::tcsetattr(slave.as_raw_fd(), libc::TCSANOW, &mode), 0);
        }
        // SAFETY: fcntl on a descriptor open for the call.
        unsafe {
            let flags = libc::fcntl(master.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(master.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd()))
            .expect("the slave's path")
            .to_string_lossy()
            .into_owned();
        let dev = slave.metadata().expect("the slave's metadata").rdev();
        let lock = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .expect("open the slave again");
        Terminal {
            master,
            slave,
            path,
            dev,
            lock,
        }
    }

    /// Everything written to the terminal so far that was not read.
    fn written(&mut self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.master.read(&mut buf) {
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        out
    }

    /// The person types `bytes` on the terminal.
    fn types(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("typed on the terminal");
    }

    /// What was typed and is still there for the terminal's reader, taken
    /// once it all came (`len` bytes).
    fn unread(&mut self, len: usize) -> Vec<u8> {
        wait_for("the keys on the terminal", || {
            let mut count: libc::c_int = 0;
            // SAFETY: FIONREAD writes one int, from a valid descriptor.
            let ok = unsafe { libc::ioctl(self.slave.as_raw_fd(), libc::FIONREAD, &mut count) };
            (ok == 0 && usize::try_from(count).is_ok_and(|n| n >= len)).then_some(())
        });
        let mut bytes = vec![0u8; len];
        self.slave
            .read_exact(&mut bytes)
            .expect("read the terminal");
        bytes
    }

    /// Whatever the launcher drew on the terminal, once it drew anything.
    fn drawn(&mut self) -> Vec<u8> {
        wait_for("an echo drawn on the terminal", || {
            let bytes = self.written();
            (!bytes.is_empty()).then_some(bytes)
        })
    }

    /// The view holds `rows` (`take`) or lets go of them.
    fn hold(&self, rows: Rows, take: bool) {
        if take {
            assert!(tty_turns::take(self.lock.as_fd(), rows, true));
        } else {
            tty_turns::give(self.lock.as_fd(), rows);
        }
    }
}

/// A view speaking the attach protocol, its terminal lent.
struct View {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    screen: Snapshot,
}

/// How an echo reached the view.
#[derive(Debug, PartialEq)]
enum Came {
    Drawn,
    Rows,
}

impl View {
    fn attach(host: &Host, id: &str, tty: &Terminal) -> View {
        View::attach_as(host, id, tty, &Hello::new(Role::View))
    }

    fn attach_as(host: &Host, id: &str, tty: &Terminal, hello: &Hello) -> View {
        let lent = ViewTty {
            path: tty.path.clone(),
            dev: tty.dev,
        };
        let (reader, writer, screen) = raw_view_lending(host, id, hello, (COLS, ROWS), Some(lent));
        View {
            writer,
            reader,
            screen,
        }
    }

    /// Takes the terminal's rows back as `tickloop attach` does: says it
    /// wants them, and asks for them when the launcher kept some.
    fn take_rows(&mut self, tty: &Terminal) {
        tty.hold(Rows::WANTED, true);
        if !tty_turns::take(tty.lock.as_fd(), Rows::ALL, false) {
            self.send(r#"{"event":"take_rows"}"#);
            tty.hold(Rows::ALL, true);
        }
    }

    /// Lends the terminal's rows again.
    fn lend_rows(&mut self, tty: &Terminal) {
        tty.hold(Rows::ALL, false);
        tty.hold(Rows::WANTED, false);
    }

    /// Takes in the launcher's lines until the screen has the view's size
    /// and bash's prompt on it.
    fn at_its_size(&mut self) {
        let mut line = String::new();
        while (self.screen.cols, self.screen.rows) != (COLS, ROWS) {
            line.clear();
            let n = self.reader.read_line(&mut line).expect("a line");
            assert!(n > 0, "the launcher hung up");
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::Snapshot(s)) => self.screen = s,
                Ok(ToView::Rows(rows) | ToView::Drawn { rows, .. }) => {
                    self.screen.apply(rows).expect("rows that apply");
                }
                _ => {}
            }
        }
        self.until("");
    }

    /// Whether the launcher sent nothing that was not read yet.
    fn nothing_came(&mut self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let mut waiting: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int, from a valid descriptor.
        let ok = unsafe {
            libc::ioctl(
                self.reader.get_ref().as_raw_fd(),
                libc::FIONREAD,
                &mut waiting,
            )
        };
        ok == 0 && waiting == 0
    }

    fn send(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the launcher");
    }

    /// Takes in the launcher's lines until it gives the keys back: the
    /// lending's number and what came with them.
    fn keys_back(&mut self) -> (u64, Vec<u8>) {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .reader
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("waiting for the keys back: {e}"));
            assert!(n > 0, "the launcher hung up before giving the keys back");
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::KeysBack { lend, bytes }) => return (lend, bytes),
                Ok(ToView::Rows(rows) | ToView::Drawn { rows, .. }) => {
                    self.screen.apply(rows).expect("rows that apply");
                }
                Ok(_) => {}
                Err(e) => panic!("not a message ({e}): {line}"),
            }
        }
    }

    fn key(&mut self, c: char) {
        self.writer
            .write_all(format!(r#"{{"event":"key","key":{{"char":"{c}"}}}}"#).as_bytes())
            .and_then(|()| self.writer.write_all(b"\n"))
            .expect("write to the launcher");
    }

    /// Takes in the launcher's lines until the prompt's row shows `typed`
    /// after `$ `, the cursor after it; how the last change came.
    fn until(&mut self, typed: &str) -> Came {
        let mut came = Came::Rows;
        let mut line = String::new();
        let want = format!("$ {typed}");
        while !(self.cursor_row() == want.trim_end()
            && usize::from(self.screen.cursor.x) == want.len())
        {
            line.clear();
            let n = self
                .reader
                .read_line(&mut line)
                .unwrap_or_else(|e| panic!("waiting for {want:?}: {e}; {:?}", self.cursor_row()));
            assert!(n > 0, "the launcher hung up waiting for {want:?}");
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::Snapshot(s)) => (self.screen, came) = (s, Came::Rows),
                Ok(ToView::Rows(rows)) => {
                    self.screen.apply(rows).expect("rows that apply");
                    came = Came::Rows;
                }
                Ok(ToView::Drawn { rows, unwritten }) => {
                    assert!(unwritten.is_empty(), "a PTY nobody fills took it all");
                    self.screen.apply(rows).expect("drawn rows that apply");
                    came = Came::Drawn;
                }
                Ok(_) => {}
                Err(e) => panic!("not a message ({e}): {line}"),
            }
        }
        came
    }

    fn cursor_row(&self) -> String {
        let row = usize::from(self.screen.cursor.y);
        self.screen.lines[row].text().trim_end().to_string()
    }
}

/// `screen` as a terminal would show it after the view drew it: its rows'
/// text, the cursor put where it is.
fn drawn_by_the_view(screen: &Snapshot) -> Emulator {
    let (rows, cols) = (usize::from(screen.rows), usize::from(screen.cols));
    let mut term = Emulator::new(rows, cols, 0, Box::new(std::io::sink()));
    let mut bytes = String::from("\x1b[H\x1b[2J");
    for (row, line) in screen.lines.iter().enumerate() {
        bytes.push_str(&format!("\x1b[{};1H{}", row + 1, line.text()));
    }
    bytes.push_str(&format!(
        "\x1b[{};{}H",
        screen.cursor.y + 1,
        screen.cursor.x + 1
    ));
    term.feed(bytes.as_bytes());
    term
}

fn rows_of(screen: &Snapshot) -> Vec<String> {
    screen
        .lines
        .iter()
        .map(|l| l.text().trim_end().to_string())
        .collect()
}

/// A bash whose prompt is `$ ` and whose first row shows it.
fn bash_at_its_prompt(host: &Host) -> String {
    let id = host.open_bash("drawn");
    host.wait_screen(&id, "$");
    id
}

#[test]
fn an_echo_drawn_on_the_lent_terminal_shows_what_the_view_was_told() {
    let host = Host::new().with_env(vec![("PS1".into(), "$ ".into())]);
    let id = bash_at_its_prompt(&host);
    let mut tty = Terminal::new();
    let mut view = View::attach(&host, &id, &tty);
    // What came after the first screen (bash at the view's size) read:
    // the launcher draws only for a view that read all it was sent.
    view.at_its_size();
    let mut terminal = drawn_by_the_view(&view.screen);

    let typed = "echo drawn";
    for c in typed.chars() {
        view.key(c);
        terminal.feed(&tty.drawn());
    }
    // Rubbed out: the cell is covered with a blank.
    view.writer
        .write_all(b"{\"event\":\"key\",\"key\":\"backspace\"}\n")
        .expect("write");
    terminal.feed(&tty.drawn());
    // Eleven echoes drawn, and the view was not woken by one: it is told
    // when it takes its rows back, all at once.
    assert!(view.nothing_came(), "the view was sent a line");
    view.take_rows(&tty);
    assert_eq!(view.until("echo draw"), Came::Drawn);

    let shown = terminal.snapshot();
    assert_eq!(
        rows_of(&shown),
        rows_of(&view.screen),
        "the terminal after the launcher drew on it, and the view's screen"
    );
    assert_eq!(
        (shown.cursor.x, shown.cursor.y),
        (view.screen.cursor.x, view.screen.cursor.y)
    );
}

#[test]
fn while_the_view_holds_its_terminal_the_echo_comes_as_rows_and_nothing_is_drawn() {
    let host = Host::new().with_env(vec![("PS1".into(), "$ ".into())]);
    let id = bash_at_its_prompt(&host);
    let mut tty = Terminal::new();
    let mut view = View::attach(&host, &id, &tty);

    view.take_rows(&tty);
    for (i, c) in "ec".char_indices() {
        view.key(c);
        assert_eq!(view.until(&"ec"[..=i]), Came::Rows, "echo of {c:?}");
    }
    assert_eq!(tty.written(), b"", "drawn on a terminal the view held");

    // A note on the last row: the view keeps that row alone, and the
    // echo on the prompt's row is drawn.
    let last = view.screen.rows - 1;
    tty.hold(Rows::above(last), false);
    tty.hold(Rows::WANTED, false);
    view.key('h');
    let written = tty.drawn();
    assert!(
        String::from_utf8_lossy(&written).contains('h'),
        "the echo on the terminal: {written:?}"
    );
    let last_row = format!("\x1b[{};", last + 1);
    assert!(
        !String::from_utf8_lossy(&written).contains(&last_row),
        "drawn on the row the view kept: {written:?}"
    );
    view.take_rows(&tty);
    assert_eq!(view.until("ech"), Came::Drawn);

    // The view lets go of every row: drawn.
    view.lend_rows(&tty);
    view.key('o');
    tty.drawn();
    view.take_rows(&tty);
    assert_eq!(view.until("echo"), Came::Drawn);

    // The view wants its rows (it holds the lock that says so) but has
    // not taken them: nothing is drawn; what was drawn is told first, then
    // the echo comes as rows.
    view.lend_rows(&tty);
    view.key(' ');
    tty.drawn();
    tty.hold(Rows::WANTED, true);
    view.key('x');
    assert_eq!(view.until("echo x"), Came::Rows);
    assert_eq!(tty.written(), b"", "drawn while the view wanted its rows");
}

/// The launcher reads the keys a view lent: what is typed as it is
/// reaches bash, and the keys come back from the first byte that is not
/// (an arrow key, the prefix), or when the view asks; once they are back,
/// or once the view took their lock to leave, a key typed stays on the
/// terminal for its own reader.
#[test]
fn lent_keys_are_read_by_the_launcher_until_they_come_back() {
    let host = Host::new().with_env(vec![("PS1".into(), "$ ".into())]);
    let id = bash_at_its_prompt(&host);
    let mut tty = Terminal::new();
    let mut view = View::attach(&host, &id, &tty);
    // The echoes come as rows: the view holds its rows.
    view.take_rows(&tty);
    // The view's keys: held, then lent (let go first, then said).
    tty.hold(Rows::KEYS, true);
    tty.hold(Rows::KEYS, false);
    view.send(r#"{"event":"lend_keys","lend":1,"prefix":28}"#);
    tty.types(b"echo lent");
    view.until("echo lent");

    // An arrow key comes back, with what follows it; the view reads its
    // terminal again, and a key typed now is there for it.
    tty.types(b"\x1b[Dx");
    assert_eq!(view.keys_back(), (1, b"\x1b[Dx".to_vec()));
    tty.hold(Rows::KEYS, true);
    tty.types(b"y");
    assert_eq!(tty.unread(1), b"y");

    // Lent again: typed up to the prefix key, which comes back.
    tty.hold(Rows::KEYS, false);
    view.send(r#"{"event":"lend_keys","lend":2,"prefix":28}"#);
    tty.types(b" ab\x1cd");
    assert_eq!(view.keys_back(), (2, b"\x1cd".to_vec()));
    view.until("echo lent ab");

    // Asked back: given back with nothing.
    view.send(r#"{"event":"lend_keys","lend":3,"prefix":28}"#);
    view.send(r#"{"event":"take_keys","lend":3}"#);
    assert_eq!(view.keys_back(), (3, Vec::new()));

    // Lent, then the view leaves: its socket shut, the keys' lock taken
    // (as `tickloop attach` does before it gives its terminal back): a key
    // typed after is the terminal's next reader's.
    view.send(r#"{"event":"lend_keys","lend":4,"prefix":28}"#);
    tty.types(b"c");
    view.until("echo lent abc");
    tty.hold(Rows::KEYS, true);
    view.writer
        .shutdown(std::net::Shutdown::Both)
        .expect("the view hangs up");
    tty.types(b"z");
    assert_eq!(tty.unread(1), b"z");
    let screen = host.screen(&id);
    assert!(
        screen.contains("$ echo lent abc") && !screen.contains("abcz"),
        "{screen}"
    );
}

/// An agent's view that offers its terminal's keys gets them back at once,
/// and nothing typed on that terminal is read.
#[test]
fn an_agents_view_lends_no_keys() {
    use tickloop_proto::wire::{AgentHost, ClientKind};
    let host = Host::new().with_env(vec![("PS1".into(), "$ ".into())]);
    let id = bash_at_its_prompt(&host);
    let mut tty = Terminal::new();
    let claude = Hello::view(ClientKind::AgentCli(AgentHost::ClaudeCode));
    let mut view = View::attach_as(&host, &id, &tty, &claude);
    view.send(r#"{"event":"lend_keys","lend":1,"prefix":28}"#);
    assert_eq!(view.keys_back(), (1, Vec::new()));
    tty.types(b"ls");
    assert_eq!(tty.unread(2), b"ls");
    assert!(!host.screen(&id).contains("$ ls"));
}
