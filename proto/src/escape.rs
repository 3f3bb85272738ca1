//! Text from an agent or a program as a person is shown it: every
//! character that is not plainly visible text is shown escaped as
//! `\u{202E}` (upper-case hexadecimal), never dropped and never refused
//! (the person may need to type it). The one implementation every surface
//! uses: the questions (the Monitor, the attach view, the web page,
//! `tickloop approvals`, notifications, the MCP host's question) and the
//! titles programs set.
//!
//! Escaped, after Unicode TR #36 and the Trojan Source guidance
//! (CVE-2021-42574):
//! - controls: C0, DEL, C1 (general category Cc);
//! - format characters (Cf): the bidi embeddings, overrides and isolates
//!   (U+202A–202E, U+2066–2069), the marks (U+200E/200F, U+061C), the
//!   zero-width characters (U+200B–200D, U+2060, U+FEFF), the soft hyphen,
//!   tags and the rest of Cf;
//! - the line and paragraph separators (U+2028/2029, Zl and Zp);
//! - every space but U+0020 (Zs: no-break and wide spaces look like a
//!   space and are not one to a shell);
//! - the rest of Default_Ignorable_Code_Point, which draw as nothing
//!   (variation selectors, the Hangul fillers, U+034F, U+17B4/17B5, the
//!   Mongolian free variation selectors), and U+2800 (a blank Braille cell);
//! - unassigned code points (Cn, as of the Unicode version of
//!   `unicode-general-category`): what they will look like is unknown.
//!
//! A `\` followed by `u{` is escaped too (`\u{5C}`), so every `\u{` in
//! escaped text is an escape: [`parts`] finds them again, and a page or a
//! terminal can set them apart from text.
//!
//! Pure: no I/O.

use unicode_general_category::{get_general_category, GeneralCategory};

/// Default_Ignorable_Code_Point that is neither Cf nor unassigned (those
/// are escaped by their category), and U+2800: characters that draw as
/// nothing.
const INVISIBLE: &[(u32, u32)] = &[
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180D),
    (0x180F, 0x180F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
];

/// Whether `c` is shown escaped.
pub fn is_escaped(c: char) -> bool {
    if c == ' ' {
        return false;
    }
    let code = u32::from(c);
    if INVISIBLE
        .iter()
        .any(|&(from, to)| (from..=to).contains(&code))
    {
        return true;
    }
    matches!(
        get_general_category(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::SpaceSeparator
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    )
}

/// `c` escaped: `\u{202E}`.
pub fn escape_char(c: char) -> String {
    format!("\\u{{{:X}}}", u32::from(c))
}

/// `text` as a person is shown it: every character [`is_escaped`] says,
/// and a `\` before `u{`, as `\u{HEX}`; the rest as it is.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let literal_escape = c == '\\' && chars.clone().take(2).eq(['u', '{']);
        if literal_escape || is_escaped(c) {
            out.push_str(&escape_char(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// `value` as JSON on one line, escaped ([`escaped`]).
pub fn json(value: &serde_json::Value) -> String {
    escaped(&value.to_string())
}

/// A piece of escaped text: text as it is, or one escape (`\u{202E}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part<'a> {
    Text(&'a str),
    Escape(&'a str),
}

/// The escapes of `shown` (text made by [`escaped`], with other text of
/// Tickloop's around it) told from its text, in order.
pub fn parts(shown: &str) -> Vec<Part<'_>> {
    let mut out = Vec::new();
    let mut text_from = 0;
    let mut search_from = 0;
    while let Some(found) = shown[search_from..].find("\\u{") {
        let at = search_from + found;
        let hex_from = at + 3;
        let close = shown[hex_from..].find('}').map(|c| hex_from + c);
        let escape = close.filter(|&close| {
            let hex = &shown[hex_from..close];
            (1..=6).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
        match escape {
            Some(close) => {
                if text_from < at {
                    out.push(Part::Text(&shown[text_from..at]));
                }
                out.push(Part::Escape(&shown[at..=close]));
                text_from = close + 1;
                search_from = close + 1;
            }
            // Not an escape: `\u{` without hex digits and `}` after it.
            None => search_from = hex_from,
        }
    }
    if text_from < shown.len() {
        out.push(Part::Text(&shown[text_from..]));
    }
    out
}

/// The longest start of `shown` of at most `max` characters that cuts no
/// escape in two.
pub fn prefix(shown: &str, max: usize) -> &str {
    let mut end = 0;
    let mut count = 0;
    for part in parts(shown) {
        match part {
            Part::Escape(e) => {
                let n = e.chars().count();
                if count + n > max {
                    break;
                }
                count += n;
                end += e.len();
            }
            Part::Text(t) => {
                for c in t.chars() {
                    if count + 1 > max {
                        return &shown[..end];
                    }
                    count += 1;
                    end += c.len_utf8();
                }
            }
        }
    }
    &shown[..end]
}

/// Escaped text `shown` in at most `max` characters: whole when it fits,
/// else its start ([`prefix`]) and `note(hidden)`, which says how many
/// characters it hides (and where they show).
pub fn within(shown: &str, max: usize, note: impl Fn(usize) -> String) -> String {
    let total = shown.chars().count();
    if total <= max {
        return shown.to_string();
    }
    // The note is longest with the most hidden.
    let kept = prefix(shown, max.saturating_sub(note(total).chars().count()));
    format!("{kept}{}", note(total - kept.chars().count()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_escaped(chars: impl IntoIterator<Item = char>) {
        for c in chars {
            assert!(is_escaped(c), "U+{:04X} is escaped", u32::from(c));
            assert_eq!(
                escaped(&format!("a{c}b")),
                format!("a\\u{{{:X}}}b", u32::from(c))
            );
        }
    }

    #[test]
    fn c0_del_and_c1_controls_are_escaped() {
        all_escaped(
            ('\0'..='\u{1f}')
                .chain(['\u{7f}'])
                .chain('\u{80}'..='\u{9f}'),
        );
        assert_eq!(escaped("\u{1b}[2J"), "\\u{1B}[2J");
    }

    #[test]
    fn bidi_embeddings_overrides_isolates_and_marks_are_escaped() {
        all_escaped(
            ('\u{202a}'..='\u{202e}')
                .chain('\u{2066}'..='\u{2069}')
                .chain(['\u{200e}', '\u{200f}', '\u{61c}']),
        );
        // Trojan Source's example as the person must see it.
        assert_eq!(
            escaped("echo safe \u{202e}\u{2066}; touch F\u{2069} \u{2066}#\u{2069}\u{202c}"),
            "echo safe \\u{202E}\\u{2066}; touch F\\u{2069} \\u{2066}#\\u{2069}\\u{202C}"
        );
    }

    #[test]
    fn zero_width_and_invisible_characters_are_escaped() {
        all_escaped(
            ('\u{200b}'..='\u{200d}')
                .chain([
                    '\u{2060}', '\u{feff}', '\u{ad}', '\u{34f}', '\u{115f}', '\u{3164}',
                ])
                .chain([
                    '\u{fe0f}',
                    '\u{e0001}',
                    '\u{e0041}',
                    '\u{e0100}',
                    '\u{2800}',
                ])
                .chain(['\u{180e}', '\u{17b4}', '\u{ffa0}']),
        );
    }

    #[test]
    fn line_and_paragraph_separators_and_spaces_that_are_not_a_space_are_escaped() {
        all_escaped([
            '\u{2028}', '\u{2029}', '\u{a0}', '\u{2002}', '\u{3000}', '\u{202f}',
        ]);
    }

    #[test]
    fn unassigned_code_points_are_escaped() {
        all_escaped(['\u{378}', '\u{fffe}', '\u{10ffff}', '\u{e0fff}']);
    }

    #[test]
    fn visible_text_is_left_as_it_is() {
        let text = "ls -la ~/src && echo 'héllo wörld' | grep \"x\\n\" # 日本語 🙂 مرحبا \u{e0b0} e\u{301}";
        assert_eq!(escaped(text), text);
        assert!(!is_escaped(' '));
    }

    #[test]
    fn a_backslash_before_u_brace_is_escaped_so_every_escape_is_one() {
        assert_eq!(escaped("\\u{202E}"), "\\u{5C}u{202E}");
        assert_eq!(escaped("a\\u"), "a\\u");
        assert_eq!(escaped("\\n \\\\"), "\\n \\\\");
        let shown = escaped("x\\u{41}\u{202e}y");
        assert_eq!(
            parts(&shown),
            [
                Part::Text("x"),
                Part::Escape("\\u{5C}"),
                Part::Text("u{41}"),
                Part::Escape("\\u{202E}"),
                Part::Text("y"),
            ]
        );
    }

    #[test]
    fn parts_and_prefixes_keep_escapes_whole() {
        assert_eq!(parts(""), []);
        assert_eq!(parts("\\u{}"), [Part::Text("\\u{}")]);
        let shown = escaped("ab\u{202e}cd");
        assert_eq!(prefix(&shown, 2), "ab");
        assert_eq!(prefix(&shown, 5), "ab");
        assert_eq!(prefix(&shown, 10), "ab\\u{202E}");
        assert_eq!(prefix(&shown, 11), "ab\\u{202E}c");
        assert_eq!(prefix(&shown, 100), shown);
    }

    #[test]
    fn json_is_escaped_past_what_json_escapes() {
        let value = serde_json::json!({"text": "a\u{1b}\u{85}\u{202e}"});
        assert_eq!(json(&value), r#"{"text":"a\u001b\u{85}\u{202E}"}"#);
    }
}
