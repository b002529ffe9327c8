//! A proxy's mode (`mode = "http"` or `"tcp"`, HAProxy's `mode`): whether tern reads HTTP
//! requests on its connections, or relays each connection's bytes whole to one server.
//!
//! A frontend and every backend it routes to share one mode: an HTTP frontend reads requests,
//! which a TCP backend's servers would not understand framed as tern frames them, and a TCP
//! frontend has no request to give an HTTP backend (HAProxy upgrades such a connection to HTTP
//! at the backend; tern refuses the mix rather than parse HTTP where the frontend said not to).

/// A frontend's or a backend's `mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ProxyMode {
    /// HTTP/1.1 and HTTP/2 requests, each routed and forwarded on its own (the default).
    #[default]
    Http,
    /// A TCP connection relayed both ways to one server until both sides close: TLS terminated
    /// (or not) by tern, the bytes never read.
    Tcp,
}

impl ProxyMode {
    /// The value as written in TOML.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Http => "http",
            Self::Tcp => "tcp",
        }
    }
}
