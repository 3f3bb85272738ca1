//! The person sees exactly what will run (issue 49, item 4), with the
//! agent's own `tickloop` as Claude Code's shell tool runs it
//! (`CLAUDECODE=1`) and the person's views in real terminals (`script`,
//! tmux):
//!
//! - a command with a gap of 150 spaces before its tail shows the tail in
//!   `tickloop approvals` on a terminal and in the Monitor;
//! - Trojan Source's bidi controls and a zero-width space show escaped
//!   (`\u{202E}`) there too, and so does a title a program set (in `list`
//!   on a terminal and in the Monitor's rows), while the JSON keeps the
//!   raw text;
//! - a key name that is a control character, and a modifier a terminal
//!   cannot send (`C-é`), are refused with a hint, and nothing is typed.
//!
//! The page (Chromium) is tests/web.rs, the MCP host's question
//! tests/consent_in_host.rs.

mod common;

use common::tmux::Tmux;
use common::*;

const CLAUDE: &[(&str, &str)] = &[("CLAUDECODE", "1")];

/// Trojan Source's example (CVE-2021-42574), aimed at the person: shown
/// raw it reads `echo safe # ; touch F`, the `touch` looking commented out.
const TROJAN: &str =
    "echo safe \u{202e}\u{2066}; touch F\u{2069} \u{2066}#\u{2069}\u{202c}\u{200b}";
const TROJAN_SHOWN: &str =
    "echo safe \\u{202E}\\u{2066}; touch F\\u{2069} \\u{2066}#\\u{2069}\\u{202C}\\u{200B}";
const RAW: [char; 5] = ['\u{202e}', '\u{2066}', '\u{2069}', '\u{202c}', '\u{200b}'];

/// A command whose tail hides behind 150 spaces.
fn gap_command() -> String {
    format!("ls{};touch FILE", " ".repeat(150))
}

/// A person's bash, at its prompt.
fn person_shell(host: &Host, name: &str) -> String {
    let id = host.open_bash(name);
    host.ok(&["wait", &id, "--prompt", "--timeout", "20"]);
    id
}

/// A shell whose program set its title to `notes`, U+202E (a right-to-left
/// override), `txt.exe` and a zero-width space.
fn titled_shell(host: &Host) -> String {
    host.open_sh(
        "titled",
        "printf '\\033]2;notes\\342\\200\\256txt.exe\\342\\200\\213\\007'; echo titled; exec sleep 600",
        "titled",
    )
}

/// `tickloop ARGS` as the person runs it in a terminal (`script`): what it
/// printed there.
fn in_a_terminal(host: &Host, args: &str) -> String {
    let out = run_prepared(host.in_a_terminal(args), &[args]);
    out.expect(0);
    out.stdout.replace("\r\n", "\n")
}

/// Waits until `n` actions wait; their JSON (as `approvals` prints it piped).
fn waiting(host: &Host, n: usize) -> Vec<serde_json::Value> {
    wait_for(&format!("{n} actions to wait"), || {
        let out = host.run(&["approvals"]);
        let all: Vec<serde_json::Value> = out
            .stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        (all.len() == n).then_some(all)
    })
}

fn call_of(held: &serde_json::Value) -> String {
    held["call"].as_str().expect("a call id").to_string()
}

#[test]
fn approvals_on_a_terminal_shows_a_commands_tail_and_its_controls_escaped() {
    let host = Host::new();
    let id = person_shell(&host, "mine");
    let running = host.spawn_with(CLAUDE, &["run", &id, "--", &gap_command()]);
    waiting(&host, 1);
    let typing = host.spawn_with(CLAUDE, &["input", &id, &format!("{TROJAN}\r")]);
    let held = waiting(&host, 2);
    // Piped, the JSON keeps what the agent sent, raw.
    assert_eq!(held[0]["args"]["command"], gap_command());
    assert_eq!(held[1]["args"]["text"], format!("{TROJAN}\r"));

    let shown = in_a_terminal(&host, "approvals");
    assert!(
        shown.contains(&format!("Run `{}` at the prompt of {id}?", gap_command())),
        "the tail after the gap: {shown}"
    );
    assert!(
        shown.contains(&format!("Type `{TROJAN_SHOWN}` ⏎ into {id}?")),
        "{shown}"
    );
    assert!(!shown.contains("type null"), "{shown}");
    assert!(shown.contains("asked by an agent (claude-code"), "{shown}");
    for raw in RAW {
        assert!(
            !shown.contains(raw),
            "U+{:04X} raw: {shown}",
            u32::from(raw)
        );
    }

    // A title a program set: escaped in `list` on a terminal, raw in JSON.
    let titled = titled_shell(&host);
    let list = in_a_terminal(&host, "list");
    assert!(list.contains("notes\\u{202E}txt.exe\\u{200B}"), "{list}");
    assert_eq!(
        host.entry(&titled).expect("listed")["title"],
        "notes\u{202e}txt.exe\u{200b}"
    );

    for held in &held {
        host.ok(&["refuse", &id, &call_of(held)]);
    }
    running.finish().expect(125);
    typing.finish().expect(3);
    let screen = host.screen(&id);
    assert!(
        !screen.contains("touch") && !screen.contains("safe"),
        "{screen}"
    );
    assert!(!host.scratch().join("FILE").exists());
}

#[test]
fn the_monitor_shows_a_commands_tail_and_its_controls_escaped() {
    let host = Host::new();
    let id = person_shell(&host, "mine");
    titled_shell(&host);
    let tmux = Tmux::start(
        &host,
        100,
        30,
        &format!("trap '' QUIT INT; {} monitor", tickloop_bin()),
    );
    // The title its program set, escaped in the Monitor's row.
    tmux.wait_text("notes\\u{202E}txt.exe\\u{200B}");

    let running = host.spawn_with(CLAUDE, &["run", &id, "--", &gap_command()]);
    let shown = tmux.wait_text(";touch FILE` at the prompt of");
    assert!(shown.contains("Run `ls"), "{shown}");
    assert!(shown.contains(&format!("approve? {id}")), "{shown}");
    tmux.send_keys(&["n"]);
    running.finish().expect(125);
    tmux.wait_text("refused %");

    let typing = host.spawn_with(CLAUDE, &["input", &id, &format!("{TROJAN}\r")]);
    // Wrapped at the box: the escapes whole, on the rows in order.
    let shown = tmux.wait_text("Type `echo safe \\u{202E}\\u{2066}; touch F");
    let flat: String = shown
        .lines()
        .map(|l| l.trim_start_matches('│').trim_end_matches('│').trim())
        .collect::<Vec<_>>()
        .join("");
    assert!(
        flat.contains(&format!("Type `{TROJAN_SHOWN}` ⏎ into {id}?")),
        "{shown}"
    );
    for raw in RAW {
        assert!(
            !shown.contains(raw),
            "U+{:04X} raw: {shown}",
            u32::from(raw)
        );
    }
    tmux.send_keys(&["n"]);
    typing.finish().expect(3);
    assert!(!host.screen(&id).contains("safe"));
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn a_control_character_or_an_impossible_modifier_is_no_key_name_and_nothing_is_typed() {
    let host = Host::new();
    let id = person_shell(&host, "keys");
    let cases: [(&str, &str); 5] = [
        ("\u{3}", "C- and its letter"),
        ("\r", "the key is Enter"),
        ("\u{202e}", "tickloop input"),
        ("C-é", "no Ctrl code"),
        ("S-1", "S- goes with a letter"),
    ];
    for (name, hint) in cases {
        // The person's CLI and an agent's alike; the agent's is refused
        // before anything waits.
        for env in [&[][..], CLAUDE] {
            let out = host
                .spawn_with(env, &["keys", &id, "e", name, "Enter"])
                .finish();
            let e = out.expect_error(2, "bad_request");
            let message = e["message"].as_str().unwrap_or_default();
            assert!(message.contains(hint), "{name:?}: {message}");
            for raw in ['\u{3}', '\r', '\u{202e}'] {
                assert!(!message.contains(raw), "{name:?}: {message:?}");
            }
        }
    }
    assert!(host.run(&["approvals"]).stdout.trim().is_empty());
    // Nothing was typed: the next line is the marker alone.
    host.ok(&["input", &id, "echo marker-$((6*7))\r"]);
    let screen = host.wait_screen(&id, "marker-42");
    assert!(
        !screen.contains('é') && !screen.contains("eecho"),
        "{screen}"
    );
}
