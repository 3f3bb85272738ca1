//! One grid row as compact bytes and back: the row's cells up to its last
//! one that is not a fresh blank, as runs of cells that share their style
//! (colours, attributes, underline colour, hyperlink), each with its
//! characters as UTF-8. What is rare rides along only where it occurs: the
//! wide-character flags of a run's cells, their zero-width marks.
//!
//! The round trip is exact for everything a cell holds that can be seen or
//! that reflow reads (characters, marks, colours, flags, the wrap flag on
//! the last cell, underline colour, hyperlink with its id); a cell's empty
//! extra storage (left behind when alacritty clears a wide character) comes
//! back as none, which nothing distinguishes.
//!
//! A 120-column log line of 80 characters in four colours takes about 140
//! bytes here, against 2,880 as alacritty's cells (24 bytes each, every
//! column).

use alacritty_terminal::grid::Row;
use alacritty_terminal::term::cell::{Cell, Flags, Hyperlink};
use alacritty_terminal::vte::ansi::{Color, NamedColor, Rgb};

/// The flags kept per cell rather than per run.
const WIDE: Flags = Flags::WIDE_CHAR
    .union(Flags::WIDE_CHAR_SPACER)
    .union(Flags::LEADING_WIDE_CHAR_SPACER);

/// What a run carries beyond its style and characters.
const HAS_WIDE: u8 = 1;
const HAS_MARKS: u8 = 2;
const HAS_UNDERLINE_COLOR: u8 = 4;
const HAS_LINK: u8 = 8;

/// Appends `row` (its first `cols` cells) to `out`.
///
/// This runs for every line that scrolls off (a flood of log output is
/// hundreds of thousands of them), so it looks at each cell once or twice
/// and compares styles as small integers.
pub fn encode(row: &Row<Cell>, cols: usize, out: &mut Vec<u8>) {
    let cells = &row[..];
    let cells = &cells[..cols.min(cells.len())];
    // The cells past `occupied` are all alike: when the last is a fresh
    // blank, so are they all, and only the ones before need a look (a
    // blank row, which a full-screen redraw pushes by the screenful, costs
    // nothing to scan).
    let occupied = row.occupied().min(cells.len());
    let scan = match cells.last() {
        Some(last) if occupied < cells.len() && is_fresh(last) => &cells[..occupied],
        _ => cells,
    };
    let kept = scan
        .iter()
        .rposition(|cell| !is_fresh(cell))
        .map_or(0, |i| i + 1);
    let cells = &cells[..kept];
    put_varint(out, kept);
    let mut start = 0;
    while start < kept {
        let first = &cells[start];
        let mut end = start + 1;
        if first.extra.is_none() {
            let key = style_key(first);
            while end < kept && cells[end].extra.is_none() && style_key(&cells[end]) == key {
                end += 1;
            }
        } else {
            while end < kept && same_style(first, &cells[end]) {
                end += 1;
            }
        }
        encode_run(&cells[start..end], out);
        start = end;
    }
}

/// A cell as a fresh screen holds it (a space in the default colours, no
/// flags, nothing extra): what rows are padded with.
#[inline]
fn is_fresh(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.extra.is_none()
        && cell.flags.is_empty()
        && matches!(cell.fg, Color::Named(NamedColor::Foreground))
        && matches!(cell.bg, Color::Named(NamedColor::Background))
}

/// A colour as a number that tells colours apart.
#[inline]
fn color_key(color: Color) -> u64 {
    match color {
        Color::Named(named) => named as u64,
        Color::Indexed(i) => 0x1_0000 | u64::from(i),
        Color::Spec(Rgb { r, g, b }) => {
            0x100_0000 | (u64::from(r) << 16) | (u64::from(g) << 8) | u64::from(b)
        }
    }
}

/// A cell's colours and its flags but the wide ones, as one number (the
/// style of a cell with no extra storage).
#[inline]
fn style_key(cell: &Cell) -> (u64, u16) {
    (
        color_key(cell.fg) << 32 | color_key(cell.bg),
        (cell.flags - WIDE).bits(),
    )
}

/// `cells`, which share their style. One pass over them writes their
/// characters and notes what is rare (wide flags, marks), written after
/// them only when some cell has it.
fn encode_run(cells: &[Cell], out: &mut Vec<u8>) {
    let first = &cells[0];
    let (underline, link) = match first.extra {
        Some(_) => (first.underline_color(), first.hyperlink()),
        None => (None, None),
    };
    put_varint(out, cells.len());
    put_color(out, first.fg);
    put_color(out, first.bg);
    out.extend_from_slice(&(first.flags - WIDE).bits().to_le_bytes());
    let has_at = out.len();
    out.push(0);
    let mut has = 0;
    if let Some(color) = underline {
        has |= HAS_UNDERLINE_COLOR;
        put_color(out, color);
    }
    if let Some(link) = &link {
        has |= HAS_LINK;
        put_str(out, link.id());
        put_str(out, link.uri());
    }
    let mut buf = [0u8; 4];
    for cell in cells {
        if cell.c.is_ascii() {
            out.push(cell.c as u8);
        } else {
            out.extend_from_slice(cell.c.encode_utf8(&mut buf).as_bytes());
        }
        if cell.flags.intersects(WIDE) {
            has |= HAS_WIDE;
        }
        if cell.extra.is_some() && cell.zerowidth().is_some_and(|m| !m.is_empty()) {
            has |= HAS_MARKS;
        }
    }
    out[has_at] = has;
    if has & HAS_WIDE != 0 {
        // The three flags sit in one byte once shifted down.
        out.extend(cells.iter().map(|cell| wide_byte(cell.flags)));
    }
    if has & HAS_MARKS != 0 {
        let marked: Vec<(usize, &[char])> = cells
            .iter()
            .enumerate()
            .filter_map(|(i, cell)| Some((i, cell.zerowidth().filter(|m| !m.is_empty())?)))
            .collect();
        put_varint(out, marked.len());
        for (i, marks) in marked {
            put_varint(out, i);
            put_varint(out, marks.len());
            for mark in marks {
                out.extend_from_slice(mark.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
}

/// Whether two cells belong in one run.
fn same_style(a: &Cell, b: &Cell) -> bool {
    style_key(a) == style_key(b)
        && (a.extra.is_none() && b.extra.is_none()
            || (a.underline_color() == b.underline_color() && a.hyperlink() == b.hyperlink()))
}

fn wide_byte(flags: Flags) -> u8 {
    let mut byte = 0;
    if flags.contains(Flags::WIDE_CHAR) {
        byte |= 1;
    }
    if flags.contains(Flags::WIDE_CHAR_SPACER) {
        byte |= 2;
    }
    if flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
        byte |= 4;
    }
    byte
}

fn wide_flags(byte: u8) -> Flags {
    let mut flags = Flags::empty();
    if byte & 1 != 0 {
        flags |= Flags::WIDE_CHAR;
    }
    if byte & 2 != 0 {
        flags |= Flags::WIDE_CHAR_SPACER;
    }
    if byte & 4 != 0 {
        flags |= Flags::LEADING_WIDE_CHAR_SPACER;
    }
    flags
}

/// The row `bytes` hold, `cols` cells wide (cells past what was kept are
/// fresh blanks). `None` when the bytes are not a row this module wrote.
pub fn decode(bytes: &[u8], cols: usize) -> Option<Row<Cell>> {
    let mut r = Reader { bytes, at: 0 };
    let kept = r.varint()?;
    let mut cells: Vec<Cell> = Vec::with_capacity(cols.max(kept));
    while cells.len() < kept {
        let n = r.varint()?;
        let fg = r.color()?;
        let bg = r.color()?;
        let flags = Flags::from_bits_truncate(u16::from_le_bytes([r.byte()?, r.byte()?]));
        let has = r.byte()?;
        let underline = if has & HAS_UNDERLINE_COLOR != 0 {
            Some(r.color()?)
        } else {
            None
        };
        let link = if has & HAS_LINK != 0 {
            let id = r.str()?.to_string();
            Some(Hyperlink::new(Some(id), r.str()?.to_string()))
        } else {
            None
        };
        let first = cells.len();
        for _ in 0..n {
            let mut cell = Cell {
                c: r.char()?,
                fg,
                bg,
                flags,
                extra: None,
            };
            if underline.is_some() {
                cell.set_underline_color(underline);
            }
            if link.is_some() {
                cell.set_hyperlink(link.clone());
            }
            cells.push(cell);
        }
        if has & HAS_WIDE != 0 {
            for cell in &mut cells[first..] {
                cell.flags |= wide_flags(r.byte()?);
            }
        }
        if has & HAS_MARKS != 0 {
            for _ in 0..r.varint()? {
                let index = first + r.varint()?;
                let count = r.varint()?;
                for _ in 0..count {
                    let mark = r.char()?;
                    cells.get_mut(index)?.push_zerowidth(mark);
                }
            }
        }
    }
    if cells.len() != kept || r.at != bytes.len() {
        return None;
    }
    cells.truncate(cols);
    let occupied = cells.len();
    cells.resize_with(cols, Cell::default);
    Some(Row::from_vec(cells, occupied))
}

fn put_varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

/// A colour in four bytes: named (its number), indexed, or RGB.
fn put_color(out: &mut Vec<u8>, color: Color) {
    let bytes = match color {
        Color::Named(named) => {
            let [lo, hi] = (named as u16).to_le_bytes();
            [0, lo, hi, 0]
        }
        Color::Indexed(i) => [1, i, 0, 0],
        Color::Spec(Rgb { r, g, b }) => [2, r, g, b],
    };
    out.extend_from_slice(&bytes);
}

/// Every named colour, in the order of their numbers (0-15, then 256 on).
const NAMED: [NamedColor; 31] = [
    NamedColor::Black,
    NamedColor::Red,
    NamedColor::Green,
    NamedColor::Yellow,
    NamedColor::Blue,
    NamedColor::Magenta,
    NamedColor::Cyan,
    NamedColor::White,
    NamedColor::BrightBlack,
    NamedColor::BrightRed,
    NamedColor::BrightGreen,
    NamedColor::BrightYellow,
    NamedColor::BrightBlue,
    NamedColor::BrightMagenta,
    NamedColor::BrightCyan,
    NamedColor::BrightWhite,
    NamedColor::Foreground,
    NamedColor::Background,
    NamedColor::Cursor,
    NamedColor::DimBlack,
    NamedColor::DimRed,
    NamedColor::DimGreen,
    NamedColor::DimYellow,
    NamedColor::DimBlue,
    NamedColor::DimMagenta,
    NamedColor::DimCyan,
    NamedColor::DimWhite,
    NamedColor::BrightForeground,
    NamedColor::DimForeground,
    // Padding: never a colour's number (checked on decoding).
    NamedColor::Foreground,
    NamedColor::Foreground,
];

fn named(number: u16) -> Option<NamedColor> {
    let index = match number {
        0..=15 => usize::from(number),
        256..=268 => usize::from(number) - 240,
        _ => return None,
    };
    NAMED.get(index).copied().filter(|n| *n as u16 == number)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn varint(&mut self) -> Option<usize> {
        let mut n = 0usize;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= usize::from(b & 0x7f).checked_shl(shift)?;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    fn take(&mut self, len: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(len)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    fn str(&mut self) -> Option<&str> {
        let len = self.varint()?;
        std::str::from_utf8(self.take(len)?).ok()
    }

    fn char(&mut self) -> Option<char> {
        let lead = *self.bytes.get(self.at)?;
        if lead.is_ascii() {
            self.at += 1;
            return Some(char::from(lead));
        }
        let len = match lead {
            0x00..=0x7f => 1,
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            _ => 4,
        };
        std::str::from_utf8(self.take(len)?).ok()?.chars().next()
    }

    fn color(&mut self) -> Option<Color> {
        let [kind, a, b, c] = [self.byte()?, self.byte()?, self.byte()?, self.byte()?];
        match kind {
            0 => named(u16::from_le_bytes([a, b])).map(Color::Named),
            1 => Some(Color::Indexed(a)),
            2 => Some(Color::Spec(Rgb { r: a, g: b, b: c })),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alacritty_terminal::index::Column;

    fn round_trip(row: &Row<Cell>) -> Row<Cell> {
        let mut bytes = Vec::new();
        encode(row, row.len(), &mut bytes);
        decode(&bytes, row.len()).expect("a row")
    }

    /// Cells equal, but an empty extra counts as none.
    fn same(a: &Row<Cell>, b: &Row<Cell>) -> bool {
        let norm = |cell: &Cell| {
            let mut cell = cell.clone();
            let empty = cell.zerowidth().is_some_and(<[char]>::is_empty)
                && cell.underline_color().is_none()
                && cell.hyperlink().is_none();
            if empty {
                cell.extra = None;
            }
            cell
        };
        a.len() == b.len() && (0..a.len()).all(|c| norm(&a[Column(c)]) == norm(&b[Column(c)]))
    }

    #[test]
    fn every_named_colour_comes_back() {
        for n in NAMED.iter().take(29) {
            assert_eq!(named(*n as u16), Some(*n));
        }
        assert_eq!(named(16), None);
        assert_eq!(named(269), None);
    }

    #[test]
    fn a_blank_row_is_one_byte_and_a_styled_row_comes_back_whole() {
        let blank = Row::<Cell>::new(120);
        let mut bytes = Vec::new();
        encode(&blank, 120, &mut bytes);
        assert_eq!(bytes, [0]);
        assert!(same(&round_trip(&blank), &blank));

        let mut row = Row::<Cell>::new(20);
        for (i, c) in "hello wor".chars().enumerate() {
            row[Column(i)].c = c;
            row[Column(i)].fg = Color::Indexed(i as u8 % 3);
        }
        row[Column(3)].flags = Flags::BOLD | Flags::UNDERLINE;
        row[Column(3)].set_underline_color(Some(Color::Spec(Rgb { r: 1, g: 2, b: 3 })));
        row[Column(4)].set_hyperlink(Some(Hyperlink::new(Some("id"), "https://x".into())));
        row[Column(10)].c = '漢';
        row[Column(10)].flags = Flags::WIDE_CHAR;
        row[Column(11)].flags = Flags::WIDE_CHAR_SPACER;
        row[Column(12)].c = 'e';
        row[Column(12)].push_zerowidth('\u{301}');
        row[Column(12)].push_zerowidth('\u{302}');
        row[Column(13)].c = '\t';
        row[Column(14)].bg = Color::Named(NamedColor::DimRed);
        row[Column(18)].flags = Flags::LEADING_WIDE_CHAR_SPACER;
        row[Column(19)].flags = Flags::WRAPLINE;
        let back = round_trip(&row);
        assert!(same(&back, &row), "{back:?}");
        assert_eq!(
            back[Column(4)].hyperlink().map(|l| l.id().to_string()),
            Some("id".into())
        );
        // Narrower than the row: cut.
        let mut bytes = Vec::new();
        encode(&row, 20, &mut bytes);
        let cut = decode(&bytes, 5).expect("a row");
        assert_eq!(cut.len(), 5);
        assert_eq!(cut[Column(0)].c, 'h');
    }

    #[test]
    fn bytes_that_are_not_a_row_are_refused() {
        let mut row = Row::<Cell>::new(10);
        row[Column(2)].c = 'x';
        let mut bytes = Vec::new();
        encode(&row, 10, &mut bytes);
        for cut in 0..bytes.len() {
            assert!(decode(&bytes[..cut], 10).is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&longer, 10).is_none());
    }

    proptest::proptest! {
        /// Any row of any cells comes back as it was.
        #[test]
        fn any_row_comes_back(
            cells in proptest::collection::vec((
                proptest::prop_oneof![
                    proptest::prelude::Just(' '),
                    proptest::char::range('a', 'e'),
                    proptest::prelude::Just('漢'),
                    proptest::prelude::Just('\t'),
                ],
                0u8..4,
                0u16..0x7fff,
                0u8..3,
                0u8..4,
            ), 1..40),
        ) {
            let mut row = Row::<Cell>::new(cells.len());
            for (i, (c, color, flags, marks, extra)) in cells.iter().enumerate() {
                let cell = &mut row[Column(i)];
                cell.c = *c;
                cell.fg = match color {
                    0 => Color::Named(NamedColor::Foreground),
                    1 => Color::Indexed(200),
                    2 => Color::Spec(Rgb { r: 9, g: 8, b: 7 }),
                    _ => Color::Named(NamedColor::BrightCyan),
                };
                cell.flags = Flags::from_bits_truncate(*flags);
                for _ in 0..*marks {
                    cell.push_zerowidth('\u{300}');
                }
                match extra {
                    1 => cell.set_underline_color(Some(Color::Indexed(3))),
                    2 => cell.set_hyperlink(Some(Hyperlink::new(Some("a"), "b".into()))),
                    _ => {}
                }
            }
            let back = round_trip(&row);
            proptest::prop_assert!(same(&back, &row), "{:?}", back);
        }
    }
}
