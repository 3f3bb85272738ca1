//! The attach view's terminal as it draws on it: termwiz's terminfo
//! renderer writing into a buffer, the buffer written to the terminal in
//! one write when the renderer is done with a frame (it flushes at its
//! end), and nothing more.
//!
//! termwiz's `UnixTerminal` also builds an input parser (a keymap of
//! thousands of sequences), hooks SIGWINCH and waits at every flush until
//! the terminal has taken the output (`tcdrain`). The attach view reads its
//! terminal and hears its signals itself, so all of that was paid at every
//! attach before the first frame, and the wait at every frame (issue 51:
//! an attach with no wait).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use termwiz::caps::Capabilities;
use termwiz::render::terminfo::TerminfoRenderer;
use termwiz::render::RenderTty;
use termwiz::surface::Change;

/// The view's terminal, for drawing.
pub(crate) struct TtyOut {
    out: Pending,
    renderer: TerminfoRenderer,
}

/// What was drawn since the last flush, and the terminal it goes to.
struct Pending {
    tty: File,
    bytes: Vec<u8>,
}

/// Past this many bytes, what is pending is written before more is added.
const WRITE_AT: usize = 64 * 1024;

impl TtyOut {
    /// Draws on `tty` (its own descriptor is kept) as `caps` says. The
    /// terminal is made blocking, as termwiz's own terminal makes it: a
    /// terminal left non-blocking by another program would turn a slow
    /// terminal's full buffer into a failed frame.
    pub(crate) fn new(caps: Capabilities, tty: &File) -> io::Result<Self> {
        let tty = tty.try_clone()?;
        let fd = tty.as_raw_fd();
        // SAFETY: fcntl on a descriptor open for the calls' duration.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(TtyOut {
            out: Pending {
                tty,
                bytes: Vec::new(),
            },
            renderer: TerminfoRenderer::new(caps),
        })
    }

    /// The terminal's size in cells (columns, rows).
    pub(crate) fn size(&self) -> io::Result<(usize, usize)> {
        self.out.size()
    }

    /// Raw mode (`cfmakeraw`, what was waiting to be read dropped), then
    /// bracketed paste and xterm's modifyOtherKeys level 2, as termwiz's own
    /// terminal sets them; [`crate::tty::RestoreGuard`] puts both back.
    pub(crate) fn set_raw_mode(&mut self, bracketed_paste: bool) -> io::Result<()> {
        let fd = self.out.tty.as_raw_fd();
        // SAFETY: termios is plain data; tcgetattr fills it from a valid fd.
        let mut raw: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is open for the calls' duration; `raw` is valid.
        unsafe {
            if libc::tcgetattr(fd, &mut raw) != 0 {
                return Err(io::Error::last_os_error());
            }
            libc::cfmakeraw(&mut raw);
            if libc::tcsetattr(fd, libc::TCSAFLUSH, &raw) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        if bracketed_paste {
            self.out.bytes.extend_from_slice(b"\x1b[?2004h");
        }
        self.out.bytes.extend_from_slice(b"\x1b[>4;2m");
        self.flush()
    }

    /// The alternate screen, cleared.
    pub(crate) fn enter_alternate_screen(&mut self) -> io::Result<()> {
        self.out.bytes.extend_from_slice(b"\x1b[?1049h");
        Ok(())
    }

    /// Draws `changes`, written to the terminal in one write.
    pub(crate) fn render(&mut self, changes: &[Change]) -> io::Result<()> {
        self.renderer
            .render_to(changes, &mut self.out)
            .map_err(|e| io::Error::other(e.to_string()))
    }

    /// Puts the terminal's attributes at their defaults (written only when
    /// they are not), so that someone else may draw on it and leave them
    /// so: the renderer remembers the last it set.
    pub(crate) fn pen_at_defaults(&mut self) -> io::Result<()> {
        self.render(&[
            Change::AllAttributes(Default::default()),
            Change::Text(String::new()),
        ])?;
        self.flush()
    }

    /// Writes whatever is still pending. It does not wait for the terminal
    /// to take it.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.write_pending()
    }
}

impl Pending {
    fn size(&self) -> io::Result<(usize, usize)> {
        // SAFETY: winsize is plain data, filled by the ioctl from a valid fd.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::ioctl(self.tty.as_raw_fd(), libc::TIOCGWINSZ, &mut size) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((usize::from(size.ws_col), usize::from(size.ws_row)))
    }

    fn write_pending(&mut self) -> io::Result<()> {
        if !self.bytes.is_empty() {
            let written = self.tty.write_all(&self.bytes);
            self.bytes.clear();
            written?;
        }
        Ok(())
    }
}

impl Write for Pending {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.bytes.len() + buf.len() > WRITE_AT {
            self.write_pending()?;
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_pending()
    }
}

impl RenderTty for Pending {
    fn get_size_in_cells(&mut self) -> termwiz::Result<(usize, usize)> {
        self.size().map_err(termwiz::Error::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What it draws is what termwiz's renderer makes of the changes, in
    /// one write.
    #[test]
    fn draws_what_the_renderer_makes_in_one_write() {
        let (mut far, near) = std::os::unix::net::UnixStream::pair().expect("pair");
        let near = File::from(std::os::fd::OwnedFd::from(near));
        let caps = Capabilities::new_with_hints(
            termwiz::caps::ProbeHints::default()
                .term(Some("xterm-256color".into()))
                .colorterm(None),
        )
        .expect("caps");
        let mut out = TtyOut::new(caps.clone(), &near).expect("out");
        let changes = [
            Change::Text("hello".into()),
            Change::CursorPosition {
                x: termwiz::surface::Position::Absolute(2),
                y: termwiz::surface::Position::Absolute(1),
            },
        ];
        out.render(&changes).expect("render");
        out.flush().expect("flush");
        let mut want = Vec::new();
        TerminfoRenderer::new(caps)
            .render_to(&changes, &mut Collect(&mut want))
            .expect("reference");
        far.set_nonblocking(true).expect("nonblocking");
        let mut got = [0u8; 4096];
        let n = io::Read::read(&mut far, &mut got).expect("one write");
        assert_eq!(
            String::from_utf8_lossy(&got[..n]),
            String::from_utf8_lossy(&want)
        );
        assert!(String::from_utf8_lossy(&got[..n]).starts_with("hello"));
    }

    /// A renderer's output kept in memory.
    struct Collect<'a>(&'a mut Vec<u8>);

    impl Write for Collect<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl RenderTty for Collect<'_> {
        fn get_size_in_cells(&mut self) -> termwiz::Result<(usize, usize)> {
            Ok((80, 24))
        }
    }
}
