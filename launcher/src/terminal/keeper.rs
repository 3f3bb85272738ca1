//! The screen keeper on the terminal thread: the [`Emulator`], each
//! message applied to it (a panic in it starts the screen over, never
//! stops the thread), and what it publishes to the rest of the launcher.

use super::echo::EchoFrame;
use super::messages::{EmuMsg, OutputChunk};
use super::pty_input::{queue_input, AnswerWriter};
use crate::emulator::{AnswerColors, Emulator, TermEvent};
use crate::images::{Images, ImagesDropped};
use crate::recorder::Recorder;
use crate::shell_watch::ShellWatch;
use alacritty_terminal::term::TermMode;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use tickloop_proto::wire::ImagePlacement;
use tokio::sync::{broadcast, watch};

/// What the terminal thread tells the rest of the launcher.
pub(super) struct Published {
    /// Bumped whenever the screen may have changed.
    pub(super) changes: watch::Sender<u64>,
    /// The change applied when the thread last ran out of output.
    pub(super) drained: watch::Sender<u64>,
    /// Bells and clipboard writes.
    pub(super) events: broadcast::Sender<TermEvent>,
    /// The terminal title.
    pub(super) title: watch::Sender<String>,
    /// The Tick's terminal modes, for encoding views' input.
    pub(super) modes: Arc<AtomicU32>,
    /// The live screen as it was right after a keystroke's echo.
    pub(super) echo: Arc<EchoFrame>,
    /// Whether any image is placed: a view that shows none need not ask
    /// the thread where they are after each frame.
    pub(super) images_placed: Arc<AtomicBool>,
    /// Images dropped for the image memory's limit, in all.
    pub(super) images_dropped: watch::Sender<ImagesDropped>,
    /// When the program last wrote output, stamped as each chunk is applied.
    pub(super) last_output: Arc<super::last_output::LastOutput>,
}

pub(super) fn new_emulator(
    size: (usize, usize),
    history: usize,
    answers: &AnswerWriter,
    colors: &AnswerColors,
) -> Emulator {
    let mut emulator = Emulator::new(size.0, size.1, history, Box::new(answers.clone()));
    emulator.answer_colors_from(colors.clone());
    emulator
}

/// The emulator, and what it is made with and tells.
pub(super) struct Keeper {
    pub(super) emulator: Emulator,
    /// The screen's size, to make it again after a panic.
    pub(super) size: (usize, usize),
    pub(super) history: usize,
    pub(super) answers: AnswerWriter,
    pub(super) colors: AnswerColors,
    pub(super) published: Published,
    pub(super) recorder: Arc<Recorder>,
    /// Kept across an emulator fault: what waits is still answered.
    pub(super) shell: ShellWatch,
    /// The images the program drew, kept beside the emulator (made again
    /// with it after a fault).
    pub(super) images: Images,
    pub(super) image_limit: u64,
    pub(super) panics: u64,
}

impl Keeper {
    /// Applies one message to the emulator, and publishes what changed.
    pub(super) fn apply(&mut self, msg: EmuMsg) {
        if let EmuMsg::Resize(rows, cols) = &msg {
            self.size = (usize::from(*rows), usize::from(*cols));
        }
        // A panic inside the emulator (a bug of ours or of the emulator,
        // set off by what the Tick printed) must not stop this thread: the
        // PTY would no longer be drained and the Tick would block forever.
        // The screen starts over, saying so on its first row, and the Tick
        // goes on. The panic hook (lib.rs) logs the first few panics only,
        // so a stream of them cannot grow the log without bound.
        let published = &self.published;
        let recorder = &self.recorder;
        let shell = &mut self.shell;
        let images = &mut self.images;
        let mut term = EmulatorTerminal {
            emulator: &mut self.emulator,
            answers: &self.answers,
        };
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // The cells put away at the last quiet time come back before
            // anything reads the screen (the images' marks through a shared
            // reference, too).
            term.emulator.unpark();
            handle_emulator_message(&mut term, msg, published, recorder, shell, images);
            let emulator = &mut *term.emulator;
            for event in emulator.take_events() {
                // No view attached: nobody to tell.
                let _ = published.events.send(event);
            }
            if let Some(dropped) = images.kept.take_dropped() {
                published
                    .images_dropped
                    .send_modify(|total| *total = total.plus(dropped));
            }
            if let Some(now) = emulator.take_title_change() {
                published.title.send_replace(now);
            }
            published
                .modes
                .store(emulator.input_modes(), Ordering::Release);
            published
                .images_placed
                .store(images.kept.any_placed(), Ordering::Release);
        }));
        if handled.is_err() {
            self.panics += 1;
            if self.panics <= 3 {
                eprintln!(
                    "launcher: the terminal emulator panicked (#{}); the screen starts over",
                    self.panics
                );
            }
            self.emulator = new_emulator(self.size, self.history, &self.answers, &self.colors);
            self.images = Images::new(self.image_limit);
            self.published.images_placed.store(false, Ordering::Release);
            self.emulator.feed(
                b"\x1b[7m[tickloop: the screen was reset after an emulator fault]\x1b[0m\r\n",
            );
            self.published
                .changes
                .send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

impl Published {
    /// The thread has applied every byte it read and the master has no
    /// more now: tells the views waiting to draw the end of a burst, once
    /// for each change.
    pub(super) fn tell_drained(&self) {
        let change = *self.changes.borrow();
        self.drained.send_if_modified(|drained| {
            let news = *drained != change;
            *drained = change;
            news
        });
    }
}

/// The emulator and the PTY's input, as the [`ShellWatch`] uses them.
pub(super) struct EmulatorTerminal<'a> {
    pub(super) emulator: &'a mut Emulator,
    pub(super) answers: &'a AnswerWriter,
}

impl crate::shell_watch::Terminal for EmulatorTerminal<'_> {
    fn lines(&mut self) -> Vec<String> {
        self.emulator.text(0).lines
    }

    fn bracketed_paste(&self) -> bool {
        TermMode::from_bits_truncate(self.emulator.input_modes())
            .contains(TermMode::BRACKETED_PASTE)
    }

    fn type_bytes(&mut self, bytes: Vec<u8>) {
        let _ = queue_input(&self.answers.tx, &self.answers.writer, bytes);
    }

    fn input_unanswered(&self) -> bool {
        self.answers.writer.unanswered()
    }

    fn last_enter_end(&self) -> u64 {
        self.answers.writer.enter_end.load(Ordering::Acquire)
    }
}

pub(super) fn handle_emulator_message(
    term: &mut EmulatorTerminal<'_>,
    msg: EmuMsg,
    published: &Published,
    recorder: &Recorder,
    shell: &mut ShellWatch,
    images: &mut Images,
) {
    let (changes, echo) = (&published.changes, &*published.echo);
    match msg {
        EmuMsg::Output(OutputChunk {
            bytes,
            read_at,
            input_before,
        }) => {
            published.last_output.stamp();
            // The recording keeps every byte, images too.
            recorder.output(&bytes, read_at);
            let mut answers = term.answers.clone();
            images.feed(&bytes, term.emulator, &mut answers);
            // Told before the change, for the views it wakes.
            published
                .images_placed
                .store(images.kept.any_placed(), Ordering::Release);
            let emulator = &mut *term.emulator;
            if echo.wanted.swap(false, Ordering::AcqRel) {
                // Kept before the change is told, for the view it wakes;
                // written at once to the views that wait for it (a view
                // with images on its screen asks for their places after
                // each frame: its task sends it).
                let change = changes.borrow().wrapping_add(1);
                let snap = emulator.snapshot_scrolled(0);
                if !images.kept.any_placed() {
                    echo.send_to_waiters(&snap, change);
                }
                if let Ok(mut frame) = echo.frame.lock() {
                    *frame = Some((change, snap));
                }
            }
            changes.send_modify(|n| *n = n.wrapping_add(1));
            echo.wake_waiters(*changes.borrow());
            tickloop_client::idle::mark_busy();
            shell.output(&bytes, input_before, term);
        }
        EmuMsg::Shell(msg) => shell.ask(msg, term),
        EmuMsg::Record(sink, started) => {
            recorder.start(sink, &term.emulator.snapshot_scrolled(0));
            let _ = started.send(());
        }
        EmuMsg::Resize(rows, cols) => {
            term.emulator.resize(usize::from(rows), usize::from(cols));
            refresh_images(images, term.emulator, true);
            recorder.resize(cols, rows);
            changes.send_modify(|n| *n = n.wrapping_add(1));
            echo.wake_waiters(*changes.borrow());
        }
        EmuMsg::Snapshot(history, reply) => {
            let mut text = term.emulator.text(history);
            text.images = refresh_images(images, term.emulator, false);
            text.image_bytes = images.kept.bytes();
            let _ = reply.send(text);
        }
        EmuMsg::Image(index, reply) => {
            refresh_images(images, term.emulator, false);
            let _ = reply.send(images.kept.data(index, term.emulator.alt_screen()));
        }
        EmuMsg::Placements(reply) => {
            let now = refresh_images(images, term.emulator, false);
            let _ = reply.send(now);
        }
        // The view asks for the images' placements after the frame
        // (`Placements`), which looks where they are then.
        EmuMsg::ViewSnapshot(offset, reply) => {
            let _ = reply.send(term.emulator.snapshot_scrolled(offset));
        }
        // The loop's own ([`super::thread`]): never handed here.
        EmuMsg::LendKeys(..) | EmuMsg::TakeKeys { .. } => {}
        EmuMsg::Compact => term.emulator.compact(),
        EmuMsg::ReleaseSpare => {
            // The allocator's free pages go back after this, from the
            // terminal thread's loop (see `thread.rs`).
            term.emulator.release_spare_rows();
            refresh_images(images, term.emulator, false);
        }
        EmuMsg::Park => {
            // The screen's cells wait compact for the next message.
            term.emulator.park();
            // The echo's frame was taken long ago by the view it was for:
            // an idle screen holds no copy of itself.
            if let Ok(mut frame) = echo.frame.lock() {
                *frame = None;
            }
        }
    }
}

/// Looks where the kept images are now (see
/// [`crate::images::KeptImages::refresh`]) and returns their placements.
fn refresh_images(images: &mut Images, emulator: &Emulator, resized: bool) -> Vec<ImagePlacement> {
    images.kept.refresh(emulator, resized);
    images.kept.placements(emulator.alt_screen())
}
