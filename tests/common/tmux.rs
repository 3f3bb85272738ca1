//! A real terminal for the view tests: a private tmux server (its own `-L`
//! socket, no config) running one command in a window of a given size, with
//! keys, pastes, resizes and screen captures.
//!
//! The server is killed on drop. The command runs under `sh -c` and the
//! shell stays (`exec sleep`) after the command, so its exit line stays
//! capturable.

use super::{tickloop_bin, wait_for, Host, MARK_VAR};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// One tmux server with one session.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    /// `tickloop attach ID` in a `cols`x`rows` window.
    pub fn attach(host: &Host, id: &str, cols: u16, rows: u16) -> Tmux {
        Tmux::start(host, cols, rows, &format!("{} attach {id}", tickloop_bin()))
    }

    /// Runs `command` (a `sh -c` line) in a `cols`x`rows` window, with the
    /// host's environment, `TERM=tmux-256color` and `COLORTERM=truecolor`.
    pub fn start(host: &Host, cols: u16, rows: u16, command: &str) -> Tmux {
        let socket = format!(
            "tlv-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let tmux = Tmux { socket };
        let runtime = host.runtime().to_string_lossy().into_owned();
        let line = format!("{command}; echo \"ATTACH-EXIT $?\"; exec sleep 100000");
        let out = tmux.raw(&[
            "-f",
            "/dev/null",
            "start-server",
            ";",
            "set-option",
            "-g",
            "default-terminal",
            "tmux-256color",
            ";",
            "new-session",
            "-d",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            "-e",
            &format!("TICKLOOP_RUNTIME_DIR={runtime}"),
            "-e",
            &format!("{MARK_VAR}={runtime}"),
            "-e",
            "COLORTERM=truecolor",
            "sh",
            "-c",
            &line,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    /// The tmux server on `-L socket` that something else started (the
    /// Herdr stand-in's panes, tests/herdr_standin/herdr); killed on drop.
    pub fn adopt(socket: &str) -> Tmux {
        Tmux {
            socket: socket.to_string(),
        }
    }

    pub fn raw(&self, args: &[&str]) -> Output {
        // The server it may start runs the person's commands.
        super::as_the_person(&mut Command::new("tmux"))
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("running tmux")
    }

    /// A tmux command's output, `None` when it failed.
    fn cmd_output(&self, args: &[&str]) -> Option<String> {
        let out = self.raw(args);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    /// A tmux command that must succeed.
    pub fn cmd(&self, args: &[&str]) -> String {
        let out = self.raw(args);
        assert!(
            out.status.success(),
            "tmux {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Keys as tmux names them (`Enter`, `C-\\`, `a`).
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.cmd(&args);
    }

    /// Text typed literally.
    pub fn type_text(&self, text: &str) {
        self.cmd(&["send-keys", "-t", "0", "-l", text]);
    }

    /// Pastes `text` the way a terminal does: bracketed when the program in
    /// the pane (the view) turned bracketed paste on.
    pub fn paste(&self, text: &str) {
        self.cmd(&["set-buffer", "-b", "tlv", "--", text]);
        // -r: keep line feeds (tmux sends CR by default).
        self.cmd(&["paste-buffer", "-p", "-r", "-d", "-b", "tlv", "-t", "0"]);
    }

    /// The pane as text, one line per row.
    pub fn capture(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-t", "0"])
    }

    /// The pane with its colours and attributes as SGR sequences.
    pub fn capture_escapes(&self) -> String {
        self.cmd(&["capture-pane", "-p", "-e", "-t", "0"])
    }

    /// Waits until the pane shows `text`; returns the capture.
    /// On a timeout the panic shows what the pane showed last.
    pub fn wait_text(&self, text: &str) -> String {
        super::wait_shown("the tmux pane", text, || self.capture())
    }

    /// Resizes the window (the view gets SIGWINCH).
    pub fn resize(&self, cols: u16, rows: u16) {
        self.cmd(&[
            "resize-window",
            "-t",
            "0",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// The pid of the pane's shell.
    pub fn shell_pid(&self) -> i32 {
        let out = self.cmd(&["display-message", "-p", "-t", "0", "#{pane_pid}"]);
        out.trim().parse().expect("a pane pid")
    }

    /// The pid of the command the pane's shell runs (the view), once it runs.
    pub fn command_pid(&self) -> i32 {
        let shell = self.shell_pid();
        wait_for("the pane's command to start", || {
            let children =
                std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
            children.split_whitespace().next()?.parse().ok()
        })
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let socket = self.cmd_output(&["display-message", "-p", "#{socket_path}"]);
        let _ = self.raw(&["kill-server"]);
        // tmux leaves its socket file behind.
        if let Some(path) = socket.filter(|p| p.contains(&self.socket)) {
            let _ = std::fs::remove_file(path);
        }
    }
}
