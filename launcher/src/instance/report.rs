//! What a launcher tells whoever started it: the one launch report (the
//! readiness pipe's line, `Ready` or `Failed`) and how its run ended.

use tickloop_proto::wire::{EndInfo, LaunchReport};

/// Called once with the launch report (the readiness pipe's line).
pub type ReportFn = Box<dyn FnOnce(&LaunchReport) + Send>;

/// How a launcher's run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The instance was up (`Ready` was reported) and has ended.
    Ended(EndInfo),
    /// The instance never came up; `Failed` was reported with this reason.
    Failed(String),
}
