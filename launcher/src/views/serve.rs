//! Serving one view's connection: its hello, a snapshot, then the changed
//! rows paced by a token bucket while output keeps coming (the frame that
//! shows where it stopped goes at once), its events applied to the
//! terminal, and the end of the instance as its last line.

use super::hub::ViewHub;
use super::lending::{KeysLending, Lending};
use crate::terminal::TerminalHandle;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::framing::read_line_limited;
use tickloop_proto::attach::{Snapshot, ToView, ViewEvent, ViewHello, MAX_VIEW_LINE};
use tickloop_proto::wire::ImagePlacement;
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// The shortest time between two frames sent to one view (60 frames/s).
pub const FRAME_INTERVAL: Duration = Duration::from_millis(16);
/// How many frames a view may get back to back after a quiet spell.
pub const FRAME_BURST: f64 = 8.0;

/// A token bucket for a view's frames: [`FRAME_BURST`] at once, refilled at
/// one per [`FRAME_INTERVAL`]. The frame that shows the end of a burst may
/// borrow the next interval's token ([`FramePacer::may_borrow`]): it goes
/// at once, and the frame after it waits longer, so a program that prints
/// in short bursts still gets at most one frame an interval.
struct FramePacer {
    tokens: f64,
    refilled_at: Instant,
}

impl FramePacer {
    fn new() -> Self {
        FramePacer {
            tokens: FRAME_BURST,
            refilled_at: Instant::now(),
        }
    }

    /// Takes one frame's token; returns when the next frame may go.
    fn sent(&mut self) -> Instant {
        self.sent_at(Instant::now())
    }

    /// Whether a frame may go at `now` ahead of its time, on the token of
    /// the interval to come: none was borrowed that has not been paid back.
    fn may_borrow(&self, now: Instant) -> bool {
        let refill = (now - self.refilled_at).as_secs_f64() / FRAME_INTERVAL.as_secs_f64();
        self.tokens + refill >= 0.0
    }

    /// [`FramePacer::sent`] for a frame sent at `now`.
    fn sent_at(&mut self, now: Instant) -> Instant {
        let refill = (now - self.refilled_at).as_secs_f64() / FRAME_INTERVAL.as_secs_f64();
        self.tokens = (self.tokens + refill).min(FRAME_BURST) - 1.0;
        self.refilled_at = now;
        if self.tokens >= 1.0 {
            now
        } else {
            now + FRAME_INTERVAL.mul_f64(1.0 - self.tokens)
        }
    }
}

/// How long a new view may take to send its [`ViewHello`].
const VIEW_HELLO_TIMEOUT: Duration = Duration::from_secs(30);

/// Everything a view connection needs from the launcher.
pub struct ViewContext {
    pub hub: Arc<ViewHub>,
    pub status: watch::Receiver<crate::published::Published>,
    pub shutdown: watch::Receiver<bool>,
    pub flushed: mpsc::WeakSender<()>,
    /// The view said it is an agent's (`wire::Hello::is_agents_view`): it
    /// watches, and nothing it sends reaches the Tick (keys, paste, mouse,
    /// focus), resizes it or makes it the latest view; the Tick's clipboard
    /// writes are not passed to it.
    pub read_only: bool,
    /// The view's socket, for the terminal thread to write a keystroke's
    /// echo to while the view waits with nothing left to send (a duplicate
    /// of the writer's descriptor; none: every frame goes through the
    /// view's task).
    pub echo_sink: Option<OwnedFd>,
}

/// Serve one view after its accepted hello: read its [`ViewHello`], send a
/// snapshot and frames, apply its events, until either side hangs up or the
/// instance ends (then [`ToView::Ended`] is the last line).
pub async fn serve_view<R, W>(mut reader: R, mut writer: W, ctx: ViewContext)
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin,
{
    let Some(_flushed) = ctx.flushed.upgrade() else {
        return;
    };
    let Some(hello) = read_hello(&mut reader, &mut writer).await else {
        return;
    };
    let hub = ctx.hub.clone();
    let id = hub.register(hello.cols, hello.rows);
    let _registered = Unregister(hub.clone(), id);
    welcome(&hub, id, ctx.read_only, hello.client.as_deref());

    let events = start_events(reader, &hub, (id, &hello, &ctx));
    let (mut gone_rx, mut scroll_rx) = (events.gone, events.scroll);
    let (mut image_rx, typed) = (events.images, events.typed);
    let mut keys_back = events.keys_back;

    let mut changes = hub.term.subscribe_changes();
    // Where the output stopped: the frame that shows it is not paced.
    let mut drained = hub.term.subscribe_drained();
    let mut term_events = hub.term.subscribe_events();
    let mut status = ctx.status;
    let mut shutdown = ctx.shutdown;
    let mut last: Option<Snapshot> = None;
    let mut dirty = true;
    let mut next_frame = Instant::now();
    let mut pacer = FramePacer::new();
    // The image placements the view was sent last.
    let mut images_sent: Vec<ImagePlacement> = Vec::new();
    // The view's socket, lent with `last` to the terminal thread while the
    // task waits with nothing to send.
    let mut lending = Lending::new(ctx.echo_sink, hello.tty.as_ref(), ctx.read_only);

    enum Step {
        Event(crate::emulator::TermEvent),
        Image(u32),
        KeysBack(crate::terminal::KeysBack),
        Changed,
        /// Woken while lent: a change may have come that was not sent.
        Told,
        Scrolled,
        Drained,
        Frame,
        Status,
        Shutdown,
        Gone,
    }
    loop {
        if let Some(reason) = ended(&status) {
            let offset = *scroll_rx.borrow();
            send_end(&mut writer, &hub.term, offset, last.as_ref(), reason).await;
            break;
        }
        // Nothing to send, the live screen shown, no images placed: the
        // next echo's frame may be written by the terminal thread.
        let lent = !dirty
            && images_sent.is_empty()
            && *scroll_rx.borrow() == 0
            && lending.lend(&hub.term, id, &mut last);
        // A change told before the view was lent does not wake it: seen
        // here (the terminal thread wakes the views lent when it tells one).
        let told_before = lent && changes.has_changed().unwrap_or(true);
        let step = tokio::select! {
            r = changes.changed(), if !dirty && !lent => match r {
                Ok(()) => Step::Changed,
                Err(_) => Step::Gone,
            },
            _ = lending.told.notified(), if lent => Step::Told,
            _ = std::future::ready(()), if told_before => Step::Told,
            r = scroll_rx.changed(), if !dirty => match r {
                Ok(()) => Step::Scrolled,
                Err(_) => Step::Gone,
            },
            _ = frame_due(next_frame), if dirty && !typed.load(Ordering::Acquire) => Step::Frame,
            r = drained.changed(), if dirty => match r {
                Ok(()) => Step::Drained,
                Err(_) => Step::Gone,
            },
            _ = std::future::ready(()), if dirty && typed.load(Ordering::Acquire) => Step::Frame,
            r = status.changed() => match r {
                Ok(()) => Step::Status,
                Err(_) => Step::Shutdown,
            },
            _ = shutdown.wait_for(|&down| down) => Step::Shutdown,
            r = term_events.recv() => match r {
                Ok(event) => Step::Event(event),
                // Fell behind: the missed bells are not worth a frame
                // (no `continue`: the view lent is taken back below).
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Step::Status,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => Step::Gone,
            },
            Some(index) = image_rx.recv() => Step::Image(index),
            Some(back) = keys_back.recv() => Step::KeysBack(back),
            _ = gone_rx.recv() => Step::Gone,
        };
        if lent
            && (lending.take_back(&hub.term, id, &mut last, &mut writer))
                .await
                .is_err()
        {
            break;
        }
        match step {
            Step::Event(crate::emulator::TermEvent::Clipboard { .. }) if ctx.read_only => {}
            Step::Event(event) => {
                if send(&mut writer, &term_event_message(event)).await.is_err() {
                    break;
                }
            }
            Step::Image(index) => {
                if send_image(&mut writer, &hub.term, index).await.is_err() {
                    break;
                }
            }
            Step::KeysBack((lend, bytes)) => {
                if send(&mut writer, &ToView::KeysBack { lend, bytes })
                    .await
                    .is_err()
                {
                    break;
                }
            }
            Step::Changed => dirty = lending.needs_frame(&mut changes, false, &typed),
            Step::Told => dirty = lending.needs_frame(&mut changes, true, &typed),
            Step::Scrolled => dirty = true,
            Step::Drained => {
                // The output stopped at the change this view has yet to
                // draw: that frame goes now, not at the pacer's next tick.
                let stopped_at = *drained.borrow_and_update();
                let now = Instant::now();
                if stopped_at == *changes.borrow() && now < next_frame && pacer.may_borrow(now) {
                    next_frame = now;
                }
            }
            Step::Status => {}
            Step::Shutdown => {
                if let Some(reason) = ended(&status) {
                    let offset = *scroll_rx.borrow();
                    send_end(&mut writer, &hub.term, offset, last.as_ref(), reason).await;
                }
                break;
            }
            Step::Gone => break,
            Step::Frame => {
                dirty = false;
                // Mark what this frame covers before taking it.
                let change = *changes.borrow_and_update();
                let offset = *scroll_rx.borrow_and_update();
                let sent = ViewSent {
                    last: &mut last,
                    images: &mut images_sent,
                };
                if next_frame_sent(&mut writer, &hub.term, change, offset, sent)
                    .await
                    .is_err()
                {
                    break;
                }
                // An echo is not paced: typing is not a flood.
                if !typed.swap(false, Ordering::AcqRel) {
                    next_frame = pacer.sent();
                }
            }
        }
    }
    events.task.abort();
    let _ = writer.shutdown().await;
}

/// A view that said its hello: an agent's is said in the log (it
/// watches), a person's becomes the latest active view.
fn welcome(hub: &ViewHub, id: u64, read_only: bool, client: Option<&str>) {
    if read_only {
        eprintln!(
            "launcher: an agent's view attached ({}): it watches; its keys and size are not taken",
            client.unwrap_or("a view")
        );
    } else {
        hub.activate(id, None, true);
    }
}

/// The task applying a view's events, and what it tells the writer.
struct EventsTask {
    task: tokio::task::JoinHandle<()>,
    /// Told when the view is gone.
    gone: mpsc::Receiver<()>,
    /// How far back this view is scrolled.
    scroll: watch::Receiver<usize>,
    /// The kept images whose bytes the view asked for (`ViewEvent::Image`).
    images: mpsc::Receiver<u32>,
    /// Set when the view typed: the next frame (the echo) goes at once,
    /// whatever the pacing, and is not counted by it.
    typed: Arc<AtomicBool>,
    /// The keys the terminal thread read and gives back, for the writer
    /// to send.
    keys_back: mpsc::UnboundedReceiver<crate::terminal::KeysBack>,
}

/// The view's events, applied as they come, on their own task (reading a
/// line is not cancel-safe, so it does not share a select with writing).
fn start_events<R>(
    reader: R,
    hub: &Arc<ViewHub>,
    (id, hello, ctx): (u64, &ViewHello, &ViewContext),
) -> EventsTask
where
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let read_only = ctx.read_only;
    let (keys_back_tx, keys_back) = mpsc::unbounded_channel();
    let keys = KeysLending::new(
        hello.tty.as_ref(),
        ctx.echo_sink.as_ref(),
        read_only,
        keys_back_tx,
    );
    let (gone_tx, gone) = mpsc::channel::<()>(1);
    let (scroll_tx, scroll) = watch::channel(0usize);
    let (image_tx, images) = mpsc::channel::<u32>(16);
    let typed = Arc::new(AtomicBool::new(false));
    let task = tokio::spawn(apply_events(
        reader,
        ViewEvents {
            hub: hub.clone(),
            id,
            keys,
            scroll: scroll_tx,
            typed: typed.clone(),
            gone: gone_tx,
            images: image_tx,
            read_only,
        },
    ));
    EventsTask {
        task,
        gone,
        scroll,
        images,
        typed,
        keys_back,
    }
}

/// Reads the view's [`ViewHello`] (for at most [`VIEW_HELLO_TIMEOUT`]); a
/// line that is not one is answered with [`ToView::Ended`].
async fn read_hello<R, W>(reader: &mut R, writer: &mut W) -> Option<ViewHello>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut line = Vec::new();
    match tokio::time::timeout(
        VIEW_HELLO_TIMEOUT,
        read_line_limited(reader, &mut line, 64 * 1024),
    )
    .await
    {
        Ok(Ok(true)) => match serde_json::from_slice(&line) {
            Ok(hello) => Some(hello),
            Err(e) => {
                let _ = send(
                    writer,
                    &ToView::Ended {
                        reason: format!("expected the view's hello: {e}"),
                    },
                )
                .await;
                None
            }
        },
        _ => None,
    }
}

/// Where the events of view `id` go.
struct ViewEvents {
    hub: Arc<ViewHub>,
    id: u64,
    /// What the view may lend of its terminal's keys.
    keys: KeysLending,
    /// How far back the view is scrolled.
    scroll: watch::Sender<usize>,
    /// Set when the view typed (its next frame is an echo).
    typed: Arc<AtomicBool>,
    /// Told when the view is gone (or detached for nonsense).
    gone: mpsc::Sender<()>,
    /// The kept images the view asks the bytes of.
    images: mpsc::Sender<u32>,
    /// An agent's view: only its scrolling is taken.
    read_only: bool,
}

/// Applies the view's events as they come, until it hangs up, sends a line
/// that is no event, or its input cannot reach the terminal.
async fn apply_events<R: AsyncBufRead + Unpin>(mut reader: R, to: ViewEvents) {
    let ViewEvents {
        hub,
        id,
        keys,
        scroll,
        typed,
        gone,
        images,
        read_only,
    } = to;
    let mut refused_said = false;
    let mut line = Vec::new();
    loop {
        match read_line_limited(&mut reader, &mut line, MAX_VIEW_LINE).await {
            Ok(true) => {}
            _ => break,
        }
        // A key typed where the program shows nothing still wakes code.
        tickloop_client::idle::mark_busy();
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let Ok(event) = serde_json::from_slice::<ViewEvent>(&line) else {
            // A view that speaks nonsense is detached.
            break;
        };
        match event {
            ViewEvent::Scroll { offset } => {
                scroll.send_replace(usize::try_from(offset).unwrap_or(usize::MAX));
            }
            // A read, which an agent's view may ask too: answered by the
            // writer, in order with the frames.
            ViewEvent::Image { index } => {
                if images.send(index).await.is_err() {
                    break;
                }
            }
            // Given back at once to an agent's view.
            ViewEvent::LendKeys { lend, prefix } => {
                keys.lend(&hub, id, (lend, prefix), &typed).await;
            }
            ViewEvent::TakeRows => hub.term.echo_tell(id),
            ViewEvent::TakeKeys { lend } => {
                if !hub.term.take_keys(id, lend).await {
                    break;
                }
            }
            // An agent's view types nothing, sizes nothing: dropped, said
            // once in the launcher's log.
            _ if read_only => {
                if !std::mem::replace(&mut refused_said, true) {
                    eprintln!("launcher: an agent's view sent input or a size: not taken");
                }
            }
            ViewEvent::Resize { cols, rows } => hub.activate(id, Some((cols, rows)), false),
            ViewEvent::Colors(colors) => hub.set_colors(id, colors),
            event => {
                if matches!(event, ViewEvent::Key { .. } | ViewEvent::Paste { .. }) {
                    // Typing returns the view to the live screen.
                    scroll.send_if_modified(|offset| std::mem::take(offset) != 0);
                    typed.store(true, Ordering::Release);
                }
                hub.activate(id, None, false);
                if hub.term.view_input(&event).is_err() {
                    break;
                }
            }
        }
    }
    let _ = gone.send(()).await;
}

/// What a view is sent for an event of the terminal.
fn term_event_message(event: crate::emulator::TermEvent) -> ToView {
    match event {
        crate::emulator::TermEvent::Bell => ToView::Bell,
        crate::emulator::TermEvent::Clipboard { selection, text } => {
            ToView::Clipboard { selection, text }
        }
    }
}

/// Resolves at `at`, and at once when `at` has passed: a frame that may go
/// now must not wait for the timer driver's next tick (up to a millisecond,
/// which a keystroke's echo would pay).
async fn frame_due(at: Instant) {
    if Instant::now() < at {
        tokio::time::sleep_until(at).await;
    }
}

/// Unregisters a view however its connection ends.
struct Unregister(Arc<ViewHub>, u64);

impl Drop for Unregister {
    fn drop(&mut self) {
        // A view whose task ends while it is lent leaves no descriptor of
        // its socket behind.
        drop(self.0.term.echo_take_back(self.1));
        self.0.unregister(self.1);
    }
}

/// What a view has been sent: its screen, its images' places.
struct ViewSent<'a> {
    last: &'a mut Option<Snapshot>,
    images: &'a mut Vec<ImagePlacement>,
}

/// The frame of change `change` at `offset` lines back, then the images'
/// places (asked of the terminal thread after the frame that shows their
/// cells, so they are at least as new as it). An error: the view or the
/// terminal is gone.
async fn next_frame_sent<W: AsyncWrite + Unpin>(
    writer: &mut W,
    term: &TerminalHandle,
    change: u64,
    offset: usize,
    sent: ViewSent<'_>,
) -> std::io::Result<()> {
    let echoed = (offset == 0).then(|| term.echo_frame(change)).flatten();
    let snap = match echoed {
        Some(snap) => snap,
        None => term
            .view_snapshot(offset)
            .await
            .ok_or_else(|| std::io::Error::other("the terminal is gone"))?,
    };
    let whole = send_frame(writer, sent.last.as_ref(), &snap).await?;
    *sent.last = Some(snap);
    send_images(writer, term, whole, sent.images).await
}

/// Send what turns the view's copy `last` into `snap`: changed rows, or
/// (first, or after a resize) the whole snapshot; whether it was whole.
async fn send_frame<W: AsyncWrite + Unpin>(
    writer: &mut W,
    last: Option<&Snapshot>,
    snap: &Snapshot,
) -> std::io::Result<bool> {
    match last.map(|prev| (prev, prev.diff(snap))) {
        Some((prev, Some(rows))) if rows.is_noop(prev) => Ok(false),
        Some((_, Some(rows))) => send(writer, &ToView::Rows(rows)).await.map(|()| false),
        Some((_, None)) => {
            let resized = ToView::Resized {
                cols: snap.cols,
                rows: snap.rows,
            };
            send(writer, &resized).await?;
            send(writer, &ToView::Snapshot(snap.clone())).await?;
            Ok(true)
        }
        None => send(writer, &ToView::Snapshot(snap.clone()))
            .await
            .map(|()| true),
    }
}

/// The kept images' places, after a frame: after a whole snapshot when there
/// are any, else when they changed since `sent`.
async fn send_images<W: AsyncWrite + Unpin>(
    writer: &mut W,
    term: &TerminalHandle,
    whole: bool,
    sent: &mut Vec<ImagePlacement>,
) -> std::io::Result<()> {
    if sent.is_empty() && !term.images_placed() {
        return Ok(());
    }
    let Some(placements) = term.image_placements().await else {
        return Ok(());
    };
    if placements != *sent || (whole && !placements.is_empty()) {
        let images = ToView::Images {
            placements: placements.clone(),
        };
        send(writer, &images).await?;
        *sent = placements;
    }
    Ok(())
}

/// Kept image `index`'s bytes, for the view that asked. An image too big
/// for one line of the attach protocol is answered as not kept: the view's
/// reader would drop the connection for it.
async fn send_image<W: AsyncWrite + Unpin>(
    writer: &mut W,
    term: &TerminalHandle,
    index: u32,
) -> std::io::Result<()> {
    let data = term
        .image(index)
        .await
        .filter(|d| d.data.len() + 64 * 1024 < MAX_VIEW_LINE);
    send(writer, &ToView::Image { index, data }).await
}

/// The Tick's last output (the screen is final once the status says ended),
/// then why it ended.
async fn send_end<W: AsyncWrite + Unpin>(
    writer: &mut W,
    term: &TerminalHandle,
    offset: usize,
    last: Option<&Snapshot>,
    reason: String,
) {
    if let Some(snap) = term.view_snapshot(offset).await {
        let _ = send_frame(writer, last, &snap).await;
    }
    let _ = send(writer, &ToView::Ended { reason }).await;
}

fn ended(status: &watch::Receiver<crate::published::Published>) -> Option<String> {
    status
        .borrow()
        .status
        .ended
        .as_ref()
        .map(|e| e.reason.clone())
}

async fn send<W: AsyncWrite + Unpin>(writer: &mut W, msg: &ToView) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(msg).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    writer.write_all(&bytes).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_go_at_once_in_a_burst_then_are_paced() {
        let start = Instant::now();
        let mut pacer = FramePacer {
            tokens: FRAME_BURST,
            refilled_at: start,
        };
        // After a quiet spell, a burst of frames may go back to back.
        for _ in 1..FRAME_BURST as usize {
            assert_eq!(pacer.sent_at(start), start);
        }
        // The bucket is empty: the next frame waits one interval...
        assert_eq!(pacer.sent_at(start), start + FRAME_INTERVAL);
        // ... and a view kept busy gets one frame per interval.
        let later = start + FRAME_INTERVAL;
        assert_eq!(pacer.sent_at(later), later + FRAME_INTERVAL);
        // A quiet spell refills the bucket.
        let quiet = later + FRAME_INTERVAL * 20;
        assert_eq!(pacer.sent_at(quiet), quiet);
    }

    #[test]
    fn the_end_of_a_burst_borrows_one_interval_and_no_more() {
        let start = Instant::now();
        // A view kept busy: its last frame took the last token.
        let mut pacer = FramePacer {
            tokens: 0.0,
            refilled_at: start,
        };
        // The output stops a quarter interval later: its frame may go now...
        let stop = start + FRAME_INTERVAL / 4;
        assert!(pacer.may_borrow(stop));
        // ... and the next one waits for the borrowed token to be paid back
        // as well as its own.
        let next = pacer.sent_at(stop);
        assert_eq!(next, stop + FRAME_INTERVAL.mul_f64(1.75));
        // Another stop before the debt is paid goes at the pacer's time.
        let again = stop + FRAME_INTERVAL / 2;
        assert!(!pacer.may_borrow(again));
        // Once paid (tokens back at zero), one more may borrow.
        assert!(pacer.may_borrow(stop + FRAME_INTERVAL.mul_f64(0.75)));
    }
}
