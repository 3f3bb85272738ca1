//! What every view of one launcher shares: their count, the size policy
//! (the latest active view's size becomes the PTY's, debounced, with a
//! nudge when it does not change; never past the views' limit,
//! [`MAX_SCREEN_CELLS`]) and the colours the Tick's colour queries are
//! answered with.

use crate::terminal::TerminalHandle;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tickloop_proto::attach::{fit_size, TermColors, MAX_SCREEN_CELLS};
use tokio::sync::watch;

/// A resize is applied this long after the last request in a burst.
pub const RESIZE_DEBOUNCE: Duration = Duration::from_millis(50);
/// How long a nudge holds the one-row-off size before going back.
const NUDGE_HOLD: Duration = Duration::from_millis(40);
/// The smallest size a view may ask for.
const MIN_COLS: u16 = 2;
const MIN_ROWS: u16 = 2;

/// What the size task is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Want {
    cols: u16,
    rows: u16,
    /// Make the Tick redraw even if the size does not change.
    nudge: bool,
}

struct HubState {
    next_id: u64,
    /// Each attached view's size.
    views: HashMap<u64, (u16, u16)>,
    /// The colours of each view whose terminal reported them.
    colors: HashMap<u64, TermColors>,
    /// The most recently active view.
    latest: Option<u64>,
}

/// The views of one launcher: their count, and the size policy.
pub struct ViewHub {
    pub(super) term: Arc<TerminalHandle>,
    state: Mutex<HubState>,
    count_tx: watch::Sender<u32>,
    want_tx: watch::Sender<Option<Want>>,
}

impl ViewHub {
    /// A hub for the terminal, with its size task running (needs a tokio
    /// runtime).
    pub fn start(term: Arc<TerminalHandle>) -> Arc<ViewHub> {
        let (count_tx, _) = watch::channel(0);
        let (want_tx, want_rx) = watch::channel(None);
        let hub = Arc::new(ViewHub {
            term: term.clone(),
            state: Mutex::new(HubState {
                next_id: 1,
                views: HashMap::new(),
                colors: HashMap::new(),
                latest: None,
            }),
            count_tx,
            want_tx,
        });
        tokio::spawn(size_task(term, want_rx));
        hub
    }

    /// The number of attached views, and its changes.
    pub fn count(&self) -> watch::Receiver<u32> {
        self.count_tx.subscribe()
    }

    fn publish_count(&self, state: &HubState) {
        let n = u32::try_from(state.views.len()).unwrap_or(u32::MAX);
        self.count_tx.send_replace(n);
    }

    pub(super) fn register(&self, cols: u16, rows: u16) -> u64 {
        let Ok(mut state) = self.state.lock() else {
            return 0;
        };
        let id = state.next_id;
        state.next_id += 1;
        state.views.insert(id, (cols, rows));
        self.publish_count(&state);
        id
    }

    pub(super) fn unregister(&self, id: u64) {
        if let Ok(mut state) = self.state.lock() {
            state.views.remove(&id);
            // The colours it set stay: the last seen, until another view's.
            state.colors.remove(&id);
            self.publish_count(&state);
        }
    }

    /// View `id`'s terminal reported its colours: the Tick's colour queries
    /// are answered with them while it is the most recently active view.
    pub(super) fn set_colors(&self, id: u64, colors: TermColors) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.latest == Some(id) {
            self.term.set_colors(&colors);
        }
        state.colors.insert(id, colors);
    }

    /// View `id` is now the most recently active one; `size` is its new size
    /// when it changed.
    pub(super) fn activate(&self, id: u64, size: Option<(u16, u16)>, nudge: bool) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        let Some(current) = state.views.get_mut(&id) else {
            return;
        };
        if let Some(size) = size {
            *current = size;
        }
        let (cols, rows) = *current;
        if cols == 0 || rows == 0 {
            // A terminal that does not know its size (a pipe, a `script`
            // with no terminal of its own) leaves the Tick's size alone:
            // shrunk to 2x2, its screen would be kept that way.
            return;
        }
        if state.latest != Some(id) {
            state.latest = Some(id);
            if let Some(colors) = state.colors.get(&id) {
                self.term.set_colors(colors);
            }
        }
        // Never past the views' limit: a view that asks for more gets the
        // largest size allowed at its width (its status line says so).
        let (fit_cols, fit_rows) = fit_size(cols, rows);
        // Said once per size asked (at attach, at a resize), not per key.
        if (size.is_some() || nudge) && (fit_cols, fit_rows) != (cols, rows) {
            eprintln!(
                "launcher: a view asked for {cols}x{rows} cells, more than a screen may have \
                 ({MAX_SCREEN_CELLS} cells); the PTY takes {fit_cols}x{fit_rows}"
            );
        }
        let want = Want {
            cols: fit_cols.max(MIN_COLS),
            rows: fit_rows.max(MIN_ROWS),
            nudge,
        };
        self.want_tx.send_if_modified(|old| {
            // Repeated activity at the same size is nothing new; a nudge is.
            let changed = *old != Some(want) || nudge;
            *old = Some(want);
            changed
        });
    }
}

/// Applies the latest wanted size after a quiet [`RESIZE_DEBOUNCE`].
async fn size_task(term: Arc<TerminalHandle>, mut want_rx: watch::Receiver<Option<Want>>) {
    loop {
        if want_rx.changed().await.is_err() {
            return;
        }
        // Debounce: wait until no newer request came for a while.
        loop {
            match tokio::time::timeout(RESIZE_DEBOUNCE, want_rx.changed()).await {
                Ok(Ok(())) => continue,
                Ok(Err(_)) => return,
                Err(_) => break,
            }
        }
        let Some(want) = *want_rx.borrow_and_update() else {
            continue;
        };
        let current = term.size();
        if (want.cols, want.rows) != current {
            if let Err(e) = term.resize(want.rows, want.cols).await {
                eprintln!("launcher: cannot resize the terminal: {e}");
            }
        } else if want.nudge {
            let off = if want.rows > MIN_ROWS {
                want.rows - 1
            } else {
                want.rows + 1
            };
            // The PTY only: the Tick gets two SIGWINCHs and redraws at the
            // size it had; the emulator never sees the passing size.
            if term.resize_pty_only(off, want.cols).is_ok() {
                tokio::time::sleep(NUDGE_HOLD).await;
                let _ = term.resize_pty_only(want.rows, want.cols);
            }
        }
    }
}
