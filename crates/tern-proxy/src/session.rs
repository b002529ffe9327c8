//! One client connection (a session): TLS handshake (`handshake.rs`), then the HTTP/1.1 loop
//! until it ends.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use rustls::ServerConfig;
use tokio::net::TcpStream;

use crate::worker::{Permits, Worker};
use crate::{conn, handshake};

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
    if let Some(tls) = handshake::run(&w, frontend, stream, peer, config).await {
        conn::serve(Rc::clone(&w), frontend, tls, peer, true).await;
    }
}
