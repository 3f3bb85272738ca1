//! Images a Tick drew (sixel, kitty graphics), shown in the views: what the
//! view's terminal can draw ([`probe`]: asked at attach, answers taken out
//! of its input), the images as pixels and back ([`sixel`], [`kitty`]:
//! pure codecs), and what a view writes for each placement ([`draw`]: the
//! image in a form its terminal draws, at its cell; or a marked box in the
//! cells when the terminal draws neither).

pub mod draw;
pub mod kitty;
pub mod probe;
pub mod sixel;

pub use draw::{mark_boxes, ImageWriter};
pub use probe::Capabilities;

/// An image as 8-bit RGBA pixels, row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rgba {
    pub width: u32,
    pub height: u32,
    /// `width * height * 4` bytes.
    pub pixels: Vec<u8>,
}

impl Rgba {
    /// `None` when `pixels` is not `width * height * 4` bytes or the image
    /// is empty.
    pub fn new(width: u32, height: u32, pixels: Vec<u8>) -> Option<Self> {
        let len = (width as usize)
            .checked_mul(height as usize)?
            .checked_mul(4)?;
        (width > 0 && height > 0 && pixels.len() == len).then_some(Rgba {
            width,
            height,
            pixels,
        })
    }

    /// The image scaled to `width` x `height` (nearest pixel).
    pub fn scaled(&self, width: u32, height: u32) -> Rgba {
        if (width, height) == (self.width, self.height) || width == 0 || height == 0 {
            return self.clone();
        }
        let mut pixels = Vec::with_capacity(width as usize * height as usize * 4);
        for y in 0..u64::from(height) {
            let sy = (y * u64::from(self.height) / u64::from(height)) as usize;
            for x in 0..u64::from(width) {
                let sx = (x * u64::from(self.width) / u64::from(width)) as usize;
                let at = (sy * self.width as usize + sx) * 4;
                pixels.extend_from_slice(&self.pixels[at..at + 4]);
            }
        }
        Rgba {
            width,
            height,
            pixels,
        }
    }
}

// The keeping half of issue 52 (branch i52-keep) defines these on the wire
// (`tickloop_proto::wire::image`); until it lands, the same shapes here.

/// The protocol an image was drawn with, and is kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImageFormat {
    Sixel,
    Kitty,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Sixel => "sixel",
            ImageFormat::Kitty => "kitty",
        }
    }
}

/// One image on the screen or in its history, as the launcher lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImagePlacement {
    /// Its number in the instance, never reused.
    pub index: u32,
    /// The row of its top-left cell: 0 is the live screen's top row,
    /// history rows are negative.
    pub row: i64,
    pub col: u16,
    /// Its size in cells.
    pub rows: u16,
    pub cols: u16,
    /// Its size in pixels.
    pub width_px: u32,
    pub height_px: u32,
    pub format: ImageFormat,
    /// The bytes kept for it.
    pub bytes: u64,
}

/// The pixels of a kitty image as the program transmitted them (`f=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KittyPixels {
    Rgb,
    Rgba,
    Png,
}

/// How a kept image's bytes are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageEncoding {
    /// The whole sixel sequence, `ESC P` to `ESC \`.
    Sixel,
    /// A kitty image's data, base64 decoded and chunks joined.
    Kitty { pixels: KittyPixels, zlib: bool },
}

/// Why an image cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error(transparent)]
    Sixel(#[from] sixel::SixelError),
    #[error(transparent)]
    Kitty(#[from] kitty::KittyError),
}

/// One kept image's bytes, as the launcher sent them to the view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptImage {
    pub encoding: ImageEncoding,
    pub data: Vec<u8>,
}

impl KeptImage {
    /// Its pixels (`size`: the placement's, for raw kitty pixels).
    pub fn decode(&self, size: (u32, u32)) -> Result<Rgba, ImageError> {
        Ok(match self.encoding {
            ImageEncoding::Sixel => sixel::decode(&self.data)?,
            ImageEncoding::Kitty { pixels, zlib } => {
                kitty::from_data(pixels, zlib, size, &self.data)?
            }
        })
    }
}
