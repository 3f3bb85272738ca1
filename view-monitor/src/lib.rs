//! Tickloop's views: the plain `tickloop attach` view ([`attach_view`]) and
//! the renderer it shares with the Monitor's overlay ([`render`]). The
//! Monitor (list of instances, overlay over a running Tick) will live here too.

pub mod attach_view;
pub mod render;
