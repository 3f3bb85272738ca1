// Tickloop's Loop inside opencode: written by `tickloop loop opencode
// install`; `tickloop loop opencode uninstall` takes it out.
//
// opencode runs this file in-process. It hands each prompt to the Loop's
// hook (a short `tickloop` process): a `/tick` command is answered there and
// never reaches the model (the prompt is refused here, and the answer shown
// as a toast); a time step is posted into the session as its next user
// message when a turn ends (`session.idle`), or, for a run's first step,
// after the delay (`wake`). Every process opencode's shell tool runs gets
// `TICKLOOP_AGENT=opencode` and the session (`shell.env`): a `tickloop` it
// runs acts as this agent, so its typing into and closing of the person's
// instances wait for the person.
import { spawn } from "node:child_process";

const TICKLOOP = __TICKLOOP__;

function hook(event, input) {
  return new Promise((resolve) => {
    const child = spawn(TICKLOOP, ["loop", "opencode", "hook", event], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", (e) => resolve({ code: -1, stdout, stderr: String(e) }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

function decision(result) {
  try {
    return JSON.parse(result.stdout.trim() || "null");
  } catch {
    return null;
  }
}

// `opencode run "a b"` sends the text quoted: a command is still a command.
function unquoted(text) {
  const t = text.trim();
  return t.length > 1 && t.startsWith('"') && t.endsWith('"') && t.slice(1, -1).trimStart().startsWith("/tick")
    ? t.slice(1, -1)
    : text;
}

export const TickloopLoop = async ({ client, directory }) => {
  // Sessions whose running turn the Loop saw begin: one `stop` per turn,
  // however many `session.idle` events opencode sends.
  const open = new Set();
  const show = async (message, variant) => {
    try {
      await client.tui.showToast({ body: { message, variant } });
    } catch {}
  };
  const post = (sessionID, text) => {
    open.add(sessionID);
    client.session
      .prompt({ path: { id: sessionID }, body: { parts: [{ type: "text", text }] } })
      .catch((e) => show(`tickloop: could not post the time step: ${e}`, "error"));
  };
  const failed = (event, result) => {
    if (result.code !== 0 && result.code !== 2) {
      show(`tickloop loop opencode hook ${event}: ${result.stderr.trim()}`, "error");
    }
  };
  return {
    "shell.env": async (input, output) => {
      output.env.TICKLOOP_AGENT = "opencode";
      if (input.sessionID) output.env.TICKLOOP_AGENT_SESSION = input.sessionID;
    },
    "chat.message": async (input, output) => {
      const text = output.parts
        .filter((p) => p.type === "text" && !p.synthetic)
        .map((p) => p.text)
        .join("\n");
      const base = {
        session_id: input.sessionID,
        cwd: directory,
        prompt: unquoted(text),
        prompt_id: input.messageID || `${Date.now()}-${Math.random()}`,
      };
      const result = await hook("user-prompt-submit", { ...base, hook_event_name: "UserPromptSubmit" });
      failed("user-prompt-submit", result);
      const answer = decision(result);
      if (answer && answer.decision === "block") {
        await show(answer.reason, "info");
        hook("wake", { ...base, hook_event_name: "UserPromptSubmit" }).then((woke) => {
          failed("wake", woke);
          const step = woke.stderr.replace(/\n$/, "");
          if (woke.code === 2 && step) post(input.sessionID, step);
        });
        // Refused here, the command is stored nowhere and reaches no model.
        throw new Error(answer.reason);
      }
      open.add(input.sessionID);
    },
    event: async ({ event }) => {
      const sessionID = event.properties && event.properties.sessionID;
      if (!sessionID || !open.has(sessionID)) return;
      if (event.type !== "session.idle" && event.type !== "session.error") return;
      open.delete(sessionID);
      const name = event.type === "session.idle" ? "stop" : "stop-failure";
      const result = await hook(name, { session_id: sessionID, cwd: directory, hook_event_name: "Stop" });
      failed(name, result);
      const answer = decision(result);
      if (answer && answer.decision === "block") post(sessionID, answer.reason);
    },
  };
};
