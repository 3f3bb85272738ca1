//! tickhost: the per-user daemon that manages every instance and serves
//! clients, the blocking client every front end uses, the runtime
//! directory, the one line framing of every socket and the person's
//! settings. The protocols themselves (the host session core, the wire
//! and attach types) are the `tickloop-proto` crate, re-exported here as
//! [`core`], [`wire`] and [`attach`].

pub mod client;
pub mod clock;
pub mod config;
pub mod daemon;
pub mod framing;
pub mod paths;
pub mod remote;

pub use tickloop_proto::{attach, core, wire};
