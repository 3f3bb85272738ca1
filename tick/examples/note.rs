//! A whole Tick in one file: one line of text that the person edits on
//! screen (type, Enter saves, Esc restores) and the agent reads and sets
//! (`set_note`, which mutates; `note`, a query). Run it under a host:
//! `tickloop open -- cargo run -q --example note`, or check it with
//! `tickloop check -- target/debug/examples/note`.

use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tickloop_tick::tui::ratatui::layout::{Constraint, Layout};
use tickloop_tick::tui::ratatui::widgets::{Block, Paragraph};
use tickloop_tick::tui::{key_press, KeyCode, Tui};
use tickloop_tick::{Describe, Server, Tick, Tool, ToolError, Updater};

#[derive(Default)]
struct State {
    note: String,
    by: &'static str,
}

#[derive(Clone, Default)]
struct Note(Arc<Mutex<State>>);

impl Note {
    fn data(state: &State) -> Value {
        json!({"note": state.note, "by": state.by})
    }

    /// Sets the note and sends the update, under one lock so updates go
    /// out in the order of the changes.
    fn set(&self, text: String, by: &'static str, updates: &Updater) -> Result<Value, ToolError> {
        let mut state = self
            .0
            .lock()
            .map_err(|_| ToolError::failed("state lock poisoned"))?;
        state.note = text;
        state.by = by;
        updates
            .update(Note::data(&state))
            .map_err(ToolError::failed)?;
        Ok(Note::data(&state))
    }
}

impl Tick for Note {
    fn describe(&self) -> Describe {
        Describe::new(
            "example.note",
            "Note",
            "One line of text that the person edits on screen and the agent reads and sets.",
        )
        .tool(
            Tool::mutating(
                "set_note",
                "Replace the note with `text`; answers the new note.",
            )
            .input(json!({
                "type": "object",
                "properties": {"text": {"type": "string", "maxLength": 1000}},
                "required": ["text"],
                "additionalProperties": false
            })),
        )
        .tool(Tool::query("note", "The note and who set it last."))
    }

    fn read(&self) -> Option<Value> {
        let state = self.0.lock().ok()?;
        Some(Note::data(&state))
    }

    fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError> {
        match tool {
            "set_note" => {
                let text = args["text"].as_str().unwrap_or_default().to_string();
                self.set(text, "agent", updates)
            }
            "note" => self
                .read()
                .ok_or_else(|| ToolError::failed("state lock poisoned")),
            other => Err(ToolError::unknown_tool(other)),
        }
    }
}

/// The screen: the saved note and the line being edited.
fn ui(note: Note, updates: Updater) {
    let Ok(mut tui) = Tui::open() else {
        return; // no terminal: serve the protocol only
    };
    let mut editing = String::new();
    loop {
        let (saved, by) = match note.0.lock() {
            Ok(s) => (s.note.clone(), s.by),
            Err(_) => return,
        };
        let drawn = tui.draw(|frame| {
            let [top, bottom] = Layout::vertical([Constraint::Length(3), Constraint::Length(3)])
                .areas(frame.area());
            frame.render_widget(
                Paragraph::new(saved.as_str())
                    .block(Block::bordered().title(format!(" Note (by {by}) "))),
                top,
            );
            frame.render_widget(
                Paragraph::new(format!("{editing}_"))
                    .block(Block::bordered().title(" type, Enter saves, Esc clears ")),
                bottom,
            );
        });
        if drawn.is_err() {
            return;
        }
        // Wake now and then: an agent's set_note changes what is shown.
        let Ok(event) = tui.next_event(Duration::from_millis(200)) else {
            return;
        };
        if let Some(key) = event.as_ref().and_then(key_press) {
            match key.code {
                KeyCode::Char(c) => editing.push(c),
                KeyCode::Backspace => {
                    editing.pop();
                }
                KeyCode::Esc => editing.clear(),
                KeyCode::Enter => {
                    let _ = note.set(std::mem::take(&mut editing), "person", &updates);
                }
                _ => {}
            }
        }
    }
}

fn main() -> Result<(), tickloop_tick::ServeError> {
    let note = Note::default();
    let server = Server::stdio(note.clone())?;
    let updates = server.updater();
    std::thread::spawn(move || ui(note, updates));
    server.run()
}
