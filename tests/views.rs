//! Views end to end (issue 4): `tickloop attach` in a real terminal (tmux)
//! against a real launcher and a real program (`tests/ticks/viewprobe.py`,
//! opened with `--shell`): the view shows what `tickloop screen` shows,
//! colours included; keys and bracketed pastes reach the program; the PTY
//! follows the latest view's size; detaching or killing a view leaves the
//! program running; many attach/detach cycles during a flood of output leak
//! no descriptors in the launcher.

mod common;

use common::raw_view::raw_view;
use common::tmux::Tmux;
use common::*;

const ID: &str = "shell:vp";

/// Opens the probe as `shell:NAME` (with `--flood` when asked) and waits for
/// its first screen; returns the path of its input log.
fn open_probe(host: &Host, name: &str, flood: bool) -> String {
    let log = host.log_path(name);
    let probe = tick("viewprobe.py");
    let mut args = vec!["open", "--shell", "--id", name, "--", probe.as_str(), &log];
    if flood {
        args.push("--flood");
    }
    host.ok(&args);
    host.wait_screen(&format!("shell:{name}"), "ready");
    log
}

/// Everything the probe read from its terminal, concatenated, as hex.
fn input_hex(log: &str) -> String {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("in "))
        .collect()
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn views(host: &Host, id: &str) -> Option<u64> {
    host.entry(id)?["views"].as_u64()
}

fn wait_views(host: &Host, id: &str, n: u64) {
    wait_for(&format!("{id} to have {n} views"), || {
        (views(host, id) == Some(n)).then_some(())
    });
}

/// Lines with trailing blanks trimmed and trailing empty lines dropped.
fn normalized(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_string()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn attach_command(id: &str) -> String {
    // The shell ignores ctrl+\ and ctrl+c itself, so a key sent while the
    // view is not in raw mode yet cannot end the test's shell.
    format!("trap '' QUIT INT; {} attach {id}", tickloop_bin())
}

/// `#{name}` of the pane, from tmux.
fn pane_flag(tmux: &Tmux, name: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", "0", &format!("#{{{name}}}")])
        .trim()
        .to_string()
}

#[test]
fn attach_shows_the_screen_with_colours_keys_reach_the_tick_and_detach_restores() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));

    // The PTY follows the view's size (the only and latest view).
    host.wait_screen(ID, "size 100x30");
    wait_views(&host, ID, 1);

    // The view shows what `tickloop screen` shows.
    wait_for(
        "the view to show the same screen as `tickloop screen`",
        || {
            let view = normalized(&tmux.capture());
            let screen = normalized(&host.screen(ID));
            (view == screen && !view.is_empty()).then_some(())
        },
    );
    let colours = tmux.capture_escapes();
    for sgr in [
        "31mred",
        "38;5;208mindexed",
        "38;2;10;200;30mtrue",
        "1;4mbold",
    ] {
        assert!(
            colours.contains(&format!("\x1b[{sgr}")),
            "the view lacks SGR {sgr:?}:\n{colours:?}"
        );
    }
    let text = tmux.capture();
    assert!(text.contains("日本 e\u{301}!"), "{text}");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "1");

    // Keys reach the program.
    tmux.type_text("hi");
    wait_for("typed keys to reach the program", || {
        input_hex(&log).contains(&hex("hi")).then_some(())
    });
    tmux.send_keys(&["Up"]);
    wait_for("an arrow key to reach the program", || {
        input_hex(&log).contains(&hex("\x1b[A")).then_some(())
    });
    host.wait_screen(ID, &format!("last {}", hex("\x1b[A")));

    // Detach: the view ends, the terminal is restored, the program runs on.
    tmux.send_keys(&["C-\\", "d"]);
    let after = tmux.wait_text("ATTACH-EXIT 0");
    assert!(after.contains("detached from shell:vp"), "{after}");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
    assert_eq!(pane_flag(&tmux, "cursor_flag"), "1");
    assert_eq!(pane_flag(&tmux, "mouse_any_flag"), "0");
    wait_views(&host, ID, 0);
    assert_eq!(host.entry(ID).expect("listed")["state"], "running");
    host.ok(&["input", ID, "after"]);
    wait_for("input after detach to reach the program", || {
        input_hex(&log).contains(&hex("after")).then_some(())
    });
}

#[test]
fn bracketed_paste_arrives_bracketed_also_after_reattach() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    for round in ["first", "second"] {
        let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
        tmux.wait_text("ready");
        wait_views(&host, ID, 1);
        let text = format!("{round} line\nnext line");
        tmux.paste(&text);
        let expected = hex(&format!("\x1b[200~{text}\x1b[201~"));
        wait_for(&format!("the {round} paste to arrive bracketed"), || {
            input_hex(&log).contains(&expected).then_some(())
        });
        tmux.send_keys(&["C-\\", "d"]);
        tmux.wait_text("ATTACH-EXIT 0");
        wait_views(&host, ID, 0);
    }
}

#[test]
fn the_pty_follows_the_latest_view_and_other_views_say_they_differ() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let big = Tmux::start(&host, 100, 30, &attach_command(ID));
    host.wait_screen(ID, "size 100x30");
    big.wait_text("size 100x30");

    // Resizing the view's terminal resizes the program's.
    big.resize(90, 25);
    host.wait_screen(ID, "size 90x25");
    big.wait_text("size 90x25");
    assert!(std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("size 90x25"));

    // A second, smaller view becomes the latest: the PTY takes its size and
    // the first view pads and says so.
    let small = Tmux::start(&host, 70, 20, &attach_command(ID));
    host.wait_screen(ID, "size 70x20");
    small.wait_text("size 70x20");
    wait_views(&host, ID, 2);
    big.wait_text("PTY 70x20, view 90x25: padded");

    // Typing in the first view makes it the latest again.
    big.type_text("x");
    host.wait_screen(ID, "size 90x25");
    small.wait_text("PTY 90x25, view 70x20: cropped");

    // With no view, the size stays.
    big.send_keys(&["C-\\", "d"]);
    small.send_keys(&["C-\\", "d"]);
    wait_views(&host, ID, 0);
    let screen = host.screen(ID);
    assert!(screen.contains("size 90x25"), "{screen}");
}

#[test]
fn a_view_past_the_size_limit_leaves_the_program_within_it_and_a_normal_attach_works_after() {
    use tickloop_proto::wire::{Hello, Role};
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    // 2100 x 2000 is 4,200,000 cells, past the 4,194,304 a screen may have:
    // the program gets the largest size allowed at that width. (The view's
    // status line saying so is `render::size_status`'s unit test: a real
    // terminal that large takes a debug build's view too long to draw to
    // wait on it here, with other tests running.)
    let (reader, writer, _) = raw_view(&host, ID, &Hello::new(Role::View), 2100, 2000);
    host.wait_screen(ID, "size 2100x1997");
    wait_views(&host, ID, 1);
    let launcher_log = host.runtime().join("i/shell-vp/launcher.log");
    let said = std::fs::read_to_string(&launcher_log).unwrap_or_default();
    assert!(
        said.contains("a view asked for 2100x2000 cells") && said.contains("takes 2100x1997"),
        "{said}"
    );
    drop((reader, writer));
    wait_views(&host, ID, 0);
    let sizes = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !sizes.contains("size 2100x2000"),
        "the program never had more than the limit: {sizes}"
    );

    // The next, ordinary view attaches, takes its size and types.
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    host.wait_screen(ID, "size 100x30");
    tmux.wait_text("size 100x30");
    wait_views(&host, ID, 1);
    tmux.type_text("ok");
    wait_for("keys of the next view to reach the program", || {
        input_hex(&log).contains(&hex("ok")).then_some(())
    });
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn a_view_that_says_it_is_an_agents_watches_and_types_or_sizes_nothing() {
    use std::io::Write;
    use tickloop_proto::wire::{AgentHost, ClientKind, Hello};
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let persons = Tmux::start(&host, 100, 30, &attach_command(ID));
    host.wait_screen(ID, "size 100x30");
    wait_views(&host, ID, 1);

    // The agent's view gets the screen as it is, at the person's size.
    let claude = ClientKind::AgentCli(AgentHost::ClaudeCode);
    let (_reader, mut writer, first) = raw_view(&host, ID, &Hello::view(claude), 50, 10);
    assert_eq!((first.cols, first.rows), (100, 30));
    wait_views(&host, ID, 2);
    for event in [
        r#"{"event":"key","key":{"char":"z"}}"#,
        r#"{"event":"paste","text":"zz"}"#,
        r#"{"event":"resize","cols":60,"rows":12}"#,
        r#"{"event":"focus","focused":true}"#,
    ] {
        writeln!(writer, "{event}").expect("an event");
    }
    let launcher_log = host.runtime().join("i/shell-vp/launcher.log");
    wait_for("the launcher to drop the agent's view's input", || {
        std::fs::read_to_string(&launcher_log)
            .ok()
            .filter(|l| l.contains("an agent's view sent input or a size: not taken"))
    });
    // The person's keys, after, still arrive; the agent's never did.
    persons.type_text("p");
    wait_for("the person's key to reach the program", || {
        input_hex(&log).contains(&hex("p")).then_some(())
    });
    assert_eq!(input_hex(&log), hex("p"), "only the person's key arrived");
    assert!(host.screen(ID).contains("size 100x30"));
    let sizes = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !sizes.contains("size 50x10") && !sizes.contains("size 60x12"),
        "{sizes}"
    );
}

#[test]
fn killing_a_view_leaves_the_tick_running() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    tmux.wait_text("ready");
    wait_views(&host, ID, 1);
    let view = tmux.command_pid();
    // SAFETY: kill has no memory-safety preconditions.
    assert_eq!(unsafe { libc::kill(view, libc::SIGKILL) }, 0);
    tmux.wait_text("ATTACH-EXIT 137");
    wait_views(&host, ID, 0);
    assert_eq!(host.entry(ID).expect("listed")["state"], "running");
    host.ok(&["input", ID, "alive"]);
    wait_for("input after the view died to reach the program", || {
        input_hex(&log).contains(&hex("alive")).then_some(())
    });

    // A view that hangs up (SIGHUP: its terminal closed) is a detach too.
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    tmux.wait_text("ready");
    wait_views(&host, ID, 1);
    let view = tmux.command_pid();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(view, libc::SIGHUP) }, 0);
    tmux.wait_text("ATTACH-EXIT 0");
    wait_views(&host, ID, 0);
    assert_eq!(host.entry(ID).expect("listed")["state"], "running");
}

fn fd_count(pid: i64) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[test]
fn attach_and_detach_50_times_while_the_tick_floods() {
    let host = Host::new();
    open_probe(&host, "fl", true);
    let id = "shell:fl";
    let launcher = host.entry(id).expect("listed")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid");
    host.wait_screen(id, "flood ");
    let baseline = fd_count(launcher);
    assert!(baseline > 0);

    let counter = host.scratch().join("cycles");
    let counter_path = counter.to_string_lossy().into_owned();
    let script = format!(
        "trap '' QUIT INT; i=0; while [ $i -lt 50 ]; do {} attach {id} >/dev/null 2>&1; \
         i=$((i+1)); echo $i > {counter_path}; done",
        tickloop_bin()
    );
    let tmux = Tmux::start(&host, 100, 30, &script);
    let cycles = || -> u32 {
        std::fs::read_to_string(&counter)
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    };
    for i in 0..50 {
        // The view is up (drawing the program's screen) for cycle i.
        wait_for(&format!("view {i} to draw"), || {
            (cycles() == i && tmux.capture().contains("ready")).then_some(())
        });
        tmux.send_keys(&["C-\\", "d"]);
        wait_for(&format!("view {i} to detach"), || {
            (cycles() > i).then_some(())
        });
    }
    tmux.wait_text("ATTACH-EXIT 0");
    wait_views(&host, id, 0);
    let entry = host.entry(id).expect("listed");
    assert_eq!(entry["state"], "running");
    wait_for(
        "the launcher's descriptors to return to their count",
        || (fd_count(launcher) <= baseline).then_some(()),
    );
    host.wait_screen(id, "flood ");
}

#[test]
fn attaching_at_the_same_size_makes_the_tick_redraw() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let sizes = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter(|l| *l == "size 100x30")
            .count()
    };
    let first = Tmux::start(&host, 100, 30, &attach_command(ID));
    host.wait_screen(ID, "size 100x30");
    first.send_keys(&["C-\\", "d"]);
    first.wait_text("ATTACH-EXIT 0");
    wait_views(&host, ID, 0);
    let before = sizes();
    assert!(before >= 1);

    // Same size again: no real change, yet the program is told to redraw.
    let second = Tmux::start(&host, 100, 30, &attach_command(ID));
    wait_for("the program to redraw at the same size", || {
        (sizes() > before).then_some(())
    });
    second.wait_text("size 100x30");
}

#[test]
fn a_view_shows_why_the_tick_ended_and_exits() {
    let host = Host::new();
    open_probe(&host, "vp", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    tmux.wait_text("ready");
    wait_views(&host, ID, 1);
    host.ok(&["close", ID]);
    let after = tmux.wait_text("ATTACH-EXIT 0");
    assert!(after.contains("tickloop: shell:vp ended:"), "{after}");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
}

#[test]
fn the_note_after_attaching_gives_way_when_the_tick_draws_on_its_row() {
    let host = Host::new();
    let id = host.open_sh(
        "fill",
        "echo waiting; read x; seq 1 40; printf LASTROW; sleep 100000",
        "waiting",
    );
    // The view's size is the PTY's (no size note on the last row).
    let tmux = Tmux::start(&host, 120, 30, &attach_command(&id));
    tmux.wait_text("ctrl+\\ d detaches");
    // The program fills the screen: its last row is the program's again at
    // once, not after the note's moment.
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait_text("LASTROW");
    assert!(!screen.contains("d detaches"), "{screen}");
}

/// A person's bash in a real terminal, a command typed that floods it
/// (300,000 lines, then a line of its own): once that line is on the
/// screen, the view shows the screen the keeper has, row for row. A view's
/// frame applies only the output the master holds when it is taken; the
/// frame after the last of it must still come.
#[test]
fn a_flood_typed_into_an_attached_bash_ends_with_the_view_showing_the_screen() {
    let host = Host::new();
    let id = host.open_bash("flood");
    host.ok(&["input", &id, "PS1='prompt> '\r"]);
    host.wait_screen(&id, "prompt> ");
    let tmux = Tmux::start(&host, 120, 30, &attach_command(&id));
    tmux.wait_text("prompt> ");
    tmux.type_text("seq 1 300000; echo flood-$((6*7))");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("flood-42");
    wait_for(
        "the view to show the same screen as `tickloop screen`",
        || {
            let view = normalized(&tmux.capture());
            let screen = normalized(&host.screen(&id));
            (view == screen && view.iter().any(|row| row.contains("300000"))).then_some(())
        },
    );
}

#[test]
fn the_note_after_attaching_never_covers_what_the_tick_shows_on_its_row() {
    let host = Host::new();
    // The PTY is 120x30 until a view attaches: 40 lines fill it.
    let id = host.open_sh("full", "seq 1 40; printf LASTROW; sleep 100000", "LASTROW");
    // The view's own output, recorded: everything it ever drew.
    let typescript = host.scratch().join("typescript");
    let _tmux = Tmux::start(
        &host,
        120,
        30,
        &format!(
            "script -q -f -c '{} attach {id}' {}",
            tickloop_bin(),
            typescript.display()
        ),
    );
    let drawn = wait_for("the view to draw the Tick's last row", || {
        let bytes = std::fs::read(&typescript).ok()?;
        let text = String::from_utf8_lossy(&bytes).into_owned();
        text.contains("LASTROW").then_some(text)
    });
    // The note would have been drawn with the first frame, before it.
    assert!(!drawn.contains("detaches"), "{drawn:?}");
}

#[test]
fn the_detach_key_is_a_prefix_twice_sends_it_and_question_mark_lists_the_keys() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    wait_views(&host, ID, 1);
    // For a moment after attaching, the last row says how to detach.
    tmux.wait_text("ctrl+\\ d detaches");
    // The prefix twice: the program gets the key (0x1c) once.
    tmux.send_keys(&["C-\\", "C-\\"]);
    wait_for("the prefix key to reach the program", || {
        input_hex(&log).contains("1c").then_some(())
    });
    // The prefix then ?: the keys, on the last row, until a key is typed
    // for the program (the row it types on shows again).
    tmux.send_keys(&["C-\\", "?"]);
    tmux.wait_text("ctrl+\\ then: d detach");
    tmux.send_keys(&["x"]);
    wait_for("the key list gone once a key was typed", || {
        (!tmux.capture().contains("then: d detach")).then_some(())
    });
    tmux.send_keys(&["C-\\", "?"]);
    tmux.wait_text("ctrl+\\ then: d detach");
    // The prefix then a key that means nothing: dropped, and said.
    tmux.send_keys(&["C-\\", "z"]);
    tmux.wait_text("that key means nothing after ctrl+\\");
    assert!(
        !input_hex(&log).contains(&hex("z")),
        "z reached the program"
    );
    assert_eq!(views(&host, ID), Some(1));
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
    wait_views(&host, ID, 0);
}

#[test]
fn another_detach_key_from_the_environment_or_the_flag() {
    let host = Host::new();
    let log = open_probe(&host, "vp", false);
    // TICKLOOP_DETACH_KEY: ctrl+\ now reaches the program at once.
    let tmux = Tmux::start(
        &host,
        100,
        30,
        &format!(
            "trap '' QUIT INT; TICKLOOP_DETACH_KEY=ctrl+a {} attach {ID}",
            tickloop_bin()
        ),
    );
    wait_views(&host, ID, 1);
    tmux.wait_text("ctrl+a d detaches");
    tmux.send_keys(&["C-\\"]);
    wait_for("ctrl+\\ to reach the program", || {
        input_hex(&log).contains("1c").then_some(())
    });
    tmux.send_keys(&["C-a", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
    wait_views(&host, ID, 0);

    // The flag wins over the environment; a bad key is refused at once.
    let bad = host.run(&["attach", ID, "--detach-key", "alt+x"]);
    assert_eq!(bad.code, 2, "{bad:?}");
    assert!(bad.stderr.contains("ctrl+X"), "{}", bad.stderr);
}

#[test]
fn the_prefix_then_m_pops_the_activity_tab_the_monitor_and_quitting_it_returns_to_the_tick() {
    let host = Host::new();
    open_probe(&host, "vp", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command(ID));
    wait_views(&host, ID, 1);
    tmux.wait_text("ready");
    tmux.send_keys(&["C-\\", "m"]);
    tmux.wait_text("activity ·");
    tmux.send_keys(&["Tab"]);
    // The Monitor, its list loaded, with the Tick in it.
    wait_for("the Monitor to list the Tick", || {
        let s = tmux.capture();
        (s.contains("Tickloop Monitor") && s.contains(ID)).then_some(())
    });
    wait_views(&host, ID, 0);
    tmux.send_keys(&["q"]);
    // Back in the view of the Tick.
    wait_views(&host, ID, 1);
    tmux.wait_text("ready");
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn typing_into_a_tick_that_stopped_reading_never_blocks_the_launcher() {
    let host = Host::new();
    // Raw mode with echo: the terminal echoes what arrives while its input
    // buffer (4 KiB) has room, then takes no more; the program never reads.
    let id = host.open_sh("deaf", "stty raw; echo deaf; exec sleep 100000", "deaf");
    let tmux = Tmux::start(&host, 100, 30, &attach_command(&id));
    wait_views(&host, &id, 1);
    // More than the input buffer and the kernel's buffers behind it hold
    // (4 KiB + 64 KiB), typed through the view: keys are
    // written straight to the PTY only while the Tick has read everything,
    // the rest waits on the writer thread.
    let chunk = "x".repeat(4000);
    for _ in 0..20 {
        tmux.type_text(&chunk);
    }
    // The input buffer filled: the screen is full of echoed x's.
    host.wait_screen(&id, &"x".repeat(100));
    wait_for("the terminal's input buffer to fill", || {
        let screen = host.screen(&id);
        (screen.matches('x').count() >= 2000).then_some(())
    });
    // Detached: once the launcher counts no view, it has read all the view
    // sent (it reads the connection to its end).
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
    wait_views(&host, &id, 0);
    // It still answers: more input is taken, or refused at once when the
    // writer's queue is full (never a timeout).
    let out = host.run(&["input", &id, "more"]);
    let said = format!("{}{}", out.stdout, out.stderr);
    assert!(
        said.contains("\"ok\":true") || said.contains("not reading its terminal"),
        "{said}"
    );
    assert!(host.screen(&id).contains("xxxx"));
}

/// The pids whose parent is `parent`.
fn children(parent: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    // The fields after the command's closing parenthesis.
                    let rest = stat.rsplit_once(')')?.1.to_string();
                    rest.split_whitespace().nth(1).map(str::to_string)
                })
                .as_deref()
                == Some(parent)
        })
        .collect()
}

/// The names of the threads of process `pid`.
fn thread_names(pid: &str) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect()
}

#[test]
fn the_view_reads_its_terminal_and_the_launcher_on_one_thread() {
    // Issue 40: one loop reads the terminal and the launcher's socket,
    // writes keys at once and draws; the only other thread asks tickhost
    // for calls waiting for approval.
    let host = Host::new();
    let log = open_probe(&host, "one", false);
    let tmux = Tmux::start(&host, 100, 30, &attach_command("shell:one"));
    wait_views(&host, "shell:one", 1);
    let shell = pane_flag(&tmux, "pane_pid");
    let view = wait_for("the attach process", || {
        children(&shell).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmd| cmd.contains("attach"))
        })
    });
    tmux.type_text("x");
    wait_for("a key to reach the program", || {
        input_hex(&log).contains(&hex("x")).then_some(())
    });
    let threads = thread_names(&view);
    assert!(
        threads.len() <= 2,
        "the attach view runs {} threads: {threads:?}",
        threads.len()
    );
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
}
