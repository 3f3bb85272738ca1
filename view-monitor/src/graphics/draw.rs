//! What a view writes for the images on the Tick's screen: for a terminal
//! that draws sixel or the kitty protocol, each image in a form it draws,
//! at its cell (the cursor saved, moved there, restored), converted once
//! and kept while the image stays ([`ImageWriter`]); for a terminal that
//! draws neither, a marked box in the image's cells ([`mark_boxes`]),
//! drawn into the frame like any text, so the person knows an image is
//! there. No I/O: the attach view writes the bytes.

use super::{kitty, sixel, Capabilities, ImageEncoding, ImagePlacement, KeptImage};
use crate::cells::{at, truncate, width};
use std::collections::{HashMap, HashSet};
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::surface::{Change, Surface};

/// Deletes every kitty image the terminal shows (`a=d,d=A`), before the
/// images are drawn again: one dropped by the Tick's screen goes too.
const KITTY_DELETE_ALL: &[u8] = b"\x1b_Ga=d,d=A,q=2\x1b\\";

/// What an image was converted for: its cells and the terminal's.
type Made = (u16, u16, Capabilities);

/// The images of a screen as its terminal draws them: each one's bytes
/// asked from the launcher once, converted once per size, kept while the
/// image is listed.
#[derive(Debug, Default)]
pub struct ImageWriter {
    /// The images' bytes, by index, as the launcher sent them.
    kept: HashMap<u32, KeptImage>,
    /// Indices asked for and not answered yet (or answered: gone).
    asked: HashSet<u32>,
    /// The bytes that draw each image (not positioned), by index; `None`
    /// when it does not decode.
    made: HashMap<u32, (Made, Option<Vec<u8>>)>,
}

impl ImageWriter {
    /// The launcher's new list: what is no longer listed is forgotten; the
    /// indices whose bytes to ask for (once each), for a terminal that
    /// draws images.
    pub fn listed(&mut self, placements: &[ImagePlacement], caps: &Capabilities) -> Vec<u32> {
        let listed: HashSet<u32> = placements.iter().map(|p| p.index).collect();
        self.kept.retain(|index, _| listed.contains(index));
        self.made.retain(|index, _| listed.contains(index));
        self.asked.retain(|index| listed.contains(index));
        if !caps.draws_images() {
            return Vec::new();
        }
        let mut ask = Vec::new();
        for p in placements {
            if !self.kept.contains_key(&p.index) && self.asked.insert(p.index) {
                ask.push(p.index);
            }
        }
        ask
    }

    /// The launcher's answer for image `index` (`None`: no longer kept).
    pub fn answered(&mut self, index: u32, image: Option<KeptImage>) {
        if let Some(image) = image {
            self.made.remove(&index);
            self.kept.insert(index, image);
        }
    }

    /// The bytes that draw every image of `placements` whose bytes came and
    /// that lies wholly inside a view of `view` cells scrolled `offset`
    /// rows back, on a terminal of `caps`: for each, the cursor saved,
    /// moved to its cell, the image, the cursor restored; on a kitty
    /// terminal, every image it showed deleted first. Empty for a terminal
    /// that draws neither.
    pub fn frame(
        &mut self,
        placements: &[ImagePlacement],
        offset: u32,
        caps: &Capabilities,
        view: (u16, u16),
    ) -> Vec<u8> {
        let mut out = Vec::new();
        if !caps.draws_images() {
            return out;
        }
        if caps.kitty {
            out.extend_from_slice(KITTY_DELETE_ALL);
        }
        for p in placements {
            let Some(row) = view_row(p, offset, view) else {
                continue;
            };
            let Some(image) = self.kept.get(&p.index) else {
                continue;
            };
            let key = (p.cols, p.rows, *caps);
            let entry = self.made.entry(p.index).or_insert((key, None));
            if entry.0 != key || entry.1.is_none() {
                *entry = (key, convert(p, image, caps));
            }
            if let Some(bytes) = &entry.1 {
                out.extend_from_slice(b"\x1b7");
                out.extend_from_slice(format!("\x1b[{};{}H", row + 1, p.col + 1).as_bytes());
                out.extend_from_slice(bytes);
                out.extend_from_slice(b"\x1b8");
            }
        }
        out
    }
}

/// The row of the view the image's top is on, when the image lies wholly
/// inside it (a sixel reaching the last row would scroll the terminal).
fn view_row(p: &ImagePlacement, offset: u32, view: (u16, u16)) -> Option<u16> {
    let row = p.row.checked_add(i64::from(offset))?;
    let fits = row >= 0
        && row + i64::from(p.rows.max(1)) < i64::from(view.1)
        && u32::from(p.col) + u32::from(p.cols.max(1)) <= u32::from(view.0);
    fits.then(|| u16::try_from(row).ok()).flatten()
}

/// The size in pixels the image should have on a terminal of `caps`: its
/// cells at the terminal's cell size, else its own.
fn target_px(p: &ImagePlacement, caps: &Capabilities) -> (u32, u32) {
    match caps.cell_px {
        Some((w, h)) if p.cols > 0 && p.rows > 0 => (
            u32::from(p.cols) * u32::from(w),
            u32::from(p.rows) * u32::from(h),
        ),
        _ => (p.width_px, p.height_px),
    }
}

/// The image as the terminal draws it: the kitty protocol when it can
/// (scaled by the terminal to the image's cells), else sixel (the Tick's
/// own bytes when they cover the image's cells at the terminal's cell
/// size, else drawn again at that size). `None` when it does not decode.
fn convert(p: &ImagePlacement, image: &KeptImage, caps: &Capabilities) -> Option<Vec<u8>> {
    let size = (p.width_px, p.height_px);
    if caps.kitty {
        let pixels = image.decode(size).ok()?;
        return Some(kitty::encode(&pixels, p.cols.max(1), p.rows.max(1)));
    }
    let (w, h) = target_px(p, caps);
    let same_cells = |size: u32, cells: u16, cell: Option<u16>| {
        cell.is_none_or(|c| size.div_ceil(u32::from(c.max(1))) == u32::from(cells))
    };
    if image.encoding == ImageEncoding::Sixel
        && same_cells(p.width_px, p.cols, caps.cell_px.map(|c| c.0))
        && same_cells(p.height_px, p.rows, caps.cell_px.map(|c| c.1))
    {
        return Some(image.data.clone());
    }
    let pixels = image.decode(size).ok()?;
    Some(sixel::encode(&pixels.scaled(w.max(1), h.max(1))))
}

/// Draws a dim frame in the cells of each image that lies in the frame,
/// with what it is inside (`[image 640×480 sixel]`): for a view whose
/// terminal draws no images, scrolled `offset` rows back. The part of an
/// image inside the frame is boxed.
pub fn mark_boxes(frame: &mut Surface, placements: &[ImagePlacement], offset: u32) {
    let (cols, rows) = frame.dimensions();
    let mut dim = CellAttributes::default();
    dim.set_intensity(Intensity::Half);
    for p in placements {
        let top = p.row.saturating_add(i64::from(offset));
        let bottom = top.saturating_add(i64::from(p.rows.max(1)));
        let x = usize::from(p.col);
        if x >= cols || bottom <= 0 || top >= rows as i64 {
            continue;
        }
        let y = usize::try_from(top.max(0)).unwrap_or(0);
        let w = usize::from(p.cols.max(1)).min(cols - x);
        let h = usize::try_from(bottom.min(rows as i64)).unwrap_or(0) - y;
        let label = format!("[image {}×{} {}]", p.width_px, p.height_px, p.format.name());
        let mut changes = vec![Change::AllAttributes(dim.clone())];
        if w < 3 || h < 3 {
            // Too small for a frame: the label alone, cut to fit.
            changes.push(at(x, y));
            changes.push(Change::Text(truncate(&label, w)));
        } else {
            let inner = w - 2;
            changes.push(at(x, y));
            changes.push(Change::Text(format!("┌{}┐", "─".repeat(inner))));
            for row in y + 1..y + h - 1 {
                changes.push(at(x, row));
                changes.push(Change::Text(format!("│{}│", " ".repeat(inner))));
            }
            changes.push(at(x, y + h - 1));
            changes.push(Change::Text(format!("└{}┘", "─".repeat(inner))));
            let label = truncate(&label, inner);
            changes.push(at(x + 1 + (inner - width(&label)) / 2, y + (h - 1) / 2));
            changes.push(Change::Text(label));
        }
        changes.push(Change::AllAttributes(CellAttributes::default()));
        frame.add_changes(changes);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ImageFormat, KittyPixels, Rgba};
    use super::*;

    fn placement(
        index: u32,
        format: ImageFormat,
        at: (i64, u16),
        cells: (u16, u16),
    ) -> ImagePlacement {
        ImagePlacement {
            index,
            row: at.0,
            col: at.1,
            cols: cells.0,
            rows: cells.1,
            width_px: 20,
            height_px: 12,
            format,
            bytes: 0,
        }
    }

    fn red(w: u32, h: u32) -> Rgba {
        Rgba::new(w, h, [255, 0, 0, 255].repeat((w * h) as usize)).unwrap()
    }

    fn sixel_image() -> KeptImage {
        KeptImage {
            encoding: ImageEncoding::Sixel,
            data: sixel::encode(&red(20, 12)),
        }
    }

    fn kitty_image() -> KeptImage {
        KeptImage {
            encoding: ImageEncoding::Kitty {
                pixels: KittyPixels::Rgba,
                zlib: false,
            },
            data: red(20, 12).pixels,
        }
    }

    /// A writer that listed `p` for `caps` and got `image` for it.
    fn writer_with(p: &ImagePlacement, caps: &Capabilities, image: KeptImage) -> ImageWriter {
        let mut writer = ImageWriter::default();
        assert_eq!(writer.listed(std::slice::from_ref(p), caps), vec![p.index]);
        assert!(
            writer.listed(std::slice::from_ref(p), caps).is_empty(),
            "asked once"
        );
        writer.answered(p.index, Some(image));
        writer
    }

    const SIXEL: Capabilities = Capabilities {
        sixel: true,
        kitty: false,
        cell_px: Some((10, 12)),
    };

    #[test]
    fn a_sixel_terminal_gets_the_ticks_own_sixel_at_its_cell() {
        let p = placement(1, ImageFormat::Sixel, (3, 5), (2, 1));
        let mut writer = writer_with(&p, &SIXEL, sixel_image());
        let out = writer.frame(std::slice::from_ref(&p), 0, &SIXEL, (80, 24));
        let expected = [b"\x1b7\x1b[4;6H".as_slice(), &sixel_image().data, b"\x1b8"].concat();
        assert_eq!(out, expected);
        // Scrolled back 2 rows, it is 2 rows lower; one from history shows.
        assert!(writer
            .frame(&[p], 2, &SIXEL, (80, 24))
            .starts_with(b"\x1b7\x1b[6;6H"));
        let old = placement(1, ImageFormat::Sixel, (-3, 5), (2, 1));
        assert!(writer
            .frame(std::slice::from_ref(&old), 0, &SIXEL, (80, 24))
            .is_empty());
        assert!(writer
            .frame(&[old], 3, &SIXEL, (80, 24))
            .starts_with(b"\x1b7\x1b[1;6H"));
    }

    #[test]
    fn a_kitty_image_goes_to_a_sixel_terminal_as_sixel_at_its_cells_size() {
        let p = placement(2, ImageFormat::Kitty, (0, 0), (2, 1));
        let caps = Capabilities {
            sixel: true,
            kitty: false,
            cell_px: Some((8, 16)),
        };
        let mut writer = writer_with(&p, &caps, kitty_image());
        let out = writer.frame(&[p], 0, &caps, (80, 24));
        let image = out.strip_prefix(b"\x1b7\x1b[1;1H".as_slice()).unwrap();
        let image = image.strip_suffix(b"\x1b8".as_slice()).unwrap();
        assert_eq!(sixel::decode(image).unwrap(), red(16, 16));
    }

    #[test]
    fn a_sixel_goes_to_a_kitty_terminal_in_the_kitty_protocol() {
        let p = placement(3, ImageFormat::Sixel, (1, 1), (2, 1));
        let caps = Capabilities {
            sixel: true,
            kitty: true,
            cell_px: None,
        };
        let mut writer = writer_with(&p, &caps, sixel_image());
        let out = writer.frame(&[p], 0, &caps, (80, 24));
        let image = out.strip_prefix(KITTY_DELETE_ALL).unwrap();
        let image = image.strip_prefix(b"\x1b7\x1b[2;2H".as_slice()).unwrap();
        assert!(image.starts_with(b"\x1b_Ga=T,f=32,s=20,v=12,c=2,r=1,"));
        let image = image.strip_suffix(b"\x1b8".as_slice()).unwrap();
        assert_eq!(kitty::decode(image).unwrap(), red(20, 12));
    }

    #[test]
    fn no_image_bytes_for_a_terminal_that_draws_neither_nor_past_the_view() {
        let p = placement(4, ImageFormat::Sixel, (0, 0), (2, 1));
        let none = Capabilities::default();
        let mut writer = ImageWriter::default();
        assert!(
            writer.listed(std::slice::from_ref(&p), &none).is_empty(),
            "nothing asked"
        );
        writer.answered(4, Some(sixel_image()));
        assert!(writer
            .frame(std::slice::from_ref(&p), 0, &none, (80, 24))
            .is_empty());
        let low = placement(4, ImageFormat::Sixel, (23, 0), (2, 1));
        assert!(writer.frame(&[low], 0, &SIXEL, (80, 24)).is_empty());
        // An image no longer listed is forgotten, and asked again if back.
        assert!(writer.listed(&[], &SIXEL).is_empty());
        assert!(writer
            .frame(std::slice::from_ref(&p), 0, &SIXEL, (80, 24))
            .is_empty());
        assert_eq!(writer.listed(&[p], &SIXEL), vec![4]);
    }

    #[test]
    fn a_marked_box_says_what_the_image_is() {
        let mut frame = Surface::new(40, 6);
        let mut p = placement(5, ImageFormat::Sixel, (1, 2), (30, 4));
        p.width_px = 640;
        p.height_px = 480;
        mark_boxes(&mut frame, std::slice::from_ref(&p), 0);
        let text = frame.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("  ┌────"), "{text}");
        assert!(lines[2].contains("[image 640×480 sixel]"), "{text}");
        assert!(lines[4].starts_with("  └────"), "{text}");
        assert_eq!(lines[5].trim(), "");
        // Half scrolled into history: the part on screen is boxed.
        let mut frame = Surface::new(40, 6);
        p.row = -1;
        mark_boxes(&mut frame, &[p], 0);
        let text = frame.screen_chars_to_string();
        assert!(text.lines().next().unwrap().starts_with("  ┌──"), "{text}");
    }
}
