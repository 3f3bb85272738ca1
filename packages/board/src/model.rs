//! The board itself, with no I/O: items, the change log, the state summary
//! the agent reads, and the JSON file it is saved in.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::VecDeque;

/// Changes kept for `history` (the recover_with tool).
pub const HISTORY_LEN: usize = 256;
/// Open items listed in the state (the rest through `items`).
pub const ITEMS_IN_STATE: usize = 20;
/// Changes listed in the state.
pub const RECENT_IN_STATE: usize = 10;
/// Characters of an item's text shown in the state.
pub const TEXT_IN_STATE: usize = 80;
/// The longest item text accepted.
pub const MAX_TEXT: usize = 500;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: u64,
    pub text: String,
    pub done: bool,
    /// Who added it: `person` or `agent`.
    pub by: String,
}

/// One change, as `history` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// `add`, `done`, `reopen`, `edit`, `remove`.
    pub change: String,
    pub id: u64,
    pub text: String,
    pub by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Board {
    pub items: Vec<Item>,
    pub next_id: u64,
    #[serde(default)]
    pub history: VecDeque<Change>,
}

/// Why a change was refused (nothing changed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("no item {0}; `items` lists them")]
    NoItem(u64),
    #[error("the text is empty")]
    Empty,
    #[error("the text is longer than {MAX_TEXT} characters")]
    TooLong,
}

impl Board {
    /// Parses a saved board.
    pub fn from_json(text: &str) -> Result<Board, serde_json::Error> {
        let mut board: Board = serde_json::from_str(text)?;
        let highest = board.items.iter().map(|i| i.id).max().unwrap_or(0);
        board.next_id = board.next_id.max(highest + 1);
        Ok(board)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    fn position(&self, id: u64) -> Result<usize, Refused> {
        self.items
            .iter()
            .position(|i| i.id == id)
            .ok_or(Refused::NoItem(id))
    }

    fn log(&mut self, change: &str, item: &Item, by: &str) {
        self.history.push_back(Change {
            change: change.to_string(),
            id: item.id,
            text: item.text.clone(),
            by: by.to_string(),
        });
        while self.history.len() > HISTORY_LEN {
            self.history.pop_front();
        }
    }

    fn clean(text: &str) -> Result<String, Refused> {
        let text = text.trim();
        if text.is_empty() {
            return Err(Refused::Empty);
        }
        if text.chars().count() > MAX_TEXT {
            return Err(Refused::TooLong);
        }
        Ok(text.replace(['\n', '\r', '\t'], " "))
    }

    /// Adds an open item; returns it.
    pub fn add(&mut self, text: &str, by: &str) -> Result<Item, Refused> {
        let text = Board::clean(text)?;
        let item = Item {
            id: self.next_id.max(1),
            text,
            done: false,
            by: by.to_string(),
        };
        self.next_id = item.id + 1;
        self.items.push(item.clone());
        self.log("add", &item, by);
        Ok(item)
    }

    /// Marks item `id` done (or open again); returns it.
    pub fn set_done(&mut self, id: u64, done: bool, by: &str) -> Result<Item, Refused> {
        let at = self.position(id)?;
        self.items[at].done = done;
        let item = self.items[at].clone();
        self.log(if done { "done" } else { "reopen" }, &item, by);
        Ok(item)
    }

    /// Replaces item `id`'s text; returns it.
    pub fn edit(&mut self, id: u64, text: &str, by: &str) -> Result<Item, Refused> {
        let text = Board::clean(text)?;
        let at = self.position(id)?;
        self.items[at].text = text;
        let item = self.items[at].clone();
        self.log("edit", &item, by);
        Ok(item)
    }

    /// Removes item `id`; returns it.
    pub fn remove(&mut self, id: u64, by: &str) -> Result<Item, Refused> {
        let at = self.position(id)?;
        let item = self.items.remove(at);
        self.log("remove", &item, by);
        Ok(item)
    }

    /// The state the agent reads: counts, the first open items, the last
    /// changes (newest last); small whatever the board holds.
    pub fn state(&self) -> Value {
        let short = |text: &str| -> String {
            if text.chars().count() > TEXT_IN_STATE {
                text.chars().take(TEXT_IN_STATE - 1).collect::<String>() + "…"
            } else {
                text.to_string()
            }
        };
        let open: Vec<&Item> = self.items.iter().filter(|i| !i.done).collect();
        let listed: Vec<Value> = open
            .iter()
            .take(ITEMS_IN_STATE)
            .map(|i| json!({"id": i.id, "text": short(&i.text), "by": i.by}))
            .collect();
        let skip = self.history.len().saturating_sub(RECENT_IN_STATE);
        let recent: Vec<Value> = self
            .history
            .iter()
            .skip(skip)
            .map(|c| json!({"change": c.change, "id": c.id, "by": c.by}))
            .collect();
        json!({
            "open": open.len(),
            "done": self.items.len() - open.len(),
            "items": listed,
            "more_open": open.len().saturating_sub(ITEMS_IN_STATE),
            "recent": recent,
        })
    }

    /// Items by status (`open`, `done` or `all`), complete.
    pub fn list(&self, status: &str) -> Vec<&Item> {
        self.items
            .iter()
            .filter(|i| match status {
                "open" => !i.done,
                "done" => i.done,
                _ => true,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_logged_and_refusals_change_nothing() {
        let mut b = Board::default();
        let a = b.add("write tests", "agent").unwrap();
        let c = b.add("  ship  ", "person").unwrap();
        assert_eq!((a.id, c.id, c.text.as_str()), (1, 2, "ship"));
        b.set_done(1, true, "person").unwrap();
        let before = b.clone();
        assert_eq!(b.set_done(9, true, "agent"), Err(Refused::NoItem(9)));
        assert_eq!(b.add("   ", "agent"), Err(Refused::Empty));
        assert_eq!(
            b.edit(2, &"x".repeat(MAX_TEXT + 1), "agent"),
            Err(Refused::TooLong)
        );
        assert_eq!(b, before);
        b.remove(2, "agent").unwrap();
        let changes: Vec<&str> = b.history.iter().map(|c| c.change.as_str()).collect();
        assert_eq!(changes, ["add", "add", "done", "remove"]);
        let state = b.state();
        assert_eq!(state["open"], 0);
        assert_eq!(state["done"], 1);
        assert_eq!(state["recent"].as_array().unwrap().len(), 4);
    }

    #[test]
    fn state_stays_small_and_ids_survive_a_save() {
        let mut b = Board::default();
        for n in 0..300 {
            b.add(&format!("item {n} {}", "y".repeat(400)), "agent")
                .unwrap();
        }
        let state = b.state();
        assert!(
            state.to_string().len() < 4096,
            "{}",
            state.to_string().len()
        );
        assert_eq!(state["more_open"], 300 - ITEMS_IN_STATE);
        assert_eq!(b.history.len(), HISTORY_LEN);
        let mut again = Board::from_json(&b.to_json()).unwrap();
        again.next_id = 0; // an older file without it
        let again = Board::from_json(&serde_json::to_string(&again).unwrap()).unwrap();
        assert_eq!(again.next_id, 301);
    }
}
