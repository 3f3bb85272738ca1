//! Shell completions (`tickloop completions bash|zsh|fish`, clap_complete)
//! and `tickloop __complete-ids`,
//! which the completions run to offer instance ids: it asks a running
//! tickhost, never starts one, and waits at most a second.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest};

/// The shells `tickloop completions` writes for.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// The subcommands whose first positional argument is an instance id.
const ID_FIRST: &[&str] = &[
    "attach",
    "call",
    "read",
    "describe",
    "screen",
    "input",
    "keys",
    "wait",
    "run",
    "close",
    "reload",
    "activity",
    "approve",
    "refuse",
    "approve-policy",
];

/// The script for `shell`: clap's, with instance ids offered where one goes.
pub fn script(shell: Shell, command: &mut clap::Command) -> Result<String> {
    let generator = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut out = Vec::new();
    clap_complete::generate(generator, command, "tickloop", &mut out);
    let generated = String::from_utf8(out).context("the generated completion is not UTF-8")?;
    Ok(match shell {
        Shell::Bash => format!("{generated}\n{}", bash_ids()),
        Shell::Zsh => zsh_ids(&generated),
        Shell::Fish => format!("{generated}\n{}", fish_ids()),
    })
}

/// Bash: a wrapper around clap's `_tickloop` that completes ids itself.
fn bash_ids() -> String {
    let subcommands = ID_FIRST.join("|");
    r#"# Instance ids, asked of a running tickhost (completing never starts it).
_tickloop_with_ids() {
    local line="${COMP_LINE:0:COMP_POINT}"
    local -a words
    read -ra words <<< "$line"
    local cur=""
    if [[ ! "$line" =~ [[:space:]]$ ]]; then
        cur="${words[${#words[@]}-1]}"
        unset 'words[${#words[@]}-1]'
    fi
    local sub="" prev="" positional=0 skip=0 i w
    for ((i = 1; i < ${#words[@]}; i++)); do
        w="${words[i]}"
        prev="$w"
        if [[ $skip -eq 1 ]]; then skip=0; continue; fi
        case "$w" in
            --detach-key|--revision|--history|--reason|--interval|--cwd|--id|--package|--approve|--view) skip=1 ;;
            -*) ;;
            *) if [[ -z "$sub" ]]; then sub="$w"; else positional=$((positional + 1)); fi ;;
        esac
    done
    local want=0
    case "$sub" in
        SUBCOMMANDS) [[ $positional -eq 0 ]] && want=1 ;;
        watch) want=1 ;;
    esac
    case "$prev" in --log|--select) want=1 ;; esac
    if [[ $want -eq 1 && "$cur" != -* ]]; then
        local id
        COMPREPLY=()
        while IFS= read -r id; do
            [[ -n "$id" && "$id" == "$cur"* ]] && COMPREPLY+=("$id")
        done < <(command tickloop __complete-ids 2>/dev/null)
        # Bash splits words at ':' (COMP_WORDBREAKS): offer what follows the last one typed.
        if [[ "$cur" == *:* && "$COMP_WORDBREAKS" == *:* ]]; then
            local colon="${cur%"${cur##*:}"}"
            for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]="${COMPREPLY[i]#"$colon"}"; done
        fi
        return 0
    fi
    _tickloop "$@"
}
complete -F _tickloop_with_ids -o bashdefault -o default tickloop
"#
    .replace("SUBCOMMANDS", &subcommands)
}

/// Zsh: clap's script with the id arguments completed by `_tickloop_ids`.
fn zsh_ids(generated: &str) -> String {
    let helper = r#"
# Instance ids, asked of a running tickhost (completing never starts it).
_tickloop_ids() {
    local -a ids
    ids=(${(f)"$(command tickloop __complete-ids 2>/dev/null)"})
    compadd -a ids
}
"#;
    let body = generated
        .replace(":id:_default", ":id:_tickloop_ids")
        .replace(":ids:_default", ":ids:_tickloop_ids")
        .replace(":ID:_default", ":ID:_tickloop_ids");
    match body.split_once('\n') {
        Some((first, rest)) if first.starts_with("#compdef") => format!("{first}\n{helper}{rest}"),
        _ => format!("{helper}{body}"),
    }
}

/// Fish: ids after the subcommands that take one.
fn fish_ids() -> String {
    let mut subcommands = ID_FIRST.join(" ");
    subcommands.push_str(" watch");
    format!(
        "# Instance ids, asked of a running tickhost (completing never starts it).\n\
         complete -c tickloop -n '__fish_seen_subcommand_from {subcommands}' -f -a '(command tickloop __complete-ids 2>/dev/null)'\n"
    )
}

/// `tickloop __complete-ids`: every instance id, one a line, when a
/// tickhost answers within a second; nothing (and exit 0) otherwise.
pub fn complete_ids(runtime: &Path) -> Result<i32> {
    if std::env::var_os("TICKLOOP_CLIENT_TIMEOUT_MS").is_none() {
        // Only this process, single-threaded here: a stopped tickhost must
        // not hang a person's Tab key.
        std::env::set_var("TICKLOOP_CLIENT_TIMEOUT_MS", "1000");
    }
    let Ok(mut client) = Client::connect(runtime, ClientKind::Cli) else {
        return Ok(0);
    };
    let Ok(ClientReply::Ok(list)) = client.request(ClientRequest::List) else {
        return Ok(0);
    };
    let mut out = std::io::stdout().lock();
    for entry in list.as_array().into_iter().flatten() {
        if let Some(id) = entry["id"].as_str() {
            if writeln!(out, "{id}").is_err() {
                break;
            }
        }
    }
    Ok(0)
}
