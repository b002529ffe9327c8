//! A connection's TLS handshake on either engine, timed and counted the same way: the rustls
//! one (with the session it may have offered, `--resume`) and the OpenSSL one (always full),
//! and the negotiated parameters the report shows.

use std::time::Instant;

use tokio::net::TcpStream;
use tokio::time::timeout_at;

use super::tls_io::TlsConn;
use super::{failed, Ctx};
use crate::ossl::{OsslSetup, OsslStream};
use crate::stats::{ErrorKind, TlsParams};
use crate::tls::ThreadTls;

pub(super) async fn handshake(
    ctx: &Ctx,
    tls: &ThreadTls,
    name: rustls::pki_types::ServerName<'static>,
    tcp: TcpStream,
    connected: Instant,
    limit: Instant,
) -> Option<TlsConn> {
    let (config, store) = tls.next();
    let before = store.map(|s| s.offered());
    // Building the connection writes the ClientHello, taking a stored session if offered.
    let Ok(conn) = rustls::ClientConnection::new(config, name) else {
        return failed(ctx, ErrorKind::Tls);
    };
    let offered = store.is_some_and(|s| Some(s.offered()) > before);
    let stream = match timeout_at(limit.into(), TlsConn::handshake(tcp, conn)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(_)) => return failed(ctx, ErrorKind::Tls),
        Err(_) => return failed(ctx, ErrorKind::Timeout),
    };
    let conn = stream.rustls();
    let done = Handshaked {
        kind: conn.handshake_kind(),
        offered,
        connected,
    };
    done.record(ctx, || tls_params(conn)).then_some(stream)
}

/// A full handshake by the OpenSSL engine, timed and counted like a rustls one.
pub(super) async fn ossl_handshake(
    ctx: &Ctx,
    setup: &OsslSetup,
    tcp: TcpStream,
    connected: Instant,
    limit: Instant,
) -> Option<OsslStream> {
    let stream = match timeout_at(limit.into(), OsslStream::connect(setup, tcp)).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(_)) => return failed(ctx, ErrorKind::Tls),
        Err(_) => return failed(ctx, ErrorKind::Timeout),
    };
    // OpenSSL does not say whether a HelloRetryRequest happened: counted as plain full.
    let kind = match stream.resumed() {
        true => rustls::HandshakeKind::Resumed,
        false => rustls::HandshakeKind::Full,
    };
    let done = Handshaked {
        kind: Some(kind),
        offered: false,
        connected,
    };
    done.record(ctx, || stream.params()).then_some(stream)
}

/// A handshake that completed, to be counted.
struct Handshaked {
    /// Full, full with HelloRetryRequest, or resumed, as the engine says.
    kind: Option<rustls::HandshakeKind>,
    /// Whether it offered a stored session.
    offered: bool,
    /// When the TCP connection was up (the handshake's start).
    connected: Instant,
}

impl Handshaked {
    /// Counts the handshake (and its parameters, if the first of the window); false if the run
    /// must abort because it resumed although resumption is off.
    fn record(self, ctx: &Ctx, params: impl FnOnce() -> TlsParams) -> bool {
        let now = Instant::now();
        let mut stats = ctx.stats.borrow_mut();
        if stats.tls.is_none() && stats.in_window(now) {
            stats.tls = Some(params());
        }
        if self.offered {
            stats.resume_attempted(now);
        }
        let full = stats.handshaked(self.kind, now - self.connected, now);
        if !full && !ctx.plan.resumption {
            ctx.plan.control.abort_resumed();
            return false;
        }
        true
    }
}

fn tls_params(conn: &rustls::ClientConnection) -> TlsParams {
    let name = |s: Option<String>| s.unwrap_or_else(|| "unknown".to_owned());
    let suite = name(
        conn.negotiated_cipher_suite()
            .map(|s| format!("{:?}", s.suite())),
    );
    let group = name(
        conn.negotiated_key_exchange_group()
            .map(|g| format!("{:?}", g.name())),
    );
    TlsParams {
        engine: "rustls",
        version: name(conn.protocol_version().map(|v| format!("{v:?}"))),
        key_exchange: rustls_key_exchange(&group).to_owned(),
        suite,
        group,
        alpn: conn
            .alpn_protocol()
            .map(|p| String::from_utf8_lossy(p).into_owned()),
    }
}

/// rustls makes only (EC)DHE, ML-KEM and hybrid key exchanges; the group says which.
fn rustls_key_exchange(group: &str) -> &'static str {
    let upper = group.to_ascii_uppercase();
    match (upper.contains("MLKEM"), upper == "MLKEM768") {
        (true, true) => "ML-KEM",
        (true, false) => "ECDHE+ML-KEM",
        (false, _) if upper.starts_with("FFDHE") => "DHE",
        (false, _) => "ECDHE",
    }
}
