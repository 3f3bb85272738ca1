//! Why a view could not attach, or stopped: [`AttachError`], shared by the
//! attach view, the Monitor (its overlay attaches too) and the connection
//! to a launcher ([`crate::launcher_link`]), with the CLI's error kind of
//! each.

use std::path::PathBuf;

/// Why attaching failed or stopped.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot connect to the launcher at {path}: {source}")]
    Connect {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the launcher refused the view: {0}")]
    Refused(String),
    #[error("the launcher broke the attach protocol: {0}")]
    Protocol(String),
    #[error("the connection to the launcher was lost: {0}")]
    Lost(String),
    #[error("this needs a terminal: {0}")]
    Terminal(String),
    #[error("{0}")]
    NoSuchInstance(String),
    #[error("{0}")]
    Ended(String),
    #[error("{0}")]
    BadKey(String),
    #[error(transparent)]
    Remote(tickloop_client::ssh::RemoteError),
}

impl AttachError {
    /// The CLI's error kind (docs/cli.md) for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            AttachError::NoSuchInstance(_) => "no_such_instance",
            AttachError::Ended(_) => "ended",
            AttachError::Connect { .. } | AttachError::Lost(_) => "unreachable",
            AttachError::Terminal(_) | AttachError::BadKey(_) => "bad_request",
            AttachError::Refused(_) | AttachError::Protocol(_) => "internal",
            AttachError::Remote(e) => e.kind(),
        }
    }
}
