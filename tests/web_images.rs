//! A Tick's image on the page of `tickloop web` (issue 52): a real bash
//! runs Debian's `img2sixel` on a picture half red, half blue; the page in
//! Debian's Chromium (Playwright, tests/common/web.rs) gets the kept image
//! as sixel and xterm.js's image addon draws it: the addon's image layer
//! holds red pixels left of blue ones, about the picture's size, at
//! 1280×800 and again on a phone (390×844). A
//! screenshot goes to `target/tmp/web-images/`, printed as it is taken.
//!
//! Without Chromium or `img2sixel` (`.ci/run` installs both) the case is
//! reported *ignored*, with the reason, never passed.

mod common;

use common::optional::{self, Case};
use common::web::{missing_chromium, Browser, Web};
use common::*;
use serde_json::json;

fn main() {
    let missing = missing_chromium().or_else(|| {
        (!on_path("img2sixel"))
            .then(|| "the image test needs img2sixel (apt-get install libsixel-bin)".to_string())
    });
    optional::run(
        vec![Case {
            name: "an_img2sixel_image_is_drawn_by_the_pages_image_addon",
            body: an_img2sixel_image_is_drawn_by_the_pages_image_addon,
        }],
        missing,
    )
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Counts the image layer's red and blue pixels and where they are: the
/// addon's canvas (`.xterm-image-layer`), read back in the page.
const COUNT_PIXELS: &str = "() => {
  const c = document.querySelector('.xterm-image-layer');
  if (!c || !c.width || !c.height) return null;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let red = 0, blue = 0, redX = 0, blueX = 0;
  for (let i = 0; i < d.length; i += 4) {
    const x = (i / 4) % c.width;
    if (d[i] > 200 && d[i + 1] < 60 && d[i + 2] < 60) { red++; redX += x; }
    if (d[i + 2] > 200 && d[i] < 60 && d[i + 1] < 60) { blue++; blueX += x; }
  }
  if (red === 0 || blue === 0) return null;
  return { red, blue, redX: redX / red, blueX: blueX / blue, dpr: window.devicePixelRatio };
}";

fn an_img2sixel_image_is_drawn_by_the_pages_image_addon() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("web-images");
    std::fs::create_dir_all(&dir).expect("the screenshots' folder");
    let host = Host::new();
    let (width, height) = (120u32, 60u32);
    let picture = host.scratch().join("picture.png");
    image::RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            image::Rgb([255, 0, 0])
        } else {
            image::Rgb([0, 0, 255])
        }
    })
    .save(&picture)
    .expect("write the test picture");
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "pic",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    let id = "shell:pic";
    host.wait_screen(id, "bash-");
    host.ok(&[
        "input",
        id,
        &format!("img2sixel {}; echo SHOWN\r", picture.display()),
    ]);
    wait_for("the image kept and SHOWN on the screen", || {
        let screen = host.ok(&["screen", id, "--json"]);
        let listed = screen["images"].as_array().is_some_and(|i| i.len() == 1);
        let shown = screen["lines"]
            .as_array()
            .is_some_and(|l| l.iter().any(|l| l.as_str() == Some("SHOWN")));
        (listed && shown).then_some(())
    });
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.cmd(json!({"op": "viewport", "width": 1280, "height": 800}));
    browser.log_in(&web);
    browser.open_instance(id, "SHOWN");
    let counted = browser.wait("the image layer to hold the picture's pixels", COUNT_PIXELS);
    let path = dir.join("img2sixel.png");
    browser.cmd(json!({"op": "screenshot", "path": path}));
    eprintln!("screenshot: {}", path.display());
    let dpr = counted["dpr"].as_f64().unwrap_or(1.0);
    let area = f64::from(width * height) / 2.0 * dpr * dpr;
    for colour in ["red", "blue"] {
        let n = counted[colour].as_f64().unwrap_or(0.0);
        // Drawn at the page's cell size, so near (not exactly) its own size.
        assert!(
            n > area * 0.5 && n < area * 2.0,
            "{colour}: {n} pixels, the picture's half is {area}: {counted}"
        );
    }
    assert!(
        counted["redX"].as_f64() < counted["blueX"].as_f64(),
        "red is left of blue: {counted}"
    );
    // On a phone the terminal is narrower: drawn again after the resize.
    browser.cmd(json!({"op": "viewport", "width": 390, "height": 844}));
    let phone = browser.wait(
        "the image drawn again on a phone-sized page",
        &format!(
            "() => {{ const s = document.querySelector('.xterm-screen'); \
             return s && s.clientWidth <= 390 && ({COUNT_PIXELS})(); }}"
        ),
    );
    let path = dir.join("img2sixel-phone.png");
    browser.cmd(json!({"op": "screenshot", "path": path}));
    eprintln!("screenshot: {}", path.display());
    assert!(
        phone["redX"].as_f64() < phone["blueX"].as_f64(),
        "red is left of blue: {phone}"
    );
}
