//! The kitty graphics protocol's commands (`ESC _ G control;payload ESC \`,
//! <https://sw.kovidgoyal.net/kitty/graphics-protocol/>) as the keeper
//! takes them: the control keys read, chunked transmissions (`m=1`) put
//! together, and the replies kitty would give. Only direct transmission
//! (`t=d`) is taken; files, temporary files and shared memory (`t=f`,
//! `t=t`, `t=s`) are refused, as tmux does: the launcher may run on
//! another machine than the program's files, and reads nothing a program
//! names.

use base64::engine::general_purpose::GeneralPurpose;
use base64::engine::{DecodePaddingMode, GeneralPurposeConfig};
use base64::Engine;

/// Standard base64 that takes a chunk with or without its padding, and
/// with stray bits after the last byte (chafa 1.12 sends them).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

/// One command's control keys (those the keeper uses; others are ignored,
/// as kitty ignores unknown keys).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Control {
    /// `a`: `t` transmit (the default), `T` transmit and display, `p`
    /// display, `d` delete, `q` query; others (animation) are not taken.
    pub action: u8,
    /// `t`: `d` direct (the default), `f`, `t`, `s`.
    pub medium: u8,
    /// `f`: 24, 32 (the default) or 100.
    pub format: u32,
    /// `o=z`.
    pub zlib: bool,
    /// `s`, `v`: the size in pixels (RGB and RGBA).
    pub width: u32,
    pub height: u32,
    /// `i`, `I`, `p`: image id, image number, placement id.
    pub id: u32,
    pub number: u32,
    pub placement: u32,
    /// `m=1`: more chunks follow.
    pub more: bool,
    /// `c`, `r`: the cells to show it in.
    pub cols: u32,
    pub rows: u32,
    /// `C=1`: the cursor stays.
    pub cursor_stays: bool,
    /// `q`: 1 no OK replies, 2 no replies.
    pub quiet: u32,
    /// `d`: what a delete deletes (`a` by default).
    pub delete: u8,
}

/// A command split into its control keys and its payload (still base64).
pub fn parse(command: &[u8]) -> Result<(Control, &[u8]), String> {
    let (keys, payload) = match command.iter().position(|&b| b == b';') {
        Some(at) => (&command[..at], &command[at + 1..]),
        None => (command, &command[command.len()..]),
    };
    let mut control = Control {
        action: b't',
        medium: b'd',
        format: 32,
        delete: b'a',
        ..Control::default()
    };
    for pair in keys.split(|&b| b == b',').filter(|p| !p.is_empty()) {
        let [key, b'=', value @ ..] = pair else {
            return Err(format!(
                "the control key {:?} has no value",
                String::from_utf8_lossy(pair)
            ));
        };
        let number = || -> Result<u32, String> {
            std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .ok_or_else(|| {
                    format!(
                        "the value of {} is not a number: {:?}",
                        char::from(*key),
                        String::from_utf8_lossy(value)
                    )
                })
        };
        let letter = || value.first().copied().unwrap_or(0);
        match key {
            b'a' => control.action = letter(),
            b't' => control.medium = letter(),
            b'f' => control.format = number()?,
            b'o' => control.zlib = letter() == b'z',
            b's' => control.width = number()?,
            b'v' => control.height = number()?,
            b'i' => control.id = number()?,
            b'I' => control.number = number()?,
            b'p' => control.placement = number()?,
            b'm' => control.more = number()? == 1,
            b'c' => control.cols = number()?,
            b'r' => control.rows = number()?,
            b'C' => control.cursor_stays = number()? == 1,
            b'q' => control.quiet = number()?,
            b'd' => control.delete = letter(),
            _ => {}
        }
    }
    Ok((control, payload))
}

/// Decodes one chunk's base64 onto `into`.
pub fn decode_chunk(payload: &[u8], into: &mut Vec<u8>) -> Result<(), String> {
    let payload = payload.trim_ascii();
    BASE64
        .decode_vec(payload, into)
        .map_err(|e| format!("the payload is not base64: {e}"))
}

/// What kitty answers a command, when the program asked for answers
/// (`i` or `I` given; `q` not suppressing it): `None` when nothing is sent.
pub fn reply(control: &Control, outcome: &Result<(), String>) -> Option<Vec<u8>> {
    if control.id == 0 && control.number == 0 {
        return None;
    }
    let text = match outcome {
        Ok(()) if control.quiet >= 1 => return None,
        Err(_) if control.quiet >= 2 => return None,
        Ok(()) => "OK".to_string(),
        // kitty's form: an error code, a colon, a message.
        Err(why) if why.contains(':') => why.clone(),
        Err(why) => format!("EINVAL:{why}"),
    };
    let mut keys = Vec::new();
    if control.id != 0 {
        keys.push(format!("i={}", control.id));
    }
    if control.number != 0 {
        keys.push(format!("I={}", control.number));
    }
    if control.placement != 0 {
        keys.push(format!("p={}", control.placement));
    }
    // No control character of the program's reaches the answer: the
    // message is ours, and ids are numbers.
    let text: String = text.chars().filter(|c| !c.is_control()).collect();
    Some(format!("\x1b_G{};{text}\x1b\\", keys.join(",")).into_bytes())
}

/// The size of a PNG from its header, when `data` starts with one.
pub fn png_size(data: &[u8]) -> Option<(u32, u32)> {
    if data.len() < 24 || &data[..8] != b"\x89PNG\r\n\x1a\n" || &data[12..16] != b"IHDR" {
        return None;
    }
    let be = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    Some((be(16), be(20)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_keys_are_read_and_defaults_kept() {
        let (c, payload) = parse(b"a=T,f=24,s=80,v=24,c=10,r=3,m=1,i=7;QUJD").unwrap();
        assert_eq!(
            (c.action, c.format, c.width, c.height, c.cols, c.rows, c.more, c.id),
            (b'T', 24, 80, 24, 10, 3, true, 7)
        );
        assert_eq!(payload, b"QUJD");
        let (c, payload) = parse(b"m=0").unwrap();
        assert_eq!(
            (c.action, c.medium, c.format, c.more),
            (b't', b'd', 32, false)
        );
        assert!(payload.is_empty());
    }

    #[test]
    fn a_bad_control_key_is_an_error() {
        assert!(parse(b"a").is_err());
        assert!(parse(b"s=x;").is_err());
    }

    #[test]
    fn chunks_decode_with_or_without_padding() {
        let mut out = Vec::new();
        decode_chunk(b"QUI=", &mut out).unwrap();
        decode_chunk(b"QUI", &mut out).unwrap();
        assert_eq!(out, b"ABAB");
        // Bits past the last byte, as chafa writes them.
        out.clear();
        decode_chunk(b"APP=", &mut out).unwrap();
        assert_eq!(out, [0x00, 0xf3]);
        assert!(decode_chunk(b"!!", &mut out).is_err());
    }

    #[test]
    fn replies_follow_ids_and_quiet() {
        let (mut c, _) = parse(b"a=q,i=31").unwrap();
        assert_eq!(reply(&c, &Ok(())).unwrap(), b"\x1b_Gi=31;OK\x1b\\".to_vec());
        assert_eq!(
            reply(&c, &Err("ENOTSUPPORTED:no files".into())).unwrap(),
            b"\x1b_Gi=31;ENOTSUPPORTED:no files\x1b\\".to_vec()
        );
        c.quiet = 1;
        assert!(reply(&c, &Ok(())).is_none());
        assert!(reply(&c, &Err("x".into())).is_some());
        c.quiet = 2;
        assert!(reply(&c, &Err("x".into())).is_none());
        let (c, _) = parse(b"a=T").unwrap();
        assert!(reply(&c, &Ok(())).is_none(), "no id: no answer");
    }
}
