//! The `http2_frames` target: a client's bytes after the connection preface, served by tern's
//! HTTP/2 connection in memory (`tern_proxy::http2_fuzz`): tern's frame-header reader (the
//! control-frame budget), the `h2` crate with the settings tern announces (frames, HPACK, flow
//! control and its limits), and the translation of each request into the HTTP/1.1 head the
//! session parses.
//!
//! Properties: nothing panics and the connection ends once the client's bytes do; every
//! translated head is one whole HTTP/1.1 request head to tern-h1, never `Partial` (the session
//! would read the body as head) and never shorter than what was written (a second request
//! hidden in a field: request smuggling through the downgrade), with the stream's method (GET
//! for a WebSocket's extended CONNECT) and its `:path` as the target.
//!
//! Selector (first byte): bit 0 picks small limits (2 streams, 4 KiB header lists, 8 control
//! frames) so the fuzzer reaches tern's refusals, instead of the defaults.

use std::cell::RefCell;

use tern_config::Http2Settings;
use tern_h1::{parse_request, Limits, RequestHead, Status};
use tern_proxy::http2_fuzz::{serve, Served, Translated};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The client connection preface (RFC 9113 §3.4), written before the input.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Turns of the event loop between the last byte written and the end of the client's stream.
const SETTLE_POLLS: usize = 64;

thread_local! {
    /// One event loop per thread, reused for every input.
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

pub fn http2_frames(data: &[u8]) {
    let Some((&sel, frames)) = data.split_first() else {
        return;
    };
    let served = run(settings(sel), frames);
    for stream in &served.streams {
        check_stream(stream);
    }
}

fn settings(sel: u8) -> Http2Settings {
    let defaults = Http2Settings::default();
    if sel & 1 == 0 {
        return defaults;
    }
    Http2Settings {
        max_concurrent_streams: 2,
        max_header_list_size: 4096,
        max_concurrent_reset_streams: 2,
        max_pending_accept_reset_streams: 2,
        max_local_error_reset_streams: 2,
        max_control_frames: 8,
        ..defaults
    }
}

/// Serves `frames` (after the preface) to the end, reading and dropping what tern answers.
fn run(settings: Http2Settings, frames: &[u8]) -> Served {
    RUNTIME.with(|cell| {
        let mut cell = cell.borrow_mut();
        let rt = cell.get_or_insert_with(|| {
            tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap_or_else(|e| panic!("event loop: {e}"))
        });
        let (client, server) = tokio::io::duplex(64 * 1024);
        let (mut client_read, mut client_write) = tokio::io::split(client);
        rt.block_on(async move {
            let write = async {
                // tern may stop reading (GOAWAY): what it does not read is dropped.
                let _ = client_write.write_all(PREFACE).await;
                let _ = client_write.write_all(frames).await;
                // Let tern take up what it read before the end of the stream, which ends the
                // connection before it accepts the streams still queued (an abrupt close).
                for _ in 0..SETTLE_POLLS {
                    tokio::task::yield_now().await;
                }
                let _ = client_write.shutdown().await;
                // Keeping the write half until tern is done: dropping it closes both.
                client_write
            };
            let read = async {
                let mut sink = vec![0u8; 16 * 1024];
                while matches!(client_read.read(&mut sink).await, Ok(n) if n > 0) {}
            };
            let (served, _, _) = tokio::join!(serve(server, &settings), write, read);
            served
        })
    })
}

/// A translated head is one whole request with the stream's method and path.
fn check_stream(stream: &Translated) {
    let Ok(bytes) = &stream.head else {
        return;
    };
    let limits = Limits {
        max_head_size: 1 << 20,
        max_headers: 8192,
        ..Limits::default()
    };
    let mut head = RequestHead::default();
    let Ok(status) = parse_request(bytes, &limits, &mut head) else {
        // Refused by the session (400): stricter, never unsafe.
        return;
    };
    assert_eq!(
        status,
        Status::Complete(bytes.len()),
        "the translated head is not one whole head: {:?}",
        String::from_utf8_lossy(bytes)
    );
    let method = if stream.extended_connect {
        "GET"
    } else {
        stream.method.as_str()
    };
    assert_eq!(head.method_bytes(bytes), method.as_bytes());
    let path = stream.path.as_deref().unwrap_or_default();
    assert_eq!(head.target().get(bytes), path.as_bytes());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn seed(name: &str) -> Vec<u8> {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../fuzz/corpus/http2_frames/"
        );
        std::fs::read(format!("{dir}{name}")).unwrap()
    }

    fn served(name: &str) -> Served {
        let data = seed(name);
        run(settings(data[0]), &data[1..])
    }

    /// The seeds reach the translation: a GET with split cookies, a POST without a length
    /// (chunked), a WebSocket.
    #[test]
    fn the_seeds_are_served_and_translated() {
        let get = served("get");
        assert!(get.opened);
        let head = get.streams[0].head.as_ref().unwrap();
        let text = String::from_utf8_lossy(head);
        assert!(
            text.starts_with("GET /?a=b HTTP/1.1\r\nhost: localhost\r\n"),
            "{text}"
        );
        assert!(text.contains("cookie: a=1; b=2\r\n"), "{text}");

        let post = served("post-chunked");
        let text = String::from_utf8_lossy(post.streams[0].head.as_ref().unwrap()).into_owned();
        assert!(text.contains("transfer-encoding: chunked\r\n"), "{text}");

        let ws = served("websocket");
        assert!(ws.streams[0].extended_connect);
        let text = String::from_utf8_lossy(ws.streams[0].head.as_ref().unwrap()).into_owned();
        assert!(text.starts_with("GET /chat HTTP/1.1\r\n"), "{text}");
    }

    #[test]
    fn a_control_frame_flood_is_calmed_under_small_limits() {
        let mut data = vec![1u8];
        data.extend_from_slice(&[0, 0, 0, 4, 0, 0, 0, 0, 0]);
        for _ in 0..50 {
            data.extend_from_slice(&[0, 0, 8, 6, 0, 0, 0, 0, 0]);
            data.extend_from_slice(b"pingping");
        }
        let served = run(settings(1), &data[1..]);
        assert!(served.opened);
        assert!(served.calmed);
    }

    #[test]
    fn garbage_after_the_preface_ends_the_connection() {
        let served = run(settings(0), b"\xff\xff\xff\xff garbage");
        assert!(served.streams.is_empty());
        http2_frames(b"");
        http2_frames(b"\x00");
    }
}
