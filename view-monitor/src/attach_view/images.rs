//! The images a Tick drew, in an attach session: what the view's terminal
//! can draw (asked at attach, [`crate::graphics::probe`]), the placements
//! the launcher lists, each image's bytes asked for once, and the images
//! written at their cells after every full redraw (attach, a snapshot, a
//! resize, the list changed, an overlay closed), or a marked box in their
//! cells when the terminal draws neither.

use super::session::Session;
use crate::graphics::{mark_boxes, Capabilities, ImagePlacement, ImageWriter, KeptImage};
use crate::render::Frame;
use tickloop_proto::attach::ViewEvent;

/// The images of one session.
#[derive(Debug, Default)]
pub(super) struct Images {
    /// What the terminal draws; `None` until it answered (or the safety cap
    /// passed): until then no image and no box is drawn.
    pub(super) caps: Option<Capabilities>,
    /// The placements the launcher listed last.
    pub(super) placements: Vec<ImagePlacement>,
    writer: ImageWriter,
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
    pub(super) fn mark(&self, frame: &mut Frame, offset: u32) {
        if self.caps.is_some_and(|caps| !caps.draws_images()) && !self.placements.is_empty() {
            mark_boxes(&mut frame.surface, &self.placements, offset);
            // The rows' fingerprints are the Tick's, without the boxes:
            // every row is compared cell by cell.
            frame.row_keys.clear();
        }
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

impl Session<'_> {
    /// The terminal said what it draws: the images' bytes asked for.
    pub(super) fn on_capabilities(&mut self, caps: Capabilities) {
        self.images.caps = Some(caps);
        self.images.due = true;
        self.dirty = true;
        let placements = std::mem::take(&mut self.images.placements);
        self.on_placements(placements);
    }

    /// The launcher's list of placements: the bytes of new ones asked for
    /// (when the terminal draws images), drawn again at the next draw.
    pub(super) fn on_placements(&mut self, placements: Vec<ImagePlacement>) {
        if let Some(caps) = self.images.caps {
            for index in self.images.writer.listed(&placements, &caps) {
                self.ask_image(index);
            }
        }
        self.images.placements = placements;
        self.images.due = true;
        self.dirty = true;
    }

    /// The launcher sent the bytes of image `index` (`None`: no longer kept).
    pub(super) fn on_image(&mut self, index: u32, image: Option<KeptImage>) {
        self.images.writer.answered(index, image);
        self.images.due = true;
        self.dirty = true;
    }
}

impl Session<'_> {
    /// Asks the launcher for image `index`'s bytes.
    fn ask_image(&mut self, index: u32) {
        self.link.queue(&ViewEvent::Image { index });
    }
}
