//! The stdio server as a real process: this test runs itself as the Tick
//! (`TICKLOOP_TICK_TEST_CHILD=1`, in a new session so it has no /dev/tty).
//! A tool that `println!`s must leave stdout pure protocol and show the
//! text on the terminal (here stderr) after the warning; on stdin EOF a call
//! still running is answered before the process exits with status 0.
//! `harness = false`: libtest would print to stdout itself.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use tickloop_tick::{Describe, Tick, Tool, ToolError, Updater};

const CHILD: &str = "TICKLOOP_TICK_TEST_CHILD";

struct Loud;

impl Tick for Loud {
    fn describe(&self) -> Describe {
        Describe::new("test.loud", "Loud", "Prints to stdout.")
            .tool(Tool::query("shout", "println!s, then answers."))
            .tool(Tool::query("slow", "Answers after a while."))
    }
    fn read(&self) -> Option<Value> {
        Some(json!({"ok": true}))
    }
    fn call(&self, tool: &str, _: Value, _: &Updater) -> Result<Value, ToolError> {
        match tool {
            "shout" => {
                println!("stray text from a library");
                Ok(json!("shouted"))
            }
            "slow" => {
                std::thread::sleep(Duration::from_millis(500));
                Ok(json!("slept"))
            }
            other => Err(ToolError::unknown_tool(other)),
        }
    }
}

fn main() {
    if std::env::var_os(CHILD).is_some() {
        if let Err(e) = tickloop_tick::serve(Loud) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        println!("stray_stdout_and_eof: test");
        return;
    }
    println!("running 1 test");
    parent();
    println!("test stray_stdout_and_eof ... ok");
}

fn parent() {
    let exe = std::env::current_exe().expect("own path");
    let mut command = Command::new(exe);
    command
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid is async-signal-safe; no controlling terminal, so the
    // stray text goes to stderr.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = command.spawn().expect("spawn the child Tick");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the Tick within 30 s");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout is not protocol ({e}): {line:?}"))
    };
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"tick/describe","params":{{}}}}"#
    )
    .unwrap();
    let describe = next();
    let revision = describe["result"]["revision"]
        .as_str()
        .expect("revision")
        .to_string();
    let call = |id: u64, tool: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tick/call",
               "params": {"tool": tool, "args": {}, "revision": revision}})
        .to_string()
    };
    writeln!(stdin, "{}", call(2, "shout")).unwrap();
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": 2, "result": "shouted"})
    );
    writeln!(stdin, "{}", call(3, "slow")).unwrap();
    drop(stdin); // EOF with the slow call in flight
    assert_eq!(
        next(),
        json!({"jsonrpc": "2.0", "id": 3, "result": "slept"})
    );
    assert!(
        rx.recv_timeout(Duration::from_secs(30)).is_err(),
        "nothing after the last answer"
    );
    let status = child.wait().expect("child status");
    assert!(status.success(), "{status}");
    let mut err = String::new();
    stderr.read_to_string(&mut err).expect("stderr");
    assert!(err.contains(tickloop_tick::serve::STRAY_WARNING), "{err:?}");
    assert!(
        err.contains("[stdout] stray text from a library\r\n"),
        "{err:?}"
    );
}
