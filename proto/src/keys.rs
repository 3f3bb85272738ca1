//! Keys by name, as tmux's `send-keys` names them: `Enter`, `Escape`,
//! `Tab`, `BTab`, `BSpace`, `Space`, `Up`/`Down`/`Left`/`Right`, `Home`,
//! `End`, `PageUp`/`PageDown` (`PPage`/`NPage`, `PgUp`/`PgDn`), `IC`/`DC`
//! (`Insert`/`Delete`), `F1`–`F12`, the keypad's `KP0`–`KP9`, `KP/`, `KP*`,
//! `KP-`, `KP+`, `KP.`, `KPEnter`, any one character, and each of them
//! after `C-` (ctrl), `M-` (meta/alt) and `S-` (shift) prefixes, or `^x`
//! for `C-x`. Names are matched without regard to case, as tmux does.
//!
//! Pure: [`parse`] turns a name into a [`Pressed`] key (an attach-protocol
//! [`Key`] with its [`Mods`], or a keypad key), and [`parse_all`] checks a
//! whole list before anything is typed. The launcher encodes each key for
//! the program's current modes (application cursor keys, the keypad mode).

use crate::attach::{Key, Mods};

/// A key named by an agent, ready to be encoded for the program's modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pressed {
    /// A key a view could send too.
    Key { key: Key, mods: Mods },
    /// A key of the numeric keypad: its character in numeric mode, an SS3
    /// sequence in application keypad mode (DECKPAM).
    Keypad { key: KeypadKey, mods: Mods },
}

/// The numeric keypad's keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeypadKey {
    /// `KP0`–`KP9`.
    Digit(u8),
    Slash,
    Star,
    Minus,
    Plus,
    Dot,
    Enter,
}

impl KeypadKey {
    /// What the key types in numeric keypad mode.
    pub fn numeric(self) -> char {
        match self {
            KeypadKey::Digit(d) => char::from(b'0' + d.min(9)),
            KeypadKey::Slash => '/',
            KeypadKey::Star => '*',
            KeypadKey::Minus => '-',
            KeypadKey::Plus => '+',
            KeypadKey::Dot => '.',
            KeypadKey::Enter => '\r',
        }
    }

    /// The final byte of its SS3 sequence (`ESC O x`) in application keypad
    /// mode, as xterm and tmux send it.
    pub fn application(self) -> u8 {
        match self {
            KeypadKey::Digit(d) => b'p' + d.min(9),
            KeypadKey::Slash => b'o',
            KeypadKey::Star => b'j',
            KeypadKey::Minus => b'm',
            KeypadKey::Plus => b'k',
            KeypadKey::Dot => b'n',
            KeypadKey::Enter => b'M',
        }
    }
}

/// A name that is no key (unknown, a control character, or a modifier a
/// terminal cannot send with it); nothing was typed. The name is shown
/// with Rust's escapes, so a control character in it is seen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no key is named {name:?}: {why}; keys are tmux's names (Enter, Escape, Tab, BTab, BSpace, Space, Up, Down, Left, Right, Home, End, PageUp, PageDown, IC, DC, F1-F12, KP0-KP9, KPEnter) or one character, each after C-, M- or S- as needed (C-c, M-x, S-Up); type text with `tickloop input`")]
pub struct KeyNameError {
    pub name: String,
    pub why: &'static str,
}

/// The named keys, as tmux spells them (matched without regard to case).
const NAMED: &[(&str, Key)] = &[
    ("Enter", Key::Enter),
    ("Escape", Key::Escape),
    ("Tab", Key::Tab),
    ("BSpace", Key::Backspace),
    ("Space", Key::Char(' ')),
    ("Up", Key::Up),
    ("Down", Key::Down),
    ("Left", Key::Left),
    ("Right", Key::Right),
    ("Home", Key::Home),
    ("End", Key::End),
    ("PageUp", Key::PageUp),
    ("PPage", Key::PageUp),
    ("PgUp", Key::PageUp),
    ("PageDown", Key::PageDown),
    ("NPage", Key::PageDown),
    ("PgDn", Key::PageDown),
    ("IC", Key::Insert),
    ("Insert", Key::Insert),
    ("DC", Key::Delete),
    ("Delete", Key::Delete),
];

const KEYPAD: &[(&str, KeypadKey)] = &[
    ("KP/", KeypadKey::Slash),
    ("KP*", KeypadKey::Star),
    ("KP-", KeypadKey::Minus),
    ("KP+", KeypadKey::Plus),
    ("KP.", KeypadKey::Dot),
    ("KPEnter", KeypadKey::Enter),
];

/// The key `name` names.
pub fn parse(name: &str) -> Result<Pressed, KeyNameError> {
    let error = |why| KeyNameError {
        name: name.to_string(),
        why,
    };
    if name.is_empty() {
        return Err(error("it is empty"));
    }
    let mut mods = Mods::NONE;
    let mut rest = name;
    // `^x` is `C-x` (tmux), but `^` alone is the character.
    if let Some(after) = rest.strip_prefix('^') {
        if after.chars().count() == 1 {
            mods.ctrl = true;
            rest = after;
        }
    }
    // Modifier prefixes: a letter and `-`, as long as something follows.
    loop {
        let bytes = rest.as_bytes();
        if bytes.len() < 3 || bytes[1] != b'-' {
            break;
        }
        match bytes[0].to_ascii_uppercase() {
            b'C' => mods.ctrl = true,
            b'M' => mods.alt = true,
            b'S' => mods.shift = true,
            _ => break,
        }
        rest = &rest[2..];
    }
    let mut chars = rest.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        if let Some(why) = not_a_key(c) {
            return Err(error(why));
        }
        let pressed = character(c, mods);
        if let Some(why) = modifier_impossible(&pressed) {
            return Err(error(why));
        }
        return Ok(pressed);
    }
    if let Some((_, key)) = NAMED.iter().find(|(n, _)| n.eq_ignore_ascii_case(rest)) {
        let pressed = Pressed::Key { key: *key, mods };
        // `S-Space` would be a plain space.
        return match modifier_impossible(&pressed) {
            Some(why) => Err(error(why)),
            None => Ok(pressed),
        };
    }
    if rest.eq_ignore_ascii_case("BTab") {
        // Shift+Tab: CSI Z.
        mods.shift = true;
        return Ok(Pressed::Key {
            key: Key::Tab,
            mods,
        });
    }
    let keypad = KEYPAD
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(rest))
        .map(|(_, key)| *key);
    let upper = rest.to_ascii_uppercase();
    let digit = upper
        .strip_prefix("KP")
        .filter(|d| d.len() == 1)
        .and_then(|d| d.parse::<u8>().ok())
        .map(KeypadKey::Digit);
    if let Some(key) = keypad.or(digit) {
        if mods.ctrl || mods.shift {
            return Err(error(
                "a keypad key takes no C- or S- (a terminal sends the same for it either way); M- goes with it",
            ));
        }
        return Ok(Pressed::Keypad { key, mods });
    }

    if let Some(number) = upper.strip_prefix('F') {
        if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
            return match number.parse::<u8>() {
                Ok(n @ 1..=12) if !number.starts_with('0') => Ok(Pressed::Key {
                    key: Key::F(n),
                    mods,
                }),
                _ => Err(error("function keys are F1 to F12")),
            };
        }
    }
    Err(error("no key has that name"))
}

/// Why the character `c` is no key name: a control or an invisible
/// character (it would break the question that shows it), with the name
/// to use instead.
fn not_a_key(c: char) -> Option<&'static str> {
    if !crate::escape::is_escaped(c) {
        return None;
    }
    Some(match c {
        '\r' | '\n' => "it is a control character, not a key name: the key is Enter",
        '\t' => "it is a control character, not a key name: the key is Tab",
        '\u{1b}' => "it is a control character, not a key name: the key is Escape",
        '\u{7f}' | '\u{8}' => "it is a control character, not a key name: the key is BSpace",
        '\u{0}'..='\u{1f}' => {
            "it is a control character, not a key name: name it with C- and its letter (C-c is Ctrl-C)"
        }
        _ => "it is an invisible or control character, not a key name: type it with `tickloop input` (the person sees it escaped)",
    })
}

/// The characters a terminal has a control code for with Ctrl (xterm's
/// and tmux's: `C-a`..`C-z`, `C-@`, `C-[`, `C-\\`, `C-]`, `C-^`, `C-_`,
/// `C-?`, `C-Space`, and `C-2`..`C-8`, `` C-` ``, `C-{`, `C-|`, `C-}`,
/// `C-~`, `C-/` as their synonyms).
fn has_control_code(c: char) -> bool {
    c.is_ascii_alphabetic() || "@`[{\\|]}^~_/?2345678 ".contains(c)
}

/// Why a modifier of `pressed` cannot be sent (the terminal would type the
/// key without it): `C-` with a character that has no control code, `S-`
/// with a character that is no letter (`S-a` is `A`).
fn modifier_impossible(pressed: &Pressed) -> Option<&'static str> {
    let Pressed::Key {
        key: Key::Char(c),
        mods,
    } = pressed
    else {
        return None;
    };
    if mods.ctrl && !has_control_code(*c) {
        return Some(
            "a terminal has no Ctrl code for that character (C- goes with a letter, Space, @ [ \\ ] ^ _ ? / ` { | } ~ or a digit 2 to 8); type the character alone, or with M-",
        );
    }
    if mods.shift && !c.is_ascii_alphabetic() {
        return Some(
            "S- goes with a letter or a named key (S-Up, S-Tab); for a shifted character name the character itself (`!`, not S-1)",
        );
    }
    None
}

/// A one-character key: with ctrl, a letter is the same key in either case
/// (`C-A` is `C-a`, as in tmux); with shift alone, a letter is its capital.
fn character(c: char, mut mods: Mods) -> Pressed {
    let mut c = c;
    if mods.ctrl && c.is_ascii_uppercase() {
        c = c.to_ascii_lowercase();
    }
    if mods.shift && !mods.ctrl && !mods.alt && c.is_ascii_lowercase() {
        c = c.to_ascii_uppercase();
        mods.shift = false;
    }
    Pressed::Key {
        key: Key::Char(c),
        mods,
    }
}

/// Every key of `names`, or the first name that is none (then nothing may
/// be typed).
pub fn parse_all<S: AsRef<str>>(names: &[S]) -> Result<Vec<Pressed>, KeyNameError> {
    names.iter().map(|n| parse(n.as_ref())).collect()
}

/// The canonical name of `pressed` (what [`parse`] reads back as the same
/// key): for messages and tests.
pub fn name(pressed: &Pressed) -> String {
    let (base, mods) = match pressed {
        Pressed::Key { key, mods } => {
            let base = match key {
                Key::Char(' ') => "Space".to_string(),
                Key::Char(c) => c.to_string(),
                Key::F(n) => format!("F{n}"),
                other => NAMED
                    .iter()
                    .find(|(_, k)| k == other)
                    .map_or_else(|| format!("{other:?}"), |(n, _)| n.to_string()),
            };
            (base, *mods)
        }
        Pressed::Keypad { key, mods } => {
            let base = match key {
                KeypadKey::Digit(d) => format!("KP{d}"),
                other => KEYPAD
                    .iter()
                    .find(|(_, k)| k == other)
                    .map_or_else(String::new, |(n, _)| n.to_string()),
            };
            (base, *mods)
        }
    };
    let mut out = String::new();
    if mods.ctrl {
        out.push_str("C-");
    }
    if mods.alt {
        out.push_str("M-");
    }
    if mods.shift {
        out.push_str("S-");
    }
    out.push_str(&base);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key(key: Key, ctrl: bool, alt: bool, shift: bool) -> Pressed {
        Pressed::Key {
            key,
            mods: Mods {
                ctrl,
                alt,
                shift,
                super_: false,
            },
        }
    }

    #[test]
    fn tmux_names_parse() {
        let cases = [
            ("Enter", key(Key::Enter, false, false, false)),
            ("enter", key(Key::Enter, false, false, false)),
            ("C-c", key(Key::Char('c'), true, false, false)),
            ("C-C", key(Key::Char('c'), true, false, false)),
            ("^c", key(Key::Char('c'), true, false, false)),
            ("M-x", key(Key::Char('x'), false, true, false)),
            ("S-Up", key(Key::Up, false, false, true)),
            ("C-M-Left", key(Key::Left, true, true, false)),
            ("BTab", key(Key::Tab, false, false, true)),
            ("BSpace", key(Key::Backspace, false, false, false)),
            ("Space", key(Key::Char(' '), false, false, false)),
            ("C-Space", key(Key::Char(' '), true, false, false)),
            ("PPage", key(Key::PageUp, false, false, false)),
            ("NPage", key(Key::PageDown, false, false, false)),
            ("IC", key(Key::Insert, false, false, false)),
            ("DC", key(Key::Delete, false, false, false)),
            ("F1", key(Key::F(1), false, false, false)),
            ("F12", key(Key::F(12), false, false, false)),
            ("q", key(Key::Char('q'), false, false, false)),
            ("-", key(Key::Char('-'), false, false, false)),
            ("C-_", key(Key::Char('_'), true, false, false)),
            ("^", key(Key::Char('^'), false, false, false)),
            ("é", key(Key::Char('é'), false, false, false)),
            ("S-a", key(Key::Char('A'), false, false, false)),
        ];
        for (name, want) in cases {
            assert_eq!(parse(name), Ok(want), "{name}");
        }
        assert_eq!(
            parse("KP5"),
            Ok(Pressed::Keypad {
                key: KeypadKey::Digit(5),
                mods: Mods::NONE
            })
        );
        assert_eq!(
            parse("KPEnter"),
            Ok(Pressed::Keypad {
                key: KeypadKey::Enter,
                mods: Mods::NONE
            })
        );
    }

    #[test]
    fn unknown_names_are_refused_with_what_to_do() {
        for bad in [
            "", "Enterr", "F13", "F0", "F01", "X-a", "C-", "hello", "KP10",
        ] {
            let error = parse(bad).expect_err(bad);
            let message = error.to_string();
            assert!(message.contains("tickloop input"), "{message}");
        }
        assert!(parse_all(&["Enter", "nope", "C-c"]).is_err());
    }

    #[test]
    fn a_control_character_is_no_key_name_and_the_hint_names_the_key() {
        for (bad, hint) in [
            ("\u{3}", "C- and its letter"),
            ("\r", "the key is Enter"),
            ("\n", "the key is Enter"),
            ("\t", "the key is Tab"),
            ("\u{1b}", "the key is Escape"),
            ("\u{7f}", "the key is BSpace"),
            ("M-\u{3}", "C- and its letter"),
            ("\u{85}", "tickloop input"),
            ("\u{202e}", "tickloop input"),
            ("\u{200b}", "tickloop input"),
            ("\u{2028}", "tickloop input"),
        ] {
            let message = parse(bad).expect_err(bad).to_string();
            assert!(message.contains(hint), "{bad:?}: {message}");
            // The name in the message is escaped, never raw.
            assert!(!message.contains(bad), "{bad:?}: {message}");
        }
    }

    #[test]
    fn a_modifier_a_terminal_cannot_send_is_refused_not_dropped() {
        for bad in [
            "C-é",
            "C--",
            "C-1",
            "C-9",
            "C-=",
            "C-M-é",
            "^é",
            "S-1",
            "S-é",
            "S-Space",
            "M-S-1",
            "C-KP5",
            "S-KPEnter",
        ] {
            let message = parse(bad).expect_err(bad).to_string();
            assert!(
                message.contains("C-") || message.contains("S-"),
                "{bad}: {message}"
            );
        }
        // What a terminal can send stays.
        for good in [
            "C-a", "C-@", "C-[", "C-\\", "C-]", "C-^", "C-_", "C-?", "C-Space", "C-2", "C-8",
            "C-/", "M-é", "M-KP5", "C-S-a", "M-S-a", "S-Up", "C-Enter", "C-BSpace", "é",
        ] {
            assert!(parse(good).is_ok(), "{good}: {:?}", parse(good));
        }
        assert_eq!(parse_all(&["Enter", "C-c"]).map(|k| k.len()), Ok(2));
    }

    fn any_pressed() -> impl Strategy<Value = Pressed> {
        let keys = prop_oneof![
            proptest::char::range('!', '~').prop_map(Key::Char),
            Just(Key::Enter),
            Just(Key::Tab),
            Just(Key::Backspace),
            Just(Key::Escape),
            Just(Key::Up),
            Just(Key::Down),
            Just(Key::Left),
            Just(Key::Right),
            Just(Key::Home),
            Just(Key::End),
            Just(Key::PageUp),
            Just(Key::PageDown),
            Just(Key::Insert),
            Just(Key::Delete),
            (1u8..=12).prop_map(Key::F),
        ];
        let keypad = prop_oneof![
            (0u8..=9).prop_map(KeypadKey::Digit),
            Just(KeypadKey::Slash),
            Just(KeypadKey::Star),
            Just(KeypadKey::Minus),
            Just(KeypadKey::Plus),
            Just(KeypadKey::Dot),
            Just(KeypadKey::Enter),
        ];
        let mods =
            (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(ctrl, alt, shift)| Mods {
                ctrl,
                alt,
                shift,
                super_: false,
            });
        prop_oneof![
            (keys, mods.clone())
                .prop_map(|(key, mods)| match character_or(key, mods) {
                    Some(p) => p,
                    None => Pressed::Key { key, mods },
                })
                .prop_filter("a terminal can send it", |p| modifier_impossible(p)
                    .is_none()),
            (keypad, mods)
                .prop_map(|(key, mods)| Pressed::Keypad { key, mods })
                .prop_filter("a terminal can send it", |p| match p {
                    Pressed::Keypad { mods, .. } => !mods.ctrl && !mods.shift,
                    Pressed::Key { .. } => true,
                }),
        ]
    }

    /// A character key as [`parse`] normalizes it.
    fn character_or(key: Key, mods: Mods) -> Option<Pressed> {
        match key {
            Key::Char(c) => Some(character(c, mods)),
            _ => None,
        }
    }

    proptest! {
        #[test]
        fn a_keys_name_parses_back_to_it(pressed in any_pressed()) {
            prop_assert_eq!(parse(&name(&pressed)), Ok(pressed));
        }

        #[test]
        fn any_text_parses_or_is_refused_without_panicking(text in ".{0,12}") {
            let _ = parse(&text);
        }
    }
}
