//! After a `101 Switching Protocols` that accepted an upgrade request (a WebSocket opening):
//! the client connection and the server connection become the two ends of a tunnel
//! ([`crate::tunnel`]) until both close.
//!
//! The decision is the relay's, where response heads are judged (`relay/download.rs`): a `101`
//! is accepted only in answer to a request [`tern_h1::RequestHead::is_upgrade`] forwarded as
//! one, and only once its head (response rules and cookie persistence applied) is written to
//! the client. What follows here is HTTP's part of a tunnel's life:
//!
//! - **Timeouts.** The backend's `timeouts.tunnel` on both ends; without it the frontend's
//!   `client` on the client end and the backend's `server` on the server end, as HAProxy does
//!   without `timeout tunnel`; `client_fin` and `server_fin` once the end's peer finished.
//! - **Ends.** Both ends closed in order: the client connection closes in order too (TLS:
//!   close_notify, if the server's close did not already send it). One end failed (a reset):
//!   the other is reset (`SO_LINGER` 0, then close), so its peer learns the tunnel broke rather
//!   than seeing a clean end of stream. The server connection is never pooled after a tunnel.
//! - **Stop and drain.** A tunnel has no request boundary to close at, so a graceful stop or a
//!   drain lets it run: the worker's `global.grace` (stop) or `hard_stop_after` (drain after a
//!   reload or upgrade) bounds it, like any exchange in flight.
//! - **Counting.** `tunnels` counts the switch; the bytes relayed go to the `bytes_in` and
//!   `bytes_out` of the frontend, backend and server when the tunnel ends, and the access log
//!   line of the upgrade request, written then, has status 101, all its bytes, the whole
//!   duration and a termination state saying which end ended it (`--` when both closed).

use tracing::debug;

use crate::exchange::upstream::ServerConn;
use crate::http1::conn::{H1Conn, Next};
use crate::listen::client::ClientStream;
use crate::profiling::{Kind, Profiled};
use crate::stats::{add, bump};
use crate::tunnel::{reset, End, Ending, Report, Side, Tunnel};

impl<S: ClientStream> H1Conn<S> {
    /// Tunnels the client connection to `conn`, a connection to `server` whose `101` the client
    /// got, until both ends closed, one failed or the tunnel expired; then the client
    /// connection ends.
    pub(super) async fn tunnel(&mut self, mut conn: ServerConn, server: usize) -> Next {
        bump(&self.counters().tunnels);
        let (fe, be) = (self.frontend_config(), self.backend_config());
        let (client_timeout, server_timeout) = match be.timeouts.tunnel {
            Some(tunnel) => (tunnel, tunnel),
            None => (fe.timeouts.client, be.timeouts.server),
        };
        let (client_fin, server_fin) = (fe.timeouts.client_fin, be.timeouts.server_fin);
        let tunnel = Tunnel::new(
            End {
                io: &mut self.io,
                buf: &mut self.buf,
                timeout: client_timeout,
                fin: client_fin,
            },
            End {
                io: &mut conn.stream,
                buf: &mut conn.buf,
                timeout: server_timeout,
                fin: server_fin,
            },
            &mut self.client_timer,
        );
        let report = Profiled::new(Kind::Tunnel, tunnel.run()).await;
        self.count_tunnelled(server, &report);
        if let Some(log) = self.log.as_deref_mut() {
            log.tunnelled(&report);
        }
        let (up, down) = (report.up, report.down);
        match report.ending {
            Ending::Closed => {
                debug!(up, down, "tunnel closed");
                Next::Close
            }
            Ending::Timeout(side) => {
                debug!(up, down, ?side, "tunnel inactive beyond its timeout");
                Next::Close
            }
            Ending::Failed(side, error) => {
                debug!(up, down, ?side, %error, "tunnel failed");
                if side == Side::Client {
                    bump(&self.counters().client_aborts);
                    if let Some(tcp) = conn.stream.tcp() {
                        reset(tcp);
                    }
                } else {
                    if let Some(tcp) = self.io.socket() {
                        reset(tcp);
                    }
                }
                Next::Abort
            }
        }
    }

    /// Adds a tunnel's bytes to the counters of `server`, its backend and the frontend.
    fn count_tunnelled(&self, server: usize, report: &Report) {
        let stats = &self.w.stats;
        let b = self.backend;
        let (sc, bc, fc) = (
            &stats.servers[b][server],
            &stats.backends[b],
            &stats.frontends[self.frontend],
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
}
