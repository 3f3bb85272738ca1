//! Only the user gets in: every socket of Tickloop (tickhost's, each
//! launcher's) checks who is at the other end (`SO_PEERCRED`), not only the
//! file modes of the socket and its directory, which a `chmod` or a shared
//! runtime directory can open to others.

/// Why a peer was refused.
#[derive(Debug, thiserror::Error)]
pub enum PeerRefused {
    #[error("a process of uid {peer} (pid {pid}) connected; only uid {ours}, this user, may")]
    OtherUser { peer: u32, ours: u32, pid: String },
    #[error("cannot tell who connected (SO_PEERCRED: {0}); refused")]
    Unknown(std::io::Error),
}

/// `Ok` when the peer of `stream` runs as this process's effective uid.
pub fn check(stream: &tokio::net::UnixStream) -> Result<(), PeerRefused> {
    let cred = stream.peer_cred().map_err(PeerRefused::Unknown)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let ours = unsafe { libc::geteuid() };
    if cred.uid() == ours {
        Ok(())
    } else {
        Err(PeerRefused::OtherUser {
            peer: cred.uid(),
            ours,
            pid: cred
                .pid()
                .map_or_else(|| "?".to_string(), |p| p.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_peer_of_this_user_is_let_in() {
        let (a, _b) = tokio::net::UnixStream::pair().expect("a socket pair");
        assert!(super::check(&a).is_ok());
    }
}
