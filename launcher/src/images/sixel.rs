//! A sixel sequence's size in pixels, read without decoding it: the raster
//! attributes (`"Pan;Pad;Ph;Pv`) when they are given, and the extent the
//! data draws (sixel characters and `!` repeats across, `-` bands down),
//! whichever is larger. The image itself is kept as it came; it is decoded
//! only when asked for (`screen --image N`).

/// The pixel size a sixel sequence (`ESC P … q … ESC \`) draws, or `None`
/// when it draws nothing.
pub fn size_px(sequence: &[u8]) -> Option<(u32, u32)> {
    let q = sequence.iter().position(|&b| b == b'q')?;
    let mut data = &sequence[q + 1..];
    if let Some(body) = data.strip_suffix(b"\x1b\\") {
        data = body;
    }
    let mut raster = (0u32, 0u32);
    if data.first() == Some(&b'"') {
        let (numbers, used) = numbers(&data[1..]);
        raster = (
            numbers.get(2).copied().unwrap_or(0),
            numbers.get(3).copied().unwrap_or(0),
        );
        data = &data[1 + used..];
    }
    let drawn = extent(data);
    let width = raster.0.max(drawn.0);
    let height = raster.1.max(drawn.1);
    (width > 0 && height > 0).then_some((width, height))
}

/// The width and height the sixel data draws.
fn extent(data: &[u8]) -> (u32, u32) {
    let (mut x, mut width) = (0u32, 0u32);
    // Bands begun (a band is 6 pixels), and whether the current one drew.
    let (mut band, mut drew_in_band, mut bands) = (0u32, false, 0u32);
    let mut i = 0;
    while i < data.len() {
        match data[i] {
            b'!' => {
                let (n, used) = number(&data[i + 1..]);
                i += used;
                if let Some(&c) = data.get(i + 1).filter(|c| (0x3f..=0x7e).contains(*c)) {
                    x = x.saturating_add(n.max(1));
                    width = width.max(x);
                    drew_in_band |= c != 0x3f;
                    i += 1;
                }
            }
            b'#' | b'"' => {
                // A colour (`#Pc;Pu;Px;Py;Pz`) or stray raster attributes.
                let (_, used) = numbers(&data[i + 1..]);
                i += used;
            }
            b'$' => x = 0,
            b'-' => {
                x = 0;
                band += 1;
            }
            c @ 0x3f..=0x7e => {
                x = x.saturating_add(1);
                width = width.max(x);
                if c != 0x3f {
                    drew_in_band = true;
                }
            }
            _ => {}
        }
        if drew_in_band {
            bands = band + 1;
            drew_in_band = false;
        }
        i += 1;
    }
    (width, bands.saturating_mul(6))
}

/// A decimal number at the start of `bytes` (0 when there is none), and
/// the bytes it took.
fn number(bytes: &[u8]) -> (u32, usize) {
    let mut n = 0u32;
    let mut used = 0;
    for &b in bytes {
        if !b.is_ascii_digit() {
            break;
        }
        n = n.saturating_mul(10).saturating_add(u32::from(b - b'0'));
        used += 1;
    }
    (n, used)
}

/// Numbers separated by `;` at the start of `bytes`, and the bytes taken.
fn numbers(bytes: &[u8]) -> (Vec<u32>, usize) {
    let mut out = Vec::new();
    let mut used = 0;
    loop {
        let (n, took) = number(&bytes[used..]);
        out.push(n);
        used += took;
        if bytes.get(used) == Some(&b';') {
            used += 1;
        } else {
            break;
        }
    }
    (out, used)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raster_attributes_give_the_size() {
        assert_eq!(
            size_px(b"\x1bPq\"1;1;100;60#0;2;97;0;0#0!100~-!100~\x1b\\"),
            Some((100, 60))
        );
    }

    #[test]
    fn without_raster_attributes_the_data_tells() {
        // Two bands, the longest row 5 pixels: 5x12.
        assert_eq!(size_px(b"\x1bP0;1;0q#1~~~$!5~-~~\x1b\\"), Some((5, 12)));
        // A trailing empty band does not count.
        assert_eq!(size_px(b"\x1bPq~~-\x1b\\"), Some((2, 6)));
    }

    #[test]
    fn data_larger_than_its_raster_attributes_counts() {
        assert_eq!(size_px(b"\x1bPq\"1;1;2;6!10~\x1b\\"), Some((10, 6)));
    }

    #[test]
    fn an_empty_sixel_draws_nothing() {
        assert_eq!(size_px(b"\x1bPq\x1b\\"), None);
        assert_eq!(size_px(b"\x1bPq\"1;1\x1b\\"), None);
    }
}
