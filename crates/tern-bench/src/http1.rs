//! The load generator's HTTP/1.1 client side: fixed request bytes and a response parser that
//! reads only what framing needs.
//!
//! Why hand-rolled instead of hyper's client: the generator must spend as little CPU per request
//! as possible so the server, not the client, is the bottleneck. A request is a byte string
//! built once; a response is parsed for its status line, `Content-Length`, `Transfer-Encoding`
//! and `Connection` only, and the body is skipped without being copied or stored.
//!
//! The parser does no I/O (sans-I/O, like rustls): the caller feeds it the bytes it has and
//! it says how many it consumed and whether the response is complete, so it is unit-tested
//! and fuzzable on plain byte slices.

use crate::args::Target;

/// The largest response head accepted; a longer one is a protocol error.
pub const MAX_HEAD: usize = 16 * 1024;

/// Headers per response head that the parser makes room for.
const MAX_HEADERS: usize = 64;

/// Builds the GET request for `target`; `close` adds `Connection: close` for the last request of
/// a connection.
pub fn request(target: &Target, close: bool) -> Vec<u8> {
    let connection = if close { "Connection: close\r\n" } else { "" };
    format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: tern-bench\r\n{connection}\r\n",
        target.path, target.authority
    )
    .into_bytes()
}

/// A complete response as far as the client cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Response {
    /// The status code (never 1xx: interim responses are skipped).
    pub status: u16,
    /// Whether the connection can carry another request.
    pub keep_alive: bool,
}

/// What [`ResponseParser::feed`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The response is not complete; feed more bytes (or call [`ResponseParser::eof`]).
    NeedMore,
    /// The response ended; bytes after it were not consumed.
    Done(Response),
}

/// Why a response could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The status line or a header is malformed.
    #[error("malformed response head: {0}")]
    Head(httparse::Error),
    /// The head is longer than [`MAX_HEAD`] bytes.
    #[error("response head longer than {MAX_HEAD} bytes")]
    HeadTooLarge,
    /// `Content-Length` is not a number, or two values differ.
    #[error("invalid Content-Length")]
    ContentLength,
    /// The chunked body is malformed.
    #[error("malformed chunked body")]
    Chunked,
    /// `101 Switching Protocols`: the generator does not upgrade.
    #[error("unexpected 101 Switching Protocols")]
    Upgrade,
    /// The peer closed the connection before the response ended.
    #[error("connection closed before the response ended")]
    UnexpectedEof,
}

/// Parses one response; create a new parser for each response.
#[derive(Debug, Clone)]
pub struct ResponseParser {
    state: State,
    status: u16,
    keep_alive: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Head,
    Length(u64),
    Chunked(Chunk),
    UntilClose,
    Done,
}

/// Position inside a chunked body (RFC 9112 section 7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// Reading hex digits of a chunk size.
    Size {
        size: u64,
        digits: u8,
    },
    /// Skipping a chunk extension up to the end of the size line.
    Ext {
        size: u64,
    },
    /// Saw CR at the end of the size line.
    SizeLf {
        size: u64,
    },
    /// Skipping chunk data.
    Data(u64),
    /// Expecting the CRLF after chunk data.
    DataCr,
    DataLf,
    /// At the start of a trailer line (or the final empty line).
    TrailerStart,
    /// Inside a trailer field line.
    TrailerLine,
    /// Saw CR of the final empty line.
    FinalLf,
}

impl Default for ResponseParser {
    fn default() -> Self {
        Self::new()
    }
}

impl ResponseParser {
    /// A parser waiting for a status line.
    pub fn new() -> Self {
        Self {
            state: State::Head,
            status: 0,
            keep_alive: true,
        }
    }

    /// Consumes what it can of `input`; returns the bytes consumed and the progress.
    ///
    /// An incomplete head is not consumed (it is parsed again when more bytes arrive), so the
    /// caller keeps unconsumed bytes and appends to them.
    pub fn feed(&mut self, input: &[u8]) -> Result<(usize, Progress), ParseError> {
        let mut pos = 0;
        loop {
            let rest = &input[pos..];
            match self.state {
                State::Head => match self.head(rest)? {
                    Some(used) => pos += used,
                    None => return Ok((pos, Progress::NeedMore)),
                },
                State::Length(0) => self.state = State::Done,
                State::Length(left) => {
                    let take = left.min(rest.len() as u64);
                    pos += take as usize; // take <= rest.len(), so it fits in usize
                    self.state = State::Length(left - take);
                    if left > take {
                        return Ok((pos, Progress::NeedMore));
                    }
                }
                State::Chunked(chunk) => {
                    let (used, next) = skip_chunked(chunk, rest)?;
                    pos += used;
                    match next {
                        Some(chunk) => {
                            self.state = State::Chunked(chunk);
                            return Ok((pos, Progress::NeedMore));
                        }
                        None => self.state = State::Done,
                    }
                }
                State::UntilClose => return Ok((input.len(), Progress::NeedMore)),
                State::Done => return Ok((pos, Progress::Done(self.response()))),
            }
        }
    }

    /// The peer closed the connection: ends a close-delimited body, otherwise an error.
    pub fn eof(&self) -> Result<Response, ParseError> {
        match self.state {
            State::UntilClose | State::Done => Ok(self.response()),
            _ => Err(ParseError::UnexpectedEof),
        }
    }

    fn response(&self) -> Response {
        Response {
            status: self.status,
            keep_alive: self.keep_alive && self.state != State::UntilClose,
        }
    }

    /// Parses a head at the start of `input`; `None` if incomplete.
    fn head(&mut self, input: &[u8]) -> Result<Option<usize>, ParseError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut parsed = httparse::Response::new(&mut headers);
        let used = match parsed.parse(input).map_err(ParseError::Head)? {
            httparse::Status::Complete(used) => used,
            httparse::Status::Partial if input.len() >= MAX_HEAD => {
                return Err(ParseError::HeadTooLarge)
            }
            httparse::Status::Partial => return Ok(None),
        };
        // Complete responses always carry a code and a version.
        let status = parsed.code.unwrap_or(0);
        match status {
            101 => return Err(ParseError::Upgrade),
            100..=199 => return Ok(Some(used)), // interim response: the real one follows
            _ => {}
        }
        let framing = Framing::read(parsed.version.unwrap_or(1), parsed.headers)?;
        self.status = status;
        self.keep_alive = framing.keep_alive;
        self.state = match (status, framing.body) {
            (204 | 304, _) => State::Done,
            (_, Body::Chunked) => State::Chunked(Chunk::Size { size: 0, digits: 0 }),
            (_, Body::Length(n)) => State::Length(n),
            (_, Body::UntilClose) => State::UntilClose,
        };
        Ok(Some(used))
    }
}

/// The framing-relevant part of a response head.
#[derive(Debug)]
struct Framing {
    keep_alive: bool,
    body: Body,
}

#[derive(Debug, PartialEq, Eq)]
enum Body {
    Length(u64),
    Chunked,
    UntilClose,
}

impl Framing {
    fn read(version: u8, headers: &[httparse::Header<'_>]) -> Result<Self, ParseError> {
        let mut keep_alive = version >= 1;
        let mut length: Option<u64> = None;
        let mut chunked: Option<bool> = None;
        for h in headers {
            if h.name.eq_ignore_ascii_case("content-length") {
                for value in h.value.split(|&b| b == b',') {
                    let n = parse_decimal(trim(value)).ok_or(ParseError::ContentLength)?;
                    if length.is_some_and(|old| old != n) {
                        return Err(ParseError::ContentLength);
                    }
                    length = Some(n);
                }
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                // Only the last coding decides whether the body is chunked.
                let last = h.value.rsplit(|&b| b == b',').next().unwrap_or(&[]);
                chunked = Some(trim(last).eq_ignore_ascii_case(b"chunked"));
            } else if h.name.eq_ignore_ascii_case("connection") {
                for token in h.value.split(|&b| b == b',').map(trim) {
                    if token.eq_ignore_ascii_case(b"close") {
                        keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive") && version == 0 {
                        keep_alive = true;
                    }
                }
            }
        }
        let body = match (chunked, length) {
            (Some(true), _) => Body::Chunked,
            (Some(false), _) | (None, None) => Body::UntilClose,
            (None, Some(n)) => Body::Length(n),
        };
        Ok(Self { keep_alive, body })
    }
}

/// Skips chunked-body bytes from `input`; returns the bytes used and the next state, or `None`
/// when the body (trailers included) ended.
fn skip_chunked(mut chunk: Chunk, input: &[u8]) -> Result<(usize, Option<Chunk>), ParseError> {
    let mut pos = 0;
    while pos < input.len() {
        if let Chunk::Data(left) = chunk {
            let take = left.min((input.len() - pos) as u64);
            pos += take as usize; // take <= input.len() - pos
            chunk = if left == take {
                Chunk::DataCr
            } else {
                Chunk::Data(left - take)
            };
            continue;
        }
        let b = input[pos];
        pos += 1;
        chunk = match (chunk, b) {
            (Chunk::Size { size, digits }, b) if b.is_ascii_hexdigit() => {
                if digits >= 16 {
                    return Err(ParseError::Chunked);
                }
                let digit = u64::from(hex_value(b));
                Chunk::Size {
                    size: size << 4 | digit,
                    digits: digits + 1,
                }
            }
            (Chunk::Size { digits: 0, .. }, _) => return Err(ParseError::Chunked),
            (Chunk::Size { size, .. }, b';' | b' ' | b'\t') => Chunk::Ext { size },
            (Chunk::Size { size, .. } | Chunk::Ext { size }, b'\r') => Chunk::SizeLf { size },
            (Chunk::Size { size, .. } | Chunk::Ext { size } | Chunk::SizeLf { size }, b'\n') => {
                if size == 0 {
                    Chunk::TrailerStart
                } else {
                    Chunk::Data(size)
                }
            }
            (Chunk::Ext { size }, _) => Chunk::Ext { size },
            (Chunk::DataCr, b'\r') => Chunk::DataLf,
            (Chunk::DataCr | Chunk::DataLf, b'\n') => Chunk::Size { size: 0, digits: 0 },
            (Chunk::TrailerStart, b'\r') => Chunk::FinalLf,
            (Chunk::TrailerStart | Chunk::FinalLf, b'\n') => return Ok((pos, None)),
            (Chunk::TrailerLine, b'\n') => Chunk::TrailerStart,
            (Chunk::TrailerStart | Chunk::TrailerLine, _) => Chunk::TrailerLine,
            _ => return Err(ParseError::Chunked),
        };
    }
    Ok((pos, Some(chunk)))
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        _ => b - b'A' + 10,
    }
}

/// Parses a non-empty run of ASCII digits without overflow.
fn parse_decimal(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 19 {
        return None;
    }
    s.iter().try_fold(0u64, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u64::from(b - b'0'))
    })
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

#[cfg(test)]
mod tests;
