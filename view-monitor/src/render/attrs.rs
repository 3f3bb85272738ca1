//! A run's colours and attributes as termwiz cell attributes, with the
//! nearest 256-colour palette entry for terminals without 24-bit colour.

use termwiz::cell::{Blink, CellAttributes, Intensity, Underline};
use termwiz::color::{ColorAttribute, SrgbaTuple};
use tickloop_proto::attach::{self, Color};

/// The xterm 256-colour palette entry nearest to an RGB colour (the 6x6x6
/// cube or the grey ramp), for terminals without 24-bit colour.
pub fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| -> usize {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| (i32::from(**l) - i32::from(v)).abs())
            .map_or(0, |(i, _)| i)
    };
    let dist = |a: (u8, u8, u8)| -> i32 {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    // ri, gi, bi < 6: the index fits in a u8.
    let cube_index = 16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8;
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_step = (avg.saturating_sub(8) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_step;
    if dist((grey, grey, grey)) < dist(cube) {
        232 + grey_step
    } else {
        cube_index
    }
}

fn color_attr(color: Option<Color>) -> ColorAttribute {
    match color {
        None => ColorAttribute::Default,
        Some(Color::Index(i)) => ColorAttribute::PaletteIndex(i),
        Some(Color::Rgb(r, g, b)) => ColorAttribute::TrueColorWithPaletteFallback(
            SrgbaTuple::from((r, g, b)),
            nearest_256(r, g, b),
        ),
    }
}

/// termwiz cell attributes for a run's attributes.
pub fn cell_attributes(attrs: &attach::Attrs) -> CellAttributes {
    let mut out = CellAttributes::default();
    out.set_foreground(color_attr(attrs.fg));
    out.set_background(color_attr(attrs.bg));
    out.set_intensity(if attrs.bold {
        Intensity::Bold
    } else if attrs.dim {
        Intensity::Half
    } else {
        Intensity::Normal
    });
    out.set_italic(attrs.italic);
    out.set_underline(match attrs.underline {
        attach::Underline::None => Underline::None,
        attach::Underline::Single => Underline::Single,
        attach::Underline::Double => Underline::Double,
        attach::Underline::Curly => Underline::Curly,
        attach::Underline::Dotted => Underline::Dotted,
        attach::Underline::Dashed => Underline::Dashed,
    });
    if let Some(color) = attrs.underline_color {
        // Always as 24-bit: termwiz's renderer writes a palette underline
        // colour with the terminal's set-foreground capability, which
        // colours the text instead. A terminal without 24-bit colour then
        // gets the default underline colour, never a recoloured text.
        let (r, g, b) = match color {
            Color::Index(i) => attach::xterm_rgb(i),
            Color::Rgb(r, g, b) => (r, g, b),
        };
        out.set_underline_color(ColorAttribute::TrueColorWithDefaultFallback(
            SrgbaTuple::from((r, g, b)),
        ));
    }
    out.set_blink(if attrs.blink {
        Blink::Slow
    } else {
        Blink::None
    });
    out.set_reverse(attrs.reverse);
    out.set_invisible(attrs.invisible);
    out.set_strikethrough(attrs.strikethrough);
    out.set_overline(attrs.overline);
    if let Some(uri) = &attrs.link {
        out.set_hyperlink(Some(std::sync::Arc::new(
            termwiz::hyperlink::Hyperlink::new(uri.clone()),
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::frame::compose;
    use tickloop_proto::attach::{Attrs, Line, Run, Snapshot};

    #[test]
    fn colours_reach_the_cells() {
        let mut snap = Snapshot::blank(4, 1);
        snap.lines[0] = Line {
            runs: vec![
                Run {
                    text: "a".into(),
                    attrs: Attrs {
                        fg: Some(Color::Index(1)),
                        bold: true,
                        ..Attrs::default()
                    },
                },
                Run {
                    text: "b".into(),
                    attrs: Attrs {
                        bg: Some(Color::Rgb(255, 0, 0)),
                        ..Attrs::default()
                    },
                },
            ],
        };
        let frame = compose(&snap, 4, 1, "", false);
        let cells = frame.surface.get_screen_cells();
        assert_eq!(
            cells[0][0].attrs().foreground(),
            ColorAttribute::PaletteIndex(1)
        );
        assert_eq!(cells[0][0].attrs().intensity(), Intensity::Bold);
        assert_eq!(
            cells[0][1].attrs().background(),
            ColorAttribute::TrueColorWithPaletteFallback(SrgbaTuple::from((255, 0, 0)), 196)
        );
    }

    #[test]
    fn nearest_palette_colours() {
        assert_eq!(nearest_256(255, 0, 0), 196);
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(128, 128, 128), 244);
        assert_eq!(nearest_256(255, 255, 255), 231);
    }
}
