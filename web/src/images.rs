//! The images a Tick drew, on a page: xterm.js draws sixel with its image
//! addon (`vendor/xterm/addon-image.js`), so each kept image is sent to
//! the page as sixel (a kitty image re-encoded; `view_monitor::graphics`),
//! at its cell, after the frame that shows its cells, and again after
//! every whole redraw. The addon keeps an image's pixels until its cells
//! are written, so an image that moved or went makes the screen be drawn
//! again whole. No I/O.

use tickloop_proto::wire::ImagePlacement;
use view_monitor::graphics::{Capabilities, ImageWriter, KeptImage};

/// The images of one page's terminal.
#[derive(Debug, Default)]
pub struct PageImages {
    /// The placements the launcher listed last.
    placements: Vec<ImagePlacement>,
    writer: ImageWriter,
    /// The page's cell in pixels, when it said.
    cell_px: Option<(u16, u16)>,
    /// The images are to be written after the next draw.
    due: bool,
    /// Where they were written last (index, view row, column).
    drawn: Vec<(u32, i64, u16)>,
}

impl PageImages {
    /// xterm.js with the image addon: sixel, at the page's cell size.
    fn caps(&self) -> Capabilities {
        Capabilities {
            sixel: true,
            kitty: false,
            cell_px: self.cell_px,
        }
    }

    /// The launcher's list: the indices whose bytes to ask for (once each).
    pub fn listed(&mut self, placements: Vec<ImagePlacement>) -> Vec<u32> {
        let ask = self.writer.listed(&placements, &self.caps());
        self.placements = placements;
        self.due = true;
        ask
    }

    /// The launcher's answer for image `index` (`None`: no longer kept).
    pub fn answered(&mut self, index: u32, image: Option<KeptImage>) {
        self.writer.answered(index, image);
        self.due = true;
    }

    /// The page's cell size in pixels: images are drawn at it from now on.
    pub fn set_cell_px(&mut self, cell_px: Option<(u16, u16)>) {
        if cell_px != self.cell_px {
            self.cell_px = cell_px;
            self.due = true;
        }
    }

    /// The next draw is whole (a resize, the first frame): images again.
    pub fn redrawn(&mut self) {
        self.due = true;
        self.drawn.clear();
    }

    /// Where the images are in a view scrolled `offset` rows back.
    fn places(&self, offset: u32) -> Vec<(u32, i64, u16)> {
        self.placements
            .iter()
            .map(|p| (p.index, p.row.saturating_add(i64::from(offset)), p.col))
            .collect()
    }

    /// The page still shows an image where it no longer is: the screen is
    /// to be cleared and drawn whole.
    pub fn stale(&self, offset: u32) -> bool {
        !self.drawn.is_empty() && self.drawn != self.places(offset)
    }

    /// The bytes to send after a draw: the images at their cells when due.
    pub fn after_draw(&mut self, offset: u32, view: (u16, u16)) -> Vec<u8> {
        if !self.due {
            return Vec::new();
        }
        self.due = false;
        self.drawn = self.places(offset);
        let caps = self.caps();
        self.writer.frame(&self.placements, offset, &caps, view)
    }
}
