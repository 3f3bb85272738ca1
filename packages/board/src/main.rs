//! `tickloop-board`: a todo board shared by the person and the agent, the
//! shipped package `board`, built on `tickloop-tick`. Both add, finish,
//! edit and remove items (the agent through mutating tools, the person with
//! keys); the board is saved to a JSON file (default `.tickloop-board.json`
//! in the working directory) after every change, so it outlives the Tick.
//!
//! Usage: `tickloop-board [FILE]`.

mod model;

use anyhow::{Context, Result};
use model::{Board, Refused, MAX_TEXT};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tickloop_tick::tui::ratatui::layout::{Constraint, Layout};
use tickloop_tick::tui::ratatui::style::{Modifier, Style, Stylize};
use tickloop_tick::tui::ratatui::text::Line;
use tickloop_tick::tui::ratatui::widgets::{Block, List, ListItem, ListState, Paragraph};
use tickloop_tick::tui::{key_press, KeyCode, Tui};
use tickloop_tick::{Describe, Newest, Server, Tick, Tool, ToolError, Updater};

/// The file a board is kept in when no FILE is given.
const DEFAULT_FILE: &str = ".tickloop-board.json";

/// The board and where it is saved, shared by the protocol and the screen.
#[derive(Clone)]
struct Shared {
    board: Arc<Mutex<Board>>,
    file: Arc<PathBuf>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Board> {
        self.board.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies `change` to a copy, saves the copy, then makes it the board
    /// and sends the update: a refused change or a failed save changes
    /// nothing.
    fn change(
        &self,
        updates: &Updater,
        change: impl FnOnce(&mut Board) -> Result<model::Item, Refused>,
    ) -> Result<Value, ToolError> {
        let mut board = self.lock();
        let mut next = board.clone();
        let item = change(&mut next).map_err(|e| ToolError::invalid_args(e.to_string()))?;
        save(&self.file, &next).map_err(|e| {
            ToolError::invalid_args(format!("nothing changed: cannot save the board: {e:#}"))
        })?;
        *board = next;
        let state = board.state();
        drop(board);
        // Saved: the change is made even if the host has gone.
        let _ = updates.update(state);
        Ok(json!({"item": item}))
    }
}

/// Writes the board beside `file`, then renames it over it.
fn save(file: &Path, board: &Board) -> Result<()> {
    let tmp = file.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, board.to_json()).with_context(|| format!("write {}", tmp.display()))?;
    std::fs::rename(&tmp, file).with_context(|| format!("rename to {}", file.display()))
}

fn id_schema(extra: Value) -> Value {
    let mut properties = json!({"id": {"type": "integer", "minimum": 1}});
    if let (Some(p), Some(e)) = (properties.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    json!({"type": "object", "properties": properties, "required": ["id"], "additionalProperties": false})
}

fn text_schema() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": MAX_TEXT})
}

impl Tick for Shared {
    fn describe(&self) -> Describe {
        Describe::new(
            "tickloop.board",
            "Board",
            "A todo board shared by the person at the terminal and the agent; saved to a file after every change.",
        )
        .tool(
            Tool::mutating("add", "Add an open item with `text`; answers the item with its id.").input(json!({
                "type": "object", "properties": {"text": text_schema()},
                "required": ["text"], "additionalProperties": false
            })),
        )
        .tool(
            Tool::mutating("done", "Mark item `id` done (or open again with `done: false`); answers the item.")
                .input(id_schema(json!({"done": {"type": "boolean"}}))),
        )
        .tool(
            Tool::mutating("edit", "Replace item `id`'s text; answers the item.").input({
                let mut s = id_schema(json!({"text": text_schema()}));
                s["required"] = json!(["id", "text"]);
                s
            }),
        )
        .tool(Tool::mutating("remove", "Delete item `id` from the board; answers the removed item.").input(id_schema(json!({}))))
        .tool(
            Tool::query("items", "Every item with its full text, by `status`: open (default), done or all.").input(json!({
                "type": "object",
                "properties": {"status": {"enum": ["open", "done", "all"]}},
                "additionalProperties": false
            })),
        )
        .tool(Tool::query("history", "The last 256 changes (add, done, reopen, edit, remove), oldest first, with who made them."))
        .recover_with("history")
        .series("/recent", Newest::Last)
    }

    fn read(&self) -> Option<Value> {
        Some(self.lock().state())
    }

    fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError> {
        let id = args["id"].as_u64().unwrap_or(0);
        let text = args["text"].as_str().unwrap_or_default().to_string();
        match tool {
            "add" => self.change(updates, |b| b.add(&text, "agent")),
            "done" => {
                let done = args["done"].as_bool().unwrap_or(true);
                self.change(updates, |b| b.set_done(id, done, "agent"))
            }
            "edit" => self.change(updates, |b| b.edit(id, &text, "agent")),
            "remove" => self.change(updates, |b| b.remove(id, "agent")),
            "items" => {
                let status = args["status"].as_str().unwrap_or("open");
                Ok(json!({"items": self.lock().list(status)}))
            }
            "history" => Ok(json!({"changes": self.lock().history})),
            other => Err(ToolError::unknown_tool(other)),
        }
    }
}

/// What the person is typing, if anything.
enum Input {
    None,
    Add(String),
    Edit(u64, String),
}

/// The screen: the items, a cursor, and a line to type into.
fn ui(shared: Shared, updates: Updater) {
    let Ok(mut tui) = Tui::open() else {
        return; // no terminal: the protocol still works
    };
    let mut list = ListState::default().with_selected(Some(0));
    let mut input = Input::None;
    let mut message = String::new();
    loop {
        let board = shared.lock().clone();
        let count = board.items.len();
        if list.selected().is_some_and(|s| s >= count) {
            list.select(Some(count.saturating_sub(1)));
        }
        let selected = list
            .selected()
            .and_then(|s| board.items.get(s))
            .map(|i| i.id);
        let drawn = tui.draw(|frame| {
            let [head, body, foot] = Layout::vertical([
                Constraint::Length(1),
                Constraint::Min(3),
                Constraint::Length(3),
            ])
            .areas(frame.area());
            let open = board.items.iter().filter(|i| !i.done).count();
            frame.render_widget(
                Line::from(format!(
                    " Board  {open} open, {} done  {}",
                    count - open,
                    shared.file.display()
                ))
                .bold(),
                head,
            );
            let items: Vec<ListItem> = board
                .items
                .iter()
                .map(|i| {
                    let mark = if i.done { "[x]" } else { "[ ]" };
                    let line = format!("{mark} #{:<4} {}  ({})", i.id, i.text, i.by);
                    if i.done {
                        ListItem::new(line).style(Style::new().add_modifier(Modifier::DIM))
                    } else {
                        ListItem::new(line)
                    }
                })
                .collect();
            frame.render_stateful_widget(
                List::new(items)
                    .block(Block::bordered().title(" items "))
                    .highlight_style(Style::new().add_modifier(Modifier::REVERSED)),
                body,
                &mut list,
            );
            let (title, text) = match &input {
                Input::None => (
                    " a add  e edit  space done  d delete  ↑↓ move ".to_string(),
                    message.clone(),
                ),
                Input::Add(t) => (
                    " new item: Enter saves, Esc cancels ".to_string(),
                    format!("{t}_"),
                ),
                Input::Edit(id, t) => (
                    format!(" edit #{id}: Enter saves, Esc cancels "),
                    format!("{t}_"),
                ),
            };
            frame.render_widget(
                Paragraph::new(text).block(Block::bordered().title(title)),
                foot,
            );
        });
        if drawn.is_err() {
            return;
        }
        // Wakes now and then to show the agent's changes.
        let Ok(event) = tui.next_event(Duration::from_millis(250)) else {
            return;
        };
        let Some(key) = event.as_ref().and_then(key_press) else {
            continue;
        };
        let outcome = match &mut input {
            Input::Add(text) | Input::Edit(_, text) => match key.code {
                KeyCode::Char(c) => {
                    text.push(c);
                    None
                }
                KeyCode::Backspace => {
                    text.pop();
                    None
                }
                KeyCode::Esc => {
                    input = Input::None;
                    None
                }
                KeyCode::Enter => {
                    let done = std::mem::replace(&mut input, Input::None);
                    Some(match done {
                        Input::Add(t) => shared.change(&updates, |b| b.add(&t, "person")),
                        Input::Edit(id, t) => shared.change(&updates, |b| b.edit(id, &t, "person")),
                        Input::None => continue,
                    })
                }
                _ => None,
            },
            Input::None => match (key.code, selected) {
                (KeyCode::Up | KeyCode::Char('k'), _) => {
                    list.select_previous();
                    None
                }
                (KeyCode::Down | KeyCode::Char('j'), _) => {
                    list.select_next();
                    None
                }
                (KeyCode::Char('a'), _) => {
                    input = Input::Add(String::new());
                    None
                }
                (KeyCode::Char('e'), Some(id)) => {
                    let text = board
                        .items
                        .iter()
                        .find(|i| i.id == id)
                        .map(|i| i.text.clone());
                    input = Input::Edit(id, text.unwrap_or_default());
                    None
                }
                (KeyCode::Char(' ') | KeyCode::Char('x'), Some(id)) => {
                    let done = board.items.iter().any(|i| i.id == id && !i.done);
                    Some(shared.change(&updates, |b| b.set_done(id, done, "person")))
                }
                (KeyCode::Char('d') | KeyCode::Delete, Some(id)) => {
                    Some(shared.change(&updates, |b| b.remove(id, "person")))
                }
                _ => None,
            },
        };
        if let Some(outcome) = outcome {
            message = match outcome {
                Ok(_) => String::new(),
                Err(e) => e.message,
            };
        }
    }
}

fn main() -> Result<()> {
    let file = match std::env::args_os().nth(1) {
        Some(arg) if arg == "--help" || arg == "-h" => {
            println!("usage: tickloop-board [FILE]   (a Tick: run it with `tickloop open --package board`)");
            return Ok(());
        }
        Some(path) => PathBuf::from(path),
        None => PathBuf::from(DEFAULT_FILE),
    };
    let file = std::path::absolute(&file)
        .with_context(|| format!("cannot make {} absolute", file.display()))?;
    let board = match std::fs::read_to_string(&file) {
        Ok(text) => Board::from_json(&text).with_context(|| {
            format!(
                "{} is not a board file; move it away or name another FILE",
                file.display()
            )
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Board::default(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let shared = Shared {
        board: Arc::new(Mutex::new(board)),
        file: Arc::new(file),
    };
    let server = Server::stdio(shared.clone()).context("cannot serve the Tick protocol")?;
    let updates = server.updater();
    std::thread::Builder::new()
        .name("board screen".into())
        .spawn(move || ui(shared, updates))
        .context("cannot start the screen thread")?;
    server.run().context("serving the Tick protocol")
}
