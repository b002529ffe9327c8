//! The HTTP part of a check in HTTP/2 (`proto = "h2"`, HAProxy's `check-proto h2`): h2c with
//! prior knowledge over TCP, or h2 over TLS (ALPN `h2`). A server that speaks only HTTP/2 (a
//! gRPC service, an h2c origin) cannot answer an HTTP/1.1 check, so its checks follow its
//! `proto` unless told otherwise.
//!
//! The judgement is the HTTP/1.1 check's: the status against `expect_status`, then the first
//! 16 KiB of body data searched for `expect_body`. Memory is bounded the same way: the `h2`
//! crate holds at most the windows tern announces, and at most [`MAX_BODY`] bytes of data are
//! kept. The connection is driven beside the request, never spawned, so nothing of a check
//! outlives it.

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::pin;
use std::task::Poll;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request};
use tern_config::HttpCheck;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::time::{timeout_at, Instant};

use super::http::{contains_from, judge_body, judge_status};
use super::{timed_out, CheckCode, Finding};

/// Body data searched for `expect_body` (as for HTTP/1.1 checks).
const MAX_BODY: usize = 16 * 1024;
/// The windows tern announces: a server sends no more than this before it is read.
const WINDOW: u32 = 64 * 1024;
/// Largest response header list accepted.
const MAX_HEADER_LIST: u32 = 16 * 1024;

/// Sends `check`'s request over HTTP/2 on `io` and judges the response, before `deadline`.
pub(super) async fn exchange<S>(
    io: S,
    check: &HttpCheck,
    authority: &str,
    deadline: Instant,
    limit: Duration,
) -> Result<Finding, Finding>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let verdict = async {
        let (send, connection) = h2::client::Builder::new()
            .initial_window_size(WINDOW)
            .initial_connection_window_size(WINDOW)
            .max_header_list_size(MAX_HEADER_LIST)
            .enable_push(false)
            .handshake::<_, Bytes>(io)
            .await
            .map_err(|e| failure(&e, "the HTTP/2 preface"))?;
        let mut connection = pin!(connection);
        let mut judged = pin!(judge(send, check, authority));
        // The connection is polled beside the request: it carries the frames both ways.
        poll_fn(|cx| {
            if let Poll::Ready(verdict) = judged.as_mut().poll(cx) {
                return Poll::Ready(verdict);
            }
            match connection.as_mut().poll(cx) {
                Poll::Ready(Ok(())) => Poll::Ready(Err(invalid(
                    "the server closed the HTTP/2 connection before the response",
                ))),
                Poll::Ready(Err(e)) => Poll::Ready(Err(failure(&e, "the HTTP/2 connection"))),
                Poll::Pending => Poll::Pending,
            }
        })
        .await
    };
    match timeout_at(deadline, verdict).await {
        Ok(verdict) => verdict,
        Err(_) => Err(timed_out(CheckCode::L7Tout, "the HTTP/2 exchange", limit)),
    }
}

/// The request, its response and the verdict.
async fn judge(
    send: h2::client::SendRequest<Bytes>,
    check: &HttpCheck,
    authority: &str,
) -> Result<Finding, Finding> {
    let mut send = send
        .ready()
        .await
        .map_err(|e| failure(&e, "the HTTP/2 connection"))?;
    let request = request(check, authority)?;
    let (response, _) = send
        .send_request(request, true)
        .map_err(|e| failure(&e, "sending the request"))?;
    let response = response.await.map_err(|e| failure(&e, "the response"))?;
    let status = response.status().as_u16();
    let Some(needle) = judge_status(check, status)? else {
        return Ok(Finding::new(CheckCode::L7Ok, format!("status {status}")));
    };
    let found = search_body(response.into_body(), needle.as_bytes()).await?;
    judge_body(status, needle, found)
}

/// The check's request: `authority` is the configured host, else the check's address.
fn request(check: &HttpCheck, authority: &str) -> Result<Request<()>, Finding> {
    let method = Method::from_bytes(check.method.as_bytes())
        .map_err(|_| invalid(format!("invalid method {:?}", check.method)))?;
    let uri = format!("http://{authority}{}", check.path);
    Request::builder()
        .method(method)
        .uri(uri)
        .header(http::header::USER_AGENT, "tern-check")
        .body(())
        .map_err(|e| invalid(format!("invalid request: {e}")))
}

/// Reads body data until `needle` is found in its first [`MAX_BODY`] bytes (`true`), or the
/// body ends or that much was searched (`false`).
async fn search_body(mut body: h2::RecvStream, needle: &[u8]) -> Result<bool, Finding> {
    let mut kept = Vec::new();
    // Bounded: each DATA frame adds to `kept`, which stops at MAX_BODY.
    while let Some(data) = body.data().await {
        let data = data.map_err(|e| failure(&e, "the response body"))?;
        let _ = body.flow_control().release_capacity(data.len());
        let searched = kept.len();
        let room = MAX_BODY - kept.len();
        kept.extend_from_slice(&data[..data.len().min(room)]);
        if contains_from(&kept, searched, needle) {
            return Ok(true);
        }
        if kept.len() >= MAX_BODY {
            break;
        }
    }
    Ok(false)
}

/// The authority of a check's request: its `host`, else the check's address.
pub(super) fn authority(check: &HttpCheck, address: SocketAddr) -> String {
    check.host.clone().unwrap_or_else(|| address.to_string())
}

/// An HTTP/2 error as a finding: an I/O error is the socket's, a protocol error or a reset
/// is the server's answer not being valid HTTP/2.
fn failure(e: &h2::Error, during: &str) -> Finding {
    if let Some(io) = e.get_io() {
        return Finding::new(CheckCode::SockErr, format!("{during}: {io}"));
    }
    invalid(format!("{during}: {e}"))
}

fn invalid(text: impl Into<String>) -> Finding {
    Finding::new(CheckCode::L7Rsp, text)
}
