//! Which sites may talk to `tickloop web`: the `Host` a request names (a
//! server on loopback answers only loopback names, so a web page that
//! points its own domain at 127.0.0.1 — DNS rebinding — is refused) and the
//! `Origin` a browser puts on every WebSocket upgrade and every POST (only
//! the page's own origin, and the origins given with `--allow-origin` for a
//! reverse proxy, are let in: cross-site WebSocket hijacking and CSRF from
//! another site stop here).

/// The origins and hosts one server accepts.
#[derive(Debug, Clone)]
pub struct Origins {
    /// The server listens on loopback only: `Host` must be a loopback name.
    pub loopback: bool,
    /// `https` under TLS, else `http`.
    pub scheme: &'static str,
    /// Origins allowed besides the page's own (`--allow-origin`), as
    /// `scheme://host[:port]`, without a trailing slash.
    pub extra: Vec<String>,
}

/// The host part of a `Host` header (`127.0.0.1:8080` → `127.0.0.1`,
/// `[::1]:80` → `[::1]`).
fn hostname(host: &str) -> &str {
    if host.starts_with('[') {
        return host.find(']').map_or(host, |end| &host[..=end]);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

impl Origins {
    /// Whether a request naming `host` (its `Host` header) may be served.
    pub fn host_ok(&self, host: Option<&str>) -> bool {
        let Some(host) = host.filter(|h| !h.is_empty()) else {
            return false;
        };
        if !self.loopback {
            return true;
        }
        let name = hostname(host).to_ascii_lowercase();
        let loopback = name == "localhost"
            || name == "[::1]"
            || name
                .parse::<std::net::Ipv4Addr>()
                .is_ok_and(|ip| ip.is_loopback());
        loopback
            || self
                .extra
                .iter()
                .any(|o| o.split_once("://").is_some_and(|(_, h)| h == host))
    }

    /// Whether a request carrying `Origin: origin` to `host` comes from the
    /// page itself (or from an origin given with `--allow-origin`).
    pub fn origin_ok(&self, origin: Option<&str>, host: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return false;
        };
        if self.extra.iter().any(|o| o == origin) {
            return true;
        }
        let Some(host) = host.filter(|h| self.host_ok(Some(h))) else {
            return false;
        };
        origin.eq_ignore_ascii_case(&format!("{}://{host}", self.scheme))
    }
}

/// `--allow-origin`'s value made canonical: `scheme://host[:port]`, no
/// path; an error says what is wrong.
pub fn parse_allowed(text: &str) -> Result<String, String> {
    let trimmed = text.trim_end_matches('/');
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(|| {
        format!(
            "--allow-origin {text:?}: give scheme://host[:port], e.g. https://ticks.example.com"
        )
    })?;
    if !matches!(scheme, "http" | "https") || rest.is_empty() || rest.contains('/') {
        return Err(format!(
            "--allow-origin {text:?}: give scheme://host[:port] (http or https, no path)"
        ));
    }
    Ok(trimmed.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loopback() -> Origins {
        Origins {
            loopback: true,
            scheme: "http",
            extra: vec!["https://ticks.example.com".into()],
        }
    }

    #[test]
    fn a_loopback_server_answers_loopback_names_only() {
        let o = loopback();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "[::1]:8080",
            "127.0.0.2:1",
        ] {
            assert!(o.host_ok(Some(host)), "{host}");
        }
        for host in ["evil.example:8080", "", "10.0.0.1:8080"] {
            assert!(!o.host_ok(Some(host)), "{host}");
        }
        assert!(!o.host_ok(None));
        assert!(o.host_ok(Some("ticks.example.com")), "the proxy's host");
    }

    #[test]
    fn only_the_page_itself_and_allowed_origins_pass() {
        let o = loopback();
        let host = Some("127.0.0.1:8080");
        assert!(o.origin_ok(Some("http://127.0.0.1:8080"), host));
        assert!(o.origin_ok(Some("https://ticks.example.com"), host));
        assert!(!o.origin_ok(Some("http://127.0.0.1:9999"), host));
        assert!(!o.origin_ok(Some("https://127.0.0.1:8080"), host));
        assert!(!o.origin_ok(Some("http://evil.example"), host));
        assert!(!o.origin_ok(Some("null"), host));
        assert!(!o.origin_ok(None, host));
        // DNS rebinding: the attacker's name resolves to 127.0.0.1.
        assert!(!o.origin_ok(Some("http://evil.example:8080"), Some("evil.example:8080")));
        let open = Origins {
            loopback: false,
            scheme: "https",
            extra: Vec::new(),
        };
        assert!(open.origin_ok(Some("https://box.lan:8443"), Some("box.lan:8443")));
        assert!(!open.origin_ok(Some("https://evil.example"), Some("box.lan:8443")));
    }

    #[test]
    fn allowed_origins_are_checked() {
        assert_eq!(
            parse_allowed("https://Ticks.example.com/"),
            Ok("https://ticks.example.com".into())
        );
        assert!(parse_allowed("ticks.example.com").is_err());
        assert!(parse_allowed("https://a/b").is_err());
        assert!(parse_allowed("ftp://a").is_err());
    }
}
