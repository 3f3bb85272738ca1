//! `tickloop web` in a real browser (issue 41): Debian's Chromium driven by
//! Playwright from PyPI (`tests/web/browser.py`, in a virtual environment
//! the test makes under the target directory). Each trial starts its own
//! tickhost, `tickloop web` and browser:
//!
//! - the login URL works once (a reused link's refusal is logged); a
//!   request without the cookie is refused; a second `tickloop web` names
//!   the running page's URL;
//!   `--revoke` logs the page out; no token reaches a log;
//! - another site (a page on another port of 127.0.0.1, which the browser
//!   sends the cookie to) cannot open the WebSockets, cannot POST, cannot
//!   frame the page, and a page of the server's own origin cannot POST
//!   without the CSRF token; another user's process with the stolen cookie
//!   is refused at the connection;
//! - the counter's screen shows, `+` typed in the page changes its state,
//!   and `tickloop read` sees it;
//! - an agent's held call (the MCP SDK through `tickloop mcp`) is a prompt
//!   with the Monitor's text; approved in the page it runs once; approved
//!   in the Monitor instead, the page's prompt goes away;
//! - an agent's held input with Trojan Source's bidi controls, and a
//!   title a program set with them, show every control escaped, each in
//!   an element styled apart; the agent's wait names the page's URL
//!   among the places to answer;
//! - "What agents did" lists two instances' agent actions in order, each
//!   line the words `tickloop activity` prints on a terminal, a failed
//!   call styled apart, and follows what an agent does next;
//! - `--read-only` sends no input (the server refuses it, the counter
//!   stays) and takes no action;
//! - listening on 0.0.0.0 without TLS is refused unless `--insecure-listen`;
//!   with `--tls-cert/--tls-key` the page works over HTTPS.
//!
//! Without Chromium every trial is reported ignored, never passed.

mod common;

use common::optional::{self, Case};
use common::python_sdk::sdk_python;
use common::web::{missing_chromium, Browser, Web};
use common::{run_prepared, tickloop_bin, Host, MARK_VAR};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

fn main() {
    let missing = missing_chromium();
    optional::run(
        vec![
            Case {
                name: "the_login_link_works_once_and_nothing_works_without_the_cookie",
                body: login_works_once,
            },
            Case {
                name: "another_site_cannot_use_the_session",
                body: another_site_cannot_use_the_session,
            },
            Case {
                name: "typing_in_the_page_changes_the_tick_and_read_sees_it",
                body: typing_changes_the_tick,
            },
            Case {
                name: "a_held_agent_call_is_prompted_and_the_first_answer_wins",
                body: held_call_prompted,
            },
            Case {
                name: "bidi_and_zero_width_characters_show_escaped_in_the_page",
                body: trojan_source_shows_escaped,
            },
            Case {
                name: "a_shells_row_says_its_shell_directory_and_last_command",
                body: shell_row_in_the_list,
            },
            Case {
                name: "read_only_sends_no_input_and_takes_no_action",
                body: read_only_sends_nothing,
            },
            Case {
                name: "what_agents_did_lists_every_instance_in_the_clis_words",
                body: what_agents_did,
            },
            Case {
                name: "beyond_loopback_needs_tls_or_insecure_listen",
                body: beyond_loopback,
            },
        ],
        missing,
    )
}

/// A plain HTTP/1.1 request to `addr`; the status and body.
fn http(addr: &str, request: &str) -> (u16, String) {
    let (head, body) = http_bytes(addr, request);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// A plain HTTP/1.1 request to `addr`; the head (lower case) and the body's bytes.
fn http_bytes(addr: &str, request: &str) -> (String, Vec<u8>) {
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(common::WAIT))
        .expect("timeout");
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(answer.len());
    let head = String::from_utf8_lossy(&answer[..split]).to_lowercase();
    let body = answer.get(split + 4..).unwrap_or_default().to_vec();
    (head, body)
}

fn get(addr: &str, path: &str, headers: &str) -> (u16, String) {
    http(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Connection: close\r\n\r\n"),
    )
}

/// The session cookie the browser holds, as a `Cookie:` header value.
fn session_cookie(browser: &mut Browser) -> String {
    let cookies = browser.cmd(json!({"op": "cookies"}));
    let cookie = cookies
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|c| c["name"].as_str().is_some_and(|n| n.contains("tickloop")))
        })
        .unwrap_or_else(|| panic!("no session cookie: {cookies}"));
    assert_eq!(cookie["httpOnly"], true, "{cookie}");
    assert_eq!(cookie["sameSite"], "Strict", "{cookie}");
    format!(
        "{}={}",
        cookie["name"].as_str().unwrap_or(""),
        cookie["value"].as_str().unwrap_or("")
    )
}

fn login_works_once() {
    let host = Host::new();
    host.open_counter("counter");
    let web = Web::start(&host, &[]);
    let addr = web.addr();
    let token = web
        .login_url()
        .split("token=")
        .nth(1)
        .expect("a token")
        .to_string();
    // Without the cookie: the page, its files, its sockets and its actions.
    for path in ["/", "/assets/app.js", "/ws/live"] {
        let (status, body) = get(&addr, path, "");
        assert_eq!(status, 401, "{path}: {body}");
    }
    let post = format!(
        "POST /api/close HTTP/1.1\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nContent-Type: application/json\r\nContent-Length: 30\r\nConnection: close\r\n\r\n{{\"instance\":\"hosted:counter\"}}"
    );
    assert_eq!(http(&addr, &post).0, 401);

    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    let cookie = session_cookie(&mut browser);
    // The cookie opens the page; the page carries the headers that keep it safe.
    let (status, page) = get(&addr, "/", &format!("Cookie: {cookie}\r\n"));
    assert_eq!(status, 200, "{page}");
    // Its files go gzipped to a client that takes gzip (as the browser
    // above did), and as they are to one that does not.
    let xterm = include_bytes!("../web/vendor/xterm/xterm.js");
    let ask = |encoding: &str| {
        http_bytes(
            &addr,
            &format!(
                "GET /assets/xterm.js HTTP/1.1\r\nHost: {addr}\r\nCookie: {cookie}\r\n{encoding}Connection: close\r\n\r\n"
            ),
        )
    };
    let (head, body) = ask("Accept-Encoding: gzip, deflate, br\r\n");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("content-encoding: gzip"), "{head}");
    assert!(head.contains("vary: accept-encoding"), "{head}");
    assert!(
        body.starts_with(&[0x1f, 0x8b]) && body.len() < xterm.len() / 2,
        "{head}"
    );
    for encoding in [
        "",
        "Accept-Encoding: identity\r\n",
        "Accept-Encoding: gzip;q=0\r\n",
    ] {
        let (head, body) = ask(encoding);
        assert!(head.starts_with("http/1.1 200"), "{encoding}: {head}");
        assert!(!head.contains("content-encoding"), "{encoding}: {head}");
        assert!(
            body == xterm,
            "{encoding}: {} bytes, not xterm.js",
            body.len()
        );
    }
    // Used once, the link is void.
    let again = browser.goto(&web.login_url());
    assert_eq!(again["status"], 403, "{again}");
    // ... and its refusal is logged (without the token: checked below).
    assert!(
        web.stderr().contains("refused a login link used already"),
        "{}",
        web.stderr()
    );
    // A second server is refused, naming the running page's URL (no
    // socket path, no login).
    let second = host.run(&["web"]);
    assert_ne!(second.code, 0, "{second:#?}");
    assert!(
        second
            .stderr
            .contains(&format!("already runs for this user at {}", web.url())),
        "{}",
        second.stderr
    );
    assert!(!second.stderr.contains("web.sock"), "{}", second.stderr);
    assert!(!second.stdout.contains("token="), "{}", second.stdout);
    // A new one from the running server works; --revoke logs everyone out.
    let login = host.run(&["web", "--login"]);
    login.expect(0);
    let fresh = login.json()["login_url"]
        .as_str()
        .expect("a url")
        .to_string();
    assert_ne!(fresh, web.login_url());
    browser.goto(&fresh);
    browser.wait(
        "the list again",
        "() => document.querySelector('#list tbody tr') !== null",
    );
    let revoked = host.run(&["web", "--revoke"]);
    revoked.expect(0);
    assert!(
        revoked.json()["sessions"].as_u64() >= Some(1),
        "{}",
        revoked.stdout
    );
    browser.wait(
        "the page to say it was logged out",
        "() => document.querySelector('#status').textContent.includes('logged out')",
    );
    assert_eq!(get(&addr, "/", &format!("Cookie: {cookie}\r\n")).0, 401);
    assert_eq!(
        browser.goto(&fresh)["status"],
        403,
        "revoked links are void"
    );
    // No token in any log.
    let mut logs = web.stderr();
    for entry in std::fs::read_dir(host.runtime())
        .expect("runtime")
        .flatten()
    {
        if entry.path().extension().is_some_and(|e| e == "log") {
            logs.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    // Every instance's folder: its launcher's log, record and the rest.
    for folder in std::fs::read_dir(host.runtime().join("i"))
        .expect("i/")
        .flatten()
    {
        for entry in std::fs::read_dir(folder.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            logs.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
    }
    let cookie_value = cookie.split_once('=').map(|(_, v)| v).unwrap_or("");
    for secret in [token.as_str(), cookie_value] {
        assert!(!logs.contains(secret), "a secret is in a log: {logs}");
    }
    assert!(web.stderr().contains("logged in"), "{}", web.stderr());
}

/// The evil page: tries the live socket, a POST and a frame, and says what
/// happened in `window.result`.
fn evil_page(addr: &str) -> String {
    format!(
        r#"<!doctype html><body><iframe id="f" src="http://{addr}/"></iframe><script>
window.result = {{ws: "pending", post: "pending"}};
const ws = new WebSocket("ws://{addr}/ws/live");
ws.onopen = () => {{ window.result.ws = "opened"; }};
ws.onclose = () => {{ if (window.result.ws === "pending") window.result.ws = "refused"; }};
fetch("http://{addr}/api/close", {{method: "POST", mode: "no-cors", credentials: "include",
  headers: {{"Content-Type": "text/plain"}}, body: '{{"instance":"hosted:counter"}}'}})
  .then(() => {{ window.result.post = "sent"; }}, () => {{ window.result.post = "failed"; }});
</script></body>"#
    )
}

fn another_site_cannot_use_the_session() {
    let host = Host::new();
    host.open_counter("counter");
    let web = Web::start(&host, &[]);
    let addr = web.addr();
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    let cookie = session_cookie(&mut browser);
    // The page's own socket works.
    browser.wait(
        "the list of one",
        "() => document.querySelector('#status').textContent.includes('1 instance')",
    );
    // Another site on this machine: the browser sends it the cookie too.
    let evil = browser.cmd(json!({"op": "serve", "html": evil_page(&addr)}));
    browser.goto(evil.as_str().expect("url"));
    let result = browser.wait(
        "the evil page's attempts to end",
        "() => window.result && window.result.ws !== 'pending' && window.result.post !== 'pending' && window.result",
    );
    assert_eq!(result["ws"], "refused", "cross-site WebSocket: {result}");
    let stderr = web.stderr();
    assert!(stderr.contains("another origin"), "{stderr}");
    // The POST reached the server (no-cors) and was refused: still running.
    assert_eq!(
        host.entry("hosted:counter").expect("listed")["state"],
        "running"
    );
    // The frame shows nothing of the page (frame-ancestors 'none').
    let framed = browser.eval(
        "() => { try { const d = document.getElementById('f').contentDocument; return d ? d.body.innerHTML : 'blocked'; } catch (e) { return 'blocked'; } }",
    );
    assert_eq!(framed, "blocked", "the page was framed: {framed}");
    // The page's own origin without the CSRF token: refused.
    browser.goto(&web.url());
    let csrf_less = browser.eval(
        r#"async () => (await fetch("/api/close", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"instance":"hosted:counter"}'})).status"#,
    );
    assert_eq!(csrf_less, 403);
    assert_eq!(
        host.entry("hosted:counter").expect("listed")["state"],
        "running"
    );
    // Another user of this machine with the stolen cookie and the right
    // Origin: refused at the connection.
    let nobody = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "python3", "-c"])
        .arg(format!(
            "import urllib.request as u\ntry:\n  r = u.urlopen(u.Request('http://{addr}/', headers={{'Cookie': '{cookie}'}}))\n  print(r.status)\nexcept Exception as e:\n  print(getattr(e, 'code', e))"
        ))
        .output();
    match nobody {
        Ok(out) if out.status.success() => {
            let said = String::from_utf8_lossy(&out.stdout);
            assert_eq!(said.trim(), "403", "another user's request: {said}");
            assert!(web.stderr().contains("another user"), "{}", web.stderr());
        }
        // Not root: no other user can be played; the check above stands.
        other => eprintln!("could not run as another user ({other:?}); that part is not checked"),
    }
}

fn typing_changes_the_tick() {
    let host = Host::new();
    host.open_counter("counter");
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    browser.open_instance("hosted:counter", "value: 0");
    browser.type_key("+");
    browser.open_instance("hosted:counter", "value: 1");
    let read = host.wait_value("hosted:counter", 1);
    assert_eq!(read["data"]["value"], 1);
    // The page's state panel follows.
    browser.wait(
        "the state panel to show value 1",
        r#"() => document.querySelector('#tab-state').textContent.includes('"value": 1')"#,
    );
    // The person's typing, recorded as the view's: no agent typed.
    assert_eq!(host.entry("hosted:counter").expect("listed")["views"], 1);
    let text = browser.terminal_text();
    assert!(text.contains("value: 1"), "{text}");
    // The activity pane says what agents and views did, not each state
    // update the Tick published (the record has them; the state pane
    // shows the newest).
    let record = host.ok(&["activity", "hosted:counter"]);
    assert!(
        record["entries"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["type"] == "update")),
        "{record}"
    );
    browser.cmd(json!({"op": "click", "selector": "#side nav button[data-tab=activity]"}));
    // The CLI's read came after the update: once the pane shows it, the
    // update was in what the pane was sent.
    let lines = browser.wait(
        "the activity pane to show the CLI's read",
        "() => { const li = [...document.querySelectorAll('#tab-activity li')].map((l) => l.textContent); return li.some((l) => l.includes('CLI') && l.includes('read')) && li; }",
    );
    assert!(
        lines.as_array().is_some_and(|l| l
            .iter()
            .all(|l| !l.as_str().unwrap_or("").contains("update seq"))),
        "{lines}"
    );
}

/// `tests/web/agent_call.py` calling increment AMOUNT through `tickloop mcp`.
fn agent_call(host: &Host, amount: i64) -> Child {
    Command::new(sdk_python())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/web/agent_call.py"))
        .arg(tickloop_bin())
        .arg(amount.to_string())
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("XDG_CONFIG_HOME", host.scratch().join("no-config"))
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run the MCP SDK's agent")
}

fn increments(host: &Host) -> Vec<i64> {
    common::logged_requests(&host.log_path("counter"))
        .iter()
        .filter(|m| m["method"] == "tick/call" && m["params"]["tool"] == "increment")
        .filter_map(|m| m["params"]["args"]["amount"].as_i64())
        .collect()
}

fn finished(agent: Child) -> Value {
    let out = agent.wait_with_output().expect("the agent ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("the agent's result")
}

const PROMPT_TEXT: &str =
    "() => [...document.querySelectorAll('#held .prompt pre')].map(p => p.textContent).join('\\n---\\n')";

#[allow(clippy::too_many_lines)] // one scenario: the page, then the Monitor
fn held_call_prompted() {
    let host = Host::new();
    host.open_asking_counter("counter");
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);

    // Approved in the page: it runs once.
    let agent = agent_call(&host, 2);
    browser.wait(
        "the prompt for amount 2",
        "() => document.querySelector('#held .prompt pre') !== null",
    );
    let text = browser.eval(PROMPT_TEXT);
    let text = text.as_str().unwrap_or_default().to_string();
    assert!(
        text.starts_with(
            "Add an integer to the counter? · hosted:counter\nasked by an agent (mcp)"
        ),
        "{text}"
    );
    assert!(text.contains("\"amount\": 2"), "{text}");
    browser.cmd(json!({"op": "click", "selector": "#held .prompt button.approve"}));
    let result = finished(agent);
    assert_eq!(result["error"], false, "{result}");
    browser.wait(
        "the prompt to go",
        "() => document.querySelector('#held .prompt') === null",
    );
    assert_eq!(increments(&host), [2], "ran once");
    let log = host.run(&["approvals", "--log", "hosted:counter"]);
    log.expect(0);
    assert!(log.stdout.contains("\"by\":\"web\""), "{}", log.stdout);

    // Approved in the Monitor instead: the page's prompt goes away.
    let agent = agent_call(&host, 3);
    browser.wait(
        "the prompt for amount 3",
        "() => document.querySelector('#held .prompt pre') !== null",
    );
    let page_text = browser.eval(PROMPT_TEXT);
    let page_text = page_text.as_str().unwrap_or_default().to_string();
    let monitor = common::tmux::Tmux::start(
        &host,
        140,
        40,
        &format!("trap '' QUIT INT; {} monitor", tickloop_bin()),
    );
    let screen = monitor.wait_text("approve? hosted:counter");
    // The same question, word for word: its first line and its arguments.
    let first = page_text.lines().next().unwrap_or_default();
    assert!(screen.contains(first), "page: {first}\nMonitor:\n{screen}");
    assert!(screen.contains("\"amount\": 3"), "{screen}");
    monitor.send_keys(&["y"]);
    let result = finished(agent);
    assert_eq!(result["error"], false, "{result}");
    browser.wait(
        "the page's prompt to go once the Monitor decided",
        "() => document.querySelector('#held .prompt') === null",
    );
    assert_eq!(increments(&host), [2, 3], "each ran once");
}

/// Trojan Source (CVE-2021-42574) aimed at the person: an agent's held
/// input whose bidi controls would show `echo safe # ; touch F` (the
/// `touch` looking commented out) shows every control escaped, each in an
/// element styled apart; a title a program set with a bidi override and a
/// zero-width space shows escaped in the list too.
fn trojan_source_shows_escaped() {
    let host = Host::new();
    let id = host.open_bash("mine");
    let title_script = "printf '\\033]2;notes\\342\\200\\256txt.exe\\342\\200\\213\\007'; echo titled; exec sleep 600";
    let titled = host.open_sh("titled", title_script, "titled");
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    let trojan = "echo safe \u{202e}\u{2066}; touch F\u{2069} \u{2066}#\u{2069}\u{202c}\r";
    // The agent's own CLI, as Claude Code's shell tool runs it.
    let typing = host.spawn_with(&[("CLAUDECODE", "1")], &["input", &id, trojan]);
    browser.wait(
        "the prompt for the agent's input",
        "() => document.querySelector('#held .prompt pre') !== null",
    );
    let text = browser.eval(PROMPT_TEXT);
    let text = text.as_str().unwrap_or_default().to_string();
    assert!(
        text.starts_with(&format!(
            "Type `echo safe \\u{{202E}}\\u{{2066}}; touch F\\u{{2069}} \\u{{2066}}#\\u{{2069}}\\u{{202C}}` ⏎ into {id}?"
        )),
        "{text}"
    );
    for raw in ['\u{202e}', '\u{2066}', '\u{2069}', '\u{202c}'] {
        assert!(
            !text.contains(raw),
            "U+{:04X} raw in the page: {text}",
            u32::from(raw)
        );
    }
    // Each escape in an element of its own, styled apart from text.
    let escapes = browser.eval(
        "() => [...document.querySelectorAll('#held .prompt pre .esc')].slice(0, 6).map(e => e.textContent + ' ' + getComputedStyle(e).borderTopStyle)",
    );
    assert_eq!(
        escapes,
        json!([
            "\\u{202E} solid",
            "\\u{2066} solid",
            "\\u{2069} solid",
            "\\u{2066} solid",
            "\\u{2069} solid",
            "\\u{202C} solid"
        ])
    );
    // The title a program set, escaped in the list (its JSON stays raw).
    let row = browser.wait(
        "the titled shell's row",
        &format!(
            "() => [...document.querySelectorAll('#list tbody tr')].filter(r => r.dataset.id === '{titled}').map(r => r.children[2].innerHTML)[0] || null"
        ),
    );
    assert_eq!(
        row,
        json!(
            "notes<span class=\"esc\">\\u{202E}</span>txt.exe<span class=\"esc\">\\u{200B}</span>"
        )
    );
    assert_eq!(
        host.entry(&titled).expect("listed")["title"],
        "notes\u{202e}txt.exe\u{200b}"
    );
    let call = host.the_waiting_one(common::WAIT)["call"]
        .as_str()
        .expect("a call id")
        .to_string();
    host.run(&["refuse", &id, &call]).expect(0);
    let typed = typing.finish();
    typed.expect(3);
    // The agent's wait named every place to answer, the page's URL among
    // them, and by when.
    for place in [
        "the Monitor, the Tick's view, Herdr, ".to_string(),
        format!("the web page ({}), ", web.url()),
        format!("`tickloop approve {id} {call}`"),
        "not executed if nobody answers by ".to_string(),
    ] {
        assert!(typed.stderr.contains(&place), "{place}: {}", typed.stderr);
    }
    assert!(!host.screen(&id).contains("touch"), "never typed");
}

const TIMELINE_TEXT: &str =
    "() => [...document.querySelectorAll('#timeline li')].map(li => li.textContent)";

/// The page's "what agents did": two counters, an agent's CLI (as Claude
/// Code's shell tool runs it) calling each; the page lists its calls in
/// order, in the words `tickloop activity` prints on a terminal, and
/// follows the next one.
fn what_agents_did() {
    let host = Host::new();
    host.open_counter("one");
    host.open_counter("two");
    let agent = [("CLAUDECODE", "1")];
    let call = |id: &str, tool: &str, args: &str| {
        host.spawn_with(&agent, &["call", id, tool, args, "--revision", "1"])
            .finish()
    };
    call("one", "increment", r#"{"amount":2}"#).expect(0);
    call("two", "fail", "{}").expect(4);
    // The person's own call is not an agent's: not listed.
    host.ok(&[
        "call",
        "one",
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    browser.cmd(json!({"op": "click", "selector": "#timeline-pane summary"}));
    let shown = browser.wait(
        "two agent actions in the timeline",
        "() => { const l = [...document.querySelectorAll('#timeline li')]; return l.length >= 2 && l.map(li => li.textContent); }",
    );
    let shown: Vec<String> = serde_json::from_value(shown).expect("lines");
    assert_eq!(shown.len(), 2, "only the agent's two calls: {shown:?}");
    assert!(
        shown[0].contains("hosted:one") && shown[0].contains("increment"),
        "{shown:?}"
    );
    assert!(
        shown[1].contains("hosted:two") && shown[1].contains("fail"),
        "{shown:?}"
    );
    // Word for word what `tickloop activity` prints on a terminal.
    let out = run_prepared(host.in_a_terminal("activity"), &["activity"]);
    out.expect(0);
    let printed: Vec<String> = out
        .stdout
        .replace("\r\n", "\n")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(shown, printed);
    // The failed call is styled apart; the empty-state line is hidden.
    let classes = browser
        .eval("() => [...document.querySelectorAll('#timeline li')].map(li => li.className)");
    assert_eq!(classes[1], "failed", "{classes}");
    assert_eq!(
        browser.eval("() => document.getElementById('timeline-empty').hidden"),
        true
    );
    // What an agent does next shows up last, without reloading.
    call("two", "increment", r#"{"amount":3}"#).expect(0);
    browser.wait(
        "the third agent action",
        "() => document.querySelectorAll('#timeline li').length === 3",
    );
    let shown = browser.eval(TIMELINE_TEXT);
    let last = shown[2].as_str().unwrap_or_default();
    assert!(
        last.contains("hosted:two") && last.contains("increment"),
        "{shown}"
    );
}

/// A shell's row in the list (issue 50), in the words of `tickloop list`
/// and the Monitor: KIND `bash`, its state's SEQ, and under its title its
/// directory, its last command's status and the command, the failed status
/// set apart.
fn shell_row_in_the_list() {
    let host = Host::new();
    let id = host.open_bash("work");
    host.run(&["wait", &id, "--prompt", "--timeout", "20"])
        .expect(0);
    let project = host.scratch().join("project");
    std::fs::create_dir_all(&project).expect("the project folder");
    let cd = format!("cd {}", project.display());
    host.run(&["run", &id, "--timeout", "20", "--", &cd])
        .expect(0);
    let failed = host.run(&["run", &id, "--timeout", "20", "--", "sh -c 'exit 3'"]);
    assert_eq!(failed.code, 3, "{failed:?}");
    let seq = host.ok(&["read", &id])["seq"].clone();

    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    let cells = browser.wait(
        "the shell's row with its last command",
        &format!(
            "() => {{ const r = [...document.querySelectorAll('#list tbody tr')].find(r => r.dataset.id === {}); \
             const l = r && r.querySelector('.shell-line'); \
             return l && l.textContent.includes('exit 3') ? [...r.children].map(c => c.innerText) : null; }}",
            json!(id)
        ),
    );
    assert_eq!(cells[1], "bash", "{cells}");
    assert_eq!(cells[4], seq.to_string(), "{cells}");
    let title = cells[2].as_str().unwrap_or_default();
    assert!(title.contains(&project.display().to_string()), "{title}");
    assert!(title.contains("exit 3 · "), "{title}");
    assert!(title.contains("sh -c 'exit 3'"), "{title}");
    let failed_style = browser.eval(&format!(
        "() => {{ const r = [...document.querySelectorAll('#list tbody tr')].find(r => r.dataset.id === {}); \
         const s = r.querySelector('.shell-status.failed'); return s ? getComputedStyle(s).fontWeight : null; }}",
        json!(id)
    ));
    assert_eq!(failed_style, "600", "the failed status set apart");
}

fn read_only_sends_nothing() {
    let host = Host::new();
    host.open_asking_counter("counter");
    let before = host.ok(&["screen", "hosted:counter", "--json"]);
    let web = Web::start(&host, &["--read-only"]);
    assert_eq!(web.started["read_only"], true);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    browser.open_instance("hosted:counter", "value: 0");
    browser.type_key("+");
    browser.wait(
        "the server to refuse the key",
        "() => document.querySelector('#notice').textContent.includes('sends nothing')",
    );
    // Nothing reached the Tick: not the key, not a size.
    assert_eq!(host.read("hosted:counter")["data"]["value"], 0);
    let after = host.ok(&["screen", "hosted:counter", "--json"]);
    assert_eq!(
        (before["cols"].clone(), before["rows"].clone()),
        (after["cols"].clone(), after["rows"].clone())
    );
    assert!(!host.screen("hosted:counter").contains("value: 1"));
    // No action either, even with the right token.
    let agent = agent_call(&host, 5);
    browser.wait(
        "the read-only prompt",
        "() => document.querySelector('#held .prompt') !== null",
    );
    let buttons = browser.eval("() => document.querySelectorAll('#held .prompt button').length");
    assert_eq!(buttons, 0, "no answer buttons in read-only");
    let refused = browser.eval(
        r#"async () => {
            const csrf = document.querySelector('meta[name=csrf]').content;
            const held = [...document.querySelectorAll('#held .prompt')][0].dataset;
            const r = await fetch("/api/decide", {method: "POST",
              headers: {"Content-Type": "application/json", "X-Tickloop-CSRF": csrf},
              body: JSON.stringify({instance: held.instance, call: held.call, approve: true})});
            return [r.status, (await r.json()).message];
        }"#,
    );
    assert_eq!(refused[0], 403, "{refused}");
    assert!(increments(&host).is_empty(), "nothing ran");
    let held = host.ok(&["approvals"]);
    let call = held["call"]
        .as_str()
        .or_else(|| held[0]["call"].as_str())
        .unwrap_or("%1")
        .to_string();
    host.run(&["refuse", "hosted:counter", &call]).expect(0);
    let result = finished(agent);
    assert_eq!(result["error"], true, "{result}");
}

fn beyond_loopback() {
    let host = Host::new();
    host.open_counter("counter");
    // Refused, saying what to do.
    let refused = host.run(&["web", "--listen", "0.0.0.0:0"]);
    refused.expect(2);
    assert!(refused.stderr.contains("--tls-cert"), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("--insecure-listen"),
        "{}",
        refused.stderr
    );
    // Knowingly: it serves, and says loudly what it means.
    {
        let web = Web::start(&host, &["--listen", "0.0.0.0:0", "--insecure-listen"]);
        assert!(web.stderr().contains("WITHOUT TLS"), "{}", web.stderr());
        let port = web
            .addr()
            .rsplit(':')
            .next()
            .unwrap_or_default()
            .to_string();
        assert_eq!(get(&format!("127.0.0.1:{port}"), "/", "").0, 401);
    }
    // With TLS: the page over HTTPS, the cookie Secure.
    let cert = host.scratch().join("cert.pem");
    let key = host.scratch().join("key.pem");
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=localhost",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("openssl makes a test certificate");
    assert!(made.status.success(), "{made:?}");
    let web = Web::start(
        &host,
        &[
            "--listen",
            "0.0.0.0:0",
            "--tls-cert",
            cert.to_str().expect("utf-8"),
            "--tls-key",
            key.to_str().expect("utf-8"),
        ],
    );
    assert!(!web.stderr().contains("WITHOUT TLS"));
    let port = web
        .addr()
        .rsplit(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let token = web
        .login_url()
        .split("token=")
        .nth(1)
        .expect("token")
        .to_string();
    let mut browser = Browser::start(&["--ignore-certificate-errors"]);
    let page = browser.goto(&format!("https://127.0.0.1:{port}/login?token={token}"));
    assert_eq!(page["status"], 200, "{page}");
    browser.wait(
        "the list over TLS",
        "() => document.querySelector('#list tbody tr') !== null",
    );
    let cookies = browser.cmd(json!({"op": "cookies"}));
    assert!(
        cookies
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["secure"] == true
                && c["name"].as_str().is_some_and(|n| n.starts_with("__Host-")))),
        "{cookies}"
    );
}
