//! Images a program drew, shown by `tickloop attach` (issue 52, item 2):
//! the real `tickloop attach` runs in a `script` terminal whose other end
//! is this test, which plays the view's terminal: it answers the view's
//! questions as a sixel terminal (xterm in vt340 mode), a kitty terminal
//! or a terminal that draws neither would, and reads what the view writes.
//! The programs that draw are Debian's `img2sixel` (libsixel-bin) and
//! `chafa`.

mod common;

use common::script_term::ScriptTerm;
use common::*;
use std::path::{Path, PathBuf};
use view_monitor::graphics::{kitty, sixel, Rgba};

/// The test image: a red left half, a blue right half, 320x120 pixels
/// (32x6 cells of 10x20 pixels).
const W: u32 = 320;
const H: u32 = 120;

fn test_image() -> Rgba {
    let pixels = (0..W * H)
        .flat_map(|i| {
            if i % W < W / 2 {
                [255, 0, 0, 255]
            } else {
                [0, 0, 255, 255]
            }
        })
        .collect();
    Rgba::new(W, H, pixels).expect("a whole image")
}

/// Writes the test image as a PNG in `dir`.
fn write_png(dir: &Path) -> PathBuf {
    let path = dir.join("halves.png");
    image::RgbaImage::from_raw(W, H, test_image().pixels)
        .expect("a whole image")
        .save(&path)
        .expect("writing the PNG");
    path
}

/// Opens `shell:ID`, which runs `draw` (a command that draws the PNG, `{}`
/// in it), says `drawn` and waits.
fn open_drawing(host: &Host, id: &str, draw: &str) {
    let png = write_png(host.scratch());
    let line = format!(
        "{}; echo drawn; exec cat",
        draw.replace("{}", &png.to_string_lossy())
    );
    host.ok(&["open", "--shell", "--id", id, "--", "sh", "-c", &line]);
    host.wait_screen(&format!("shell:{id}"), "drawn");
}

/// The device attributes query: the last of the view's questions.
const DA1_QUERY: &[u8] = b"\x1b[c";
const CELL_10X20: &[u8] = b"\x1b[6;20;10t";
/// xterm -ti vt340: sixel (4) among its attributes.
const SIXEL_TERMINAL: &[u8] = b"\x1b[?63;1;2;4;6;9;15;22c";
/// kitty: no sixel; its graphics query answered OK.
const KITTY_TERMINAL: &[u8] = b"\x1b_Gi=31;OK\x1b\\";
const PLAIN_DA1: &[u8] = b"\x1b[?62;22c";

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Where the `n`th (from 1) device attributes query ends in `bytes`.
fn nth_query_end(bytes: &[u8], n: usize) -> Option<usize> {
    let mut from = 0;
    for _ in 0..n {
        from += find(&bytes[from..], DA1_QUERY)? + DA1_QUERY.len();
    }
    Some(from)
}

/// `tickloop attach ID`, twice in a row (the second after the first
/// detaches), in a script terminal of 80x24.
fn attach_twice(host: &Host, id: &str) -> ScriptTerm {
    let bin = tickloop_bin();
    ScriptTerm::start(
        host,
        &[],
        80,
        24,
        &format!("trap '' QUIT INT; {bin} attach {id}; {bin} attach {id}"),
    )
}

/// Waits for the view's `n`th round of questions and answers them with
/// `answers`; where the view's writing after them starts.
fn answer(term: &mut ScriptTerm, n: usize, answers: &[u8]) -> usize {
    let at = term.wait_bytes(&format!("attach's questions, round {n}"), |b| {
        nth_query_end(b, n)
    });
    term.type_text(&String::from_utf8_lossy(answers));
    at
}

/// The first sixel (`ESC P … q … ESC \`) written from `from` on, and the
/// bytes just before it.
fn sixel_after(bytes: &[u8], from: usize) -> Option<(Vec<u8>, Vec<u8>)> {
    let rest = &bytes[from..];
    let start = find(rest, b"\x1bP")?;
    let end = start + find(&rest[start..], b"\x1b\\")? + 2;
    let body = &rest[start..end];
    body.contains(&b'q').then(|| {
        (
            rest[start.saturating_sub(16)..start].to_vec(),
            body.to_vec(),
        )
    })
}

/// The first kitty image transmitted (`ESC _ G a=T …` and its chunks, to
/// the one with `m=0`) from `from` on.
fn kitty_after(bytes: &[u8], from: usize) -> Option<Vec<u8>> {
    let rest = &bytes[from..];
    let start = find(rest, b"\x1b_Ga=T")?;
    let mut end = start;
    loop {
        let close = end + find(&rest[end..], b"\x1b\\")? + 2;
        let command = &rest[end..close];
        end = close;
        if find(command, b"m=0").is_some() || find(command, b"m=").is_none() {
            return Some(rest[start..end].to_vec());
        }
    }
}

fn detach(term: &mut ScriptTerm) {
    term.type_text("\x1cd");
}

fn assert_halves(image: &Rgba) {
    assert_eq!((image.width, image.height), (W, H));
    let at = |x: u32, y: u32| {
        let i = ((y * W + x) * 4) as usize;
        image.pixels[i..i + 4].to_vec()
    };
    // img2sixel keeps 97% of a full channel (sixel colours are percent).
    let (red, blue) = (at(0, 0), at(W - 1, H - 1));
    assert!(
        red[0] > 200 && red[2] < 60 && red[3] == 255,
        "the left half is red: {red:?}"
    );
    assert!(
        blue[2] > 200 && blue[0] < 60 && blue[3] == 255,
        "the right half is blue: {blue:?}"
    );
}

#[test]
fn a_sixel_terminal_gets_the_sixel_on_the_first_attach_and_again_on_a_second() {
    let host = Host::new();
    open_drawing(&host, "six", "img2sixel {}");
    let mut term = attach_twice(&host, "shell:six");
    let reply = [CELL_10X20, SIXEL_TERMINAL].concat();
    for round in 1..=2 {
        let from = answer(&mut term, round, &reply);
        let (before, image) = term.wait_bytes(&format!("a sixel after attach {round}"), |b| {
            sixel_after(b, from)
        });
        // At its cell, the cursor saved and restored around it.
        assert!(
            before.ends_with(b"\x1b7\x1b[1;1H"),
            "attach {round}: before the image: {before:?}"
        );
        assert_halves(&sixel::decode(&image).expect("the sixel decodes"));
        detach(&mut term);
    }
    let (code, _) = term.finish();
    assert_eq!(code, 0);
}

#[test]
fn a_kitty_terminal_gets_the_image_in_the_kitty_protocol() {
    let host = Host::new();
    open_drawing(&host, "kit", "img2sixel {}");
    let mut term = attach_twice(&host, "shell:kit");
    let from = answer(
        &mut term,
        1,
        &[KITTY_TERMINAL, CELL_10X20, PLAIN_DA1].concat(),
    );
    let image = term.wait_bytes("a kitty image", |b| kitty_after(b, from));
    assert_halves(&kitty::decode(&image).expect("the kitty image decodes"));
    let after = term.bytes()[from..].to_vec();
    assert!(
        sixel_after(&after, 0).is_none(),
        "a kitty terminal got a sixel too"
    );
    detach(&mut term);
    answer(&mut term, 2, &[KITTY_TERMINAL, PLAIN_DA1].concat());
    detach(&mut term);
    term.finish();
}

#[test]
fn a_kitty_image_from_chafa_reaches_a_sixel_terminal_as_sixel() {
    let host = Host::new();
    // chafa -f kitty sends the image's pixels, scaled by chafa to the
    // cells it asks for (--size in cells).
    open_drawing(&host, "chafa", "chafa -f kitty --size 32x6 {}");
    let mut term = attach_twice(&host, "shell:chafa");
    let from = answer(&mut term, 1, &[CELL_10X20, SIXEL_TERMINAL].concat());
    let (_, image) = term.wait_bytes("a sixel", |b| sixel_after(b, from));
    let image = sixel::decode(&image).expect("the sixel decodes");
    // Drawn at the image's cells at this terminal's cell size.
    assert_eq!(image.width % 10, 0, "{}x{}", image.width, image.height);
    assert_eq!(image.height % 20, 0, "{}x{}", image.width, image.height);
    let left = &image.pixels[0..4];
    assert!(left[0] > 200 && left[2] < 60, "red at the left: {left:?}");
    detach(&mut term);
    answer(&mut term, 2, PLAIN_DA1);
    detach(&mut term);
    term.finish();
}

#[test]
fn a_terminal_that_draws_neither_gets_no_image_bytes_and_a_marked_box() {
    let host = Host::new();
    open_drawing(&host, "none", "img2sixel {}");
    let mut term = attach_twice(&host, "shell:none");
    let from = answer(&mut term, 1, PLAIN_DA1);
    term.wait_text("[image 320×120 sixel]");
    // What it drew after the answer: the screen, the box, no image.
    term.wait_text("drawn");
    let after = term.bytes()[from..].to_vec();
    assert!(find(&after, b"\x1bP").is_none(), "a DCS was written");
    assert!(
        find(&after, b"\x1b_G").is_none(),
        "a kitty command was written"
    );
    detach(&mut term);
    answer(&mut term, 2, PLAIN_DA1);
    detach(&mut term);
    term.finish();
}

/// A process killed when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Xvfb on a display it picks itself (`-displayfd`); the display's name.
fn start_xvfb() -> (Killed, String) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "800x600x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting Xvfb (Debian's xvfb; .ci/run installs it)");
    let stdout = child.stdout.take().expect("Xvfb's stdout");
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .expect("reading Xvfb's display number");
    let display = format!(":{}", line.trim());
    assert!(display.len() > 1, "Xvfb told no display number");
    (Killed(child), display)
}

/// The whole X screen of `display`, with ImageMagick's `import`.
fn screenshot(display: &str) -> Option<(Rgba, Vec<u8>)> {
    let out = std::process::Command::new("import")
        .args(["-display", display, "-window", "root", "png:-"])
        .output()
        .expect("running import (Debian's imagemagick; .ci/run installs it)");
    if !out.status.success() {
        return None;
    }
    let image = kitty::png_to_rgba(&out.stdout).ok()?;
    Some((image, out.stdout))
}

/// The bounding box (left, top, right, bottom; inclusive) of the pixels
/// that `is` picks.
fn bounds(image: &Rgba, is: impl Fn(&[u8]) -> bool) -> Option<(u32, u32, u32, u32)> {
    let mut found: Option<(u32, u32, u32, u32)> = None;
    for (i, p) in image.pixels.chunks_exact(4).enumerate() {
        if is(p) {
            let (x, y) = (i as u32 % image.width, i as u32 / image.width);
            found = Some(match found {
                None => (x, y, x, y),
                Some((l, t, r, b)) => (l.min(x), t.min(y), r.max(x), b.max(y)),
            });
        }
    }
    found
}

#[test]
fn xterm_in_vt340_mode_shows_the_sixel_through_attach() {
    let host = Host::new();
    open_drawing(&host, "xt", "img2sixel {}");
    let (_xvfb, display) = start_xvfb();
    let attach = format!("{} attach shell:xt", tickloop_bin());
    let mut xterm = std::process::Command::new("xterm");
    for (key, value) in host.command(&[]).get_envs() {
        match value {
            Some(value) => xterm.env(key, value),
            None => xterm.env_remove(key),
        };
    }
    let _xterm = Killed(
        xterm
            .env("DISPLAY", &display)
            .args(["-ti", "vt340", "-xrm", "XTerm*decTerminalID: vt340"])
            .args(["-xrm", "XTerm*numColorRegisters: 256"])
            .args(["-geometry", "80x24+0+0", "-e", "sh", "-c", &attach])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting xterm (Debian's xterm; .ci/run installs it)"),
    );
    let red = |p: &[u8]| p[0] > 200 && p[1] < 60 && p[2] < 60;
    let blue = |p: &[u8]| p[2] > 200 && p[0] < 60 && p[1] < 60;
    let (shot, png) = wait_for("xterm to show the image's red and blue halves", || {
        let (shot, png) = screenshot(&display)?;
        (bounds(&shot, red).is_some() && bounds(&shot, blue).is_some()).then_some((shot, png))
    });
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("images-shown");
    std::fs::create_dir_all(&dir).expect("the screenshots' directory");
    let saved = dir.join("xterm-vt340-attach.png");
    std::fs::write(&saved, png).expect("saving the screenshot");
    eprintln!("screenshot: {}", saved.display());
    let (rl, rt, rr, rb) = bounds(&shot, red).expect("red");
    let (bl, bt, br, bb) = bounds(&shot, blue).expect("blue");
    // Two halves side by side, the same height, the red one on the left,
    // each a solid block (every pixel of its box is its colour).
    assert_eq!((rt, rb), (bt, bb), "the halves' rows, red and blue");
    assert!(
        rr < bl && bl - rr <= 1,
        "red ends where blue starts: {rr} {bl}"
    );
    assert!(rr - rl >= 20 && rb - rt >= 10, "a block, not a speck");
    assert!((br - bl).abs_diff(rr - rl) <= 1, "halves of the same width");
    for y in rt..=rb {
        for x in rl..=br {
            let i = ((y * shot.width + x) * 4) as usize;
            let p = &shot.pixels[i..i + 4];
            assert!(red(p) || blue(p), "a hole in the image at {x},{y}: {p:?}");
        }
    }
}

#[test]
fn an_image_the_program_clears_is_cleared_from_a_sixel_terminal_too() {
    let host = Host::new();
    // Draws, then clears the screen when a line is typed.
    let png = write_png(host.scratch());
    let line = format!(
        "img2sixel {}; echo waiting; read line; clear; echo cleared; exec cat",
        png.display()
    );
    host.ok(&["open", "--shell", "--id", "clr", "--", "sh", "-c", &line]);
    host.wait_screen("shell:clr", "waiting");
    let mut term = attach_twice(&host, "shell:clr");
    let from = answer(&mut term, 1, &[CELL_10X20, SIXEL_TERMINAL].concat());
    term.wait_bytes("the sixel", |b| sixel_after(b, from));
    host.ok(&["input", "shell:clr", "\r"]);
    term.wait_text("cleared");
    // The sixel terminal keeps an image's pixels until its cells are
    // written: the view cleared its screen once the image was gone.
    let screen = term.wait_bytes("the view to clear its screen", |b| {
        let image_end = from + find(&b[from..], b"\x1bP")?;
        // From the clear on (the image may have been drawn more than once
        // before it: at the list, again at its bytes).
        find(&b[image_end..], b"\x1b[2J").map(|at| b[image_end + at..].to_vec())
    });
    assert!(
        sixel_after(&screen, 0).is_none(),
        "the image was drawn again after the program cleared it"
    );
    detach(&mut term);
    answer(&mut term, 2, PLAIN_DA1);
    detach(&mut term);
    term.finish();
}
