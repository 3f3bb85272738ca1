//! The state of the images in an attach session: what the view's terminal
//! can draw, the placements the launcher listed, where the images were
//! drawn last, and the bytes that draw them ([`ImageWriter`]); the boxes
//! drawn into a frame for a terminal that draws none. What the session
//! does when the launcher or the terminal speaks is in [`super::images`].

use crate::graphics::{mark_boxes, Capabilities, ImagePlacement, ImageWriter};
use crate::render::Frame;
/// The images of one session.
#[derive(Debug, Default)]
pub(super) struct Images {
    /// What the terminal draws; `None` until it answered (or the safety cap
    /// passed): until then no image and no box is drawn.
    pub(super) caps: Option<Capabilities>,
    /// The placements the launcher listed last.
    pub(super) placements: Vec<ImagePlacement>,
    pub(super) writer: ImageWriter,
    /// The images must be written again after the next draw.
    pub(super) due: bool,
    /// An overlay was open at the last draw (images are not drawn over it).
    covered: bool,
    /// Where the images were drawn last (index, view row, column): on a
    /// sixel terminal their pixels stay there until the cells are written.
    drawn: Vec<(u32, i64, u16)>,
}

impl Images {
    /// Boxes in the image's cells, drawn into `frame` before the overlays,
    /// for a terminal known to draw no images.
    pub(super) fn mark(&self, frame: &mut Frame<'_>, offset: u32) {
        if self.caps.is_some_and(|caps| !caps.draws_images()) && !self.placements.is_empty() {
            mark_boxes(frame.surface.to_mut(), &self.placements, offset);
            // The rows' fingerprints are the Tick's, without the boxes:
            // every row is compared cell by cell.
            frame.row_keys.clear();
        }
    }

    /// No image is listed or drawn.
    pub(super) fn none(&self) -> bool {
        self.placements.is_empty() && self.drawn.is_empty()
    }

    /// Where the images are in a view scrolled `offset` rows back.
    fn places(&self, offset: u32) -> Vec<(u32, i64, u16)> {
        self.placements
            .iter()
            .map(|p| (p.index, p.row.saturating_add(i64::from(offset)), p.col))
            .collect()
    }

    /// A sixel terminal still shows an image where it no longer is (it was
    /// dropped, or moved other than by the terminal's own scrolling): the
    /// screen must be cleared and drawn again whole, images and all. (A
    /// kitty terminal has its images deleted before they are drawn again.)
    pub(super) fn stale(&self, offset: u32) -> bool {
        let sixel_only = self.caps.is_some_and(|c| c.sixel && !c.kitty);
        sixel_only && !self.drawn.is_empty() && self.drawn != self.places(offset)
    }

    /// The bytes to write after a draw: the images at their cells when due
    /// (and no overlay covers the screen), else nothing.
    pub(super) fn after_draw(&mut self, covered: bool, offset: u32, view: (u16, u16)) -> Vec<u8> {
        if covered != self.covered {
            self.covered = covered;
            self.due = true;
        }
        let Some(caps) = self.caps.filter(|_| self.due) else {
            return Vec::new();
        };
        self.due = false;
        let shown: &[ImagePlacement] = if covered { &[] } else { &self.placements };
        self.drawn = if covered {
            Vec::new()
        } else {
            self.places(offset)
        };
        self.writer.frame(shown, offset, &caps, view)
    }
}
