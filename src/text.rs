//! What a person reads on a terminal for the answers that are JSON for
//! programs (docs/cli.md): `describe`, `read`, `call`, `input`, `close`,
//! `reload`, `shutdown`, the lines of `watch`, and consent's `approvals`,
//! `approve`, `refuse`, `approve-policy`. Each function takes the JSON the command
//! prints when piped, unchanged, and makes lines of text of it.

use serde_json::Value;
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::ShellState;

mod waits;
pub use waits::{wait_answer, WatchText};

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `value` as a person reads it: a string as it is, anything else as
/// indented JSON.
fn readable(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()),
    }
}

/// One tool's arguments from its `input_schema`: `amount: integer`, an
/// optional one with `?`.
fn arguments(schema: &Value) -> String {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema["properties"].as_object() else {
        return String::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let kind = match &property["type"] {
                Value::Null => "any".to_string(),
                Value::Array(kinds) => kinds.iter().map(text).collect::<Vec<_>>().join("|"),
                other => text(other),
            };
            let optional = if required.contains(&name.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{name}{optional}: {kind}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The commands that work with a Tick, as `describe` says them.
const TICK_COMMANDS: &str =
    "call, read, watch, screen, input, keys, wait --text/--quiet/--ended, attach, activity, close";

/// `describe ID`: what the instance is (a Tick, a shell with integration,
/// a plain program) and which commands work with it; a Tick's revision,
/// its tools and how to call one.
pub fn describe(id: &str, v: &Value) -> String {
    let commands = v["commands"]
        .as_array()
        .map(|c| c.iter().map(text).collect::<Vec<_>>().join(", "))
        .unwrap_or_default();
    if v["shell"].is_object() {
        return format!(
            "{id} — {} ({}, {})\n{}\ncommands: {commands}\n",
            text(&v["argv"][0]),
            text(&v["shell"]["shell"]),
            match v["shell"]["kind"].as_str() {
                Some("injected") => "Tickloop's shell integration",
                _ => "its prompt's own OSC 133 marks",
            },
            text(&v["description"])
        );
    }
    if let Some(why) = v["no_integration"].as_str() {
        return format!(
            "{id} — {} (a plain program; no integration: {why})\n{}\ncommands: {commands}\n",
            text(&v["argv"][0]),
            text(&v["description"])
        );
    }
    let mut out = format!(
        "{id} — {} (kind {}), revision {}\n",
        text(&v["title"]),
        text(&v["kind"]),
        text(&v["revision"])
    );
    if let Some(description) = v["description"].as_str().filter(|d| !d.is_empty()) {
        out.push_str(&format!("{description}\n"));
    }
    out.push_str(&format!("a Tick; commands: {TICK_COMMANDS}\n"));
    let tools = v["tools"].as_array().cloned().unwrap_or_default();
    if tools.is_empty() {
        out.push_str("no tools\n");
        return out;
    }
    out.push_str("tools:\n");
    let heads: Vec<String> = tools
        .iter()
        .map(|t| format!("{}({})", text(&t["name"]), arguments(&t["input_schema"])))
        .collect();
    let width = heads.iter().map(|h| h.chars().count()).max().unwrap_or(0);
    for (tool, head) in tools.iter().zip(&heads) {
        let mark = if tool["mutates"] == true {
            "mutates"
        } else {
            "reads  "
        };
        out.push_str(&format!(
            "  {head:<width$}  {mark}  {}\n",
            text(&tool["description"])
                .lines()
                .next()
                .unwrap_or_default()
        ));
    }
    let first = text(&tools[0]["name"]);
    out.push_str(&format!(
        "call one: tickloop call {id} {first} '{{...}}' --revision {}\n",
        text(&v["revision"])
    ));
    out
}

/// `read ID`: the state's seq and time, then its data.
pub fn read(v: &Value) -> String {
    format!(
        "seq {} · at {}\n{}\n",
        text(&v["seq"]),
        text(&v["at"]),
        readable(&v["data"])
    )
}

/// `call`'s result (exit 0): the Tick's answer.
pub fn call_result(result: &Value) -> String {
    format!("{}\n", readable(result))
}

/// `input ID TEXT`.
pub fn input(id: &str, v: &Value) -> String {
    let bytes = v["bytes"].as_u64().unwrap_or(0);
    format!(
        "typed {bytes} byte{} into {id}{}\n",
        if bytes == 1 { "" } else { "s" },
        echo_off_note(v)
    )
}

/// What an answer to typing adds when it went to a prompt with echo off.
pub fn echo_off_note(v: &Value) -> &'static str {
    if v["echo_off"] == true {
        " at a prompt with echo off (kept nowhere)"
    } else {
        ""
    }
}

/// `close ID`: how it ended, or that an ended one is forgotten.
pub fn close(v: &Value) -> String {
    let id = text(&v["id"]);
    if v["forgotten"] == true {
        return format!("{id} forgotten\n");
    }
    let all_kept = v["ended"]["not_saved"]
        .as_array()
        .is_none_or(|n| n.is_empty());
    match v["ended"]["reason"].as_str() {
        Some(reason) if all_kept => format!(
            "{id} ended: {reason}\n(its last screen and activity stay until `tickloop close {id}` again forgets it)\n"
        ),
        Some(reason) => format!(
            "{id} ended: {reason}\n(not all of it was kept; `tickloop close {id}` again forgets it)\n"
        ),
        None => format!("{id} closed\n"),
    }
}

/// `shutdown`.
pub fn shutdown(v: &Value) -> String {
    let closed = v["closed"].as_u64().unwrap_or(0);
    if v["was_running"] == false {
        if closed > 0 {
            return format!(
                "tickhost was not running; ended {closed} instance{} it had lost\n",
                if closed == 1 { "" } else { "s" }
            );
        }
        return "tickhost was not running; nothing to close\n".to_string();
    }
    format!(
        "tickhost ended, after closing {closed} instance{}\n",
        if closed == 1 { "" } else { "s" }
    )
}

/// One line of `watch`: a delivery (instance, seq, how many updates it
/// merges, its data on one line) or an end.
pub fn watch_event(v: &Value) -> String {
    let id = text(&v["instance"]);
    if let Some(ended) = v.get("ended").filter(|e| !e.is_null()) {
        return format!("{id} ended: {}", text(&ended["reason"]));
    }
    if let Ok(shell) = serde_json::from_value::<ShellState>(v["data"].clone()) {
        return format!("{} {id} {}", text(&v["at"]), shell_line(&shell));
    }
    let merged = v["merged"].as_u64().unwrap_or(0);
    let merged = if merged > 1 {
        format!(" ({merged} updates)")
    } else {
        String::new()
    };
    let reloaded = match v.get("reloaded").and_then(Value::as_u64) {
        Some(generation) => format!(" · reloaded, generation {generation}"),
        None => String::new(),
    };
    let trimmed = if v["trimmed"] == true {
        " · trimmed"
    } else {
        ""
    };
    format!(
        "{} {id} seq {}{merged}{reloaded}{trimmed}: {}",
        text(&v["at"]),
        text(&v["seq"]),
        v["data"]
    )
}

/// A shell's state in a line: the running command, or the last one with
/// its status, and where the shell is.
pub(crate) fn shell_line(shell: &ShellState) -> String {
    let place = escaped(shell.cwd.as_deref().unwrap_or("?"));
    match (&shell.running, shell.commands.last()) {
        (Some(running), _) => format!(
            "command {} started: `{}` (in {place})",
            running.n,
            escaped(&running.command)
        ),
        (None, Some(last)) => format!(
            "command {} ended with status {}: `{}` (in {place}{})",
            last.n,
            last.exit.map_or("unknown".to_string(), |e| e.to_string()),
            escaped(&last.command),
            if shell.at_prompt {
                ", at its prompt"
            } else {
                ""
            }
        ),
        (None, None) => format!(
            "no command yet (in {place}{})",
            if shell.at_prompt {
                ", at its prompt"
            } else {
                ""
            }
        ),
    }
}

/// `reload ID`: the artifact's new generation.
pub fn reload(v: &Value) -> String {
    let mut out = format!(
        "reloaded {}: generation {}, {} (revision {})\n",
        text(&v["id"]),
        text(&v["generation"]),
        text(&v["state"]),
        text(&v["revision"])
    );
    if v["state"] == "failed" {
        out.push_str(&format!(
            "it failed: {}\nits screen shows why (`tickloop screen {}`)\n",
            text(&v["failed"]),
            text(&v["id"])
        ));
    }
    out
}

/// How long, for people: `12s`, `1m30s`.
fn waited(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{s}s")
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// One action waiting for approval (a line of `approvals`): what will
/// happen, whole and escaped (as every place that asks the person says
/// it), who asks, how long it has waited, and how to answer.
pub fn held(v: &Value) -> String {
    let kind = serde_json::from_value::<tickloop_proto::wire::ClientKind>(v["client"].clone());
    let who = match (v["client"].as_str(), kind) {
        (Some("mcp"), _) => "an agent (MCP)".to_string(),
        (Some("loop"), _) => "an agent (the Loop)".to_string(),
        (_, Ok(kind)) => kind.actor(),
        (Some(other), _) => escaped(other),
        (None, _) => "someone".to_string(),
    };
    let (id, call) = (escaped(&text(&v["instance"])), escaped(&text(&v["call"])));
    let what = match serde_json::from_value::<tickloop_proto::wire::HeldCall>(v.clone()) {
        Ok(held) if held.action == tickloop_proto::wire::HeldAction::Call => format!(
            "{} · call {} {} on {id} (revision {})",
            held.plainly(),
            escaped(&held.tool),
            tickloop_proto::escape::json(&held.args),
            escaped(&held.revision)
        ),
        Ok(held) => held.plainly(),
        // Not a held action of this build: its JSON, escaped.
        Err(_) => tickloop_proto::escape::json(v),
    };
    format!(
        "{call}  {what}\n      asked by {who} · waiting {}\n      tickloop approve {id} {call}   |   tickloop refuse {id} {call} [--reason TEXT]\n",
        waited(v["waited_ms"].as_u64().unwrap_or(0))
    )
}

/// One line of an approval log (`approvals --log ID`): when, which action,
/// what was asked and what became of it.
pub fn consent_entry(v: &Value) -> String {
    let decision: Option<tickloop_proto::wire::ConsentDecision> =
        serde_json::from_value(v.clone()).ok();
    match decision {
        Some(d) => format!(
            "{} {} {} → {}{}\n",
            text(&v["at"]),
            d.call,
            d.what(120),
            d.verdict(),
            d.host
                .as_deref()
                .map(|h| format!(" (in {h})"))
                .unwrap_or_default()
        ),
        None => format!("{v}\n"),
    }
}

/// `approve` / `refuse`.
pub fn decided(v: &Value) -> String {
    let verb = if v["approved"] == true {
        "approved"
    } else {
        "refused"
    };
    format!("{verb} {} of {}\n", text(&v["call"]), text(&v["instance"]))
}

/// `approve-policy`: who approves what agents do to the instance now.
pub fn policies(v: &Value) -> String {
    format!(
        "{}: mutating calls {} · agents typing {} · agents closing {}\n",
        text(&v["instance"]),
        text(&v["approve"]),
        text(&v["agent_input"]),
        text(&v["agent_close"])
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn consent_says_who_wants_what_and_how_to_answer() {
        let held_json = |action: &str, tool: &str, args: Value, client: &str, waited: u64| {
            json!({"action":action,"call":"%4","instance":"shell:bash","tool":tool,
            "description":"Add `amount`.","args":args,"revision":"1","client":client,
            "since":"2026-12-02T07:00:00.000Z","waited_ms":waited,"timeout_ms":600000})
        };
        let typing = held(&held_json(
            "input",
            "input",
            json!({"text":"ls\r"}),
            "mcp",
            12000,
        ));
        assert_eq!(
            typing,
            "%4  Type `ls` ⏎ into shell:bash?\n      asked by an agent (MCP) · waiting 12s\n      tickloop approve shell:bash %4   |   tickloop refuse shell:bash %4 [--reason TEXT]\n"
        );
        // run and keys say what they type (never `type null`), whole.
        let long = format!("ls{};touch FILE", " ".repeat(150));
        let run = held(&held_json(
            "input",
            "run",
            json!({"command": long}),
            "mcp",
            0,
        ));
        assert!(
            run.contains(&format!("Run `{long}` at the prompt")),
            "{run}"
        );
        let keys = held(&held_json(
            "input",
            "keys",
            json!({"text":"echo looks-harmless","keys":["C-a","r","m","Enter"]}),
            "mcp",
            0,
        ));
        assert!(
            keys.contains("Type `echo looks-harmless` then press C-a r m Enter in shell:bash?"),
            "{keys}"
        );
        let reload = held(&held_json("reload", "reload", json!({}), "mcp", 0));
        assert!(
            reload.contains("Reload shell:bash (its program ends"),
            "{reload}"
        );
        let trojan = held(&held_json(
            "input",
            "input",
            json!({"text":"a\u{202e}b"}),
            "mcp",
            0,
        ));
        assert!(trojan.contains("`a\\u{202E}b`"), "{trojan}");
        let call = held(&held_json(
            "call",
            "increment",
            json!({"amount":2}),
            "loop",
            61000,
        ));
        assert!(
            call.contains("Add 2? · call increment {\"amount\":2} on shell:bash (revision 1)")
                && call.contains("asked by an agent (the Loop) · waiting 1m01s"),
            "{call}"
        );
        let logged = consent_entry(
            &json!({"at":"2026-12-02T07:00:00.000Z","action":"close","client":"mcp",
            "call":"%6","instance":"shell:bash","tool":"close","args":{},"revision":"","decision":"refused",
            "by":"mcp-host","reason":"declined in claude-code 2.1.332","host":"claude-code 2.1.332"}),
        );
        assert_eq!(logged, "2026-12-02T07:00:00.000Z %6 close → refused by the person, in the agent host: declined in claude-code 2.1.332 (in claude-code 2.1.332)\n");
        // Typing at a prompt with echo off: how much, never what.
        let mut secret = held_json("input", "input", json!({}), "mcp", 0);
        secret["echo_off"] = json!({"characters": 14});
        let secret = held(&secret);
        assert!(
            secret.contains(
                "Type 14 characters at a prompt with echo off (a password?) into shell:bash?"
            ),
            "{secret}"
        );
        let logged = consent_entry(
            &json!({"at":"2026-12-02T07:00:00.000Z","action":"input","client":"mcp",
            "call":"%7","instance":"shell:bash","tool":"input","args":{},
            "echo_off":{"characters":14},"revision":"","decision":"approved","by":"monitor"}),
        );
        assert_eq!(logged, "2026-12-02T07:00:00.000Z %7 input 14 characters with echo off → approved by the person (monitor)\n");
        assert_eq!(
            decided(&json!({"instance":"hosted:c","call":"%5","approved":true})),
            "approved %5 of hosted:c\n"
        );
        assert_eq!(
            policies(
                &json!({"instance":"shell:bash","approve":"auto","agent_input":"ask","agent_close":"deny"})
            ),
            "shell:bash: mutating calls auto · agents typing ask · agents closing deny\n"
        );
    }

    #[test]
    fn describe_puts_the_revision_first_and_a_line_per_tool() {
        let v = json!({"title":"Counter","kind":"tickloop.counter","revision":"7",
            "description":"One integer.",
            "tools":[
                {"name":"increment","mutates":true,"description":"Add `amount`.",
                 "input_schema":{"type":"object","properties":{"amount":{"type":"integer"}}}},
                {"name":"lines","mutates":false,"description":"The text.\nMore.",
                 "input_schema":{"type":"object","required":["from"],
                    "properties":{"from":{"type":"integer"},"grep":{"type":["string","null"]}}}}]});
        let t = describe("hosted:c", &v);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "hosted:c — Counter (kind tickloop.counter), revision 7"
        );
        assert!(t.contains("increment(amount?: integer)"), "{t}");
        assert!(
            t.contains("lines(from: integer, grep?: string|null)"),
            "{t}"
        );
        assert!(t.contains("mutates  Add `amount`."), "{t}");
        assert!(!t.contains("More."), "{t}");
        assert!(
            t.contains("call one: tickloop call hosted:c increment '{...}' --revision 7"),
            "{t}"
        );
    }

    #[test]
    fn describe_says_what_each_instance_is_and_what_works_with_it() {
        let plain = json!({"id":"shell:py","kind":null,"argv":["python3"],"shell":null,
            "no_integration":"python3 is not bash, zsh or fish",
            "commands":["screen","input"],"description":"a plain terminal program"});
        let t = describe("shell:py", &plain);
        assert!(
            t.starts_with(
                "shell:py — python3 (a plain program; no integration: python3 is not bash, zsh or fish)\n"
            ),
            "{t}"
        );
        assert!(t.contains("\ncommands: screen, input\n"), "{t}");
        let tick = json!({"title":"Counter","kind":"k","revision":"1","tools":[]});
        assert!(describe("hosted:c", &tick).contains("a Tick; commands: call, read"));
    }

    #[test]
    fn watch_lines_name_the_instance_and_seq() {
        let delivery = json!({"instance":"hosted:c","seq":5,"at":"T","data":{"value":5},
            "updates":3,"merged":2,"trimmed":false});
        assert_eq!(
            watch_event(&delivery),
            r#"T hosted:c seq 5 (2 updates): {"value":5}"#
        );
        let ended = json!({"instance":"hosted:c","ended":{"reason":"closed by the user"}});
        assert_eq!(watch_event(&ended), "hosted:c ended: closed by the user");
    }

    #[test]
    fn small_answers_read_as_sentences() {
        assert_eq!(
            input("hosted:c", &json!({"ok":true,"bytes":1})),
            "typed 1 byte into hosted:c\n"
        );
        assert_eq!(
            input("shell:pw", &json!({"ok":true,"bytes":14,"echo_off":true})),
            "typed 14 bytes into shell:pw at a prompt with echo off (kept nowhere)\n"
        );
        assert_eq!(
            close(&json!({"id":"shell:s","ended":{"reason":"closed by the person (cli)"}})),
            "shell:s ended: closed by the person (cli)\n(its last screen and activity stay until `tickloop close shell:s` again forgets it)\n"
        );
        assert_eq!(
            close(&json!({"id":"shell:s","ended":{"reason":"x"},"forgotten":true})),
            "shell:s forgotten\n"
        );
        assert_eq!(
            shutdown(&json!({"shutdown":true,"closed":2})),
            "tickhost ended, after closing 2 instances\n"
        );
        assert_eq!(
            shutdown(&json!({"shutdown":true,"closed":0,"was_running":false})),
            "tickhost was not running; nothing to close\n"
        );
        assert_eq!(call_result(&json!("hi")), "hi\n");
        assert_eq!(call_result(&json!({"value":3})), "{\n  \"value\": 3\n}\n");
        assert_eq!(
            read(&json!({"seq":3,"at":"T","data":{"value":3}})),
            "seq 3 · at T\n{\n  \"value\": 3\n}\n"
        );
    }
}
