//! Starting and ending one attach: the launcher dialled (its socket here,
//! or over ssh), the terminal taken (its input read with the colour answers
//! taken out, raw mode, the colour questions asked, the alternate screen),
//! the hello sent and the first snapshot read; then the [`Session`]; then
//! the teardown, the terminal given back however the session ended.

use super::note::Note;
use super::session::{Link, Session};
use super::{AttachError, AttachOptions, AttachOutcome, SessionEnd};
use crate::launcher_link::{dial, start_view, view_hello, Start};
use crate::tty::{clamp, terminal_caps, RestoreGuard};
use std::fs::OpenOptions;
use std::os::unix::net::UnixStream;
use std::sync::{mpsc, Arc, Mutex};
use termwiz::terminal::{Terminal, TerminalWaker, UnixTerminal};
use tickloop_proto::attach::ViewEvent;

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
    // What the helper threads tell the drawing loop, and what goes to the
    // launcher. The terminal's colours go straight onto the events, ahead of
    // every key typed after their answers.
    let (note_tx, notes) = mpsc::channel::<Note>();
    let (event_tx, events) = mpsc::channel::<ViewEvent>();
    let colors_tx = event_tx.clone();
    let gone_tx = note_tx.clone();
    let gone_waker: Arc<Mutex<Option<TerminalWaker>>> = Arc::default();
    let waker_slot = gone_waker.clone();
    let input = crate::colors::TtyInput::start(
        tty.try_clone()
            .map_err(|e| AttachError::Terminal(format!("cannot read /dev/tty: {e}")))?,
        move |colors| {
            let _ = colors_tx.send(ViewEvent::Colors(colors));
        },
        move || {
            let _ = gone_tx.send(Note::TerminalGone);
            if let Some(waker) = waker_slot.lock().ok().and_then(|w| w.clone()) {
                let _ = waker.wake();
            }
        },
    )
    .map_err(|e| AttachError::Terminal(format!("cannot read the terminal: {e}")))?;
    // termwiz reads the terminal's input with the colour answers taken out.
    let mut term = UnixTerminal::new_with(caps.clone(), input.keys(), &tty)
        .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    if let Ok(mut slot) = gone_waker.lock() {
        *slot = Some(term.waker());
    }
    let size = term
        .get_screen_size()
        .map_err(|e| AttachError::Terminal(format!("cannot read the terminal's size: {e}")))?;
    let (cols, rows) = (clamp(size.cols), clamp(size.rows));

    let guard = RestoreGuard::install()?;
    term.set_raw_mode()
        .map_err(|e| AttachError::Terminal(format!("cannot enter raw mode: {e}")))?;
    // Asked in raw mode (the answers must not be echoed), never waited for.
    guard.write_raw(&crate::colors::questions());

    let hello = view_hello(&caps, (cols, rows), "attach");
    let (reader, writer, snapshot) = match start_view(stream, &hello)? {
        (reader, writer, Start::Snapshot(s)) => (reader, writer, s),
        (_, _, Start::Ended(reason)) => {
            return Ok(SessionEnd::Done(AttachOutcome::Ended { reason }))
        }
    };

    term.enter_alternate_screen()
        .map_err(|e| AttachError::Terminal(e.to_string()))?;
    guard.entered_screen();

    let link = Link {
        reader,
        writer,
        notes,
        note_tx,
        events,
        event_tx,
    };
    let outcome = Session::start(&mut term, &guard, link, snapshot, (cols, rows), opts)
        .and_then(Session::run);
    // termwiz's own teardown unwraps its writes, which fail when the terminal
    // is gone; the guard restores everything it would, ignoring errors.
    guard.restore();
    std::mem::forget(term);
    // Stops reading the terminal before anything else reads it.
    drop(input);
    outcome
}

/// A connection to the launcher of `opts`, hello exchanged: its socket
/// here, or over ssh through the relay on the instance's machine.
fn open_link(
    opts: &AttachOptions,
) -> Result<(UnixStream, Option<tickloop_client::ssh::SshLink>), AttachError> {
    dial(&opts.socket, opts.ssh.as_ref(), &opts.instance)
}
