//! Images in the kitty graphics protocol as pixels and back, pure
//! functions with no I/O: [`decode`] reads the `ESC _ G … ESC \` commands
//! that transmitted one image (direct transmission, one or many chunks,
//! RGB, RGBA or PNG, zlib-compressed or not) into RGBA; [`encode`] writes
//! RGBA as one transmit-and-display command, chunked at 4096 bytes of
//! base64, for a terminal that draws the kitty protocol.

use super::{KittyPixels, Rgba};
use base64::Engine;
use std::io::Read;

/// Base64 bytes per chunk, as the protocol asks.
pub const CHUNK: usize = 4096;

/// Why a kitty image could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KittyError {
    #[error("not a kitty graphics command (ESC _ G … ESC \\)")]
    NotKitty,
    #[error("the kitty image is sent as a {0}, not in the command: it is not kept")]
    NotDirect(String),
    #[error("the kitty image's data is not base64: {0}")]
    Base64(String),
    #[error("the kitty image's data does not inflate: {0}")]
    Inflate(String),
    #[error("the kitty image's PNG does not decode: {0}")]
    Png(String),
    #[error("the kitty image's format f={0} is not 24, 32 or 100")]
    Format(String),
    #[error("the kitty image's data does not match its size {0}x{1}")]
    Size(u32, u32),
}

/// A command's control keys (`a=T`: `("a", "T")`) and its payload.
type Command<'a> = (Vec<(&'a str, &'a str)>, &'a [u8]);

/// The control keys of one command, and its payload.
fn split_command(bytes: &[u8]) -> Result<Command<'_>, KittyError> {
    let body = bytes.strip_prefix(b"\x1b_G").ok_or(KittyError::NotKitty)?;
    let body = body.strip_suffix(b"\x1b\\").unwrap_or(body);
    let (control, payload) = match body.iter().position(|b| *b == b';') {
        Some(p) => (&body[..p], &body[p + 1..]),
        None => (body, &body[body.len()..]),
    };
    let control = std::str::from_utf8(control).map_err(|_| KittyError::NotKitty)?;
    let keys = control
        .split(',')
        .filter_map(|kv| kv.split_once('='))
        .collect();
    Ok((keys, payload))
}

/// The commands in `bytes`, each `ESC _ G … ESC \`.
fn commands(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while let Some(start) = rest.windows(3).position(|w| w == b"\x1b_G") {
        let from = &rest[start..];
        let end = from
            .windows(2)
            .position(|w| w == b"\x1b\\")
            .map_or(from.len(), |p| p + 2);
        out.push(&from[..end]);
        rest = &from[end..];
    }
    out
}

/// Decodes the commands that transmitted one image (the first gives its
/// keys, the chunks after it their data) into RGBA.
pub fn decode(bytes: &[u8]) -> Result<Rgba, KittyError> {
    let parts = commands(bytes);
    let first = parts.first().ok_or(KittyError::NotKitty)?;
    let (keys, _) = split_command(first)?;
    let key = |k: &str| keys.iter().find(|(name, _)| *name == k).map(|(_, v)| *v);
    if let Some(medium) = key("t").filter(|t| *t != "d") {
        let what = match medium {
            "f" => "file",
            "t" => "temporary file",
            "s" => "shared memory object",
            other => other,
        };
        return Err(KittyError::NotDirect(what.to_string()));
    }
    let mut encoded = Vec::new();
    for part in &parts {
        encoded.extend_from_slice(split_command(part)?.1);
    }
    let data = base64::engine::general_purpose::STANDARD
        .decode(&encoded)
        .map_err(|e| KittyError::Base64(e.to_string()))?;
    let size = |k: &str| key(k).and_then(|v| v.parse::<u32>().ok()).unwrap_or(0);
    let pixels = match key("f").unwrap_or("32") {
        "100" => KittyPixels::Png,
        "32" => KittyPixels::Rgba,
        "24" => KittyPixels::Rgb,
        other => return Err(KittyError::Format(other.to_string())),
    };
    from_data(pixels, key("o") == Some("z"), (size("s"), size("v")), &data)
}

/// An image's data as the program transmitted it (base64 decoded, chunks
/// joined: what the launcher keeps), into RGBA: `pixels` as its `f=` said,
/// zlib-compressed when `zlib` (`o=z`), `size` its `s=`/`v=` (unused for
/// a PNG, which says its own).
pub fn from_data(
    pixels: KittyPixels,
    zlib: bool,
    size: (u32, u32),
    data: &[u8],
) -> Result<Rgba, KittyError> {
    let inflated;
    let data = if zlib {
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(data)
            .take(super::sixel::MAX_PIXELS as u64 * 4 + 1)
            .read_to_end(&mut out)
            .map_err(|e| KittyError::Inflate(e.to_string()))?;
        inflated = out;
        &inflated[..]
    } else {
        data
    };
    let (w, h) = size;
    let rgba = match pixels {
        KittyPixels::Png => return png_to_rgba(data),
        KittyPixels::Rgba => data.to_vec(),
        KittyPixels::Rgb => data
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
    };
    Rgba::new(w, h, rgba).ok_or(KittyError::Size(w, h))
}

/// A PNG into RGBA, with the `png` crate (its transformations make every
/// colour type 8-bit RGB or RGBA, grey or not).
pub fn png_to_rgba(data: &[u8]) -> Result<Rgba, KittyError> {
    let fail = |e: png::DecodingError| KittyError::Png(e.to_string());
    let mut decoder = png::Decoder::new(std::io::Cursor::new(data));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(fail)?;
    let (w, h) = (reader.info().width, reader.info().height);
    if (w as usize).saturating_mul(h as usize) > super::sixel::MAX_PIXELS {
        return Err(KittyError::Size(w, h));
    }
    let mut buf = vec![0; reader.output_buffer_size().unwrap_or(0)];
    let frame = reader.next_frame(&mut buf).map_err(fail)?;
    let bytes = &buf[..frame.buffer_size()];
    let pixels: Vec<u8> = match frame.color_type {
        png::ColorType::Rgba => bytes.to_vec(),
        png::ColorType::Rgb => bytes
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => bytes
            .chunks_exact(2)
            .flat_map(|p| [p[0], p[0], p[0], p[1]])
            .collect(),
        png::ColorType::Grayscale => bytes.iter().flat_map(|g| [*g, *g, *g, 255]).collect(),
        png::ColorType::Indexed => return Err(KittyError::Png("an indexed PNG".into())),
    };
    Rgba::new(w, h, pixels).ok_or(KittyError::Size(w, h))
}

/// One transmit-and-display command for `image` (`a=T,f=32`), scaled by the
/// terminal to `cols` x `rows` cells, the cursor left where it was (`C=1`)
/// and no answer asked for (`q=2`); chunked at [`CHUNK`] bytes of base64.
pub fn encode(image: &Rgba, cols: u16, rows: u16) -> Vec<u8> {
    let data = base64::engine::general_purpose::STANDARD.encode(&image.pixels);
    let chunks: Vec<&[u8]> = data.as_bytes().chunks(CHUNK).collect();
    let mut out = Vec::with_capacity(data.len() + chunks.len() * 16 + 64);
    for (n, chunk) in chunks.iter().enumerate() {
        let more = u8::from(n + 1 < chunks.len());
        if n == 0 {
            out.extend_from_slice(
                format!(
                    "\x1b_Ga=T,f=32,s={},v={},c={cols},r={rows},C=1,q=2,m={more};",
                    image.width, image.height
                )
                .as_bytes(),
            );
        } else {
            out.extend_from_slice(format!("\x1b_Gm={more};").as_bytes());
        }
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\x1b\\");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: u32, h: u32) -> Rgba {
        let pixels = (0..w * h)
            .flat_map(|i| [(i % 251) as u8, (i / 3 % 256) as u8, 7, (i % 2 * 255) as u8])
            .collect();
        Rgba::new(w, h, pixels).unwrap()
    }

    #[test]
    fn an_image_survives_encoding_and_decoding_in_chunks() {
        // 100x40 RGBA is 16000 bytes, 21336 of base64: six chunks.
        let image = gradient(100, 40);
        let bytes = encode(&image, 10, 2);
        assert_eq!(commands(&bytes).len(), 6);
        assert!(bytes.starts_with(b"\x1b_Ga=T,f=32,s=100,v=40,c=10,r=2,C=1,q=2,m=1;"));
        for part in commands(&bytes) {
            let (_, payload) = split_command(part).unwrap();
            assert!(payload.len() <= CHUNK);
        }
        assert_eq!(decode(&bytes).unwrap(), image);
    }

    #[test]
    fn rgb_compressed_and_png_images_decode() {
        use std::io::Write;
        let rgb: Vec<u8> = (0..6 * 2 * 3).map(|i| i as u8 * 5).collect();
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&rgb).unwrap();
        let b64 = base64::engine::general_purpose::STANDARD.encode(z.finish().unwrap());
        let cmd = format!("\x1b_Ga=T,f=24,s=6,v=2,o=z;{b64}\x1b\\");
        let image = decode(cmd.as_bytes()).unwrap();
        assert_eq!((image.width, image.height), (6, 2));
        assert_eq!(&image.pixels[4..8], &[15, 20, 25, 255]);

        let source = gradient(9, 5);
        let mut png_bytes = Vec::new();
        {
            let mut encoder = png::Encoder::new(&mut png_bytes, 9, 5);
            encoder.set_color(png::ColorType::Rgba);
            encoder.set_depth(png::BitDepth::Eight);
            let mut writer = encoder.write_header().unwrap();
            writer.write_image_data(&source.pixels).unwrap();
        }
        let b64 = base64::engine::general_purpose::STANDARD.encode(&png_bytes);
        let (a, b) = b64.split_at(8);
        let cmd = format!("\x1b_Gf=100,a=T,m=1;{a}\x1b\\\x1b_Gm=0;{b}\x1b\\");
        assert_eq!(decode(cmd.as_bytes()).unwrap(), source);
    }

    #[test]
    fn files_shared_memory_and_bad_data_are_refused() {
        assert_eq!(
            decode(b"\x1b_Ga=T,t=f,f=100;L3RtcC94\x1b\\"),
            Err(KittyError::NotDirect("file".into()))
        );
        assert_eq!(
            decode(b"\x1b_Ga=T,t=s,f=32,s=1,v=1;eA==\x1b\\"),
            Err(KittyError::NotDirect("shared memory object".into()))
        );
        assert!(matches!(
            decode(b"\x1b_Ga=T,f=32,s=1,v=1;!!\x1b\\"),
            Err(KittyError::Base64(_))
        ));
        assert_eq!(
            decode(b"\x1b_Ga=T,f=32,s=2,v=1;AAAAAA==\x1b\\"),
            Err(KittyError::Size(2, 1))
        );
        assert_eq!(decode(b"\x1bPq~\x1b\\"), Err(KittyError::NotKitty));
    }
}
