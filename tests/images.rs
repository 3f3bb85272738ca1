//! Images a program draws, kept with its screen (issue 52), through the
//! real CLI with real programs from Debian: `img2sixel` (libsixel-bin)
//! draws sixel, `chafa -f kitty` the kitty graphics protocol, in a bash the
//! launcher hosts. `screen --json` lists each image with its cell;
//! `screen --image N` writes a PNG of its size; an image scrolled past the
//! history is dropped; 300 images keep the launcher under its bound and the
//! shell goes on; a recording keeps the image's bytes.
//!
//! Without `img2sixel` or `chafa` (`.ci/run` installs both) every case is
//! reported *ignored*, with the reason, never passed.

mod common;

use common::optional::{self, Case};
use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn main() {
    let missing = ["img2sixel", "chafa"]
        .into_iter()
        .filter(|program| !on_path(program))
        .collect::<Vec<_>>();
    let missing = (!missing.is_empty()).then(|| {
        format!(
            "the image tests need {} (apt-get install libsixel-bin chafa)",
            missing.join(" and ")
        )
    });
    optional::run(
        vec![
            Case {
                name: "an_img2sixel_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size",
                body: an_img2sixel_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size,
            },
            Case {
                name: "a_chafa_kitty_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size",
                body: a_chafa_kitty_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size,
            },
            Case {
                name: "an_image_scrolled_past_the_history_is_dropped",
                body: an_image_scrolled_past_the_history_is_dropped,
            },
            Case {
                name:
                    "three_hundred_images_keep_the_launcher_under_its_bound_and_the_shell_goes_on",
                body: three_hundred_images_keep_the_launcher_under_its_bound_and_the_shell_goes_on,
            },
            Case {
                name: "a_recording_keeps_the_image_bytes",
                body: a_recording_keeps_the_image_bytes,
            },
        ],
        missing,
    )
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// A `width` x `height` PNG, red on the left half and blue on the right,
/// written in the host's scratch directory.
fn picture(host: &Host, width: u32, height: u32) -> PathBuf {
    let image = image::RgbImage::from_fn(width, height, |x, _| {
        if x < width / 2 {
            image::Rgb([255, 0, 0])
        } else {
            image::Rgb([0, 0, 255])
        }
    });
    let path = host.scratch().join(format!("picture-{width}x{height}.png"));
    image.save(&path).expect("write the test picture");
    path
}

/// Opens bash (no rc files) as `shell:NAME` and waits for its prompt.
fn bash(host: &Host, name: &str, extra: &[&str]) -> String {
    let mut args = vec!["open", "--shell", "--id", name];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "bash", "--norc", "--noprofile"]);
    host.ok(&args);
    let id = format!("shell:{name}");
    host.wait_screen(&id, "bash-");
    id
}

/// Types `line` and Enter into the shell, as the person.
fn type_line(host: &Host, id: &str, line: &str) {
    host.ok(&["input", id, &format!("{line}\r")]);
}

/// `screen --json` once it lists `count` images and shows `text`.
fn screen_with_images(host: &Host, id: &str, count: usize, text: &str) -> Value {
    wait_for(
        &format!("{count} image(s) and {text:?} on {id}'s screen"),
        || {
            let json = host.ok(&["screen", id, "--json"]);
            let images = json["images"].as_array().map_or(0, Vec::len);
            let shown = json["lines"]
                .as_array()
                .is_some_and(|lines| lines.iter().any(|l| l.as_str() == Some(text)));
            (images == count && shown).then_some(json)
        },
    )
}

fn row_of_any(json: &Value, text: &str) -> bool {
    json["lines"]
        .as_array()
        .is_some_and(|lines| lines.iter().any(|l| l.as_str() == Some(text)))
}

fn row_of(json: &Value, text: &str) -> usize {
    json["lines"]
        .as_array()
        .and_then(|lines| lines.iter().position(|l| l.as_str() == Some(text)))
        .unwrap_or_else(|| panic!("{text:?} is not on the screen: {json}"))
}

/// `screen ID --image N > file`: the PNG, decoded.
fn image_png(host: &Host, id: &str, index: u64) -> image::RgbaImage {
    let out = host
        .command(&["screen", id, "--image", &index.to_string()])
        .output()
        .expect("run screen --image");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "screen --image: {said}");
    assert!(said.contains("pixels"), "{said}");
    image::load_from_memory(&out.stdout)
        .unwrap_or_else(|e| panic!("screen --image wrote no PNG ({e}): {said}"))
        .to_rgba8()
}

fn an_img2sixel_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size() {
    let host = Host::new();
    let picture = picture(&host, 100, 60);
    let id = bash(&host, "sixel", &[]);
    type_line(
        &host,
        &id,
        &format!(
            "clear; echo above; img2sixel {}; echo below",
            picture.display()
        ),
    );
    let json = screen_with_images(&host, &id, 1, "below");
    let image = &json["images"][0];
    let above = row_of(&json, "above");
    // Drawn at the start of the row below `above`; 100x60 pixels in the
    // launcher's 10x20-pixel cells: 10 columns, 3 rows; `below` is printed
    // on the row after the image, as with sixel scrolling in xterm.
    assert_eq!(image["format"], "sixel", "{json}");
    assert_eq!(image["row"], above as u64 + 1, "{json}");
    assert_eq!(image["col"], 0, "{json}");
    assert_eq!(
        (image["cols"].as_u64(), image["rows"].as_u64()),
        (Some(10), Some(3))
    );
    assert_eq!(
        (image["width_px"].as_u64(), image["height_px"].as_u64()),
        (Some(100), Some(60))
    );
    assert_eq!(row_of(&json, "below"), above + 4, "{json}");
    assert!(image["bytes"].as_u64().unwrap_or(0) > 0, "{json}");
    assert_eq!(json["image_bytes"], image["bytes"], "{json}");

    let png = image_png(&host, &id, image["index"].as_u64().expect("index"));
    assert_eq!(png.dimensions(), (100, 60));
    // img2sixel quantizes the colours a little.
    let left = png.get_pixel(10, 30).0;
    let right = png.get_pixel(90, 30).0;
    assert!(left[0] > 200 && left[2] < 60, "red on the left: {left:?}");
    assert!(
        right[2] > 200 && right[0] < 60,
        "blue on the right: {right:?}"
    );

    // On a terminal, `--image` refuses to write a PNG there.
    let mut refused = host.in_a_terminal(&format!("screen {id} --image 1"));
    let out = refused.output().expect("run in a terminal");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("not to a terminal"), "{said}");
    // An index that is not kept is a clear error.
    let err = host
        .run(&["screen", &id, "--image", "99"])
        .expect_error(1, "bad_request");
    assert!(
        err["message"]
            .as_str()
            .unwrap_or("")
            .contains("keeps no image 99"),
        "{err}"
    );
}

fn a_chafa_kitty_image_is_listed_at_its_cell_and_written_as_a_png_of_its_size() {
    let host = Host::new();
    let picture = picture(&host, 100, 60);
    let id = bash(&host, "kitty", &[]);
    type_line(
        &host,
        &id,
        &format!(
            "clear; echo above; chafa -f kitty --size 10x5 {}; echo below",
            picture.display()
        ),
    );
    let json = screen_with_images(&host, &id, 1, "below");
    let image = &json["images"][0];
    let above = row_of(&json, "above");
    assert_eq!(image["format"], "kitty", "{json}");
    assert_eq!(image["row"], above as u64 + 1, "{json}");
    assert_eq!(image["col"], 0, "{json}");
    // chafa says the cells itself (c=, r=); the image fits in 10x5.
    let (cols, rows) = (
        image["cols"].as_u64().expect("cols"),
        image["rows"].as_u64().expect("rows"),
    );
    assert!(cols <= 10 && rows <= 5 && cols > 0 && rows > 0, "{json}");
    // kitty leaves the cursor on the image's last row; chafa's newline
    // then puts `below` on the row after it.
    assert_eq!(row_of(&json, "below"), above + 1 + rows as usize, "{json}");
    let (w, h) = (
        image["width_px"].as_u64().expect("width"),
        image["height_px"].as_u64().expect("height"),
    );
    let png = image_png(&host, &id, image["index"].as_u64().expect("index"));
    assert_eq!(png.dimensions(), (w as u32, h as u32));
    let left = png.get_pixel(2, h as u32 / 2).0;
    assert!(left[0] > 200 && left[2] < 60, "red on the left: {left:?}");
}

fn an_image_scrolled_past_the_history_is_dropped() {
    let host = Host::new();
    let picture = picture(&host, 40, 40);
    let id = bash(&host, "scroll", &["--history", "20"]);
    type_line(
        &host,
        &id,
        &format!("img2sixel {}; echo drawn", picture.display()),
    );
    let json = screen_with_images(&host, &id, 1, "drawn");
    let row = json["images"][0]["row"].as_i64().expect("row");
    // Into the history: still listed, at a negative row.
    type_line(&host, &id, "seq 1 40; echo into-history");
    let json = screen_with_images(&host, &id, 1, "into-history");
    let moved = json["images"][0]["row"].as_i64().expect("row");
    assert!(
        moved < 0 && moved < row,
        "moved up into the history: {json}"
    );
    // Past the 20 lines of history: gone.
    type_line(&host, &id, "seq 1 60; echo past-history");
    let json = screen_with_images(&host, &id, 0, "past-history");
    assert!(json.get("images").is_none(), "{json}");
    assert!(json.get("image_bytes").is_none(), "nothing kept: {json}");
}

fn three_hundred_images_keep_the_launcher_under_its_bound_and_the_shell_goes_on() {
    let config = tempfile::tempdir().expect("config dir");
    std::fs::create_dir_all(config.path().join("tickloop")).expect("config folder");
    std::fs::write(
        config.path().join("tickloop/config.toml"),
        "image_memory_mb = 1\n",
    )
    .expect("config.toml");
    let host = Host::new().with_env(vec![(
        "XDG_CONFIG_HOME".into(),
        config.path().to_string_lossy().into_owned(),
    )]);
    // A noisy picture, so each sixel is large (some 20 kB).
    let noisy = image::RgbImage::from_fn(200, 120, |x, y| {
        let v = (x.wrapping_mul(7919) ^ y.wrapping_mul(104_729)) as u8;
        image::Rgb([v, v.wrapping_mul(3), v.wrapping_mul(5)])
    });
    let path = host.scratch().join("noisy.png");
    noisy.save(&path).expect("noisy.png");
    let id = bash(&host, "many", &["--history", "5000"]);
    type_line(
        &host,
        &id,
        &format!(
            "for i in $(seq 1 300); do img2sixel {}; done; echo all-drawn",
            path.display()
        ),
    );
    // The line alone, not the command that prints it.
    let json = wait_for("all 300 drawn", || {
        let json = host.ok(&["screen", &id, "--json"]);
        row_of_any(&json, "all-drawn").then_some(json)
    });
    let kept = json["image_bytes"].as_u64().expect("image_bytes");
    assert!(kept <= 1024 * 1024, "under the 1 MB bound: {kept}");
    let images = json["images"].as_array().expect("images");
    assert!(!images.is_empty() && images.len() < 300, "{}", images.len());
    // The newest are the ones kept.
    let newest = images.iter().filter_map(|i| i["index"].as_u64()).max();
    assert_eq!(newest, Some(300));
    // The launcher tells the activity what it dropped (as the terminal
    // thread applies the output: it may come a moment after the screen).
    let dropped = |activity: &Value| -> usize {
        activity["entries"]
            .as_array()
            .map(|entries| {
                entries
                    .iter()
                    .filter(|e| e["type"] == "images_dropped")
                    .filter_map(|e| e["images"].as_u64())
                    .sum::<u64>() as usize
            })
            .unwrap_or(0)
    };
    let activity = wait_for("the activity to count every dropped image", || {
        let activity = host.ok(&["activity", &id, "--json"]);
        (dropped(&activity) == 300 - images.len()).then_some(activity)
    });
    let notes = activity["entries"].as_array().map_or(0, |e| {
        e.iter().filter(|e| e["type"] == "images_dropped").count()
    });
    assert!(
        notes <= 2,
        "a loop of drops is told in one entry: {activity}"
    );
    let out = host
        .in_a_terminal(&format!("activity {id}"))
        .output()
        .expect("activity in a terminal");
    let words = String::from_utf8_lossy(&out.stdout);
    assert!(words.contains("under 1 MB (image_memory_mb)"), "{words}");
    // The shell goes on.
    type_line(&host, &id, "echo still-$((20+22))");
    host.wait_screen(&id, "still-42");
}

fn a_recording_keeps_the_image_bytes() {
    let host = Host::new();
    let picture = picture(&host, 30, 30);
    let cast = host.scratch().join("images.cast");
    let cast_arg = cast.to_string_lossy().into_owned();
    let id = bash(&host, "rec", &["--record", &cast_arg]);
    type_line(
        &host,
        &id,
        &format!("img2sixel {}; echo recorded", picture.display()),
    );
    screen_with_images(&host, &id, 1, "recorded");
    host.ok(&["close", &id]);
    let text = wait_for("the recording to hold the sixel", || {
        let text = std::fs::read_to_string(&cast).ok()?;
        text.contains("recorded").then_some(text)
    });
    let output: String = text
        .lines()
        .skip(1)
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event[1] == "o")
        .filter_map(|event| event[2].as_str().map(str::to_string))
        .collect();
    let start = output.find("\x1bP").expect("a DCS in the recording");
    assert!(
        output[start..].contains("q\"1;1;30;30"),
        "the sixel with its raster attributes: {:?}",
        &output[start..start + 40.min(output.len() - start)]
    );
}
