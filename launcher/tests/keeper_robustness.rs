//! The screen keeper under any bytes and any resize (issue 11): arbitrary
//! byte streams, laced with the escape sequences that broke emulators
//! before (images, huge OSC strings, wide characters at the margin,
//! scroll regions, the alternate screen), interleaved with resizes in both
//! directions. Never a panic; the screen always has its size, the cursor is
//! on it, and history never passes its limit.

use launcher::emulator::Emulator;
use proptest::prelude::*;

/// Pieces that are more likely than random bytes to reach deep code paths.
const FRAGMENTS: &[&[u8]] = &[
    b"\x1bPq#0;2;0;0;0#1~~@@vv@@~~$-\x1b\\",
    b"\x1b_Gf=24,s=1,v=1;AAAA\x1b\\",
    b"\x1b]1337;File=inline=1:AAAA\x07",
    b"\x1b]8;;http://example.invalid\x1b\\link\x1b]8;;\x1b\\",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[2;5r",
    b"\x1b[r",
    b"\x1b[99;99H",
    b"\x1b[4:3m\x1b[58;2;1;2;3m",
    "漢字👍🏽❤️e\u{301}".as_bytes(),
    b"\x1b[?2026h",
    b"\x1b[?2026l",
    b"\x1b[5@\x1b[3P\x1b[2L\x1b[2M\x1b[10b",
    b"\x1b#8",
    b"\r\n",
    b"\x1b]0;title\x07",
    b"\x1b[6n\x1b[c\x1b]11;?\x07\x1b[14t",
];

#[derive(Debug, Clone)]
enum Op {
    Feed(Vec<u8>),
    Resize(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => proptest::collection::vec(any::<u8>(), 0..600).prop_map(Op::Feed),
        4 => proptest::collection::vec(0..FRAGMENTS.len(), 1..12)
            .prop_map(|picks| Op::Feed(picks.iter().flat_map(|&i| FRAGMENTS[i].to_vec()).collect())),
        1 => (2usize..220, 1usize..70).prop_map(|(c, r)| Op::Resize(c, r)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_and_keeps_its_shape(ops in proptest::collection::vec(op(), 1..24), history in 0usize..50) {
        let mut emu = Emulator::new(24, 80, history, Box::new(std::io::sink()));
        let (mut cols, mut rows) = (80usize, 24usize);
        for op in ops {
            match op {
                Op::Feed(bytes) => emu.feed(&bytes),
                Op::Resize(c, r) => {
                    emu.resize(r, c);
                    (cols, rows) = (c, r);
                }
            }
            let snap = emu.snapshot();
            prop_assert_eq!((usize::from(snap.cols), usize::from(snap.rows)), (cols, rows));
            prop_assert_eq!(snap.lines.len(), rows);
            prop_assert!(usize::from(snap.cursor.x) < cols && usize::from(snap.cursor.y) < rows);
            for line in &snap.lines {
                // A cell holds its character and at most MAX_MARKS marks.
                let most = cols * (1 + launcher::emulator::MAX_MARKS);
                prop_assert!(line.text().chars().count() <= most, "{:?}", line.text());
            }
            let text = emu.text(usize::MAX);
            prop_assert!(text.history.len() <= history);
            prop_assert!(emu.footprint().history_len <= history);
            let back = emu.snapshot_scrolled(usize::MAX);
            prop_assert_eq!(back.lines.len(), rows);
        }
    }
}

#[test]
fn a_long_stream_of_random_bytes_keeps_memory_bounded() {
    // 8 MiB of xorshift bytes with the image and OSC fragments mixed in:
    // what the keeper holds is the screen and at most its history.
    let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
    let mut state = 0x7469636b_u64;
    let mut chunk = vec![0u8; 64 * 1024];
    for round in 0..128 {
        for b in chunk.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *b = state as u8;
        }
        emu.feed(&chunk);
        emu.feed(FRAGMENTS[round % FRAGMENTS.len()]);
    }
    emu.feed(b"\x18\x1b\\\x1bcafter");
    let footprint = emu.footprint();
    assert!(footprint.history_len <= 2000);
    // Screen plus a full history at 120 columns, both grids, 24 bytes a cell.
    assert!(
        footprint.cell_bytes <= (2000 + 60) * 120 * 32,
        "{footprint:?}"
    );
    assert_eq!(emu.text(0).lines.first().map(String::as_str), Some("after"));
}
