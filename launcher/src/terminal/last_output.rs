//! When the program last wrote to its terminal: stamped by the terminal
//! thread as it applies each chunk, read by whoever asks, with no wake-up
//! between them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch of the last output applied; 0 before
/// any.
#[derive(Default)]
pub(super) struct LastOutput(AtomicU64);

impl LastOutput {
    /// The program's output is being applied now.
    pub(super) fn stamp(&self) {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        self.0.store(since_epoch.max(1), Ordering::Release);
    }

    /// When the last output was applied; `None` before any.
    pub(super) fn at(&self) -> Option<SystemTime> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            nanos => Some(UNIX_EPOCH + Duration::from_nanos(nanos)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_before_the_first_stamp_then_the_stamps_time() {
        let last = LastOutput::default();
        assert_eq!(last.at(), None);
        let before = SystemTime::now();
        last.stamp();
        let stamped = last.at().expect("stamped");
        assert!(
            stamped >= before - Duration::from_micros(1),
            "{stamped:?} {before:?}"
        );
        assert!(stamped <= SystemTime::now());
    }
}
