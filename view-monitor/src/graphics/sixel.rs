//! Sixel images as pixels and back, pure functions with no I/O: [`decode`]
//! reads a whole `DCS … q … ST` (what `img2sixel` or `chafa -f sixel`
//! writes) into RGBA, [`encode`] writes RGBA as sixel for a terminal that
//! draws sixel but not the kitty protocol.

use super::Rgba;

/// The most pixels a decoded image may have (4096 x 4096): a sixel that
/// claims more is refused rather than allocated.
pub const MAX_PIXELS: usize = 4096 * 4096;

/// Why a sixel could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SixelError {
    #[error("not a sixel image: it does not start with DCS … q")]
    NotSixel,
    #[error("the sixel image is larger than 4096x4096 pixels")]
    TooLarge,
    #[error("the sixel image draws no pixels")]
    Empty,
}

/// VT340's default palette for its first 16 registers (percent RGB), as
/// xterm and libsixel start; the others start black.
const VT340: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (20, 20, 80),
    (80, 13, 13),
    (20, 80, 20),
    (80, 20, 80),
    (20, 80, 80),
    (80, 80, 20),
    (53, 53, 53),
    (26, 26, 26),
    (33, 33, 60),
    (60, 26, 26),
    (33, 60, 33),
    (60, 33, 60),
    (33, 60, 60),
    (60, 60, 33),
    (80, 80, 80),
];

fn percent(p: u32) -> u8 {
    u8::try_from(p.min(100) * 255 / 100).unwrap_or(u8::MAX)
}

/// HLS (hue 0-360, lightness and saturation 0-100; hue 0 is blue, as DEC
/// has it) to RGB.
fn hls(h: u32, l: u32, s: u32) -> [u8; 3] {
    let (l, s) = (f64::from(l.min(100)) / 100.0, f64::from(s.min(100)) / 100.0);
    let h = f64::from((h + 240) % 360) / 360.0;
    let q = if l < 0.5 {
        l * (1.0 + s)
    } else {
        l + s - l * s
    };
    let p = 2.0 * l - q;
    let channel = |t: f64| {
        let t = t.rem_euclid(1.0);
        let v = if t < 1.0 / 6.0 {
            p + (q - p) * 6.0 * t
        } else if t < 0.5 {
            q
        } else if t < 2.0 / 3.0 {
            p + (q - p) * (2.0 / 3.0 - t) * 6.0
        } else {
            p
        };
        (v * 255.0).round().clamp(0.0, 255.0) as u8
    };
    [channel(h + 1.0 / 3.0), channel(h), channel(h - 1.0 / 3.0)]
}

/// Reads a number at `bytes[*i..]`, moving `i` past it.
fn number(bytes: &[u8], i: &mut usize) -> Option<u32> {
    let start = *i;
    let mut n: u32 = 0;
    while let Some(d) = bytes.get(*i).filter(|b| b.is_ascii_digit()) {
        n = n.saturating_mul(10).saturating_add(u32::from(d - b'0'));
        *i += 1;
    }
    (*i > start).then_some(n)
}

/// Reads `n;n;…` at `bytes[*i..]` (missing numbers are 0).
fn numbers(bytes: &[u8], i: &mut usize) -> Vec<u32> {
    let mut out = vec![number(bytes, i).unwrap_or(0)];
    while bytes.get(*i) == Some(&b';') {
        *i += 1;
        out.push(number(bytes, i).unwrap_or(0));
    }
    out
}

/// The pixels being drawn, grown as the sixels go.
struct Canvas {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 4]>,
}

impl Canvas {
    fn set(&mut self, x: usize, y: usize, color: [u8; 4]) -> Result<(), SixelError> {
        if x >= self.width || y >= self.height {
            if (x + 1)
                .max(self.width)
                .saturating_mul((y + 1).max(self.height))
                > MAX_PIXELS
            {
                return Err(SixelError::TooLarge);
            }
            // Grow by doubling what is too small, so a wide image is not
            // copied per column; never past what the limit allows.
            let grow = |size: usize, need: usize| {
                if need <= size {
                    size
                } else {
                    (size * 2).min(4096).max(need)
                }
            };
            let (mut w, mut h) = (grow(self.width, x + 1), grow(self.height, y + 1));
            if w.saturating_mul(h) > MAX_PIXELS {
                (w, h) = ((x + 1).max(self.width), (y + 1).max(self.height));
            }
            let mut pixels = vec![[0u8; 4]; w * h];
            for row in 0..self.height {
                pixels[row * w..row * w + self.width]
                    .copy_from_slice(&self.pixels[row * self.width..(row + 1) * self.width]);
            }
            (self.width, self.height, self.pixels) = (w, h, pixels);
        }
        self.pixels[y * self.width + x] = color;
        Ok(())
    }
}

/// Decodes a whole sixel image, from its `ESC P` (or its body after `q`)
/// to its `ESC \`: RGBA, pixels not drawn transparent. The size is what was
/// drawn, or the raster attributes' when they say more.
pub fn decode(bytes: &[u8]) -> Result<Rgba, SixelError> {
    let body = match bytes.iter().position(|b| *b == b'q') {
        Some(q) if bytes.starts_with(b"\x1bP") || bytes.first() == Some(&0x90) => &bytes[q + 1..],
        _ => return Err(SixelError::NotSixel),
    };
    let mut palette: Vec<[u8; 4]> = (0..256)
        .map(|i| {
            let (r, g, b) = VT340.get(i).copied().unwrap_or((0, 0, 0));
            [percent(r.into()), percent(g.into()), percent(b.into()), 255]
        })
        .collect();
    let mut canvas = Canvas {
        width: 0,
        height: 0,
        pixels: Vec::new(),
    };
    let (mut declared_w, mut declared_h) = (0usize, 0usize);
    let (mut drawn_w, mut drawn_h) = (0usize, 0usize);
    let (mut x, mut band, mut color) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while let Some(&b) = body.get(i) {
        i += 1;
        match b {
            0x1b | 0x9c => break,
            b'"' => {
                let n = numbers(body, &mut i);
                declared_w = n.get(2).copied().unwrap_or(0) as usize;
                declared_h = n.get(3).copied().unwrap_or(0) as usize;
            }
            b'#' => {
                let n = numbers(body, &mut i);
                color = (n[0] as usize) % palette.len();
                if n.len() >= 5 {
                    palette[color] = match n[1] {
                        1 => {
                            let [r, g, b] = hls(n[2], n[3], n[4]);
                            [r, g, b, 255]
                        }
                        _ => [percent(n[2]), percent(n[3]), percent(n[4]), 255],
                    };
                }
            }
            b'$' => x = 0,
            b'-' => {
                x = 0;
                band += 1;
            }
            b'!' | b'?'..=b'~' => {
                let (count, sixel) = if b == b'!' {
                    let count = number(body, &mut i).unwrap_or(1).max(1) as usize;
                    match body.get(i) {
                        Some(&s @ b'?'..=b'~') => {
                            i += 1;
                            (count, s)
                        }
                        _ => continue,
                    }
                } else {
                    (1, b)
                };
                let bits = sixel - b'?';
                if count > 4096 || x + count > 4096 {
                    return Err(SixelError::TooLarge);
                }
                for dx in 0..count {
                    for bit in 0..6 {
                        if bits & (1 << bit) != 0 {
                            let y = band * 6 + bit;
                            canvas.set(x + dx, y, palette[color])?;
                            drawn_h = drawn_h.max(y + 1);
                        }
                    }
                }
                x += count;
                drawn_w = drawn_w.max(x);
            }
            _ => {}
        }
    }
    let (width, height) = (drawn_w.max(declared_w), drawn_h.max(declared_h));
    if width == 0 || height == 0 {
        return Err(SixelError::Empty);
    }
    if width.saturating_mul(height) > MAX_PIXELS {
        return Err(SixelError::TooLarge);
    }
    let mut pixels = Vec::with_capacity(width * height * 4);
    for y in 0..height {
        for x in 0..width {
            let p = if x < canvas.width && y < canvas.height {
                canvas.pixels[y * canvas.width + x]
            } else {
                [0; 4]
            };
            pixels.extend_from_slice(&p);
        }
    }
    Rgba::new(width as u32, height as u32, pixels).ok_or(SixelError::Empty)
}

/// The palette of an image: its own colours when it has at most 256 (a
/// chart, a screenshot of text), else the 6x6x6 colour cube and 40 greys.
fn palette_of(image: &Rgba) -> Vec<[u8; 3]> {
    let mut seen = std::collections::HashSet::new();
    for p in image.pixels.chunks_exact(4) {
        if p[3] >= 128 {
            seen.insert([p[0], p[1], p[2]]);
            if seen.len() > 256 {
                break;
            }
        }
    }
    if seen.len() <= 256 {
        let mut own: Vec<[u8; 3]> = seen.into_iter().collect();
        own.sort_unstable();
        return own;
    }
    let levels = [0u8, 51, 102, 153, 204, 255];
    let mut cube = Vec::with_capacity(256);
    for r in levels {
        for g in levels {
            for b in levels {
                cube.push([r, g, b]);
            }
        }
    }
    cube.extend((1..=40u32).map(|i| {
        let v = u8::try_from(i * 255 / 41).unwrap_or(u8::MAX);
        [v, v, v]
    }));
    cube
}

fn nearest(palette: &[[u8; 3]], rgb: [u8; 3]) -> usize {
    let distance = |c: &[u8; 3]| -> i32 {
        (0..3)
            .map(|k| (i32::from(c[k]) - i32::from(rgb[k])).pow(2))
            .sum()
    };
    (0..palette.len())
        .min_by_key(|&i| distance(&palette[i]))
        .unwrap_or(0)
}

/// Encodes RGBA as a sixel image (`ESC P 0;1;0 q … ESC \`): transparent
/// pixels (alpha under half) are not drawn, colours are exact when there
/// are at most 256 of them (to the percent that sixel colours carry).
pub fn encode(image: &Rgba) -> Vec<u8> {
    let (w, h) = (image.width as usize, image.height as usize);
    let palette = palette_of(image);
    let mut cache = std::collections::HashMap::new();
    let index: Vec<Option<usize>> = image
        .pixels
        .chunks_exact(4)
        .map(|p| {
            (p[3] >= 128).then(|| {
                let rgb = [p[0], p[1], p[2]];
                *cache.entry(rgb).or_insert_with(|| nearest(&palette, rgb))
            })
        })
        .collect();
    let mut out = format!("\x1bP0;1;0q\"1;1;{w};{h}").into_bytes();
    for (i, c) in palette.iter().enumerate() {
        let pct = |v: u8| (u32::from(v) * 100 + 127) / 255;
        out.extend_from_slice(
            format!("#{i};2;{};{};{}", pct(c[0]), pct(c[1]), pct(c[2])).as_bytes(),
        );
    }
    let mut sixels = vec![0u8; w];
    for top in (0..h).step_by(6) {
        let mut used: Vec<usize> = (top..(top + 6).min(h))
            .flat_map(|y| index[y * w..(y + 1) * w].iter().flatten().copied())
            .collect();
        used.sort_unstable();
        used.dedup();
        for (n, &color) in used.iter().enumerate() {
            for (x, sixel) in sixels.iter_mut().enumerate() {
                *sixel = (0..6)
                    .filter(|bit| {
                        let y = top + bit;
                        y < h && index[y * w + x] == Some(color)
                    })
                    .fold(0u8, |acc, bit| acc | (1 << bit));
            }
            if n > 0 {
                out.push(b'$');
            }
            out.extend_from_slice(format!("#{color}").as_bytes());
            run_length(&sixels, &mut out);
        }
        out.push(b'-');
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// One colour's row of sixels, repeats as `!n`, trailing blanks left out.
fn run_length(sixels: &[u8], out: &mut Vec<u8>) {
    let end = sixels.iter().rposition(|s| *s != 0).map_or(0, |p| p + 1);
    let mut x = 0;
    while x < end {
        let s = sixels[x];
        let run = sixels[x..end].iter().take_while(|v| **v == s).count();
        let ch = b'?' + s;
        if run > 3 {
            out.extend_from_slice(format!("!{run}").as_bytes());
            out.push(ch);
        } else {
            out.extend(std::iter::repeat_n(ch, run));
        }
        x += run;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An image whose colours are on sixel's percent grid, with a
    /// transparent hole.
    fn chart(w: u32, h: u32) -> Rgba {
        let mut pixels = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let p = match (x * 4 / w, y % 7) {
                    (_, 3) if x % 5 == 0 => [0, 0, 0, 0],
                    (0, _) => [255, 0, 0, 255],
                    (1, _) => [0, 255, 0, 255],
                    (2, _) => [0, 0, 255, 255],
                    _ => [255, 255, 255, 255],
                };
                pixels.extend_from_slice(&p);
            }
        }
        Rgba::new(w, h, pixels).unwrap()
    }

    #[test]
    fn an_image_survives_encoding_and_decoding() {
        for (w, h) in [(1, 1), (13, 7), (40, 12), (64, 48)] {
            let image = chart(w, h);
            let back = decode(&encode(&image)).unwrap();
            assert_eq!((back.width, back.height), (w, h));
            assert_eq!(back.pixels, image.pixels, "{w}x{h}");
        }
    }

    #[test]
    fn many_colours_come_back_near() {
        let (w, h) = (32u32, 18u32);
        let pixels: Vec<u8> = (0..w * h)
            .flat_map(|i| {
                [
                    (i * 7 % 256) as u8,
                    (i * 13 % 256) as u8,
                    (i % 256) as u8,
                    255,
                ]
            })
            .collect();
        let image = Rgba::new(w, h, pixels).unwrap();
        let back = decode(&encode(&image)).unwrap();
        for (a, b) in image.pixels.iter().zip(&back.pixels) {
            assert!((i32::from(*a) - i32::from(*b)).abs() <= 40, "{a} {b}");
        }
    }

    #[test]
    fn raster_attributes_repeats_hls_and_the_default_palette() {
        // 4x6 declared; color 1 by HLS (hue 120 is red in DEC's wheel),
        // a repeat of the full sixel; color 2 left at VT340's.
        let back = decode(b"\x1bPq\"1;1;4;8#1;1;120;50;100!3~-#2@\x1b\\").unwrap();
        assert_eq!((back.width, back.height), (4, 8));
        let at = |x: usize, y: usize| &back.pixels[(y * 4 + x) * 4..(y * 4 + x) * 4 + 4];
        assert_eq!(at(0, 0), &[255, 0, 0, 255]);
        assert_eq!(at(2, 5), &[255, 0, 0, 255]);
        assert_eq!(at(3, 0), &[0, 0, 0, 0], "not drawn");
        assert_eq!(at(0, 6), &[204, 33, 33, 255], "VT340's colour 2");
        assert_eq!(at(0, 7), &[0, 0, 0, 0], "declared, not drawn");
    }

    #[test]
    fn bad_and_huge_sixels_are_refused() {
        assert_eq!(decode(b"hello"), Err(SixelError::NotSixel));
        assert_eq!(decode(b"\x1bPq\x1b\\"), Err(SixelError::Empty));
        assert_eq!(decode(b"\x1bPq!5000~\x1b\\"), Err(SixelError::TooLarge));
        let tall: Vec<u8> = [b"\x1bPq".as_slice(), &b"~-".repeat(800), b"\x1b\\"].concat();
        assert_eq!(decode(&tall).map(|i| (i.width, i.height)), Ok((1, 4800)));
    }
}
