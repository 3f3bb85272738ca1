//! A person's bash with bash-preexec (atuin, iTerm2's and Bashhub's
//! integrations use it): Tickloop's integration takes bash-preexec's hooks
//! instead of PROMPT_COMMAND and the DEBUG trap, which bash-preexec owns;
//! the person's preexec and precmd see every command with its status, and
//! an agent's `run` still gets no pager. bash-preexec is no package of
//! this machine: the test runs with the `bash-preexec.sh` that
//! `TICKLOOP_BASH_PREEXEC` names (its repository's file, rcaloras/
//! bash-preexec), and is reported *ignored* (never passed) without it.

mod common;

use common::home::{home, host_with_home};
use common::optional::{self, Case};
use serde_json::Value;
use std::path::PathBuf;

fn bash_preexec() -> Option<PathBuf> {
    std::env::var_os("TICKLOOP_BASH_PREEXEC")
        .map(PathBuf::from)
        .filter(|p| p.is_file())
}

fn main() {
    let missing = bash_preexec().is_none().then(|| {
        "bash_preexecs_hooks_carry_the_integration needs TICKLOOP_BASH_PREEXEC=PATH of bash-preexec.sh"
            .to_string()
    });
    optional::run(
        vec![Case {
            name: "bash_preexecs_hooks_carry_the_integration",
            body: bash_preexecs_hooks_carry_the_integration,
        }],
        missing,
    )
}

fn bash_preexecs_hooks_carry_the_integration() {
    let script = bash_preexec().expect("bash-preexec.sh");
    let script = std::fs::read_to_string(script).expect("bash-preexec.sh read");
    let host = host_with_home(&[
        (".bash-preexec.sh", &script),
        (
            ".bashrc",
            "PS1='bp> '\nexport PAGER=less\nPROMPT_COMMAND='echo \"pc $?\" >> ~/pc.log'\nsource ~/.bash-preexec.sh\npreexec() { echo \"preexec [$1]\" >> ~/pre.log; }\nprecmd() { echo \"precmd $?\" >> ~/precmd.log; }\n",
        ),
    ]);
    host.ok(&["open", "--shell", "--name", "bp", "--", "bash", "-i"]);
    let id = "shell:bp";
    host.run(&["wait", id, "--prompt", "--timeout", "20"])
        .expect(0);
    let run = |command: &str| {
        let out = host.run(&["run", id, "--timeout", "20", "--", command]);
        let v: Value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
        (
            out.code,
            v["command"]["output"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    };
    assert_eq!(run("echo \"[$PAGER]\""), (0, "[cat]\n".to_string()));
    assert_eq!(run("false").0, 1);
    host.ok(&["input", id, "echo \"mine [$PAGER]\"\r"]);
    host.run(&["wait", id, "--prompt", "--timeout", "20"])
        .expect(0);
    let log = |name: &str| std::fs::read_to_string(home(&host).join(name)).unwrap_or_default();
    assert_eq!(
        log("pre.log"),
        "preexec [echo \"[$PAGER]\"]\npreexec [false]\npreexec [echo \"mine [$PAGER]\"]\n"
    );
    assert_eq!(
        log("precmd.log").lines().collect::<Vec<_>>(),
        ["precmd 0", "precmd 0", "precmd 1", "precmd 0"]
    );
    assert_eq!(
        log("pc.log").lines().collect::<Vec<_>>(),
        ["pc 0", "pc 0", "pc 1", "pc 0"]
    );
    let state = host.read(id)["data"].clone();
    let last = &state["commands"][2];
    assert_eq!(last["output"], "mine [less]\n", "{state}");
}
