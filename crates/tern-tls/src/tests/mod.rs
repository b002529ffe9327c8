//! Tests of the public API: loading files, in-memory handshakes, SNI selection.
//!
//! Handshakes run between a rustls `ClientConnection` and `ServerConnection` pumped through
//! buffers: no sockets, no timing, fully deterministic apart from the random keys.

#![allow(clippy::unwrap_used)]

mod features;
mod handshake;
mod load;
#[cfg(feature = "openssl-engine")]
mod ossl;
mod sni;

use std::ops::DerefMut;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, ConnectionCommon, ServerConfig, ServerConnection};

use crate::{self_signed, KeyKind, SelfSigned};

/// A directory under the system temporary directory, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let unique = format!(
            "tern-tls-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    /// Writes `contents` to `name` inside the directory and returns the file's path.
    pub(crate) fn write(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An ECDSA P-256 certificate for `localhost` and 127.0.0.1, generated once per test run.
pub(crate) fn ecdsa() -> &'static SelfSigned {
    static CERT: OnceLock<SelfSigned> = OnceLock::new();
    CERT.get_or_init(|| {
        self_signed(&names(&["localhost", "127.0.0.1"]), KeyKind::EcdsaP256).unwrap()
    })
}

/// An RSA-2048 certificate for `localhost` and 127.0.0.1, generated once per test run.
pub(crate) fn rsa() -> &'static SelfSigned {
    static CERT: OnceLock<SelfSigned> = OnceLock::new();
    CERT.get_or_init(|| self_signed(&names(&["localhost", "127.0.0.1"]), KeyKind::Rsa2048).unwrap())
}

pub(crate) fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|name| (*name).to_owned()).collect()
}

/// Runs a whole handshake in memory; the client connects to `name` (a DNS name sends SNI, an
/// IP address does not).
pub(crate) fn handshake(
    client: Arc<ClientConfig>,
    server: Arc<ServerConfig>,
    name: &str,
) -> Result<(ClientConnection, ServerConnection), rustls::Error> {
    let name = ServerName::try_from(name.to_owned()).unwrap();
    let mut client = ClientConnection::new(client, name)?;
    let mut server = ServerConnection::new(server)?;
    // A TLS 1.2 or 1.3 handshake, tickets included, takes at most three flights each way.
    for _ in 0..4 {
        transfer(client.deref_mut(), server.deref_mut())?;
        transfer(server.deref_mut(), client.deref_mut())?;
        if !client.is_handshaking() && !server.is_handshaking() {
            return Ok((client, server));
        }
    }
    panic!("handshake did not complete in 4 round trips");
}

/// Moves every pending TLS byte from `from` to `to` and lets `to` process it.
pub(crate) fn transfer<A, B>(
    from: &mut ConnectionCommon<A>,
    to: &mut ConnectionCommon<B>,
) -> Result<(), rustls::Error> {
    let mut bytes = Vec::new();
    while from.wants_write() {
        from.write_tls(&mut bytes).unwrap();
    }
    let mut rest = bytes.as_slice();
    while !rest.is_empty() {
        to.read_tls(&mut rest).unwrap();
        to.process_new_packets()?;
    }
    Ok(())
}
