//! The HTTP part of a check, over plain TCP or TLS: one request with `Connection: close`, the
//! response head parsed by `tern-h1` (interim responses skipped), the status judged, and the
//! body searched for `expect_body` when one is set.
//!
//! Memory is fixed: one 16 KiB buffer holds the head (a larger head is an invalid response) and
//! then serves as the read buffer of the body, of which at most 16 KiB of data is kept for the
//! search. The search is incremental (only the new bytes, plus the needle's length minus one
//! before them), so a body dribbled one byte per read costs linear time, and it stops as soon
//! as the substring is found: the rest of the body is not waited for.

use std::io;
use std::net::SocketAddr;
use std::ops::Range;
use std::time::Duration;

use tern_config::{HttpCheck, StatusRange};
use tern_h1::{parse_response, BodyReader, Limits, Method, ResponseHead, Status};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::{timeout_at, Instant};

use super::{io_text, timed_out, CheckCode, Finding};

/// Largest response head, and the size of the read buffer.
const MAX_HEAD: usize = 16 * 1024;
/// Body data searched for `expect_body` (the configuration documents this limit).
const MAX_BODY: usize = 16 * 1024;
/// Body bytes read from the wire, framing included, before the search gives up: a chunked body
/// can carry little data in much framing.
const MAX_BODY_WIRE: usize = 64 * 1024;
/// Interim (1xx) responses skipped before the final one.
const MAX_INTERIM: usize = 8;

const LIMITS: Limits = Limits {
    max_head_size: MAX_HEAD,
    max_headers: 100,
    max_chunk_ext: 4 * 1024,
    max_trailer_size: MAX_HEAD,
};

/// Statuses that pass when `expect_status` is empty (the configuration's default).
const DEFAULT_EXPECT: &[StatusRange] = &[StatusRange {
    low: 200,
    high: 399,
}];

/// Sends `check`'s request on `io` and judges the response, before `deadline`.
pub(super) async fn exchange<S>(
    io: &mut S,
    check: &HttpCheck,
    address: SocketAddr,
    deadline: Instant,
    limit: Duration,
) -> Result<Finding, Finding>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    match timeout_at(deadline, judge(io, check, address)).await {
        Ok(verdict) => verdict,
        Err(_) => Err(timed_out(CheckCode::L7Tout, "the HTTP exchange", limit)),
    }
}

async fn judge<S>(io: &mut S, check: &HttpCheck, address: SocketAddr) -> Result<Finding, Finding>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    io.write_all(&request(check, address))
        .await
        .map_err(|e| io_failure(&e))?;
    io.flush().await.map_err(|e| io_failure(&e))?;

    let mut buf = vec![0u8; MAX_HEAD];
    let mut head = ResponseHead::new();
    let method = method(&check.method);
    let (len, filled) = read_head(io, &mut buf, &mut head, method).await?;
    let status = head.status();
    let Some(needle) = judge_status(check, status)? else {
        return Ok(Finding::new(CheckCode::L7Ok, format!("status {status}")));
    };
    let reader = head.body_reader(&LIMITS);
    let found = search_body(io, &mut buf, len..filled, reader, needle.as_bytes()).await?;
    judge_body(status, needle, found)
}

/// The status against `expect_status`; when it passes, the text the body must contain, if any.
/// Shared by HTTP/1.1 and HTTP/2 checks (`h2.rs`).
pub(super) fn judge_status(check: &HttpCheck, status: u16) -> Result<Option<&str>, Finding> {
    let expect = if check.expect_status.is_empty() {
        DEFAULT_EXPECT
    } else {
        &check.expect_status
    };
    if !expect.iter().any(|r| r.contains(status)) {
        let text = format!("status {status} (expected {})", show(expect));
        return Err(Finding::new(CheckCode::L7Sts, text));
    }
    Ok(check.expect_body.as_deref())
}

/// The verdict once the body was searched for `needle`.
pub(super) fn judge_body(status: u16, needle: &str, found: bool) -> Result<Finding, Finding> {
    if found {
        let text = format!("status {status}, body contains {needle:?}");
        Ok(Finding::new(CheckCode::L7Ok, text))
    } else {
        let text = format!("status {status}, body does not contain {needle:?}");
        Err(Finding::new(CheckCode::L7Body, text))
    }
}

/// The request bytes. `Connection: close` lets the server end the exchange, and keeps checks
/// from holding connections in its keep-alive pool.
fn request(check: &HttpCheck, address: SocketAddr) -> Vec<u8> {
    let host = match &check.host {
        Some(host) => host.clone(),
        None => address.to_string(),
    };
    format!(
        "{} {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: tern-check\r\nConnection: close\r\n\r\n",
        check.method, check.path
    )
    .into_bytes()
}

/// The request method as the codec needs it: only HEAD and CONNECT change how a response is
/// framed, so any other method reads like GET.
fn method(name: &str) -> Method {
    match name {
        "HEAD" => Method::Head,
        "CONNECT" => Method::Connect,
        _ => Method::Get,
    }
}

/// Reads until the final response head is complete in `buf`; returns its length and how many
/// bytes `buf` holds (the head, then the start of the body).
async fn read_head<S>(
    io: &mut S,
    buf: &mut [u8],
    head: &mut ResponseHead,
    method: Method,
) -> Result<(usize, usize), Finding>
where
    S: AsyncRead + Unpin,
{
    let mut filled = 0;
    let mut interim = 0;
    // Bounded: each turn reads at least one byte into `buf` (full: the parse fails) or drops
    // one of at most MAX_INTERIM interim heads.
    loop {
        if filled > 0 {
            match parse_response(&buf[..filled], &LIMITS, head, method) {
                Err(e) => return Err(invalid(format!("invalid response head: {e}"))),
                Ok(Status::Complete(len)) if is_interim(head.status()) => {
                    interim += 1;
                    if interim > MAX_INTERIM {
                        return Err(invalid("too many interim responses"));
                    }
                    buf.copy_within(len..filled, 0);
                    filled -= len;
                    continue;
                }
                Ok(Status::Complete(len)) => return Ok((len, filled)),
                Ok(Status::Partial) if filled == buf.len() => {
                    return Err(invalid("response head too large"));
                }
                Ok(Status::Partial) => {}
            }
        }
        let n = read_some(io, &mut buf[filled..]).await?;
        if n == 0 {
            return Err(invalid(if filled == 0 {
                "connection closed without a response"
            } else {
                "connection closed in the response head"
            }));
        }
        filled += n;
    }
}

/// A 1xx response other than 101: the final response follows on the connection. A 101 ends
/// HTTP on the connection, so it is judged as the final status (and fails).
fn is_interim(status: u16) -> bool {
    (100..200).contains(&status) && status != 101
}

/// Reads the body (its first bytes are `buf[start]`) until `needle` is found in its first
/// [`MAX_BODY`] bytes of data (`true`), or the body ends, or that much was searched (`false`).
async fn search_body<S>(
    io: &mut S,
    buf: &mut [u8],
    start: Range<usize>,
    mut reader: BodyReader,
    needle: &[u8],
) -> Result<bool, Finding>
where
    S: AsyncRead + Unpin,
{
    if needle.is_empty() {
        return Ok(true);
    }
    let mut body = Vec::new();
    let mut input = start;
    let mut wire = input.len();
    // Bounded: each turn reads at least one byte, and at most MAX_BODY_WIRE are read.
    loop {
        while !input.is_empty() && !reader.is_done() && body.len() < MAX_BODY {
            let d = reader
                .decode(&buf[input.clone()])
                .map_err(|e| invalid(format!("invalid response body: {e}")))?;
            let data = &buf[input.start..][d.data];
            let room = MAX_BODY - body.len();
            let searched = body.len();
            body.extend_from_slice(&data[..data.len().min(room)]);
            input.start += d.used;
            // Searched after each piece of data, before the framing that follows is read: the
            // verdict depends on the bytes, never on how the reads cut them (the fuzz target
            // `health_reply` found a needle passed when framing errors came in a later read,
            // refused when they came in the same one).
            if contains_from(&body, searched, needle) {
                return Ok(true);
            }
            if d.used == 0 {
                break;
            }
        }
        if reader.is_done() || body.len() >= MAX_BODY || wire >= MAX_BODY_WIRE {
            return Ok(false);
        }
        let n = read_some(io, buf).await?;
        if n == 0 {
            return match reader.finish() {
                Ok(()) => Ok(false),
                Err(_) => Err(invalid("connection closed in the response body")),
            };
        }
        input = 0..n;
        wire += n;
    }
}

/// Whether `needle` occurs in `hay` in a window that ends after `from` (earlier windows were
/// searched before).
pub(super) fn contains_from(hay: &[u8], from: usize, needle: &[u8]) -> bool {
    if needle.is_empty() {
        return true;
    }
    let start = from.saturating_sub(needle.len() - 1);
    hay.get(start..)
        .is_some_and(|h| h.windows(needle.len()).any(|w| w == needle))
}

/// One read; a TLS peer that closes without close_notify reads as end of stream, since HTTP's
/// own framing tells a complete response from a truncated one.
async fn read_some<S>(io: &mut S, buf: &mut [u8]) -> Result<usize, Finding>
where
    S: AsyncRead + Unpin,
{
    match io.read(buf).await {
        Ok(n) => Ok(n),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(0),
        Err(e) => Err(io_failure(&e)),
    }
}

/// An I/O error on an established connection: a TLS error (rustls reports them as invalid
/// data) or a socket error.
fn io_failure(e: &io::Error) -> Finding {
    if e.kind() == io::ErrorKind::InvalidData {
        Finding::new(CheckCode::L6Rsp, format!("TLS error: {}", io_text(e)))
    } else {
        Finding::new(CheckCode::SockErr, io_text(e))
    }
}

fn invalid(text: impl Into<String>) -> Finding {
    Finding::new(CheckCode::L7Rsp, text)
}

/// `expect_status` for a log line: `200-399`, `200,204`; adjacent ranges are shown as one.
fn show(ranges: &[StatusRange]) -> String {
    let mut merged: Vec<StatusRange> = Vec::new();
    for r in ranges {
        match merged.last_mut() {
            Some(last) if last.high.checked_add(1) == Some(r.low) => last.high = r.high,
            _ => merged.push(*r),
        }
    }
    let parts: Vec<String> = merged
        .iter()
        .map(|r| {
            if r.low == r.high {
                r.low.to_string()
            } else {
                format!("{}-{}", r.low, r.high)
            }
        })
        .collect();
    parts.join(",")
}
