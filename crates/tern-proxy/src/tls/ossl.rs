//! The OpenSSL engine of a bind (`tls.engine = "openssl"`), beside the rustls one
//! (`handshake.rs`, `stream.rs`): built for every such bind at start-up ([`openssl_binds`]) and
//! by a certificate reload (`reload.rs`), handshaken per connection (`ossl/engine.rs`, on the
//! worker or its offload thread, under the same admission as rustls binds), and served by the
//! same protocol loops (HTTP/1.1, HTTP/2, TCP mode) through
//! [`crate::listen::client::ClientStream`] (`ossl/stream.rs`).
//!
//! Why its own handshake and stream rather than a second case inside the rustls ones: those are
//! written around rustls' state (tern's own stream with gathered writes, the connection state
//! moved between threads as a value); OpenSSL owns its session behind the `tokio-openssl`
//! stream. What both engines share goes through `engines.rs`. A build without the
//! `openssl-engine` feature keeps the types (uninhabited, `ossl/absent.rs`) and refuses such
//! binds with a message naming the feature, so no other module has a `cfg`.

use std::sync::Arc;

use tern_config::{Config, TlsEngine};

use crate::tls::info::Summaries;
use crate::tls::reload::BindTlsError;

#[cfg(not(feature = "openssl-engine"))]
mod absent;
#[cfg(feature = "openssl-engine")]
mod engine;
#[cfg(feature = "openssl-engine")]
mod negotiated;
#[cfg(feature = "openssl-engine")]
mod stream;
#[cfg(feature = "openssl-engine")]
mod turns;
#[cfg(not(feature = "openssl-engine"))]
pub(crate) use absent::{handshake, serve, OsslDetached, OsslStream};
#[cfg(feature = "openssl-engine")]
pub(crate) use engine::{handshake, serve};
#[cfg(feature = "openssl-engine")]
pub(crate) use stream::{OsslDetached, OsslStream};

/// A bind's OpenSSL engine, shared by the workers.
#[cfg(feature = "openssl-engine")]
pub type OsslBind = tern_tls::OsslAcceptor;

/// A bind's OpenSSL engine: never built without the `openssl-engine` feature.
#[cfg(not(feature = "openssl-engine"))]
#[derive(Debug)]
pub struct OsslBind(std::convert::Infallible);

/// The OpenSSL engine of every bind with `engine = "openssl"`, `[frontend][bind]`.
pub type OpensslBinds = Vec<Vec<Option<Arc<OsslBind>>>>;

/// What `show tls` reports of each bind (`[frontend][bind]` flattened), `None` but for
/// OpenSSL binds.
pub(crate) fn summaries(binds: &OpensslBinds) -> Summaries {
    binds
        .iter()
        .flatten()
        .map(|bind| bind.as_deref().map(summary))
        .collect()
}

#[cfg(feature = "openssl-engine")]
fn summary(bind: &OsslBind) -> Arc<tern_tls::BindSummary> {
    bind.summary()
}

#[cfg(not(feature = "openssl-engine"))]
fn summary(bind: &OsslBind) -> Arc<tern_tls::BindSummary> {
    match bind.0 {}
}

/// How many certificates the bind serves.
#[cfg(feature = "openssl-engine")]
pub(crate) fn certificates(bind: &OsslBind) -> usize {
    bind.certificates()
}

/// How many certificates the bind serves.
#[cfg(not(feature = "openssl-engine"))]
pub(crate) fn certificates(bind: &OsslBind) -> usize {
    match bind.0 {}
}

/// Builds the OpenSSL engine of every bind that uses it, reading its files.
pub fn openssl_binds(config: &Config) -> Result<OpensslBinds, BindTlsError> {
    config
        .frontends
        .iter()
        .map(|fe| {
            fe.binds
                .iter()
                .map(|bind| match &bind.tls {
                    Some(settings) if matches!(settings.engine, TlsEngine::OpenSsl(_)) => {
                        build(settings).map(Some).map_err(|cause| BindTlsError {
                            frontend: fe.name.clone(),
                            address: bind.address,
                            cause,
                        })
                    }
                    _ => Ok(None),
                })
                .collect()
        })
        .collect()
}

#[cfg(feature = "openssl-engine")]
fn build(settings: &tern_config::TlsSettings) -> Result<Arc<OsslBind>, tern_tls::TlsError> {
    tern_tls::openssl_acceptor(settings)
}

#[cfg(not(feature = "openssl-engine"))]
fn build(_: &tern_config::TlsSettings) -> Result<Arc<OsslBind>, tern_tls::TlsError> {
    Err(tern_tls::TlsError::OpenSsl(
        "engine = \"openssl\" needs a tern built with the `openssl-engine` cargo feature \
         (on in the default build)"
            .to_owned(),
    ))
}
