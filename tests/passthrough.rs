//! What a Tick says to its terminal besides the screen reaches the person's
//! terminal through `tickloop attach` (issue 12): the window title (OSC 2),
//! clipboard writes (OSC 52), the bell, underline styles, hyperlinks and the
//! cursor shape; and the Tick's colour queries (OSC 10/11/4) are answered
//! with the view's terminal's own colours. The person's terminal here is a
//! real tmux, whose own state shows what it got: `#{pane_title}`, its paste
//! buffer (with `set-clipboard on`), `#{window_bell_flag}`.

mod common;

use common::tmux::Tmux;
use common::*;

/// A program that, once a line is typed, sets its title, writes to the
/// clipboard and rings the bell, then echoes what is typed.
const PROGRAM: &str = "read x; printf '\\033]2;tick-title-7\\007'; \
    printf '\\033]52;c;%s\\007' \"$(printf copied-by-the-tick | base64)\"; \
    printf '\\007'; echo passed-on; exec cat";

/// Opens [`PROGRAM`], attaches to it in tmux (with `env` before the
/// command), lets it pass everything on, and waits until the bell, its
/// last, reached tmux.
fn attach_and_pass_on(host: &Host, env: &str) -> Tmux {
    host.ok(&["open", "--shell", "--id", "pt", "--", "sh", "-c", PROGRAM]);
    let command = format!("{env} {} attach shell:pt", tickloop_bin());
    let tmux = Tmux::start(host, 100, 30, &command);
    tmux.cmd(&["set", "-g", "set-clipboard", "on"]);
    tmux.cmd(&["set", "-g", "monitor-bell", "on"]);
    wait_for("the view to attach", || {
        host.entry("shell:pt")?["views"]
            .as_u64()
            .filter(|n| *n == 1)
    });
    tmux.type_text("go");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("passed-on");
    wait_for("the bell to reach tmux", || {
        let flag = tmux.cmd(&["display-message", "-p", "-t", "0", "#{window_bell_flag}"]);
        (flag.trim() == "1").then_some(())
    });
    tmux
}

#[test]
fn title_clipboard_and_bell_reach_the_views_terminal() {
    let host = Host::new();
    let tmux = attach_and_pass_on(&host, "");
    wait_for("the pane title to be the Tick's", || {
        let title = tmux.cmd(&["display-message", "-p", "-t", "0", "#{pane_title}"]);
        (title.trim() == "tick-title-7").then_some(())
    });
    // `list` (and the Monitor) show a shell program by the title it set.
    wait_for("list to show the program's title", || {
        (host.entry("shell:pt")?["title"] == "tick-title-7").then_some(())
    });
    wait_for("the clipboard write to reach tmux's buffer", || {
        let buffer = tmux.raw(&["show-buffer"]);
        (String::from_utf8_lossy(&buffer.stdout) == "copied-by-the-tick").then_some(())
    });
}

#[test]
fn clipboard_writes_stay_out_when_turned_off() {
    let host = Host::new();
    // The bell comes after the clipboard write: once it rang, the write
    // would have reached tmux too.
    let tmux = attach_and_pass_on(&host, "TICKLOOP_CLIPBOARD=off");
    let buffers = tmux.cmd(&["list-buffers"]);
    assert!(!buffers.contains("copied-by-the-tick"), "{buffers}");
}

/// A program that asks its terminal for its colours (OSC 10, 11, 4;1 and
/// 4;12, then device attributes) each time a line is typed, again and again
/// until an answer holds the line's text (at most 1000 times: the view's
/// terminal answers the view a moment after it attached), and prints round
/// N's answers one a line as `aN ...`, the line it read as `read-N [...]`,
/// then `end-of-answers-N`.
const COLOR_PROBE: &str = r#"
import os, select, sys, termios, tty
fd = sys.stdin.fileno()
def ask():
    os.write(1, b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b]4;1;?\x1b\\\x1b]4;12;?\x07\x1b[c")
    got = b""
    while b"\x1b[?" not in got or not got.split(b"\x1b[?")[-1].endswith(b"c"):
        r, _, _ = select.select([fd], [], [], 10)
        if not r:
            break
        got += os.read(fd, 1024)
    return got
n = 0
while True:
    want = sys.stdin.readline().strip().encode()
    n += 1
    old = termios.tcgetattr(fd)
    tty.setraw(fd)
    for _ in range(1000):
        got = ask()
        if want in got:
            break
    termios.tcsetattr(fd, termios.TCSADRAIN, old)
    out = "".join("\r\na%d %s" % (n, a.decode(errors="replace").rstrip("\\\x07\x1b"))
                  for a in got.split(b"\x1b")[1:])
    sys.stdout.write(out + "\r\nread-%d [%s]\r\nend-of-answers-%d\r\n" % (n, want.decode(errors="replace"), n))
    sys.stdout.flush()
"#;

/// Opens [`COLOR_PROBE`] as `shell:ID`, and a tmux whose command waits for
/// a flag file, then attaches to it (so tmux can be styled first: the view
/// asks its terminal once, at attach). Returns tmux and the flag's path.
fn probe_and_waiting_view(host: &Host, id: &str) -> (Tmux, std::path::PathBuf) {
    let probe = host.scratch().join("colors.py");
    std::fs::write(&probe, COLOR_PROBE).expect("write the probe");
    let probe = probe.to_string_lossy().into_owned();
    host.ok(&["open", "--shell", "--id", id, "--", "python3", &probe]);
    let flag = host.scratch().join("styled");
    let tmux = Tmux::start(
        host,
        100,
        30,
        &format!(
            "while [ ! -e {} ]; do sleep 0.05; done; {} attach shell:{id}",
            flag.display(),
            tickloop_bin()
        ),
    );
    (tmux, flag)
}

/// The answers of the probe's round `n`, as `(query code, answer)` pairs:
/// `("11", "rgb:ffff/ffff/ffff")`, `("4;1", ...)`.
fn probe_answers(host: &Host, id: &str, n: u32) -> Vec<(String, String)> {
    let screen = host.wait_screen(id, &format!("end-of-answers-{n}"));
    let prefix = format!("a{n} ]");
    screen
        .lines()
        .filter_map(|l| l.trim().strip_prefix(&prefix))
        .filter_map(|a| {
            let (code, rgb) = a.split_once(";rgb:")?;
            Some((code.to_string(), format!("rgb:{rgb}")))
        })
        .collect()
}

fn answer<'a>(answers: &'a [(String, String)], code: &str) -> Option<&'a str> {
    answers
        .iter()
        .find(|(c, _)| c == code)
        .map(|(_, rgb)| rgb.as_str())
}

fn wait_views(host: &Host, id: &str, n: u64) {
    wait_for(&format!("{id} to have {n} views"), || {
        host.entry(id)?["views"].as_u64().filter(|v| *v == n)
    });
}

#[test]
fn colour_queries_are_answered_with_the_views_terminal_colours() {
    let host = Host::new();
    let (tmux, flag) = probe_and_waiting_view(&host, "col");
    // A light terminal: tmux answers OSC 10/11 with its window style.
    tmux.cmd(&["set", "-g", "window-style", "bg=#ffffff,fg=#101010"]);
    std::fs::write(&flag, "").expect("write the flag");
    wait_views(&host, "shell:col", 1);
    tmux.type_text("11;rgb:ffff/ffff/ffff");
    tmux.send_keys(&["Enter"]);
    let answers = probe_answers(&host, "shell:col", 1);
    assert_eq!(
        answer(&answers, "10"),
        Some("rgb:1010/1010/1010"),
        "{answers:?}"
    );
    assert_eq!(
        answer(&answers, "11"),
        Some("rgb:ffff/ffff/ffff"),
        "{answers:?}"
    );
    // The view's terminal's answers to the view never reached the Tick as
    // typing: the line it read is exactly what was typed.
    let screen = host.wait_screen("shell:col", "end-of-answers-1");
    assert!(
        screen.contains("read-1 [11;rgb:ffff/ffff/ffff]"),
        "{screen}"
    );
}

#[test]
fn palette_queries_are_answered_with_the_views_terminal_palette() {
    let host = Host::new();
    let (tmux, flag) = probe_and_waiting_view(&host, "pal");
    // No view yet: xterm's palette.
    host.ok(&["input", "shell:pal", "\n"]);
    let answers = probe_answers(&host, "shell:pal", 1);
    assert_eq!(
        answer(&answers, "4;1"),
        Some("rgb:cdcd/0000/0000"),
        "{answers:?}"
    );
    assert_eq!(
        answer(&answers, "4;12"),
        Some("rgb:5c5c/5c5c/ffff"),
        "{answers:?}"
    );
    // tmux (3.3a) answers OSC 4 for the entries 0-7 its `pane-colours`
    // sets, without the index (never for 8-15): entry 1 comes from the
    // view's terminal, entry 12 stays xterm's.
    for i in 0..8 {
        let color = match i {
            1 => "#123456".to_string(),
            _ => format!("#0000{i:02x}"),
        };
        tmux.cmd(&["set", "-g", &format!("pane-colours[{i}]"), &color]);
    }
    std::fs::write(&flag, "").expect("write the flag");
    wait_views(&host, "shell:pal", 1);
    tmux.type_text("4;1;rgb:1212/3434/5656");
    tmux.send_keys(&["Enter"]);
    let answers = probe_answers(&host, "shell:pal", 2);
    assert_eq!(
        answer(&answers, "4;1"),
        Some("rgb:1212/3434/5656"),
        "{answers:?}"
    );
    assert_eq!(
        answer(&answers, "4;12"),
        Some("rgb:5c5c/5c5c/ffff"),
        "{answers:?}"
    );
    // The view detaches: the last colours seen stay.
    tmux.send_keys(&["C-\\", "d"]);
    wait_views(&host, "shell:pal", 0);
    host.ok(&["input", "shell:pal", "\n"]);
    let answers = probe_answers(&host, "shell:pal", 3);
    assert_eq!(
        answer(&answers, "4;1"),
        Some("rgb:1212/3434/5656"),
        "{answers:?}"
    );
    assert_eq!(
        answer(&answers, "4;12"),
        Some("rgb:5c5c/5c5c/ffff"),
        "{answers:?}"
    );
}

/// `tickloop attach ID` in tmux under `script`, which records the view's
/// own output (for what tmux 3.3a keeps no trace of); the recording's path.
fn attach_recorded(host: &Host, id: &str) -> (Tmux, std::path::PathBuf) {
    let typescript = host.scratch().join("typescript");
    let tmux = Tmux::start(
        host,
        100,
        30,
        &format!(
            "script -q -f -c '{} attach {id}' {}",
            tickloop_bin(),
            typescript.display()
        ),
    );
    (tmux, typescript)
}

#[test]
fn cursor_shape_reaches_the_views_terminal() {
    let host = Host::new();
    // A bar cursor (vim's insert mode), then a steady block once a line
    // is typed.
    let id = host.open_sh(
        "cur",
        "printf '\\033[6 qbar-cursor\\n'; read x; printf '\\033[2 qblock-cursor\\n'; exec cat",
        "bar-cursor",
    );
    // tmux 3.3a does not show a pane's cursor style, so the view's own
    // output is recorded with `script` and read raw.
    let (tmux, typescript) = attach_recorded(&host, &id);
    tmux.wait_text("bar-cursor");
    wait_for("the view's output to set a bar cursor", || {
        let bytes = std::fs::read(&typescript).ok()?;
        bytes.windows(5).any(|w| w == b"\x1b[6 q").then_some(())
    });
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("block-cursor");
    wait_for("the view's output to set a steady block cursor", || {
        let bytes = std::fs::read(&typescript).ok()?;
        bytes.windows(5).any(|w| w == b"\x1b[2 q").then_some(())
    });
}

#[test]
fn underline_style_and_colour_are_drawn_as_underline_not_text_colour() {
    let host = Host::new();
    host.open_sh("ul", "printf '\\033[4:3;58;5;196mCURLY\\033[0m \\033[4;58;2;0;128;255mBLUE\\033[0m done\\n'; exec cat", "done");
    let tmux = Tmux::attach(&host, "shell:ul", 100, 30);
    tmux.wait_text("CURLY BLUE done");
    let escapes = tmux.capture_escapes();
    let line = escapes
        .lines()
        .find(|l| l.contains("CURLY"))
        .expect("the line");
    // tmux (3.3a) prints a curly underline as 4:3 and an underline colour as
    // 58;2;R;G;B; the text itself keeps the default colour.
    assert!(line.contains("4:3"), "{line:?}");
    assert!(line.contains("58;2;255;0;0"), "{line:?}");
    assert!(line.contains("58;2;0;128;255"), "{line:?}");
    assert!(
        !line.contains("38;5;196") && !line.contains("[91m") && !line.contains(";91"),
        "{line:?}"
    );
}

#[test]
fn hyperlinks_reach_the_views_terminal() {
    let host = Host::new();
    let id = host.open_sh(
        "hl",
        "printf '\\033]8;;http://example.invalid/tick\\033\\\\the-link\\033]8;;\\033\\\\ after\\n'; exec cat",
        "the-link after",
    );
    // tmux 3.3a keeps no hyperlinks, so the view's own output is recorded
    // with `script` and read raw.
    let (tmux, typescript) = attach_recorded(&host, &id);
    tmux.wait_text("the-link after");
    let recorded = wait_for("the view's output to hold the hyperlink", || {
        let bytes = std::fs::read(&typescript).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        text.contains("]8;").then_some(text)
    });
    assert!(
        recorded.contains("http://example.invalid/tick"),
        "{recorded:?}"
    );
}
