//! tickhost: the per-user daemon that manages every instance and serves
//! clients (`tickloop __tickhost`), and the far side of a connection over
//! ssh (`tickloop __relay`). Only the `tickloop` binary links it; front
//! ends reach the daemon through `tickloop-client`.

pub mod daemon;
pub mod relay;
