//! The images a Tick drew, in an attach session: what the view's terminal
//! can draw (asked at attach, [`crate::graphics::probe`]), the placements
//! the launcher lists, each image's bytes asked for once, and the images
//! written at their cells after every full redraw (attach, a snapshot, a
//! resize, the list changed, an overlay closed), or a marked box in their
//! cells when the terminal draws neither ([`super::image_state`]).

use super::session::Session;
use crate::graphics::{Capabilities, ImagePlacement, KeptImage};
use tickloop_proto::attach::ViewEvent;

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
