//! {{TITLE}}: a Tick (Tick protocol 3) on `tickloop-tick`, made by
//! `tickloop new --lang rust`. It keeps notes that the person (keys: `n`
//! adds one, `c` clears them) and the agent (tools `add_note`, `clear`;
//! `notes` reads them all) share. Check it with
//! `cargo build && tickloop check -- target/debug/{{NAME}}`.

use serde_json::{json, Value};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tickloop_tick::tui::ratatui::widgets::{Block, List};
use tickloop_tick::tui::{key_press, KeyCode, Tui};
use tickloop_tick::{Describe, Server, Tick, Tool, ToolError, Updater};

#[derive(Clone, Default)]
struct Notes(Arc<Mutex<Vec<(String, &'static str)>>>);

impl Notes {
    fn lock(&self) -> MutexGuard<'_, Vec<(String, &'static str)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn state(notes: &[(String, &'static str)]) -> Value {
        let last: Vec<Value> = notes
            .iter()
            .rev()
            .take(5)
            .rev()
            .map(|(text, by)| json!({"text": text, "by": by}))
            .collect();
        json!({"count": notes.len(), "last": last})
    }

    /// Changes the notes and sends the update under one lock, so updates
    /// go out in the order of the changes.
    fn change(&self, updates: &Updater, f: impl FnOnce(&mut Vec<(String, &'static str)>)) -> Value {
        let mut notes = self.lock();
        f(&mut notes);
        let _ = updates.update(Notes::state(&notes));
        json!({"count": notes.len()})
    }
}

impl Tick for Notes {
    fn describe(&self) -> Describe {
        Describe::new("local.{{NAME}}", "{{TITLE}}", "Notes shared by the person (keys n, c) and the agent.")
            .tool(
                Tool::mutating("add_note", "Add a note with `text`; answers how many notes there are.")
                    .input(json!({
                        "type": "object",
                        "properties": {"text": {"type": "string", "minLength": 1}},
                        "required": ["text"],
                        "additionalProperties": false
                    })),
            )
            .tool(Tool::mutating("clear", "Remove every note."))
            .tool(Tool::query("notes", "Every note, oldest first, with who added it."))
    }

    fn read(&self) -> Option<Value> {
        Some(Notes::state(&self.lock()))
    }

    fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError> {
        match tool {
            "add_note" => {
                let text = args["text"].as_str().unwrap_or_default().to_string();
                Ok(self.change(updates, |n| n.push((text, "agent"))))
            }
            "clear" => Ok(self.change(updates, Vec::clear)),
            "notes" => {
                let all: Vec<Value> = self.lock().iter().map(|(t, by)| json!({"text": t, "by": by})).collect();
                Ok(json!({"notes": all}))
            }
            other => Err(ToolError::unknown_tool(other)),
        }
    }
}

/// The screen, on /dev/tty: redrawn on every event and now and then.
fn screen(notes: Notes, updates: Updater) {
    let Ok(mut tui) = Tui::open() else { return };
    loop {
        let lines: Vec<String> = notes.lock().iter().map(|(t, by)| format!("- {t}  ({by})")).collect();
        let title = format!(" {{TITLE}}: {} notes  (n add, c clear) ", lines.len());
        if tui
            .draw(|frame| frame.render_widget(List::new(lines).block(Block::bordered().title(title)), frame.area()))
            .is_err()
        {
            return;
        }
        let Ok(event) = tui.next_event(Duration::from_millis(250)) else { return };
        match event.as_ref().and_then(key_press).map(|k| k.code) {
            Some(KeyCode::Char('n')) => {
                notes.change(&updates, |n| {
                    let text = format!("note {}", n.len() + 1);
                    n.push((text, "person"))
                });
            }
            Some(KeyCode::Char('c')) => {
                notes.change(&updates, Vec::clear);
            }
            _ => {}
        }
    }
}

fn main() -> Result<(), tickloop_tick::ServeError> {
    let notes = Notes::default();
    let server = Server::stdio(notes.clone())?;
    let updates = server.updater();
    std::thread::spawn(move || screen(notes, updates));
    server.run()
}
