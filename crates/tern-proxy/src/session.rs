//! One client connection (a session): TLS handshake, then the HTTP/1.1 loop until it ends.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use rustls::{HandshakeKind, ServerConfig};
use tokio::net::TcpStream;
use tracing::debug;

use crate::conn;
use crate::stats::bump;
use crate::tls_io::TlsStream;
use crate::worker::{Permits, Worker};

/// Serves one accepted connection to its end.
pub(crate) async fn serve(
    w: Rc<Worker>,
    frontend: usize,
    stream: TcpStream,
    peer: SocketAddr,
    tls: Option<Arc<ServerConfig>>,
    _permits: Permits,
) {
    let _counted = w.session_started();
    // TCP_NODELAY is inherited from the listening socket (see listener.rs).
    let Some(config) = tls else {
        return conn::serve(w, frontend, stream, peer, false).await;
    };
    let fe = &w.shared.snapshot.config.frontends[frontend];
    let counters = &w.stats.frontends[frontend];
    let handshake = TlsStream::accept(stream, config);
    match tokio::time::timeout(fe.timeouts.handshake, handshake).await {
        Err(_) => {
            bump(&counters.tls_timeouts);
            debug!(%peer, "TLS handshake timed out");
        }
        Ok(Err(e)) => {
            bump(&counters.tls_failures);
            debug!(%peer, error = %e, "TLS handshake failed");
        }
        Ok(Ok(tls)) => {
            match tls.connection().handshake_kind() {
                Some(HandshakeKind::Resumed) => bump(&counters.tls_resumed),
                _ => bump(&counters.tls_full),
            }
            conn::serve(Rc::clone(&w), frontend, tls, peer, true).await;
        }
    }
}
