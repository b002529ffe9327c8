//! The first bytes of a plain connection, read before routing it: TLS passthrough by SNI
//! (`tcp_request.inspect_delay`, HAProxy's `tcp-request inspect-delay`).
//!
//! The client's bytes are read into the buffer the relay then starts from, so nothing is
//! consumed: the ClientHello reaches the server first, byte for byte, and the TLS session is
//! the client's and the server's alone. Reading stops as soon as the bytes can be judged
//! ([`read_hello`]: a whole first handshake message, or clearly not TLS), at end of stream, on
//! an error, once [`MAX_HELLO`] bytes are held, or when the inspect delay expires; whatever
//! was read is relayed either way. Without a ClientHello the samples do not exist, and the
//! content rules and `use_backend` decide on that (as HAProxy does when the delay expires).

use std::future::poll_fn;
use std::time::Duration;

use tracing::debug;

use crate::buffer::Buffer;
use crate::listen::client::ClientStream;
use crate::tls::client_hello::{read_hello, Hello, MAX_HELLO};

/// What the first bytes said.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Inspected {
    /// Type of the first handshake message (`req.ssl_hello_type`).
    pub hello_type: Option<u8>,
    /// Host name of the ClientHello (`req.ssl_sni`).
    pub sni: Option<String>,
}

/// Reads the client's first bytes into `buf` until they can be judged, for at most `delay`.
pub(super) async fn inspect<S: ClientStream>(
    io: &mut S,
    buf: &mut Buffer,
    delay: Duration,
) -> Inspected {
    let read = async {
        loop {
            match read_hello(buf.data()) {
                Hello::Incomplete if buf.data().len() < MAX_HELLO => {}
                Hello::Complete { kind, sni } => {
                    return Inspected {
                        hello_type: Some(kind),
                        sni,
                    }
                }
                _ => return Inspected::default(),
            }
            match poll_fn(|cx| buf.poll_read_from(&mut *io, cx)).await {
                Ok(0) => return Inspected::default(),
                Ok(_) => {}
                Err(error) => {
                    debug!(%error, "reading a ClientHello");
                    return Inspected::default();
                }
            }
        }
    };
    // The bytes read before the delay expired stay in `buf`, to be relayed.
    tokio::time::timeout(delay, read).await.unwrap_or_else(|_| {
        debug!("no ClientHello within the inspect delay");
        Inspected::default()
    })
}
