//! The OpenSSL engine's types in a build without the `openssl-engine` feature: uninhabited, as
//! no OpenSSL bind starts in such a build (`ossl.rs` refuses them), so the code around the
//! handshake (`engines.rs`) compiles unchanged and these functions are never called.

use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::rc::Rc;

use tokio::net::TcpStream;

use super::OsslBind;
use crate::access_log::Tracker;
use crate::listen::proxy_in::Addrs;
use crate::tls::handshake::{HandshakeEnd, Handshakes};
use crate::track::Tracking;
use crate::worker::Worker;

/// An established connection on the OpenSSL engine: none without the feature.
#[derive(Debug)]
pub(crate) struct OsslStream(Infallible);

/// A connection on the OpenSSL engine between event loops: none without the feature.
#[derive(Debug)]
pub(crate) struct OsslDetached(Infallible);

impl OsslStream {
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self.0 {}
    }

    pub(crate) fn detach(self) -> io::Result<OsslDetached> {
        match self.0 {}
    }

    pub(crate) fn log_handshaken(&self, _: &mut Tracker) {
        match self.0 {}
    }
}

impl OsslDetached {
    pub(crate) fn attach(self) -> io::Result<OsslStream> {
        match self.0 {}
    }
}

pub(crate) async fn handshake(
    _: Handshakes<'_>,
    _: usize,
    _: TcpStream,
    _: SocketAddr,
    bind: &OsslBind,
) -> Result<OsslStream, HandshakeEnd> {
    match bind.0 {}
}

pub(crate) async fn serve(
    _: Rc<Worker>,
    _: usize,
    stream: OsslStream,
    _: Addrs,
    _: Option<Box<Tracker>>,
    _: Tracking,
) {
    match stream.0 {}
}
