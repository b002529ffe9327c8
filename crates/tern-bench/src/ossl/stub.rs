//! The OpenSSL engine's types in a build without the `openssl-engine` feature: they cannot be
//! made, so `--tls-engine openssl` fails at setup with a message naming the feature.

use std::convert::Infallible;
use std::io;
use std::task::{Context, Poll};

use tokio::io::ReadBuf;
use tokio::net::TcpStream;

use crate::args::BenchArgs;
use crate::stats::TlsParams;
use crate::BenchError;

/// Never made: this build has no OpenSSL engine.
#[derive(Debug)]
pub(crate) struct OsslSetup(Infallible);

impl OsslSetup {
    /// Always the error that explains why.
    pub fn new(_: &BenchArgs, _: &str, _: bool) -> Result<Self, BenchError> {
        Err(BenchError::Options(
            "--tls-engine openssl: this build has no OpenSSL engine \
             (build with the `openssl-engine` feature, the default of the tern binary)"
                .to_owned(),
        ))
    }
}

/// Never made: this build has no OpenSSL engine.
#[derive(Debug)]
pub(crate) struct OsslStream(Infallible);

#[allow(clippy::unused_async)] // the same signatures as the real engine's
impl OsslStream {
    pub async fn connect(setup: &OsslSetup, _: TcpStream) -> io::Result<Self> {
        match setup.0 {}
    }

    pub fn params(&self) -> TlsParams {
        match self.0 {}
    }

    pub fn resumed(&self) -> bool {
        match self.0 {}
    }

    pub fn alpn(&self) -> Option<&[u8]> {
        match self.0 {}
    }

    pub async fn send(&mut self, _: &[u8]) -> io::Result<()> {
        match self.0 {}
    }

    pub async fn recv(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0 {}
    }

    pub fn reusable(&mut self) -> bool {
        match self.0 {}
    }

    pub fn poll_read(&mut self, _: &mut Context<'_>, _: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.0 {}
    }

    pub fn poll_write(&mut self, _: &mut Context<'_>, _: &[u8]) -> Poll<io::Result<usize>> {
        match self.0 {}
    }

    pub fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.0 {}
    }

    pub fn poll_shutdown(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.0 {}
    }
}
