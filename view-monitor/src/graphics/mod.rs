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

pub use tickloop_proto::wire::{
    ImageData, ImageEncoding, ImageFormat, ImagePlacement, KittyPixels,
};

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
    /// The bytes the launcher sent (`ToView::Image`), base64 decoded;
    /// `None` when they are not base64.
    pub fn from_wire(data: &ImageData) -> Option<Self> {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&data.data)
            .ok()?;
        Some(KeptImage {
            encoding: data.encoding,
            data: bytes,
        })
    }

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
