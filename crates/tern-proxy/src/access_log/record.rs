//! One access log line as plain data: what a worker hands to the writer thread.
//!
//! A [`Record`] has a fixed size and owns no heap memory: names, the request target and the SNI
//! are copied into bounded inline buffers ([`Text`]), the TLS version and cipher are static
//! names. Handing one over is a copy into a slot of the bounded queue, so the request path does
//! no allocation and no formatting; the writer thread formats.
//!
//! A frontend with a request id, captures or a `log_format` adds an [`Extra`] (one allocation
//! per request, only there): the id, the captured values, the samples of the format, and the
//! format itself, which the writer thread follows instead of tern's own layout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::SystemTime;

use tern_config::LogTemplate;

/// Longest frontend, backend or server name kept (longer ones are cut).
pub(crate) const NAME_MAX: usize = 64;
/// Longest method kept.
pub(crate) const METHOD_MAX: usize = 16;
/// Longest request target kept (HAProxy's default log line is 1024 bytes in all).
pub(crate) const TARGET_MAX: usize = 1024;
/// Longest SNI kept (a DNS name is at most 253 bytes).
pub(crate) const SNI_MAX: usize = 256;

/// Bytes copied into a fixed buffer, cut at `N`.
#[derive(Clone, Copy)]
pub(crate) struct Text<const N: usize> {
    len: u16,
    bytes: [u8; N],
}

impl<const N: usize> Text<N> {
    pub(crate) const fn new() -> Self {
        Self {
            len: 0,
            bytes: [0; N],
        }
    }

    /// Replaces the content with (at most `N` bytes of) `from`.
    pub(crate) fn set(&mut self, from: &[u8]) {
        let n = from.len().min(N);
        self.bytes[..n].copy_from_slice(&from[..n]);
        // N is at most a few KiB, well within u16.
        self.len = n as u16;
    }

    pub(crate) fn from_bytes(from: &[u8]) -> Self {
        let mut text = Self::new();
        text.set(from);
        text
    }

    pub(crate) fn get(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<const N: usize> std::fmt::Debug for Text<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.get()))
    }
}

/// The phase timers of a request, in microseconds; -1 where the phase did not happen
/// (HAProxy's `%Th/%Ti/%TR/%Tw/%Tc/%Tr/%Ta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Timers {
    /// `Th`: accept to the end of the TLS handshake (first request of a connection; 0 after
    /// it, and on plain connections).
    pub handshake: i64,
    /// `Ti`: idle time before the first byte of the request (after the handshake, or after the
    /// previous response on a keep-alive connection).
    pub idle: i64,
    /// `TR`: first byte to the complete request head.
    pub request: i64,
    /// `Tw`: time spent waiting for a server (balancing, queue).
    pub queue: i64,
    /// `Tc`: time to get a server connection (0 for a pooled one), retries included.
    pub connect: i64,
    /// `Tr`: connection ready to the complete response head.
    pub response: i64,
    /// `Ta`: first byte of the request to the last byte of the response.
    pub active: i64,
}

impl Timers {
    pub(crate) const NONE: Timers = Timers {
        handshake: -1,
        idle: -1,
        request: -1,
        queue: -1,
        connect: -1,
        response: -1,
        active: -1,
    };
}

/// What the line says about the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Request {
    /// A request head was read: method, target and version.
    Line,
    /// No valid request head (`<BADREQ>`), with why: `bad_request`, `request_timeout`, ...
    Missing(&'static str),
    /// The TLS handshake did not complete (`<TLS:reason>`).
    Tls(&'static str),
    /// A TCP-mode session: no request, the line is HAProxy's `option tcplog` layout.
    Tcp,
}

/// The TLS session of a connection.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TlsFields {
    /// `TLSv1.3`, `TLSv1.2`.
    pub version: &'static str,
    /// IANA name, e.g. `TLS_AES_128_GCM_SHA256`.
    pub cipher: &'static str,
    pub sni: Text<SNI_MAX>,
    pub resumed: bool,
}

/// What a frontend's `unique_id_format`, captures and `log_format` add to a line.
#[derive(Debug, Clone, Default)]
pub(crate) struct Extra {
    /// The line's layout; `None`: tern's text or JSON line (with the captures).
    pub format: Option<Arc<LogTemplate>>,
    /// The request id (`%ID`); empty when none was made.
    pub unique_id: Vec<u8>,
    /// One value per `capture_request_headers` entry (empty when the field was absent).
    pub request_captures: Vec<Vec<u8>>,
    /// One value per `capture_response_headers` entry.
    pub response_captures: Vec<Vec<u8>>,
    /// The format's `%[fetch]` samples, by slot; `None` when absent.
    pub samples: Vec<Option<Vec<u8>>>,
    /// The address the client connected to (`%fi`, `%fp`), when the format reads it.
    pub local: Option<SocketAddr>,
    /// The server's address (`%si`, `%sp`).
    pub server: Option<SocketAddr>,
    /// The request's number in the process (`%rt`).
    pub counter: u64,
}

/// One access log line.
#[derive(Debug, Clone)]
pub(crate) struct Record {
    /// When the request started (its first byte), or the connection for a handshake failure.
    pub time: SystemTime,
    pub client: SocketAddr,
    pub frontend: Text<NAME_MAX>,
    /// Empty when the request never reached a backend (answered by tern, refused).
    pub backend: Text<NAME_MAX>,
    /// Empty when no server was chosen (`<NOSRV>`).
    pub server: Text<NAME_MAX>,
    pub timers: Timers,
    /// Status sent to the client; -1 when none was.
    pub status: i32,
    /// Bytes sent to the client for this request (head included).
    pub bytes_out: u64,
    /// Bytes received from the client for this request (head and body as received).
    pub bytes_in: u64,
    /// Connection attempts beyond the first (connect retries, requests sent again).
    pub retries: u32,
    /// A retry went to another server (`redispatch`).
    pub redispatched: bool,
    /// HAProxy's session state at disconnection: who ended it, in which phase (`--` normal).
    pub termination: [u8; 2],
    pub request: Request,
    pub method: Text<METHOD_MAX>,
    pub target: Text<TARGET_MAX>,
    /// 10, 11 or 20 (HTTP/1.0, HTTP/1.1, HTTP/2).
    pub version: u8,
    /// The HTTP/2 stream id; 0 for an HTTP/1.x request.
    pub stream: u32,
    /// `None` for a plain connection.
    pub tls: Option<TlsFields>,
    /// Syslog severity of the line: 6 (informational) unless a `set-log-level` rule chose
    /// another.
    pub severity: u8,
    /// `None` unless the frontend has a request id, captures or a `log_format`.
    pub extra: Option<Box<Extra>>,
}

impl Record {
    /// A record of a connection from `client` to `frontend`, nothing else known yet.
    pub(crate) fn new(client: SocketAddr, frontend: &str) -> Self {
        Self {
            time: SystemTime::UNIX_EPOCH,
            client,
            frontend: Text::from_bytes(frontend.as_bytes()),
            backend: Text::new(),
            server: Text::new(),
            timers: Timers::NONE,
            status: -1,
            bytes_out: 0,
            bytes_in: 0,
            retries: 0,
            redispatched: false,
            termination: *b"--",
            request: Request::Missing("bad_request"),
            method: Text::new(),
            target: Text::new(),
            version: 11,
            stream: 0,
            tls: None,
            severity: SEVERITY_INFO,
            extra: None,
        }
    }
}

/// The syslog severity of a line no rule chose one for: informational.
pub(crate) const SEVERITY_INFO: u8 = 6;
