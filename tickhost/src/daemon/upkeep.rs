//! What tickhost gives back once it is quiet: the allocator's free pages,
//! the main thread's stack below the runtime's frames, and the code it ran
//! for its start and its last burst ([`tickloop_client::idle`]). Each
//! client request and each line from a launcher marks it busy; its start
//! (the launchers' discovery, the first spare launcher, the first open)
//! is the first burst. The launcher does the same for its own (issue 51:
//! what an idle session costs).

/// Gives back after the start and after each busy spell, once tickhost
/// has been quiet for [`tickloop_client::idle::QUIET`]; a failure is
/// logged once (this runs after every burst). Runs for tickhost's life.
pub async fn give_back_when_quiet() {
    let mut said = false;
    tickloop_client::idle::when_quiet(|| {
        let given = tickloop_client::idle::give_back();
        let released = tickloop_client::idle::release_code();
        if let Err(e) = given.and(released) {
            if !std::mem::replace(&mut said, true) {
                super::log::log(&format!("cannot give back {e}"));
            }
        }
    })
    .await
}
