//! `a` in the Monitor: the terminal handed to `tickloop attach ID` (a child
//! process, so its terminal handling is the attach view's own) and taken back
//! when it detaches or the instance ends, its last word in the footer.

use super::{Monitor, MonitorError};
use crate::attach_view;
use crate::tty::RestoreGuard;
use termwiz::terminal::{Terminal, UnixTerminal};
use tickloop_proto::attach::MouseTracking;

/// A line of `tickloop attach`'s stderr without its `tickloop: ` and
/// `error: ` prefixes.
fn clean(line: &str) -> String {
    let line = line.trim();
    let line = line.strip_prefix("tickloop: ").unwrap_or(line);
    line.strip_prefix("error: ").unwrap_or(line).to_string()
}

impl Monitor {
    /// `a`: gives the terminal to `tickloop attach ID` (a child process, so
    /// its terminal handling is the attach view's own) and takes it back
    /// when it detaches or the instance ends.
    pub(super) fn attach_full_screen(
        &mut self,
        term: &mut UnixTerminal,
        guard: &RestoreGuard,
        id: &str,
    ) -> Result<(), MonitorError> {
        guard.set_mouse(MouseTracking::Off);
        self.mouse = MouseTracking::Off;
        // Leave the alternate screen through termwiz, so it knows to enter
        // it again afterwards: it writes nothing for a screen it believes
        // it is still on, and the Monitor would then draw over the shell.
        let _ = term.exit_alternate_screen();
        let _ = term.flush();
        guard.restore();
        // Its stderr (how it ended, or why it could not attach) becomes
        // the footer's message.
        let outcome = std::env::current_exe()
            .map_err(|e| format!("cannot find tickloop: {e}"))
            .and_then(|exe| {
                let (endpoint, raw) = self
                    .route(id)
                    .ok_or_else(|| format!("{id} is on no machine of this Monitor"))?;
                let mut attach = std::process::Command::new(exe);
                // An empty --host is this machine, whatever TICKLOOP_HOST says.
                let host = endpoint.host().map(|h| h.label()).unwrap_or_default();
                attach
                    .args(["--host", &host])
                    .args(["attach", &raw, "--detach-key", &self.prefix.key.name()])
                    // Its prefix `m` returns here rather than nesting a Monitor.
                    .env(attach_view::FROM_MONITOR_ENV, "1")
                    .stdout(std::process::Stdio::inherit())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .and_then(|child| child.wait_with_output())
                    .map_err(|e| format!("cannot run tickloop attach: {e}"))
            });
        // The old guard's state went with the restore: save the terminal's
        // again (the outer guard restores it at the end).
        let again = RestoreGuard::install()?;
        term.set_raw_mode()
            .map_err(|e| MonitorError::Terminal(format!("cannot enter raw mode: {e}")))?;
        term.enter_alternate_screen()
            .map_err(|e| MonitorError::Terminal(e.to_string()))?;
        again.entered_screen();
        std::mem::forget(again);
        self.message = Some(match outcome {
            Ok(out) => {
                let said = String::from_utf8_lossy(&out.stderr);
                let said = said.lines().rev().find(|l| !l.trim().is_empty());
                match (out.status.success(), said) {
                    (true, Some(line)) => format!("back from {id}: {}", clean(line)),
                    (true, None) => format!("back from {id}"),
                    (false, Some(line)) => format!("cannot attach to {id}: {}", clean(line)),
                    (false, None) => format!("tickloop attach {id} failed ({})", out.status),
                }
            }
            Err(e) => e,
        });
        let _ = self.poke.send(());
        Ok(())
    }
}
