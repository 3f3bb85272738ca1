//! zsh's and fish's command lines, read for one question: does the shell
//! read commands from its terminal and its startup files, so that the
//! integration (found through `ZDOTDIR` or `XDG_DATA_DIRS`, the arguments
//! untouched) reaches it? `Err` is why it starts without it.

/// Whether zsh started with `args` is interactive and reads the person's
/// files (and so Tickloop's `.zshenv`).
pub fn zsh(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" || arg == "-" {
            break;
        }
        if let Some(name) = arg.strip_prefix("--") {
            match name {
                "help" | "version" => {
                    return Err(format!("{arg} prints and exits: no interactive shell"))
                }
                _ => zsh_option(name, true)?,
            }
            continue;
        }
        let on = match arg.chars().next() {
            Some('-') => true,
            Some('+') => false,
            // A script, or `-s`'s positional parameters: seen below.
            _ => {
                i -= 1;
                break;
            }
        };
        for c in arg.chars().skip(1) {
            match c {
                'o' => {
                    let Some(name) = args.get(i) else {
                        return Err(format!("{arg} without an option name; started as typed"));
                    };
                    i += 1;
                    zsh_option(name, on)?;
                }
                'c' => return Err("-c runs a command: no interactive shell".into()),
                'f' if on => {
                    return Err(
                        "-f: zsh reads none of the person's files, so none of Tickloop's either"
                            .into(),
                    )
                }
                'x' if on => return Err("-x would trace every command of Tickloop's too".into()),
                'v' if on => return Err("-v would echo every line of Tickloop's script too".into()),
                // `-b`: the end of the options, as `--`.
                'b' => {
                    return match args.get(i) {
                        Some(script) => {
                            Err(format!("it runs the script {script}: no interactive shell"))
                        }
                        None => Ok(()),
                    }
                }
                _ => {}
            }
        }
    }
    match args.get(i) {
        Some(script) if !stdin_zsh(&args[..i]) => {
            Err(format!("it runs the script {script}: no interactive shell"))
        }
        _ => Ok(()),
    }
}

/// `-s` (or `--shinstdin`) among zsh's options: what follows are
/// positional parameters, not a script.
fn stdin_zsh(options: &[String]) -> bool {
    options.iter().any(|a| {
        a == "--shinstdin"
            || a == "--shin-stdin"
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
    })
}

/// A zsh option by name (`-o NAME`, `--NAME`), set or unset: names are
/// read as zsh reads them (any case, `_` ignored, `no` in front unsets).
fn zsh_option(name: &str, on: bool) -> Result<(), String> {
    let plain: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    let (name, on) = match plain.strip_prefix("no") {
        // `notify` is an option of its own.
        Some(rest) if plain != "notify" => (rest.to_string(), !on),
        _ => (plain, on),
    };
    match (name.as_str(), on) {
        ("rcs", false) => Err(
            "without rcs zsh reads none of the person's files, so none of Tickloop's either".into(),
        ),
        ("xtrace", true) => Err("xtrace would trace every command of Tickloop's too".into()),
        ("verbose", true) => Err("verbose would echo every line of Tickloop's script too".into()),
        ("interactive", false) => Err("it is started not interactive".into()),
        _ => Ok(()),
    }
}

/// fish's options that take a value (`-C CMD`, `--init-command=CMD`).
const FISH_WITH_VALUE: &[&str] = &[
    "-C",
    "--init-command",
    "-d",
    "--debug",
    "-o",
    "--debug-output",
    "-f",
    "--features",
    "-p",
    "--profile",
    "--profile-startup",
];

/// Whether fish started with `args` is interactive and reads its
/// configuration (and so Tickloop's `vendor_conf.d`).
pub fn fish(args: &[String]) -> Result<(), String> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg == "--" {
            return match args.get(i) {
                Some(script) => Err(format!("it runs the script {script}: no interactive shell")),
                None => Ok(()),
            };
        }
        if let Some(long) = arg.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or_default();
            fish_long(name)?;
            if !long.contains('=') && FISH_WITH_VALUE.contains(&arg.as_str()) {
                i += 1;
            }
            continue;
        }
        let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) else {
            return Err(format!("it runs the script {arg}: no interactive shell"));
        };
        for (at, c) in letters.char_indices() {
            match c {
                'c' => return Err("-c runs a command: no interactive shell".into()),
                'N' => {
                    return Err(
                        "-N: fish reads no configuration, so none of Tickloop's either".into(),
                    )
                }
                'n' => return Err("-n only checks the syntax: no interactive shell".into()),
                'v' | 'h' => return Err(format!("-{c} prints and exits: no interactive shell")),
                'C' | 'd' | 'o' | 'f' | 'p' => {
                    // The rest of the cluster is the value, else the next
                    // argument.
                    if at + 1 == letters.len() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn fish_long(name: &str) -> Result<(), String> {
    match name {
        "command" => Err("--command runs a command: no interactive shell".into()),
        "no-config" => {
            Err("--no-config: fish reads no configuration, so none of Tickloop's either".into())
        }
        "no-execute" => Err("--no-execute only checks the syntax: no interactive shell".into()),
        "version" | "help" | "print-rusage-self" | "print-debug-categories" => {
            Err(format!("--{name} prints and exits: no interactive shell"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn zsh_ok(args: &[&str]) -> bool {
        zsh(&strings(args)).is_ok()
    }

    fn fish_ok(args: &[&str]) -> bool {
        fish(&strings(args)).is_ok()
    }

    #[test]
    fn zsh_interactive_and_login_forms_are_integrated() {
        for args in [
            &[][..],
            &["-i"],
            &["-l"],
            &["-il"],
            &["--login"],
            &["--login", "-i"],
            &["-o", "vi"],
            &["+o", "beep"],
            &["--no-globalrcs"],
            &["-d"],
            &["-s", "a"],
            &["-i", "--"],
        ] {
            assert!(zsh_ok(args), "{args:?}");
        }
    }

    #[test]
    fn zsh_commands_scripts_and_no_rcs_start_plain() {
        for (args, why) in [
            (&["-c", "ls"][..], "-c runs"),
            (&["-ic", "ls"], "-c runs"),
            (&["script.zsh"], "the script script.zsh"),
            (&["-i", "--", "x.zsh"], "the script x.zsh"),
            (&["-f"], "none of the person's files"),
            (&["--no-rcs"], "without rcs"),
            (&["--NO_RCS"], "without rcs"),
            (&["+o", "rcs"], "without rcs"),
            (&["-o", "norcs"], "without rcs"),
            (&["-x"], "trace"),
            (&["-o", "xtrace"], "trace"),
            (&["--version"], "prints and exits"),
            (&["-o"], "without an option name"),
        ] {
            let got = zsh(&strings(args)).expect_err("plain");
            assert!(got.contains(why), "{args:?}: {got}");
        }
    }

    #[test]
    fn fish_interactive_and_login_forms_are_integrated() {
        for args in [
            &[][..],
            &["-i"],
            &["-l"],
            &["-il"],
            &["--login", "--interactive"],
            &["-C", "set x 1"],
            &["--init-command=set x 1"],
            &["--init-command", "set x 1", "-i"],
            &["-Cset x 1"],
            &["--private"],
            &["--features", "qmark-noglob"],
        ] {
            assert!(fish_ok(args), "{args:?}");
        }
    }

    #[test]
    fn fish_commands_scripts_and_no_config_start_plain() {
        for (args, why) in [
            (&["-c", "ls"][..], "-c runs"),
            (&["-ic", "ls"], "-c runs"),
            (&["--command=ls"], "--command runs"),
            (&["--command", "ls"], "--command runs"),
            (&["script.fish"], "the script script.fish"),
            (&["-i", "--", "x.fish"], "the script x.fish"),
            (&["-N"], "no configuration"),
            (&["--no-config"], "no configuration"),
            (&["-n"], "syntax"),
            (&["--version"], "prints and exits"),
        ] {
            let got = fish(&strings(args)).expect_err("plain");
            assert!(got.contains(why), "{args:?}: {got}");
        }
    }
}
