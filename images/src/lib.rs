//! Kept images made into PNG: what `tickloop screen ID --image N` writes
//! and what the MCP bridge shows an agent. The launcher keeps each image
//! as the program sent it ([`tickloop_proto::wire::ImageData`]) and decodes
//! nothing; this crate decodes one when it is asked for:
//!
//! * a sixel with `icy_sixel` (chosen by measurement against
//!   `sixel-image`: `benches/images.md`);
//! * a kitty image's RGB or RGBA pixels, inflated with `flate2` when it
//!   came zlib-compressed (`o=z`), at most the size its `s=`/`v=` give;
//!   a kitty PNG is passed on as it is (inflated first when compressed).
//!
//! PNG is encoded with the `image` crate.

use base64::Engine;
use image::ImageEncoder;
use std::io::Read;
use tickloop_proto::wire::{ImageData, ImageEncoding, KittyPixels};

/// The most bytes a compressed kitty PNG may inflate to.
const MAX_PNG_BYTES: u64 = 256 * 1024 * 1024;

/// Why an image could not be made into a PNG.
#[derive(Debug, thiserror::Error)]
pub enum PngError {
    #[error("the image's data is not base64: {0}")]
    Base64(#[from] base64::DecodeError),
    #[error("the sixel image cannot be decoded: {0}")]
    Sixel(String),
    #[error("the kitty image's zlib data cannot be inflated: {0}")]
    Inflate(std::io::Error),
    #[error("the kitty image has {got} bytes of pixels; {width}x{height} needs {wanted}")]
    Short {
        got: usize,
        wanted: u64,
        width: u32,
        height: u32,
    },
    #[error("the kitty image is not a PNG")]
    NotPng,
    #[error("the PNG cannot be encoded: {0}")]
    Encode(#[from] image::ImageError),
}

/// A PNG of the image, with its width and height in pixels.
pub fn to_png(image: &ImageData) -> Result<(Vec<u8>, u32, u32), PngError> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(&image.data)?;
    let (width, height) = (image.placement.width_px, image.placement.height_px);
    match image.encoding {
        ImageEncoding::Sixel => {
            let decoded = icy_sixel::SixelImage::decode(&bytes)
                .map_err(|e| PngError::Sixel(e.to_string()))?;
            let (w, h) = (
                u32::try_from(decoded.width).map_err(|e| PngError::Sixel(e.to_string()))?,
                u32::try_from(decoded.height).map_err(|e| PngError::Sixel(e.to_string()))?,
            );
            Ok((
                encode(&decoded.pixels, w, h, image::ExtendedColorType::Rgba8)?,
                w,
                h,
            ))
        }
        ImageEncoding::Kitty { pixels, zlib } => {
            let per_pixel: u64 = match pixels {
                KittyPixels::Rgb => 3,
                KittyPixels::Rgba => 4,
                KittyPixels::Png => 0,
            };
            let wanted = u64::from(width) * u64::from(height) * per_pixel;
            let bytes = if zlib {
                let limit = if per_pixel == 0 {
                    MAX_PNG_BYTES
                } else {
                    wanted
                };
                inflate(&bytes, limit)?
            } else {
                bytes
            };
            if pixels == KittyPixels::Png {
                let (w, h) = png_size(&bytes).ok_or(PngError::NotPng)?;
                return Ok((bytes, w, h));
            }
            if (bytes.len() as u64) < wanted {
                return Err(PngError::Short {
                    got: bytes.len(),
                    wanted,
                    width,
                    height,
                });
            }
            let color = if per_pixel == 3 {
                image::ExtendedColorType::Rgb8
            } else {
                image::ExtendedColorType::Rgba8
            };
            let exact = &bytes[..usize::try_from(wanted).unwrap_or(bytes.len())];
            Ok((encode(exact, width, height, color)?, width, height))
        }
    }
}

fn encode(
    pixels: &[u8],
    width: u32,
    height: u32,
    color: image::ExtendedColorType,
) -> Result<Vec<u8>, PngError> {
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out).write_image(pixels, width, height, color)?;
    Ok(out)
}

/// zlib data inflated, at most `limit` bytes of it.
fn inflate(bytes: &[u8], limit: u64) -> Result<Vec<u8>, PngError> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(bytes)
        .take(limit)
        .read_to_end(&mut out)
        .map_err(PngError::Inflate)?;
    Ok(out)
}

/// The size a PNG's header gives.
pub fn png_size(data: &[u8]) -> Option<(u32, u32)> {
    if data.len() < 24 || &data[..8] != b"\x89PNG\r\n\x1a\n" || &data[12..16] != b"IHDR" {
        return None;
    }
    let be = |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
    Some((be(16), be(20)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::{ImageFormat, ImagePlacement};

    fn data(encoding: ImageEncoding, bytes: &[u8], width: u32, height: u32) -> ImageData {
        ImageData {
            placement: ImagePlacement {
                index: 1,
                row: 0,
                col: 0,
                rows: 1,
                cols: 1,
                width_px: width,
                height_px: height,
                format: match encoding {
                    ImageEncoding::Sixel => ImageFormat::Sixel,
                    ImageEncoding::Kitty { .. } => ImageFormat::Kitty,
                },
                bytes: bytes.len() as u64,
            },
            encoding,
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        }
    }

    #[test]
    fn a_sixel_becomes_a_png_of_its_size() {
        let sixel = b"\x1bPq\"1;1;4;6#0;2;100;0;0#0~~~~\x1b\\";
        let (png, w, h) = to_png(&data(ImageEncoding::Sixel, sixel, 4, 6)).unwrap();
        assert_eq!((w, h), (4, 6));
        assert_eq!(png_size(&png), Some((4, 6)));
        let decoded = image::load_from_memory(&png).unwrap().to_rgba8();
        assert_eq!(decoded.get_pixel(0, 0).0, [255, 0, 0, 255]);
    }

    #[test]
    fn kitty_rgb_compressed_or_not_becomes_a_png() {
        let pixels: Vec<u8> = [0u8, 255, 0].repeat(6);
        let plain = ImageEncoding::Kitty {
            pixels: KittyPixels::Rgb,
            zlib: false,
        };
        let (png, w, h) = to_png(&data(plain, &pixels, 3, 2)).unwrap();
        assert_eq!((w, h, png_size(&png)), (3, 2, Some((3, 2))));
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut z, &pixels).unwrap();
        let zipped = ImageEncoding::Kitty {
            pixels: KittyPixels::Rgb,
            zlib: true,
        };
        let (png2, _, _) = to_png(&data(zipped, &z.finish().unwrap(), 3, 2)).unwrap();
        assert_eq!(png, png2);
    }

    #[test]
    fn short_kitty_pixels_are_an_error() {
        let enc = ImageEncoding::Kitty {
            pixels: KittyPixels::Rgba,
            zlib: false,
        };
        let err = to_png(&data(enc, &[0; 7], 2, 2)).unwrap_err();
        assert!(err.to_string().contains("needs 16"), "{err}");
    }
}
