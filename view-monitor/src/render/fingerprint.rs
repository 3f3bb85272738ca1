//! The hasher of the fingerprints a view keeps of rows (a line as the
//! Tick's screen has it, a row as drawn, a row's text for the scroll
//! search): every row of every frame is hashed, a keystroke's echo
//! included. foldhash with a fixed seed, as `DefaultHasher::new()` had
//! fixed keys: the same row gives the same fingerprint in every frame, and
//! foldhash takes a few instructions for a short row where SipHash took
//! hundreds (`benches/results/cost-2026-12-07e.md`).

use std::hash::BuildHasher;

/// A hasher for one fingerprint.
pub(super) fn hasher() -> impl std::hash::Hasher {
    foldhash::fast::FixedState::default().build_hasher()
}
