//! `tickloop monitor`: a full-screen terminal UI listing every instance (id,
//! kind, title, seq, time since the last update and since the last output,
//! calls in flight, views attached, running or ended with the reason),
//! refreshed from tickhost's `list` every [`POLL_INTERVAL`], with a preview
//! of the selected instance's screen under the list and an [`overlay`] of
//! its live screen.
//!
//! Keys in the list: up/down or k/j select, Enter opens the overlay, `a`
//! attaches full screen (`tickloop attach`, back to the Monitor at detach),
//! `x` closes the instance after asking (forgets an ended one), `r` reloads
//! an `artifact:` instance, `/` filters, `p` shows or hides the
//! preview, `?` lists the keys, Esc clears the filter, q or ctrl+c quits.
//! In the overlay every key goes to the Tick except the prefix
//! key ([`crate::prefix`], ctrl+\ unless configured, as in `tickloop
//! attach`): then `d` closes the overlay (a detach: the program goes on), the
//! prefix again sends it to the Tick, `?` lists the keys. When the Tick ends while shown, the overlay
//! says why until a key closes it.
//!
//! Run by an agent (its host's shell tool; `src/actor.rs`), the Monitor is
//! read-only: it shows everything and answers nothing. `y`/`n`, `x`, `r`,
//! `a` and keys typed into the overlay do nothing but say why
//! (`actions`; the keys themselves are `keys`); its hello to tickhost names the agent (so tickhost
//! refuses its answers as it refuses `tickloop approve` from an agent), and
//! its overlay's hello to the launcher too (which takes no keys or size
//! from it).
//!
//! The terminal is taken like the attach view takes it (raw mode, alternate
//! screen, termwiz `Surface` + `diff_screens`) and restored the same way on
//! every exit path: quitting, SIGTERM/SIGINT/SIGQUIT/SIGHUP, the terminal
//! going away, panics.
//!
//! The parts, one job each: `sources` asks each machine's tickhost for the
//! list (its pollers); `table` draws the list and the preview; `overlay`
//! shows one instance's live screen; `keys` reads the keys and `actions`
//! does what they ask (`full_screen` for `a`); `help` lists the keys. This
//! file holds the main loop, the state it keeps and the frame it draws.

mod actions;
mod columns;
mod full_screen;
pub mod help;
mod keys;
pub mod overlay;
mod row;
#[cfg(test)]
mod snapshots;
mod sources;
pub mod table;
mod timeline;

pub use sources::{Source, POLL_INTERVAL};

use crate::attach_view;
use crate::error::AttachError;
use crate::launcher_link;
use crate::prefix::{Prefix, PrefixKey};
use crate::render::{self, Frame};
use crate::tty::{self, clamp, RestoreGuard};
use overlay::{Geometry, Overlay};
use row::Row;
use serde_json::Value;
use sources::{spawn_poller, Poke, Poller, PreviewTarget};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use table::{Filter, ListView, Preview};
use termwiz::caps::Capabilities;
use termwiz::input::InputEvent;
use termwiz::surface::{Change, Surface};
use termwiz::terminal::{Terminal, TerminalWaker, UnixTerminal};
use tickloop_client::Client;
use tickloop_proto::attach::MouseTracking;
use tickloop_proto::wire::{AgentHost, ClientKind};
use time::OffsetDateTime;

/// A burst of resizes reaches the Tick as one, this long after the last.
const RESIZE_DEBOUNCE: Duration = Duration::from_millis(60);

/// The footer's reminder; `?` lists every key ([`help`]).
const LIST_KEYS: &str = "Enter open · a attach · i activity · x close · ? keys · q quit";
/// The footer of an agent's (read-only) Monitor.
const READ_ONLY_KEYS: &str =
    "read-only (an agent's Monitor): Enter shows · i activity · ? keys · q quit";

/// Why the Monitor could not run.
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error("this needs a terminal: {0}")]
    Terminal(String),
    #[error(transparent)]
    View(#[from] AttachError),
}

impl MonitorError {
    /// The CLI's error kind (docs/cli.md) for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            MonitorError::Terminal(_) => "bad_request",
            MonitorError::View(e) => e.kind(),
        }
    }
}

/// What the main loop hears from the list poller and the signal thread.
enum Event {
    /// Source `.0`'s list, its ids already prefixed ([`Source::wrap`]).
    List(usize, Value),
    ListFailed(usize, String),
    /// The preview's screen, asked for after the list.
    Screen(Preview),
    /// A result to show in the footer (a close done in the background).
    Message(String),
    /// The activity view's data (`i`), fetched.
    Activity(crate::activity::Fetched),
    /// What agents did on every instance (`w`), fetched from one machine.
    Timeline(timeline::Fetched),
    /// The calls waiting for approval (every instance of source `.0`),
    /// oldest first.
    Approvals(usize, Vec<tickloop_proto::wire::HeldCall>),
    Signal,
}

/// Runs the Monitor on the current terminal until the user quits. `client`
/// is a connection to the tickhost of `runtime` (the CLI starts tickhost when
/// needed); when it is lost, the Monitor says so and reconnects. `select`
/// (an id or a bare name) is the instance selected at start, e.g. the Tick in
/// focus when Herdr pops the Monitor over it. With `ssh`, the instances
/// are those of that machine (the list, the overlays and every action go
/// through ssh and the relay there). `viewer` is who the Monitor runs as
/// (its sources' client kind): `monitor` for the person; an agent's kind
/// makes it read-only.
pub fn run(
    runtime: &Path,
    sources: Vec<(Source, Option<Client>)>,
    select: Option<String>,
    prefix: PrefixKey,
    activity: bool,
    viewer: ClientKind,
) -> Result<(), MonitorError> {
    let caps = tty::terminal_caps()?;
    let mut term = UnixTerminal::new(caps.clone())
        .map_err(|e| MonitorError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    let size = term
        .get_screen_size()
        .map_err(|e| MonitorError::Terminal(format!("cannot read the terminal's size: {e}")))?;
    let (events_tx, events) = mpsc::channel();
    spawn_signals(events_tx.clone(), term.waker())?;
    let target: PreviewTarget = Arc::new(Mutex::new(None));
    let mut pokes = Vec::new();
    let mut all = Vec::new();
    for (index, (source, client)) in sources.into_iter().enumerate() {
        let (poke, poked) = mpsc::channel();
        pokes.push(poke);
        all.push(source.clone());
        spawn_poller(
            index,
            source,
            client,
            Poller {
                tx: events_tx.clone(),
                waker: term.waker(),
                target: target.clone(),
                poked,
            },
        );
    }
    let poke = Poke(pokes);

    let guard = RestoreGuard::install()?;
    let result = (|| {
        term.set_raw_mode()
            .map_err(|e| MonitorError::Terminal(format!("cannot enter raw mode: {e}")))?;
        term.enter_alternate_screen()
            .map_err(|e| MonitorError::Terminal(e.to_string()))?;
        guard.entered_screen();
        let mut monitor = Monitor {
            runtime: runtime.to_path_buf(),
            lists: vec![None; all.len()],
            waiting_of: vec![Vec::new(); all.len()],
            problems: vec![None; all.len()],
            sources: all,
            caps,
            waker: term.waker(),
            list: Value::Array(Vec::new()),
            all_rows: Vec::new(),
            rows: Vec::new(),
            filter: String::new(),
            filter_editing: false,
            preview_on: true,
            preview: None,
            target,
            poke,
            events_tx,
            confirm: None,
            clock: OffsetDateTime::now_utc,
            selected: 0,
            selected_id: select,
            top: 0,
            message: None,
            tickhost_problem: Some("asking tickhost for the list…".into()),
            overlay: None,
            activity: None,
            activity_at_start: activity,
            timeline: None,
            waiting: Vec::new(),
            prompt_step: 0,
            help: None,
            size: (clamp(size.cols), clamp(size.rows)),
            mouse: MouseTracking::Off,
            prefix: Prefix::new(prefix),
            viewer,
            read_only: read_only_as(viewer),
        };
        monitor.main_loop(&mut term, &guard, &events)
    })();
    // termwiz's own teardown unwraps its writes, which fail when the terminal
    // is gone; the guard restores everything it would, ignoring errors.
    guard.restore();
    std::mem::forget(term);
    result
}

/// Signals end the Monitor cleanly (the terminal is restored).
fn spawn_signals(tx: mpsc::Sender<Event>, waker: TerminalWaker) -> Result<(), MonitorError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGQUIT, SIGHUP])
        .map_err(|e| MonitorError::Terminal(format!("cannot handle signals: {e}")))?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = tx.send(Event::Signal);
            let _ = waker.wake();
        }
    });
    Ok(())
}

struct Monitor {
    runtime: PathBuf,
    /// The machines whose instances these are (this one, or over ssh), and
    /// the last list, the waiting calls and the problem of each.
    sources: Vec<Source>,
    lists: Vec<Option<Value>>,
    waiting_of: Vec<Vec<tickloop_proto::wire::HeldCall>>,
    problems: Vec<Option<String>>,
    caps: Capabilities,
    waker: TerminalWaker,
    /// The last `list` answer, as JSON (to resolve ids like `attach` does).
    list: Value,
    /// Every instance, and those the filter lets through (shown).
    all_rows: Vec<Row>,
    rows: Vec<Row>,
    /// The filter typed after `/` (matched in lower case), and whether it
    /// is still being typed.
    filter: String,
    filter_editing: bool,
    /// The preview under the list (`p`), and its last screen.
    preview_on: bool,
    preview: Option<Preview>,
    /// The instance whose screen the poller fetches, and a poke for it.
    target: PreviewTarget,
    poke: Poke,
    /// For work done in the background (closing an instance).
    events_tx: mpsc::Sender<Event>,
    /// The instance `x` asked to close (and whether it had ended), until
    /// `y` or another key.
    confirm: Option<(String, bool)>,
    /// The clock the ages are measured with.
    clock: fn() -> OffsetDateTime,
    selected: usize,
    /// The selection follows its instance when the list changes.
    selected_id: Option<String>,
    top: usize,
    /// A message for the footer (until the next key).
    message: Option<String>,
    /// Set while tickhost cannot be reached.
    tickhost_problem: Option<String>,
    overlay: Option<Overlay>,
    /// The selected instance's activity (`i`), over the list, and what
    /// feeds it.
    activity: Option<(crate::activity::ActivityView, crate::activity::Fetcher)>,
    /// `--activity`: open it for the selected instance once the list came.
    activity_at_start: bool,
    /// What agents did on every instance (`w`), over everything.
    timeline: Option<timeline::Timeline>,
    /// Calls waiting for approval: the first is prompted for (y/n/v) over
    /// whatever is shown.
    waiting: Vec<tickloop_proto::wire::HeldCall>,
    /// The `v`s pressed since the prompt showed ([`crate::approval_prompt::draw`]).
    prompt_step: usize,
    /// `?`: the keys shown (its title and the keys), until any key.
    help: Option<(&'static str, Vec<help::KeyHelp>)>,
    size: (u16, u16),
    /// The mouse reporting the user's terminal has on.
    mouse: MouseTracking,
    /// The prefix key, which closes the overlay (then `d`).
    prefix: Prefix,
    /// Who the Monitor runs as (the overlay's hello says it too).
    viewer: ClientKind,
    /// Set when that is an agent: who, as the read-only notes name it.
    read_only: Option<String>,
}

/// Who a Monitor running as `viewer` acts for, when that is an agent (then
/// it is read-only): `Claude Code (its shell tool)`, `an agent (mcp)`.
fn read_only_as(viewer: ClientKind) -> Option<String> {
    match viewer {
        ClientKind::AgentCli(AgentHost::Other) => Some("an agent (its shell tool)".into()),
        ClientKind::AgentCli(host) => Some(format!("{} (its shell tool)", host.title())),
        kind if kind.is_agent() => Some(kind.actor()),
        _ => None,
    }
}

/// What a key did.
enum Flow {
    Go,
    Quit,
    /// Attach to this instance full screen, then come back.
    Attach(String),
}

impl Monitor {
    fn main_loop(
        &mut self,
        term: &mut UnixTerminal,
        guard: &RestoreGuard,
        events: &mpsc::Receiver<Event>,
    ) -> Result<(), MonitorError> {
        let mut shown = Surface::new(usize::from(self.size.0), usize::from(self.size.1));
        let mut keys = render::InputReader::default();
        let _ = term.render(&[Change::ClearScreen(Default::default())]);
        let mut dirty = true;
        loop {
            loop {
                match events.try_recv() {
                    Ok(Event::List(index, list)) => {
                        if let Some(slot) = self.lists.get_mut(index) {
                            *slot = Some(list);
                        }
                        if let Some(slot) = self.problems.get_mut(index) {
                            *slot = None;
                        }
                        self.set_list(self.merged());
                        self.tickhost_problem = self.problem();
                        if std::mem::take(&mut self.activity_at_start) {
                            self.open_activity();
                        }
                        dirty = true;
                    }
                    Ok(Event::ListFailed(index, why)) => {
                        if let Some(slot) = self.problems.get_mut(index) {
                            *slot = Some(why);
                        }
                        self.tickhost_problem = self.problem();
                        dirty = true;
                    }
                    Ok(Event::Screen(preview)) => {
                        self.preview = Some(preview);
                        dirty = true;
                    }
                    Ok(Event::Message(text)) => {
                        self.message = Some(text);
                        dirty = true;
                    }
                    Ok(Event::Approvals(index, mine)) => {
                        if let Some(slot) = self.waiting_of.get_mut(index) {
                            *slot = mine;
                        }
                        let waiting: Vec<_> = self.waiting_of.iter().flatten().cloned().collect();
                        if waiting.first().map(|h| &h.call) != self.waiting.first().map(|h| &h.call)
                        {
                            self.prompt_step = 0;
                        }
                        if waiting != self.waiting {
                            self.waiting = waiting;
                            dirty = true;
                        }
                    }
                    Ok(Event::Activity(fetched)) => {
                        if let Some((view, _)) = self.activity.as_mut() {
                            view.update(fetched);
                            dirty = true;
                        }
                    }
                    Ok(Event::Timeline(fetched)) => dirty |= self.timeline_fetched(fetched),
                    Ok(Event::Signal) => return Ok(()),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => break,
                }
            }
            if let Some(overlay) = self.overlay.as_mut() {
                dirty |= overlay.pump();
                overlay.flush_resize(Instant::now());
            }
            if dirty {
                let wanted = self
                    .overlay
                    .as_ref()
                    .filter(|o| o.stopped.is_none())
                    .and_then(|o| o.model.as_ref().map(|m| o.scroller.mouse_mode(m)))
                    .unwrap_or(MouseTracking::Off);
                if wanted != self.mouse {
                    self.mouse = wanted;
                    let _ = term.flush();
                    guard.set_mouse(wanted);
                }
                let frame = self.frame();
                let changes = render::frame_changes(&mut shown, &frame);
                if term.render(&changes).is_err() || term.flush().is_err() {
                    // The terminal is gone.
                    return Ok(());
                }
                dirty = false;
            }

            let wait = self
                .overlay
                .as_ref()
                .and_then(|o| o.pending_resize)
                .map(|at| at.saturating_duration_since(Instant::now()));
            let input = match keys.poll(term, wait) {
                Ok(input) => input,
                // The terminal went away (SIGHUP comes too).
                Err(_) => return Ok(()),
            };
            match input {
                None | Some(InputEvent::Wake) => {}
                Some(InputEvent::Resized { cols, rows }) => {
                    self.size = (clamp(cols), clamp(rows));
                    shown = Surface::new(cols, rows);
                    let _ = term.render(&[Change::ClearScreen(Default::default())]);
                    let geo = Geometry::for_terminal(self.size.0, self.size.1);
                    if let Some(o) = self.overlay.as_mut() {
                        o.resized(
                            (geo.inner_cols, geo.inner_rows),
                            Instant::now() + RESIZE_DEBOUNCE,
                        );
                    }
                    dirty = true;
                }
                Some(event) => {
                    dirty = true;
                    match self.input(event) {
                        Flow::Go => {}
                        Flow::Quit => return Ok(()),
                        Flow::Attach(id) => {
                            self.attach_full_screen(term, guard, &id)?;
                            shown =
                                Surface::new(usize::from(self.size.0), usize::from(self.size.1));
                            let _ = term.render(&[Change::ClearScreen(Default::default())]);
                        }
                    }
                }
            }
        }
    }

    /// Every source's last list, one after the other.
    fn merged(&self) -> Value {
        Value::Array(
            self.lists
                .iter()
                .flatten()
                .filter_map(Value::as_array)
                .flatten()
                .cloned()
                .collect(),
        )
    }

    /// What is wrong with reaching the sources, if anything.
    fn problem(&self) -> Option<String> {
        let several = self.sources.len() > 1;
        let said: Vec<String> = self
            .problems
            .iter()
            .zip(&self.sources)
            .filter_map(|(problem, source)| {
                let why = problem.as_ref()?;
                Some(match (&source.prefix, several) {
                    (Some(p), true) => format!("{p}: {why}"),
                    _ => format!("tickhost: {why}"),
                })
            })
            .collect();
        (!said.is_empty()).then(|| format!("{}; retrying", said.join(" · ")))
    }

    /// The source of `id` (as shown) and the id on its machine.
    fn route_index(&self, id: &str) -> Option<(usize, String)> {
        // A prefixed source first: `box:hosted:x` is never this machine's.
        let mut order: Vec<usize> = (0..self.sources.len()).collect();
        order.sort_by_key(|i| self.sources[*i].prefix.is_none());
        order
            .into_iter()
            .find_map(|i| self.sources[i].unwrap(id).map(|raw| (i, raw.to_string())))
    }

    /// [`Monitor::route_index`]'s tickhost.
    fn route(&self, id: &str) -> Option<(tickloop_client::Endpoint, String)> {
        let (i, raw) = self.route_index(id)?;
        Some((self.sources[i].endpoint.clone(), raw))
    }

    fn set_list(&mut self, list: Value) {
        self.tickhost_problem = None;
        self.all_rows = Row::all_from_json(&list);
        self.list = list;
        self.refilter();
    }

    /// The rows the filter lets through, the selection kept on its
    /// instance when it is still shown.
    fn refilter(&mut self) {
        let filter = self.filter.to_lowercase();
        self.rows = self
            .all_rows
            .iter()
            .filter(|r| r.matches(&filter))
            .cloned()
            .collect();
        if let Some(id) = &self.selected_id {
            let names =
                |row: &Row| row.id == *id || row.id.split_once(':').map(|(_, n)| n) == Some(id);
            if let Some(i) = self.rows.iter().position(names) {
                self.selected = i;
            }
        }
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
        self.selected_id = self.rows.get(self.selected).map(|r| r.id.clone());
        self.retarget();
    }

    fn select(&mut self, index: usize) {
        self.selected = index.min(self.rows.len().saturating_sub(1));
        self.selected_id = self.rows.get(self.selected).map(|r| r.id.clone());
        self.retarget();
    }

    /// Tells the poller whose screen the preview wants, and pokes it when
    /// that changed (the preview follows the selection at once).
    fn retarget(&mut self) {
        let wanted = self.preview_on.then(|| self.selected_id.clone()).flatten();
        let Ok(mut target) = self.target.lock() else {
            return;
        };
        if *target != wanted {
            *target = wanted;
            drop(target);
            let _ = self.poke.send(());
        }
    }

    fn open_overlay(&mut self) {
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        if let Some(ended) = &row.ended {
            self.message = Some(format!(
                "{} has ended ({}): nothing to show",
                row.id, ended.kind
            ));
            return;
        }
        let Some((index, raw)) = self.route_index(&row.id) else {
            self.message = Some(format!("{} is on no machine of this Monitor", row.id));
            return;
        };
        let source = self.sources[index].clone();
        let raw_list = source.unwrap_list(self.lists[index].clone().unwrap_or_default());
        match attach_view::resolve(&self.runtime, &raw, &raw_list) {
            Ok((raw, socket)) => {
                let id = source.wrap(&raw);
                let geo = Geometry::for_terminal(self.size.0, self.size.1);
                let hello = launcher_link::view_hello(
                    &self.caps,
                    (geo.inner_cols, geo.inner_rows),
                    "monitor",
                );
                let to = launcher_link::Dial {
                    socket,
                    ssh: source.endpoint.host().cloned(),
                    instance: raw,
                    kind: self.viewer,
                };
                self.overlay = Some(Overlay::open(
                    id,
                    to,
                    hello,
                    self.waker.clone(),
                    self.prefix.key.name(),
                ));
            }
            Err(e) => self.message = Some(e.to_string()),
        }
    }

    /// Shows the selected instance's activity over the list.
    fn open_activity(&mut self) {
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        let id = row.id.clone();
        let (tx, waker) = (self.events_tx.clone(), self.waker.clone());
        let Some((endpoint, raw)) = self.route(&id) else {
            return;
        };
        let fetcher = crate::activity::Fetcher::start(endpoint, raw, move |fetched| {
            let sent = tx.send(Event::Activity(fetched)).is_ok();
            let _ = waker.wake();
            sent
        });
        self.activity = Some((crate::activity::ActivityView::new(&id), fetcher));
    }

    /// Closes the overlay (hangs up: a detach).
    fn close_overlay(&mut self, message: Option<String>) {
        self.overlay = None;
        self.message = message;
    }

    /// The whole screen: the list, and the overlay over it.
    fn frame(&mut self) -> Frame<'static> {
        let (cols, rows) = (usize::from(self.size.0), usize::from(self.size.1));
        self.top = table::scroll_for(
            self.selected,
            self.top,
            table::body_rows(rows, self.preview_on, self.rows.len()),
            self.rows.len(),
        );
        let overlay_footer;
        let (footer, alert) = match (&self.overlay, &self.tickhost_problem, &self.message) {
            (Some(o), _, message) => {
                overlay_footer = match (&o.stopped, message) {
                    (None, Some(message)) => message.clone(),
                    (None, None) if self.read_only.is_some() => format!(
                        "{p} d closes the overlay (it goes on) · read-only: keys do not reach {}",
                        o.id,
                        p = self.prefix.key.name(),
                    ),
                    (None, None) => format!(
                        "{p} d closes the overlay (it goes on) · {p} ? keys · keys go to {}",
                        o.id,
                        p = self.prefix.key.name(),
                    ),
                    (Some(_), _) => "any key closes the overlay".to_string(),
                };
                (overlay_footer.as_str(), false)
            }
            (None, Some(problem), _) => (problem.as_str(), true),
            (None, None, Some(message)) => (message.as_str(), false),
            (None, None, None) if self.read_only.is_some() => (READ_ONLY_KEYS, false),
            (None, None, None) => (LIST_KEYS, false),
        };
        let view = ListView {
            rows: &self.rows,
            total: self.all_rows.len(),
            running: self.all_rows.iter().filter(|r| r.ended.is_none()).count(),
            selected: self.selected,
            top: self.top,
            footer,
            footer_alert: alert,
            filter: (self.filter_editing || !self.filter.is_empty()).then_some(Filter {
                text: &self.filter,
                editing: self.filter_editing,
            }),
            preview: self.preview_on.then_some(self.preview.as_ref()),
            now: (self.clock)(),
        };
        let mut surface = table::draw(&view, cols, rows);
        let mut cursor = None;
        let mut cursor_shape = tickloop_proto::attach::CursorShape::Default;
        if let Some(o) = &mut self.overlay {
            let geo = Geometry::for_terminal(self.size.0, self.size.1);
            (cursor, cursor_shape) = overlay::draw(&mut surface, o, &geo);
        }
        if let Some((view, _)) = &self.activity {
            crate::activity::draw(&mut surface, view, (self.clock)(), "", false);
            cursor = None;
        }
        if self.draw_timeline(&mut surface) {
            cursor = None;
        }
        if let Some((title, keys)) = &self.help {
            help::draw(&mut surface, title, keys);
            cursor = None;
        }
        if let Some(held) = self.waiting.first() {
            let more = self.waiting.len() - 1;
            let answers = self.read_only.is_none();
            crate::approval_prompt::draw(&mut surface, held, more, self.prompt_step, answers);
            cursor = None;
            // Why a key did nothing stays readable: the prompt covers the
            // footer, and a read-only Monitor's prompt never goes away.
            if let (Some(_), Some(message)) = (&self.read_only, &self.message) {
                crate::cells::last_row_note(&mut surface, message);
            }
        }
        Frame {
            surface: std::borrow::Cow::Owned(surface),
            cursor,
            cursor_shape,
            scroll_rows: 0,
            row_keys: Vec::new(),
            kept: None,
            delta: None,
        }
    }
}
