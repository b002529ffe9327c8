//! The TLS handshake of a session on the rustls engine: admission (when a cap is configured),
//! the handshake under the bind's `handshake` timeout, and its counting. Admission and the
//! count of full and resumed handshakes serve the OpenSSL engine too (`ossl/engine.rs`), which
//! peeks the same ClientHello.
//!
//! One deadline, set at accept, covers reading the ClientHello, waiting for the rate cap and the
//! handshake itself, so a connection never lives longer than `handshake` before it is served or
//! closed, however it spent the time. What each phase's expiry is counted as: reading the
//! ClientHello or handshaking → a handshake timeout (`tls_timeouts`, `fail_timeout`); waiting for
//! the rate cap → `rate_expired` (the client did nothing wrong; tern chose not to serve it).

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use rustls::{CertificateError, Error, HandshakeKind, PeerIncompatible, ServerConfig};
use tokio::io::ReadBuf;
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tracing::debug;

use crate::stats::{bump, WorkerStats};
use crate::tls::admission::{Admission, Admitted};
use crate::tls::client_hello::{self, Peek};
use crate::tls::stats::{AdmissionEvent, Failure, Negotiated};
use crate::tls::stream::TlsStream;
use crate::worker::Shared;

/// What a thread running handshakes (a worker, or its offload thread) provides them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Handshakes<'a> {
    pub shared: &'a Shared,
    pub stats: &'a WorkerStats,
    /// This thread's handshake rate caps, if any are configured.
    pub admission: Option<&'a Admission>,
}

/// Why a handshake gave no connection (for the access log; counted and logged here).
#[derive(Debug, Clone, Copy)]
pub(crate) enum HandshakeEnd {
    Failed(Failure),
    /// Admission turned the connection away (`rate_expired`, `source_refused`,
    /// `rate_abandoned`).
    Refused(AdmissionEvent),
}

/// What admission decided for one connection.
#[derive(Debug, Default)]
pub(crate) struct Admit {
    /// The bytes read to judge the ClientHello, handed to the engine.
    pub received: Vec<u8>,
    /// The ClientHello offered resumption and was let through without a token.
    resumption_offer: bool,
    /// Time spent waiting for the rate cap (not part of the handshake's latency).
    pub waited: std::time::Duration,
}

/// Runs the handshake of an accepted connection; an error if it failed or was refused (counted
/// and logged here).
pub(crate) async fn run(
    w: Handshakes<'_>,
    frontend: usize,
    mut tcp: TcpStream,
    peer: SocketAddr,
    config: Arc<ServerConfig>,
) -> Result<TlsStream, HandshakeEnd> {
    let accepted = Instant::now();
    let deadline = accepted + w.shared.frontend(frontend).timeouts.handshake;
    let counters = &w.stats.frontends[frontend];
    let tls = &w.stats.tls[frontend];
    let mut admit = admission(&w, frontend, &mut tcp, peer, deadline).await?;
    let mut received = std::mem::take(&mut admit.received);
    let mut prepared = None;
    if w.shared.global().crypto_batch.enabled {
        prepared = batched::prepare(
            &w,
            frontend,
            &mut tcp,
            peer,
            deadline,
            &config,
            &mut received,
        )
        .await?;
    }
    let offered = prepared.is_some();
    let batch_ecdsa = w.shared.global().crypto_batch.enabled;
    let mut handshake = std::pin::pin!(TlsStream::accept(tcp, config, &received));
    // The batch's result is offered to rustls' key exchange at each step of the handshake;
    // with batching on, a P-256 signature takes a nonce pair computed in a batch.
    let handshake = std::future::poll_fn(|cx| {
        let mut step =
            || tern_tls::with_prepared_x25519(&mut prepared, || handshake.as_mut().poll(cx));
        if !batch_ecdsa {
            return step();
        }
        let polled = tern_tls::with_batched_ecdsa(step);
        w.stats
            .crypto_batch
            .add_ecdsa(tern_tls::take_ecdsa_counts());
        polled
    });
    let done = timeout_at(deadline, handshake).await;
    if offered && prepared.is_some() {
        w.stats.crypto_batch.unused();
    }
    let stream = match done {
        Err(_) => {
            bump(&counters.tls_timeouts);
            tls.failed(Failure::Timeout);
            debug!(%peer, "TLS handshake timed out");
            return Err(HandshakeEnd::Failed(Failure::Timeout));
        }
        Ok(Err(e)) => {
            bump(&counters.tls_failures);
            let failure = classify(&e);
            tls.failed(failure);
            debug!(%peer, error = %e, "TLS handshake failed");
            return Err(HandshakeEnd::Failed(failure));
        }
        Ok(Ok(stream)) => stream,
    };
    let conn = stream.connection();
    let kind = conn.handshake_kind();
    count_kind(
        &w,
        frontend,
        peer,
        kind == Some(HandshakeKind::Resumed),
        &admit,
    );
    tls.completed(&Negotiated {
        kind,
        version: conn.protocol_version(),
        suite: conn.negotiated_cipher_suite().map(|s| s.suite()),
        group: conn.negotiated_key_exchange_group().map(|g| g.name()),
        cert: stream.cert_algorithm(),
        latency: accepted.elapsed().saturating_sub(admit.waited),
    });
    Ok(stream)
}

/// Admission of a connection about to handshake on `frontend`, on either engine: with a cap
/// configured, the ClientHello read (its bytes are for the engine) and the caps applied;
/// without, nothing read.
pub(crate) async fn admission(
    w: &Handshakes<'_>,
    frontend: usize,
    tcp: &mut TcpStream,
    peer: SocketAddr,
    deadline: Instant,
) -> Result<Admit, HandshakeEnd> {
    match w.admission {
        None => Ok(Admit::default()),
        Some(adm) => admit(adm, w, frontend, tcp, peer, deadline).await,
    }
}

/// Counts a completed handshake as full or resumed, and charges the caps for a resumption
/// offer that turned out full (`admission.rs`).
pub(crate) fn count_kind(
    w: &Handshakes<'_>,
    frontend: usize,
    peer: SocketAddr,
    resumed: bool,
    admit: &Admit,
) {
    let counters = &w.stats.frontends[frontend];
    if resumed {
        bump(&counters.tls_resumed);
        return;
    }
    bump(&counters.tls_full);
    if admit.resumption_offer {
        if let Some(adm) = w.admission {
            adm.charge_full(peer.ip());
        }
        w.stats.tls[frontend].admission(AdmissionEvent::ResumeFallback);
    }
}

/// Reads the ClientHello into `received` within `deadline`; a timeout or a read error is
/// counted and logged as a failed handshake.
pub(super) async fn read_hello(
    w: &Handshakes<'_>,
    frontend: usize,
    tcp: &mut TcpStream,
    peer: SocketAddr,
    deadline: Instant,
    received: &mut Vec<u8>,
) -> Result<client_hello::Peek, HandshakeEnd> {
    let counters = &w.stats.frontends[frontend];
    let tls = &w.stats.tls[frontend];
    match timeout_at(deadline, client_hello::read(tcp, received)).await {
        Err(_) => {
            bump(&counters.tls_timeouts);
            tls.failed(Failure::Timeout);
            debug!(%peer, "TLS handshake timed out before the ClientHello");
            Err(HandshakeEnd::Failed(Failure::Timeout))
        }
        Ok(Err(e)) => {
            bump(&counters.tls_failures);
            tls.failed(Failure::Other);
            debug!(%peer, error = %e, "TLS handshake failed before the ClientHello");
            Err(HandshakeEnd::Failed(Failure::Other))
        }
        Ok(Ok(peek)) => Ok(peek),
    }
}

/// Reads the ClientHello and applies the caps.
async fn admit(
    adm: &Admission,
    w: &Handshakes<'_>,
    frontend: usize,
    tcp: &mut TcpStream,
    peer: SocketAddr,
    deadline: Instant,
) -> Result<Admit, HandshakeEnd> {
    let tls = &w.stats.tls[frontend];
    let mut received = Vec::with_capacity(2048);
    let peek = read_hello(w, frontend, tcp, peer, deadline, &mut received).await?;
    let mut admit = Admit {
        received,
        resumption_offer: false,
        waited: std::time::Duration::ZERO,
    };
    match peek {
        // Not TLS: rustls refuses it at once, for no CPU worth capping.
        Peek::NotHello | Peek::Incomplete => return Ok(admit),
        Peek::Hello { resumption: true } => {
            tls.admission(AdmissionEvent::ResumeOffer);
            admit.resumption_offer = true;
            return Ok(admit);
        }
        Peek::Hello { resumption: false } => {}
    }
    if !adm.source_allows(peer.ip()) {
        tls.admission(AdmissionEvent::SourceRefused);
        debug!(%peer, "TLS handshake refused: source over its handshake budget");
        return Err(HandshakeEnd::Refused(AdmissionEvent::SourceRefused));
    }
    let start = Instant::now();
    let left = || client_left(tcp);
    match timeout_at(deadline, adm.full_handshake(left)).await {
        Err(_) => {
            tls.admission(AdmissionEvent::RateExpired);
            debug!(%peer, "closed: waited for the handshake rate cap past the handshake timeout");
            Err(HandshakeEnd::Refused(AdmissionEvent::RateExpired))
        }
        Ok(Admitted::AtOnce) => Ok(admit),
        Ok(Admitted::Delayed) => {
            tls.admission(AdmissionEvent::RateDelayed);
            admit.waited = start.elapsed();
            Ok(admit)
        }
        Ok(Admitted::Abandoned) => {
            tls.admission(AdmissionEvent::RateAbandoned);
            debug!(%peer, "closed: the client left while waiting for the handshake rate cap");
            Err(HandshakeEnd::Refused(AdmissionEvent::RateAbandoned))
        }
    }
}

/// Whether the client closed (or reset) its connection: polled without blocking, with a no-op
/// waker, as the pool judges idle server connections. The ClientHello is already read, so a
/// readable socket that peeks no byte is the client's end of stream.
fn client_left(tcp: &TcpStream) -> bool {
    let mut cx = Context::from_waker(Waker::noop());
    let mut byte = [0u8; 1];
    let mut buf = ReadBuf::new(&mut byte);
    match tcp.poll_peek(&mut cx, &mut buf) {
        Poll::Pending => false,
        Poll::Ready(Ok(0)) => true,
        Poll::Ready(Ok(_)) => false,
        Poll::Ready(Err(e)) => e.kind() != io::ErrorKind::WouldBlock,
    }
}

/// Sorts a handshake error into a failure reason.
fn classify(e: &io::Error) -> Failure {
    let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) else {
        return Failure::Other;
    };
    match tls {
        Error::PeerIncompatible(p) => match p {
            PeerIncompatible::NoCipherSuitesInCommon
            | PeerIncompatible::NoKxGroupsInCommon
            | PeerIncompatible::NoSignatureSchemesInCommon
            | PeerIncompatible::NoEcPointFormatsInCommon => Failure::NoSharedCipher,
            PeerIncompatible::SupportedVersionsExtensionRequired
            | PeerIncompatible::Tls12NotOffered
            | PeerIncompatible::Tls12NotOfferedOrEnabled
            | PeerIncompatible::ServerDoesNotSupportTls12Or13 => Failure::Version,
            _ => Failure::Protocol,
        },
        // On the server side, certificate errors are about the client's certificate (mTLS).
        Error::NoCertificatesPresented => Failure::ClientNoCert,
        Error::InvalidCertificate(cert) => client_cert_failure(cert),
        Error::AlertReceived(alert) => {
            use rustls::AlertDescription as A;
            match alert {
                A::BadCertificate
                | A::UnsupportedCertificate
                | A::CertificateRevoked
                | A::CertificateExpired
                | A::CertificateUnknown
                | A::UnknownCA
                | A::CertificateRequired => Failure::BadCertificate,
                A::ProtocolVersion => Failure::Version,
                A::HandshakeFailure | A::InsufficientSecurity => Failure::NoSharedCipher,
                _ => Failure::Other,
            }
        }
        // rustls' only error when the certificate resolver finds nothing for the name.
        Error::General(msg) if msg == "no server certificate chain resolved" => Failure::UnknownSni,
        Error::InvalidMessage(_)
        | Error::InappropriateMessage { .. }
        | Error::InappropriateHandshakeMessage { .. }
        | Error::PeerMisbehaved(_)
        | Error::DecryptError => Failure::Protocol,
        _ => Failure::Other,
    }
}

/// Why a client certificate was refused.
fn client_cert_failure(e: &CertificateError) -> Failure {
    match e {
        CertificateError::UnknownIssuer => Failure::ClientUnknownCa,
        CertificateError::Revoked => Failure::ClientRevoked,
        CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
            Failure::ClientExpired
        }
        _ => Failure::ClientCertOther,
    }
}

// Batched key exchanges (`global.crypto_batch`): the step before rustls sees the ClientHello.
mod batched;

#[cfg(test)]
mod tests;
