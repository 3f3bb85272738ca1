//! Images a program draws, kept with its screen (issue 52): sixel and the
//! kitty graphics protocol, taken out of the output before the emulator
//! (which draws no images) sees them ([`filter`]), each kept as a
//! placement anchored to the cells it covers.
//!
//! * The emulator gets a space of the image's size, made of marked blank
//!   cells ([`crate::emulator::image_cells`]), and the cursor moves as the
//!   program expects (sixel: to the left of the row below the image, as
//!   with sixel scrolling on; kitty: per `C=`). The marks move with the
//!   emulator's own scrolling, scroll regions, reflow and history, so a
//!   placement is wherever its marked cells are ([`store`]).
//! * An image whose cells were written over or cleared, or scrolled past
//!   the history, is dropped. Images drawn on the alternate screen go when
//!   it closes; those of the normal screen wait while it is hidden.
//! * The images' bytes are kept as the program sent them (a sixel's whole
//!   sequence, a kitty image's decoded payload), at most
//!   `image_memory_mb` (32 MB by default) an instance: past it the oldest
//!   go, with a note in the activity. Nothing is decoded here: a PNG is
//!   made only when asked for (`screen --image N`, in the CLI).
//! * Cells are counted with a nominal cell of 10x20 pixels
//!   ([`tickloop_proto::wire::NOMINAL_CELL_WIDTH_PX`]); kitty's `c=`/`r=`
//!   win when given.

pub mod filter;
pub mod kitty;
pub mod sixel;
mod store;

pub use store::{ImagesDropped, KeptImages};

use crate::emulator::Emulator;
use filter::{ImageFilter, Piece};
use std::io::Write;

/// The image memory of an instance by default, in MB.
pub const DEFAULT_IMAGE_MEMORY_MB: u64 = 32;

/// The images of one screen: the filter on its output and what it kept.
pub struct Images {
    filter: ImageFilter,
    pub kept: KeptImages,
}

impl Images {
    /// Keeps at most `limit` bytes of images.
    pub fn new(limit: u64) -> Self {
        Images {
            // One sequence may not be larger than all images together.
            filter: ImageFilter::new(usize::try_from(limit).unwrap_or(usize::MAX)),
            kept: KeptImages::new(limit),
        }
    }

    /// The image memory the config file sets (`image_memory_mb`), else
    /// [`DEFAULT_IMAGE_MEMORY_MB`], in bytes.
    pub fn configured_limit() -> u64 {
        tickloop_client::config::load()
            .ok()
            .and_then(|c| c.image_memory_mb)
            .unwrap_or(DEFAULT_IMAGE_MEMORY_MB)
            .saturating_mul(1024 * 1024)
    }

    /// Applies a chunk of the program's output: text to the emulator,
    /// images kept (with their space on the screen); kitty's answers are
    /// written to `answers` (the PTY).
    pub fn feed(&mut self, bytes: &[u8], emulator: &mut Emulator, answers: &mut dyn Write) {
        let kept = &mut self.kept;
        self.filter.feed(bytes, &mut |piece| match piece {
            Piece::Text(text) => emulator.feed(text),
            Piece::Sixel(sequence) => kept.sixel(sequence, emulator),
            Piece::Kitty(command) => kept.kitty(&command, emulator, answers),
            Piece::TooLong { sixel, len } => kept.too_long(sixel, len),
        });
    }
}

#[cfg(test)]
mod tests;
