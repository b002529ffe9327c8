//! An established client connection on the OpenSSL engine: the stream the protocols serve
//! (`listen/client.rs` `ClientStream`), and its hand-over between event loops for handshake
//! offload ([`OsslStream::detach`], [`OsslDetached::attach`]), the counterpart of
//! `tls/stream.rs` for rustls.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use openssl::ssl::NameType;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_openssl::SslStream;

use super::turns::Turns;
use crate::access_log::Tracker;
use crate::exchange::proxy_header::ClientTls;
use crate::http2;
use crate::listen::client::ClientStream;

/// An established client connection on the OpenSSL engine, and the client's verified
/// certificate (DER) on a bind with `client_auth`.
#[derive(Debug)]
pub(crate) struct OsslStream(pub(super) SslStream<Turns>, pub(super) Option<Vec<u8>>);

/// An [`OsslStream`] taken off an event loop: OpenSSL's session around a parked socket, and
/// the socket.
#[derive(Debug)]
pub(crate) struct OsslDetached {
    stream: OsslStream,
    tcp: std::net::TcpStream,
}

impl OsslStream {
    /// The client's socket.
    pub(crate) fn tcp(&self) -> &TcpStream {
        self.0.get_ref().tcp()
    }

    /// Takes the socket off this thread's event loop; OpenSSL's session (keys, sequence
    /// numbers, anything it buffered) stays as it is.
    pub(crate) fn detach(mut self) -> io::Result<OsslDetached> {
        let tcp = self.0.get_mut().park()?;
        Ok(OsslDetached { stream: self, tcp })
    }

    /// Notes the handshake in the connection's access log.
    pub(crate) fn log_handshaken(&self, log: &mut Tracker) {
        let ssl = self.0.ssl();
        let cipher = ssl.current_cipher().and_then(|c| c.standard_name());
        log.handshaken_as(
            ssl.version_str(),
            cipher.unwrap_or("-"),
            ssl.servername(NameType::HOST_NAME).unwrap_or_default(),
            ssl.session_reused(),
        );
    }
}

impl OsslDetached {
    /// Registers the socket with this thread's event loop. Readiness is taken afresh, so
    /// bytes that arrived meanwhile are read.
    pub(crate) fn attach(self) -> io::Result<OsslStream> {
        let OsslDetached { mut stream, tcp } = self;
        stream.0.get_mut().unpark(tcp)?;
        Ok(stream)
    }
}

impl AsyncRead for OsslStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for OsslStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl http2::Socket for OsslStream {
    fn tcp(&self) -> &TcpStream {
        self.0.get_ref().tcp()
    }
}

impl ClientStream for OsslStream {
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // close_notify, then the socket's FIN.
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn socket(&self) -> Option<&TcpStream> {
        Some(self.0.get_ref().tcp())
    }

    fn sni(&self) -> Option<&str> {
        self.0.ssl().servername(NameType::HOST_NAME)
    }

    fn peer_certificate(&self) -> Option<&[u8]> {
        self.1.as_deref()
    }

    fn client_tls(&self) -> Option<ClientTls<'_>> {
        let ssl = self.0.ssl();
        Some(ClientTls {
            version: ssl.version_str(),
            cipher: ssl.current_cipher().map_or("", |c| c.name()),
            sni: ssl.servername(NameType::HOST_NAME),
            alpn: ssl.selected_alpn_protocol(),
            cert: self.1.is_some(),
            resumed: ssl.session_reused(),
        })
    }
}
