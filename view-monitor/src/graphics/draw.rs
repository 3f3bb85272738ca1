//! What a view writes for the images on the Tick's screen: for a terminal
//! that draws sixel or the kitty protocol, each image in a form it draws,
//! at its cell (the cursor saved, moved there, restored), converted once
//! and kept while the image stays ([`ImageWriter`]); for a terminal that
//! draws neither, a marked box in the image's cells ([`mark_boxes`]),
//! drawn into the frame like any text, so the person knows an image is
//! there. No I/O: the attach view writes the bytes.

use super::{kitty, sixel, Capabilities, ImageFormat, Placement};
use crate::cells::{at, truncate, width};
use std::collections::HashMap;
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::surface::{Change, Surface};

/// The images of a screen as its terminal draws them, converted once per
/// image and kept while it stays.
#[derive(Debug, Default)]
pub struct ImageWriter {
    /// By placement index: the placement it was made for, and the bytes
    /// (the image alone, not positioned); `None` when it cannot be shown.
    made: HashMap<u32, (Placement, Option<Vec<u8>>)>,
}

impl ImageWriter {
    /// The bytes that draw every image of `placements` that fits in a view
    /// of `view` cells on a terminal of `caps`: for each, the cursor saved,
    /// moved to its cell, the image, the cursor restored. Empty for a
    /// terminal that draws neither.
    pub fn frame(
        &mut self,
        placements: &[Placement],
        caps: &Capabilities,
        view: (u16, u16),
    ) -> Vec<u8> {
        self.made
            .retain(|index, (kept, _)| placements.iter().any(|p| p.index == *index && p == kept));
        let mut out = Vec::new();
        if !caps.draws_images() {
            return out;
        }
        for p in placements {
            if !fits(p, view) {
                continue;
            }
            let (_, bytes) = self
                .made
                .entry(p.index)
                .or_insert_with(|| (p.clone(), convert(p, caps)));
            if let Some(bytes) = bytes {
                out.extend_from_slice(b"\x1b7");
                out.extend_from_slice(format!("\x1b[{};{}H", p.row + 1, p.col + 1).as_bytes());
                out.extend_from_slice(bytes);
                out.extend_from_slice(b"\x1b8");
            }
        }
        out
    }
}

/// Whether the image lies wholly inside the view (a sixel reaching the
/// last row would scroll the terminal).
fn fits(p: &Placement, view: (u16, u16)) -> bool {
    u32::from(p.col) + u32::from(p.cols.max(1)) <= u32::from(view.0)
        && u32::from(p.row) + u32::from(p.rows.max(1)) < u32::from(view.1)
}

/// The size in pixels the image should have on a terminal of `caps`: its
/// cells at the terminal's cell size, else its own.
fn target_px(p: &Placement, caps: &Capabilities) -> (u32, u32) {
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
/// own bytes when their size fits the terminal's cells, else drawn again
/// at that size). `None` when the image does not decode.
fn convert(p: &Placement, caps: &Capabilities) -> Option<Vec<u8>> {
    if caps.kitty {
        let image = p.decode().ok()?;
        return Some(kitty::encode(&image, p.cols.max(1), p.rows.max(1)));
    }
    let (w, h) = target_px(p, caps);
    let same_cells = |size: u32, want: u32, cell: Option<u16>| {
        cell.is_none_or(|c| size.div_ceil(u32::from(c.max(1))) == want / u32::from(c.max(1)))
    };
    if p.format == ImageFormat::Sixel
        && same_cells(p.width_px, w, caps.cell_px.map(|c| c.0))
        && same_cells(p.height_px, h, caps.cell_px.map(|c| c.1))
    {
        return Some(p.bytes.to_vec());
    }
    let image = p.decode().ok()?;
    Some(sixel::encode(&image.scaled(w.max(1), h.max(1))))
}

/// Draws a dim frame in the cells of each image that lies in the frame,
/// with what it is inside (`[image 640×480 sixel]`): for a view whose
/// terminal draws no images.
pub fn mark_boxes(frame: &mut Surface, placements: &[Placement]) {
    let (cols, rows) = frame.dimensions();
    let mut dim = CellAttributes::default();
    dim.set_intensity(Intensity::Half);
    for p in placements {
        let (x, y) = (usize::from(p.col), usize::from(p.row));
        if x >= cols || y >= rows {
            continue;
        }
        let w = usize::from(p.cols.max(1)).min(cols - x);
        let h = usize::from(p.rows.max(1)).min(rows - y);
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
    use super::super::Rgba;
    use super::*;

    fn placement(
        format: ImageFormat,
        bytes: Vec<u8>,
        at: (u16, u16),
        cells: (u16, u16),
    ) -> Placement {
        Placement {
            index: 0,
            row: at.0,
            col: at.1,
            cols: cells.0,
            rows: cells.1,
            width_px: 20,
            height_px: 12,
            format,
            bytes: bytes.into(),
        }
    }

    fn red(w: u32, h: u32) -> Rgba {
        Rgba::new(w, h, [255, 0, 0, 255].repeat((w * h) as usize)).unwrap()
    }

    #[test]
    fn a_sixel_terminal_gets_the_ticks_own_sixel_at_its_cell() {
        let bytes = sixel::encode(&red(20, 12));
        let p = placement(ImageFormat::Sixel, bytes.clone(), (3, 5), (2, 1));
        let caps = Capabilities {
            sixel: true,
            kitty: false,
            cell_px: Some((10, 12)),
        };
        let out = ImageWriter::default().frame(&[p], &caps, (80, 24));
        assert_eq!(
            out,
            [b"\x1b7\x1b[4;6H".as_slice(), &bytes, b"\x1b8"].concat()
        );
    }

    #[test]
    fn a_kitty_image_goes_to_a_sixel_terminal_as_sixel_at_its_cells_size() {
        let bytes = kitty::encode(&red(20, 12), 2, 1);
        let p = placement(ImageFormat::Kitty, bytes, (0, 0), (2, 1));
        let caps = Capabilities {
            sixel: true,
            kitty: false,
            cell_px: Some((8, 16)),
        };
        let out = ImageWriter::default().frame(&[p], &caps, (80, 24));
        let image = out.strip_prefix(b"\x1b7\x1b[1;1H".as_slice()).unwrap();
        let image = image.strip_suffix(b"\x1b8".as_slice()).unwrap();
        assert_eq!(sixel::decode(image).unwrap(), red(16, 16));
    }

    #[test]
    fn a_sixel_goes_to_a_kitty_terminal_in_the_kitty_protocol() {
        let p = placement(
            ImageFormat::Sixel,
            sixel::encode(&red(20, 12)),
            (1, 1),
            (2, 1),
        );
        let caps = Capabilities {
            sixel: true,
            kitty: true,
            cell_px: None,
        };
        let out = ImageWriter::default().frame(&[p], &caps, (80, 24));
        let image = out.strip_prefix(b"\x1b7\x1b[2;2H".as_slice()).unwrap();
        assert!(image.starts_with(b"\x1b_Ga=T,f=32,s=20,v=12,c=2,r=1,"));
        assert_eq!(
            kitty::decode(image.strip_suffix(b"\x1b8".as_slice()).unwrap()).unwrap(),
            red(20, 12)
        );
    }

    #[test]
    fn no_image_bytes_for_a_terminal_that_draws_neither_nor_past_the_view() {
        let p = placement(
            ImageFormat::Sixel,
            sixel::encode(&red(20, 12)),
            (0, 0),
            (2, 1),
        );
        let mut writer = ImageWriter::default();
        assert!(writer
            .frame(std::slice::from_ref(&p), &Capabilities::default(), (80, 24))
            .is_empty());
        let caps = Capabilities {
            sixel: true,
            ..Capabilities::default()
        };
        let low = placement(ImageFormat::Sixel, p.bytes.to_vec(), (23, 0), (2, 1));
        assert!(writer.frame(&[low], &caps, (80, 24)).is_empty());
    }

    #[test]
    fn a_marked_box_says_what_the_image_is() {
        let mut frame = Surface::new(40, 6);
        let mut p = placement(ImageFormat::Sixel, Vec::new(), (1, 2), (30, 4));
        p.width_px = 640;
        p.height_px = 480;
        mark_boxes(&mut frame, &[p]);
        let text = frame.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].starts_with("  ┌────"), "{text}");
        assert!(lines[2].contains("[image 640×480 sixel]"), "{text}");
        assert!(lines[4].starts_with("  └────"), "{text}");
        assert_eq!(lines[5].trim(), "");
    }
}
