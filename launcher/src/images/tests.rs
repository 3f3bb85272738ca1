//! The images kept on a real emulator's screen: where they go, when they
//! are dropped, what the program sees.

use super::Images;
use crate::emulator::Emulator;
use std::sync::{Arc, Mutex};

/// What the emulator and the images answered the program.
#[derive(Clone, Default)]
struct Answers(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Answers {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Screen {
    emu: Emulator,
    images: Images,
    answers: Answers,
}

impl Screen {
    fn new(rows: usize, cols: usize, history: usize) -> Self {
        let answers = Answers::default();
        Screen {
            emu: Emulator::new(rows, cols, history, Box::new(answers.clone())),
            images: Images::new(32 << 20),
            answers,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        let mut answers = self.answers.clone();
        self.images.feed(bytes, &mut self.emu, &mut answers);
    }

    /// (index, row, col, rows, cols) of each placement.
    fn placed(&mut self) -> Vec<(u32, i64, u16, u16, u16)> {
        self.images.kept.refresh(&self.emu, false);
        self.images
            .kept
            .placements(self.emu.alt_screen())
            .iter()
            .map(|p| (p.index, p.row, p.col, p.rows, p.cols))
            .collect()
    }

    fn answered(&self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut *self.answers.0.lock().unwrap())).into_owned()
    }
}

/// A sixel of `w` x `h` pixels (h a multiple of 6).
fn sixel(w: u32, h: u32) -> Vec<u8> {
    let bands = vec![format!("!{w}~"); (h / 6) as usize].join("-");
    format!("\x1bPq\"1;1;{w};{h}#0;2;100;0;0#0{bands}\x1b\\").into_bytes()
}

/// A kitty transmission of `w` x `h` RGBA pixels in chunks of 4096
/// base64 characters, as chafa sends it (each chunk padded on its own,
/// stray bits after the last byte), with `keys` on the first chunk.
fn kitty_chunked(w: u32, h: u32, keys: &str) -> Vec<u8> {
    use base64::Engine;
    let pixels = vec![0xffu8; (w * h * 4) as usize];
    let mut out = format!("\x1b_Ga=T,f=32,s={w},v={h},{keys}m=1\x1b\\").into_bytes();
    for chunk in pixels.chunks(3072) {
        let text = base64::engine::general_purpose::STANDARD.encode(chunk);
        out.extend_from_slice(format!("\x1b_Gm=1;{text}\x1b\\").as_bytes());
    }
    out.extend_from_slice(b"\x1b_Gm=0\x1b\\");
    out
}

#[test]
fn a_sixel_is_placed_at_the_cursor_and_text_goes_below_it() {
    let mut s = Screen::new(24, 80, 100);
    s.feed(b"before\r\n  ");
    s.feed(&sixel(100, 60));
    s.feed(b"after");
    // 100x60 pixels in 10x20 cells: 10 columns, 3 rows, at row 1, col 2.
    assert_eq!(s.placed(), vec![(1, 1, 2, 3, 10)]);
    let text = s.emu.text(0);
    assert_eq!(text.lines, vec!["before", "", "", "", "after"]);
    assert_eq!((text.cursor_row, text.cursor_col), (4, 5));
    assert_eq!(s.images.kept.bytes(), sixel(100, 60).len() as u64);
}

#[test]
fn any_chunking_of_the_output_places_the_same_images() {
    let mut bytes = b"x\r\n".to_vec();
    bytes.extend(sixel(30, 12));
    bytes.extend(kitty_chunked(20, 40, "c=4,r=2,"));
    bytes.extend(b"\r\nend");
    let mut whole = Screen::new(24, 80, 100);
    whole.feed(&bytes);
    let mut bytewise = Screen::new(24, 80, 100);
    for b in &bytes {
        bytewise.feed(std::slice::from_ref(b));
    }
    assert_eq!(whole.placed().len(), 2);
    assert_eq!(whole.placed(), bytewise.placed());
    assert_eq!(whole.emu.text(0), bytewise.emu.text(0));
}

#[test]
fn images_move_with_scrolling_and_go_past_the_history() {
    let mut s = Screen::new(10, 40, 5);
    s.feed(b"\x1b[4;1H");
    s.feed(&sixel(20, 36)); // 2 columns, 2 rows, at row 3
    assert_eq!(s.placed(), vec![(1, 3, 0, 2, 2)]);
    s.feed(b"\x1b[10;1H\r\n\r\n\r\n\r\n\r\n");
    assert_eq!(s.placed(), vec![(1, -2, 0, 2, 2)], "in the history");
    // The history keeps 5 lines: at -5 it is whole, a row more and its
    // top row is gone.
    s.feed(b"\r\n\r\n\r\n");
    assert_eq!(s.placed(), vec![(1, -5, 0, 2, 2)]);
    s.feed(b"\r\n");
    assert_eq!(s.placed(), vec![], "scrolled past the history");
}

#[test]
fn images_in_a_scroll_region_move_with_it() {
    let mut s = Screen::new(10, 40, 100);
    s.feed(b"\x1b[5;1H");
    s.feed(&sixel(10, 18)); // 1 cell, rows 4..
    s.feed(b"\x1b[2;9r\x1b[9;1H\n\n\x1b[r");
    assert_eq!(s.placed(), vec![(1, 2, 0, 1, 1)]);
}

#[test]
fn writing_over_or_clearing_an_image_drops_it() {
    let mut s = Screen::new(24, 80, 100);
    s.feed(&sixel(40, 40));
    assert_eq!(s.placed().len(), 1);
    s.feed(b"\x1b[2;2Hx");
    assert_eq!(s.placed(), vec![], "a cell written over");
    s.feed(b"\x1b[H");
    s.feed(&sixel(40, 40));
    // Clearing the screen scrolls it into the history first (alacritty,
    // and tmux's scroll-on-clear): the image goes with its rows; clearing
    // the history drops it.
    s.feed(b"\x1b[2J");
    assert_eq!(s.placed(), vec![(2, -2, 0, 2, 4)], "the screen cleared");
    s.feed(b"\x1b[3J");
    assert_eq!(s.placed(), vec![], "the history cleared");
    s.feed(b"\x1b[H");
    s.feed(&sixel(40, 40));
    s.feed(b"\x1b[1;1H\x1b[K");
    assert_eq!(s.placed(), vec![], "a row erased");
}

#[test]
fn an_image_survives_resizes() {
    let mut s = Screen::new(24, 80, 100);
    s.feed(b"\r\n");
    s.feed(&sixel(100, 60));
    s.emu.resize(30, 120);
    s.images.kept.refresh(&s.emu, true);
    assert_eq!(
        s.placed(),
        vec![(2, 1, 0, 3, 10)]
            .into_iter()
            .map(|p| (1, p.1, p.2, p.3, p.4))
            .collect::<Vec<_>>()
    );
    s.emu.resize(20, 60);
    s.images.kept.refresh(&s.emu, true);
    assert_eq!(s.placed().len(), 1, "narrower, still wider than the image");
}

#[test]
fn the_normal_screens_images_wait_behind_the_alternate_screen() {
    let mut s = Screen::new(24, 80, 100);
    s.feed(&sixel(20, 20));
    s.feed(b"\x1b[?1049h");
    assert_eq!(s.placed(), vec![], "not on the alternate screen");
    // The cursor stays where it was, below the first image.
    s.feed(&kitty_chunked(10, 20, ""));
    assert_eq!(s.placed(), vec![(2, 1, 0, 1, 1)]);
    s.feed(b"\x1b[?1049l");
    assert_eq!(
        s.placed(),
        vec![(1, 0, 0, 1, 2)],
        "back, and the alternate's gone"
    );
}

#[test]
fn kitty_moves_the_cursor_as_c_says() {
    let mut s = Screen::new(24, 80, 100);
    s.feed(b"ab");
    s.feed(&kitty_chunked(20, 40, "c=4,r=2,"));
    let text = s.emu.text(0);
    assert_eq!(
        (text.cursor_row, text.cursor_col),
        (1, 6),
        "after the image, on its last row"
    );
    s.feed(b"\r\n\r\n");
    s.feed(&kitty_chunked(20, 40, "C=1,"));
    let text = s.emu.text(0);
    assert_eq!((text.cursor_row, text.cursor_col), (3, 0), "C=1: stays");
    assert_eq!(s.placed(), vec![(1, 0, 2, 2, 4), (2, 3, 0, 2, 2)]);
}

#[test]
fn kitty_ids_are_answered_placed_again_and_deleted() {
    use base64::Engine;
    let mut s = Screen::new(24, 80, 100);
    let rgb = base64::engine::general_purpose::STANDARD.encode([1u8; 2 * 2 * 3]);
    // a=q: answered, nothing kept.
    s.feed(format!("\x1b_Ga=q,i=31,f=24,s=2,v=2;{rgb}\x1b\\").as_bytes());
    assert_eq!(s.answered(), "\x1b_Gi=31;OK\x1b\\");
    assert_eq!(s.images.kept.bytes(), 0);
    // Transmit, then show twice.
    s.feed(format!("\x1b_Ga=t,i=5,f=24,s=2,v=2;{rgb}\x1b\\").as_bytes());
    assert_eq!(s.answered(), "\x1b_Gi=5;OK\x1b\\");
    assert_eq!(s.placed(), vec![]);
    s.feed(b"\x1b_Ga=p,i=5,q=1\x1b\\\r\n\x1b_Ga=p,i=5,p=2\x1b\\");
    assert_eq!(s.answered(), "\x1b_Gi=5,p=2;OK\x1b\\");
    assert_eq!(s.placed().len(), 2);
    assert_eq!(s.images.kept.bytes(), 12, "one image, shown twice");
    s.feed(b"\x1b_Ga=d,d=i,i=5,p=2\x1b\\");
    assert_eq!(s.placed().len(), 1);
    s.feed(b"\x1b_Ga=d,d=A\x1b\\");
    assert_eq!(s.placed(), vec![]);
    assert_eq!(s.images.kept.bytes(), 0, "freed");
    s.feed(b"\x1b_Ga=p,i=5\x1b\\");
    assert!(s.answered().starts_with("\x1b_Gi=5;ENOENT:"));
}

#[test]
fn kitty_files_and_shared_memory_are_refused() {
    let mut s = Screen::new(24, 80, 100);
    for medium in ["f", "t", "s"] {
        s.feed(format!("\x1b_Ga=T,t={medium},i=9,f=100;L3RtcC94LnBuZw==\x1b\\").as_bytes());
        assert!(
            s.answered().starts_with("\x1b_Gi=9;ENOTSUPPORTED:"),
            "t={medium}"
        );
    }
    assert_eq!(s.placed(), vec![]);
    // Short data: refused as kitty does.
    s.feed(b"\x1b_Ga=T,i=3,f=32,s=10,v=10;AAAA\x1b\\");
    assert!(s.answered().starts_with("\x1b_Gi=3;ENODATA:"));
}

#[test]
fn past_the_bound_the_oldest_images_go_and_it_is_said() {
    // History for all 300 (3 rows each): only the bound drops them.
    let mut s = Screen::new(24, 80, 1000);
    s.images = Images::new(10_000);
    let one = sixel(60, 60).len() as u64;
    for _ in 0..300 {
        s.feed(&sixel(60, 60));
        assert!(s.images.kept.bytes() <= 10_000);
    }
    let kept = s.placed();
    assert_eq!(kept.len() as u64, (10_000 / one).min(300));
    assert_eq!(kept.last().map(|p| p.0), Some(300), "the newest stay");
    let dropped = s.images.kept.take_dropped().expect("told");
    assert_eq!(dropped.images, 300 - kept.len() as u64);
    assert_eq!(dropped.bytes, dropped.images * one);
    assert_eq!(s.images.kept.take_dropped(), None, "told once");
    // One larger than the bound is not kept at all.
    s.feed(format!("\x1bPq{}\x1b\\", "~".repeat(20_000)).as_bytes());
    assert_eq!(s.images.kept.take_dropped().expect("told").too_large, 1);
}
