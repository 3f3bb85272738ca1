//! The view's own terminal colours, asked at attach (OSC 10 and 11, with a
//! device-attributes query after them, which every terminal answers, so a
//! terminal that does not know OSC 10/11 costs no timeout). The launcher
//! answers the Tick's colour queries with the latest view's colours, so a
//! program picks its light or dark scheme from the person's terminal.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long the view waits for its terminal's answers at most.
const ANSWER_WAIT: Duration = Duration::from_millis(300);

/// Foreground and background as `#rrggbb`, when the terminal said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TermColors {
    pub fg: Option<String>,
    pub bg: Option<String>,
}

/// Asks the terminal on `/dev/tty` for its colours. Puts the terminal in
/// raw mode for the question and back as it was; `None` fields when it did
/// not answer (or there is no terminal).
pub fn query() -> TermColors {
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return TermColors::default();
    };
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data, filled by tcgetattr before use.
    let mut saved: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the whole function; the pointer is valid.
    if unsafe { libc::tcgetattr(fd, &mut saved) } != 0 {
        return TermColors::default();
    }
    let mut raw = saved;
    // SAFETY: cfmakeraw only edits the struct it is given.
    unsafe { libc::cfmakeraw(&mut raw) };
    // SAFETY: as above; the saved settings are put back below.
    if unsafe { libc::tcsetattr(fd, libc::TCSANOW, &raw) } != 0 {
        return TermColors::default();
    }
    let answers = ask(&mut tty);
    // SAFETY: as above.
    unsafe { libc::tcsetattr(fd, libc::TCSANOW, &saved) };
    parse(&answers)
}

/// Writes the questions and reads until the device attributes answer (or
/// the wait is over).
fn ask(tty: &mut std::fs::File) -> Vec<u8> {
    if tty
        .write_all(b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b[c")
        .and_then(|()| tty.flush())
        .is_err()
    {
        return Vec::new();
    }
    let deadline = Instant::now() + ANSWER_WAIT;
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    while !answered_attributes(&got) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let mut poll = libc::pollfd {
            fd: tty.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = libc::c_int::try_from(left.as_millis()).unwrap_or(libc::c_int::MAX);
        // SAFETY: one valid pollfd for the duration of the call.
        if unsafe { libc::poll(&mut poll, 1, ms) } <= 0 {
            break;
        }
        match tty.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    got
}

/// Whether `got` holds a device attributes answer (`ESC [ ? ... c`).
fn answered_attributes(got: &[u8]) -> bool {
    got.windows(3)
        .position(|w| w == b"\x1b[?")
        .is_some_and(|at| got[at..].contains(&b'c'))
}

/// The colours in the terminal's answers.
pub fn parse(answers: &[u8]) -> TermColors {
    let text = String::from_utf8_lossy(answers);
    let find = |code: &str| {
        let start = text.find(&format!("\x1b]{code};rgb:"))? + code.len() + 7;
        let rest = &text[start..];
        let end = rest.find(['\x1b', '\x07'])?;
        rgb_to_hex(&rest[..end])
    };
    TermColors {
        fg: find("10"),
        bg: find("11"),
    }
}

/// `rrrr/gggg/bbbb` (1 to 4 hex digits a channel) as `#rrggbb`.
fn rgb_to_hex(spec: &str) -> Option<String> {
    let mut out = String::from("#");
    let parts: Vec<&str> = spec.split('/').collect();
    if parts.len() != 3 {
        return None;
    }
    for part in parts {
        if part.is_empty() || part.len() > 4 {
            return None;
        }
        let value = u32::from_str_radix(part, 16).ok()?;
        let max = (1u32 << (4 * part.len())) - 1;
        out.push_str(&format!("{:02x}", value * 255 / max));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_xterm_style_answers() {
        let got =
            parse(b"\x1b]10;rgb:1010/1010/1010\x1b\\\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?1;2c");
        assert_eq!(got.fg.as_deref(), Some("#101010"));
        assert_eq!(got.bg.as_deref(), Some("#ffffff"));
        let short = parse(b"\x1b]11;rgb:f/8/0\x1b\\");
        assert_eq!(short.bg.as_deref(), Some("#ff8800"));
        assert_eq!(short.fg, None);
        assert_eq!(parse(b"\x1b[?1;2c"), TermColors::default());
        assert_eq!(parse(b"\x1b]11;rgb:zz/00/00\x1b\\").bg, None);
        assert!(answered_attributes(b"x\x1b[?62;22c"));
        assert!(!answered_attributes(b"\x1b]11;rgb:0/0/0\x1b\\"));
    }
}
