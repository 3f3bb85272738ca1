//! What the rest of the launcher asks of the terminal thread: the messages
//! queued for it (output it read itself, snapshots, resizes, recordings,
//! waits on the output, the history's upkeep), and the sender that rings
//! its wake-up after queueing one.

use super::fd::Wake;
use crate::emulator::ScreenText;
use crate::shell_watch::ShellMsg;
use std::sync::Arc;
use tickloop_proto::attach::Snapshot;
use tickloop_proto::wire::{ImageData, ImagePlacement};
use tokio::sync::{mpsc, oneshot};

/// Messages for the terminal thread: queued, then the thread woken.
#[derive(Clone)]
pub(super) struct ToTerminal {
    /// Boxed: the channel allocates its slots 32 at a time and keeps the
    /// block for the terminal's life (256 bytes of boxes, not 1.8 kB of
    /// messages).
    pub(super) tx: mpsc::Sender<Box<EmuMsg>>,
    pub(super) wake: Arc<Wake>,
}

impl ToTerminal {
    pub(super) async fn send(&self, msg: EmuMsg) -> bool {
        let sent = self.tx.send(Box::new(msg)).await.is_ok();
        self.wake.ring();
        sent
    }
}

/// Messages queued for the terminal thread (snapshots, resizes, recordings).
pub(super) const EMULATOR_QUEUE: usize = 256;

/// A chunk of output as the terminal thread read it from the master.
pub(super) struct OutputChunk {
    pub(super) bytes: Vec<u8>,
    /// When it was read (the terminal thread's own clock, as it reads).
    pub(super) read_at: std::time::Instant,
    /// How much input had been written to the master before it was read
    /// ([`super::pty_input::PtyWriter::written`]): the input this output may answer.
    pub(super) input_before: u64,
}

pub(super) enum EmuMsg {
    /// Output read from the PTY.
    Output(OutputChunk),
    /// Start a recording from the current screen ([`crate::recorder`]).
    /// Acknowledged once the recording is registered.
    Record(crate::recorder::RecordingSink, oneshot::Sender<()>),
    Resize(u16, u16),
    /// The screen as text with up to this many lines of history.
    Snapshot(usize, oneshot::Sender<ScreenText>),
    /// A view's snapshot, scrolled this many lines back into history.
    ViewSnapshot(usize, oneshot::Sender<Snapshot>),
    /// A kept image's bytes, by index (`None`: not kept).
    Image(u32, oneshot::Sender<Option<ImageData>>),
    /// The kept images' placements now, for a view after a frame.
    Placements(oneshot::Sender<Vec<ImagePlacement>>),
    /// A wait on the output, or a `run` ([`crate::shell_watch::ShellWatch::ask`]).
    Shell(ShellMsg),
    /// A view lent its terminal's keys: the loop reads them
    /// ([`super::keys`]) until it gives them back.
    LendKeys(super::keys::LentKeys),
    /// View `view` wants the keys of its lending `lend` back.
    TakeKeys {
        view: u64,
        lend: u64,
    },
    /// Output has not paused for [`super::quiet::COMPACT_EVERY`]: move the rows that
    /// scrolled off into the compact history. Applied by the terminal
    /// thread's loop itself, never queued.
    Compact,
    /// Nothing was applied for [`super::quiet::RELEASE_AFTER`]: move the rows that
    /// scrolled off into the compact history and give back what alacritty
    /// held for them. Applied by the terminal thread's loop itself, never
    /// queued.
    ReleaseSpare,
    /// Nothing was applied for [`super::quiet::PARK_AFTER`]: park the
    /// screen's cells, drop the echo's frame. Applied by the terminal
    /// thread's loop itself, never queued.
    Park,
}

/// How fresh the output a message sees must be: what the thread reads for
/// it first, if anything.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Fresh {
    /// Every byte the Tick wrote so far: a screen read, a wait on the
    /// output, a recording's first screen. (Read up to what the kernel can
    /// hold, [`super::thread::KERNEL_HOLDS_AT_MOST`]: what comes after was
    /// written after the message.)
    Written,
    /// What the master holds now, without waiting for the kernel to move
    /// more in: a view's frame. In a flood, waiting for every byte written
    /// means reading in step with the writer, one kernel hand-over of
    /// 4 KiB after another, until it pauses; at each frame. (Output that
    /// comes after is another change, and another frame.)
    Held,
}

/// The output message `msg` must see, if any (see [`Fresh`]).
pub(super) fn fresh_output(msg: &EmuMsg) -> Option<Fresh> {
    match msg {
        EmuMsg::Snapshot(..) | EmuMsg::Record(..) | EmuMsg::Shell(..) | EmuMsg::Image(..) => {
            Some(Fresh::Written)
        }
        EmuMsg::ViewSnapshot(..) => Some(Fresh::Held),
        EmuMsg::Output(..)
        | EmuMsg::Resize(..)
        | EmuMsg::Placements(..)
        | EmuMsg::LendKeys(..)
        | EmuMsg::TakeKeys { .. }
        | EmuMsg::Compact
        | EmuMsg::ReleaseSpare
        | EmuMsg::Park => None,
    }
}
