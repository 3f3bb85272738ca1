//! Every program a person runs, usable by an agent (issue 38): keys by
//! name, waits the launcher is told about, a shell's commands as state, and
//! `run`, with real bash, zsh and fish in real PTYs.
//!
//! Each test's shells get a home of their own (`HOME` in the test's scratch
//! folder) with the person's files the test writes, so nothing of this
//! machine's dotfiles changes what they show. Waits here are `tickloop
//! wait` itself or bounded polls of a condition; `sleep` appears only
//! inside the commands the shells run.

mod common;
mod loop_support;

use common::home::{home, host_with_home};
use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::path::Path;
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest, HeldCall, RunRequest};

const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// Opens `program ARGS` as `shell:NAME` and waits for its first prompt.
fn open_shell(host: &Host, name: &str, program: &[&str]) -> String {
    let mut args = vec!["open", "--shell", "--name", name, "--"];
    args.extend_from_slice(program);
    host.ok(&args);
    let id = format!("shell:{name}");
    let waited = host.run(&["wait", &id, "--prompt", "--timeout", "20"]);
    waited.expect(0);
    id
}

/// `tickloop run ID -- COMMAND` (piped: JSON): its exit code and answer.
fn run(host: &Host, id: &str, command: &str) -> (i32, Value, Out) {
    let out = host.run(&["run", id, "--timeout", "20", "--", command]);
    let value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    (out.code, value, out)
}

/// The shell's state (`tickloop read`'s `data`).
fn shell_state(host: &Host, id: &str) -> Value {
    host.ok(&["read", id])["data"].clone()
}

fn output(v: &Value) -> &str {
    v["command"]["output"].as_str().unwrap_or_default()
}

#[test]
fn run_gives_each_commands_output_and_status_in_bash_zsh_and_fish() {
    let host = host_with_home(&[]);
    for shell in SHELLS {
        let id = open_shell(&host, shell, &[shell]);
        let (code, v, out) = run(&host, &id, "false");
        assert_eq!(code, 1, "{shell}: {out:?}");
        assert_eq!(v["command"]["exit"], 1, "{shell}: {v}");
        assert_eq!(output(&v), "", "{shell}");
        assert_eq!(v["command"]["command"], "false", "{shell}");

        let (code, v, out) = run(&host, &id, "printf 'a b'");
        assert_eq!(code, 0, "{shell}: {out:?}");
        assert_eq!(output(&v), "a b", "{shell}: {v}");

        let (code, v, out) = run(&host, &id, "sleep 2; echo done");
        assert_eq!(code, 0, "{shell}: {out:?}");
        assert_eq!(output(&v), "done\n", "{shell}: {v}");

        let (code, v, out) = run(&host, &id, "seq 10000");
        assert_eq!(code, 0, "{shell}: {out:?}");
        let text = output(&v);
        assert!(text.starts_with("1\n2\n3\n"), "{shell}: {text:.100}");
        assert!(text.ends_with("9999\n10000\n"), "{shell}");
        let bound = tickloop_proto::shell::OUTPUT_BOUND;
        assert!(text.len() < bound + 200, "{shell}: {} bytes", text.len());
        let cut = &v["command"]["output_cut"];
        assert!(
            cut["note"]
                .as_str()
                .unwrap_or_default()
                .contains("cut from the middle"),
            "{shell}: {cut}"
        );
        assert!(text.contains("cut here]"), "{shell}: the output says where");
        let kept = text.lines().filter(|l| !l.starts_with('[')).count() as u64;
        assert_eq!(kept + cut["lines"].as_u64().unwrap_or(0), 10_000, "{shell}");

        let (code, v, out) = run(&host, &id, "cd /tmp");
        assert_eq!(code, 0, "{shell}: {out:?}");
        assert_eq!(v["cwd"], "/tmp", "{shell}: {v}");
        let state = shell_state(&host, &id);
        assert_eq!(state["cwd"], "/tmp", "{shell}: {state}");
        assert_eq!(state["at_prompt"], true, "{shell}");
        let commands: Vec<&str> = state["commands"]
            .as_array()
            .expect("commands")
            .iter()
            .map(|c| c["command"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(
            commands,
            [
                "false",
                "printf 'a b'",
                "sleep 2; echo done",
                "seq 10000",
                "cd /tmp"
            ],
            "{shell}"
        );
        let described = host.ok(&["describe", &id]);
        assert_eq!(described["shell"]["shell"], shell);
        assert_eq!(described["shell"]["kind"], "injected");
        assert_eq!(described["shell"]["active"], true);
    }
}

#[test]
fn keys_c_c_interrupts_a_running_command_whose_status_is_then_130() {
    // Right prompts, drawn past the cursor: not text on the command line.
    let host = host_with_home(&[
        (".zshrc", "RPROMPT='right-side'\n"),
        (
            ".config/fish/config.fish",
            "function fish_right_prompt; echo -n right-side; end\n",
        ),
    ]);
    for shell in SHELLS {
        let id = open_shell(&host, shell, &[shell]);
        // A command still running at the timeout: 124, and it runs on.
        let out = host.run(&["run", &id, "--timeout", "0.5", "--", "sleep 100"]);
        out.expect(124);
        let v = out.json();
        assert_eq!(v["timed_out"], true, "{shell}: {v}");
        assert_eq!(v["command"]["ended"], Value::Null, "{shell}");
        assert!(
            out.stderr.contains("was not stopped"),
            "{shell}: {}",
            out.stderr
        );
        let state = shell_state(&host, &id);
        assert_eq!(state["running"]["command"], "sleep 100", "{shell}: {state}");
        // Not at its prompt: Tickloop's own failure (125), nothing typed.
        let out = host.run(&["run", &id, "--", "echo typed-while-busy"]);
        let e = out.expect_error(125, "bad_request");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("`sleep 100` is running") && message.contains("wait"),
            "{shell}: {message}"
        );

        host.ok(&["keys", &id, "C-c"]);
        let waited = host.ok(&["wait", &id, "--prompt", "--timeout", "20"]);
        let commands = waited["shell"]["commands"].as_array().expect("commands");
        let last = commands.last().cloned().expect("a command");
        assert_eq!(last["command"], "sleep 100", "{shell}: {last}");
        assert_eq!(last["exit"], 130, "{shell}: {last}");
        assert_eq!(commands.len(), 1, "{shell}: {commands:?}");
        assert!(
            !host.screen(&id).contains("typed-while-busy"),
            "{shell}: the refused command reached the terminal"
        );

        // Text of the person's on the prompt line: 125 again, nothing typed.
        host.ok(&["keys", &id, "e", "c", "x", "z"]);
        host.ok(&["wait", &id, "--text", "ecxz", "--screen"]);
        let out = host.run(&["run", &id, "--", "true"]);
        let e = out.expect_error(125, "bad_request");
        let message = e["message"].as_str().unwrap_or_default();
        assert!(message.contains("has text on it"), "{shell}: {message}");
        host.ok(&["keys", &id, "C-u"]);
        let (code, v, out) = run(&host, &id, "echo clean");
        assert_eq!((code, output(&v)), (0, "clean\n"), "{shell}: {out:?}");
    }
}

/// A line the shell cannot parse starts no command: the shell says why
/// and is back at its prompt (bash, zsh), or keeps the line there for
/// editing (fish). The `run` that typed it ends at its timeout; the next
/// `run` is typed (bash, zsh) or refused for the line fish kept, and never
/// refused as "another run is being typed" while the shell sits idle.
#[test]
fn a_line_the_shell_cannot_parse_does_not_lock_out_the_runs_after_it() {
    let host = host_with_home(&[]);
    for (shell, bad) in [("bash", "fi"), ("zsh", "fi"), ("fish", "echo $((6*7))")] {
        let id = open_shell(&host, shell, &[shell]);
        let out = host.run(&["run", &id, "--timeout", "1", "--", bad]);
        assert_ne!(out.code, 0, "{shell}: {out:?}");
        if shell == "fish" {
            let out = host.run(&["run", &id, "--", "echo next"]);
            let e = out.expect_error(125, "bad_request");
            let message = e["message"].as_str().unwrap_or_default();
            assert!(message.contains("has text on it"), "{shell}: {message}");
            host.ok(&["keys", &id, "C-u"]);
        }
        let (code, v, out) = run(&host, &id, "echo next");
        assert_eq!((code, output(&v)), (0, "next\n"), "{shell}: {out:?}");
    }
}

#[test]
fn run_right_after_keys_waits_for_the_shell_to_answer_them() {
    // A person's zsh whose `C-u` takes its time before it clears the line,
    // as a slow widget or a loaded machine makes any shell.
    let host = host_with_home(&[(
        ".zshrc",
        "slow-kill() { sleep 0.6; zle kill-whole-line; }\nzle -N slow-kill\nbindkey '^U' slow-kill\n",
    )]);
    let id = open_shell(&host, "slow", &["zsh"]);
    host.ok(&["keys", &id, "e", "c", "x", "z"]);
    host.ok(&["wait", &id, "--text", "ecxz", "--screen"]);
    // `run` at once: the line still shows "ecxz" until the shell answers
    // the `C-u`; the answer is waited for, and the command typed after it.
    host.ok(&["keys", &id, "C-u"]);
    let (code, v, out) = run(&host, &id, "echo clean");
    assert_eq!((code, output(&v)), (0, "clean\n"), "{out:?}");
    assert_eq!(shell_state(&host, &id)["commands_total"], 1);
    // Text the shell has shown, with nothing typed since, is refused at
    // once as before.
    host.ok(&["keys", &id, "q", "w", "j", "k"]);
    host.ok(&["wait", &id, "--text", "qwjk", "--screen"]);
    let out = host.run(&["run", &id, "--", "true"]);
    let e = out.expect_error(125, "bad_request");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("has text on it"), "{message}");
    assert_eq!(shell_state(&host, &id)["commands_total"], 1);
}

#[test]
fn wait_prompt_right_after_enter_waits_for_the_command_it_started() {
    // A person's zsh whose Enter takes its time before the shell takes the
    // line, as a slow widget or a loaded machine makes any shell; and a
    // key bound to nothing at all. (Once `~/slow-preexec` is there, a new
    // zsh has a slow preexec hook instead.)
    let host = host_with_home(&[(
        ".zshrc",
        "if [[ -e ~/slow-preexec ]]; then preexec() { sleep 0.3 }; else\n\
         slow-accept() { sleep 0.4; zle accept-line; }\nzle -N slow-accept\nbindkey '^M' slow-accept\n\
         do-nothing() { : }\nzle -N do-nothing\nbindkey '^J' do-nothing\nfi\n",
    )]);
    let id = open_shell(&host, "enter", &["zsh"]);
    // `wait --prompt` at once after the Enter: the shell still shows its
    // prompt with the line on it until it takes the line; the command the
    // Enter started is waited for.
    host.ok(&["keys", &id, "e", "c", "h", "o", "Space", "h", "i", "Enter"]);
    let waited = host.ok(&["wait", &id, "--prompt", "--timeout", "20"]);
    let shell = &waited["shell"];
    assert_eq!(shell["commands_total"], 1, "{waited}");
    assert_eq!(shell["at_prompt"], true, "{waited}");
    assert_eq!(shell["commands"][0]["command"], "echo hi", "{waited}");
    assert_eq!(shell["commands"][0]["exit"], 0, "{waited}");
    // An Enter the shell never answers with a mark (here ctrl+J, bound to
    // nothing) holds the wait only for a while: the shell is at its prompt.
    host.ok(&["keys", &id, "C-j"]);
    let waited = host.ok(&["wait", &id, "--prompt", "--timeout", "20"]);
    assert_eq!(waited["timed_out"], Value::Null, "{waited}");
    assert_eq!(waited["shell"]["commands_total"], 1, "{waited}");
    // `run` at once after an Enter: the line is echoed with its newline
    // at once, but the shell takes it only once its preexec hook is done;
    // the command is typed after the one the Enter started has ended.
    let home = host.scratch().join("home");
    std::fs::write(home.join("slow-preexec"), "").expect("write the flag");
    let id = open_shell(&host, "preexec", &["zsh"]);
    host.ok(&[
        "keys", &id, "e", "c", "h", "o", "Space", "r", "a", "n", "Enter",
    ]);
    let (code, v, out) = run(&host, &id, "echo second");
    assert_eq!((code, output(&v)), (0, "second\n"), "{out:?}");
    let state = shell_state(&host, &id);
    assert_eq!(state["commands"][0]["command"], "echo ran", "{state}");
    assert_eq!(state["commands_total"], 2, "{state}");
    // bash and fish mark the line they take too: a command that outlasts
    // the hold is waited for to its end.
    for shell in ["bash", "fish"] {
        let id = open_shell(&host, shell, &[shell]);
        let keys = ["s", "l", "e", "e", "p", "Space", "2", ".", "5", "Enter"];
        host.ok(&[&["keys", id.as_str()][..], &keys[..]].concat());
        let waited = host.ok(&["wait", &id, "--prompt", "--timeout", "20"]);
        let shell_state = &waited["shell"];
        assert_eq!(shell_state["commands_total"], 1, "{shell}: {waited}");
        assert_eq!(
            shell_state["commands"][0]["command"], "sleep 2.5",
            "{shell}: {waited}"
        );
    }
}

#[test]
fn an_unknown_key_name_is_a_usage_error_and_nothing_is_typed() {
    let host = host_with_home(&[]);
    let id = open_shell(&host, "b", &["bash"]);
    let before = host.screen(&id);
    let out = host.run(&["keys", &id, "e", "c", "h", "o", "Enter", "Nope"]);
    let error = out.expect_error(2, "bad_request");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"Nope\""), "{message}");
    assert!(message.contains("tickloop input"), "{message}");
    // Nothing reached the shell: the screen and its commands are as they were.
    host.ok(&["wait", &id, "--quiet", "300"]);
    assert_eq!(host.screen(&id), before);
    assert_eq!(shell_state(&host, &id)["commands_total"], 0);
    // Known names are typed, in the program's modes.
    host.ok(&[
        "keys", &id, "e", "c", "h", "o", "Space", "k", "e", "y", "s", "Enter",
    ]);
    let waited = host.ok(&["wait", &id, "--text", "^keys$", "--screen"]);
    assert_eq!(waited["line"], "keys");
}

/// `path` with 300 numbered lines.
fn numbered_file(dir: &Path) -> String {
    let path = dir.join("numbers.txt");
    let text: String = (1..=300).map(|n| format!("line {n}\n")).collect();
    std::fs::write(&path, text).expect("write the file");
    path.to_string_lossy().into_owned()
}

/// Tickloop's screen of `id` as tmux captures a pane: every row, trailing
/// blanks trimmed; and its cursor.
fn screen_rows(host: &Host, id: &str) -> (Vec<String>, (u64, u64)) {
    let v = host.ok(&["screen", id, "--json"]);
    let mut rows: Vec<String> = v["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().unwrap_or_default().to_string())
        .collect();
    rows.resize(30, String::new());
    let cursor = (
        v["cursor"]["row"].as_u64().unwrap_or(0),
        v["cursor"]["col"].as_u64().unwrap_or(0),
    );
    (rows, cursor)
}

fn tmux_rows(tmux: &Tmux) -> (Vec<String>, (u64, u64)) {
    let mut rows: Vec<String> = tmux
        .capture()
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect();
    rows.resize(30, String::new());
    let at = tmux.cmd(&[
        "display-message",
        "-p",
        "-t",
        "0",
        "#{cursor_y} #{cursor_x}",
    ]);
    let mut parts = at.split_whitespace().map(|n| n.parse::<u64>().unwrap_or(0));
    let cursor = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (rows, cursor)
}

/// Runs `program` under Tickloop and in tmux at the same size and TERM,
/// presses `keys` in both (`tickloop keys`, `tmux send-keys`), and, once
/// tmux's rows are `done` (the keys' final effect), expects Tickloop's
/// screen and cursor to be the same.
fn same_as_tmux(
    name: &str,
    program: &[&str],
    ready: &str,
    keys: &[&str],
    done: impl Fn(&[String]) -> bool,
) {
    let host = host_with_home(&[]);
    let mut open = vec!["open", "--shell", "--name", name, "--"];
    open.extend_from_slice(program);
    host.ok(&open);
    let id = format!("shell:{name}");
    host.wait_screen(&id, ready);
    let quoted: Vec<String> = program.iter().map(|w| format!("'{w}'")).collect();
    let line = format!("env TERM=xterm-256color {}", quoted.join(" "));
    let tmux = Tmux::start(&host, 120, 30, &line);
    tmux.wait_text(ready);

    let mut args = vec!["keys", id.as_str()];
    args.extend_from_slice(keys);
    host.ok(&args);
    tmux.send_keys(keys);
    wait_for("tmux to show the keys' effect", || {
        done(&tmux_rows(&tmux).0).then_some(())
    });
    let last = std::cell::RefCell::new(None);
    let same = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for("Tickloop's screen to be tmux's", || {
            let ours = screen_rows(&host, &id);
            let theirs = tmux_rows(&tmux);
            let same = ours == theirs;
            *last.borrow_mut() = Some((ours, theirs));
            same.then_some(())
        })
    }));
    if same.is_err() {
        let (ours, theirs) = last.borrow().clone().expect("compared once");
        panic!(
            "{program:?} after {keys:?}: Tickloop shows (cursor {:?})\n{}\n---- tmux shows (cursor {:?})\n{}",
            ours.1,
            ours.0.join("\n"),
            theirs.1,
            theirs.0.join("\n")
        );
    }
}

#[test]
fn keys_down_scrolls_less_exactly_as_tmux_send_keys_does() {
    let dir = tempfile::tempdir().expect("dir");
    let file = numbered_file(dir.path());
    same_as_tmux(
        "less",
        &["less", &file],
        "line 29",
        &["Down", "Down", "Down", "PageDown", "Up"],
        // Three lines down, a page of 29, one up.
        |rows| rows[0] == "line 32",
    );
}

#[test]
fn keys_down_moves_in_vim_exactly_as_tmux_send_keys_does() {
    let dir = tempfile::tempdir().expect("dir");
    let file = numbered_file(dir.path());
    same_as_tmux(
        "vim",
        &[
            "vim",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-N",
            "-n",
            "-c",
            "set ruler",
            &file,
        ],
        "line 29",
        &["Down", "Down", "Down", "End", "Left"],
        // The ruler: line 4, column 5.
        |rows| rows[29].contains("4,5"),
    );
}

#[test]
fn a_command_the_person_types_is_state_and_watch_names_it_with_its_status() {
    let host = host_with_home(&[
        (".bashrc", "PS1='ps1> '\n"),
        (".zshrc", "PROMPT='ps1> '\n"),
        (
            ".config/fish/config.fish",
            "function fish_prompt; echo -n 'ps1> '; end\n",
        ),
    ]);
    for shell in SHELLS {
        let id = open_shell(&host, shell, &[shell]);
        let mut watch = host.watch(&[&id, "--interval", "50"]);
        let first = watch.next();
        assert_eq!(first["instance"], id.as_str(), "{first}");
        // The person types in a real view of the shell.
        let tmux = Tmux::attach(&host, &id, 100, 30);
        tmux.wait_text("ps1>");
        tmux.type_text("ls /nonexistent-dir");
        tmux.send_keys(&["Enter"]);
        let ended = wait_for("a delivery naming the typed command's end", || {
            let v = watch.next();
            let last = v["data"]["commands"].as_array()?.last()?.clone();
            (last["command"] == "ls /nonexistent-dir").then_some(last)
        });
        assert_eq!(ended["exit"], 2, "{shell}: {ended}");
        assert!(
            ended["output"]
                .as_str()
                .unwrap_or_default()
                .contains("No such file"),
            "{shell}: {ended}"
        );
        drop(tmux);
        let _ = host.run(&["close", &id]);
    }
}

#[test]
fn the_persons_alias_prompt_and_hooks_still_work() {
    let host = host_with_home(&[
        (
            ".bashrc",
            "alias greet='echo BASH-ALIAS'\nPS1='custom-prompt> '\nPROMPT_COMMAND='echo \"pc status=$?\" >> ~/pc.log'\n",
        ),
        (
            ".zshrc",
            "alias greet='echo ZSH-ALIAS'\nPROMPT='zsh-prompt%# '\nprecmd() { echo \"precmd status=$?\" >> ~/precmd.log }\n",
        ),
        (
            ".config/fish/config.fish",
            "alias greet 'echo FISH-ALIAS'\nfunction fish_prompt; echo -n 'fishy> '; end\n",
        ),
    ]);
    let bash = open_shell(&host, "bash", &["bash"]);
    let (code, v, _) = run(&host, &bash, "greet");
    assert_eq!((code, output(&v)), (0, "BASH-ALIAS\n"), "{v}");
    assert!(host.screen(&bash).contains("custom-prompt> "));
    run(&host, &bash, "false");
    let log = std::fs::read_to_string(home(&host).join("pc.log")).expect("PROMPT_COMMAND ran");
    assert_eq!(log.lines().last(), Some("pc status=1"), "{log}");

    let zsh = open_shell(&host, "zsh", &["zsh"]);
    let (code, v, _) = run(&host, &zsh, "greet");
    assert_eq!((code, output(&v)), (0, "ZSH-ALIAS\n"), "{v}");
    assert!(host.screen(&zsh).contains("zsh-prompt"));
    run(&host, &zsh, "false");
    let log = std::fs::read_to_string(home(&host).join("precmd.log")).expect("precmd ran");
    assert_eq!(log.lines().last(), Some("precmd status=1"), "{log}");
    // Its child shells are not integrated: ZDOTDIR is the person's again.
    let (_, v, _) = run(&host, &zsh, "echo \"zdotdir=[$ZDOTDIR]\"");
    assert_eq!(output(&v), "zdotdir=[]\n");

    let fish = open_shell(&host, "fish", &["fish"]);
    let (code, v, _) = run(&host, &fish, "greet");
    assert_eq!((code, output(&v)), (0, "FISH-ALIAS\n"), "{v}");
    assert!(host.screen(&fish).contains("fishy> "));
    let (_, v, _) = run(&host, &fish, "echo \"xdg=[$XDG_DATA_DIRS]\"");
    assert_eq!(
        output(&v),
        "xdg=[]\n",
        "XDG_DATA_DIRS is the person's again"
    );
}

/// bash marks of a person's own, in PS1, PS0 and PROMPT_COMMAND.
const OWN_MARKS: &str = "PS1='\\[\\e]133;A\\a\\]mine$ \\[\\e]133;B\\a\\]'; PS0='\\e]133;C\\a'; PROMPT_COMMAND='printf \"\\e]133;D;%s\\a\" $?'";

#[test]
fn marks_from_the_prompt_itself_are_read_the_same_and_integration_turns_off() {
    let host = host_with_home(&[(".bashrc", &format!("{OWN_MARKS}\n"))]);
    // The person's marks and Tickloop's together: each command counted once.
    let both = open_shell(&host, "both", &["bash"]);
    for (command, status) in [("true", 0), ("false", 1), ("(exit 7)", 7)] {
        let (code, v, _) = run(&host, &both, command);
        assert_eq!(
            (code, v["command"]["exit"].as_i64()),
            (status, Some(i64::from(status)))
        );
    }
    assert_eq!(shell_state(&host, &both)["commands_total"], 3);

    // Without Tickloop's integration, and no marks: no shell state, no run.
    host.ok(&[
        "open",
        "--shell",
        "--no-integration",
        "--name",
        "plain",
        "--",
        "bash",
        "--norc",
    ]);
    host.wait_screen("shell:plain", "bash-");
    let described = host.ok(&["describe", "shell:plain"]);
    assert_eq!(described["shell"], Value::Null, "{described}");
    says_turned_off(&described);
    host.run(&["read", "shell:plain"])
        .expect_error(1, "not_a_tick");
    let out = host.run(&["run", "shell:plain", "--", "true"]);
    out.expect_error(125, "not_a_tick");
    assert!(
        out.stderr.contains("no shell integration"),
        "{}",
        out.stderr
    );
    host.run(&["wait", "shell:plain", "--prompt"])
        .expect_error(1, "not_a_tick");

    // The person's own marks (typed now) are enough.
    host.ok(&["keys", "shell:plain", "C-u"]);
    host.ok(&["input", "shell:plain", OWN_MARKS]);
    host.ok(&["keys", "shell:plain", "Enter"]);
    let described = wait_for("the shell's own marks to be seen", || {
        let described = host.ok(&["describe", "shell:plain"]);
        described["shell"].is_object().then_some(described)
    });
    assert_eq!(described["shell"]["kind"], "marks");
    let (code, v, _) = run(&host, "shell:plain", "echo own-marks");
    assert_eq!((code, output(&v)), (0, "own-marks\n"), "{v}");

    // `[shell] integration = false` in the settings file does the same as
    // --no-integration.
    let config = home(&host).join(".config/tickloop/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("dir");
    std::fs::write(&config, "[shell]\nintegration = false\n").expect("config");
    host.ok(&["open", "--shell", "--name", "off", "--", "bash", "--norc"]);
    host.wait_screen("shell:off", "bash-");
    says_turned_off(&host.ok(&["describe", "shell:off"]));
}

/// `describe` says the integration was turned off.
fn says_turned_off(described: &Value) {
    let why = described["no_integration"].as_str().unwrap_or_default();
    assert!(why.starts_with("turned off"), "{described}");
}

#[test]
fn run_into_a_python_repl_exits_125_with_nothing_typed() {
    let host = host_with_home(&[]);
    host.ok(&[
        "open",
        "--shell",
        "--name",
        "py",
        "--",
        "/usr/bin/python3",
        "-q",
    ]);
    host.ok(&["wait", "shell:py", "--text", "^>>>$", "--screen"]);
    let before = host.screen("shell:py");
    let out = host.run(&["run", "shell:py", "--", "print(6*7)"]);
    out.expect_error(125, "not_a_tick");
    assert!(out.stderr.contains("python3"), "{}", out.stderr);
    host.ok(&["wait", "shell:py", "--quiet", "300"]);
    assert_eq!(host.screen("shell:py"), before, "nothing was typed");
}

#[test]
fn waits_answer_on_text_quiet_prompt_and_end_and_exit_124_at_the_timeout() {
    let host = host_with_home(&[]);
    host.ok(&[
        "open",
        "--shell",
        "--name",
        "ticker",
        "--",
        "sh",
        "-c",
        "i=0; while :; do i=$((i+1)); echo \"tick $i\"; sleep 0.2; done",
    ]);
    host.wait_screen("shell:ticker", "tick 2");
    let seen: u64 = host
        .screen("shell:ticker")
        .lines()
        .filter_map(|l| l.strip_prefix("tick ")?.parse().ok())
        .max()
        .expect("a tick on screen");
    // Text that arrives after the wait starts.
    let v = host.ok(&[
        "wait",
        "shell:ticker",
        "--text",
        "tick (\\d+)",
        "--timeout",
        "20",
    ]);
    let n: u64 = v["matched"]
        .as_str()
        .and_then(|m| m.strip_prefix("tick "))
        .and_then(|n| n.parse().ok())
        .expect("a match");
    assert!(
        n > seen,
        "matched tick {n}, but ticks up to {seen} were on the screen already"
    );
    assert_eq!(v["line"], format!("tick {n}"));
    assert!(!v["screen"].as_array().expect("screen").is_empty());
    // Text already on the screen, with --screen.
    let v = host.ok(&["wait", "shell:ticker", "--text", "^tick \\d+$", "--screen"]);
    assert!(v["matched"]
        .as_str()
        .unwrap_or_default()
        .starts_with("tick "));
    // Never quiet, never matching: exit 124, the screen printed all the same.
    let out = host.run(&["wait", "shell:ticker", "--quiet", "500", "--timeout", "1"]);
    out.expect(124);
    assert_eq!(out.json()["timed_out"], true);
    assert!(out.stderr.contains("timed out"), "{}", out.stderr);
    let out = host.run(&[
        "wait",
        "shell:ticker",
        "--text",
        "never printed",
        "--timeout",
        "0.5",
    ]);
    out.expect(124);
    // No integration in a plain sh: no prompt to wait for.
    host.run(&["wait", "shell:ticker", "--prompt"])
        .expect_error(1, "not_a_tick");
    // Usage: exactly one thing to wait for, a regular expression that is one.
    host.run(&["wait", "shell:ticker"]).expect(2);
    host.run(&["wait", "shell:ticker", "--text", "("])
        .expect_error(2, "bad_request");

    // Quiet, on a shell at its prompt; then the prompt after a command.
    let id = open_shell(&host, "b", &["bash"]);
    let v = host.ok(&["wait", &id, "--quiet", "200"]);
    assert_eq!(v["timed_out"], Value::Null);
    host.run(&["run", &id, "--timeout", "0.2", "--", "sleep 1"])
        .expect(124);
    let v = host.ok(&["wait", &id, "--prompt"]);
    assert_eq!(v["shell"]["commands"][0]["exit"], 0, "{v}");

    // The end, waited for while the program runs.
    host.ok(&[
        "open",
        "--shell",
        "--name",
        "once",
        "--",
        "sh",
        "-c",
        "read x; echo bye $x",
    ]);
    let waiting = host.spawn(&["wait", "shell:once", "--ended", "--timeout", "20"]);
    host.ok(&["keys", "shell:once", "o", "k", "Enter"]);
    let out = waiting.finish();
    out.expect(0);
    let v = out.json();
    assert!(
        v["ended"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("exit"),
        "{v}"
    );
    assert!(v["screen"].to_string().contains("bye ok"), "{v}");
    // And once it has ended, at once.
    let v = host.ok(&["wait", "shell:once", "--ended"]);
    assert!(v["ended"].is_object(), "{v}");
}

/// An agent's request on a connection of its own (hello says `mcp`); the
/// reply, with each "it waits" sent to `held` meanwhile.
fn agent_request(
    host: &Host,
    request: ClientRequest,
    held: std::sync::mpsc::Sender<HeldCall>,
) -> std::thread::JoinHandle<ClientReply> {
    let runtime = host.runtime().to_path_buf();
    std::thread::spawn(move || {
        let mut agent = Client::connect(&runtime, ClientKind::Mcp).expect("the agent connects");
        agent
            .request_waiting(request, std::time::Duration::from_secs(20), |h| {
                let _ = held.send(h.clone());
            })
            .expect("tickhost answers the agent")
    })
}

#[test]
fn an_agents_run_on_the_persons_shell_waits_for_their_consent() {
    let host = host_with_home(&[]);
    let id = open_shell(&host, "mine", &["bash"]);
    let run = |command: &str| ClientRequest::Run {
        instance: id.clone(),
        run: RunRequest {
            command: command.into(),
            timeout_ms: 20_000,
        },
    };
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let agent = agent_request(&host, run("echo consent-given"), held_tx);
    let held = held_rx
        .recv_timeout(WAIT)
        .expect("the agent hears that its run waits");
    assert_eq!(held.tool, "run");
    assert_eq!(held.args["command"], "echo consent-given");
    // Nothing typed while it waits.
    assert_eq!(shell_state(&host, &id)["commands_total"], 0);
    let listed = host.run(&["approvals"]).stdout;
    assert!(listed.contains("echo consent-given"), "{listed}");
    host.ok(&["approve", &id, &held.call]);
    let reply = agent.join().expect("the agent's thread");
    let ClientReply::Ok(v) = reply else {
        panic!("the approved run failed: {reply:?}");
    };
    assert_eq!(v["command"]["output"], "consent-given\n", "{v}");

    // Refused: nothing typed, and the agent hears who refused.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let agent = agent_request(&host, run("echo never"), held_tx);
    let held = held_rx.recv_timeout(WAIT).expect("held again");
    host.ok(&["refuse", &id, &held.call, "--reason", "not now"]);
    match agent.join().expect("the agent's thread") {
        ClientReply::Error(e) => assert!(e.message.contains("not now"), "{e:?}"),
        other => panic!("a refused run answered {other:?}"),
    }
    assert_eq!(shell_state(&host, &id)["commands_total"], 1);
}

/// Polls the Loop's `/tick status` until it shows `needle`.
fn loop_status(h: &mut loop_support::LoopHarness, needle: &str) -> String {
    wait_for(&format!("the Loop's status to show {needle:?}"), || {
        let status = h.status();
        status.contains(needle).then_some(status)
    })
}

#[test]
fn the_loop_gets_a_subscribed_shells_command_end_on_its_next_time_step() {
    let host = host_with_home(&[]);
    let id = open_shell(&host, "build", &["bash"]);
    let mut h = loop_support::LoopHarness::start_from(
        "shell-subscription",
        host.command(&[]),
        &["--delay-ms", "20", "--interval-ms", "100"],
    );
    h.send(serde_json::json!({"type": "subscribe", "instances": [id]}));
    let (ok, text) = h.expect_reply();
    assert!(ok && text.contains(&id), "{text}");
    loop_status(&mut h, &format!("{id} (0 updates pending)"));

    // A command starts and ends: two deliveries, merged for the next step.
    let (code, _, _) = run(&host, &id, "ls /nonexistent-dir");
    assert_eq!(code, 2);
    loop_status(&mut h, &format!("{id} (2 updates pending)"));
    h.turn("watch the build", "completed");
    assert!(h.command("/tick 1").0);
    let step = h.expect_enqueue();
    let part = step["message"]["content"]
        .as_array()
        .and_then(|c| c.iter().find(|p| p["data"]["instance"] == id.as_str()))
        .unwrap_or_else(|| panic!("no data part for {id}: {step}"));
    let data = &part["data"];
    assert_eq!(data["updates"], 2, "{data}");
    let last = data["data"]["commands"]
        .as_array()
        .and_then(|c| c.last().cloned())
        .expect("the command");
    assert_eq!(last["command"], "ls /nonexistent-dir", "{last}");
    assert_eq!(last["exit"], 2, "{last}");
    h.step_turn(&step["message"], "completed");
    h.wait_ledger("loop_complete");
}
