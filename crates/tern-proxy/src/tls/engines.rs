//! The two TLS engines of a bind (rustls, and OpenSSL for `engine = "openssl"`) behind one set
//! of types, so that the code around the handshake (the accept loop, certificate reload,
//! handshake offload, the session) carries "a bind's TLS" and "an established TLS connection"
//! without asking which engine it is; only the handshake and the protocol's start branch on it.
//!
//! Why an enum and not a trait object: there are two engines, known at compile time, and every
//! value here is moved per connection (accepted, handshaken, handed between threads): an enum
//! costs no allocation and no indirect call, and a `match` names each engine where they differ.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use rustls::ServerConfig;
use tokio::net::TcpStream;

use crate::access_log::Tracker;
use crate::lifecycle::Lifecycle;
use crate::profiling::{Kind, Profiled};
use crate::tls::handshake::{self, Handshakes};
use crate::tls::ossl::{self, OsslBind, OsslDetached, OsslStream};
use crate::tls::stream::{self, TlsStream};

/// A bind's TLS as handed to each accepted connection: swapped by a certificate reload
/// (`reload.rs`) between accepts.
#[derive(Debug, Clone)]
pub(crate) enum BindTls {
    Rustls(Arc<ServerConfig>),
    OpenSsl(Arc<OsslBind>),
}

/// A client connection whose handshake is complete, on either engine.
// rustls' connection state is the larger by far; a value lives from the end of the handshake
// to the start of the protocol's loop, which takes the stream in: boxing it would cost an
// allocation per connection for a few moves.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Established {
    Rustls(TlsStream),
    OpenSsl(OsslStream),
}

impl Established {
    /// The client's socket.
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Established::Rustls(tls) => tls.tcp(),
            Established::OpenSsl(tls) => tls.tcp(),
        }
    }

    /// Takes the connection off this thread's event loop, to be put on another's
    /// ([`Detached::attach`]): the offload thread hands its handshaken connections to the
    /// worker so.
    pub(crate) fn detach(self) -> io::Result<Detached> {
        Ok(match self {
            Established::Rustls(tls) => Detached::Rustls(tls.detach()?),
            Established::OpenSsl(tls) => Detached::OpenSsl(tls.detach()?),
        })
    }

    /// Notes the handshake in the connection's access log.
    fn log_handshaken(&self, log: &mut Tracker) {
        match self {
            Established::Rustls(tls) => log.handshaken(tls.connection()),
            Established::OpenSsl(tls) => tls.log_handshaken(log),
        }
    }
}

/// A handshaken connection between two event loops (see [`Established::detach`]).
#[derive(Debug)]
pub(crate) enum Detached {
    Rustls(stream::Detached),
    OpenSsl(OsslDetached),
}

impl Detached {
    /// Registers the socket with this thread's event loop.
    pub(crate) fn attach(self) -> io::Result<Established> {
        Ok(match self {
            Detached::Rustls(tls) => Established::Rustls(tls.attach()?),
            Detached::OpenSsl(tls) => Established::OpenSsl(tls.attach()?),
        })
    }
}

/// The handshake of a session accepted on `frontend`, on the bind's engine, as the worker or
/// its offload thread runs it: admission (`admission.rs`, when a cap is configured), profiled,
/// noted in the access log (`log`, which a failure consumes), and given up when the thread
/// stops (the connection has no request in progress yet). `None` when the session ends here.
pub(crate) async fn handshake(
    w: Handshakes<'_>,
    life: &Lifecycle,
    frontend: usize,
    (tcp, peer): (TcpStream, SocketAddr),
    tls: BindTls,
    log: &mut Option<Box<Tracker>>,
) -> Option<Established> {
    let run = async move {
        match tls {
            BindTls::Rustls(config) => handshake::run(w, frontend, tcp, peer, config)
                .await
                .map(Established::Rustls),
            BindTls::OpenSsl(bind) => ossl::handshake(w, frontend, tcp, peer, &bind)
                .await
                .map(Established::OpenSsl),
        }
    };
    let handshake = Profiled::new(Kind::TlsHandshake, run);
    let done = tokio::select! {
        done = handshake => done,
        () = life.closing_idle() => return None,
    };
    match done {
        Ok(tls) => {
            if let Some(log) = log.as_deref_mut() {
                tls.log_handshaken(log);
            }
            Some(tls)
        }
        Err(why) => {
            if let Some(log) = log.take() {
                log.handshake_failed(w.shared, why);
            }
            None
        }
    }
}
