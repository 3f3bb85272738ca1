//! The screen as replies carry it: the emulator's text in the wire's
//! `ScreenReply`, and how much history an instance's screen keeps.

use crate::emulator::{ScreenText, DEFAULT_HISTORY, MAX_HISTORY};
use tickloop_proto::wire::{LaunchSpec, ScreenCursor, ScreenReply};

/// The most history lines the screen of the instance `spec` launches keeps.
pub(super) fn history_limit(spec: &LaunchSpec) -> usize {
    spec.program
        .history
        .unwrap_or(DEFAULT_HISTORY)
        .min(MAX_HISTORY)
}

/// The wire form of a screen read from the emulator.
pub(super) fn screen_reply(text: ScreenText, history_limit: usize, ended: bool) -> ScreenReply {
    ScreenReply {
        rows: text.rows,
        cols: text.cols,
        cursor: ScreenCursor {
            row: text.cursor_row,
            col: text.cursor_col,
        },
        lines: text.lines,
        history: text.history,
        history_len: text.history_len,
        history_limit,
        memory_bytes: text.cell_bytes,
        images: text.images,
        image_bytes: text.image_bytes,
        ended,
    }
}
