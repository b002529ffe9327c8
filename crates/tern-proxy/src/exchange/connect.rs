//! A connection to the picked server: an idle one from the worker's pool, or a new one opened
//! under the `connect` timeout (TLS and the PROXY header included, `upstream.rs`).
//!
//! Protocol-neutral in what it decides (which address, which TLS name, which pooled
//! connections fit); the connection it returns is read and written as HTTP/1.1 ([`ServerConn`]
//! carries the response head's buffer), over a stream of an HTTP/2 connection for a server
//! spoken to in HTTP/2 (`proto`, see [`crate::exchange::h2`]).

use std::net::SocketAddr;

use tern_config::{Server, ServerProto};

use crate::exchange::h2::{Target, UpstreamStream};
use crate::exchange::proxy_header::{Custom, Origin, Proxied};
use crate::exchange::upstream::{self, ServerConn, ServerStream};
use crate::exchange::websocket;
use crate::listen::client::ClientStream;
use crate::listen::proxy_in::Addrs;
use crate::profiling::{Kind, Profiled};
use crate::stats::bump;
use crate::worker::Worker;

/// An idle pooled connection to `server` (true: reused), or a new one, with TLS when the
/// server has `tls`. `fresh` skips the pool; `host` is the request's Host value (for
/// `sni = "host"`); `proxy` the PROXY header of a server with `proxy_protocol` (its connections
/// carry only requests of the client connection the header names). For a server spoken to in
/// HTTP/2 the connection is a stream of a shared connection (true: that connection existed).
///
/// A WebSocket (`websocket`) goes over the protocol of the server's `ws`
/// (`exchange/websocket.rs`), which may not be its requests'.
pub(crate) async fn obtain(
    w: &Worker,
    b: usize,
    server: usize,
    (fresh, websocket): (bool, bool),
    host: Option<&[u8]>,
    proxy: Option<Proxied<'_>>,
) -> Result<(ServerConn, bool), upstream::ConnectError> {
    let be = w.shared.backend(b);
    let srv = &be.servers[server];
    let proto = websocket::proto_of(srv, websocket);
    let address = address(w, b, server);
    let mut tls = tls_target(w, b, server, host, address);
    if let (Some(tls), true) = (tls.as_mut(), websocket) {
        if let Some(config) = w.shared.websocket_tls(b, server) {
            tls.config = config;
        }
    }
    let target = Target {
        tls: tls.is_some(),
        addr: address,
    };
    if !fresh {
        let key = tls.as_ref().and_then(|t| t.key.as_deref());
        let origin = proxy.map(|p| p.origin);
        if proto != ServerProto::Http1 {
            if let Some(stream) = w.pools.h2.stream(b, server, key, origin, target) {
                let buf = w.pools.lend();
                let conn = ServerConn::new(stream_of(stream), buf, address, None, origin);
                return Ok((conn, true));
            }
        }
        if proto != ServerProto::Http2 {
            if let Some(conn) = w.pools.checkout(b, server, key, origin, address) {
                return Ok((conn, true));
            }
        }
    }
    // Boxed: opening a connection (TCP, TLS, HTTP/2) is a future of about 2 KB, which every
    // future awaiting this one would otherwise hold inline, and copy at each move, for the
    // requests (most of them) that reuse a pooled connection.
    Box::pin(open(w, (b, server, proto), address, tls, proxy, target)).await
}

/// A new connection to `server` of backend `b` (see [`obtain`]).
async fn open<'w>(
    w: &'w Worker,
    (b, server, proto): (usize, usize, ServerProto),
    address: SocketAddr,
    tls: Option<upstream::TlsTarget<'w>>,
    proxy: Option<Proxied<'_>>,
    target: Target,
) -> Result<(ServerConn, bool), upstream::ConnectError> {
    let be = w.shared.backend(b);
    let connect = upstream::connect(address, be.timeouts.connect, tls, proxy);
    let conn = Profiled::new(Kind::Connect, connect).await?;
    bump(&w.stats.servers[b][server].connects);
    let h2 = match proto {
        ServerProto::Http1 => false,
        ServerProto::Http2 => true,
        ServerProto::Negotiated => conn.stream.negotiated_h2(),
    };
    if !h2 {
        return Ok((conn, false));
    }
    let ServerConn {
        stream,
        key,
        origin,
        ..
    } = conn;
    let open = w
        .pools
        .h2
        .open((&w.stats, b, server), stream, key, origin, target);
    let stream = match tokio::time::timeout(be.timeouts.connect, open).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            let cause = std::io::Error::other(e);
            return Err(upstream::ConnectError::Io {
                addr: address,
                cause,
            });
        }
        Err(_) => {
            let timeout = be.timeouts.connect;
            return Err(upstream::ConnectError::Timeout {
                addr: address,
                timeout,
            });
        }
    };
    let buf = w.pools.lend();
    Ok((
        ServerConn::new(stream_of(stream), buf, address, None, origin),
        false,
    ))
}

/// The address of `server` of backend `b`: the configured one, or where the runtime API moved
/// it (`set server addr`).
pub(crate) fn address(w: &Worker, b: usize, server: usize) -> SocketAddr {
    let configured = w.shared.backend(b).servers[server].address;
    w.balancers
        .state(b)
        .and_then(|st| st.server(server))
        .map_or(configured, |st| st.address(configured))
}

/// How to open TLS to `server` of backend `b` at `address`, when it has `tls`; `host` is the
/// request's Host value (for `sni = "host"`).
pub(crate) fn tls_target<'w>(
    w: &'w Worker,
    b: usize,
    server: usize,
    host: Option<&[u8]>,
    address: SocketAddr,
) -> Option<upstream::TlsTarget<'w>> {
    let srv = &w.shared.backend(b).servers[server];
    match (&srv.tls, w.shared.server_tls(b, server)) {
        (Some(settings), Some(config)) => {
            let (name, key) = upstream::server_name(settings, host, address.ip());
            Some(upstream::TlsTarget { config, name, key })
        }
        _ => None,
    }
}

fn stream_of(stream: UpstreamStream) -> ServerStream {
    ServerStream::H2(Box::new(stream))
}

/// The PROXY header `server` gets (none without `proxy_protocol`) for a server connection
/// carrying the client connection `io` (whose addresses are `addrs`): the addresses, the
/// client's TLS when tern terminated it, and the server's v2 options and TLVs.
pub(crate) fn proxied<'a, S: ClientStream>(
    io: &'a S,
    addrs: &'a Addrs,
    server: &'a Server,
) -> Option<Proxied<'a>> {
    let tls = io.client_tls();
    let v2 = &server.proxy_v2;
    let custom = (!v2.tlvs.is_empty()).then(|| Custom {
        formats: &v2.tlvs,
        // As the TLS TLVs: what tern terminated with rustls.
        tls: tls.is_some(),
        sni: io.sni(),
        received: addrs.pp_tlvs(),
    });
    Some(Proxied {
        version: server.proxy_protocol?,
        origin: origin(io, addrs),
        tls,
        crc32c: v2.crc32c,
        custom,
    })
}

/// The client connection's addresses (`addrs`, the local one read from `io` unless a PROXY
/// header carried it), for the PROXY header of a server with `proxy_protocol`.
fn origin<S: ClientStream>(io: &S, addrs: &Addrs) -> Origin {
    match addrs.local().map_or_else(|| io.local_addr(), Ok) {
        Ok(destination) => Origin::Client {
            source: addrs.peer,
            destination,
        },
        Err(_) => Origin::Unknown,
    }
}
