//! What the parser drives: the emulator's `Term`, with the compact
//! [`History`] kept in step with it where alacritty clears its own history
//! (RIS, `CSI 3 J` on the normal screen), and the normal screen's DECSC
//! point put back when it is shown again (see `Emulator::resize`).
//!
//! Rows that scroll off land in alacritty's own history, as full rows of
//! cells, at no cost on the output's path; [`compact`] moves them into the
//! compact history when the output pauses, and once a second while it
//! does not (`crate::terminal`), so a flood of output encodes at most a
//! history's worth of rows a second, not every row that scrolls by.
//!
//! Printable ASCII is held back as it comes and written a run at a time
//! (`Term::input_ascii`, alacritty patch 5): the parser hands over one
//! character a call, and alacritty's own `input` costs some 80
//! instructions a character. The run is written before any other call is
//! passed on, and when the feeding ends.
//!
//! Every method of the parser's `Handler` trait is passed on; the trait's
//! methods all have empty defaults, so one left out would silently drop
//! what the Tick printed. `launcher/tests/compact_history.rs` compares this
//! keeper with a bare alacritty screen over the fidelity corpus and random
//! output, which catches that.

use super::History;
use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::{Cursor, Dimensions};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, PrivateMode, Rgb,
    ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};

/// The `Term` as the parser sees it, and the compact history beside it.
pub struct Feeding<'a, L: EventListener> {
    pub term: &'a mut Term<L>,
    pub history: &'a mut History,
    /// The normal screen's DECSC point, kept aside while the alternate
    /// screen is shown after a resize there (`Emulator::resize` explains
    /// why); put back as soon as the normal screen is.
    pub normal_saved: &'a mut Option<Cursor<Cell>>,
    /// Printable ASCII not yet written (see the module's note); empty
    /// between feedings.
    pub printable: &'a mut Vec<u8>,
}

impl<L: EventListener> Feeding<'_, L> {
    /// Writes the printable ASCII held back.
    #[inline]
    fn flush(&mut self) {
        if !self.printable.is_empty() {
            self.term.input_ascii(self.printable);
            self.printable.clear();
        }
    }
}

impl<L: EventListener> Drop for Feeding<'_, L> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Moves the rows of `term`'s own history into `history`, oldest first,
/// all but the newest, which stays: alacritty behaves differently with no
/// history at all (an `ED 2` of an empty screen scrolls a blank line off
/// then, and none when there is history), so it keeps one row while there
/// is any. Then drops the oldest compact rows past the history's limit.
/// Does nothing on the alternate screen (the normal screen's rows are out
/// of reach there until it is shown again).
pub fn compact<L: EventListener>(term: &mut Term<L>, history: &mut History) {
    if term.mode().contains(TermMode::ALT_SCREEN) {
        return;
    }
    let grid = term.grid_mut();
    let held = grid.history_size();
    if held > 1 {
        let cols = grid.columns();
        for back in (2..=held).rev() {
            history.push(&grid[Line(-(back as i32))], cols);
        }
        // Shrinking the limit drops the oldest rows, just moved.
        grid.update_history(1);
        grid.update_history(history.limit());
    }
    trim(term, history);
}

/// Drops the oldest compact rows while the compact history and alacritty's
/// own hold more than the limit together (alacritty's rows are the newer).
pub fn trim<L: EventListener>(term: &Term<L>, history: &mut History) {
    if history.is_empty() || term.mode().contains(TermMode::ALT_SCREEN) {
        return;
    }
    let held = term.grid().history_size();
    history.trim_to(history.limit().saturating_sub(held));
}

/// Moves every row of `term`'s own history into `history`, and empties
/// the former (to put rows back for a resize).
pub fn move_all<L: EventListener>(term: &mut Term<L>, history: &mut History) {
    let grid = term.grid_mut();
    let held = grid.history_size();
    let cols = grid.columns();
    for back in (1..=held).rev() {
        history.push(&grid[Line(-(back as i32))], cols);
    }
    grid.clear_history();
}

/// Passes each method on to the `Term`, after the printable ASCII held
/// back.
macro_rules! pass_on {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $name(&mut self, $($arg: $ty),*) {
                self.flush();
                self.term.$name($($arg),*);
            }
        )*
    };
}

// `set_mouse_cursor_icon` alone is left to the trait's default: `Term`
// keeps the default too (it does nothing), and its argument's type is not
// reachable through alacritty's re-exports.
impl<L: EventListener> Handler for Feeding<'_, L> {
    pass_on! {
        set_title(title: Option<String>);
        set_cursor_style(style: Option<CursorStyle>);
        set_cursor_shape(shape: CursorShape);
        goto(line: i32, col: usize);
        goto_line(line: i32);
        goto_col(col: usize);
        insert_blank(count: usize);
        move_up(count: usize);
        move_down(count: usize);
        identify_terminal(intermediate: Option<char>);
        device_status(arg: usize);
        move_forward(col: usize);
        move_backward(col: usize);
        move_down_and_cr(row: usize);
        move_up_and_cr(row: usize);
        put_tab(count: u16);
        backspace();
        carriage_return();
        linefeed();
        bell();
        substitute();
        newline();
        set_horizontal_tabstop();
        scroll_up(count: usize);
        scroll_down(count: usize);
        insert_blank_lines(count: usize);
        delete_lines(count: usize);
        erase_chars(count: usize);
        delete_chars(count: usize);
        move_backward_tabs(count: u16);
        move_forward_tabs(count: u16);
        save_cursor_position();
        restore_cursor_position();
        clear_line(mode: LineClearMode);
        clear_tabs(mode: TabulationClearMode);
        set_tabs(interval: u16);
        reverse_index();
        terminal_attribute(attr: Attr);
        set_mode(mode: Mode);
        unset_mode(mode: Mode);
        report_mode(mode: Mode);
        set_private_mode(mode: PrivateMode);
        report_private_mode(mode: PrivateMode);
        set_scrolling_region(top: usize, bottom: Option<usize>);
        set_keypad_application_mode();
        unset_keypad_application_mode();
        set_active_charset(index: CharsetIndex);
        configure_charset(index: CharsetIndex, charset: StandardCharset);
        set_color(index: usize, color: Rgb);
        reset_color(index: usize);
        decaln();
        push_title();
        pop_title();
        text_area_size_pixels();
        text_area_size_chars();
        set_hyperlink(link: Option<Hyperlink>);
        report_keyboard_mode();
        push_keyboard_mode(mode: KeyboardModes);
        pop_keyboard_modes(to_pop: u16);
        set_keyboard_mode(mode: KeyboardModes, behavior: KeyboardModesApplyBehavior);
        set_modify_other_keys(mode: ModifyOtherKeys);
        report_modify_other_keys();
        set_scp(char_path: ScpCharPath, update_mode: ScpUpdateMode);
    }

    #[inline]
    fn input(&mut self, c: char) {
        if matches!(c, ' '..='~') {
            self.printable.push(c as u8);
        } else {
            self.flush();
            self.term.input(c);
        }
    }

    fn dynamic_color_sequence(&mut self, prefix: String, index: usize, terminator: &str) {
        self.flush();
        self.term.dynamic_color_sequence(prefix, index, terminator);
    }

    fn clipboard_store(&mut self, clipboard: u8, base64: &[u8]) {
        self.flush();
        self.term.clipboard_store(clipboard, base64);
    }

    fn clipboard_load(&mut self, clipboard: u8, terminator: &str) {
        self.flush();
        self.term.clipboard_load(clipboard, terminator);
    }

    fn unset_private_mode(&mut self, mode: PrivateMode) {
        self.flush();
        self.term.unset_private_mode(mode);
        // Leaving the alternate screen shows the normal one again.
        if self.normal_saved.is_some() && !self.term.mode().contains(TermMode::ALT_SCREEN) {
            if let Some(saved) = self.normal_saved.take() {
                self.term.grid_mut().saved_cursor = saved;
            }
        }
    }

    fn clear_screen(&mut self, mode: ClearMode) {
        self.flush();
        // `CSI 3 J` clears the normal screen's history (alacritty does
        // nothing on the alternate screen, which has none).
        if matches!(mode, ClearMode::Saved) && !self.term.mode().contains(TermMode::ALT_SCREEN) {
            self.history.clear();
        }
        self.term.clear_screen(mode);
    }

    fn reset_state(&mut self) {
        self.flush();
        self.term.reset_state();
        self.history.clear();
        // The normal screen's DECSC point was reset with it.
        *self.normal_saved = None;
    }
}
