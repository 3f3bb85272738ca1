//! Tickloop's views: the plain `tickloop attach` view ([`attach_view`]), the
//! Monitor (`tickloop monitor`: the list of instances with an overlay over a
//! running Tick, [`monitor`]) and the renderer they share ([`render`]).

pub mod activity;
pub mod approval_prompt;
pub mod attach_view;
pub mod colors;
pub mod monitor;
pub mod prefix;
pub mod render;
