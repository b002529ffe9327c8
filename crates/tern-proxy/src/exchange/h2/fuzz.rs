//! One request to an HTTP/2 server served in memory, for the `h2_response` fuzz target
//! (`crates/tern-fuzz/src/h2_response.rs`): what a server sends back goes through the layers
//! it meets on a real connection to a server with `proto = "h2"`, without a worker, a pool or
//! a socket.
//!
//! What runs: the `h2` crate as a client with the settings tern announces to servers
//! (`session.rs`), the translation of the response HEADERS into the HTTP/1.1 head the relay
//! parses (`response.rs`), and the HTTP/1.1 bytes of the body and trailers as the relay reads
//! them (`http2::RequestSource`, shared with the client side). The caller checks those bytes
//! with tern-h1.
//!
//! Public (hidden from the docs) only so that the fuzz crate can reach it; nothing else calls
//! it.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::task::Poll;

use bytes::Bytes;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::response::write_head;
use super::session::builder;
use crate::http2::RequestSource;

/// The limits the relay reads a server's HTTP/1.1 response head under.
pub const LIMITS: tern_h1::Limits = crate::exchange::upstream::RESPONSE_LIMITS;

/// Bytes of the response kept at most: the rest is not read.
const MAX_KEPT: usize = 1 << 20;

/// What came back for the request.
#[derive(Debug, Default)]
pub struct Fetched {
    /// The server's preface and SETTINGS were accepted.
    pub opened: bool,
    /// The status of the response HEADERS, once they came.
    pub status: Option<u16>,
    /// The HTTP/1.1 response the relay reads: head, body, trailers.
    pub bytes: Vec<u8>,
    /// Every byte of the response was read, and it ended without error.
    pub complete: bool,
}

/// Sends a GET (a HEAD when `head_only`) on the HTTP/2 connection `io` (whose other side is
/// the server) and reads the response as the relay does, until it ends or fails.
pub async fn fetch<T>(io: T, head_only: bool) -> Fetched
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut fetched = Fetched::default();
    let Ok((send, connection)) = builder().handshake::<_, Bytes>(io).await else {
        return fetched;
    };
    fetched.opened = true;
    let mut connection = pin!(connection);
    let mut running = true;
    {
        let mut exchange = pin!(exchange(send, head_only, &mut fetched));
        // The connection is polled beside the request until it ends; the response's
        // buffered frames stay readable after that.
        poll_fn(|cx| {
            if let Poll::Ready(()) = exchange.as_mut().poll(cx) {
                return Poll::Ready(());
            }
            if running && connection.as_mut().poll(cx).is_ready() {
                running = false;
                return match exchange.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(()),
                    Poll::Pending => Poll::Pending,
                };
            }
            Poll::Pending
        })
        .await;
    }
    fetched
}

async fn exchange(send: h2::client::SendRequest<Bytes>, head_only: bool, out: &mut Fetched) {
    let Ok(mut send) = send.ready().await else {
        return;
    };
    let method = if head_only {
        http::Method::HEAD
    } else {
        http::Method::GET
    };
    let Ok(request) = http::Request::builder()
        .method(method)
        .uri("http://origin.test/")
        .body(())
    else {
        return;
    };
    let Ok((response, _)) = send.send_request(request, true) else {
        return;
    };
    let Ok(response) = response.await else {
        return;
    };
    let (parts, body) = response.into_parts();
    out.status = Some(parts.status.as_u16());
    let mut head = Vec::with_capacity(256);
    let framing = write_head(&parts, body.is_end_stream(), head_only, &mut head);
    let mut source = RequestSource::new(head, framing, body);
    let mut chunk = [0u8; 4096];
    while out.bytes.len() < MAX_KEPT {
        let mut buf = ReadBuf::new(&mut chunk);
        if poll_fn(|cx| source.poll_read(cx, &mut buf)).await.is_err() {
            return;
        }
        if buf.filled().is_empty() {
            out.complete = source.is_done();
            return;
        }
        out.bytes.extend_from_slice(buf.filled());
    }
}
