//! A real terminal made by `script` (util-linux): a command runs in a pty
//! (`script -qefc LINE /dev/null`), as an agent's shell tool may run a
//! full-screen command; keys are written to the terminal, and what it
//! shows is read back through Tickloop's own screen keeper
//! (`launcher::emulator`, the emulator every Tick's screen goes through).
//!
//! The size is set with `stty` before the command starts (`script` gives
//! a pty of its own terminal's size, and stdin here is a pipe). The
//! process is killed on drop when it still runs.

use super::{wait_for, Host};
use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};

/// One command in a `script` terminal.
pub struct ScriptTerm {
    child: Child,
    stdin: Option<ChildStdin>,
    output: Arc<Mutex<Vec<u8>>>,
    /// Reads the terminal's output until script ends.
    reader: Option<std::thread::JoinHandle<()>>,
    cols: usize,
    rows: usize,
}

impl ScriptTerm {
    /// Runs `command` (a `sh -c` line) in a `cols`x`rows` terminal, with the
    /// host's environment and `env` added (an agent host's markers).
    pub fn start(host: &Host, env: &[(&str, &str)], cols: u16, rows: u16, command: &str) -> Self {
        let line = format!("stty cols {cols} rows {rows}; {command}");
        let mut cmd = Command::new("script");
        cmd.args(["-qefc", &line, "/dev/null"]);
        // The host's environment: what it sets, and what it takes out (the
        // agent markers of the test's own environment).
        for (key, value) in host.command(&[]).get_envs() {
            match value {
                Some(value) => cmd.env(key, value),
                None => cmd.env_remove(key),
            };
        }
        cmd.envs(env.iter().copied())
            .current_dir(host.scratch())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("starting script");
        let mut stdout = child.stdout.take().expect("script's stdout");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut all) = sink.lock() {
                    all.extend_from_slice(&buf[..n]);
                }
            }
        });
        ScriptTerm {
            stdin: child.stdin.take(),
            child,
            output,
            reader: Some(reader),
            cols: usize::from(cols),
            rows: usize::from(rows),
        }
    }

    /// What the terminal shows now, one line a row.
    pub fn screen(&self) -> String {
        let bytes = self.output.lock().map(|o| o.clone()).unwrap_or_default();
        let mut screen = launcher::emulator::Emulator::new(
            self.rows,
            self.cols,
            1000,
            Box::new(std::io::sink()),
        );
        screen.feed(&bytes);
        let text = screen.text(1000);
        let mut lines = text.history;
        lines.extend(text.lines);
        lines.join("\n")
    }

    /// Every byte the command wrote to the terminal so far, as it wrote
    /// them (escape sequences and all).
    pub fn bytes(&self) -> Vec<u8> {
        self.output.lock().map(|o| o.clone()).unwrap_or_default()
    }

    /// Waits until `found` finds something in the bytes written so far.
    pub fn wait_bytes<T>(&self, what: &str, mut found: impl FnMut(&[u8]) -> Option<T>) -> T {
        super::wait_for(what, || found(&self.bytes()))
    }

    /// Waits until the terminal shows `text`; the screen then.
    pub fn wait_text(&self, text: &str) -> String {
        super::wait_shown("the script terminal", text, || self.screen())
    }

    /// Types `text` into the terminal (as keys: `\r` is Enter).
    pub fn type_text(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("the terminal's input is open");
        stdin
            .write_all(text.as_bytes())
            .expect("typing into script");
        stdin.flush().expect("typing into script");
    }

    /// Waits for the command to end; its exit code and the screen.
    pub fn finish(mut self) -> (i32, String) {
        let status = wait_for("the command in the script terminal to end", || {
            self.child.try_wait().expect("waiting for script")
        });
        // Everything script wrote: its stdout ends once it has exited.
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let screen = self.screen();
        (status.code().unwrap_or(-1), screen)
    }
}

impl Drop for ScriptTerm {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
