//! The user's terminal, taken by a view and given back: its capabilities
//! as termwiz reads them, and [`RestoreGuard`], which puts back on every exit
//! path (return, panic, signal) what the view changed: modes reset, cursor
//! shown, main screen back, the saved termios restored.

use crate::error::AttachError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::sync::{Mutex, Once};
use termwiz::caps::{Capabilities, ProbeHints};
use tickloop_proto::attach::MouseTracking;

/// A terminal size from termwiz, as the attach protocol counts it.
pub(crate) fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// The capabilities of the terminal the view runs in.
pub(crate) fn terminal_caps() -> Result<Capabilities, AttachError> {
    // Mouse reporting is turned on only while the Tick asks for it, so the
    // user's terminal keeps its own selection otherwise.
    let hints = ProbeHints::new_from_env().mouse_reporting(Some(false));
    Capabilities::new_with_hints(hints)
        .map_err(|e| AttachError::Terminal(format!("cannot read terminal capabilities: {e}")))
}

/// The user's terminal as it was before attaching, and what the view turned
/// on, so every exit path (return, panic, signal) can put it back.
struct TtyState {
    tty: File,
    saved: libc::termios,
    mouse: MouseTracking,
    /// The view turned on its modes (bracketed paste, modifyOtherKeys):
    /// turn them off.
    modes: bool,
    /// The view took the screen (alternate screen): give it back.
    screen: bool,
}

static TTY_STATE: Mutex<Option<TtyState>> = Mutex::new(None);
static PANIC_HOOK: Once = Once::new();

/// Restores the terminal when dropped, and from the panic hook.
pub(crate) struct RestoreGuard;

impl RestoreGuard {
    pub(crate) fn install() -> Result<Self, AttachError> {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
        // SAFETY: termios is plain data; tcgetattr fills it from a valid fd.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is open for the call's duration; `saved` is valid.
        if unsafe { libc::tcgetattr(tty.as_raw_fd(), &mut saved) } != 0 {
            return Err(AttachError::Terminal(format!(
                "cannot read the terminal's settings: {}",
                std::io::Error::last_os_error()
            )));
        }
        if let Ok(mut state) = TTY_STATE.lock() {
            *state = Some(TtyState {
                tty,
                saved,
                mouse: MouseTracking::Off,
                modes: false,
                screen: false,
            });
        }
        PANIC_HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore_tty();
                previous(info);
            }));
        });
        Ok(RestoreGuard)
    }

    /// The view is about to turn on its modes: restoring turns them off,
    /// whether or not the view got as far as the alternate screen.
    pub(crate) fn set_modes(&self) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                state.modes = true;
            }
        }
    }

    /// The view entered the alternate screen: restoring leaves it.
    pub(crate) fn entered_screen(&self) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                state.screen = true;
            }
        }
    }

    /// Mirror the Tick's mouse reporting on the user's terminal.
    pub(crate) fn set_mouse(&self, mode: MouseTracking) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                let _ = state.tty.write_all(crate::render::mouse_reporting(mode));
                state.mouse = mode;
            }
        }
    }

    /// Writes bytes to the view's terminal as they are (the bell, a title,
    /// a clipboard write), between frames.
    pub(crate) fn write_raw(&self, bytes: &[u8]) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                let _ = state.tty.write_all(bytes);
                let _ = state.tty.flush();
            }
        }
    }

    pub(crate) fn restore(&self) {
        restore_tty();
    }
}

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        restore_tty();
    }
}

/// Put the user's terminal back (once); every error is ignored, the terminal
/// may be gone.
fn restore_tty() {
    // try_lock: the panic hook may run while the lock is held.
    let Ok(mut guard) = TTY_STATE.try_lock() else {
        return;
    };
    let Some(state) = guard.as_mut() else { return };
    if state.modes || state.screen {
        let reset: &[u8] = b"\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1006l\x1b[?1004l\x1b[?2004l\
            \x1b[>4;0m\x1b[0m\x1b[0 q\x1b[?25h";
        let _ = state.tty.write_all(reset);
    }
    if state.screen {
        let _ = state.tty.write_all(b"\x1b[?1049l\r");
    }
    let _ = state.tty.flush();
    // SAFETY: valid fd and a termios saved from it.
    unsafe {
        libc::tcsetattr(state.tty.as_raw_fd(), libc::TCSANOW, &state.saved);
    }
    *guard = None;
}
