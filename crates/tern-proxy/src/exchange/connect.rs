//! A connection to the picked server: an idle one from the worker's pool, or a new one opened
//! under the `connect` timeout (TLS and the PROXY header included, `upstream.rs`).
//!
//! Protocol-neutral in what it decides (which address, which TLS name, which pooled
//! connections fit); the connection it returns is an HTTP/1.1 one ([`ServerConn`] carries the
//! response head's buffer), the only kind of server connection so far.

use tern_config::ProxyProtocol;

use crate::exchange::proxy_header::Origin;
use crate::exchange::upstream::{self, ServerConn};
use crate::listen::client::ClientStream;
use crate::profiling::{Kind, Profiled};
use crate::stats::bump;
use crate::worker::Worker;

/// An idle pooled connection to `server` (true: reused), or a new one, with TLS when the
/// server has `tls`. `fresh` skips the pool; `host` is the request's Host value (for
/// `sni = "host"`); `proxy` the PROXY header of a server with `proxy_protocol` (its connections
/// carry only requests of the client connection the header names).
pub(crate) async fn obtain(
    w: &Worker,
    b: usize,
    server: usize,
    fresh: bool,
    host: Option<&[u8]>,
    proxy: Option<(ProxyProtocol, Origin)>,
) -> Result<(ServerConn, bool), upstream::ConnectError> {
    let be = w.shared.backend(b);
    let srv = &be.servers[server];
    // The runtime API may have moved the server (`set server addr`).
    let address = w
        .balancers
        .state(b)
        .and_then(|st| st.server(server))
        .map_or(srv.address, |st| st.address(srv.address));
    let tls = match (&srv.tls, w.shared.server_tls(b, server)) {
        (Some(settings), Some(config)) => {
            let (name, key) = upstream::server_name(settings, host, address.ip());
            Some(upstream::TlsTarget { config, name, key })
        }
        _ => None,
    };
    if !fresh {
        let key = tls.as_ref().and_then(|t| t.key.as_deref());
        let origin = proxy.map(|(_, origin)| origin);
        if let Some(conn) = w.pools.checkout(b, server, key, origin, address) {
            return Ok((conn, true));
        }
    }
    let connect = upstream::connect(address, be.timeouts.connect, tls, proxy);
    let conn = Profiled::new(Kind::Connect, connect).await?;
    bump(&w.stats.servers[b][server].connects);
    Ok((conn, false))
}

/// The client connection's addresses, for the PROXY header of a server with `proxy_protocol`.
pub(crate) fn origin<S: ClientStream>(io: &S) -> Origin {
    match (io.peer_addr(), io.local_addr()) {
        (Ok(source), Ok(destination)) => Origin::Client {
            source,
            destination,
        },
        _ => Origin::Unknown,
    }
}
