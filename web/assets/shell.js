// A shell's commands as a person reads them, beside its terminal: where the
// shell is, what runs now, then each command that ended, newest first,
// with its status and duration in words and its output folded. The server
// words and escapes it all (web/src/shell_view.rs); this draws it, every
// part as text, each escape in an element of its own (`shown`, app.js's).
"use strict";
window.TickloopShell = (() => {
  // The commands whose output the person unfolded, per instance, kept
  // across deliveries.
  let openFor = null;
  const unfolded = new Set();

  // Draws `view` (the state message's `shell`) of `instance` into `box`;
  // `el(tag, text, cls)` and `shown(node, parts)` are app.js's.
  function render(box, instance, view, el, shown) {
    if (openFor !== instance) {
      openFor = instance;
      unfolded.clear();
    }
    box.replaceChildren();
    const now = el("div", null, "shell-now");
    const cwd = el("div", null, "cwd");
    cwd.append(el("span", "in ", "label"));
    if (view.cwd) cwd.append(shown(el("code"), view.cwd));
    else cwd.append(el("span", "a folder the shell has not said", "label"));
    now.append(cwd);
    if (view.running) {
      const running = el("div", null, "running");
      running.append(`running #${view.running.n} `, shown(el("code"), view.running.command),
        ` since ${view.running.started}`);
      now.append(running);
    } else if (view.at_prompt) {
      now.append(el("div", "at its prompt", "idle"));
    }
    box.append(now);

    const commands = Array.isArray(view.commands) ? view.commands : [];
    if (!commands.length) {
      box.append(el("p", view.running ? "No command has ended yet." : "No command yet.", "shell-none"));
      return;
    }
    const list = el("ol", null, "commands");
    for (const c of commands) list.append(command(c, el, shown));
    box.append(list);
    if (view.total > commands.length) {
      box.append(el("p", `the last ${commands.length} of ${view.total} commands`, "shell-more"));
    }
  }

  // One command: its status, line and times as the summary; the output
  // folded under it.
  function command(c, el, shown) {
    const item = el("li", null, c.ok === true ? "ok" : c.ok === false ? "failed" : "unknown");
    item.dataset.n = c.n;
    const details = el("details");
    details.open = unfolded.has(c.n);
    details.addEventListener("toggle", () => {
      if (details.open) unfolded.add(c.n);
      else unfolded.delete(c.n);
    });
    const summary = el("summary");
    summary.append(shown(el("code", null, "line"), c.command));
    const meta = el("span", null, "meta");
    meta.append(el("span", c.status, "status"));
    const times = [c.duration ? `${c.duration}` : null, `at ${c.started}`,
      `${c.lines} line${c.lines === 1 ? "" : "s"}`].filter(Boolean);
    meta.append(` · ${times.join(" · ")}`);
    summary.append(meta);
    details.append(summary);
    const output = shown(el("pre", null, "output"), c.output);
    if (!c.lines) output.textContent = "(no output)";
    details.append(output);
    if (c.cut) details.append(el("p", c.cut, "cut"));
    item.append(details);
    return item;
  }

  return { render };
})();
