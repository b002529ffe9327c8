//! One HTTP/2 client connection served in memory, for the `http2_frames` fuzz target
//! (`crates/tern-fuzz/src/http2.rs`): the client's bytes go through the same layers as on a
//! real connection, without a worker, a server or a socket.
//!
//! What runs is what faces a client: tern's own frame reader (`flood.rs`, the control-frame
//! budget, which reads every frame header as it passes), the `h2` crate (frames, HPACK, flow
//! control, its limits) built with the settings tern announces for a frontend, and the
//! translation of each request into the HTTP/1.1 head the session then parses (`request.rs`,
//! `connect.rs`). Each stream is answered at once with an empty 200 instead of being proxied;
//! over budget, the connection ends with GOAWAY as `http2.rs` ends it.
//!
//! Public (hidden from the docs) only so that the fuzz crate can reach it; nothing else calls
//! it.

use std::future::poll_fn;
use std::rc::Rc;

use bytes::Bytes;
use tern_config::Http2Settings;
use tokio::io::{AsyncRead, AsyncWrite};

use super::flood::{ControlBudget, FloodGuard};
use super::request::write_head;

/// Streams answered per connection at most: the rest of the input is not read.
const MAX_STREAMS: usize = 1000;

/// A request as the client sent it and as tern translated it.
#[derive(Debug)]
pub struct Translated {
    /// `:method`.
    pub method: String,
    /// `:path` (with the query).
    pub path: Option<String>,
    /// Whether it was an extended CONNECT (`:protocol`, a WebSocket).
    pub extended_connect: bool,
    /// The HTTP/1.1 head the session would parse, or the status of the refusal.
    pub head: Result<Vec<u8>, u16>,
}

/// What the connection did.
#[derive(Debug, Default)]
pub struct Served {
    /// Whether the client's preface and SETTINGS were accepted.
    pub opened: bool,
    /// Every stream accepted, in order.
    pub streams: Vec<Translated>,
    /// Whether the client went over its control-frame budget (GOAWAY ENHANCE_YOUR_CALM).
    pub calmed: bool,
}

/// Serves the client connection on `io` (the client's side writes the preface and frames)
/// with `settings` until it ends.
pub async fn serve<T>(io: T, settings: &Http2Settings) -> Served
where
    T: AsyncRead + AsyncWrite + Unpin,
{
    let mut served = Served::default();
    let budget = ControlBudget::new(settings.max_control_frames as u64);
    let io = FloodGuard::new(io, Rc::clone(&budget));
    let Ok(mut conn) = super::builder(settings).handshake::<_, Bytes>(io).await else {
        return served;
    };
    served.opened = true;
    let mut calmed = false;
    loop {
        let next = poll_fn(|cx| {
            if !calmed && budget.poll_exceeded(cx) {
                conn.abrupt_shutdown(h2::Reason::ENHANCE_YOUR_CALM);
                calmed = true;
            }
            conn.poll_accept(cx)
        })
        .await;
        let Some(Ok((request, mut respond))) = next else {
            break;
        };
        let (parts, body) = request.into_parts();
        let mut head = Vec::new();
        let translated = write_head(&parts, body.is_end_stream(), &mut head);
        served.streams.push(Translated {
            method: parts.method.as_str().to_owned(),
            path: parts.uri.path_and_query().map(|p| p.as_str().to_owned()),
            extended_connect: parts.extensions.get::<h2::ext::Protocol>().is_some(),
            head: translated.map(|_| head).map_err(|refused| refused.status()),
        });
        let _ = respond.send_response(http::Response::new(()), true);
        if served.streams.len() >= MAX_STREAMS {
            break;
        }
    }
    served.calmed = calmed;
    served
}
