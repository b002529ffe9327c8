//! One client connection (a session): TLS handshake (`handshake.rs`), then the HTTP/1.1 loop
//! until it ends.

use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::Arc;

use rustls::ServerConfig;
use tokio::net::TcpStream;

use crate::access_log::Tracker;
use crate::profiling::{Kind, Profiled};
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
    // Follows the connection for the access log, when it is on for this frontend.
    let mut log = Tracker::start(&w, frontend, peer);
    // TCP_NODELAY is inherited from the listening socket (see listener.rs).
    let Some(config) = tls else {
        let proxy = conn::serve(w, frontend, stream, peer, false, log);
        return Profiled::new(Kind::Request, proxy).await;
    };
    let handshake = handshake::run(&w, frontend, stream, peer, config);
    match Profiled::new(Kind::TlsHandshake, handshake).await {
        Ok(tls) => {
            if let Some(log) = log.as_deref_mut() {
                log.handshaken(tls.connection());
            }
            let proxy = conn::serve(Rc::clone(&w), frontend, tls, peer, true, log);
            Profiled::new(Kind::Request, proxy).await;
        }
        Err(why) => {
            if let Some(log) = log {
                log.handshake_failed(&w, why);
            }
        }
    }
}
