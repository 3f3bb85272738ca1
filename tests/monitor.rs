//! The Monitor end to end (issue 4): `tickloop monitor` in a real terminal
//! (tmux) against real launchers: it lists the instances opened through the
//! CLI (a counter Tick and a `shell:` program), Enter opens the overlay with
//! the Tick's live screen, keys reach the Tick, resizing the terminal reaches
//! it as SIGWINCH (counter.py prints `size COLSxROWS`), ctrl+\ then d closes the
//! overlay with the Tick still running, and an instance that ends (it exits,
//! or `tickloop close`) shows its reason, in the overlay and in the list. At
//! 100x30 and at 80x24; the terminal is restored at quit and at SIGTERM.
//! `w` shows what agents did on every instance, in order, and follows.

mod common;

use common::tmux::Tmux;
use common::*;

const COUNTER: &str = "hosted:counter";
const SHELL: &str = "shell:sh";

fn monitor_command() -> String {
    // The shell ignores ctrl+\ and ctrl+c itself, so a key sent while the
    // Monitor is not in raw mode yet cannot end the test's shell.
    format!("trap '' QUIT INT; {} monitor", tickloop_bin())
}

/// `#{name}` of the pane, from tmux.
fn pane_flag(tmux: &Tmux, name: &str) -> String {
    tmux.cmd(&["display-message", "-p", "-t", "0", &format!("#{{{name}}}")])
        .trim()
        .to_string()
}

/// Opens the counter Tick and a plain shell, and waits until both drew.
fn open_two(host: &Host) {
    host.open_counter("counter");
    host.ok(&["open", "--shell", "--id", "sh", "--", "sh"]);
    host.wait_screen(COUNTER, "size 120x30");
    wait_for("the shell's prompt", || {
        let out = host.run(&["screen", SHELL]);
        (out.code == 0 && !out.stdout.trim().is_empty()).then_some(())
    });
}

fn views(host: &Host, id: &str) -> Option<u64> {
    host.entry(id)?["views"].as_u64()
}

fn wait_views(host: &Host, id: &str, n: u64) {
    wait_for(&format!("{id} to have {n} views"), || {
        (views(host, id) == Some(n)).then_some(())
    });
}

/// The Monitor at 100x30 with the overlay of `id` (the only instance) open.
fn overlay_of(host: &Host, id: &str) -> Tmux {
    let tmux = Tmux::start(host, 100, 30, &monitor_command());
    tmux.wait_text(id);
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(&format!("{id} · ctrl+\\ d closes"));
    tmux
}

/// The pane's row `row` (zero-based).
fn row(screen: &str, row: usize) -> String {
    screen.lines().nth(row).unwrap_or_default().to_string()
}

#[test]
fn monitor_lists_opens_the_overlay_forwards_keys_follows_resizes_and_shows_ends() {
    let host = Host::new();
    open_two(&host);
    let tmux = Tmux::start(&host, 100, 30, &monitor_command());

    // The list: both instances, with kind, title, state and counts.
    let screen = wait_for("the Monitor to list both instances", || {
        let s = tmux.capture();
        (s.contains(COUNTER) && s.contains(SHELL) && s.contains("2 running")).then_some(s)
    });
    assert_eq!(pane_flag(&tmux, "alternate_on"), "1");
    let counter_row = screen
        .lines()
        .find(|l| l.starts_with(COUNTER))
        .expect("a counter row");
    assert!(counter_row.contains("example.counter"), "{screen}");
    assert!(counter_row.contains("Counter"), "{screen}");
    assert!(counter_row.contains("running"), "{screen}");
    assert!(row(&screen, 1).starts_with("ID "), "{screen}");
    assert!(screen.contains("Enter open"), "{screen}");

    // Enter on the first row (sorted by id: the counter) opens the overlay;
    // its inner size (100x30 minus the margins and border: 94x26) reaches
    // the Tick as its PTY's size.
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("hosted:counter · ctrl+\\ d closes");
    let screen = tmux.wait_text("size 94x26");
    assert!(screen.contains("value: 0"), "{screen}");
    host.wait_screen(COUNTER, "size 94x26");
    wait_views(&host, COUNTER, 1);
    // The list stays visible at the edges.
    assert!(row(&screen, 0).contains("Tickloop Monitor"), "{screen}");

    // Keys go to the Tick.
    tmux.type_text("++");
    host.wait_value(COUNTER, 2);
    tmux.wait_text("value: 2");

    // A resize of the Monitor's terminal resizes the overlay and the Tick.
    tmux.resize(80, 24);
    tmux.wait_text("size 74x20");
    host.wait_screen(COUNTER, "size 74x20");

    // ctrl+\ then d closes the overlay (a detach): the Tick goes on.
    tmux.send_keys(&["C-\\", "d"]);
    let screen = tmux.wait_text("detached from hosted:counter");
    assert!(!screen.contains("ctrl+\\ d closes"), "{screen}");
    wait_views(&host, COUNTER, 0);
    assert_eq!(host.entry(COUNTER).expect("listed")["state"], "running");
    tmux.type_text("+");
    // Not in the overlay any more: the list took the key, the Tick did not.
    tmux.wait_text("Enter open ·");
    assert_eq!(host.read(COUNTER)["data"]["value"], 2);

    // The shell: j selects it, Enter opens it; it runs what is typed.
    tmux.send_keys(&["j", "Enter"]);
    tmux.wait_text("shell:sh · ctrl+\\ d closes");
    tmux.type_text("echo monitor-$((6*7))");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("monitor-42");
    host.wait_screen(SHELL, "monitor-42");

    // The program exits while shown: the overlay says why until a key.
    tmux.type_text("exit 7");
    tmux.send_keys(&["Enter"]);
    let ended = host.wait_ended(SHELL);
    let reason = ended["reason"].as_str().expect("a reason").to_string();
    assert!(reason.contains('7'), "{ended}");
    let screen = tmux.wait_text(&format!("shell:sh ended: {reason}"));
    assert!(screen.contains("press any key to close"), "{screen}");
    tmux.send_keys(&["x"]);
    // Back in the list: the row says ended, the detail line the reason.
    let screen = tmux.wait_text(&format!("shell:sh ended (exited): {reason}"));
    let shell_row = screen
        .lines()
        .find(|l| l.starts_with(SHELL))
        .expect("a shell row");
    // At 80 columns STATE has room for how it ended, not the whole reason.
    assert!(shell_row.trim_end().ends_with("exited"), "{screen}");
    assert!(screen.contains("1 running"), "{screen}");

    // Closing the counter through the CLI shows up in the list too.
    let closed = host.ok(&["close", COUNTER]);
    let reason = closed["ended"]["reason"].as_str().expect("a reason");
    tmux.wait_text("0 running");
    tmux.send_keys(&["k"]);
    let shown = "hosted:counter ended (".to_string();
    let screen = tmux.wait_text(&shown);
    let detail = screen
        .lines()
        .find(|l| l.starts_with(&shown))
        .expect("the detail line");
    // The reason, cut to the terminal's width when long.
    let start: String = reason.chars().take(20).collect();
    assert!(detail.contains(&start), "{reason:?} not in {screen}");

    // q quits and restores the terminal.
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
}

#[test]
fn monitor_at_80x24_shows_a_tick_closed_while_shown_and_restores_at_sigterm() {
    let host = Host::new();
    open_two(&host);
    let tmux = Tmux::start(&host, 80, 24, &monitor_command());
    let screen = wait_for("the Monitor to list both instances", || {
        let s = tmux.capture();
        (s.contains(COUNTER) && s.contains(SHELL) && s.contains("2 running")).then_some(s)
    });
    // The ids whole, and the state column still on screen.
    let counter_row = screen
        .lines()
        .find(|l| l.starts_with("hosted:counter "))
        .expect("a counter row");
    assert!(counter_row.trim_end().ends_with("running"), "{screen}");
    assert!(
        screen.lines().any(|l| l.starts_with("shell:sh ")),
        "{screen}"
    );

    // The overlay at 80x24: 74x20 inside.
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("size 74x20");
    host.wait_screen(COUNTER, "size 74x20");
    tmux.type_text("+");
    host.wait_value(COUNTER, 1);

    // Closed through the CLI while shown: the overlay says why.
    let closed = host.ok(&["close", COUNTER]);
    let reason = closed["ended"]["reason"].as_str().expect("a reason");
    let screen = tmux.wait_text("press any key to close");
    assert!(screen.contains("hosted:counter ended"), "{screen}");
    let start: String = reason.split(' ').take(2).collect::<Vec<_>>().join(" ");
    assert!(screen.contains(&start), "{reason:?} not in {screen}");
    tmux.send_keys(&["Space"]);
    tmux.wait_text("1 running");

    // The shell's overlay, then SIGTERM to the Monitor: it restores the
    // terminal and leaves the shell running.
    tmux.send_keys(&["j", "Enter"]);
    tmux.wait_text("shell:sh · ctrl+\\ d closes");
    wait_views(&host, SHELL, 1);
    let pid = tmux.command_pid();
    // SAFETY: plain kill(2) of the Monitor, a child of the pane's shell.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
    assert_eq!(pane_flag(&tmux, "cursor_flag"), "1");
    wait_views(&host, SHELL, 0);
    assert_eq!(host.entry(SHELL).expect("listed")["state"], "running");
}

#[test]
fn monitor_quits_on_ctrl_c_with_no_instances() {
    let host = Host::new();
    let tmux = Tmux::start(&host, 100, 30, &monitor_command());
    tmux.wait_text("0 instances");
    tmux.wait_text("no instances");
    tmux.send_keys(&["C-c"]);
    tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
}

#[test]
fn the_overlay_scrolls_the_ticks_history_and_a_key_returns_to_live() {
    let host = Host::new();
    host.open_sh(
        "hist",
        "for i in $(seq 1 100); do echo hist-$i; done; echo bottom-line; exec cat",
        "bottom-line",
    );
    let tmux = overlay_of(&host, "shell:hist");
    // The overlay's inner size (94x26) became the PTY's; the shell's output
    // reflowed into it, with the rest in history.
    tmux.wait_text("bottom-line");
    tmux.send_keys(&["S-PPage"]);
    let back = wait_for("the overlay to show its history marker", || {
        let s = tmux.capture();
        (s.contains("[25/") && !s.contains("bottom-line")).then_some(s)
    });
    assert!(back.contains("hist-"), "{back}");
    assert!(host.screen("shell:hist").contains("bottom-line"));
    // A key returns to live and goes no further; the next reaches the
    // program.
    tmux.type_text("q");
    tmux.wait_text("bottom-line");
    tmux.type_text("z");
    let echoed = host.wait_screen("shell:hist", "z");
    assert!(
        !echoed.lines().any(|l| l.contains('q')),
        "the key that left scrollback reached the program: {echoed}"
    );
}

#[test]
fn a_program_that_ends_while_shown_leaves_its_last_output_in_the_overlay() {
    let host = Host::new();
    host.open_sh(
        "brief",
        "echo waiting; read x; echo last-words-$((6*7)); exit 3",
        "waiting",
    );
    let tmux = overlay_of(&host, "shell:brief");
    tmux.wait_text("waiting");
    // The program prints and exits at once: its last line stays shown with
    // the reason it ended.
    tmux.send_keys(&["Enter"]);
    let screen = tmux.wait_text("press any key to close");
    assert!(screen.contains("last-words-42"), "{screen}");
}

#[test]
fn the_list_previews_filters_asks_before_closing_and_says_what_r_reloads() {
    let host = Host::new();
    open_two(&host);
    let tmux = Tmux::start(&host, 120, 30, &monitor_command());
    // The preview under the list shows the selected instance's screen (the
    // counter, first), and every row has an activity column.
    tmux.wait_text("preview of hosted:counter (120x30)");
    let screen = tmux.wait_text("value: 0");
    assert!(row(&screen, 1).contains("ACTIVE"), "{screen}");
    // Once the shell has printed its prompt, its row shows an age, not `-`
    // (the Monitor may have drawn the row before the prompt came).
    wait_for("the shell row's activity age", || {
        let screen = tmux.capture();
        let shell_row = screen.lines().find(|l| l.starts_with(SHELL))?.to_string();
        shell_row
            .split_whitespace()
            .any(|w| w.ends_with('s') && w[..w.len() - 1].parse::<u64>().is_ok())
            .then_some(())
    });
    // p hides the preview and shows it again.
    tmux.send_keys(&["p"]);
    wait_for("the preview to go", || {
        (!tmux.capture().contains("preview of")).then_some(())
    });
    tmux.send_keys(&["p"]);
    tmux.wait_text("preview of hosted:counter");

    // `/` filters as it is typed; Enter keeps it, Esc clears it.
    tmux.send_keys(&["/"]);
    tmux.type_text("sh");
    let screen = tmux.wait_text("filter /sh (1 shown)");
    assert!(!screen.lines().any(|l| l.starts_with(COUNTER)), "{screen}");
    tmux.send_keys(&["Enter"]);
    // The only row left is selected: the preview follows it.
    tmux.wait_text("preview of shell:sh");
    tmux.send_keys(&["Escape"]);
    wait_for("the filter to clear", || {
        let s = tmux.capture();
        (s.lines().any(|l| l.starts_with(COUNTER)) && !s.contains("filter /")).then_some(())
    });

    // r reloads an artifact only; for a shell it says what else to do,
    // without contradicting the list.
    tmux.send_keys(&["r"]);
    tmux.wait_text("shell:sh is not one: x closes it");

    // x asks first: any key but y keeps the instance.
    tmux.send_keys(&["x"]);
    tmux.wait_text("close (it ends) shell:sh? y: yes");
    tmux.send_keys(&["n"]);
    tmux.wait_text("shell:sh left as it is");
    assert_eq!(host.entry(SHELL).expect("listed")["state"], "running");
    tmux.send_keys(&["x"]);
    tmux.wait_text("close (it ends) shell:sh?");
    tmux.send_keys(&["y"]);
    tmux.wait_text("shell:sh closed");
    host.wait_ended(SHELL);
    tmux.wait_text("1 running");
    // An ended instance: x forgets it, after asking.
    tmux.send_keys(&["x"]);
    tmux.wait_text("forget (it has ended) shell:sh?");
    tmux.send_keys(&["y"]);
    tmux.wait_text("1 instance, 1 running");
    assert!(host.entry(SHELL).is_none());
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn a_attaches_full_screen_and_detaching_returns_to_the_monitor() {
    let host = Host::new();
    host.open_sh("full", "echo ready-$((6*7)); exec cat", "ready-42");
    let tmux = Tmux::start(&host, 100, 30, &monitor_command());
    tmux.wait_text("shell:full");
    tmux.send_keys(&["a"]);
    // The attach view takes the whole terminal: the PTY follows its size.
    wait_views(&host, "shell:full", 1);
    let screen = tmux.wait_text("ready-42");
    assert!(!screen.contains("Tickloop Monitor"), "{screen}");
    tmux.type_text("typed-here");
    host.wait_screen("shell:full", "typed-here");
    // The prefix key then d detaches: back in the Monitor, the shell runs.
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("back from shell:full");
    wait_views(&host, "shell:full", 0);
    // Prefix m in an attach started by the Monitor pops the activity;
    // Tab there returns to the Monitor.
    tmux.send_keys(&["a"]);
    wait_views(&host, "shell:full", 1);
    // (The view puts the terminal in raw mode before it says hello to the
    // launcher, so once it is counted ctrl+\ is a key, not SIGQUIT.)
    tmux.send_keys(&["C-\\", "m"]);
    tmux.wait_text("activity · shell:full");
    tmux.send_keys(&["Tab"]);
    tmux.wait_text("back from shell:full");
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
}

#[test]
fn shell_titles_and_activity_survive_a_tickhost_restart() {
    let host = Host::new();
    host.ok(&["open", "--shell", "--id", "sh", "--", "sh"]);
    host.ok(&["input", SHELL, "echo hi\r"]);
    host.wait_screen(SHELL, "hi");
    let before = wait_for("the shell's last output time", || {
        host.entry(SHELL)
            .filter(|e| e["last_output_at"].is_string())
    });
    assert_eq!(before["title"], "sh", "{before}");
    let old = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) of the tickhost this test started.
    assert_eq!(unsafe { libc::kill(old, libc::SIGKILL) }, 0);
    wait_gone(old, "the killed tickhost");
    let after = host.entry(SHELL).expect("listed again");
    // The program as typed, not the path it was run from.
    assert_eq!(after["title"], "sh", "{after}");
    assert!(after["last_output_at"].is_string(), "{after}");
}

#[test]
fn i_shows_the_selected_instance_s_activity_over_the_list() {
    let host = Host::new();
    open_two(&host);
    host.ok(&[
        "call",
        "counter",
        "increment",
        r#"{"amount":6}"#,
        "--revision",
        "1",
    ]);
    let tmux = Tmux::start(&host, 120, 30, &monitor_command());
    tmux.wait_text(SHELL);
    // The counter is the first row.
    tmux.send_keys(&["g", "i"]);
    let shown = tmux.wait_text(r#"increment {"amount":6} → executed"#);
    assert!(shown.contains("activity · hosted:counter"), "{shown}");
    assert!(shown.contains("mutates  Add an integer"), "{shown}");
    tmux.send_keys(&["Escape"]);
    wait_for("the activity to close", || {
        let s = tmux.capture();
        (!s.contains("activity · hosted:counter") && s.contains("Tickloop Monitor")).then_some(())
    });
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn quitting_after_an_attach_gives_the_shell_its_screen_back() {
    let host = Host::new();
    host.open_sh("full", "echo ready-$((6*7)); exec cat", "ready-42");
    // What the shell showed before the Monitor must be there after it.
    let command = format!("echo shell-line-before; {}", monitor_command());
    let tmux = Tmux::start(&host, 100, 30, &command);
    tmux.wait_text("shell:full");
    tmux.send_keys(&["a"]);
    wait_views(&host, "shell:full", 1);
    tmux.wait_text("ready-42");
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("back from shell:full");
    wait_views(&host, "shell:full", 0);
    // Back from the attach, the Monitor is on the alternate screen again.
    assert_eq!(pane_flag(&tmux, "alternate_on"), "1");
    tmux.send_keys(&["q"]);
    let screen = tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(pane_flag(&tmux, "alternate_on"), "0");
    assert!(screen.contains("shell-line-before"), "{screen}");
    assert!(!screen.contains("Tickloop Monitor"), "{screen}");
    assert!(!screen.contains("back from"), "{screen}");
}

#[test]
fn question_mark_lists_every_key_whole_at_120_and_60_columns() {
    let host = Host::new();
    open_two(&host);
    for (cols, rows) in [(120, 30), (60, 24)] {
        let tmux = Tmux::start(&host, cols, rows, &monitor_command());
        tmux.wait_text(SHELL);
        tmux.send_keys(&["?"]);
        let screen = tmux.wait_text("any key closes this");
        for (key, what) in [
            ("/", "filter as you type; Esc clears it"),
            ("p", "show or hide the preview"),
            ("q  ctrl+c", "quit"),
            ("r", "reload an artifact: (its current file)"),
        ] {
            let line = screen
                .lines()
                .find(|l| l.contains(what))
                .unwrap_or_else(|| panic!("{what:?} not shown at {cols}x{rows}:\n{screen}"));
            assert!(line.contains(key), "{line}");
        }
        // Any key closes it, and does nothing else.
        tmux.send_keys(&["q"]);
        wait_for("the keys to close", || {
            let s = tmux.capture();
            (!s.contains("any key closes this") && s.contains("Tickloop Monitor")).then_some(())
        });
        // The overlay's keys, the prefix then ?.
        tmux.send_keys(&["Enter"]);
        tmux.wait_text("closes the overlay (it goes on)");
        tmux.send_keys(&["C-\\", "?"]);
        let screen = tmux.wait_text("keys of the overlay");
        assert!(
            screen.contains("close the overlay; the program goes on"),
            "{screen}"
        );
        tmux.send_keys(&["Space"]);
        wait_for("the overlay's keys to close", || {
            (!tmux.capture().contains("keys of the overlay")).then_some(())
        });
        tmux.send_keys(&["C-\\", "d"]);
        tmux.wait_text("detached from");
        tmux.send_keys(&["q"]);
        tmux.wait_text("ATTACH-EXIT 0");
    }
}

#[test]
fn r_reloads_an_artifact_from_the_list() {
    let host = Host::new();
    // The counter Tick is a file with a shebang: an artifact as it is.
    let opened = host.ok(&["open", "--artifact", &tick("counter.py"), "--id", "art"]);
    assert_eq!(opened["generation"], 1, "{opened}");
    let tmux = Tmux::start(&host, 100, 30, &monitor_command());
    tmux.wait_text("artifact:art");
    tmux.send_keys(&["r"]);
    tmux.wait_text("artifact:art reloaded: generation 2");
    assert_eq!(host.entry("artifact:art").expect("listed")["generation"], 2);
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

/// `w` opens "what agents did": two instances' agent actions in order, in
/// the words of `tickloop activity`, the next one followed; Esc goes back.
#[test]
fn w_shows_what_agents_did_on_every_instance_in_order_and_follows() {
    let host = Host::new();
    let alpha = host.open_bash_agents_type_in("alpha");
    let beta = host.open_bash_agents_type_in("beta");
    let agent = [("CLAUDECODE", "1")];
    host.spawn_with(&agent, &["run", &alpha, "--", "echo one"])
        .finish()
        .expect(0);
    host.spawn_with(&agent, &["run", &beta, "--", "false"])
        .finish()
        .expect(1);
    let tmux = Tmux::start(&host, 120, 30, &monitor_command());
    tmux.wait_text("2 running");
    tmux.send_keys(&["w"]);
    let screen = tmux.wait_text("run `false` → exited 1");
    assert!(screen.contains("what agents did"), "{screen}");
    let at = |text: &str| {
        screen
            .lines()
            .position(|l| l.contains(text))
            .unwrap_or_else(|| panic!("{text:?} not shown:\n{screen}"))
    };
    let one = at(&format!(
        "{alpha} Claude Code (shell) run `echo one` → exited 0"
    ));
    let two = at(&format!(
        "{beta} Claude Code (shell) run `false` → exited 1"
    ));
    assert!(one < two, "oldest first:\n{screen}");
    // What an agent does next shows up while it is open.
    host.spawn_with(&agent, &["keys", &alpha, "C-l"])
        .finish()
        .expect(0);
    let screen = tmux.wait_text(&format!("{alpha} Claude Code (shell) keys C-l → pressed"));
    assert!(screen.contains("run `echo one`"), "{screen}");
    tmux.send_keys(&["Escape"]);
    tmux.wait_text("Enter open ·");
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}
