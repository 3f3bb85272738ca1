//! What tickhost gives back once its clients pause: the allocator's free
//! pages, the main thread's stack below the runtime's frames, and the code
//! it ran for them ([`tickloop_client::idle::give_back`]). Its start (the
//! launchers' discovery, the first spare launcher, the first open) counts
//! as the first burst. The launcher does the same when its screen goes
//! quiet (issue 51: what an idle session costs).

use std::time::Duration;
use tokio::sync::watch;

/// How long requests must pause before tickhost gives back: the
/// launcher's quiet time for its screen.
const QUIET: Duration = Duration::from_millis(250);

/// Calls `give_back` after the start and after each burst of requests
/// (bumps of `requests`), once they have paused for [`QUIET`]. Sleeps
/// while none come; ends with tickhost.
pub async fn give_back_when_quiet(mut requests: watch::Receiver<u64>, mut give_back: impl FnMut()) {
    loop {
        loop {
            let seen = *requests.borrow_and_update();
            tokio::time::sleep(QUIET).await;
            if *requests.borrow() == seen {
                break;
            }
        }
        give_back();
        if requests.changed().await.is_err() {
            return;
        }
    }
}

/// [`tickloop_client::idle::give_back`], a failure logged once (this runs
/// after every burst).
pub fn give_back() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if let Err(e) = tickloop_client::idle::give_back() {
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            super::log::log(&format!("cannot give back {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn counted() -> (Arc<AtomicUsize>, impl FnMut()) {
        let count = Arc::new(AtomicUsize::new(0));
        let counter = count.clone();
        (count, move || {
            counter.fetch_add(1, Ordering::SeqCst);
        })
    }

    #[tokio::test(start_paused = true)]
    async fn the_start_is_given_back_once_then_nothing_while_idle() {
        let (requests, receiver) = watch::channel(0u64);
        let (count, give_back) = counted();
        tokio::spawn(give_back_when_quiet(receiver, give_back));
        tokio::time::sleep(QUIET / 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 0, "not before the quiet time");
        tokio::time::sleep(QUIET).await;
        assert_eq!(count.load(Ordering::SeqCst), 1, "after the start");
        tokio::time::sleep(QUIET * 100).await;
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "an idle tickhost does nothing"
        );
        drop(requests);
    }

    #[tokio::test(start_paused = true)]
    async fn a_burst_of_requests_is_given_back_once_it_pauses() {
        let (requests, receiver) = watch::channel(0u64);
        let (count, give_back) = counted();
        tokio::spawn(give_back_when_quiet(receiver, give_back));
        tokio::time::sleep(QUIET * 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Requests every tenth of the quiet time, for ten quiet times.
        for _ in 0..100 {
            requests.send_modify(|n| *n += 1);
            tokio::time::sleep(QUIET / 10).await;
        }
        assert_eq!(count.load(Ordering::SeqCst), 1, "not while they come");
        tokio::time::sleep(QUIET * 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 2, "once they pause");
        tokio::time::sleep(QUIET * 100).await;
        assert_eq!(count.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn it_ends_with_tickhost() {
        let (requests, receiver) = watch::channel(0u64);
        let (_, give_back) = counted();
        let task = tokio::spawn(give_back_when_quiet(receiver, give_back));
        tokio::time::sleep(QUIET * 2).await;
        drop(requests);
        task.await.expect("ended, not panicked");
    }
}
