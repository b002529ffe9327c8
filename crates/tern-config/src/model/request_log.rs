//! What a frontend records of each request beyond tern's own log line: a request id
//! (`unique_id_format`, `unique_id_header`, HAProxy's `unique-id-*`), captured header values
//! (`capture_request_headers`, `capture_response_headers`, HAProxy's `capture request|response
//! header`) and the line's layout (`log_format`, HAProxy's `log-format`).
//!
//! Formats are HAProxy log-format strings compiled once, at load time, into a [`LogTemplate`]:
//! literal text, `%[fetch]` samples (the same [`Fetch`] header values use) and log variables
//! (`%ci`, `%Ta`, `%{+Q}r`, ...). The data path and the access log's writer only walk the
//! pieces.

use std::sync::Arc;

use super::condition::Fetch;

/// A frontend's request id, captures and log line layout. All empty by default, and then the
/// request path does nothing more than before.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestLog {
    /// How each request's id is made (`unique_id_format`); `None`: requests get none.
    pub unique_id_format: Option<LogTemplate>,
    /// The request field that carries the id to the server (`unique_id_header`).
    pub unique_id_header: Option<String>,
    /// Request fields whose value goes into the log line (`capture_request_headers`).
    pub capture_request: Vec<Capture>,
    /// Response fields whose value goes into the log line (`capture_response_headers`).
    pub capture_response: Vec<Capture>,
    /// The layout of this frontend's log lines (`log_format`); `None`: tern's own text or
    /// JSON lines. Shared with the log records, which carry it to the writer thread.
    pub log_format: Option<Arc<LogTemplate>>,
}

impl RequestLog {
    /// Whether requests need anything of this at all (one branch on the request path).
    pub fn is_active(&self) -> bool {
        self.unique_id_format.is_some()
            || !self.capture_request.is_empty()
            || !self.capture_response.is_empty()
            || self.log_format.is_some()
    }

    /// Whether the id or the line reads the frontend's own address (`%fi`, `%fp`): the
    /// connection then looks it up once.
    pub fn reads_local_address(&self) -> bool {
        let reads = |t: &LogTemplate| {
            t.pieces.iter().any(|p| {
                matches!(
                    p,
                    LogPiece::Var {
                        var: LogVar::FrontendIp | LogVar::FrontendPort,
                        ..
                    }
                )
            })
        };
        self.unique_id_format.as_ref().is_some_and(reads)
            || self.log_format.as_deref().is_some_and(reads)
    }
}

/// One captured field: its value, cut at `len` bytes, goes into the log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The field name, lower-cased.
    pub name: String,
    /// Bytes kept of the value (HAProxy's `len`).
    pub len: usize,
}

/// Most bytes one capture keeps (HAProxy has no limit but its buffer; a line stays readable).
pub const CAPTURE_MAX: usize = 1024;

/// Most captures of each direction per frontend.
pub const CAPTURES_MAX: usize = 32;

/// A compiled log-format string.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogTemplate {
    pub pieces: Vec<LogPiece>,
    /// How many `%[fetch]` pieces there are (their slots are `0..samples`).
    pub samples: usize,
}

/// One piece of a [`LogTemplate`].
#[derive(Debug, Clone, PartialEq)]
pub enum LogPiece {
    /// Text copied as it is (no spaces: those are separators).
    Text(String),
    /// One or more spaces: HAProxy writes one space, unless nothing was written since the
    /// start or the last separator (so `%{+X}o %ci` starts with the address).
    Separator,
    /// A log variable (`%ci`), with its flags.
    Var { var: LogVar, flags: LogFlags },
    /// A sample of the request (`%[hdr(host)]`), taken when the request is routed; `slot` is
    /// its index among the template's samples.
    Sample {
        fetch: Fetch,
        flags: LogFlags,
        slot: usize,
    },
    /// `%o`: these flags apply to every following variable.
    Flags(LogFlags),
}

/// HAProxy's log-format flags (`%{+Q}r`, `%{+X}o`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogFlags {
    /// `Q`: strings in double quotes.
    pub quote: bool,
    /// `X`: addresses, ports and the numbers of ids in hexadecimal.
    pub hex: bool,
    /// `E`: `"`, `\` and `]` in strings escaped with a `\`.
    pub escape: bool,
}

/// The log variables tern writes. Those marked "at request" are known when the request is
/// routed, so a request id may use them; the others only when the line is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogVar {
    /// `%ci`, `%cp`: the client's address and port (at request).
    ClientIp,
    ClientPort,
    /// `%fi`, `%fp`: the address and port the client connected to (at request).
    FrontendIp,
    FrontendPort,
    /// `%si`, `%sp`: the server's address and port.
    ServerIp,
    ServerPort,
    /// `%f`, `%ft` (`~` after it on TLS), `%b`, `%s` (`<NOSRV>` when none).
    Frontend,
    FrontendTransport,
    Backend,
    Server,
    /// `%t`: the accept date, milliseconds; `%T`: the accept date, GMT; `%Ts`: its Unix
    /// time; `%ms`: its milliseconds (at request).
    AcceptDate,
    AcceptDateGmt,
    Timestamp,
    Millis,
    /// `%tr`: the request's date, milliseconds; `%trg`: GMT.
    RequestDate,
    RequestDateGmt,
    /// The timers, in milliseconds: `%Th %Ti %TR %Tw %Tc %Tr %Ta %Tt %Tq %Td %Tu`.
    Th,
    Ti,
    TR,
    Tw,
    Tc,
    Tr,
    Ta,
    Tt,
    Tq,
    Td,
    Tu,
    /// `%ST`, `%B` (bytes to the client), `%U` (bytes from it), `%rc` (retries, `+` first
    /// after a redispatch).
    Status,
    BytesOut,
    BytesIn,
    Retries,
    /// `%ts`, `%tsc` (with the two cookie characters, `--`).
    Termination,
    TerminationCookie,
    /// `%CC`, `%CS`: captured cookies (tern captures none: `-`).
    CapturedCookie,
    /// `%hr`, `%hs`: `{v1|v2}`; `%hrl`, `%hsl`: the values separated by spaces.
    CapturedRequest,
    CapturedResponse,
    CapturedRequestList,
    CapturedResponseList,
    /// `%r` (`METHOD TARGET VERSION`), `%HM`, `%HU`, `%HP` (target without the query), `%HPO`
    /// (path only), `%HQ` (`?query`), `%HV`.
    RequestLine,
    Method,
    Uri,
    UriPath,
    PathOnly,
    Query,
    Version,
    /// `%ID`: the request id.
    UniqueId,
    /// `%pid` and `%H` (host name) (at request).
    Pid,
    Hostname,
    /// `%rt`: the request's number in the process (at request).
    RequestCounter,
    /// `%sslv`, `%sslc`: the client connection's TLS version and cipher.
    SslVersion,
    SslCipher,
}

impl LogVar {
    /// Whether the variable is known when the request is routed (before any server).
    pub fn at_request(self) -> bool {
        use LogVar::*;
        matches!(
            self,
            ClientIp
                | ClientPort
                | FrontendIp
                | FrontendPort
                | Frontend
                | FrontendTransport
                | AcceptDate
                | AcceptDateGmt
                | Timestamp
                | Millis
                | Pid
                | Hostname
                | RequestCounter
                | Method
                | Uri
                | UriPath
                | PathOnly
                | Query
                | Version
                | RequestLine
        )
    }
}

/// Every variable tern writes, by its HAProxy name (`%CC` and `%CS` are one: tern captures no
/// cookie).
pub const LOG_VARIABLES: &[(&str, LogVar)] = &[
    ("ci", LogVar::ClientIp),
    ("cp", LogVar::ClientPort),
    ("fi", LogVar::FrontendIp),
    ("fp", LogVar::FrontendPort),
    ("si", LogVar::ServerIp),
    ("sp", LogVar::ServerPort),
    ("f", LogVar::Frontend),
    ("ft", LogVar::FrontendTransport),
    ("b", LogVar::Backend),
    ("s", LogVar::Server),
    ("t", LogVar::AcceptDate),
    ("T", LogVar::AcceptDateGmt),
    ("Ts", LogVar::Timestamp),
    ("ms", LogVar::Millis),
    ("tr", LogVar::RequestDate),
    ("trg", LogVar::RequestDateGmt),
    ("Th", LogVar::Th),
    ("Ti", LogVar::Ti),
    ("TR", LogVar::TR),
    ("Tw", LogVar::Tw),
    ("Tc", LogVar::Tc),
    ("Tr", LogVar::Tr),
    ("Ta", LogVar::Ta),
    ("Tt", LogVar::Tt),
    ("Tq", LogVar::Tq),
    ("Td", LogVar::Td),
    ("Tu", LogVar::Tu),
    ("ST", LogVar::Status),
    ("B", LogVar::BytesOut),
    ("U", LogVar::BytesIn),
    ("rc", LogVar::Retries),
    ("ts", LogVar::Termination),
    ("tsc", LogVar::TerminationCookie),
    ("CC", LogVar::CapturedCookie),
    ("CS", LogVar::CapturedCookie),
    ("hr", LogVar::CapturedRequest),
    ("hs", LogVar::CapturedResponse),
    ("hrl", LogVar::CapturedRequestList),
    ("hsl", LogVar::CapturedResponseList),
    ("r", LogVar::RequestLine),
    ("HM", LogVar::Method),
    ("HU", LogVar::Uri),
    ("HP", LogVar::UriPath),
    ("HPO", LogVar::PathOnly),
    ("HQ", LogVar::Query),
    ("HV", LogVar::Version),
    ("ID", LogVar::UniqueId),
    ("pid", LogVar::Pid),
    ("H", LogVar::Hostname),
    ("rt", LogVar::RequestCounter),
    ("sslv", LogVar::SslVersion),
    ("sslc", LogVar::SslCipher),
];

impl LogVar {
    /// The variable's HAProxy name (the first of [`LOG_VARIABLES`] that names it).
    pub fn name(self) -> &'static str {
        LOG_VARIABLES
            .iter()
            .find(|(_, v)| *v == self)
            .map_or("?", |(n, _)| n)
    }
}
