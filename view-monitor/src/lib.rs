//! Tickloop's views: the plain `tickloop attach` view ([`attach_view`]), the
//! Monitor (`tickloop monitor`: the list of instances with an overlay over a
//! running Tick, [`monitor`]) and the renderer they share ([`render`]).
//! Both views reach launchers through `launcher_link`, take the terminal
//! through `tty`, and draw the activity overlay ([`activity`]) and the
//! approval prompt ([`approval_prompt`]) with the text and cell helpers of
//! [`cells`]. A shell's row (`list`'s table, the Monitor's and the web
//! page's lists) is worded once, in [`shell_row`].

pub mod activity;
mod answers;
pub mod approval_prompt;
pub mod attach_view;
pub mod cells;
pub mod colors;
mod error;
pub mod graphics;
mod launcher_link;
pub mod monitor;
pub mod prefix;
pub mod render;
pub mod shell_row;
mod tty;
mod tty_out;
