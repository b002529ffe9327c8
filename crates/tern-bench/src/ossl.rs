//! The OpenSSL client engine (`--tls-engine openssl`): the system libssl through the `openssl`
//! and `tokio-openssl` crates, for the handshakes rustls does not make.
//!
//! Why a second engine: the seed papers measure static-RSA and DHE-RSA key exchange, CBC suites
//! and TLS 1.0/1.1 (seeds 000, 002, 004), which rustls does not implement, against servers (tern's
//! OpenSSL bind, HAProxy, nginx) that do. A client on the same library as those servers drives
//! those rows with the same generator, load models, counters and report as the rustls rows.
//!
//! What differs from the rustls engine, on purpose or for now:
//! - one `SslContext` shared by all client threads (OpenSSL's contexts are thread-safe), a fresh
//!   `Ssl` per connection; no session cache and no TLS 1.2 ticket extension, so every handshake
//!   is full. `--resume` is refused with this engine: offering a stored session takes
//!   `SSL_set_session`, which the openssl crate exposes only as an `unsafe fn` (the session must
//!   come from the same context), and this crate forbids unsafe code;
//! - OpenSSL makes a fresh key pair per handshake (`--key-share-reuse` does not apply) and always
//!   checks the server's handshake signature (`--no-signature-check` does not apply);
//! - the client Finished leaves in its own write, as with any OpenSSL client;
//! - the key exchange reported comes from the suite (TLS 1.2) and the server's ephemeral key
//!   (`SSL_get_peer_tmp_key`, OpenSSL 3).
//!
//! Built with the `openssl-engine` feature (the `tern` binary's default). Without it the types
//! exist but cannot be made, and `--tls-engine openssl` fails with a message naming the feature,
//! so no other module needs a `cfg`.

#[cfg(feature = "openssl-engine")]
mod client;
#[cfg(feature = "openssl-engine")]
mod names;
#[cfg(feature = "openssl-engine")]
mod stream;
#[cfg(not(feature = "openssl-engine"))]
mod stub;

#[cfg(feature = "openssl-engine")]
pub(crate) use client::OsslSetup;
#[cfg(feature = "openssl-engine")]
pub(crate) use stream::OsslStream;
#[cfg(not(feature = "openssl-engine"))]
pub(crate) use stub::{OsslSetup, OsslStream};

/// The version of the linked OpenSSL, e.g. "OpenSSL 3.0.19 27 Jan 2026"; `None` when the engine
/// is not built.
pub fn library_version() -> Option<&'static str> {
    #[cfg(feature = "openssl-engine")]
    return Some(openssl::version::version());
    #[cfg(not(feature = "openssl-engine"))]
    None
}

#[cfg(all(test, feature = "openssl-engine"))]
mod tests;
