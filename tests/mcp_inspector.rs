//! `tickloop mcp` driven by another MCP client: the MCP Inspector's CLI mode
//! (`npx -y @modelcontextprotocol/inspector@VERSION --cli ...`), when Node is
//! here; `.ci/run` fetches it into npm's cache beforehand. Every listed
//! `inputSchema` must be one the Inspector accepts, with a Tick declaring a
//! `{"type":"string"}` and a top-level `oneOf` schema running.
//!
//! Without `npx`, or when npm cannot fetch the Inspector within the
//! deadline, cargo reports the test *ignored* (it runs under
//! `libtest-mimic`, `harness = false`), with the reason on stderr: never a
//! pass. Once the Inspector has run, any later failure to run it fails.

mod common;

use common::optional::{self, Case};
use common::{tick, tickloop_bin, Host, MARK_VAR};
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Inspector run may take (the first one downloads it).
const DEADLINE: Duration = Duration::from_secs(180);

/// The Inspector release the test runs (and `.ci/run` fetches).
const INSPECTOR: &str = "@modelcontextprotocol/inspector@2.12.0";

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
    let child = Command::new(npx)
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
    let (status, stdout, stderr) = finish_within(child, DEADLINE);
    let Some(status) = status else {
        return Run::Skip(format!(
            "the MCP Inspector did not finish within {DEADLINE:?} (npm fetch too slow?)"
        ));
    };
    if !status.success() {
        if fetch_failed(&stderr) {
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

fn main() {
    optional::run(
        vec![Case {
            name: "the_mcp_inspector_lists_and_calls_tools_and_reads_state",
            body: the_mcp_inspector_lists_and_calls_tools_and_reads_state,
        }],
        why_it_cannot_run(),
    )
}

/// Why the Inspector cannot run here (no npx, or npm cannot fetch it), if
/// so: one run of its `--help`, which also fetches it into npm's cache.
fn why_it_cannot_run() -> Option<String> {
    let Some(npx) = npx() else {
        return Some(format!(
            "the MCP Inspector test needs npx (Node.js) on PATH; .ci/run installs it and fetches {INSPECTOR}"
        ));
    };
    let child = Command::new(&npx)
        .args(["-y", INSPECTOR, "--cli", "--help"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let (status, _, stderr) = finish_within(child, DEADLINE);
    match status {
        None => Some(format!(
            "npm did not fetch the MCP Inspector ({INSPECTOR}) within {DEADLINE:?}"
        )),
        Some(status) if !status.success() && fetch_failed(&stderr) => Some(format!(
            "npm could not fetch the MCP Inspector ({INSPECTOR}): {}",
            stderr.trim()
        )),
        // It ran (or failed for a reason of its own, which the test shows).
        Some(_) => None,
    }
}

/// Waits for `child` at most `limit` (then kills it: status `None`),
/// collecting what it printed on the pipes it has.
fn finish_within(
    mut child: std::process::Child,
    limit: Duration,
) -> (Option<std::process::ExitStatus>, String, String) {
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    (
        status,
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    )
}

/// Whether npm's stderr says the package could not be fetched.
fn fetch_failed(stderr: &str) -> bool {
    [
        "npm ERR",
        "npm error",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ETIMEDOUT",
        "ECONNREFUSED",
        "E404",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

fn the_mcp_inspector_lists_and_calls_tools_and_reads_state() {
    let npx = npx().expect("npx on PATH");
    let host = Host::new();
    host.open_counter("counter");
    host.open("schemas", &tick("schemas.py"), &[]);

    let call = |args: &[&str]| match inspector(&npx, &host, args) {
        Run::Json(v) => v,
        Run::Skip(why) => panic!("the Inspector was fetched, but then: {why}"),
    };
    let tools = call(&["--method", "tools/list"]);
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
