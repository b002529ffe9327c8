//! TLS from tern to its servers (re-encryption): `tls` on a server, or on a backend as the
//! default of its servers.
//!
//! The model says what to do, not how: the certificate files are named by path (checked to be
//! readable PEM during validation, loaded by tern-tls when the configuration is built), and the
//! server name is a rule ([`ServerSni`]) because with `sni = "host"` it depends on each request.

use std::path::PathBuf;

/// How tern talks TLS to one server (`tls = true` or `tls = { ... }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTls {
    /// How the server's certificate is checked (`verify`, with `ca`).
    pub verify: ServerVerify,
    /// The server name sent in the handshake, which is also the name the certificate is
    /// verified against (`sni`).
    pub sni: ServerSni,
    /// ALPN protocols offered, most preferred first (`alpn`); empty offers none.
    pub alpn: Vec<String>,
    /// A PEM file with tern's client certificate chain and its key, for servers that require
    /// client certificates (`cert`); absolute.
    pub cert: Option<PathBuf>,
    /// Keep TLS sessions to resume later connections to this server, the health checks' included
    /// (`session_reuse`, default true).
    pub session_reuse: bool,
}

/// How a server's certificate is checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerVerify {
    /// The chain must lead to a CA of the bundle `ca` (absolute path), and the certificate must
    /// name the server ([`ServerSni`]) (`verify = "required"`).
    Required { ca: PathBuf },
    /// Any certificate is accepted; the handshake signature is still checked (`verify = "none"`).
    None,
}

/// The server name of a TLS connection to a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerSni {
    /// No SNI; the certificate is verified against the server's IP address (an IP SAN).
    None,
    /// This DNS name (`sni = "api.example.com"`).
    Fixed(String),
    /// The host of the client's `Host` header, per request (`sni = "host"`); requests without a
    /// usable host name are sent without SNI. Pooled connections are reused only for the same
    /// name.
    Host,
}
