//! A client's requests, from the line read to the answer sent: the
//! request table ([`table`]: every kind with its consent class), read in
//! one place ([`admit`]), the one dispatch ([`dispatch`]), and one file per
//! family of requests: [`reads`] (and the [`timeline`] across
//! instances), [`gated`] actions (what the consent gate
//! may hold), [`ending`] and forgetting, the person's answers and
//! [`policy`], and [`forward`]ing to a launcher. The connection itself is
//! `serve`'s.

pub mod admit;
pub mod dispatch;
pub mod ending;
pub mod forward;
pub mod gated;
pub mod policy;
pub mod reads;
pub mod table;
pub mod timeline;

#[cfg(test)]
mod tests;
