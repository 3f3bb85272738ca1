//! The recordings of an instance running now: `tickloop record`'s
//! connections (role `recorder`, each saying who it is at hello) and
//! `open --record`'s file. Their count is in the status (`list`, the
//! Monitor), and each start and stop is an entry of the activity record
//! naming who started it.

use crate::activity::ActivityLog;
use crate::recorder::RecorderNote;
use tickloop_client::clock::now_rfc3339_millis;
use tokio::sync::mpsc;

/// The running recordings.
pub struct Recordings {
    notes: mpsc::UnboundedReceiver<RecorderNote>,
    /// `tickloop record` connections recording now.
    connected: u32,
    /// Whether `open --record FILE` records.
    file: bool,
}

impl Recordings {
    /// No recording yet but `open --record`'s when `file`; the sender each
    /// recorder connection reports its start and stop on.
    pub fn new(file: bool) -> (Recordings, mpsc::UnboundedSender<RecorderNote>) {
        let (tx, notes) = mpsc::unbounded_channel();
        let recordings = Recordings {
            notes,
            connected: 0,
            file,
        };
        (recordings, tx)
    }

    /// How many run.
    pub fn running(&self) -> u32 {
        self.connected + u32::from(self.file)
    }

    /// `open --record`'s recording, which started with the instance, as
    /// the activity's first entry.
    pub fn note_file(&self, activity: &mut ActivityLog) {
        if self.file {
            activity.recording(now_rfc3339_millis(), None, true, self.running());
        }
    }

    /// The next start or stop of a recorder connection.
    pub async fn next(&mut self) -> Option<RecorderNote> {
        self.notes.recv().await
    }

    /// Takes `note` in: the count, and the activity entry.
    pub fn note(&mut self, note: RecorderNote, activity: &mut ActivityLog) {
        if note.started {
            self.connected = self.connected.saturating_add(1);
        } else {
            self.connected = self.connected.saturating_sub(1);
        }
        activity.recording(
            now_rfc3339_millis(),
            note.client,
            note.started,
            self.running(),
        );
    }
}
