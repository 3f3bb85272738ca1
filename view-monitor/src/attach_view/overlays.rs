//! What an attach session draws over the Tick: the activity overlay (the
//! prefix key, then `m`; [`crate::activity`]) and, over it, the prompt for
//! the first call waiting for approval ([`crate::approval_prompt`]); while
//! the overlay is closed, the last row says a call waits. Fetching runs on
//! helper threads that report as [`Note`]s.

use super::note::{Note, Waker};
use super::AttachOptions;
use crate::activity::{ActivityView, Fetched, Fetcher, PanelKey};
use crate::prefix::Prefix;
use crate::render::Frame;
use std::sync::mpsc;
use termwiz::input::{KeyCode, KeyEvent};
use tickloop_client::Endpoint;
use tickloop_proto::wire::HeldCall;

/// The overlays of one session, and what feeds them.
pub(super) struct Overlays {
    /// The activity overlay while open, and its fetcher.
    activity: Option<(ActivityView, Fetcher)>,
    /// Calls of this instance waiting for approval: the last row says so;
    /// the activity overlay prompts for them (y/n/v).
    waiting: Vec<HeldCall>,
    /// The `v`s pressed since the prompt showed ([`crate::approval_prompt::draw`]).
    prompt_step: usize,
    /// Asks tickhost for the waiting calls for as long as the session lasts.
    _approvals: Fetcher,
    /// The instance's tickhost, and the instance.
    endpoint: Endpoint,
    instance: String,
    /// Where the helper threads report, and how they wake the loop.
    notes: mpsc::Sender<Note>,
    waker: Waker,
}

impl Overlays {
    /// No overlay open; the approvals fetcher started.
    pub(super) fn start(opts: &AttachOptions, notes: mpsc::Sender<Note>, waker: Waker) -> Self {
        let approvals = Fetcher::start_approvals(opts.endpoint(), opts.instance.clone(), {
            let tx = notes.clone();
            let waker = waker.clone();
            move |held| {
                let sent = tx.send(Note::Approvals(held)).is_ok();
                waker.wake();
                sent
            }
        });
        Overlays {
            activity: None,
            waiting: Vec::new(),
            prompt_step: 0,
            _approvals: approvals,
            endpoint: opts.endpoint(),
            instance: opts.instance.clone(),
            notes,
            waker,
        }
    }

    pub(super) fn activity_open(&self) -> bool {
        self.activity.is_some()
    }

    /// Opens the activity overlay (and starts fetching for it).
    pub(super) fn open_activity(&mut self) {
        let tx = self.notes.clone();
        let waker = self.waker.clone();
        let fetcher = Fetcher::start(
            self.endpoint.clone(),
            self.instance.clone(),
            move |fetched| {
                let sent = tx.send(Note::Activity(fetched)).is_ok();
                waker.wake();
                sent
            },
        );
        self.activity = Some((ActivityView::new(&self.instance), fetcher));
    }

    pub(super) fn close_activity(&mut self) {
        self.activity = None;
    }

    /// The activity's data arrived; whether the screen changed.
    pub(super) fn update_activity(&mut self, fetched: Fetched) -> bool {
        match self.activity.as_mut() {
            Some((panel, _)) => {
                panel.update(fetched);
                true
            }
            None => false,
        }
    }

    /// The calls waiting now; whether the screen changed.
    pub(super) fn set_waiting(&mut self, held: Vec<HeldCall>) -> bool {
        if held == self.waiting {
            return false;
        }
        if held.first().map(|h| &h.call) != self.waiting.first().map(|h| &h.call) {
            self.prompt_step = 0;
        }
        self.waiting = held;
        true
    }

    /// Whether `key` answers the approval prompt (shown in the overlay).
    pub(super) fn prompts_for(&self, key: &KeyEvent) -> bool {
        self.activity.is_some()
            && !self.waiting.is_empty()
            && matches!(key.key, KeyCode::Char('y' | 'n' | 'v'))
    }

    /// `y` approves the first waiting call, `n` refuses it (in the
    /// background; the last row says how it went), `v` shows it whole.
    pub(super) fn on_prompt_key(&mut self, key: &KeyEvent) {
        let Some(held) = self.waiting.first().cloned() else {
            return;
        };
        match key.key {
            KeyCode::Char('v') => self.prompt_step = self.prompt_step.wrapping_add(1),
            KeyCode::Char(c) => {
                let approve = c == 'y';
                self.waiting.remove(0);
                self.prompt_step = 0;
                let endpoint = self.endpoint.clone();
                let tx = self.notes.clone();
                let waker = self.waker.clone();
                std::thread::spawn(move || {
                    let text = crate::approval_prompt::decide(&endpoint, &held, approve, "attach");
                    let _ = tx.send(Note::Decided(text));
                    waker.wake();
                });
            }
            _ => {}
        }
    }

    /// A key for the open activity overlay.
    pub(super) fn on_panel_key(&mut self, key: &KeyEvent) -> PanelKey {
        match self.activity.as_mut() {
            Some((panel, _)) => panel.on_key(key),
            None => PanelKey::Consumed,
        }
    }

    /// No overlay is open over the Tick's screen.
    pub(super) fn none_open(&self) -> bool {
        self.activity.is_none()
    }

    /// A call waits and the last row asks about it ([`Self::asking`]).
    pub(super) fn asking_now(&self) -> bool {
        self.activity.is_none() && !self.waiting.is_empty()
    }

    /// What the last row says while a call waits and the overlay is
    /// closed, in `cols` characters: what will happen, cut only with how
    /// much it hides and where it shows whole; who asks; how to answer.
    pub(super) fn asking(&self, prefix: &Prefix, cols: usize) -> Option<String> {
        let held = self.waiting.first().filter(|_| self.activity.is_none())?;
        let tail = format!(
            " · asked by {} · {} m to approve or refuse",
            held.client.map_or("an agent", |c| c.label()),
            prefix.key.name()
        );
        let what = held.plainly_with_call();
        let room = cols.saturating_sub(tail.chars().count()).max(40);
        let what = tickloop_proto::escape::within(&what, room, |hidden| {
            format!(
                "… {hidden} more characters: {} m or `tickloop approvals` shows all",
                prefix.key.name()
            )
        });
        Some(format!("{what}{tail}"))
    }

    /// Draws the open overlay, and the prompt over it, onto `frame`.
    pub(super) fn draw(&self, frame: &mut Frame<'_>, prefix: &Prefix) {
        let Some((panel, _)) = &self.activity else {
            return;
        };
        let now = time::OffsetDateTime::now_utc();
        let hint = format!("{} m closes", prefix.key.name());
        crate::activity::draw(frame.surface.to_mut(), panel, now, &hint, false);
        if let Some(held) = self.waiting.first() {
            let more = self.waiting.len() - 1;
            crate::approval_prompt::draw(
                frame.surface.to_mut(),
                held,
                more,
                self.prompt_step,
                true,
            );
        }
        // The overlay covers the Tick's rows: compare cells, never
        // fingerprints, and never scroll.
        frame.cursor = None;
        frame.scroll_rows = 0;
        frame.row_keys.clear();
    }
}
