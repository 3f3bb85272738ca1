//! How often the bridge works: the delivery interval (list polling and state
//! watches) with its floor, and the slower pace of an idle client.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Re-describe every running Tick this often (catalog changes a person makes
/// at the Tick's screen show nowhere else), whatever the interval.
const DESCRIBE_EVERY: Duration = Duration::from_secs(5);

/// The shortest delivery interval: `--interval` below it is raised to it
/// (tickhost refuses watches under 10 ms; 100 ms keeps an idle bridge cheap).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// After this long without a request from the client, the poller checks
/// tickhost's list at most every [`IDLE_POLL`].
const IDLE_AFTER: Duration = Duration::from_secs(10);

/// The list polling period of an idle bridge (unless the interval is longer).
const IDLE_POLL: Duration = Duration::from_secs(1);

/// The delivery interval, and when the client last asked for anything.
#[derive(Debug)]
pub struct Pace {
    /// The interval as given (raised to [`MIN_INTERVAL`] when used).
    interval: Duration,
    /// When the client last asked for anything (the poller slows down after
    /// [`IDLE_AFTER`] without).
    last_request: Mutex<Instant>,
}

impl Pace {
    pub fn new(interval: Duration) -> Pace {
        Pace {
            interval,
            last_request: Mutex::new(Instant::now()),
        }
    }

    /// The delivery interval, at least [`MIN_INTERVAL`].
    pub fn interval(&self) -> Duration {
        self.interval.max(MIN_INTERVAL)
    }

    /// [`Pace::interval`] in milliseconds (as tickhost's `watch` takes it).
    pub fn interval_ms(&self) -> u64 {
        u64::try_from(self.interval().as_millis()).unwrap_or(u64::MAX)
    }

    fn last_request(&self) -> std::sync::MutexGuard<'_, Instant> {
        // A panic while holding the lock leaves an instant behind; go on with it.
        self.last_request
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Notes a request from the client (the poller is brisk for a while).
    pub fn active(&self) {
        *self.last_request() = Instant::now();
    }

    /// Whether the client asked for nothing for [`IDLE_AFTER`].
    pub fn idle(&self) -> bool {
        self.last_request().elapsed() >= IDLE_AFTER
    }

    /// How long the poller sleeps: the interval while the client is active,
    /// at least [`IDLE_POLL`] when it has been idle for [`IDLE_AFTER`].
    pub fn poll_period(&self) -> Duration {
        if self.idle() {
            self.interval().max(IDLE_POLL)
        } else {
            self.interval()
        }
    }

    /// How often every running Tick is described again: idle, six times
    /// less often.
    pub fn describe_every(&self) -> Duration {
        if self.idle() {
            DESCRIBE_EVERY * 6
        } else {
            DESCRIBE_EVERY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pace(interval_ms: u64) -> Pace {
        Pace::new(Duration::from_millis(interval_ms))
    }

    fn make_idle(p: &Pace) {
        let past = Instant::now()
            .checked_sub(IDLE_AFTER + Duration::from_secs(1))
            .expect("the clock is past IDLE_AFTER");
        *p.last_request.lock().expect("lock") = past;
    }

    #[test]
    fn interval_zero_is_raised_to_the_floor_and_an_idle_poller_slows_down() {
        let b = pace(0);
        assert_eq!(b.interval(), MIN_INTERVAL);
        assert_eq!(b.interval_ms(), 100);
        assert_eq!(b.poll_period(), MIN_INTERVAL);
        make_idle(&b);
        assert_eq!(b.poll_period(), IDLE_POLL);
        b.active();
        assert_eq!(b.poll_period(), MIN_INTERVAL);
        // A long interval is kept, idle or not.
        let slow = pace(5000);
        make_idle(&slow);
        assert_eq!(slow.poll_period(), Duration::from_secs(5));
    }
}
