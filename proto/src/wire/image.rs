//! Images a program drew (sixel, the kitty graphics protocol), kept with its
//! screen by the launcher: where each one is ([`ImagePlacement`]) and its
//! bytes in the encoding the program sent ([`ImageData`]). The same on
//! every hop: `screen`'s answer lists the placements, `screen --image N`
//! answers one image's data, and the attach protocol
//! ([`crate::attach::ToView::Images`], [`crate::attach::ViewEvent::Image`])
//! gives views both.
//!
//! # Coordinates
//!
//! A placement's `row` counts from the top row of the **live** screen (0),
//! whatever a view is scrolled to; rows of history are negative (-1 is the
//! newest line of history). A view scrolled `offset` lines back shows it at
//! `row + offset`. An image may stick out of the screen at the top (into
//! history) or at the right (when the screen got narrower).
//!
//! # Sizes
//!
//! `width_px`/`height_px` are the image's own size in pixels;
//! `rows`/`cols` the cells the launcher reserved for it on the screen,
//! computed with the launcher's nominal cell of
//! [`NOMINAL_CELL_WIDTH_PX`] x [`NOMINAL_CELL_HEIGHT_PX`] pixels (the kitty
//! protocol's `c=`/`r=` when the program gave them). A view whose cells
//! differ scales the image to those cells.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The width in pixels of a cell as the launcher counts an image's cells.
pub const NOMINAL_CELL_WIDTH_PX: u32 = 10;
/// The height in pixels of a cell as the launcher counts an image's cells.
pub const NOMINAL_CELL_HEIGHT_PX: u32 = 20;

/// The protocol an image was drawn with, and is kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    /// DEC sixel (`ESC P … q … ESC \`).
    Sixel,
    /// The kitty graphics protocol (`ESC _ G … ESC \`).
    Kitty,
}

impl ImageFormat {
    /// Its name as `screen` prints it.
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Sixel => "sixel",
            ImageFormat::Kitty => "kitty",
        }
    }
}

/// One image on the screen or in its history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImagePlacement {
    /// Its number in this instance: given in drawing order from 1, never
    /// reused (what `screen --image N` and [`crate::attach::ViewEvent::Image`]
    /// name).
    pub index: u32,
    /// The row of its top-left cell: 0 is the live screen's top row,
    /// negative rows are history (see the module's "Coordinates").
    pub row: i64,
    /// The column of its top-left cell (zero-based).
    pub col: u16,
    /// Its size in cells.
    pub rows: u16,
    pub cols: u16,
    /// Its size in pixels.
    pub width_px: u32,
    pub height_px: u32,
    pub format: ImageFormat,
    /// The bytes kept for it (its data in the encoding the program sent;
    /// what counts against the instance's image memory).
    pub bytes: u64,
}

/// The pixels of a kitty image as the program transmitted them (`f=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KittyPixels {
    /// `f=24`: 3 bytes a pixel, `width_px` x `height_px`.
    Rgb,
    /// `f=32` (the default): 4 bytes a pixel.
    Rgba,
    /// `f=100`: a PNG file.
    Png,
}

/// How an [`ImageData`]'s bytes are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "format", rename_all = "snake_case")]
pub enum ImageEncoding {
    /// The whole sixel sequence as the program sent it, from `ESC P` to the
    /// final `ESC \`: written as it is to a terminal that draws sixel.
    Sixel,
    /// The kitty image's data once its base64 is decoded (chunks joined):
    /// `pixels` as `f=` said, compressed with zlib (RFC 1950) when `zlib`
    /// (`o=z`). To send it to a kitty terminal: base64 it again, with
    /// `f=`, `s=`/`v=` (`width_px`/`height_px`) and `o=z` as these say.
    Kitty {
        pixels: KittyPixels,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        zlib: bool,
    },
}

/// One kept image's bytes, in its original encoding: the answer to
/// `screen --image N` (which the CLI makes a PNG of) and to
/// [`crate::attach::ViewEvent::Image`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ImageData {
    /// Where it is now, as `screen` lists it.
    pub placement: ImagePlacement,
    pub encoding: ImageEncoding,
    /// The bytes, in standard base64 (RFC 4648, with padding).
    pub data: String,
}
