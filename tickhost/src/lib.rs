//! tickhost: the Tick protocol 3 host core (a library with no I/O), the wire
//! types of Tickloop's sockets, and the per-user daemon that manages every
//! instance and serves clients.

pub mod agent_loop;
pub mod attach;
pub mod client;
pub mod clock;
pub mod config;
pub mod core;
pub mod daemon;
pub mod framing;
pub mod paths;
pub mod wire;
