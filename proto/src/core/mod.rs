//! The Tick protocol 3 host session, with no I/O: see `API.md` beside this file.
//!
//! Bytes from the Tick, client requests and the time go in; lines to write,
//! replies and the end of the session come out. The launcher drives a
//! [`session::Session`]; the daemon uses [`delivery::trim`].

pub mod codes;
pub mod delivery;
pub mod descriptor;
pub mod framing;
pub mod limits;
pub mod session;
pub mod state;

pub use crate::wire::{CallOutcome, RpcError};
pub use delivery::{budget_for, trim, Trimmed};
pub use descriptor::{Descriptor, DescriptorError, Newest, Series, Tool};
pub use framing::{FramingError, LineSplitter};
pub use limits::Limits;
pub use session::{
    Action, ClientToken, EndKind, EndReason, Phase, Reply, Session, SessionRequest, ViolationKind,
};
pub use state::TickState;
