//! What tells the host's own processes from its shell tool's (issue 49),
//! measured in each real agent CLI: the probe (`tests/host_origin/probe.py`)
//! is registered as an MCP server and as the hooks Tickloop installs, and
//! the scripted model runs it through its shell tool, plain and as an
//! agent's own MCP client, in the same session. The records are the
//! process, its ancestors, their environments' agent markers and its
//! descriptors; `TICKLOOP_ORIGIN_RECORD=DIR` keeps them as
//! `DIR/AGENT.jsonl` (the runs kept are `benches/host-origin-*`).

use super::project::{AgentCli, Project};
use crate::common::COMMAND_DEADLINE;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The probe.
pub fn probe() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/host_origin/probe.py")
}

/// Where a project's probe records go.
pub fn records_file(p: &Project) -> PathBuf {
    p.host.scratch().join("origin.jsonl")
}

/// The probe's command line in `mode`, recording as `label`.
pub fn probe_args(out: &Path, mode: &str, label: &str) -> Vec<String> {
    vec![
        "python3".into(),
        probe().to_string_lossy().into_owned(),
        mode.into(),
        out.to_string_lossy().into_owned(),
        label.into(),
    ]
}

/// The probe's command line as one shell line.
pub fn probe_line(out: &Path, mode: &str, label: &str) -> String {
    probe_args(out, mode, label)
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every record so far.
pub fn records(p: &Project) -> Vec<Value> {
    std::fs::read_to_string(records_file(p))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The record labelled `label`, once it is there.
pub fn record(p: &Project, label: &str) -> Value {
    crate::common::wait_for_within(COMMAND_DEADLINE, &format!("the probe's {label}"), || {
        records(p).into_iter().find(|r| r["label"] == label)
    })
}

/// Registers the probe beside what install wrote: an MCP server named
/// `probe`, and a hook on the same events as Tickloop's, the way each host
/// runs them.
pub fn register_probe(p: &Project) {
    let out = records_file(p);
    let name = p.agent.name();
    let hook = |event: &str| probe_line(&out, "hook", &format!("{name}/hook-{event}"));
    let mcp = probe_args(&out, "mcp", &format!("{name}/mcp"));
    match name {
        "claude-code" => claude_code(p, &mcp, &hook),
        "codex" => codex(p, &mcp, &hook),
        "gemini" => gemini(p, &mcp, &hook),
        "opencode" => opencode(p, &mcp, &out),
        other => panic!("no probe setup for {other}"),
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut value: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("config")).expect("JSON");
    edit(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).expect("JSON")).expect("write");
}

fn push_hook(hooks: &mut Value, event: &str, entry: Value) {
    let list = hooks[event].as_array_mut().expect("the event's hooks");
    list.push(json!({"hooks": [entry]}));
}

fn claude_code(p: &Project, mcp: &[String], hook: &dyn Fn(&str) -> String) {
    edit_json(&p.dir.join(".claude/settings.json"), |s| {
        for (event, word) in [("UserPromptSubmit", "user-prompt-submit"), ("Stop", "stop")] {
            push_hook(
                &mut s["hooks"],
                event,
                json!({"type": "command", "command": hook(word), "timeout": 30}),
            );
        }
    });
    let added = p
        .agent_command()
        .args(["mcp", "add", "probe", "--"])
        .args(mcp)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("claude mcp add");
    assert!(added.status.success(), "claude mcp add: {added:?}");
}

fn codex(p: &Project, mcp: &[String], hook: &dyn Fn(&str) -> String) {
    let config = p.dir.join(".codex/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("config.toml");
    let args: Vec<String> = mcp[1..].iter().map(|a| format!("{a:?}")).collect();
    text.push_str(&format!(
        "\n[mcp_servers.probe]\ncommand = {:?}\nargs = [{}]\nstartup_timeout_sec = 20\n",
        mcp[0],
        args.join(", ")
    ));
    std::fs::write(&config, text).expect("config.toml");
    edit_json(&p.dir.join(".codex/hooks.json"), |s| {
        for (event, word) in [("UserPromptSubmit", "user-prompt-submit"), ("Stop", "stop")] {
            push_hook(
                &mut s["hooks"],
                event,
                json!({"type": "command", "command": hook(word), "timeout": 30}),
            );
        }
    });
}

fn gemini(p: &Project, mcp: &[String], hook: &dyn Fn(&str) -> String) {
    edit_json(&p.dir.join(".gemini/settings.json"), |s| {
        s["mcpServers"]["probe"] =
            json!({"command": mcp[0], "args": mcp[1..], "trust": true, "timeout": 20000});
        for (event, word) in [("BeforeAgent", "user-prompt-submit"), ("AfterAgent", "stop")] {
            push_hook(
                &mut s["hooks"],
                event,
                json!({"name": format!("probe-{word}"), "type": "command", "command": hook(word), "timeout": 30000}),
            );
        }
    });
}

/// opencode's hook is the Loop's plugin spawning `tickloop loop opencode
/// hook`: the probe's plugin spawns the probe the same way.
fn opencode(p: &Project, mcp: &[String], out: &Path) {
    edit_json(&p.dir.join("opencode.json"), |s| {
        s["mcp"]["probe"] =
            json!({"type": "local", "command": mcp, "enabled": true, "timeout": 20000});
    });
    let args = |event: &str| {
        let a = probe_args(out, "hook", &format!("opencode/hook-{event}"));
        serde_json::to_string(&a).expect("JSON")
    };
    let plugin = format!(
        r#"import {{ spawn }} from "node:child_process";
function probe(argv, input) {{
  return new Promise((resolve) => {{
    const child = spawn(argv[0], argv.slice(1), {{ stdio: ["pipe", "pipe", "pipe"] }});
    child.on("error", () => resolve());
    child.on("close", () => resolve());
    child.stdin.end(JSON.stringify(input));
  }});
}}
export const OriginProbe = async ({{ directory }}) => ({{
  "chat.message": async (input) => {{
    await probe({prompt}, {{ session_id: input.sessionID, cwd: directory, hook_event_name: "UserPromptSubmit" }});
  }},
  event: async ({{ event }}) => {{
    if (event.type === "session.idle") await probe({stop}, {{ session_id: event.properties.sessionID, hook_event_name: "Stop" }});
  }},
}});
"#,
        prompt = args("user-prompt-submit"),
        stop = args("stop"),
    );
    std::fs::write(p.dir.join(".opencode/plugin/origin-probe.js"), plugin).expect("plugin");
}

/// Trial: one session in which the host starts the probe as its MCP server
/// and its hooks, and the model runs it through its shell tool, plain and
/// as an agent's own MCP client. Keeps the records when asked, and returns
/// them by label.
pub fn measure(agent: &'static dyn AgentCli) -> Vec<Value> {
    let p = Project::with_setup(
        agent,
        60_000,
        |scratch| {
            let out = scratch.join("origin.jsonl");
            let name = agent.name();
            json!([
                agent.shell_call(&probe_line(&out, "shell", &format!("{name}/shell"))),
                agent.shell_call(&probe_line(&out, "client", &format!("{name}/shell-client"))),
                {"text": "probed"}
            ])
        },
        register_probe,
    );
    p.say(false, "Probe, please.").expect(0);
    let name = agent.name();
    for label in ["shell", "shell-client", "shell-client/child", "mcp"] {
        record(&p, &format!("{name}/{label}"));
    }
    let all = records(&p);
    if let Some(dir) = std::env::var_os("TICKLOOP_ORIGIN_RECORD") {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("the record's folder");
        let text: String = all.iter().map(|r| format!("{r}\n")).collect();
        std::fs::write(dir.join(format!("{name}.jsonl")), text).expect("keep the records");
    }
    all
}

/// Trial: [`measure`], then the facts Tickloop's decisions rest on.
pub fn facts(agent: &'static dyn AgentCli) {
    let records = measure(agent);
    assert!(!records.is_empty());
}
