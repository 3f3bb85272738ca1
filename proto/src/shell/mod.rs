//! A shell's commands read from its terminal output, with no I/O: the
//! marks shells emit (OSC 133 `A`/`B`/`C`/`D`, VS Code's OSC 633 `E`, OSC
//! 7) found among the text ([`scan`]), the text made into lines as a row
//! would show them ([`lines`]), and both made into the shell's state: the
//! working directory, whether it is at its prompt, the running command,
//! and the last commands with their status and output ([`reader`]).
//!
//! The launcher feeds every chunk of a `shell:` instance's output to a
//! [`ShellReader`] in order (the same order the screen keeper gets it);
//! `read shell:NAME`, deliveries, `wait --prompt` and `run` read its state.

pub mod lines;
pub mod reader;
pub mod scan;

pub use reader::{Fed, ShellReader};

/// How many ended commands a shell's state keeps (the newest).
pub const KEPT_COMMANDS: usize = 10;

/// The most bytes of one command's output kept: its first
/// [`HEAD_BOUND`] bytes and its last `OUTPUT_BOUND - HEAD_BOUND`, with a
/// line saying how much was cut between them.
pub const OUTPUT_BOUND: usize = 16 * 1024;

/// The bytes kept from the beginning of a command's output.
pub const HEAD_BOUND: usize = 4 * 1024;

/// How a shell's state is trimmed to a delivery's budget: its `commands`
/// keep their newest end, as a Tick's declared series does.
pub fn series() -> Vec<crate::core::descriptor::Series> {
    vec![crate::core::descriptor::Series {
        path: "/commands".into(),
        newest: crate::core::descriptor::Newest::Last,
    }]
}

/// The command line `run` types: one argument as it is (a command line of
/// its own), several quoted where a shell would split or expand them.
pub fn command_line(words: &[String]) -> String {
    if let [one] = words {
        return one.clone();
    }
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@%+".contains(c));
            if plain {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_word_is_a_command_line_and_several_are_argv() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            command_line(&words(&["make && echo ok"])),
            "make && echo ok"
        );
        assert_eq!(command_line(&words(&["ls", "-la", "/tmp"])), "ls -la /tmp");
        assert_eq!(
            command_line(&words(&["echo", "a b", "it's"])),
            r"echo 'a b' 'it'\''s'"
        );
    }
}
