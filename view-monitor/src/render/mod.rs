//! Drawing a Tick's screen in a view: turns the attach protocol's
//! [`Snapshot`](tickloop_proto::attach::Snapshot) into termwiz `Surface`s
//! cropped or padded to the view's size (with a status line saying so), and
//! the view terminal's input events into attach-protocol `ViewEvent`s. No
//! I/O: the plain `tickloop attach` view, the Monitor's overlay and the web
//! page's terminal all draw with it, then send `Surface::diff_screens` to
//! their terminal so an update costs a few bytes.
//!
//! One job per module, everything used from outside named here:
//! - `frame`: a view's [`Frame`] of the Tick's screen ([`compose`],
//!   [`size_status`]);
//! - `composer`: frames made from what the frame before left ([`Composer`]);
//! - `diff`: the changes from the frame a terminal shows to the next
//!   ([`Shown`], [`frame_changes`], [`frame_changes_keyed`]);
//! - `attrs`: a run's colours and attributes as termwiz's ([`cell_attributes`]);
//! - `kept`: a surface kept from frame to frame, and how far its rows scrolled;
//! - `fingerprint`: the hasher of the rows' fingerprints;
//! - `history`: a view's place in the Tick's history ([`Scroller`]);
//! - `input`: reading the terminal's input events ([`InputReader`]);
//! - `translate`: those events as attach-protocol events ([`input_events`],
//!   [`MouseTranslator`]) and the terminal's mouse reporting.

mod attrs;
mod composer;
mod diff;
mod fingerprint;
mod frame;
mod history;
mod input;
mod kept;
mod translate;

pub use attrs::{cell_attributes, nearest_256};
pub use composer::Composer;
pub use diff::{frame_changes, frame_changes_keyed, Shown};
pub use frame::{compose, model_surface, size_status, Delta, Frame, Kept, Since, ViewShape};
pub use history::{scroll_marker, ScrollAction, Scroller, WHEEL_LINES};
pub use input::InputReader;
pub use translate::{input_events, key_event, mouse_reporting, MouseTranslator};

/// A snapshot whose first lines hold `lines`, one plain run each.
#[cfg(test)]
fn snap_with(lines: &[&str], cols: u16, rows: u16) -> tickloop_proto::attach::Snapshot {
    use tickloop_proto::attach::{Attrs, Line, Run, Snapshot};
    let mut s = Snapshot::blank(cols, rows);
    for (i, l) in lines.iter().enumerate() {
        s.lines[i] = Line {
            runs: vec![Run {
                text: (*l).to_string(),
                attrs: Attrs::default(),
            }],
        };
    }
    s
}
