//! The runtime control surface (`[control]`): where the control API listens and who may change
//! state through it.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// `[control]`: the control API's Unix socket and optional HTTP listener.
///
/// Without `socket` and `http` there is no control API at all (the default), like HAProxy
/// without a `stats socket`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlSettings {
    /// Unix socket of the control API (absolute); `None`: no socket.
    pub socket: Option<PathBuf>,
    /// File mode of the socket (permission bits only, `0o600` by default).
    pub socket_mode: u32,
    /// Address of the HTTP listener (JSON API, stats page, metrics); `None`: none.
    pub http: Option<SocketAddr>,
    /// Bearer token that allows state-changing commands over HTTP; `None`: HTTP is read-only.
    pub token: Option<ControlToken>,
    /// Refresh interval of the HTML stats page (whole seconds, at least one).
    pub stats_refresh: Duration,
    /// Basic authentication on the HTTP listener (`userlist`, `realm`); `None`: open to
    /// whoever reaches it.
    pub auth: Option<ControlAuth>,
}

/// Who may use the control API's HTTP listener: the users of a userlist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlAuth {
    /// The userlist (a copy: the control API outlives configurations, and a reload that
    /// changes its users then changes `[control]` and restarts the API).
    pub users: super::Userlist,
    /// The realm of the `WWW-Authenticate` challenge.
    pub realm: String,
}

impl Default for ControlSettings {
    fn default() -> Self {
        Self {
            socket: None,
            socket_mode: 0o600,
            http: None,
            token: None,
            stats_refresh: Duration::from_secs(10),
            auth: None,
        }
    }
}

/// A secret bearer token: printable ASCII without spaces, at least 16 characters. Its `Debug`
/// form hides the value so that it never reaches a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct ControlToken(String);

impl ControlToken {
    /// Shortest accepted token: 16 characters leave nothing to guess by trying.
    pub const MIN_LEN: usize = 16;

    /// Checks `text` (already trimmed) and wraps it.
    pub fn new(text: &str) -> Result<Self, String> {
        if text.len() < Self::MIN_LEN {
            return Err(format!(
                "the token is {} characters long; use at least {} (e.g. 32 random hex digits)",
                text.len(),
                Self::MIN_LEN
            ));
        }
        if let Some(bad) = text.chars().find(|c| !c.is_ascii_graphic()) {
            return Err(format!(
                "the token contains {bad:?}: use printable ASCII characters without spaces"
            ));
        }
        Ok(Self(text.to_owned()))
    }

    /// The secret itself, for comparison with a request's `Authorization` header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ControlToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ControlToken(<hidden>)")
    }
}
