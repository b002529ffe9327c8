//! One client connection (a session): TLS handshake (`tls/handshake.rs`), then the HTTP/1.1 loop
//! until it ends. With handshake offload, the handshake happens on the offload thread and the
//! worker takes the session up from [`resume`].

use std::rc::Rc;

use crate::access_log::Tracker;
use crate::http1::conn;
use crate::listen::accept::{Accepted, Acceptor};
use crate::profiling::{Kind, Profiled};
use crate::tls::handshake;
use crate::tls::offload::Handshaken;
use crate::worker::Worker;

/// Serves one accepted connection to its end.
pub(crate) async fn serve(w: Rc<Worker>, accepted: Accepted) {
    let Accepted {
        frontend,
        stream,
        peer,
        tls,
        permits: _permits,
    } = accepted;
    let _counted = w.session_started();
    // Follows the connection for the access log, when it is on for this frontend.
    let mut log = Tracker::start(&w.shared, frontend, peer);
    // TCP_NODELAY is inherited from the listening socket (see listener.rs).
    let Some(config) = tls else {
        let proxy = conn::serve(w, frontend, stream, peer, false, log);
        return Profiled::new(Kind::Request, proxy).await;
    };
    let Some(tls) = handshake::session(
        w.handshakes(),
        w.life(),
        frontend,
        (stream, peer),
        config,
        &mut log,
    )
    .await
    else {
        return;
    };
    let proxy = conn::serve(Rc::clone(&w), frontend, tls, peer, true, log);
    Profiled::new(Kind::Request, proxy).await;
}

/// Serves a connection the offload thread accepted and handshook, to its end.
pub(crate) async fn resume(w: Rc<Worker>, done: Handshaken) {
    let Handshaken {
        frontend,
        peer,
        tls,
        permits: _permits,
        log,
    } = done;
    let _counted = w.session_started();
    let tls = match tls.attach() {
        Ok(tls) => tls,
        Err(e) => {
            // The worker's event loop could not take the socket (out of memory or epoll
            // watches), as an `accept` can fail: the client sees the connection close before
            // any response.
            tracing::warn!(%peer, error = %e, "cannot take over a handshaken connection");
            return;
        }
    };
    let proxy = conn::serve(Rc::clone(&w), frontend, tls, peer, true, log);
    Profiled::new(Kind::Request, proxy).await;
}
