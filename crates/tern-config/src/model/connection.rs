//! What happens to connections after each response: HAProxy's `option http-keep-alive`,
//! `option http-server-close` and `option httpclose`, as one key on frontends and backends.
//!
//! HAProxy (its H1 multiplexer) decides each side from both proxies of a request: the client
//! connection closes after the response only when the *frontend* is in close mode; the server
//! connection closes when either the frontend or the backend is in server-close or close mode.
//! So a backend's `httpclose` acts exactly as its `http-server-close`, and tern accepts only
//! `keep-alive` and `server-close` on a backend rather than a third value that would look like
//! it closes clients.

/// A frontend's or a backend's `connection_mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ConnectionMode {
    /// Both connections stay open between requests (HAProxy's default, `http-keep-alive`).
    #[default]
    KeepAlive,
    /// The server connection closes after each response (`Connection: close` on the request,
    /// never pooled); the client connection stays open (`http-server-close`).
    ServerClose,
    /// Frontends only: both connections close after each response, the response saying
    /// `Connection: close` (`httpclose`).
    Close,
}

impl ConnectionMode {
    /// The value as written in TOML.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::KeepAlive => "keep-alive",
            Self::ServerClose => "server-close",
            Self::Close => "close",
        }
    }

    /// Whether a request through a frontend in `frontend` mode to a backend in `backend` mode
    /// closes its server connection after the response.
    pub fn closes_server(frontend: Self, backend: Self) -> bool {
        frontend.max(backend) >= Self::ServerClose
    }
}
