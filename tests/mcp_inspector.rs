//! `tickloop mcp` driven by another MCP client: the MCP Inspector's CLI mode
//! (`npx -y @modelcontextprotocol/inspector@VERSION --cli ...`), when Node is
//! here; `.ci/run` fetches it into npm's cache beforehand. Every listed
//! `inputSchema` must be one the Inspector accepts, with a Tick declaring a
//! `{"type":"string"}` and a top-level `oneOf` schema running.
//!
//! Without `npx`, or when npm cannot fetch the Inspector within the
//! deadline, the test passes but says so loudly: a `SKIPPED` line on the
//! test's real stderr (not the captured one), with the reason.

mod common;

use common::{tick, tickloop_bin, Host, MARK_VAR};
use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Inspector run may take (the first one downloads it).
const DEADLINE: Duration = Duration::from_secs(180);

/// The Inspector release the test runs (and `.ci/run` fetches).
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

/// Says loudly that the test did not run, on the process's real stderr (the
/// test harness captures `eprintln!` of passing tests).
fn skipped(why: &str) {
    let line = format!(
        "\n*** SKIPPED: the MCP Inspector test did not run: {why}. Install Node.js (npx) with the npm registry reachable (.ci/run fetches {INSPECTOR}). ***\n"
    );
    eprintln!("{line}");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

enum Run {
    Json(Value),
    Skip(String),
}

fn npx() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("npx"))
        .find(|p| p.is_file())
}

/// `npx -y @modelcontextprotocol/inspector --cli tickloop mcp ARGS...`.
fn inspector(npx: &std::path::Path, host: &Host, args: &[&str]) -> Run {
    let runtime = format!("TICKLOOP_RUNTIME_DIR={}", host.runtime().display());
    let mark = format!("{MARK_VAR}={}", host.runtime().display());
    let mut child = Command::new(npx)
        .args(["-y", INSPECTOR, "--cli"])
        .args(["-e", &runtime, "-e", &mark])
        .args([tickloop_bin(), "mcp"])
        .args(args)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start npx");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if started.elapsed() > DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let Some(status) = status else {
        return Run::Skip(format!(
            "the MCP Inspector did not finish within {DEADLINE:?} (npm fetch too slow?)"
        ));
    };
    if !status.success() {
        let fetch_failed = [
            "npm ERR",
            "npm error",
            "ENOTFOUND",
            "EAI_AGAIN",
            "ETIMEDOUT",
            "ECONNREFUSED",
            "E404",
        ]
        .iter()
        .any(|m| stderr.contains(m));
        if fetch_failed {
            return Run::Skip(format!(
                "npm could not fetch the MCP Inspector: {}",
                stderr.trim()
            ));
        }
        panic!("inspector {args:?} failed ({status}):\nstdout: {stdout}\nstderr: {stderr}");
    }
    let start = stdout.find('{').unwrap_or(0);
    Run::Json(
        serde_json::from_str(&stdout[start..])
            .unwrap_or_else(|e| panic!("inspector printed no JSON ({e}): {stdout}\n{stderr}")),
    )
}

#[test]
fn the_mcp_inspector_lists_and_calls_tools_and_reads_state() {
    let Some(npx) = npx() else {
        skipped("npx is not on PATH");
        return;
    };
    let host = Host::new();
    host.open_counter("counter");
    host.open("schemas", &tick("schemas.py"), &[]);

    let tools = match inspector(&npx, &host, &["--method", "tools/list"]) {
        Run::Json(v) => v,
        Run::Skip(why) => {
            skipped(&why);
            return;
        }
    };
    let tools = tools["tools"].as_array().cloned().unwrap_or_default();
    for t in &tools {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        for key in ["oneOf", "anyOf", "allOf", "not", "enum"] {
            assert!(t["inputSchema"].get(key).is_none(), "{key} at the top: {t}");
        }
    }
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} in {tools:?}"))
    };
    find("TickManage");
    find("schemas__pick");
    assert_eq!(
        find("counter__increment")["annotations"]["readOnlyHint"],
        false
    );
    assert_eq!(
        find("counter__increment")["annotations"]["destructiveHint"],
        true
    );
    assert_eq!(
        find("counter__history")["annotations"]["readOnlyHint"],
        true
    );

    let call = |args: &[&str]| match inspector(&npx, &host, args) {
        Run::Json(v) => v,
        Run::Skip(why) => panic!("the Inspector ran once, then: {why}"),
    };
    let result = call(&[
        "--method",
        "tools/call",
        "--tool-name",
        "counter__increment",
        "--tool-arg",
        "amount=3",
    ]);
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.starts_with("RESULT"), "{result}");
    host.wait_value("counter", 3);

    let result = call(&["--method", "tools/call", "--tool-name", "counter__history"]);
    assert_eq!(result["isError"], false, "{result}");

    let read = call(&[
        "--method",
        "resources/read",
        "--uri",
        "tick://counter/state",
    ]);
    let body = read["contents"][0]["text"].as_str().unwrap_or_default();
    let delivery: Value = serde_json::from_str(body).expect("JSON state");
    assert_eq!(delivery["data"]["value"], 3, "{delivery}");
    assert_eq!(delivery["recover_with"], "history");
}
