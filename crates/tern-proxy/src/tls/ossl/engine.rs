//! The OpenSSL engine's handshake under the bind's `handshake` timeout, with the same
//! admission (handshake rate caps) and counting (counters, access-log fields) as
//! `tls/handshake.rs`, and the protocols served over its stream (`stream.rs`).
//!
//! OpenSSL writes each `SSL_write` as its own record and system call, where tern's rustls
//! stream gathers a head and its body until the flush: the OpenSSL engine is for legacy
//! clients, and that optimisation stays with the default engine for HTTP/1.1 for now. HTTP/2
//! (ALPN `h2`) gets a write buffer in front of OpenSSL, as h2c does in front of the socket.
//!
//! HTTP/2 is served whatever suite was negotiated, CBC ones included: RFC 9113 §9.2.2 lets a
//! server refuse TLS 1.2 suites without AEAD or ephemeral key exchange (INADEQUATE_SECURITY)
//! but does not require it, HAProxy and nginx serve them, and a client that offers `h2` with
//! such a suite is one that accepts it. An operator who wants HTTP/1.1 only on a legacy bind
//! leaves `h2` out of its `alpn`.

use std::net::SocketAddr;
use std::pin::Pin;
use std::rc::Rc;
use std::time::Duration;

use openssl::ssl::{ErrorCode, SslRef};
use rustls::{HandshakeKind, NamedGroup};
use tokio::io::BufWriter;
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tokio_openssl::SslStream;
use tracing::debug;

use super::stream::OsslStream;
use super::turns::Turns;
use super::{negotiated, OsslBind};
use crate::access_log::Tracker;
use crate::exchange::proxy_header::ClientTls;
use crate::http1::conn;
use crate::http2;
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;
use crate::profiling::{Kind, Profiled};
use crate::stats::bump;
use crate::tls::handshake::{self, Admit, HandshakeEnd, Handshakes};
use crate::tls::stats::{Failure, Negotiated};
use crate::track::Tracking;
use crate::worker::Worker;

/// What an HTTP/2 connection's writes gather before they go to OpenSSL (one record of at
/// most 16 KiB).
const H2_WRITE_BUFFER: usize = 16 * 1024;

/// Serves a connection handshaken on an OpenSSL bind (`engine::handshake`) to its end with
/// the frontend's protocol: the TCP relay, HTTP/2 when ALPN chose `h2`, else HTTP/1.1.
pub(crate) async fn serve(
    w: Rc<Worker>,
    frontend: usize,
    stream: OsslStream,
    addrs: Addrs,
    log: Option<Box<Tracker>>,
    track: Tracking,
) {
    if w.shared.frontend(frontend).mode == tern_config::ProxyMode::Tcp {
        let _track = track;
        Box::pin(crate::tcp::serve(w, frontend, stream, addrs, true, log)).await;
        return;
    }
    if stream.0.ssl().selected_alpn_protocol() == Some(b"h2") {
        return serve_h2(w, frontend, stream, addrs, log, track).await;
    }
    let start = conn::Start::now(true);
    let proxy = conn::serve(w, frontend, stream, addrs, start, log, track);
    Box::pin(Profiled::new(Kind::Request, proxy)).await;
}

/// Serves a connection on which ALPN chose `h2` with the HTTP/2 code of rustls binds.
///
/// OpenSSL makes each `SSL_write` a record and a system call: a buffer in front of it makes
/// the frames of one turn one record and one write, as tern's rustls stream gathers them
/// (the same arrangement as h2c, `listen/session.rs`).
async fn serve_h2(
    w: Rc<Worker>,
    frontend: usize,
    stream: OsslStream,
    addrs: Addrs,
    log: Option<Box<Tracker>>,
    track: Tracking,
) {
    let local = addrs.local().or_else(|| stream.tcp().local_addr().ok());
    let sni = stream.sni().map(str::to_owned);
    let cert = stream.1.clone();
    // The connection's own SNI and ALPN (`h2`) are added per stream.
    let session = stream.client_tls().map(|t| ClientTls {
        sni: None,
        alpn: None,
        ..t
    });
    let info = http2::tls_conn_info(&addrs, local, Some((sni, cert, session)));
    let buffered = BufWriter::with_capacity(H2_WRITE_BUFFER, http2::Lingering(stream));
    let io = http2::Coalesce::new(buffered);
    let h2 = http2::serve(w, frontend, io, info, log, track);
    Box::pin(Profiled::new(Kind::Http2, h2)).await;
}

/// Runs the handshake and counts it, as `tls/handshake.rs` `run` does for rustls: admission
/// first (the same ClientHello peek and caps, `handshake::admission`), then OpenSSL, handed
/// the bytes admission read.
pub(crate) async fn handshake(
    w: Handshakes<'_>,
    frontend: usize,
    mut tcp: TcpStream,
    peer: SocketAddr,
    bind: &OsslBind,
) -> Result<OsslStream, HandshakeEnd> {
    let accepted = Instant::now();
    let deadline = accepted + w.shared.frontend(frontend).timeouts.handshake;
    let counters = &w.stats.frontends[frontend];
    let tls = &w.stats.tls[frontend];
    let fail = |failure: Failure| {
        bump(&counters.tls_failures);
        tls.failed(failure);
        Err(HandshakeEnd::Failed(failure))
    };
    let mut admit = handshake::admission(&w, frontend, &mut tcp, peer, deadline).await?;
    let received = std::mem::take(&mut admit.received);
    let Ok(mut stream) = bind
        .ssl()
        .and_then(|ssl| SslStream::new(ssl, Turns::new(tcp, received)))
    else {
        return fail(Failure::Other);
    };
    // The key exchange's group is read while the handshake waits for the client: OpenSSL
    // frees a TLS 1.2 server's ephemeral key once the client's share is processed (`Turns`
    // makes the handshake yield after each of its writes).
    let mut group = None;
    let accept = std::future::poll_fn(|cx| {
        let polled = Pin::new(&mut stream).poll_accept(cx);
        if polled.is_pending() && group.is_none() {
            group = negotiated::group(stream.ssl());
        }
        polled
    });
    match timeout_at(deadline, accept).await {
        Err(_) => {
            bump(&counters.tls_timeouts);
            tls.failed(Failure::Timeout);
            debug!(%peer, "TLS handshake timed out (OpenSSL engine)");
            return Err(HandshakeEnd::Failed(Failure::Timeout));
        }
        Ok(Err(e)) => {
            debug!(%peer, error = %e, "TLS handshake failed (OpenSSL engine)");
            return fail(client_cert_failure(&e, stream.ssl()).unwrap_or_else(|| classify(&e)));
        }
        Ok(Ok(())) => {}
    }
    stream.get_mut().established();
    let latency = accepted.elapsed().saturating_sub(admit.waited);
    count(&w, frontend, peer, &stream, group, &admit, latency);
    let cert = stream
        .ssl()
        .peer_certificate()
        .and_then(|c| c.to_der().ok());
    Ok(OsslStream(stream, cert))
}

/// Counts a completed handshake: full or resumed (charging the caps for a resumption offer
/// that turned out full), and what it negotiated (`group`: read while it ran, see above).
fn count(
    w: &Handshakes<'_>,
    frontend: usize,
    peer: SocketAddr,
    stream: &SslStream<Turns>,
    group: Option<NamedGroup>,
    admit: &Admit,
    latency: Duration,
) {
    let ssl = stream.ssl();
    let resumed = ssl.session_reused();
    handshake::count_kind(w, frontend, peer, resumed, admit);
    let kind = if resumed {
        HandshakeKind::Resumed
    } else {
        HandshakeKind::Full
    };
    w.stats.tls[frontend].completed(&Negotiated {
        kind: Some(kind),
        version: negotiated::version(ssl),
        suite: negotiated::suite(ssl),
        // A TLS 1.3 server keeps its key to the end; a resumption without one has none.
        group: group.or_else(|| negotiated::group(ssl)),
        cert: negotiated::cert(ssl),
        latency,
    });
}

/// `X509_V_ERR_*` codes (x509_vfy.h, unchanged since OpenSSL 0.9.8; the bindings name only
/// `X509_V_OK`) that sort a refused client certificate.
const V_ERR_UNABLE_TO_GET_ISSUER_CERT: i32 = 2;
const V_ERR_CERT_HAS_EXPIRED: i32 = 10;
const V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT: i32 = 18;
const V_ERR_SELF_SIGNED_CERT_IN_CHAIN: i32 = 19;
const V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY: i32 = 20;
const V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE: i32 = 21;
const V_ERR_CERT_REVOKED: i32 = 23;

/// A handshake refused over the client's certificate (`client_auth`), by the reasons the
/// rustls engine counts: none sent, or the verification's result.
fn client_cert_failure(e: &openssl::ssl::Error, ssl: &SslRef) -> Option<Failure> {
    let reason = e.ssl_error().map(ToString::to_string).unwrap_or_default();
    if reason.contains("peer did not return a certificate") {
        return Some(Failure::ClientNoCert);
    }
    if !reason.contains("certificate verify failed") {
        return None;
    }
    Some(match ssl.verify_result().as_raw() {
        V_ERR_CERT_HAS_EXPIRED => Failure::ClientExpired,
        V_ERR_CERT_REVOKED => Failure::ClientRevoked,
        V_ERR_UNABLE_TO_GET_ISSUER_CERT
        | V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY
        | V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT
        | V_ERR_SELF_SIGNED_CERT_IN_CHAIN
        | V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE => Failure::ClientUnknownCa,
        _ => Failure::ClientCertOther,
    })
}

/// Sorts an OpenSSL handshake error into the counters' failure reasons, by OpenSSL's reason
/// strings (the bindings expose no reason codes).
fn classify(e: &openssl::ssl::Error) -> Failure {
    if e.code() != ErrorCode::SSL {
        return Failure::Other;
    }
    let reason = e.ssl_error().map(ToString::to_string).unwrap_or_default();
    let has = |needle: &str| reason.contains(needle);
    if has("no shared cipher") || has("no suitable") || has("insufficient security") {
        Failure::NoSharedCipher
    } else if has("unsupported protocol") || has("version too low") || has("protocol version") {
        Failure::Version
    } else if has("unrecognized name") || has("callback failed") {
        Failure::UnknownSni
    } else if has("bad certificate") || has("unknown ca") || has("certificate unknown") {
        Failure::BadCertificate
    } else if has("http request") || has("wrong version number") || has("record") {
        Failure::Protocol
    } else {
        Failure::Other
    }
}
