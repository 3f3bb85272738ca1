// tickloop web's page: the list of instances and the held actions (one
// WebSocket, /ws/live), one instance's terminal (xterm.js on /ws/term),
// its state, tools and activity. Everything a Tick or an agent wrote is
// put in the page as text (textContent), never as markup; in questions
// and titles, what the server escaped shows in a style of its own.
"use strict";
(() => {
  const meta = (name) => {
    const m = document.querySelector(`meta[name="${name}"]`);
    return m ? m.content : "";
  };
  const csrf = meta("csrf");
  const readOnly = meta("read-only") === "true";
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, cls) => {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  };
  // Escaped text as the server sends it (parts: {text} as it is, {escape}
  // for a character shown as \u{202E}): each escape in an element of its
  // own, styled apart, so it is never taken for text typed as it reads.
  const shown = (node, parts, fallback) => {
    node.replaceChildren();
    if (!Array.isArray(parts)) {
      node.textContent = fallback === undefined || fallback === null ? "" : String(fallback);
      return node;
    }
    for (const part of parts) {
      if (typeof part.escape === "string") node.append(el("span", part.escape, "esc"));
      else node.append(document.createTextNode(String(part.text || "")));
    }
    return node;
  };
  const wsUrl = (path) => (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;

  let list = [];
  let selected = null;
  let live = null;
  let loggedOut = false;
  const prompts = new Map();
  const notified = new Set();

  function status(text, bad) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("bad", !!bad);
  }

  function notice(text) {
    const n = $("notice");
    n.textContent = text || "";
    n.hidden = !text;
  }

  // How long ago an RFC 3339 time was: 4s, 3m, 2h.
  function ago(at) {
    if (!at) return "-";
    const s = Math.max(0, Math.round((Date.now() - Date.parse(at)) / 1000));
    if (s < 60) return `${s}s`;
    if (s < 3600) return `${Math.floor(s / 60)}m`;
    return `${Math.floor(s / 3600)}h`;
  }

  // ---- the live socket: list, held actions, state, activity ----------
  function connectLive() {
    if (loggedOut) return;
    live = new WebSocket(wsUrl("/ws/live"));
    live.onopen = () => {
      live.send(JSON.stringify({ type: "auth", csrf }));
      if (selected) live.send(JSON.stringify({ type: "select", instance: selected }));
    };
    live.onmessage = (e) => onLive(JSON.parse(e.data));
    live.onclose = () => {
      if (loggedOut) return;
      status("connection lost; trying again…", true);
      setTimeout(connectLive, 2000);
    };
  }

  function onLive(m) {
    switch (m.type) {
      case "hello":
        $("read-only").hidden = !m.read_only;
        break;
      case "overview":
        list = Array.isArray(m.list) ? m.list : [];
        renderList();
        TickloopLayout.markColumns($("list"));
        renderInstanceState();
        renderHeld(m.held || []);
        if (m.problem) status(m.problem, true);
        else status(`${list.length} instance${list.length === 1 ? "" : "s"}`);
        break;
      case "state":
        if (m.instance === selected) renderState(m);
        break;
      case "activity":
        if (m.instance === selected) renderActivity(m);
        break;
      case "timeline":
        renderTimeline(m);
        break;
      case "closed":
        if (/revoked/.test(m.reason || "")) logOut(m.reason);
        else status(m.reason, true);
        break;
      default:
        break;
    }
  }

  function logOut(reason) {
    loggedOut = true;
    status(`logged out (${reason}): open a new login link (tickloop web --login)`, true);
    closeTerminal();
  }

  // ---- a shell's row: its shell, where it is, its command ------------
  // In the words of `tickloop list` and the Monitor, from the server's
  // `shell_row` (what the shell reported comes escaped, in parts): KIND
  // (bash, zsh, fish, plain), the state's SEQ, and under the title a line
  // with the directory and the running command, or the last with its status.
  function shellRow(e) {
    const s = e.shell_row;
    if (!s) return null;
    const known = s.seq !== null && s.seq !== undefined;
    const line = el("div", null, "shell-line");
    if (s.cwd_parts) line.append(shown(el("span", null, "shell-cwd"), s.cwd_parts, s.cwd));
    if (s.status) {
      const status = s.running_since ? `running ${ago(s.running_since)}` : s.status;
      line.append(el("span", status, s.failed ? "shell-status failed" : "shell-status"));
    }
    if (s.command_parts) line.append(shown(el("code", null, "shell-command"), s.command_parts, s.command));
    // One line, cut with an ellipsis (app.css): the whole on hover.
    line.title = line.textContent;
    return {
      kind: s.kind,
      seq: known ? s.seq : "-",
      updated: known ? ago(e.last_update_at) : "-",
      line: line.childElementCount > 0 ? line : null,
    };
  }

  function renderList() {
    const body = document.querySelector("#list tbody");
    body.replaceChildren();
    for (const e of list) {
      const tr = el("tr");
      tr.dataset.id = e.id;
      if (e.id === selected) tr.classList.add("selected");
      const tick = e.seq !== null && e.seq !== undefined;
      const shell = shellRow(e);
      const cells = [
        e.id,
        shell ? shell.kind : e.kind || "-",
        e.title || "",
        e.owner || "person",
        shell ? shell.seq : tick ? e.seq : "-",
        shell ? shell.updated : tick ? ago(e.last_update_at) : "-",
        e.calls_in_flight,
        e.approvals_waiting,
        e.views,
        e.state === "ended" && e.ended ? `ended: ${e.ended.reason}` : e.state,
      ];
      cells.forEach((text, i) => {
        const td = i === 2 ? shown(el("td"), e.title_parts, text) : el("td", text);
        if (i === 7 && e.approvals_waiting > 0) td.className = "waiting";
        if (i === 9) td.className = e.state;
        if (i === 2 && shell && shell.line) td.append(shell.line);
        tr.append(td);
      });
      tr.addEventListener("click", () => { location.hash = encodeURIComponent(e.id); });
      body.append(tr);
    }
    $("empty").hidden = list.length > 0;
    if (selected) {
      const entry = list.find((e) => e.id === selected);
      shown($("instance-title"), entry ? entry.title_parts : null, entry ? entry.title || "" : "");
    }
  }

  // ---- held actions: the Monitor's question, approve and refuse ------
  function renderHeld(held) {
    const box = $("held");
    const keep = new Set();
    for (const h of held) {
      const key = `${h.held.instance} ${h.held.call}`;
      keep.add(key);
      let p = prompts.get(key);
      if (!p) {
        p = makePrompt(h.held);
        prompts.set(key, p);
        box.append(p.node);
        notify(key, h);
      }
      p.text.replaceChildren();
      (h.question_parts || h.question.map((line) => [{ text: line }])).forEach((line, i) => {
        if (i > 0) p.text.append(document.createTextNode("\n"));
        p.text.append(shown(el("span"), line));
      });
    }
    for (const [key, p] of prompts) {
      if (!keep.has(key)) {
        p.node.remove();
        prompts.delete(key);
      }
    }
    document.title = held.length ? `(${held.length}) Tickloop` : "Tickloop";
  }

  function makePrompt(held) {
    const node = el("div", null, "prompt");
    node.dataset.instance = held.instance;
    node.dataset.call = held.call;
    node.append(el("h3", `approve? ${held.instance} · call ${held.call}`));
    const text = el("pre");
    node.append(text);
    const answer = el("div", null, "answer");
    const said = el("span");
    if (!readOnly) {
      for (const [label, approve] of [["Approve", true], ["Refuse", false]]) {
        const b = el("button", label, approve ? "approve" : "refuse");
        b.type = "button";
        b.addEventListener("click", async () => {
          for (const other of answer.querySelectorAll("button")) other.disabled = true;
          const r = await post("/api/decide", { instance: held.instance, call: held.call, approve });
          said.textContent = r.ok ? (approve ? "approved" : "refused") : r.message;
          if (!r.ok) for (const other of answer.querySelectorAll("button")) other.disabled = false;
        });
        answer.append(b);
      }
    } else {
      said.textContent = "read-only: answer it in the Monitor or with tickloop approve";
    }
    answer.append(said);
    node.append(answer);
    return { node, text };
  }

  async function post(path, body) {
    try {
      const r = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Tickloop-CSRF": csrf },
        body: JSON.stringify(body),
        credentials: "same-origin",
      });
      return await r.json();
    } catch (e) {
      return { ok: false, message: String(e) };
    }
  }

  function notify(key, h) {
    if (notified.has(key)) return;
    notified.add(key);
    if (!("Notification" in window) || Notification.permission !== "granted") return;
    const n = new Notification("Tickloop: approve?", { body: h.notice || h.question[0], tag: key });
    n.onclick = () => { window.focus(); location.hash = encodeURIComponent(h.held.instance); };
  }

  function setUpNotifications() {
    const b = $("notify");
    if (!("Notification" in window) || Notification.permission !== "default") return;
    b.hidden = false;
    b.addEventListener("click", async () => {
      await Notification.requestPermission();
      b.hidden = Notification.permission !== "default";
    });
  }

  // ---- one instance: terminal, state, tools, activity ----------------
  let term = null;
  let fitNow = () => false;
  let termWs = null;

  function ensureTerminal() {
    if (term) return;
    term = new window.Terminal({
      // The page's monospace fonts (app.css, --mono), and rows 1.2 times
      // the font's height: at 1.0, DejaVu Sans Mono's `_` falls below its
      // row and is not drawn at 1× pixel density (`PROMPT COMMAND`).
      fontFamily: getComputedStyle(document.documentElement).getPropertyValue("--mono").trim()
        || "monospace",
      fontSize: 14,
      lineHeight: 1.2,
      scrollback: 0,
      cursorBlink: false,
      allowProposedApi: false,
    });
    const fit = new window.FitAddon.FitAddon();
    term.loadAddon(fit);
    // Sixel images (a Tick's kept images come as sixel; the server never
    // asks the page anything, so no size reports).
    if (window.ImageAddon) {
      term.loadAddon(new window.ImageAddon.ImageAddon({
        sixelSupport: true, iipSupport: false, enableSizeReports: false,
      }));
    }
    term.open($("terminal-host"));
    fitNow = TickloopLayout.fitTerminal(term, fit, $("terminal-host"));
    term.onData((data) => {
      if (termWs && termWs.readyState === WebSocket.OPEN) {
        termWs.send(JSON.stringify({ type: "input", data }));
      }
    });
    // Each size xterm.js takes is sent at once (layout.js fits it at most
    // once a frame), so the program's size is the size drawn, before any
    // key typed after it.
    term.onResize(({ cols, rows }) => {
      if (termWs && termWs.authed && termWs.readyState === WebSocket.OPEN) {
        termWs.send(JSON.stringify({ type: "resize", cols, rows, cell_px: cellPx() }));
      }
    });
  }

  // The size of a cell in CSS pixels, whole: the server draws a Tick's
  // images to their cells at it.
  function cellPx() {
    const screen = term && term.element && term.element.querySelector(".xterm-screen");
    if (!screen || !term.cols || !term.rows) return null;
    const w = Math.round(screen.clientWidth / term.cols);
    const h = Math.round(screen.clientHeight / term.rows);
    return w > 0 && h > 0 ? [w, h] : null;
  }

  function closeTerminal() {
    if (termWs) {
      termWs.onclose = null;
      termWs.close();
      termWs = null;
    }
  }

  function openTerminal(id) {
    closeTerminal();
    ensureTerminal();
    term.reset();
    notice(readOnly ? "read-only: what you type is not sent" : "");
    const ws = new WebSocket(wsUrl(`/ws/term?instance=${encodeURIComponent(id)}`));
    ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      // Fitted now, after the page laid the instance out: the size sent
      // first is the size drawn. (The auth message is the socket's first:
      // a resize from this fit is not sent, the auth carries its size.)
      fitNow();
      ws.send(JSON.stringify({
        type: "auth", csrf, cols: term.cols, rows: term.rows, cell_px: cellPx(),
      }));
      ws.authed = true;
      term.focus();
    };
    ws.onmessage = (e) => {
      if (typeof e.data !== "string") {
        term.write(new Uint8Array(e.data));
        return;
      }
      const m = JSON.parse(e.data);
      if (m.type === "title") shown($("instance-title"), m.title_parts, m.title);
      else if (m.type === "ended") notice(`ended: ${m.reason}`);
      else if (m.type === "refused") notice(m.message);
      else if (m.type === "bell") $("terminal").animate([{ opacity: 0.6 }, { opacity: 1 }], 150);
      else if (m.type === "closed") {
        if (/revoked/.test(m.reason || "")) logOut(m.reason);
        else notice(m.reason);
      }
    };
    ws.onclose = () => { if (termWs === ws) termWs = null; };
    termWs = ws;
  }

  // ---- the state pane: a shell's commands in words, else JSON --------
  let stateAsJson = false;

  function renderState(m) {
    const head = $("state-head");
    const raw = $("state-raw");
    const shell = $("state-shell");
    if (m.error || m.ended) {
      head.textContent = m.error || `ended: ${m.ended.reason}`;
      return;
    }
    if (!m.delivery) return;
    const d = m.delivery;
    head.textContent = `seq ${d.seq} · ${d.at}${d.trimmed ? " · trimmed to the delivery budget" : ""}`;
    raw.textContent = JSON.stringify(d.data, null, 2);
    if (m.shell) TickloopShell.render(shell, m.instance, m.shell, el, shown);
    $("state-as-json").hidden = !m.shell;
    showStateAs(!!m.shell);
  }

  // Shows the shell's commands (when `readable`) or the state's JSON, as
  // the JSON button says.
  function showStateAs(readable) {
    const json = !readable || stateAsJson;
    $("state-shell").hidden = json;
    $("state-raw").hidden = !json;
    $("state-as-json").setAttribute("aria-pressed", String(stateAsJson));
  }

  function clearState() {
    $("state-head").textContent = "";
    $("state-raw").textContent = "";
    $("state-shell").replaceChildren();
    $("state-shell").hidden = true;
    $("state-raw").hidden = false;
    $("state-as-json").hidden = true;
  }

  // The open instance's state (running, ended) in its head: on a phone
  // the list is out of sight.
  function renderInstanceState() {
    const box = $("instance-state");
    const entry = selected ? list.find((e) => e.id === selected) : null;
    box.className = `instance-state ${entry ? entry.state : ""}`;
    box.textContent = !entry ? "" : entry.state === "ended" && entry.ended
      ? `ended: ${entry.ended.reason}` : entry.state;
  }

  function renderActivity(m) {
    const ol = $("tab-activity");
    if (m.error) {
      ol.replaceChildren(el("li", m.error));
      return;
    }
    if (m.reset) ol.replaceChildren();
    for (const entry of m.entries || []) {
      const li = el("li", entry.text);
      li.title = JSON.stringify(entry.entry, null, 2);
      ol.prepend(li);
    }
    const tools = $("tab-tools");
    tools.replaceChildren();
    if (!(m.tools || []).length) tools.append(el("p", "No tools (not a Tick, or none declared)."));
    for (const t of m.tools || []) {
      const div = el("div", null, "tool");
      div.append(el("strong", t.name), el("span", t.mutates ? " · mutates" : " · reads", t.mutates ? "mutates" : ""));
      div.append(el("div", t.description));
      tools.append(div);
    }
  }

  // What agents did on every instance, newest last (at most 500 kept).
  function renderTimeline(m) {
    const ol = $("timeline");
    if (m.error) {
      ol.replaceChildren(el("li", m.error, "failed"));
      return;
    }
    if (m.reset) ol.replaceChildren();
    const follow = ol.scrollTop + ol.clientHeight >= ol.scrollHeight - 4;
    for (const entry of m.entries || []) {
      const li = shown(el("li", null, entry.tone || ""), entry.parts);
      li.title = JSON.stringify(entry.entry, null, 2);
      ol.append(li);
    }
    while (ol.children.length > 500) ol.firstElementChild.remove();
    $("timeline-empty").hidden = ol.children.length > 0;
    if (follow) ol.scrollTop = ol.scrollHeight;
  }

  function select(id) {
    if (id === selected) return;
    selected = id;
    document.body.dataset.view = id ? "instance" : "list";
    $("instance-pane").hidden = !id;
    for (const tr of document.querySelectorAll("#list tbody tr")) {
      tr.classList.toggle("selected", tr.dataset.id === id);
    }
    clearState();
    renderInstanceState();
    $("tab-activity").replaceChildren();
    $("tab-tools").replaceChildren();
    if (live && live.readyState === WebSocket.OPEN) {
      live.send(JSON.stringify({ type: "select", instance: id }));
    }
    if (!id) {
      closeTerminal();
      return;
    }
    $("instance-id").textContent = id;
    openTerminal(id);
  }

  function fromHash() {
    const id = decodeURIComponent(location.hash.replace(/^#/, ""));
    select(id || null);
  }

  function setUp() {
    $("read-only").hidden = !readOnly;
    $("close-instance").hidden = readOnly;
    $("back").addEventListener("click", () => { location.hash = ""; });
    $("home").addEventListener("click", (e) => { e.preventDefault(); location.hash = ""; });
    $("close-instance").addEventListener("click", async () => {
      if (!selected || !confirm(`Close ${selected}? Its program ends.`)) return;
      const r = await post("/api/close", { instance: selected });
      notice(r.ok ? `closed ${selected}` : r.message);
    });
    for (const b of document.querySelectorAll("#side nav button")) {
      b.addEventListener("click", () => {
        for (const o of document.querySelectorAll("#side nav button")) o.classList.toggle("on", o === b);
        for (const t of document.querySelectorAll("#side .tab")) t.hidden = t.id !== `tab-${b.dataset.tab}`;
      });
    }
    $("state-as-json").addEventListener("click", () => {
      stateAsJson = !stateAsJson;
      showStateAs(true);
    });
    setUpNotifications();
    window.addEventListener("hashchange", fromHash);
    connectLive();
    fromHash();
  }

  setUp();
})();
