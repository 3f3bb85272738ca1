//! The cost of showing a kept image in a view (issue 52): what
//! `view_monitor::graphics` spends converting one image for a terminal
//! (sixel encoded from RGBA, sixel and kitty PNG decoded, the kitty
//! commands made), on a chart (few colours) and a photo-like gradient (every
//! colour), 640x480; and, for scale, Debian's `img2sixel` (libsixel) on the
//! same PNG when it is installed (a process each, so its start is counted).
//!
//! `cargo bench --bench image_codecs`; prints one Markdown table.

use std::time::{Duration, Instant};
use tickloop_proto::wire::{ImageData, ImageEncoding, ImageFormat, ImagePlacement};
use view_monitor::graphics::{kitty, sixel, KittyPixels, Rgba};

const W: u32 = 640;
const H: u32 = 480;

fn chart() -> Rgba {
    let pixels = (0..W * H)
        .flat_map(|i| {
            let (x, y) = (i % W, i / W);
            let bar = (x / 80) % 4;
            let height = 100 + bar * 80;
            if H - y < height && x % 80 > 10 {
                [
                    [220, 50, 47, 255],
                    [38, 139, 210, 255],
                    [133, 153, 0, 255],
                    [211, 54, 130, 255],
                ][bar as usize]
            } else if y % 60 == 0 {
                [200, 200, 200, 255]
            } else {
                [255, 255, 255, 255]
            }
        })
        .collect();
    Rgba::new(W, H, pixels).expect("a whole image")
}

fn photo() -> Rgba {
    let pixels = (0..W * H)
        .flat_map(|i| {
            let (x, y) = (i % W, i / W);
            [
                (x * 255 / W) as u8,
                (y * 255 / H) as u8,
                ((x ^ y) & 255) as u8,
                255,
            ]
        })
        .collect();
    Rgba::new(W, H, pixels).expect("a whole image")
}

fn png_of(image: &Rgba) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::RgbaImage::from_raw(image.width, image.height, image.pixels.clone())
        .expect("a whole image")
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("a PNG");
    out.into_inner()
}

/// The sixel as the launcher keeps it, for `tickloop_images::to_png`.
fn kept_sixel(sixel: &[u8]) -> ImageData {
    use base64::Engine;
    ImageData {
        placement: ImagePlacement {
            index: 1,
            row: 0,
            col: 0,
            rows: 24,
            cols: 64,
            width_px: W,
            height_px: H,
            format: ImageFormat::Sixel,
            bytes: sixel.len() as u64,
        },
        encoding: ImageEncoding::Sixel,
        data: base64::engine::general_purpose::STANDARD.encode(sixel),
    }
}

/// The median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo test --benches` runs this with --bench absent: do nothing then.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    println!("| image 640x480 | step | median ms | bytes out |");
    println!("| --- | --- | --- | --- |");
    for (name, image) in [("chart", chart()), ("photo", photo())] {
        let encoded = sixel::encode(&image);
        let t = median(9, || drop(sixel::encode(&image)));
        println!(
            "| {name} | sixel::encode (ours) | {} | {} |",
            ms(t),
            encoded.len()
        );
        let t = median(9, || drop(sixel::decode(&encoded)));
        println!(
            "| {name} | sixel::decode (ours) | {} | {} |",
            ms(t),
            image.pixels.len()
        );
        let kept = kept_sixel(&encoded);
        let t = median(9, || drop(tickloop_images::to_png(&kept)));
        println!(
            "| {name} | sixel to PNG, tickloop_images (icy_sixel + image) | {} | - |",
            ms(t)
        );
        let commands = kitty::encode(&image, 64, 24);
        let t = median(9, || drop(kitty::encode(&image, 64, 24)));
        println!(
            "| {name} | kitty::encode f=32 | {} | {} |",
            ms(t),
            commands.len()
        );
        let png = png_of(&image);
        let t = median(9, || {
            drop(kitty::from_data(KittyPixels::Png, false, (W, H), &png))
        });
        println!(
            "| {name} | kitty PNG decode (png crate) | {} | {} |",
            ms(t),
            png.len()
        );
        let path =
            std::env::temp_dir().join(format!("tickloop-bench-{name}-{}.png", std::process::id()));
        if std::fs::write(&path, &png).is_ok() {
            let mut size = 0;
            let t = median(9, || {
                if let Ok(out) = std::process::Command::new("img2sixel").arg(&path).output() {
                    size = out.stdout.len();
                }
            });
            if size > 0 {
                println!(
                    "| {name} | img2sixel (libsixel, a process) | {} | {size} |",
                    ms(t)
                );
            }
            let _ = std::fs::remove_file(&path);
        }
    }
}
