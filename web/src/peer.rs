//! Other users of this machine stay out: a connection from loopback is
//! served only when its socket belongs to this user, as the kernel's
//! socket table (`/proc/net/tcp`, `/proc/net/tcp6`) says, much as every
//! Unix socket of Tickloop checks `SO_PEERCRED`. Browser cookies are not
//! kept apart by port, so a server another user runs on 127.0.0.1 can
//! receive this server's session cookie from the person's browser; with
//! this check the cookie is of no use from their processes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// What is known of a connection's peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Peer {
    /// Another machine (not loopback): TLS, the cookie and CSRF apply.
    Remote,
    /// A process of this machine, of this uid.
    LocalUser(u32),
    /// Loopback, but the kernel's table had no such connection.
    Unknown,
}

/// The peer of the connection from `peer` to our `local` address.
pub fn of(local: SocketAddr, peer: SocketAddr) -> Peer {
    let (local, peer) = (canonical(local), canonical(peer));
    if !peer.ip().is_loopback() {
        return Peer::Remote;
    }
    let table = match peer.ip() {
        IpAddr::V4(_) => "/proc/net/tcp",
        IpAddr::V6(_) => "/proc/net/tcp6",
    };
    let text = std::fs::read_to_string(table).unwrap_or_default();
    owner(&text, peer, local).map_or(Peer::Unknown, Peer::LocalUser)
}

fn canonical(addr: SocketAddr) -> SocketAddr {
    SocketAddr::new(addr.ip().to_canonical(), addr.port())
}

/// The uid that owns the socket whose local address is `client` and
/// remote address is `server`, in a `/proc/net/tcp{,6}` table.
fn owner(table: &str, client: SocketAddr, server: SocketAddr) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, remote, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        (parse_addr(local)? == client && parse_addr(remote)? == server)
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// `0100007F:1F90` (the kernel prints each 32-bit word of the address as
/// it lies in memory) → `127.0.0.1:8080`.
fn parse_addr(text: &str) -> Option<SocketAddr> {
    let (ip, port) = text.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let ip = match ip.len() {
        8 => IpAddr::V4(Ipv4Addr::from(word(0)?)),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::V6(Ipv6Addr::from(bytes))
        }
        _ => return None,
    };
    Some(canonical(SocketAddr::new(ip, port)))
}

/// This process's effective uid.
pub fn our_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_owner_of_a_loopback_connection_is_read_from_the_table() {
        // Little-endian words, as on x86 and arm64.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   \
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1\n   \
            1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1001        0 2 1\n   \
            2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000  1000        0 3 1\n";
        if cfg!(target_endian = "little") {
            let server: SocketAddr = "127.0.0.1:8080".parse().unwrap();
            let client: SocketAddr = "127.0.0.1:54321".parse().unwrap();
            assert_eq!(owner(table, client, server), Some(1001));
            assert_eq!(owner(table, server, client), Some(1000));
            assert_eq!(owner(table, "127.0.0.1:1".parse().unwrap(), server), None);
            assert_eq!(
                parse_addr("00000000000000000000000001000000:1F90"),
                Some("[::1]:8080".parse().unwrap())
            );
            assert_eq!(
                parse_addr("0000000000000000FFFF00000100007F:1F90"),
                Some("127.0.0.1:8080".parse().unwrap())
            );
        }
    }

    #[test]
    fn a_connection_of_this_process_is_ours() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_served, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        assert_eq!(
            of(listener.local_addr().unwrap(), peer),
            Peer::LocalUser(our_uid())
        );
        assert_eq!(
            of(
                listener.local_addr().unwrap(),
                "192.0.2.1:5".parse().unwrap()
            ),
            Peer::Remote
        );
    }
}
