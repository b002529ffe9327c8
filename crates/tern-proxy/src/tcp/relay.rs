//! The relay of a TCP-mode session, and what its end counts and logs.
//!
//! The bytes go through [`crate::tunnel::Tunnel`], which knows no protocol: one buffer per
//! direction (16 KiB from the client, 32 KiB from the server), each read again only once
//! written, so a slow reader holds the other side back instead of growing memory. Timeouts are
//! a WebSocket tunnel's: the backend's `tunnel` on both ends, else the frontend's `client` and
//! the backend's `server`; once the server finished, the client end gets the frontend's
//! `client_fin` (if set), and once the client finished, the server end the backend's
//! `server_fin`.
//!
//! How it ends decides what the other side sees: both ends closed in order, nothing more to
//! do (each end of stream was passed on as it came); an error on one end (a reset) makes the
//! other end's close a reset too (`SO_LINGER` 0), so a client learns that its server broke off
//! rather than reading a clean end of stream; an expired timeout closes both.
//!
//! Then the counters (the bytes of the frontend, backend and server; the frontend's
//! `client_aborts` for a client that reset, the backend's `aborted_responses` for a server that
//! did), the passive checks (a server reset counts as a connection error) and the access log's
//! `tcplog` fields.

use tracing::debug;

use crate::access_log::Tracker;
use crate::buffer::Buffer;
use crate::exchange::observe::{observe, Seen};
use crate::exchange::upstream::{ServerConn, ServerStream};
use crate::listen::client::ClientStream;
use crate::profiling::{Kind, Profiled};
use crate::stats::{add, bump};
use crate::timer::Timer;
use crate::tunnel::{reset, End, Ending, Report, Side, Tunnel};
use crate::worker::Worker;

/// The two ends of a session's relay.
pub(super) struct Ends<'a, S> {
    pub client: &'a mut S,
    /// What was read from the client and not yet written to the server.
    pub client_buf: &'a mut Buffer,
    pub server: ServerConn,
}

/// Relays until both ends closed, one failed or the relay expired; counts and logs it.
pub(super) async fn run<S: ClientStream>(
    w: &Worker,
    frontend: usize,
    backend: usize,
    server: usize,
    ends: Ends<'_, S>,
    log: Option<&mut Tracker>,
) {
    let Ends {
        client,
        client_buf,
        server: mut conn,
    } = ends;
    let (fe, be) = (w.shared.frontend(frontend), w.shared.backend(backend));
    let (client_timeout, server_timeout) = match be.timeouts.tunnel {
        Some(tunnel) => (tunnel, tunnel),
        None => (fe.timeouts.client, be.timeouts.server),
    };
    let mut timer = Timer::default();
    let tunnel = Tunnel::new(
        End {
            io: &mut *client,
            buf: client_buf,
            timeout: client_timeout,
            fin: fe.timeouts.client_fin,
        },
        End {
            io: &mut conn.stream,
            buf: &mut conn.buf,
            timeout: server_timeout,
            fin: be.timeouts.server_fin,
        },
        &mut timer,
    )
    .spliced(S::plain_tcp, ServerStream::plain_tcp);
    let report = Profiled::new(Kind::Tunnel, tunnel.run()).await;
    count(w, frontend, backend, server, &report);
    if let Some(log) = log {
        log.tunnelled(&report);
    }
    let (up, down) = (report.up, report.down);
    let seen = match report.ending {
        Ending::Closed => {
            debug!(up, down, "tcp session closed");
            Seen::Fine
        }
        Ending::Timeout(side) => {
            debug!(up, down, ?side, "tcp session inactive beyond its timeout");
            Seen::Fine
        }
        Ending::Failed(Side::Client, error) => {
            debug!(up, down, %error, "tcp session: the client failed");
            bump(&w.stats.frontends[frontend].client_aborts);
            if let Some(tcp) = conn.stream.tcp() {
                reset(tcp);
            }
            Seen::Fine
        }
        Ending::Failed(Side::Server, error) => {
            debug!(up, down, %error, "tcp session: the server failed");
            bump(&w.stats.backends[backend].aborted_responses);
            if let Some(tcp) = client.socket() {
                reset(tcp);
            }
            Seen::ConnectionError
        }
    };
    if let Some(state) = w.balancers.state(backend) {
        observe(be, state, server, seen);
    }
    // For the next session (the connection itself is closed when dropped here).
    w.pools
        .give_back(std::mem::replace(&mut conn.buf, Buffer::empty()));
}

/// Counts a session's bytes for `server`, its backend and the frontend.
fn count(w: &Worker, frontend: usize, backend: usize, server: usize, report: &Report) {
    let stats = &w.stats;
    let (sc, bc, fc) = (
        &stats.servers[backend][server],
        &stats.backends[backend],
        &stats.frontends[frontend],
    );
    for (bytes_in, bytes_out) in [
        (&sc.bytes_in, &sc.bytes_out),
        (&bc.bytes_in, &bc.bytes_out),
        (&fc.bytes_in, &fc.bytes_out),
    ] {
        add(bytes_in, report.up);
        add(bytes_out, report.down);
    }
}
