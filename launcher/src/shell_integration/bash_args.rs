//! bash's command line, read as bash reads it (`shell.c`): its long
//! options first (`--login`, also with one dash, `-login`), then clusters of
//! short options (`-il`, `-o vi`, `+O extglob`), then `--` or `-`, then a
//! script and its arguments. A long option after a short one is an error
//! to bash (`bash: --: invalid option`), so Tickloop's own options go
//! first, and the person's stay in their order after them.
//!
//! [`plan`] says how the integration goes in without changing what the
//! person asked for, or, when it cannot be made safe, why the shell starts
//! exactly as typed.

/// Which of the person's startup files bash would have read; with
/// `--init-file`, Tickloop's script reads them itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Startup {
    /// `~/.bashrc` (bash reads `/etc/bash.bashrc` itself).
    Rc,
    /// A login shell's: `/etc/profile`, then the first of
    /// `~/.bash_profile`, `~/.bash_login`, `~/.profile`.
    Login,
    /// `--rcfile FILE` / `--init-file FILE`.
    File(String),
}

/// How the script gets into the shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `--init-file SCRIPT` goes first; the script reads `Startup`.
    InitFile(Startup),
    /// The person's arguments exactly as typed: bash reads nothing of
    /// theirs (`--norc`; a login shell with `--noprofile`), and the script
    /// runs from `PROMPT_COMMAND` at the first prompt.
    FirstPrompt,
}

/// bash's arguments with the integration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashPlan {
    pub route: Route,
    /// The person's long options that stay, as bash reads them (before
    /// Tickloop's `--init-file`).
    pub long: Vec<String>,
    /// Everything after the long options, in order: short options (a
    /// login shell's `l` taken out on the `InitFile` route: the script
    /// reads the login files), `--`, the positional parameters of `-s`.
    pub rest: Vec<String>,
}

impl BashPlan {
    /// The arguments bash gets, `script` being Tickloop's.
    pub fn args(&self, script: &str) -> Vec<String> {
        let mut args = self.long.clone();
        if matches!(self.route, Route::InitFile(_)) {
            args.push("--init-file".into());
            args.push(script.into());
        }
        args.extend(self.rest.iter().cloned());
        args
    }
}

/// bash's long options (`bash --help`), and what each means here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Long {
    /// No bearing on the integration: kept.
    Keep,
    Login,
    NoRc,
    NoProfile,
    /// Takes a file: `--rcfile`, `--init-file`.
    RcFile,
    /// The shell starts plain, for this reason.
    Plain(&'static str),
}

const LONG: &[(&str, Long)] = &[
    ("debug", Long::Keep),
    ("debugger", Long::Keep),
    ("noediting", Long::Keep),
    ("login", Long::Login),
    ("norc", Long::NoRc),
    ("noprofile", Long::NoProfile),
    ("rcfile", Long::RcFile),
    ("init-file", Long::RcFile),
    (
        "posix",
        Long::Plain("in POSIX mode (--posix) bash reads only $ENV at its start"),
    ),
    (
        "restricted",
        Long::Plain("a restricted shell (--restricted) gets nothing added"),
    ),
    (
        "verbose",
        Long::Plain("--verbose would echo every line of Tickloop's script too"),
    ),
    (
        "help",
        Long::Plain("--help prints and exits: no interactive shell"),
    ),
    (
        "version",
        Long::Plain("--version prints and exits: no interactive shell"),
    ),
    (
        "dump-strings",
        Long::Plain("--dump-strings prints and exits: no interactive shell"),
    ),
    (
        "dump-po-strings",
        Long::Plain("--dump-po-strings prints and exits: no interactive shell"),
    ),
    (
        "pretty-print",
        Long::Plain("--pretty-print prints a script: no interactive shell"),
    ),
    (
        "wordexp",
        Long::Plain("--wordexp expands words and exits: no interactive shell"),
    ),
];

/// The one-letter options of `set` (`bash --help`) that have no bearing on
/// the integration.
const SET_FLAGS: &str = "abefhkmnptuBCEHPT";

/// `-o NAME` values that make the integration unsafe.
fn o_value_refused(name: &str) -> Option<&'static str> {
    match name {
        "xtrace" => Some("-o xtrace would trace every command of Tickloop's too"),
        "verbose" => Some("-o verbose would echo every line of Tickloop's script too"),
        "posix" => Some("in POSIX mode (-o posix) bash reads only $ENV at its start"),
        _ => None,
    }
}

/// How bash started with `args` (the arguments after the program) gets the
/// integration; `Err` is why it starts exactly as typed, without it.
pub fn plan(args: &[String]) -> Result<BashPlan, String> {
    let mut login = false;
    let mut norc = false;
    let mut noprofile = false;
    let mut rcfile: Option<String> = None;
    // The person's long options, kept (for the InitFile route).
    let mut long = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        if !arg.starts_with('-') || arg == "-" || arg == "--" {
            break;
        }
        let double = arg.starts_with("--");
        let name = if double { &arg[2..] } else { &arg[1..] };
        let Some((_, kind)) = LONG.iter().find(|(n, _)| *n == name) else {
            if double {
                return Err(format!("bash does not know {arg}; started as typed"));
            }
            // `-i`, `-login`'s cousins that are no long option: short ones.
            break;
        };
        match kind {
            Long::Keep => long.push(format!("--{name}")),
            Long::Login => login = true,
            Long::NoRc => norc = true,
            Long::NoProfile => {
                noprofile = true;
                long.push("--noprofile".into());
            }
            Long::RcFile => {
                i += 1;
                let Some(file) = args.get(i) else {
                    return Err(format!("{arg} needs a file; started as typed"));
                };
                rcfile = Some(file.clone());
            }
            Long::Plain(why) => return Err((*why).to_string()),
        }
        i += 1;
    }
    let shorts = shorts(&args[i..])?;
    login |= shorts.login;
    let route = if login && noprofile || norc && !login {
        Route::FirstPrompt
    } else if login {
        Route::InitFile(Startup::Login)
    } else if let Some(file) = rcfile {
        Route::InitFile(Startup::File(file))
    } else {
        Route::InitFile(Startup::Rc)
    };
    Ok(match route {
        Route::FirstPrompt => BashPlan {
            route,
            long: args[..i].to_vec(),
            rest: args[i..].to_vec(),
        },
        Route::InitFile(_) => BashPlan {
            route,
            long,
            rest: shorts.without_login,
        },
    })
}

/// The short options and what follows them.
struct Shorts {
    /// `l` was among them.
    login: bool,
    /// The same arguments with the `l`s taken out (a cluster left empty
    /// dropped).
    without_login: Vec<String>,
}

fn shorts(args: &[String]) -> Result<Shorts, String> {
    let mut login = false;
    let mut stdin = false;
    let mut without_login = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let sign = arg.chars().next();
        if sign != Some('-') && sign != Some('+') {
            break;
        }
        if arg == "-" || arg == "--" {
            without_login.extend(args[i..].iter().cloned());
            i = args.len();
            break;
        }
        let mut values = Vec::new();
        let mut kept = String::new();
        for (at, c) in arg.chars().enumerate() {
            if at == 0 {
                kept.push(c);
                continue;
            }
            match c {
                'l' => {
                    login = true;
                    continue;
                }
                'o' | 'O' => {
                    let Some(value) = args.get(i + 1 + values.len()) else {
                        return Err(format!("{arg} without an option name; started as typed"));
                    };
                    if c == 'o' {
                        if let Some(why) = o_value_refused(value) {
                            return Err(why.to_string());
                        }
                    }
                    values.push(value.clone());
                }
                'i' => {}
                's' => stdin = true,
                'c' => return Err("-c runs a command: no interactive shell".to_string()),
                'r' => {
                    return Err("a restricted shell (-r) gets nothing added".to_string());
                }
                'x' => return Err("-x would trace every command of Tickloop's too".to_string()),
                'v' => {
                    return Err("-v would echo every line of Tickloop's script too".to_string());
                }
                'D' => return Err("-D prints and exits: no interactive shell".to_string()),
                '-' => {
                    return Err(format!(
                        "bash takes long options only before short ones ({arg} comes after one); started as typed"
                    ));
                }
                c if SET_FLAGS.contains(c) => {}
                c => {
                    return Err(format!(
                        "bash does not know {}{c}; started as typed",
                        &arg[..1]
                    ))
                }
            }
            kept.push(c);
        }
        if kept.len() > 1 {
            without_login.push(kept);
        }
        i += 1 + values.len();
        without_login.extend(values);
    }
    if let Some(script) = args.get(i) {
        if !stdin {
            return Err(format!("it runs the script {script}: no interactive shell"));
        }
    }
    // After `-s`, the positional parameters.
    without_login.extend(args[i..].iter().cloned());
    // `bash -- script`: also a script.
    if let Some(end) = without_login.iter().position(|a| a == "-" || a == "--") {
        if let Some(script) = without_login.get(end + 1).filter(|_| !stdin) {
            return Err(format!("it runs the script {script}: no interactive shell"));
        }
    }
    Ok(Shorts {
        login,
        without_login,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(args: &[&str]) -> Result<BashPlan, String> {
        plan(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    /// The arguments bash gets, with `S` for Tickloop's script.
    fn args(args: &[&str]) -> Vec<String> {
        planned(args).expect("integrated").args("S")
    }

    fn route(args: &[&str]) -> Route {
        planned(args).expect("integrated").route
    }

    fn plain(args: &[&str]) -> String {
        planned(args).expect_err("plain")
    }

    #[test]
    fn plain_bash_reads_the_bashrc_through_the_script() {
        assert_eq!(args(&[]), ["--init-file", "S"]);
        assert_eq!(route(&[]), Route::InitFile(Startup::Rc));
    }

    #[test]
    fn dash_i_comes_after_the_init_file() {
        assert_eq!(args(&["-i"]), ["--init-file", "S", "-i"]);
        assert_eq!(route(&["-i"]), Route::InitFile(Startup::Rc));
    }

    #[test]
    fn dash_il_is_a_login_shell_whose_files_the_script_reads() {
        assert_eq!(args(&["-il"]), ["--init-file", "S", "-i"]);
        assert_eq!(route(&["-il"]), Route::InitFile(Startup::Login));
    }

    #[test]
    fn dash_i_dash_l_is_the_same() {
        assert_eq!(args(&["-i", "-l"]), ["--init-file", "S", "-i"]);
        assert_eq!(route(&["-i", "-l"]), Route::InitFile(Startup::Login));
    }

    #[test]
    fn dash_l_alone_is_a_login_shell() {
        assert_eq!(args(&["-l"]), ["--init-file", "S"]);
        assert_eq!(route(&["-l"]), Route::InitFile(Startup::Login));
    }

    #[test]
    fn login_then_dash_i_keeps_the_order_bash_needs() {
        assert_eq!(args(&["--login", "-i"]), ["--init-file", "S", "-i"]);
        assert_eq!(route(&["--login", "-i"]), Route::InitFile(Startup::Login));
        // bash also takes a long option with one dash, first.
        assert_eq!(route(&["-login", "-i"]), Route::InitFile(Startup::Login));
    }

    #[test]
    fn norc_reads_nothing_and_keeps_the_arguments_as_typed() {
        assert_eq!(args(&["--norc", "-i"]), ["--norc", "-i"]);
        assert_eq!(route(&["--norc", "-i"]), Route::FirstPrompt);
        assert_eq!(route(&["--norc", "--noprofile"]), Route::FirstPrompt);
    }

    #[test]
    fn a_login_shell_with_noprofile_stays_a_real_login_shell() {
        assert_eq!(args(&["--noprofile", "-l"]), ["--noprofile", "-l"]);
        assert_eq!(route(&["--noprofile", "-l"]), Route::FirstPrompt);
    }

    #[test]
    fn a_login_shell_ignores_norc_as_bash_does() {
        assert_eq!(route(&["--norc", "-l"]), Route::InitFile(Startup::Login));
        assert_eq!(args(&["--norc", "-l"]), ["--init-file", "S"]);
    }

    #[test]
    fn dash_o_vi_keeps_its_value_after_the_init_file() {
        assert_eq!(args(&["-o", "vi"]), ["--init-file", "S", "-o", "vi"]);
        assert_eq!(
            args(&["-io", "vi", "-l"]),
            ["--init-file", "S", "-io", "vi"]
        );
        // Two `o`s in a cluster take the next two arguments, as bash does.
        assert_eq!(
            args(&["-oo", "vi", "noclobber", "-i"]),
            ["--init-file", "S", "-oo", "vi", "noclobber", "-i"]
        );
    }

    #[test]
    fn dash_cap_o_extglob_keeps_its_value() {
        assert_eq!(
            args(&["-O", "extglob", "-i"]),
            ["--init-file", "S", "-O", "extglob", "-i"]
        );
        assert_eq!(
            args(&["+O", "checkwinsize"]),
            ["--init-file", "S", "+O", "checkwinsize"]
        );
    }

    #[test]
    fn rcfile_is_read_by_the_script() {
        assert_eq!(
            args(&["--rcfile", "/my/rc", "-i"]),
            ["--init-file", "S", "-i"]
        );
        assert_eq!(
            route(&["--rcfile", "/my/rc", "-i"]),
            Route::InitFile(Startup::File("/my/rc".into()))
        );
        assert_eq!(
            route(&["--init-file", "rc"]),
            Route::InitFile(Startup::File("rc".into()))
        );
        // A login shell reads no rcfile.
        assert_eq!(
            route(&["--rcfile", "rc", "-l"]),
            Route::InitFile(Startup::Login)
        );
    }

    #[test]
    fn other_long_options_stay_before_the_init_file() {
        assert_eq!(
            args(&["--noediting", "--noprofile", "-i"]),
            ["--noediting", "--noprofile", "--init-file", "S", "-i"]
        );
        assert_eq!(args(&["-noediting"]), ["--noediting", "--init-file", "S"]);
    }

    #[test]
    fn dash_s_reads_commands_from_the_terminal_with_positional_parameters() {
        assert_eq!(
            args(&["-s", "a", "b"]),
            ["--init-file", "S", "-s", "a", "b"]
        );
    }

    #[test]
    fn a_double_dash_with_nothing_after_it_is_still_interactive() {
        assert_eq!(args(&["-i", "--"]), ["--init-file", "S", "-i", "--"]);
        assert_eq!(args(&["-"]), ["--init-file", "S", "-"]);
    }

    #[test]
    fn set_flags_are_kept() {
        assert_eq!(args(&["-eu"]), ["--init-file", "S", "-eu"]);
        assert_eq!(args(&["+H", "-i"]), ["--init-file", "S", "+H", "-i"]);
    }

    #[test]
    fn a_command_or_a_script_is_no_interactive_shell() {
        assert!(plain(&["-c", "ls"]).contains("-c runs a command"));
        assert!(plain(&["-ic", "ls"]).contains("-c runs a command"));
        assert!(plain(&["script.sh"]).contains("the script script.sh"));
        assert!(plain(&["-i", "script.sh", "x"]).contains("the script script.sh"));
        assert!(plain(&["--", "script.sh"]).contains("the script script.sh"));
        assert!(plain(&["--login", "script.sh"]).contains("the script script.sh"));
    }

    #[test]
    fn a_long_option_after_a_short_one_is_started_as_typed() {
        let why = plain(&["-i", "--login"]);
        assert!(why.contains("long options only before short ones"), "{why}");
    }

    #[test]
    fn unknown_options_are_started_as_typed() {
        assert!(plain(&["--frobnicate"]).contains("does not know --frobnicate"));
        assert!(plain(&["-Z"]).contains("does not know -Z"));
        assert!(plain(&["-o"]).contains("without an option name"));
        assert!(plain(&["--rcfile"]).contains("needs a file"));
    }

    #[test]
    fn what_cannot_be_made_safe_starts_plain() {
        assert!(plain(&["--posix"]).contains("POSIX"));
        assert!(plain(&["-o", "posix"]).contains("POSIX"));
        assert!(plain(&["-x"]).contains("trace"));
        assert!(plain(&["-o", "xtrace", "-i"]).contains("trace"));
        assert!(plain(&["-iv"]).contains("echo"));
        assert!(plain(&["--verbose"]).contains("echo"));
        assert!(plain(&["-r"]).contains("restricted"));
        assert!(plain(&["--restricted"]).contains("restricted"));
        assert!(plain(&["--version"]).contains("prints and exits"));
        assert!(plain(&["-D"]).contains("prints and exits"));
    }
}
