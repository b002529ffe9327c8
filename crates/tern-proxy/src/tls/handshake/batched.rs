//! The step `global.crypto_batch` adds before rustls sees a handshake: read the ClientHello
//! (unless admission already did), and when rustls will use X25519 with the client's key
//! share, wait for this thread's batch to compute the server's half (`tls/batch.rs`).
//!
//! Under the handshake's deadline like the rest: a ClientHello that does not come, or a batch
//! that does not run in time (it always does, within the batch deadline), is a handshake
//! timeout.

use std::net::SocketAddr;

use rustls::ServerConfig;
use tern_tls::PreparedX25519;
use tokio::net::TcpStream;
use tokio::time::{timeout_at, Instant};
use tracing::debug;

use super::{HandshakeEnd, Handshakes};
use crate::stats::bump;
use crate::tls::batch;
use crate::tls::client_hello;
use crate::tls::stats::Failure;

/// The server half of the key exchange, computed in a batch, for the handshake of `received`
/// (read here if empty); `None` when the handshake computes its own.
pub(super) async fn prepare(
    w: &Handshakes<'_>,
    frontend: usize,
    tcp: &mut TcpStream,
    peer: SocketAddr,
    deadline: Instant,
    config: &ServerConfig,
    received: &mut Vec<u8>,
) -> Result<Option<PreparedX25519>, HandshakeEnd> {
    let counters = &w.stats.frontends[frontend];
    let tls = &w.stats.tls[frontend];
    if received.is_empty() {
        received.reserve(2048);
        super::read_hello(w, frontend, tcp, peer, deadline, received).await?;
    }
    let groups = &config.crypto_provider().kx_groups;
    let supported = |g| groups.iter().any(|k| k.name() == g);
    let Some(share) = client_hello::x25519_share(received, supported) else {
        return Ok(None);
    };
    let settings = &w.shared.global().crypto_batch;
    match timeout_at(
        deadline,
        batch::prepare(settings, &w.stats.crypto_batch, share),
    )
    .await
    {
        Ok(prepared) => Ok(prepared),
        Err(_) => {
            bump(&counters.tls_timeouts);
            tls.failed(Failure::Timeout);
            debug!(%peer, "TLS handshake timed out waiting for its key exchange batch");
            Err(HandshakeEnd::Failed(Failure::Timeout))
        }
    }
}
