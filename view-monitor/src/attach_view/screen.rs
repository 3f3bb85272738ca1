//! The state of an attach session's screen: the Tick's screen model as the
//! launcher last sent it, the view's size and surface, and the note on the
//! last row (the keys after attaching, a flash, a question).

use super::AttachOptions;
use crate::prefix::Prefix;
use crate::render;
use std::time::{Duration, Instant};
use tickloop_proto::attach::{MouseTracking, Snapshot};

/// How long the last row shows the keys after attaching, or after `?`.
pub(super) const FLASH: Duration = Duration::from_secs(3);

/// The Tick's screen, and what the user's terminal shows of it.
pub(super) struct Screen {
    /// The Tick's screen as the launcher sent it.
    pub(super) model: Snapshot,
    /// Makes the frames, keeping the model drawn between them.
    pub(super) composer: render::Composer,
    /// The size of the user's terminal.
    pub(super) view: (u16, u16),
    /// What the user's terminal shows.
    pub(super) shown: render::Shown,
    /// The mouse reporting the user's terminal has on.
    pub(super) mouse_mode: MouseTracking,
    /// Scrolling back through the Tick's history.
    pub(super) scroller: render::Scroller,
    /// The title the view's terminal was given last (the Tick's, passed on).
    pub(super) title: String,
    /// When the size is sent to the launcher (a resize is pending).
    pub(super) pending_resize: Option<Instant>,
}

impl Screen {
    pub(super) fn new(model: Snapshot, view: (u16, u16)) -> Self {
        Screen {
            model,
            composer: render::Composer::default(),
            view,
            shown: render::Shown::new(usize::from(view.0), usize::from(view.1)),
            mouse_mode: MouseTracking::Off,
            scroller: render::Scroller::default(),
            title: String::new(),
            pending_resize: None,
        }
    }
}

/// The note on the last row: for a moment, the keys after attaching (only
/// when that row is blank: it never hides what the Tick shows there), the
/// key list after `?`, a pending prefix, how a decision went; else the
/// status of a Herdr popup, or the size note when the sizes differ.
pub(super) struct LastRow {
    /// The note for a moment, and until when.
    pub(super) flash: Option<(String, Instant)>,
    /// The flash is the note after attaching, which also ends as soon as
    /// the Tick draws on the row it covers (it never hides the Tick's own
    /// output for long).
    attach_note: bool,
    /// Shown when the sizes differ and nothing else is.
    pub(super) size_note: String,
}

impl LastRow {
    /// The last row of a view that just got `snapshot` for `size`.
    pub(super) fn after_attach(
        opts: &AttachOptions,
        prefix: &Prefix,
        snapshot: &Snapshot,
        size: (u16, u16),
    ) -> Self {
        let last_row_blank = snapshot
            .lines
            .get(usize::from(size.1.saturating_sub(1)))
            .is_none_or(|line| line.runs.is_empty());
        let flash = (opts.status.is_none() && last_row_blank).then(|| {
            (
                format!("{} · {}", opts.instance, prefix.reminder()),
                Instant::now() + FLASH,
            )
        });
        LastRow {
            attach_note: flash.is_some(),
            flash,
            size_note: format!("{} · {}", opts.instance, prefix.reminder()),
        }
    }

    /// Shows `text` (or nothing) for `lasts`.
    pub(super) fn show(&mut self, text: Option<String>, lasts: Duration) {
        self.flash = text.map(|t| (t, Instant::now() + lasts));
        self.attach_note = false;
    }

    /// The Tick drew on the last row: the note after attaching ends.
    pub(super) fn tick_drew_on_it(&mut self) {
        if self.attach_note {
            self.attach_note = false;
            self.flash = None;
        }
    }

    /// Ends a note whose moment is over; whether one ended.
    pub(super) fn expire(&mut self, now: Instant) -> bool {
        if self.flash.as_ref().is_some_and(|(_, until)| now >= *until) {
            self.flash = None;
            return true;
        }
        false
    }

    /// The note on the last row now (a question waiting, `asking`; the
    /// note of the moment; a Herdr popup's status; else the size note),
    /// and whether it shows when the sizes agree.
    pub(super) fn note<'a>(
        &'a self,
        asking: &'a Option<String>,
        opts: &'a AttachOptions,
    ) -> (&'a str, bool) {
        match (asking, &self.flash, &opts.status) {
            (Some(text), _, _) => (text.as_str(), true),
            (None, Some((text, _)), _) => (text.as_str(), true),
            (None, None, Some(status)) => (status.as_str(), true),
            (None, None, None) => (self.size_note.as_str(), false),
        }
    }

    /// When the note's moment is over.
    pub(super) fn until(&self) -> Option<Instant> {
        self.flash.as_ref().map(|(_, until)| *until)
    }
}
