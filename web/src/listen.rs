//! Where `tickloop web` may listen: loopback by default; any other address
//! only with TLS (`--tls-cert`/`--tls-key`) or when the person said
//! `--insecure-listen`, which is then said loudly at every start.

use std::net::SocketAddr;

/// The address `tickloop web` listens on when none is given: loopback, on
/// a port the system picks (printed at start).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:0";

/// Why an address was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListenError {
    #[error("cannot read --listen {0:?}: give ADDRESS:PORT, e.g. 127.0.0.1:8080 or 0.0.0.0:8443")]
    Unreadable(String),
    #[error(
        "refusing to listen on {0} without TLS: anyone who can reach this machine could \
         watch the login and every keystroke. Give --tls-cert FILE --tls-key FILE (docs/web.md \
         says how to make them), listen on 127.0.0.1 behind your own TLS proxy, or add \
         --insecure-listen if this network is yours alone"
    )]
    NeedsTls(SocketAddr),
}

/// `--listen`'s value as an address; `localhost:PORT` is `127.0.0.1:PORT`.
pub fn parse(text: &str) -> Result<SocketAddr, ListenError> {
    let unreadable = || ListenError::Unreadable(text.to_string());
    if let Some(port) = text.strip_prefix("localhost:") {
        let port: u16 = port.parse().map_err(|_| unreadable())?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.parse().map_err(|_| unreadable())
}

/// Whether `addr` can be listened on with these options: `Ok(None)` when
/// it is safe, `Ok(Some(warning))` when it is not but the person said
/// `--insecure-listen` (the warning says what that means), else the
/// refusal.
pub fn check(addr: SocketAddr, tls: bool, insecure: bool) -> Result<Option<String>, ListenError> {
    if addr.ip().is_loopback() || tls {
        return Ok(None);
    }
    if insecure {
        return Ok(Some(format!(
            "WARNING: --insecure-listen: serving on {addr} WITHOUT TLS. The login link, the \
             session cookie and everything you see and type travel in clear text: anyone on \
             this network can read them, and can take over the session. Use it only on a \
             network that is yours alone; otherwise give --tls-cert and --tls-key."
        )));
    }
    Err(ListenError::NeedsTls(addr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_fine_and_anything_else_needs_tls_or_consent() {
        let lo = parse("127.0.0.1:8080").unwrap();
        let v6 = parse("[::1]:8080").unwrap();
        let any = parse("0.0.0.0:8080").unwrap();
        assert_eq!(check(lo, false, false), Ok(None));
        assert_eq!(check(v6, false, false), Ok(None));
        assert_eq!(check(any, false, false), Err(ListenError::NeedsTls(any)));
        assert_eq!(check(any, true, false), Ok(None));
        let warning = check(any, false, true).unwrap().unwrap();
        assert!(warning.contains("WITHOUT TLS"), "{warning}");
        assert_eq!(
            parse("localhost:9"),
            Ok(SocketAddr::from(([127, 0, 0, 1], 9)))
        );
        assert!(matches!(
            parse("example:1"),
            Err(ListenError::Unreadable(_))
        ));
    }
}
