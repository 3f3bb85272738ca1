//! `tickloop web` and a real browser for the tests that drive the page
//! (tests/web.rs, tests/web_layout.rs): [`Web`], a running server, and
//! [`Browser`], Debian's Chromium driven by Playwright from PyPI through
//! `tests/web/browser.py` (in a virtual environment the test makes under
//! the target directory).

use super::python_sdk::{venv_python, PLAYWRIGHT};
use super::Host;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// Why the browser tests cannot run here, when Chromium is missing.
pub fn missing_chromium() -> Option<String> {
    chromium().is_none().then(|| {
        "no Chromium at /usr/bin/chromium (Debian: apt-get install chromium chromium-driver; \
         or set TICKLOOP_CHROMIUM)"
            .to_string()
    })
}

/// Debian's Chromium, or `TICKLOOP_CHROMIUM`.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("TICKLOOP_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    path.is_file().then_some(path)
}

/// A running `tickloop web`.
pub struct Web {
    child: Child,
    pub started: Value,
    stderr: PathBuf,
}

impl Web {
    pub fn start(host: &Host, args: &[&str]) -> Web {
        let stderr = host.scratch().join(format!("web-{}.err", args.len()));
        let mut full = vec!["web"];
        full.extend_from_slice(args);
        let mut child = host
            .command(&full)
            .stderr(std::fs::File::create(&stderr).expect("stderr file"))
            .spawn()
            .expect("start tickloop web");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let line = rx.recv_timeout(super::WAIT).unwrap_or_default();
        let started: Value = serde_json::from_str(&line).unwrap_or_else(|_| {
            panic!(
                "tickloop web did not start: {line:?}; stderr: {}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            )
        });
        Web {
            child,
            started,
            stderr,
        }
    }

    pub fn login_url(&self) -> String {
        self.started["login_url"]
            .as_str()
            .expect("login_url")
            .to_string()
    }

    pub fn url(&self) -> String {
        self.started["url"].as_str().expect("url").to_string()
    }

    pub fn addr(&self) -> String {
        self.started["listen"].as_str().expect("listen").to_string()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Web {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One Chromium with one page, driven through `tests/web/browser.py`.
pub struct Browser {
    child: Child,
    stdin: ChildStdin,
    answers: Receiver<String>,
}

impl Browser {
    pub fn start(extra: &[&str]) -> Browser {
        let python = venv_python(&[PLAYWRIGHT]);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/browser.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(chromium().expect("chromium"))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the browser driver");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Browser {
            child,
            stdin,
            answers,
        }
    }

    /// Runs one command; its value, or the driver's error.
    pub fn try_cmd(&mut self, command: Value) -> Result<Value, String> {
        writeln!(self.stdin, "{command}").expect("write to the browser driver");
        let line = self
            .answers
            .recv_timeout(Duration::from_secs(90))
            .unwrap_or_else(|_| panic!("the browser driver did not answer {command}"));
        let answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        if answer["ok"] == true {
            Ok(answer["value"].clone())
        } else {
            Err(answer["error"].as_str().unwrap_or("?").to_string())
        }
    }

    pub fn cmd(&mut self, command: Value) -> Value {
        let shown = command.to_string();
        self.try_cmd(command)
            .unwrap_or_else(|e| panic!("browser: {shown}: {e}"))
    }

    pub fn goto(&mut self, url: &str) -> Value {
        self.cmd(json!({"op": "goto", "url": url}))
    }

    /// Waits until `js` (a function's source) is truthy in the page.
    pub fn wait(&mut self, what: &str, js: &str) -> Value {
        self.try_cmd(json!({"op": "wait", "js": js, "ms": 20000}))
            .unwrap_or_else(|e| {
                let console = self.cmd(json!({"op": "console"}));
                let shot = self.failure_screenshot();
                panic!("waiting for {what}: {e}\nthe page logged: {console}\nthe page then: {shot}")
            })
    }

    /// What the page shows now, saved under the target directory
    /// (`web-failures/`) for a failed wait; its path, or why not.
    fn failure_screenshot(&mut self) -> String {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-failures");
        let _ = std::fs::create_dir_all(&dir);
        let path = dir.join(format!(
            "{}-{}.png",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or_default()
        ));
        match self.try_cmd(json!({"op": "screenshot", "path": path})) {
            Ok(_) => path.display().to_string(),
            Err(e) => format!("no screenshot: {e}"),
        }
    }

    pub fn eval(&mut self, js: &str) -> Value {
        self.cmd(json!({"op": "eval", "js": js}))
    }

    /// The text the page's terminal shows.
    pub fn terminal_text(&mut self) -> String {
        self.eval("() => { const r = document.querySelector('.xterm-rows'); return r ? r.innerText : ''; }")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Logs in with `web`'s login URL and waits for the list.
    pub fn log_in(&mut self, web: &Web) {
        let page = self.goto(&web.login_url());
        assert_eq!(page["status"], 200, "{page}");
        self.wait(
            "the list",
            "() => document.querySelector('#list tbody tr') !== null",
        );
    }

    /// Opens `id` in the page and waits until its terminal shows `text`.
    pub fn open_instance(&mut self, id: &str, text: &str) {
        self.eval(&format!("() => {{ location.hash = {}; }}", json!(id)));
        self.wait(
            &format!("{id}'s screen to show {text:?}"),
            &format!(
                "() => {{ const r = document.querySelector('.xterm-rows'); return r && r.innerText.includes({}); }}",
                json!(text)
            ),
        );
    }

    /// Types `key` into the page's terminal.
    pub fn type_key(&mut self, key: &str) {
        self.cmd(json!({"op": "focus", "selector": ".xterm-helper-textarea"}));
        self.cmd(json!({"op": "press", "key": key}));
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({"op": "quit"}));
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
