//! The launcher: one process per Tick, owning its PTY, its screen and its protocol session.
