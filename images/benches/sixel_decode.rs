//! Which sixel decoder makes `screen --image N`'s PNG (issue 52): the pure
//! Rust `icy_sixel` in the process, against libsixel (the C library that
//! `sixel-rs` binds; measured here through Debian's `sixel2png`, its own
//! decoder, whose time includes starting a process). Both decode the same
//! sixels, made by libsixel's own encoder (`img2sixel`) from pictures of a
//! chart-like size; the figures are the time per decode and whether the
//! pixels agree.
//!
//! Run: `cargo bench -p tickloop-images --bench sixel_decode` (needs
//! img2sixel and sixel2png: `apt-get install libsixel-bin`; the last line
//! is JSON).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Instant;

fn picture(width: u32, height: u32) -> Vec<u8> {
    let image = image::RgbImage::from_fn(width, height, |x, y| {
        // A chart-like picture: bands of colour with some noise.
        let v = ((x * 7919) ^ (y * 104_729)) as u8 / 8;
        image::Rgb([
            (x * 255 / width) as u8 ^ v,
            (y * 255 / height) as u8,
            128 ^ v,
        ])
    });
    let mut png = Vec::new();
    image::DynamicImage::ImageRgb8(image)
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .expect("encode the picture");
    png
}

fn run_with_stdin(program: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{program}: {e} (apt-get install libsixel-bin)"));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{program} failed");
    out.stdout
}

fn main() {
    let mut json = Vec::new();
    for (w, h) in [(320u32, 240u32), (800, 600)] {
        let sixel = run_with_stdin("img2sixel", &[], &picture(w, h));
        let rounds = 20;
        let started = Instant::now();
        let mut ours = None;
        for _ in 0..rounds {
            ours = Some(icy_sixel::SixelImage::decode(&sixel).expect("icy_sixel decodes"));
        }
        let icy = started.elapsed().as_secs_f64() / f64::from(rounds) * 1e3;
        let started = Instant::now();
        let mut theirs = Vec::new();
        for _ in 0..rounds {
            theirs = run_with_stdin("sixel2png", &[], &sixel);
        }
        let libsixel = started.elapsed().as_secs_f64() / f64::from(rounds) * 1e3;
        let ours = ours.expect("decoded");
        let theirs = image::load_from_memory(&theirs)
            .expect("sixel2png wrote a PNG")
            .to_rgba8();
        let same_size = (ours.width as u32, ours.height as u32) == theirs.dimensions();
        let agree = if same_size {
            let pixels = ours.pixels.chunks(4).zip(theirs.pixels());
            let total = (ours.width * ours.height) as f64;
            pixels.filter(|(a, b)| a[..3] == b.0[..3]).count() as f64 / total * 100.0
        } else {
            0.0
        };
        println!(
            "{w}x{h} ({} bytes of sixel): icy_sixel {icy:.2} ms, sixel2png {libsixel:.2} ms (a process each); sizes {} ({}x{} / {}x{}), {agree:.1} % of pixels the same",
            sixel.len(),
            if same_size { "agree" } else { "DIFFER" },
            ours.width,
            ours.height,
            theirs.width(),
            theirs.height(),
        );
        json.push(format!(
            "{{\"size\":\"{w}x{h}\",\"sixel_bytes\":{},\"icy_sixel_ms\":{icy:.3},\"sixel2png_ms\":{libsixel:.3},\"same_size\":{same_size},\"same_pixels_pct\":{agree:.1}}}",
            sixel.len()
        ));
    }
    println!("[{}]", json.join(","));
}
