//! Reading a [`Run`] and a [`Color`] without serde's buffering. Derived,
//! a run's flattened attributes and a colour's untagged variants each made
//! serde read the value into a buffer of its own first, then read that
//! again; a view reads a run for every stretch of text on every row of
//! every frame. What is read, and what is refused, is what the derived
//! code read and refused (tested against it below).

use super::{Attrs, Color, Run};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

impl<'de> Deserialize<'de> for Run {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(RunVisitor)
    }
}

/// A run's keys: its text and each of [`Attrs`]' fields, as serialized.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum RunKey {
    Text,
    Fg,
    Bg,
    Bold,
    Dim,
    Italic,
    Underline,
    UnderlineColor,
    Blink,
    Reverse,
    Invisible,
    Strikethrough,
    Overline,
    Link,
    /// A key of a later version, skipped as the derived code skipped it.
    #[serde(other)]
    Other,
}

struct RunVisitor;

impl<'de> Visitor<'de> for RunVisitor {
    type Value = Run;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a run of text with its attributes")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Run, A::Error> {
        let mut text = None;
        let mut a = Attrs::default();
        while let Some(key) = map.next_key::<RunKey>()? {
            match key {
                RunKey::Text => text = Some(map.next_value()?),
                RunKey::Fg => a.fg = map.next_value()?,
                RunKey::Bg => a.bg = map.next_value()?,
                RunKey::Bold => a.bold = map.next_value()?,
                RunKey::Dim => a.dim = map.next_value()?,
                RunKey::Italic => a.italic = map.next_value()?,
                RunKey::Underline => a.underline = map.next_value()?,
                RunKey::UnderlineColor => a.underline_color = map.next_value()?,
                RunKey::Blink => a.blink = map.next_value()?,
                RunKey::Reverse => a.reverse = map.next_value()?,
                RunKey::Invisible => a.invisible = map.next_value()?,
                RunKey::Strikethrough => a.strikethrough = map.next_value()?,
                RunKey::Overline => a.overline = map.next_value()?,
                RunKey::Link => a.link = map.next_value()?,
                RunKey::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let text = text.ok_or_else(|| de::Error::missing_field("text"))?;
        Ok(Run { text, attrs: a })
    }
}

impl<'de> Deserialize<'de> for Color {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ColorVisitor)
    }
}

struct ColorVisitor;

impl Visitor<'_> for ColorVisitor {
    type Value = Color;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a colour: a palette index 0-255 or \"#rrggbb\"")
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Color, E> {
        u8::try_from(n)
            .map(Color::Index)
            .map_err(|_| E::invalid_value(de::Unexpected::Unsigned(n), &self))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Color, E> {
        u8::try_from(n)
            .map(Color::Index)
            .map_err(|_| E::invalid_value(de::Unexpected::Signed(n), &self))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Color, E> {
        let (r, g, b) = super::hex_rgb::parse(text).map_err(E::custom)?;
        Ok(Color::Rgb(r, g, b))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{hex_rgb, Underline};
    use super::*;
    use serde_json::{json, Value};

    /// The derived decoding this module replaces, kept to test against.
    #[derive(Debug, PartialEq, Deserialize)]
    struct DerivedRun {
        text: String,
        #[serde(flatten)]
        attrs: DerivedAttrs,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct DerivedAttrs {
        #[serde(default)]
        fg: Option<DerivedColor>,
        #[serde(default)]
        bg: Option<DerivedColor>,
        #[serde(default)]
        bold: bool,
        #[serde(default)]
        dim: bool,
        #[serde(default)]
        italic: bool,
        #[serde(default)]
        underline: Underline,
        #[serde(default)]
        underline_color: Option<DerivedColor>,
        #[serde(default)]
        blink: bool,
        #[serde(default)]
        reverse: bool,
        #[serde(default)]
        invisible: bool,
        #[serde(default)]
        strikethrough: bool,
        #[serde(default)]
        overline: bool,
        #[serde(default)]
        link: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum DerivedColor {
        Index(u8),
        #[serde(deserialize_with = "derived_rgb")]
        Rgb(u8, u8, u8),
    }

    /// The derived code's reading of `"#rrggbb"`.
    fn derived_rgb<'de, D: Deserializer<'de>>(d: D) -> Result<(u8, u8, u8), D::Error> {
        let text = String::deserialize(d)?;
        hex_rgb::parse(&text).map_err(de::Error::custom)
    }

    /// Every attribute set: each of [`Attrs`]' fields (a field added to
    /// `Attrs` and not here fails `every_attribute_is_read`).
    fn every_attribute() -> Attrs {
        Attrs {
            fg: Some(Color::Index(200)),
            bg: Some(Color::Rgb(1, 2, 3)),
            bold: true,
            dim: true,
            italic: true,
            underline: Underline::Curly,
            underline_color: Some(Color::Index(7)),
            blink: true,
            reverse: true,
            invisible: true,
            strikethrough: true,
            overline: true,
            link: Some("https://example.com/".into()),
        }
    }

    #[test]
    fn every_attribute_is_read() {
        let run = Run {
            text: "x".into(),
            attrs: every_attribute(),
        };
        let wire = serde_json::to_value(&run).unwrap();
        let Value::Object(map) = &wire else {
            panic!("a run is an object: {wire}")
        };
        // Each key alone, so that a key this module skips shows.
        for (key, value) in map {
            if key == "text" {
                continue;
            }
            let alone = json!({"text": "x", key.as_str(): value});
            let read: Run = serde_json::from_value(alone).unwrap();
            assert!(!read.attrs.is_default(), "{key} was not read");
        }
        assert_eq!(serde_json::from_value::<Run>(wire).unwrap(), run);
    }

    /// The texts that the derived code and this module must read alike:
    /// the same value, or both a refusal.
    #[test]
    fn reads_and_refuses_what_the_derived_code_did() {
        let texts = [
            r#"{"text":"plain"}"#,
            r##"{"text":"a","fg":3,"bg":"#a0b1c2","bold":true,"underline":"double"}"##,
            r#"{"bold":true,"text":"text last"}"#,
            r#"{"text":"x","later_version":{"any":[1,2]}}"#,
            r#"{"text":"x","fg":null,"link":null}"#,
            r#"{"text":"x","fg":255}"#,
            r#"{"text":"x","fg":256}"#,
            r#"{"text":"x","fg":-1}"#,
            r#"{"text":"x","fg":1.5}"#,
            r##"{"text":"x","fg":"#12345"}"##,
            r##"{"text":"x","fg":"#gg0000"}"##,
            r#"{"text":"x","fg":"red"}"#,
            r#"{"text":"x","fg":[1,2,3]}"#,
            r#"{"text":"x","bold":"yes"}"#,
            r#"{"text":"x","bold":null}"#,
            r#"{"text":5}"#,
            r#"{"fg":1}"#,
            r#"["x"]"#,
            r#""x""#,
        ];
        for text in texts {
            let ours = serde_json::from_str::<Run>(text).ok();
            let derived = serde_json::from_str::<DerivedRun>(text).ok();
            assert_eq!(ours.is_some(), derived.is_some(), "{text}");
            if let (Some(ours), Some(derived)) = (ours, derived) {
                let again = serde_json::to_value(&ours).unwrap();
                assert_eq!(ours.text, derived.text, "{text}");
                assert_eq!(
                    serde_json::from_value::<DerivedRun>(again).unwrap(),
                    derived,
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn a_bad_colour_says_what_a_colour_is() {
        let err = serde_json::from_str::<Color>("300")
            .unwrap_err()
            .to_string();
        assert!(err.contains("palette index 0-255"), "{err}");
        let err = serde_json::from_str::<Color>(r#""red""#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("#rrggbb"), "{err}");
    }
}
