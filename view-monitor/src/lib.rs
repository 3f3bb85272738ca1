//! The Monitor: will hold the full-screen list of instances and its overlay over a running Tick.
