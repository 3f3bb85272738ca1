//! What a Tick says to its terminal besides the screen reaches the person's
//! terminal through `tickloop attach` (issue 12): the window title (OSC 2),
//! clipboard writes (OSC 52) and the bell. The person's terminal here is a
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

/// A program that, once a line is typed, asks its terminal for its colours
/// and prints the answers.
const COLOR_PROBE: &str = r#"
import os, select, sys, termios, tty
sys.stdin.readline()
fd = sys.stdin.fileno()
old = termios.tcgetattr(fd)
tty.setraw(fd)
os.write(1, b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b[c")
got = b""
while b"\x1b[?" not in got or not got.split(b"\x1b[?")[-1].endswith(b"c"):
    r, _, _ = select.select([fd], [], [], 10)
    if not r:
        break
    got += os.read(fd, 1024)
termios.tcsetattr(fd, termios.TCSADRAIN, old)
sys.stdout.write("\r\nanswers " + got.replace(b"\x1b", b"ESC").decode() + " end-of-answers\r\n")
sys.stdout.flush()
sys.stdin.readline()
"#;

#[test]
fn colour_queries_are_answered_with_the_views_terminal_colours() {
    let host = Host::new();
    let probe = host.scratch().join("colors.py");
    std::fs::write(&probe, COLOR_PROBE).expect("write the probe");
    let probe = probe.to_string_lossy().into_owned();
    host.ok(&["open", "--shell", "--id", "col", "--", "python3", &probe]);
    // A light terminal: tmux answers OSC 10/11 with its window style, set
    // before the view starts (it asks once, at attach).
    let styled = host.scratch().join("styled");
    let tmux = Tmux::start(
        &host,
        100,
        30,
        &format!(
            "while [ ! -e {} ]; do sleep 0.05; done; {} attach shell:col",
            styled.display(),
            tickloop_bin()
        ),
    );
    tmux.cmd(&["set", "-g", "window-style", "bg=#ffffff,fg=#101010"]);
    std::fs::write(&styled, "").expect("write the flag");
    wait_for("the view to attach", || {
        host.entry("shell:col")?["views"]
            .as_u64()
            .filter(|n| *n == 1)
    });
    tmux.send_keys(&["Enter"]);
    // Wait for the whole answer line: print() writes it in pieces.
    let screen = host.wait_screen("shell:col", "end-of-answers");
    assert!(screen.contains("]10;rgb:1010/1010/1010"), "{screen}");
    assert!(screen.contains("]11;rgb:ffff/ffff/ffff"), "{screen}");
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
    let typescript = host.scratch().join("typescript");
    let tmux = Tmux::start(
        &host,
        100,
        30,
        &format!(
            "script -q -f -c '{} attach {id}' {}",
            tickloop_bin(),
            typescript.display()
        ),
    );
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
