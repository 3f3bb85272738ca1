//! The views' prefix key (ctrl+\ unless configured), as tmux's prefix: after
//! it, `d` detaches (in the Monitor's overlay: closes it), the prefix again
//! sends it to the program, `m` pops the Monitor's activity overlay over the Tick (what agents did
//! with it; Tab there goes on to the full Monitor), and `?`
//! lists the keys. Any other key after the prefix is dropped, and the view
//! says so.
//!
//! The key is chosen, first found first: `--detach-key`, the
//! `TICKLOOP_DETACH_KEY` environment variable, `detach_key` in
//! `~/.config/tickloop/config.toml`, else ctrl+\. It is written `ctrl+X`
//! where X is a letter or one of `\ ] [ ^ _ @ space`.

use termwiz::input::{KeyCode, KeyEvent, Modifiers};

/// The default prefix key.
pub const DEFAULT_PREFIX: &str = "ctrl+\\";

/// The prefix key: a control character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixKey {
    /// The control byte (0x01..=0x1f, or 0 for ctrl+space / ctrl+@).
    byte: u8,
}

/// A prefix key that cannot be used (or a config file that cannot be read).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadPrefixKey(pub String);

fn bad_key(text: &str) -> BadPrefixKey {
    BadPrefixKey(format!(
        "{text:?} is not a detach key: write ctrl+X, X a letter or one of \\ ] [ ^ _ @ space"
    ))
}

impl PrefixKey {
    /// Parses `ctrl+X` (also `C-X` and `^X`, any case).
    pub fn parse(text: &str) -> Result<PrefixKey, BadPrefixKey> {
        let bad = || bad_key(text);
        let lower = text.trim().to_ascii_lowercase();
        let rest = ["ctrl+", "ctrl-", "c-", "^"]
            .iter()
            .find_map(|p| lower.strip_prefix(p))
            .ok_or_else(bad)?;
        let byte = match rest {
            "space" | "@" => 0,
            r if r.len() == 1 => {
                let c = r.as_bytes()[0];
                match c {
                    b'a'..=b'z' => c - b'a' + 1,
                    b'[' | b'\\' | b']' | b'^' | b'_' => c - 0x40,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        };
        Ok(PrefixKey { byte })
    }

    /// The key from `flag` (the command line), else the environment, else
    /// the config file, else ctrl+\.
    pub fn choose(flag: Option<&str>) -> Result<PrefixKey, BadPrefixKey> {
        if let Some(flag) = flag {
            return PrefixKey::parse(flag);
        }
        if let Ok(env) = std::env::var("TICKLOOP_DETACH_KEY") {
            if !env.trim().is_empty() {
                return PrefixKey::parse(&env);
            }
        }
        let configured =
            tickloop_client::config::load().map_err(|e| BadPrefixKey(e.to_string()))?;
        if let Some(configured) = configured.detach_key {
            return PrefixKey::parse(&configured);
        }
        PrefixKey::parse(DEFAULT_PREFIX)
    }

    /// The byte the view's terminal sends for it.
    pub fn byte(&self) -> u8 {
        self.byte
    }

    /// How people write it: `ctrl+\`, `ctrl+a`.
    pub fn name(&self) -> String {
        match self.byte {
            0 => "ctrl+space".to_string(),
            b @ 1..=26 => format!("ctrl+{}", char::from(b - 1 + b'a')),
            b => format!("ctrl+{}", char::from(b + 0x40)),
        }
    }

    /// Whether a key from the view's terminal is this key (termwiz reports
    /// control characters as the raw character, or as the key with CTRL).
    pub fn matches(&self, event: &KeyEvent) -> bool {
        let KeyCode::Char(c) = event.key else {
            return false;
        };
        if u32::from(c) == u32::from(self.byte) && !event.modifiers.contains(Modifiers::ALT) {
            return true;
        }
        if !event.modifiers.contains(Modifiers::CTRL) || event.modifiers.contains(Modifiers::ALT) {
            return false;
        }
        let c = c.to_ascii_lowercase();
        match self.byte {
            0 => c == ' ' || c == '@' || c == '2',
            b @ 1..=26 => c == char::from(b - 1 + b'a'),
            // ctrl+4 sends 0x1c in xterm, as ctrl+\ does.
            0x1c => c == '\\' || c == '4',
            b => c == char::from(b + 0x40),
        }
    }

    /// The key as the view sends it to the program (pressed twice).
    pub fn as_view_key(&self) -> tickloop_proto::attach::ViewEvent {
        let c = match self.byte {
            0 => ' ',
            b @ 1..=26 => char::from(b - 1 + b'a'),
            b => char::from(b + 0x40),
        };
        tickloop_proto::attach::ViewEvent::Key {
            key: tickloop_proto::attach::Key::Char(c),
            mods: tickloop_proto::attach::Mods {
                ctrl: true,
                ..tickloop_proto::attach::Mods::NONE
            },
        }
    }
}

/// What a key does, given the prefix state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefixAction {
    /// Not for the view: send it to the program.
    Pass,
    /// The prefix: wait for the next key.
    Started,
    /// Prefix, `d`: detach (the overlay: close).
    Detach,
    /// The prefix twice: send the prefix key to the program.
    SendPrefix,
    /// Prefix, `m`: the Monitor over the Tick.
    Monitor,
    /// Prefix, `?`: list the keys.
    Help,
    /// Prefix, then a key that means nothing: dropped.
    Unknown,
}

/// The prefix state of one view.
#[derive(Debug, Clone, Copy)]
pub struct Prefix {
    pub key: PrefixKey,
    pending: bool,
}

impl Prefix {
    pub fn new(key: PrefixKey) -> Self {
        Prefix {
            key,
            pending: false,
        }
    }

    /// Whether the prefix was pressed and the next key is awaited.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// What `event` does.
    pub fn on_key(&mut self, event: &KeyEvent) -> PrefixAction {
        if !self.pending {
            if self.key.matches(event) {
                self.pending = true;
                return PrefixAction::Started;
            }
            return PrefixAction::Pass;
        }
        self.pending = false;
        if self.key.matches(event) {
            return PrefixAction::SendPrefix;
        }
        let plain = !event
            .modifiers
            .intersects(Modifiers::CTRL | Modifiers::ALT | Modifiers::SUPER);
        match event.key {
            KeyCode::Char('d') if plain => PrefixAction::Detach,
            KeyCode::Char('m') if plain => PrefixAction::Monitor,
            KeyCode::Char('?') => PrefixAction::Help,
            _ => PrefixAction::Unknown,
        }
    }

    /// The keys, for `?` and the note shown after attaching.
    pub fn help(&self) -> String {
        let name = self.key.name();
        format!("{name} then: d detach · {name} sends it · m activity · ? keys")
    }

    /// The short reminder a view shows for a moment after attaching.
    pub fn reminder(&self) -> String {
        format!(
            "{} d detaches · {} ? keys",
            self.key.name(),
            self.key.name()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(key: KeyCode, modifiers: Modifiers) -> KeyEvent {
        KeyEvent { key, modifiers }
    }

    #[test]
    fn parses_the_ways_people_write_control_keys() {
        let backslash = PrefixKey::parse("ctrl+\\").unwrap();
        assert_eq!(backslash.name(), "ctrl+\\");
        assert_eq!(PrefixKey::parse("C-a").unwrap().name(), "ctrl+a");
        assert_eq!(PrefixKey::parse("^B").unwrap().name(), "ctrl+b");
        assert_eq!(PrefixKey::parse("Ctrl+]").unwrap().name(), "ctrl+]");
        assert_eq!(PrefixKey::parse("ctrl+space").unwrap().name(), "ctrl+space");
        for bad in ["", "a", "ctrl+", "ctrl+ab", "alt+x", "ctrl+1", "ctrl+é"] {
            let err = PrefixKey::parse(bad).unwrap_err();
            assert!(err.to_string().contains("ctrl+X"), "{err}");
        }
    }

    #[test]
    fn matches_raw_and_modified_forms() {
        let k = PrefixKey::parse("ctrl+\\").unwrap();
        assert!(k.matches(&key(KeyCode::Char('\x1c'), Modifiers::NONE)));
        assert!(k.matches(&key(KeyCode::Char('\\'), Modifiers::CTRL)));
        assert!(k.matches(&key(KeyCode::Char('4'), Modifiers::CTRL)));
        assert!(!k.matches(&key(KeyCode::Char('\\'), Modifiers::NONE)));
        let a = PrefixKey::parse("ctrl+a").unwrap();
        assert!(a.matches(&key(KeyCode::Char('\x01'), Modifiers::NONE)));
        assert!(a.matches(&key(KeyCode::Char('a'), Modifiers::CTRL)));
        assert!(!a.matches(&key(KeyCode::Char('\x1c'), Modifiers::NONE)));
        assert_eq!(
            a.as_view_key(),
            tickloop_proto::attach::ViewEvent::Key {
                key: tickloop_proto::attach::Key::Char('a'),
                mods: tickloop_proto::attach::Mods {
                    ctrl: true,
                    ..tickloop_proto::attach::Mods::NONE
                }
            }
        );
    }

    #[test]
    fn prefix_then_a_key() {
        let mut p = Prefix::new(PrefixKey::parse("ctrl+\\").unwrap());
        let prefix = key(KeyCode::Char('\x1c'), Modifiers::NONE);
        let plain = |c| key(KeyCode::Char(c), Modifiers::NONE);
        assert_eq!(p.on_key(&plain('x')), PrefixAction::Pass);
        assert_eq!(p.on_key(&prefix), PrefixAction::Started);
        assert!(p.pending());
        assert_eq!(p.on_key(&plain('d')), PrefixAction::Detach);
        assert!(!p.pending());
        assert_eq!(p.on_key(&prefix), PrefixAction::Started);
        assert_eq!(p.on_key(&prefix), PrefixAction::SendPrefix);
        assert_eq!(p.on_key(&prefix), PrefixAction::Started);
        assert_eq!(p.on_key(&plain('m')), PrefixAction::Monitor);
        assert_eq!(p.on_key(&prefix), PrefixAction::Started);
        assert_eq!(p.on_key(&plain('?')), PrefixAction::Help);
        assert_eq!(p.on_key(&prefix), PrefixAction::Started);
        assert_eq!(p.on_key(&plain('z')), PrefixAction::Unknown);
        assert_eq!(p.on_key(&plain('d')), PrefixAction::Pass);
    }
}
