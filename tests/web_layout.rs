//! The page of `tickloop web` in real use (issue 50): Debian's Chromium
//! through Playwright (tests/common/web.rs), beside a real bash whose state
//! holds a 3,000-character line and the 60 lines of an `ls -la`:
//!
//! - at 1280×800 and 1920×1080 the terminal keeps at least half the width
//!   whatever the state pane holds (its commands, then its JSON), the page
//!   never gets wider than the window, the tabs stay clickable and the
//!   terminal takes typing;
//! - the shell's `tput cols` and `tput lines` are the columns and rows the
//!   page draws, at each size (a ruler of `tput cols` characters fills one
//!   row of the page exactly);
//! - underscores show at 1× and 2× pixel density (pixels counted in the
//!   page's own screenshot of the `_` of `echo $PROMPT_COMMAND`);
//! - at 390×844, the list (with STATE: an ended instance reads ended), then
//!   the instance (terminal above its state, its state in its head);
//! - the list shows and scrolls whole rows, and says so when it is empty.
//!
//! (The activity pane's words are tried in tests/web.rs, on a Tick whose
//! record holds state updates.)
//!
//! Screenshots of each go to `target/tmp/web-layout/<test>/`, printed as
//! they are taken. Without Chromium every trial is reported ignored.

mod common;

use common::optional::{self, Case};
use common::web::{missing_chromium, Browser, Web};
use common::Host;
use serde_json::{json, Value};
use std::path::PathBuf;

fn main() {
    optional::run(
        vec![
            Case {
                name: "beside_a_long_shell_state_the_terminal_keeps_its_width_and_takes_typing",
                body: terminal_keeps_its_width,
            },
            Case {
                name: "underscores_show_at_1x_and_2x_pixel_density",
                body: underscores_show,
            },
            Case {
                name: "on_a_phone_the_list_then_the_instance_with_state",
                body: on_a_phone,
            },
            Case {
                name: "the_list_shows_whole_rows_and_says_when_it_is_empty",
                body: whole_rows_and_empty,
            },
        ],
        missing_chromium(),
    )
}

/// The folder of `case`'s screenshots, made and printed.
fn screenshots(case: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("web-layout")
        .join(case);
    std::fs::create_dir_all(&dir).expect("the screenshots' folder");
    eprintln!("{case}: screenshots in {}", dir.display());
    dir
}

/// Saves what the page shows as `dir/NAME.png`.
fn screenshot(browser: &mut Browser, dir: &std::path::Path, name: &str) {
    let path = dir.join(format!("{name}.png"));
    browser.cmd(json!({"op": "screenshot", "path": path}));
    eprintln!("screenshot: {}", path.display());
}

/// A real bash (`shell:work`, with its integration) whose state holds a
/// 3,000-character line and the 60 lines of `ls -la` of a folder of 57
/// files; its id.
fn shell_with_a_long_state(host: &Host) -> String {
    let files = host.scratch().join("files");
    std::fs::create_dir_all(&files).expect("a folder");
    for n in 1..=57 {
        std::fs::write(files.join(format!("file_with_a_long_name_{n}.txt")), "").expect("a file");
    }
    let id = host.open_bash("work");
    let long = host.ok(&[
        "run",
        &id,
        "--",
        "head -c 3000 /dev/zero | tr '\\0' x; echo",
    ]);
    assert_eq!(long["command"]["exit"], 0, "{long}");
    let ls = host.ok(&["run", &id, "--", "ls -la files"]);
    assert_eq!(ls["command"]["exit"], 0, "{ls}");
    let state = host.read(&id);
    let outputs: Vec<&str> = state["data"]["commands"]
        .as_array()
        .expect("the shell's commands")
        .iter()
        .filter_map(|c| c["output"].as_str())
        .collect();
    assert!(
        outputs.iter().any(|o| o.lines().any(|l| l.len() == 3000)),
        "no 3,000-character line in {state}"
    );
    assert!(
        outputs.iter().any(|o| o.lines().count() == 60),
        "no 60 lines of ls -la in {state}"
    );
    id
}

/// The page's geometry: the window, the page's own width, the terminal's
/// column, what xterm.js draws in it, the side pane and the list.
const GEOMETRY: &str = r#"() => {
  const box = (s) => { const e = document.querySelector(s); if (!e) return null;
    const r = e.getBoundingClientRect(); return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
  const tabs = [...document.querySelectorAll('#side nav button')].map((b) => {
    const r = b.getBoundingClientRect();
    return document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2) === b; });
  return {vw: innerWidth, vh: innerHeight, page: document.documentElement.scrollWidth,
    terminal: box('#terminal'), screen: box('.xterm-screen'),
    side: box('#side'), list: box('#list-pane'), head: box('#list thead tr'), row: box('#list tbody tr'),
    tabs_clickable: tabs};
}"#;

/// Asserts the desktop layout at the current size: the page no wider than
/// the window, the terminal at least half of it, drawn whole inside its
/// column, the list one row at least, every tab clickable.
fn assert_desktop_layout(browser: &mut Browser, what: &str) {
    let g = browser.eval(GEOMETRY);
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let vw = num(&g["vw"]);
    eprintln!(
        "{what}: terminal {} px of {vw}, side pane {} px, page {} px wide",
        g["terminal"]["width"], g["side"]["width"], g["page"]
    );
    assert!(
        num(&g["page"]) <= vw,
        "{what}: the page is wider than the window: {g}"
    );
    assert!(
        num(&g["terminal"]["width"]) >= vw / 2.0,
        "{what}: the terminal has less than half the width: {g}"
    );
    assert!(
        num(&g["screen"]["right"]) <= num(&g["terminal"]["right"]) + 0.5
            && num(&g["screen"]["bottom"]) <= num(&g["terminal"]["bottom"]) + 0.5,
        "{what}: the terminal is drawn past its column: {g}"
    );
    assert!(
        num(&g["side"]["right"]) <= vw + 0.5,
        "{what}: the side pane leaves the window: {g}"
    );
    assert!(
        num(&g["list"]["height"]) >= num(&g["head"]["height"]) + num(&g["row"]["height"]) - 0.5,
        "{what}: the list collapsed: {g}"
    );
    assert_eq!(
        g["tabs_clickable"],
        json!([true, true, true]),
        "{what}: a tab is covered: {g}"
    );
}

/// Waits until xterm.js is fitted to its column (less than a cell to
/// spare each way) and drawn: then the page has sent that size.
fn wait_fitted(browser: &mut Browser, what: &str) {
    browser.wait(
        &format!("the terminal fitted to its column ({what})"),
        r#"() => {
          const term = document.querySelector('.xterm'), screen = document.querySelector('.xterm-screen');
          const rows = [...document.querySelectorAll('.xterm-rows > div')];
          if (!term || !screen || !rows.length) return false;
          const host = term.parentElement, style = getComputedStyle(host);
          let cellW = 0;
          for (const row of rows) {
            const text = document.createTreeWalker(row, NodeFilter.SHOW_TEXT).nextNode();
            if (!text || !text.length) continue;
            const r = document.createRange(); r.setStart(text, 0); r.setEnd(text, 1);
            cellW = r.getBoundingClientRect().width;
            if (cellW) break;
          }
          const s = screen.getBoundingClientRect();
          const width = host.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
          const height = host.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
          const cellH = s.height / rows.length;
          const spareW = width - s.width, spareH = height - s.height;
          return cellW > 0 && spareW > -0.5 && spareW < cellW + 1 && spareH > -0.5 && spareH < cellH + 1;
        }"#,
    );
}

/// Types `text` and Enter into the page's terminal.
fn type_line(browser: &mut Browser, text: &str) {
    browser.cmd(json!({"op": "focus", "selector": ".xterm-helper-textarea"}));
    browser.cmd(json!({"op": "type", "text": text}));
    browser.cmd(json!({"op": "press", "key": "Enter"}));
}

/// Asks the shell, by typing in the page, for `tput cols` and `tput
/// lines` and for a ruler of `tput cols` characters, and asserts that the
/// page draws exactly that: the ruler on one row, ending at the drawn
/// screen's right edge, inside the terminal's column, and as many rows as
/// `tput lines`. Returns the columns.
fn assert_tput_is_drawn(browser: &mut Browser, what: &str, asked: u32) -> u64 {
    // `size$((N+1))` reads `sizeN+1` only in the answer to this very line.
    type_line(
        browser,
        &format!("clear; echo \"size$(({asked}+1)) cols=$(tput cols) rows=$(tput lines)\"; printf '%*s\\n' \"$(tput cols)\" '' | tr ' ' '#'"),
    );
    let answer = format!("size{} ", asked + 1);
    let seen = browser.wait(
        &format!("tput's answer and its ruler ({what})"),
        &r#"() => {
          const rows = [...document.querySelectorAll('.xterm-rows > div')];
          const said = rows.map((r) => r.textContent.includes(ANSWER) && r.textContent.match(/cols=(\d+) rows=(\d+)/)).find(Boolean);
          const at = rows.map((r) => /^#+$/.test(r.textContent.trimEnd())).lastIndexOf(true);
          if (!said || at < 0) return null;
          const ruler = rows[at], text = ruler.textContent.trimEnd();
          let node, last = null; const walk = document.createTreeWalker(ruler, NodeFilter.SHOW_TEXT);
          while ((node = walk.nextNode())) if (node.data.trimEnd().length) last = node;
          const range = document.createRange();
          const end = last.data.trimEnd().length; range.setStart(last, end - 1); range.setEnd(last, end);
          const cell = range.getBoundingClientRect();
          const next = rows[at + 1] ? rows[at + 1].textContent : '';
          const screen = document.querySelector('.xterm-screen').getBoundingClientRect();
          const column = document.querySelector('#terminal').getBoundingClientRect();
          return {cols: +said[1], rows: +said[2], ruler: text.length, wrapped: next.startsWith('#'),
            ruler_right: cell.right, cell: cell.width, screen_right: screen.right, column_right: column.right,
            drawn_rows: rows.length};
        }"#
        .replace("ANSWER", &json!(answer).to_string()),
    );
    eprintln!(
        "{what}: tput cols {} lines {}; the page draws {} rows",
        seen["cols"], seen["rows"], seen["drawn_rows"]
    );
    let num = |k: &str| seen[k].as_f64().unwrap_or(f64::NAN);
    assert_eq!(
        seen["ruler"], seen["cols"],
        "{what}: a ruler of tput cols wrapped: {seen}"
    );
    assert_eq!(seen["wrapped"], false, "{what}: the ruler wrapped: {seen}");
    assert!(
        (num("screen_right") - num("ruler_right")).abs() < num("cell") / 2.0,
        "{what}: the page draws more columns than tput cols: {seen}"
    );
    assert!(
        num("ruler_right") <= num("column_right") + 0.5,
        "{what}: the ruler's end is hidden: {seen}"
    );
    assert_eq!(
        seen["rows"], seen["drawn_rows"],
        "{what}: tput lines is not the rows drawn: {seen}"
    );
    seen["cols"].as_u64().unwrap_or(0)
}

fn terminal_keeps_its_width() {
    let dir = screenshots("terminal_keeps_its_width");
    let host = Host::new();
    let id = shell_with_a_long_state(&host);
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.cmd(json!({"op": "viewport", "width": 1280, "height": 800}));
    browser.log_in(&web);
    browser.open_instance(&id, "bash-");
    // The state pane shows the commands as a person reads them.
    let commands = browser.wait(
        "the shell's commands in the state pane",
        "() => { const c = [...document.querySelectorAll('#state-shell .commands > li')]; return c.length === 2 && c.map((li) => li.querySelector('summary').textContent); }",
    );
    assert!(
        commands[0]
            .as_str()
            .is_some_and(|s| s.starts_with("ls -la files")
                && s.contains("exited 0")
                && s.contains("60 lines")),
        "{commands}"
    );
    let mut cols = Vec::new();
    for (width, height) in [(1280, 800), (1920, 1080)] {
        let what = format!("{width}×{height}");
        browser.cmd(json!({"op": "viewport", "width": width, "height": height}));
        wait_fitted(&mut browser, &what);
        assert_desktop_layout(&mut browser, &what);
        // The commands' output unfolded, then the JSON with its
        // 3,000-character line: the terminal keeps its width.
        let unfold = "#state-shell .commands > li[data-n='1'] summary";
        let shown = [
            (
                unfold,
                "output unfolded",
                "() => document.querySelector('#state-shell .commands > li[data-n=\"1\"] .output').textContent.length >= 3000",
                "commands",
            ),
            (
                "#state-as-json",
                "the JSON shown",
                "() => !document.querySelector('#state-raw').hidden && document.querySelector('#state-raw').textContent.includes('x'.repeat(3000))",
                "json",
            ),
        ];
        for (click, shows, until, name) in shown {
            browser.cmd(json!({"op": "click", "selector": click}));
            browser.wait(shows, until);
            // A pane that grows may move the column's edge for a moment:
            // the layout is judged once xterm.js is fitted again.
            let now = format!("{what}, {shows}");
            wait_fitted(&mut browser, &now);
            assert_desktop_layout(&mut browser, &now);
            screenshot(&mut browser, &dir, &format!("{width}x{height}-{name}"));
        }
        for click in ["#state-as-json", unfold] {
            browser.cmd(json!({"op": "click", "selector": click}));
        }
        // Typing reaches the shell, and its size is the size drawn.
        wait_fitted(&mut browser, &format!("{what}, the panes folded again"));
        type_line(&mut browser, &format!("echo typed-$((6*{width}))"));
        let product = 6 * width;
        browser.wait(
            &format!("what was typed at {what}"),
            &format!("() => document.querySelector('.xterm-rows').textContent.includes('typed-{product}')"),
        );
        cols.push(assert_tput_is_drawn(&mut browser, &what, width));
        screenshot(&mut browser, &dir, &format!("{width}x{height}-tput"));
    }
    assert!(
        cols[1] > cols[0],
        "a wider window gives more columns: {cols:?}"
    );
    // The activity pane beside the terminal, the layout the same.
    browser.cmd(json!({"op": "click", "selector": "#side nav button[data-tab=activity]"}));
    browser.wait(
        "the activity",
        "() => document.querySelectorAll('#tab-activity li').length > 0",
    );
    wait_fitted(&mut browser, "the activity shown");
    assert_desktop_layout(&mut browser, "the activity shown");
    screenshot(&mut browser, &dir, "1920x1080-activity");
}

/// Where the `_` of `PROMPT_COMMAND` (and, to check the measure, the
/// blank before `$`) is drawn: the glyph's columns over its row's height.
const UNDERSCORE: &str = r#"() => {
  const cell = (row, at) => {
    const walk = document.createTreeWalker(row, NodeFilter.SHOW_TEXT); let seen = 0, node;
    while ((node = walk.nextNode())) {
      const i = at - seen;
      if (i >= 0 && i < node.length) {
        const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
        const g = r.getBoundingClientRect(), line = row.getBoundingClientRect();
        return {x: g.left, y: line.top, width: g.width, height: line.height, ch: node.data[i]};
      }
      seen += node.length;
    }
    return null;
  };
  for (const row of document.querySelectorAll('.xterm-rows > div')) {
    const at = row.textContent.lastIndexOf('echo $PROMPT_COMMAND');
    if (at >= 0) return {underscore: cell(row, at + 12), blank: cell(row, at + 4), dollar: cell(row, at + 5)};
  }
  return null;
}"#;

fn underscores_show() {
    let dir = screenshots("underscores_show");
    let host = Host::new();
    let id = host.open_bash("under");
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    browser.open_instance(&id, "bash-");
    for scale in [1, 2] {
        browser.cmd(json!({"op": "context", "width": 1280, "height": 800, "scale": scale}));
        browser.open_instance(&id, "bash-");
        browser.cmd(json!({"op": "focus", "selector": ".xterm-helper-textarea"}));
        browser.cmd(json!({"op": "type", "text": "echo $PROMPT_COMMAND"}));
        let cells = browser.wait("the line typed", UNDERSCORE);
        for (name, ch) in [("underscore", "_"), ("blank", " "), ("dollar", "$")] {
            assert_eq!(cells[name]["ch"], ch, "{cells}");
        }
        let ink = |browser: &mut Browser, cell: &Value| {
            let clip = json!({"x": cell["x"], "y": cell["y"], "width": cell["width"], "height": cell["height"]});
            browser.cmd(json!({"op": "ink", "clip": clip}))["ink"]
                .as_u64()
                .unwrap_or(0)
        };
        let underscore = ink(&mut browser, &cells["underscore"]);
        let dollar = ink(&mut browser, &cells["dollar"]);
        let blank = ink(&mut browser, &cells["blank"]);
        eprintln!(
            "at {scale}×: ink of `_` {underscore}, of `$` {dollar}, of a blank {blank} (pixels)"
        );
        assert!(dollar > 0, "at {scale}×, the measure sees no `$`: {cells}");
        assert_eq!(blank, 0, "at {scale}×, a blank cell has ink: {cells}");
        assert!(
            underscore > 0,
            "at {scale}×, the underscore is not drawn: {cells}"
        );
        screenshot(&mut browser, &dir, &format!("{scale}x"));
        browser.cmd(json!({"op": "press", "key": "Control+U"}));
    }
}

fn on_a_phone() {
    let dir = screenshots("on_a_phone");
    let host = Host::new();
    let id = shell_with_a_long_state(&host);
    host.ok(&[
        "open",
        "--shell",
        "--name",
        "done",
        "--",
        "sh",
        "-c",
        "echo done",
    ]);
    host.wait_ended("shell:done");
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.log_in(&web);
    browser.cmd(json!({"op": "context", "width": 390, "height": 844, "scale": 3}));
    // The list, each row's STATE in sight: the ended one reads ended.
    let states = browser.wait(
        "both rows' STATE in sight",
        r#"() => {
          const rows = [...document.querySelectorAll('#list tbody tr')];
          if (rows.length !== 2) return null;
          const out = {};
          for (const row of rows) {
            const td = row.querySelector('[data-col=state]');
            const r = td.getBoundingClientRect();
            if (getComputedStyle(td).display === 'none' || r.width < 30 || r.right > innerWidth) return null;
            out[row.dataset.id] = td.textContent;
          }
          return document.documentElement.scrollWidth <= innerWidth && out;
        }"#,
    );
    assert_eq!(states[id.as_str()], "running", "{states}");
    assert!(
        states["shell:done"]
            .as_str()
            .is_some_and(|s| s.starts_with("ended")),
        "{states}"
    );
    screenshot(&mut browser, &dir, "list");
    // Then the instance: the terminal above its state, its state in its head.
    browser.cmd(json!({"op": "click", "selector": format!("#list tbody tr[data-id='{id}']")}));
    browser.wait(
        "the shell's terminal",
        "() => document.querySelector('.xterm-rows') && document.querySelector('.xterm-rows').textContent.includes('bash-')",
    );
    wait_fitted(&mut browser, "390×844");
    let layout = browser.wait(
        "the instance on a phone",
        r#"() => {
          const box = (s) => document.querySelector(s).getBoundingClientRect();
          const list = document.querySelector('#list-pane');
          const state = document.querySelector('#instance-state');
          const commands = document.querySelectorAll('#state-shell .commands > li').length;
          if (!commands) return null;
          return {list_shown: list.getClientRects().length > 0, terminal: box('#terminal').toJSON(),
            side: box('#side').toJSON(), state: state.textContent, state_right: box('#instance-state').right,
            page: document.documentElement.scrollWidth, vw: innerWidth, commands};
        }"#,
    );
    assert_eq!(layout["list_shown"], false, "{layout}");
    assert_eq!(layout["state"], "running", "{layout}");
    let num = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    assert!(
        num(&layout["state_right"]) <= num(&layout["vw"]),
        "{layout}"
    );
    assert!(num(&layout["page"]) <= num(&layout["vw"]), "{layout}");
    assert!(
        num(&layout["terminal"]["bottom"]) <= num(&layout["side"]["top"]) + 0.5,
        "the terminal is above its side pane: {layout}"
    );
    assert!(
        num(&layout["terminal"]["width"]) >= num(&layout["vw"]) - 1.0,
        "{layout}"
    );
    assert_tput_is_drawn(&mut browser, "390×844", 390);
    screenshot(&mut browser, &dir, "instance");
    // Back to the list, and the ended one says so in its head too, and
    // shows what it showed last.
    browser.cmd(json!({"op": "click", "selector": "#back"}));
    browser.cmd(json!({"op": "click", "selector": "#list tbody tr[data-id='shell:done']"}));
    let head = browser.wait(
        "the ended instance's head",
        "() => { const s = document.querySelector('#instance-state'); return s.textContent.startsWith('ended') && s.getBoundingClientRect().right <= innerWidth && document.querySelector('.xterm-rows').textContent.includes('done') && s.textContent; }",
    );
    assert!(
        head.as_str().is_some_and(|s| s.starts_with("ended")),
        "{head}"
    );
    screenshot(&mut browser, &dir, "ended-instance");
}

fn whole_rows_and_empty() {
    let dir = screenshots("whole_rows_and_empty");
    let host = Host::new();
    host.start_tickhost_with(&[]);
    let web = Web::start(&host, &[]);
    let mut browser = Browser::start(&[]);
    browser.cmd(json!({"op": "viewport", "width": 1280, "height": 800}));
    let page = browser.goto(&web.login_url());
    assert_eq!(page["status"], 200, "{page}");
    browser.wait(
        "the empty state",
        "() => { const e = document.querySelector('#empty'); return !e.hidden && e.getClientRects().length > 0 && document.querySelector('#list').getClientRects().length === 0; }",
    );
    screenshot(&mut browser, &dir, "empty");
    // A bash, and twelve programs that ended: more rows than the list shows
    // beside an instance.
    let id = host.open_bash("work");
    for n in 0..12 {
        let name = format!("ended{n:02}");
        host.ok(&["open", "--shell", "--name", &name, "--", "sh", "-c", "true"]);
    }
    for n in 0..12 {
        host.wait_ended(&format!("shell:ended{n:02}"));
    }
    browser.wait(
        "13 rows",
        "() => document.querySelectorAll('#list tbody tr').length === 13",
    );
    browser.open_instance(&id, "bash-");
    let whole = r#"() => {
      const wrap = document.querySelector('#list-pane .table-wrap');
      const head = document.querySelector('#list thead tr').getBoundingClientRect().height;
      const row = document.querySelector('#list tbody tr').getBoundingClientRect().height;
      const shown = (wrap.clientHeight - head) / row;
      return {shown, scrolled: wrap.scrollTop / row, scrollable: wrap.scrollHeight > wrap.clientHeight, row};
    }"#;
    let before = browser.eval(whole);
    let shown = before["shown"].as_f64().unwrap_or(f64::NAN);
    assert!(
        shown >= 1.0 && (shown - shown.round()).abs() < 0.01,
        "the list shows part of a row: {before}"
    );
    assert_eq!(before["scrollable"], true, "{before}");
    // Scrolled by a row and a half, it comes to rest on a whole row.
    browser.eval(
        "() => { const w = document.querySelector('#list-pane .table-wrap'); w.scrollBy(0, 1.5 * document.querySelector('#list tbody tr').getBoundingClientRect().height); }",
    );
    let after = browser.wait(
        "the list to rest on a whole row",
        &format!(
            "() => {{ const v = ({whole})(); return v.scrolled >= 1 && Math.abs(v.scrolled - Math.round(v.scrolled)) < 0.01 && v; }}"
        ),
    );
    screenshot(&mut browser, &dir, "whole-rows");
    assert!(after["scrolled"].as_f64().unwrap_or(0.0) >= 1.0, "{after}");
}
