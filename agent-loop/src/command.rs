//! The Loop's control-command grammar: `/tick [<count>] [--policy <id>]
//! [--resume]`, `/tick policies`, `/tick status`, `/tick stop`, and this
//! project's `/tick subscribe ID...` (a Loop subscription, issue 21).
//!
//! Parsing is pure and fails with a [`CommandError`] before anything
//! model-facing exists; whether the named policy is *configured* is checked by
//! the state machine against the frozen policy set (it is still a refusal
//! before any message is created).

use std::fmt;

/// Smallest and largest count a run may request.
pub const MIN_COUNT: u32 = 1;
pub const MAX_COUNT: u32 = 256;
/// Longest policy id, in ASCII characters.
pub const MAX_POLICY_ID_LEN: usize = 64;

/// A parsed control command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/tick [<count>] [--policy <id>] [--resume]`: arm a run.
    Start {
        /// `None`: the configured `defaultTicks`.
        count: Option<u32>,
        /// `None`: the configured `defaultPolicyId`.
        policy: Option<String>,
        resume: bool,
    },
    /// `/tick policies`
    Policies,
    /// `/tick status`
    Status,
    /// `/tick stop`
    Stop,
    /// `/tick subscribe ID...`: subscribe the session to these Tick instances.
    Subscribe(Vec<String>),
}

/// Why a command line was refused. The `Display` text is what the harness
/// receives as the reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("not a /tick command: `{0}`")]
    NotTick(String),
    #[error("unknown option `{0}` (usage: /tick [<count>] [--policy <id>] [--resume] | /tick policies | /tick status | /tick stop | /tick subscribe ID...)")]
    UnknownOption(String),
    #[error("duplicated option `{0}`")]
    DuplicateOption(String),
    #[error("unexpected argument `{0}`: give at most one count")]
    UnexpectedArgument(String),
    #[error("invalid count `{0}`: the count must be an integer in [{MIN_COUNT}, {MAX_COUNT}]")]
    InvalidCount(String),
    #[error("`--policy` needs a policy id")]
    MissingPolicyId,
    #[error("invalid policy id `{0}`: an id starts with an ASCII letter and has at most {MAX_POLICY_ID_LEN} ASCII letters, digits, `.`, `_` or `-`")]
    InvalidPolicyId(String),
    #[error(
        "`/tick subscribe` needs at least one instance id (e.g. /tick subscribe hosted:counter)"
    )]
    MissingInstance,
    #[error("`/tick {0}` takes no arguments")]
    ExtraArguments(String),
}

/// Whether `id` is a well-formed policy id.
pub fn valid_policy_id(id: &str) -> bool {
    let mut chars = id.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {}
        _ => return false,
    }
    id.len() <= MAX_POLICY_ID_LEN
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Parses one control command line.
pub fn parse(text: &str) -> Result<Command, CommandError> {
    let mut words = text.split_ascii_whitespace();
    if words.next() != Some("/tick") {
        return Err(CommandError::NotTick(text.trim().to_string()));
    }
    let rest: Vec<&str> = words.collect();
    if let Some(&first) = rest.first() {
        if first == "subscribe" {
            if rest.len() < 2 {
                return Err(CommandError::MissingInstance);
            }
            return Ok(Command::Subscribe(
                rest[1..].iter().map(|s| s.to_string()).collect(),
            ));
        }
        let sub = match first {
            "policies" => Some(Command::Policies),
            "status" => Some(Command::Status),
            "stop" => Some(Command::Stop),
            _ => None,
        };
        if let Some(sub) = sub {
            if rest.len() > 1 {
                return Err(CommandError::ExtraArguments(first.to_string()));
            }
            return Ok(sub);
        }
    }

    let mut count: Option<u32> = None;
    let mut policy: Option<String> = None;
    let mut resume = false;
    let mut i = 0;
    while i < rest.len() {
        let word = rest[i];
        match word {
            "--policy" => {
                if policy.is_some() {
                    return Err(CommandError::DuplicateOption(word.to_string()));
                }
                let id = rest.get(i + 1).ok_or(CommandError::MissingPolicyId)?;
                if id.starts_with("--") {
                    return Err(CommandError::MissingPolicyId);
                }
                if !valid_policy_id(id) {
                    return Err(CommandError::InvalidPolicyId((*id).to_string()));
                }
                policy = Some((*id).to_string());
                i += 2;
                continue;
            }
            "--resume" => {
                if resume {
                    return Err(CommandError::DuplicateOption(word.to_string()));
                }
                resume = true;
            }
            _ if word.starts_with('-') && !looks_numeric(&word[1..]) => {
                return Err(CommandError::UnknownOption(word.to_string()));
            }
            _ => {
                if count.is_some() {
                    return Err(CommandError::UnexpectedArgument(word.to_string()));
                }
                count = Some(parse_count(word)?);
            }
        }
        i += 1;
    }
    Ok(Command::Start {
        count,
        policy,
        resume,
    })
}

fn looks_numeric(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn parse_count(word: &str) -> Result<u32, CommandError> {
    let invalid = || CommandError::InvalidCount(word.to_string());
    if !looks_numeric(word) {
        return Err(invalid());
    }
    let n: u32 = word.parse().map_err(|_| invalid())?;
    if (MIN_COUNT..=MAX_COUNT).contains(&n) {
        Ok(n)
    } else {
        Err(invalid())
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Policies => write!(f, "/tick policies"),
            Command::Status => write!(f, "/tick status"),
            Command::Stop => write!(f, "/tick stop"),
            Command::Subscribe(ids) => write!(f, "/tick subscribe {}", ids.join(" ")),
            Command::Start {
                count,
                policy,
                resume,
            } => {
                write!(f, "/tick")?;
                if let Some(c) = count {
                    write!(f, " {c}")?;
                }
                if let Some(p) = policy {
                    write!(f, " --policy {p}")?;
                }
                if *resume {
                    write!(f, " --resume")?;
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(count: Option<u32>, policy: Option<&str>, resume: bool) -> Command {
        Command::Start {
            count,
            policy: policy.map(str::to_string),
            resume,
        }
    }

    #[test]
    fn accepts_the_grammar() {
        assert_eq!(parse("/tick"), Ok(start(None, None, false)));
        assert_eq!(parse("  /tick   3 "), Ok(start(Some(3), None, false)));
        assert_eq!(parse("/tick 1"), Ok(start(Some(1), None, false)));
        assert_eq!(parse("/tick 256"), Ok(start(Some(256), None, false)));
        assert_eq!(
            parse("/tick 5 --policy reflective-en --resume"),
            Ok(start(Some(5), Some("reflective-en"), true))
        );
        assert_eq!(
            parse("/tick --resume --policy a.b_c-9"),
            Ok(start(None, Some("a.b_c-9"), true))
        );
        assert_eq!(parse("/tick policies"), Ok(Command::Policies));
        assert_eq!(parse("/tick status"), Ok(Command::Status));
        assert_eq!(parse("/tick stop"), Ok(Command::Stop));
    }

    #[test]
    fn refuses_everything_else() {
        use CommandError::*;
        assert!(matches!(parse("/ticks 3"), Err(NotTick(_))));
        assert!(matches!(parse("tick"), Err(NotTick(_))));
        assert!(matches!(parse(""), Err(NotTick(_))));
        assert!(matches!(parse("/tick 0"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick 257"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick -1"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick +3"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick 3.5"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick 99999999999"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick three"), Err(InvalidCount(_))));
        assert!(matches!(parse("/tick 3 4"), Err(UnexpectedArgument(_))));
        assert!(matches!(parse("/tick --forever"), Err(UnknownOption(_))));
        assert!(matches!(parse("/tick --policy=x"), Err(UnknownOption(_))));
        assert!(matches!(
            parse("/tick --resume --resume"),
            Err(DuplicateOption(_))
        ));
        assert!(matches!(
            parse("/tick --policy a --policy b"),
            Err(DuplicateOption(_))
        ));
        assert!(matches!(parse("/tick --policy"), Err(MissingPolicyId)));
        assert!(matches!(
            parse("/tick --policy --resume"),
            Err(MissingPolicyId)
        ));
        assert!(matches!(
            parse("/tick --policy 9lives"),
            Err(InvalidPolicyId(_))
        ));
        assert!(matches!(
            parse("/tick --policy a/b"),
            Err(InvalidPolicyId(_))
        ));
        let long = format!("/tick --policy a{}", "b".repeat(64));
        assert!(matches!(parse(&long), Err(InvalidPolicyId(_))));
        assert!(matches!(parse("/tick status now"), Err(ExtraArguments(_))));
        assert!(matches!(parse("/tick stop 3"), Err(ExtraArguments(_))));
    }

    #[test]
    fn policy_ids() {
        assert!(valid_policy_id("a"));
        assert!(valid_policy_id(&format!("a{}", "1".repeat(63))));
        assert!(!valid_policy_id(&format!("a{}", "1".repeat(64))));
        assert!(!valid_policy_id(""));
        assert!(!valid_policy_id("-a"));
        assert!(!valid_policy_id("é"));
    }

    #[test]
    fn display_round_trips() {
        for text in ["/tick", "/tick 3 --policy p --resume", "/tick stop"] {
            let cmd = parse(text).unwrap();
            assert_eq!(parse(&cmd.to_string()).unwrap(), cmd);
        }
    }
}
