//! TLS for tern: rustls with the aws-lc-rs provider, behind one module so another provider can be
//! added later.
//!
//! Planned API (filled in by the TLS implementation):
//! - `provider()`: the aws-lc-rs `CryptoProvider` restricted to tern's default policy.
//! - `server_config(&TlsSettings) -> Result<Arc<ServerConfig>, TlsError>`: loads certificates.
//! - `self_signed(...)`: a generated certificate for `tern demo` and tests.
//! - `client_config(...)`: client configurations for tests and the load generator.

#![forbid(unsafe_code)]
