//! Starting and ending one attach: the launcher dialled (its socket here,
//! or over ssh), the hellos sent as soon as the terminal's size is known,
//! the terminal taken meanwhile (raw mode, the colour questions asked, the
//! signals the loop hears), the first snapshot read, the alternate screen;
//! then the [`Session`] and its one loop; then the teardown, the terminal
//! given back however the session ended.

use super::lend::TtyLend;
use super::session::{Session, Signals, TtyIn};
use super::{AttachError, AttachOptions, AttachOutcome, SessionEnd};
use crate::launcher_link::{dial, read_start, send_hellos, view_hello, Dial, LineLink, Start};
use crate::render::InputReader;
use crate::tty::{clamp, terminal_caps, RestoreGuard};
use crate::tty_out::TtyOut;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::Instant;

/// One attach, from dialling the launcher to giving the terminal back.
pub(super) fn run_session(opts: &AttachOptions) -> Result<SessionEnd, AttachError> {
    // The ssh process (when remote) lives as long as this session.
    let (stream, _ssh) = open_link(opts)?;
    let caps = terminal_caps()?;
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    // Drawn through the renderer alone; the session's loop reads the
    // terminal and hears its signals itself.
    let mut term = TtyOut::new(caps.clone(), &tty)
        .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    let size = term
        .size()
        .map_err(|e| AttachError::Terminal(format!("cannot read the terminal's size: {e}")))?;
    let (cols, rows) = (clamp(size.0), clamp(size.1));
    // The hellos go as soon as the size is known, both at once: the
    // launcher takes its snapshot while this terminal is set up (signals,
    // raw mode, the questions asked of it).
    // A local view lends its terminal for echoes (over ssh the launcher's
    // machine has another one of that name).
    let lend = opts.ssh.is_none().then(|| TtyLend::offer(&tty)).flatten();
    let mut hello = view_hello(&caps, (cols, rows), "attach");
    hello.tty = lend.as_ref().map(|(_, tty)| tty.clone());
    let lend = lend.map(|(lend, _)| lend);
    let writer = send_hellos(&stream, opts.kind, &hello)?;

    let signals = Signals::register()?;
    let guard = RestoreGuard::install()?;
    guard.set_modes();
    term.set_raw_mode(caps.bracketed_paste())
        .map_err(|e| AttachError::Terminal(format!("cannot enter raw mode: {e}")))?;
    // Asked in raw mode (the answers must not be echoed), never waited for:
    // the loop takes the answers out of the input as they come. What the
    // terminal draws first, then the colours, which end with the device
    // attributes query that ends both.
    let cell_px = crate::graphics::probe::winsize_cell_px(tty.as_raw_fd());
    guard.write_raw(
        &[
            crate::graphics::probe::questions(),
            crate::colors::questions(),
        ]
        .concat(),
    );
    let now = Instant::now();
    let input = TtyIn {
        tty,
        graphics: crate::graphics::probe::GraphicsAnswers::asked(now, cell_px),
        answers: crate::colors::TtyAnswers::asked(now),
        keys: InputReader::default(),
        signals,
        buf: vec![0; super::session::TTY_READ].into_boxed_slice(),
        lend,
        lent_keys: super::lend::KeysLend::new(),
    };

    let (reader, _writer, snapshot) = match read_start(stream, writer)? {
        (reader, writer, Start::Snapshot(s)) => (reader, writer, s),
        (_, _, Start::Ended(reason)) => {
            return Ok(SessionEnd::Done(AttachOutcome::Ended { reason }))
        }
    };
    let link = LineLink::new(reader)?;

    term.enter_alternate_screen()
        .map_err(|e| AttachError::Terminal(e.to_string()))?;
    guard.entered_screen();

    let outcome = Session::start(&mut term, &guard, link, input, snapshot, (cols, rows), opts)
        .and_then(Session::run);
    // The guard restores everything the view changed, ignoring errors (the
    // terminal may be gone).
    guard.restore();
    outcome
}

/// A connection to the launcher of `opts`, nothing sent yet: its socket
/// here, or over ssh through the relay on the instance's machine.
fn open_link(
    opts: &AttachOptions,
) -> Result<(UnixStream, Option<tickloop_client::ssh::SshLink>), AttachError> {
    dial(&Dial {
        socket: opts.socket.clone(),
        ssh: opts.ssh.clone(),
        instance: opts.instance.clone(),
        kind: opts.kind,
    })
}
