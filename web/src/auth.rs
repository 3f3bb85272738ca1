//! Who may use `tickloop web`: one-time login tokens, exchanged for a
//! session cookie (HttpOnly, SameSite=Strict, Secure under TLS), each
//! session with its CSRF token, and `--revoke`, which ends every session
//! and login token at once.
//!
//! Tokens are 32 random bytes from the OS. Only their SHA-256 digests are
//! kept, so a lookup compares digests, never the secret itself, and
//! nothing kept in memory can be replayed. Nothing here logs a token.

use sha2::{Digest as _, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::watch;

/// How many sessions may be open at once; the oldest goes first.
const MAX_SESSIONS: usize = 64;
/// How many unused login tokens are kept; the oldest goes first.
const MAX_LOGINS: usize = 16;

type Digest = [u8; 32];

/// A fresh secret: 32 random bytes, as 64 hex digits.
pub fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn digest(token: &str) -> Digest {
    Sha256::digest(token.as_bytes()).into()
}

/// Whether two secrets are equal, in a time that does not depend on where
/// they first differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// A session, as a request presents it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    key: Digest,
    /// The token state-changing requests must carry.
    pub csrf: String,
    /// Its number, for the server's messages (never the secret).
    pub number: u64,
}

struct Entry {
    csrf: String,
    number: u64,
}

#[derive(Default)]
struct State {
    /// Unused login tokens, oldest first.
    logins: Vec<Digest>,
    sessions: HashMap<Digest, Entry>,
    /// Session keys, oldest first (to drop the oldest past the limit).
    order: Vec<Digest>,
    next_number: u64,
}

/// The logins and sessions of one `tickloop web` server.
pub struct Auth {
    state: Mutex<State>,
    cookie_name: String,
    secure: bool,
    /// Bumped at each revocation: open WebSockets look again.
    revoked: watch::Sender<u64>,
}

/// Why a token could not be made.
#[derive(Debug, thiserror::Error)]
#[error("cannot read random bytes from the system: {0}")]
pub struct NoRandom(#[from] getrandom::Error);

impl Auth {
    /// The sessions of a server on `port` (the cookie's name carries it,
    /// since browsers share cookies between the ports of one host);
    /// `secure` under TLS.
    pub fn new(port: u16, secure: bool) -> Auth {
        let (revoked, _) = watch::channel(0);
        Auth {
            state: Mutex::new(State::default()),
            // `__Host-` makes the browser refuse the cookie unless it came
            // over TLS from this host, for the whole host, path `/`.
            cookie_name: if secure {
                format!("__Host-tickloop-{port}")
            } else {
                format!("tickloop-{port}")
            },
            secure,
            revoked,
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic while holding the lock leaves plain data: go on with it.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new one-time login token.
    pub fn issue_login(&self) -> Result<String, NoRandom> {
        let token = random_token()?;
        let mut state = self.state();
        state.logins.push(digest(&token));
        if state.logins.len() > MAX_LOGINS {
            state.logins.remove(0);
        }
        Ok(token)
    }

    /// Exchanges login `token` for a new session: its cookie value and the
    /// session. `None` when the token is unknown, used or revoked.
    pub fn redeem(&self, token: &str) -> Result<Option<(String, Session)>, NoRandom> {
        let key = digest(token);
        let cookie = random_token()?;
        let csrf = random_token()?;
        let mut state = self.state();
        let Some(at) = state.logins.iter().position(|d| *d == key) else {
            return Ok(None);
        };
        state.logins.remove(at);
        let session_key = digest(&cookie);
        state.next_number += 1;
        let number = state.next_number;
        state.sessions.insert(
            session_key,
            Entry {
                csrf: csrf.clone(),
                number,
            },
        );
        state.order.push(session_key);
        if state.order.len() > MAX_SESSIONS {
            let oldest = state.order.remove(0);
            state.sessions.remove(&oldest);
        }
        Ok(Some((
            cookie,
            Session {
                key: session_key,
                csrf,
                number,
            },
        )))
    }

    /// The session a request's `Cookie` header names, if it is open.
    pub fn session(&self, cookie_header: Option<&str>) -> Option<Session> {
        let value = cookie_header?
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == self.cookie_name)
            .map(|(_, value)| value.trim())?;
        let key = digest(value);
        let state = self.state();
        state.sessions.get(&key).map(|entry| Session {
            key,
            csrf: entry.csrf.clone(),
            number: entry.number,
        })
    }

    /// Whether `session` is still open (not revoked since).
    pub fn is_open(&self, session: &Session) -> bool {
        self.state().sessions.contains_key(&session.key)
    }

    /// Ends every session and every unused login token; how many sessions
    /// ended. Open WebSockets hear it through [`Auth::revocations`].
    pub fn revoke_all(&self) -> usize {
        let ended = {
            let mut state = self.state();
            let ended = state.sessions.len();
            *state = State {
                next_number: state.next_number,
                ..State::default()
            };
            ended
        };
        self.revoked.send_modify(|n| *n += 1);
        ended
    }

    /// Changes at each revocation.
    pub fn revocations(&self) -> watch::Receiver<u64> {
        self.revoked.subscribe()
    }

    /// The `Set-Cookie` value that gives the browser session `cookie`.
    pub fn set_cookie(&self, cookie: &str) -> String {
        let secure = if self.secure { "; Secure" } else { "" };
        format!(
            "{}={cookie}; Path=/; HttpOnly; SameSite=Strict{secure}",
            self.cookie_name
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn distinct(tokens: &[String]) -> bool {
        tokens
            .iter()
            .collect::<std::collections::HashSet<_>>()
            .len()
            == tokens.len()
    }

    #[test]
    fn a_login_token_works_once_and_gives_a_session_with_its_csrf_token() {
        let auth = Auth::new(8080, false);
        let token = auth.issue_login().unwrap();
        let (cookie, session) = auth.redeem(&token).unwrap().expect("first use");
        assert!(auth.redeem(&token).unwrap().is_none(), "second use");
        let header = format!("other=1; tickloop-8080={cookie}; x=y");
        assert_eq!(auth.session(Some(&header)), Some(session.clone()));
        assert!(auth.session(Some("tickloop-8080=nope")).is_none());
        assert!(auth
            .session(Some(&format!("tickloop-8081={cookie}")))
            .is_none());
        assert!(auth.session(None).is_none());
        assert_eq!(session.csrf.len(), 64);
        assert!(distinct(&[token, cookie.clone(), session.csrf.clone()]));
        let set = auth.set_cookie(&cookie);
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        assert!(!set.contains("Secure"), "{set}");
    }

    #[test]
    fn revoking_ends_sessions_and_unused_tokens() {
        let auth = Auth::new(1, true);
        let unused = auth.issue_login().unwrap();
        let used = auth.issue_login().unwrap();
        let (cookie, session) = auth.redeem(&used).unwrap().unwrap();
        let heard = auth.revocations();
        assert_eq!(auth.revoke_all(), 1);
        assert!(heard.has_changed().unwrap());
        assert!(!auth.is_open(&session));
        assert!(auth
            .session(Some(&format!("__Host-tickloop-1={cookie}")))
            .is_none());
        assert!(auth.redeem(&unused).unwrap().is_none());
        assert!(auth.set_cookie("c").contains("; Secure"));
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
    }
}
