//! `tickloop man`: the one man page shipped, `tickloop(1)`, in roff. Its
//! title, name, description, options and version come from clap_mangen;
//! the synopsis and the COMMANDS section are written here, because
//! clap_mangen's synopsis names options without their values (`[--host]`)
//! and its commands section points to a page per command
//! (`tickloop-open(1)`), which is not shipped: here every command is in
//! this page, with its usage, what it does and its options.

use anyhow::{Context, Result};
use clap::Command;

/// The roff man page `tickloop.1` of `command` (the CLI, built).
pub fn render(command: Command) -> Result<Vec<u8>> {
    let mut command = command;
    command.build();
    let man = clap_mangen::Man::new(command.clone());
    let mut out = Vec::new();
    let sections = [
        man.render_title(&mut out),
        man.render_name_section(&mut out),
    ];
    for rendered in sections {
        rendered.context("cannot render the man page")?;
    }
    out.extend_from_slice(synopsis(&command).as_bytes());
    man.render_description_section(&mut out)
        .and_then(|()| man.render_options_section(&mut out))
        .context("cannot render the man page")?;
    out.extend_from_slice(commands(&command).as_bytes());
    man.render_version_section(&mut out)
        .context("cannot render the man page")?;
    Ok(out)
}

/// `text` safe in roff running text: backslashes and hyphens escaped, and
/// a line starting with `.` or `'` not taken for a request.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    escaped
        .lines()
        .map(|line| {
            if line.starts_with('.') || line.starts_with('\'') {
                format!("\\&{line}")
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The SYNOPSIS: the global options with their values, then the command.
fn synopsis(command: &Command) -> String {
    let mut line = String::from("\\fBtickloop\\fR");
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        let Some(long) = arg.get_long() else { continue };
        let value = arg
            .get_value_names()
            .and_then(|names| names.first())
            .filter(|_| arg.get_num_args().is_some_and(|n| n.takes_values()))
            .map(|name| format!(" \\fI{}\\fR", escape(name)))
            .unwrap_or_default();
        line.push_str(&format!(" [\\fB\\-\\-{}\\fR{value}]", escape(long)));
    }
    line.push_str(" \\fICOMMAND\\fR [\\fIARGS\\fR]");
    format!(".SH SYNOPSIS\n{line}\n")
}

/// The COMMANDS section: each command that is not hidden, with its usage,
/// what it does and its options; a command's own commands below it.
fn commands(command: &Command) -> String {
    let mut out = String::from(
        ".SH COMMANDS\nEvery command takes the global options above. \
         \\fBtickloop help\\fR \\fICOMMAND\\fR says the same on a terminal.\n",
    );
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        one_command(&mut out, sub);
        for nested in sub.get_subcommands().filter(|s| !s.is_hide_set()) {
            one_command(&mut out, nested);
        }
    }
    out
}

/// One command: `.TP`, its usage in bold, then its about and options.
fn one_command(out: &mut String, sub: &Command) {
    if sub.get_name() == "help" {
        return;
    }
    let usage = sub.clone().render_usage().to_string();
    let usage = usage.trim().strip_prefix("Usage: ").unwrap_or(usage.trim());
    out.push_str(&format!(".TP\n\\fB{}\\fR\n", escape(usage)));
    let about = sub
        .get_long_about()
        .or_else(|| sub.get_about())
        .map(ToString::to_string)
        .unwrap_or_default();
    if !about.is_empty() {
        out.push_str(&format!("{}\n", escape(&about)));
    }
    let options: Vec<String> = sub
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set() && !a.is_positional())
        .filter(|a| a.get_id() != "help")
        .filter_map(|arg| {
            let long = arg.get_long()?;
            let value = arg
                .get_value_names()
                .and_then(|names| names.first())
                .filter(|_| arg.get_num_args().is_some_and(|n| n.takes_values()))
                .map(|name| format!(" \\fI{}\\fR", escape(name)))
                .unwrap_or_default();
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            Some(format!(
                ".br\n\\fB\\-\\-{}\\fR{value}: {}\n",
                escape(long),
                escape(&help)
            ))
        })
        .collect();
    if !options.is_empty() {
        out.push_str(".RS\n");
        for option in options {
            out.push_str(&option);
        }
        out.push_str(".RE\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn page() -> String {
        String::from_utf8(render(crate::cli::Cli::command()).expect("a page")).expect("UTF-8")
    }

    #[test]
    fn options_carry_their_values_and_no_page_is_named_that_is_not_shipped() {
        let page = page();
        assert!(
            page.contains("[\\fB\\-\\-host\\fR \\fI[USER@]HOST[:PORT]\\fR]"),
            "{page}"
        );
        assert!(!page.contains("[\\fB\\-\\-host\\fR]"), "{page}");
        assert!(!page.contains("tickloop\\-open(1)"), "{page}");
        assert!(!page.contains("(1)\n"), "{page}");
        // Every command is in this page, with its options.
        assert!(page.contains("\\fBtickloop open"), "{page}");
        assert!(page.contains("\\fB\\-\\-shell\\fR"), "{page}");
        assert!(page.contains("\\fBtickloop call"), "{page}");
        assert!(
            page.contains("\\fB\\-\\-revision\\fR \\fIREVISION\\fR"),
            "{page}"
        );
    }

    #[test]
    fn roff_requests_and_escapes_are_kept_out_of_text() {
        assert_eq!(escape("a-b \\ c"), "a\\-b \\e c");
        assert_eq!(escape(".not a request"), "\\&.not a request");
    }
}
