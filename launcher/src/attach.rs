//! The attach protocol's types (launcher ↔ view) live in
//! [`tickhost::attach`] with the other wire types; this re-export keeps the
//! launcher's and the views' paths to them.

pub use tickhost::attach::*;
