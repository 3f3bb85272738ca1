//! Shells as people start them (issue 50): real bash, zsh and fish opened
//! with `--shell` each of the ways people type them, with a person's own
//! startup files. Every one runs; where the integration can go in, `run`
//! works and the person's prompt, PROMPT_COMMAND, precmd and vi mode
//! still do; where it cannot, the shell starts exactly as typed and
//! `open`, `list` and `describe` say why.

mod common;

use common::home::{home, host_with_home};
use common::*;
use serde_json::Value;

/// Opens `program` as `shell:NAME` and waits for its first prompt (the
/// integration's marks: `wait --prompt` needs them).
fn open_shell(host: &Host, name: &str, program: &[&str]) -> String {
    let mut args = vec!["open", "--shell", "--name", name, "--"];
    args.extend_from_slice(program);
    let opened = host.ok(&args);
    assert_eq!(opened["state"], "running", "{program:?}: {opened}");
    assert_eq!(
        opened["no_integration"],
        Value::Null,
        "{program:?}: {opened}"
    );
    let id = format!("shell:{name}");
    host.run(&["wait", &id, "--prompt", "--timeout", "20"])
        .expect(0);
    id
}

/// `tickloop run ID -- COMMAND`: its exit code and the command's output.
fn run(host: &Host, id: &str, command: &str) -> (i32, String) {
    let out = host.run(&["run", id, "--timeout", "20", "--", command]);
    let value: Value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    let output = value["command"]["output"].as_str().unwrap_or_default();
    assert!(
        out.code != 125,
        "{id}: `{command}` was not run: {}",
        out.stderr
    );
    (out.code, output.to_string())
}

/// The last line of the person's log `name` in the home.
fn last_line(host: &Host, name: &str) -> String {
    let text = std::fs::read_to_string(home(host).join(name)).unwrap_or_default();
    text.lines().last().unwrap_or_default().to_string()
}

/// Types `echo xyz`, then in vi's command mode goes back a word and
/// inserts `A` before it: vi mode works when the shell ran `echo Axyz`.
fn vi_mode_edits(host: &Host, id: &str) {
    host.ok(&[
        "keys", id, "e", "c", "h", "o", "Space", "x", "y", "z", "Escape", "b", "i", "A", "Enter",
    ]);
    host.run(&["wait", id, "--prompt", "--timeout", "20"])
        .expect(0);
    let state = host.read(id)["data"].clone();
    let last = state["commands"]
        .as_array()
        .and_then(|c| c.last())
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(last["command"], "echo Axyz", "{id}: {state}");
    assert_eq!(last["output"], "Axyz\n", "{id}: {state}");
}

/// The person's bash files: each says it was read, and sets a prompt and a
/// PROMPT_COMMAND of its own.
fn bash_file(read: &str) -> String {
    format!(
        "READ={read}\nPS1='{read}> '\nPROMPT_COMMAND='echo \"pc $?\" >> ~/pc.log'\nalias greet='echo hello-from-{read}'\n"
    )
}

#[test]
fn bash_started_every_common_way_runs_with_the_persons_files_and_run_works() {
    let rc = bash_file("rc");
    let login = bash_file("login");
    let file = bash_file("file");
    let host = host_with_home(&[
        (".bashrc", &rc),
        (".bash_profile", &login),
        ("my.rc", &file),
    ]);
    let my_rc = home(&host).join("my.rc").to_string_lossy().into_owned();
    // What each reads, as bash itself would: ~/.bashrc, a login shell's
    // profile, --rcfile's file, or (--norc) nothing.
    let forms: [(&[&str], &str); 10] = [
        (&["-i"], "rc"),
        (&["-il"], "login"),
        (&["-i", "-l"], "login"),
        (&["--login", "-i"], "login"),
        (&["--norc", "-i"], ""),
        (&["-o", "vi"], "rc"),
        (&["-O", "extglob", "-i"], "rc"),
        (&["--rcfile", &my_rc, "-i"], "file"),
        (&["-l"], "login"),
        (&[], "rc"),
    ];
    for (n, (args, read)) in forms.iter().enumerate() {
        let mut program = vec!["bash"];
        program.extend_from_slice(args);
        let id = open_shell(&host, &format!("b{n}"), &program);
        let described = host.ok(&["describe", &id]);
        assert_eq!(described["shell"]["kind"], "injected", "{args:?}");
        assert_eq!(described["shell"]["active"], true, "{args:?}");

        let (code, out) = run(&host, &id, "echo \"read=[${READ-}]\"");
        assert_eq!(
            (code, out.as_str()),
            (0, format!("read=[{read}]\n").as_str()),
            "{args:?}"
        );
        if read.is_empty() {
            // --norc: bash's own prompt, no PROMPT_COMMAND of the person's.
            assert!(host.screen(&id).contains("bash-"), "{args:?}");
            continue;
        }
        // Their alias, prompt and PROMPT_COMMAND (with the command's status).
        let (code, out) = run(&host, &id, "greet");
        assert_eq!((code, out), (0, format!("hello-from-{read}\n")), "{args:?}");
        assert!(host.screen(&id).contains(&format!("{read}> ")), "{args:?}");
        let (code, _) = run(&host, &id, "false");
        assert_eq!(code, 1, "{args:?}");
        assert_eq!(last_line(&host, "pc.log"), "pc 1", "{args:?}");
    }
    // The options given stay theirs.
    let (_, out) = run(&host, "shell:b5", "set -o | grep -E '^vi '");
    assert!(out.contains("on"), "-o vi: {out}");
    vi_mode_edits(&host, "shell:b5");
    let (_, out) = run(&host, "shell:b6", "shopt extglob");
    assert!(out.contains("on"), "-O extglob: {out}");
}

#[test]
fn bash_under_set_e_and_set_u_is_not_ended_by_the_integration_nor_leaks_its_prompt_command() {
    let host = host_with_home(&[(
        ".bashrc",
        "PS1='eu> '\nexport PROMPT_COMMAND='echo pc >> ~/pc.log'\n",
    )]);
    let id = open_shell(&host, "eu", &["bash", "-eu"]);
    // A status the integration hands on at the prompt never ends the shell.
    let (code, _) = run(&host, &id, "! true");
    assert_eq!(code, 1);
    let (code, out) = run(&host, &id, "echo \"alive $-\"");
    assert_eq!(code, 0);
    assert!(
        out.starts_with("alive ") && out.contains('e') && out.contains('u'),
        "{out}"
    );
    assert_eq!(
        last_line(&host, "pc.log"),
        "pc",
        "their PROMPT_COMMAND runs"
    );
    // Tickloop's PROMPT_COMMAND names a function only this shell has: it is
    // not passed on to the shells started from it.
    let (_, out) = run(&host, &id, "printenv PROMPT_COMMAND || echo none");
    assert_eq!(out, "none\n");
}

#[test]
fn a_prompt_command_that_edits_prompt_command_sees_its_own_and_runs_once_a_prompt() {
    // As bash-preexec does at the first prompt: PROMPT_COMMAND rewrites
    // itself, from the value it finds.
    let host = host_with_home(&[(
        ".bashrc",
        "late() { echo late >> ~/late.log; }\ninstall_late() { echo \"saw [$PROMPT_COMMAND]\" >> ~/late.log; PROMPT_COMMAND=\"late; ${PROMPT_COMMAND//install_late/}\"; }\nPROMPT_COMMAND=install_late\n",
    )]);
    let id = open_shell(&host, "late", &["bash"]);
    let lines = || {
        std::fs::read_to_string(home(&host).join("late.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lines(),
        ["saw [install_late]"],
        "their own value, as bash has it"
    );
    for n in 1..=3 {
        let (code, _) = run(&host, &id, "true");
        assert_eq!(code, 0);
        assert_eq!(lines().len(), 1 + n, "once a prompt: {:?}", lines());
    }
}

#[test]
fn zsh_and_fish_started_interactive_or_login_run_with_the_persons_files() {
    let host = host_with_home(&[
        (
            ".zshrc",
            "PROMPT='zsh> '\nprecmd() { echo \"precmd $?\" >> ~/precmd.log }\nalias greet='echo hello-zsh'\n",
        ),
        (".zprofile", "LOGIN=zprofile\n"),
        (
            ".config/fish/config.fish",
            "function fish_prompt; echo -n 'fishy> '; end\nalias greet 'echo hello-fish'\nif status is-login; set -g LOGIN fish-login; end\n",
        ),
    ]);
    let forms: [(&[&str], &str); 6] = [
        (&["zsh", "-i"], ""),
        (&["zsh", "-l"], "zprofile"),
        (&["zsh", "-il"], "zprofile"),
        (&["fish", "-i"], ""),
        (&["fish", "-l"], "fish-login"),
        (&["fish", "--login", "--interactive"], "fish-login"),
    ];
    for (n, (program, login)) in forms.iter().enumerate() {
        let id = open_shell(&host, &format!("s{n}"), program);
        let (code, out) = run(&host, &id, "greet");
        assert_eq!(
            (code, out.as_str()),
            (0, &*format!("hello-{}\n", program[0])),
            "{program:?}"
        );
        let (code, out) = run(&host, &id, "echo \"[$LOGIN]\"");
        assert_eq!((code, out), (0, format!("[{login}]\n")), "{program:?}");
        let prompt = if program[0] == "zsh" {
            "zsh> "
        } else {
            "fishy> "
        };
        assert!(host.screen(&id).contains(prompt), "{program:?}");
        if program[0] == "zsh" {
            run(&host, &id, "false");
            assert_eq!(last_line(&host, "precmd.log"), "precmd 1", "{program:?}");
        }
    }
    let id = open_shell(&host, "zvi", &["zsh", "-o", "vi"]);
    vi_mode_edits(&host, &id);
}

#[test]
fn what_the_integration_cannot_make_safe_starts_as_typed_and_says_why() {
    let host = host_with_home(&[]);
    // A command: bash runs it as typed.
    let opened = host.ok(&[
        "open",
        "--shell",
        "--name",
        "cmd",
        "--",
        "bash",
        "-c",
        "echo started; read x",
    ]);
    assert_eq!(
        opened["no_integration"], "-c runs a command: no interactive shell",
        "{opened}"
    );
    host.wait_screen("shell:cmd", "started");
    let listed = host.entry("shell:cmd").expect("listed");
    assert_eq!(
        listed["no_integration"], opened["no_integration"],
        "{listed}"
    );
    assert_eq!(listed["shell"], Value::Null, "{listed}");
    let out = host.run(&["run", "shell:cmd", "--", "true"]);
    out.expect_error(125, "not_a_tick");
    assert!(out.stderr.contains("-c runs a command"), "{}", out.stderr);

    // sh and dash: plain shells, opened with no error, used by keys.
    for shell in ["sh", "dash"] {
        let name = format!("plain-{shell}");
        let opened = host.ok(&["open", "--shell", "--name", &name, "--", shell, "-i"]);
        let id = format!("shell:{name}");
        assert_eq!(opened["state"], "running", "{opened}");
        assert_eq!(
            opened["no_integration"],
            format!("{shell} is a plain shell; Tickloop's integration is for bash, zsh and fish"),
        );
        host.ok(&["input", &id, "echo $((6*7))\r"]);
        host.wait_screen(&id, "42");
        let described = host.ok(&["describe", &id]);
        assert_eq!(described["shell"], Value::Null, "{described}");
    }

    // A long option after a short one is bash's own error: started as
    // typed, bash says so, and so does the open.
    let opened = host.ok(&[
        "open", "--shell", "--name", "bad", "--", "bash", "-i", "--login",
    ]);
    assert!(
        opened["no_integration"]
            .as_str()
            .unwrap_or_default()
            .contains("long options only before short ones"),
        "{opened}"
    );
    let ended = host.wait_ended("shell:bad");
    assert!(
        ended["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("status 2"),
        "{ended}"
    );
    assert!(host.screen("shell:bad").contains("--: invalid option"));
}

#[test]
fn describe_of_a_python_repl_opened_with_shell_exits_0_and_read_keeps_its_error() {
    let host = host_with_home(&[]);
    host.ok(&["open", "--shell", "--name", "py", "--", "python3", "-q"]);
    host.ok(&["wait", "shell:py", "--text", "^>>>", "--screen"]);
    let described = host.ok(&["describe", "shell:py"]);
    assert_eq!(described["id"], "shell:py");
    assert_eq!(described["shell"], Value::Null);
    assert_eq!(
        described["no_integration"],
        "python3 is not bash, zsh or fish"
    );
    let commands: Vec<&str> = described["commands"]
        .as_array()
        .expect("commands")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for works in ["screen", "input", "keys", "wait --text", "close"] {
        assert!(commands.contains(&works), "{works}: {commands:?}");
    }
    for needs_integration in ["read", "run", "wait --prompt", "watch"] {
        assert!(
            !commands.contains(&needs_integration),
            "{needs_integration}"
        );
    }
    assert!(
        described["description"]
            .as_str()
            .unwrap_or_default()
            .contains("a plain terminal program"),
        "{described}"
    );
    let refused = host.run(&["read", "shell:py"]);
    refused.expect_error(1, "not_a_tick");
    assert!(
        refused.stderr.contains("has no shell integration"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("python3 is not bash, zsh or fish"),
        "{}",
        refused.stderr
    );
}

/// tickhost starts each launcher with glibc's per-thread cache of freed
/// chunks off (an idle launcher's memory, issue 51); the shell the
/// launcher starts has the environment it was opened with, without it.
#[test]
fn the_launcher_s_malloc_setting_never_reaches_the_shell() {
    let host = host_with_home(&[(".bashrc", "PS1='tun> '\n")]);
    let id = open_shell(&host, "tun", &["bash"]);
    let (_, out) = run(&host, &id, "printenv GLIBC_TUNABLES || echo none");
    let expected = std::env::var("GLIBC_TUNABLES").map_or("none".to_string(), |t| t);
    assert_eq!(out.trim_end(), expected, "the shell's GLIBC_TUNABLES");
    let listed = host.ok(&["list"]);
    let instances = listed
        .as_array()
        .or_else(|| listed["instances"].as_array())
        .cloned()
        .unwrap_or_default();
    let launcher = instances
        .iter()
        .find(|i| i["id"] == id.as_str())
        .and_then(|i| i["launcher_pid"].as_u64())
        .unwrap_or_else(|| panic!("no launcher pid for {id} in {listed}"));
    let environ =
        std::fs::read(format!("/proc/{launcher}/environ")).expect("the launcher's environ");
    let tunables = environ
        .split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(b"GLIBC_TUNABLES="))
        .map(|v| String::from_utf8_lossy(v).into_owned());
    let tunables = tunables.unwrap_or_else(|| panic!("the launcher has no GLIBC_TUNABLES"));
    assert!(
        tunables.contains("glibc.malloc.tcache_count="),
        "the launcher's GLIBC_TUNABLES: {tunables}"
    );
}
