//! Which kind of certificate key (RSA, ECDSA, ...) a handshake used, for the TLS counters.
//!
//! rustls does not tell a server connection which certificate it sent. The bind's certificate
//! resolver knows, so each worker's copy of a TLS configuration gets its resolver wrapped in
//! [`Probe`], which notes the chosen key's algorithm in a thread-local slot. rustls calls the
//! resolver synchronously inside `process_new_packets`, on the thread running the handshake (a
//! worker or its offload thread), for the one connection being processed; `stream.rs` clears the
//! slot before that call and reads it after, so what it reads belongs to that connection. Cost:
//! two thread-local accesses per record processed during a handshake.

use std::cell::Cell;
use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, SignatureAlgorithm};

thread_local! {
    static CHOSEN: Cell<Option<SignatureAlgorithm>> = const { Cell::new(None) };
}

/// A certificate resolver that notes what the wrapped one chose.
#[derive(Debug)]
struct Probe(Arc<dyn ResolvesServerCert>);

impl ResolvesServerCert for Probe {
    fn resolve(&self, client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let key = self.0.resolve(client_hello)?;
        CHOSEN.with(|c| c.set(Some(key.key.algorithm())));
        Some(key)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.0.only_raw_public_keys()
    }
}

/// Wraps the configuration's resolver (call once per configuration copy).
pub(crate) fn install(config: &mut ServerConfig) {
    let inner = Arc::clone(&config.cert_resolver);
    config.cert_resolver = Arc::new(Probe(inner));
}

/// Forgets any earlier choice (before processing a connection's records).
pub(crate) fn clear() {
    CHOSEN.with(|c| c.set(None));
}

/// The algorithm chosen since [`clear`], if the resolver ran.
pub(crate) fn take() -> Option<SignatureAlgorithm> {
    CHOSEN.with(Cell::take)
}
