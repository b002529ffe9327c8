//! A byte tunnel between a client stream and a server stream: what an HTTP/1.1 connection
//! becomes after a `101 Switching Protocols` (`http1/switch.rs`), the whole life of a TCP-mode
//! session (`tcp/relay.rs`), and an HTTP/2 stream carrying a WebSocket (RFC 8441), since it
//! knows no protocol.
//!
//! A [`Tunnel`] is driven from the caller's task, both directions in one `poll`, as the relay
//! is. Each end is any `AsyncRead + AsyncWrite` with the read buffer that holds what was
//! already read from it: a client's first frames pipelined right behind its request head, a
//! server's frames sent with its `101`. Those bytes leave first.
//!
//! - **One buffer per direction, backpressure both ways.** Bytes read from an end wait in that
//!   end's buffer until written to the other end (and flushed: a TLS stream sends on flush);
//!   the buffer is read into again only once empty. Memory stays at the two buffers, and an end
//!   that does not take bytes stops the reads from the other one.
//! - **Half-close.** An end of stream read from one end shuts down the sending direction towards
//!   the other once the buffer is written (`poll_shutdown`: a FIN on TCP, close_notify on TLS);
//!   the other direction goes on until it ends too, then the tunnel is [`Ending::Closed`]. An I/O
//!   error on either end (a reset) ends it at once, naming the end that failed: the caller
//!   closes or resets the other one.
//! - **Timeouts** (HAProxy's `timeout tunnel`, else its client and server timeouts, one per
//!   end). The tunnel expires when neither direction moved for the shorter of the two, which is
//!   how HAProxy behaves without `option independent-streams`: bytes written to an end count as
//!   activity on that end too, so either direction keeps both ends alive. A direction whose
//!   receiver does not take its bytes also expires after the receiver's timeout, even while the
//!   other direction moves (HAProxy's write timeout): a client that stops reading and keeps
//!   sending does not hold a buffer forever. One timer, polled only when both directions wait.
//!   Once the direction towards an end is closed (its peer finished and the FIN or close_notify
//!   was passed on), that end's `fin` timeout replaces its own, when set (HAProxy's `timeout
//!   client-fin` and `server-fin`): a peer that half-closed and then vanished, or one that
//!   never answers the close, is let go sooner than a live session.
//!
//! - **`splice(2)` between plain sockets** ([`Tunnel::spliced`], TCP mode without TLS on either
//!   side). A direction starts by copying through its buffer and switches to a pipe of its own
//!   once a read fills the buffer: from then on its bytes go socket to pipe to socket inside the
//!   kernel. Short exchanges never pay for the pipe (two descriptors, three system calls); a
//!   bulk transfer costs a third less CPU per byte (BENCHMARKS.md, "TCP mode"). Between plain
//!   sockets, the last end of stream is not passed on with `shutdown(2)`: the close that ends
//!   the tunnel sends the FIN.
//!
//! Reads wait until the buffer (or pipe) is empty, as in the relay (read, then write, in turn).
//! A ring buffer would let a read overlap the write of earlier bytes; it is not measured, and
//! messages of interactive protocols mostly fit one buffer anyway.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::buffer::Buffer;
use crate::timer::{Idle, Timer};
use splice::Pipe;

// splice(2) between two plain TCP sockets.
mod splice;

/// One end of a tunnel.
pub(crate) struct End<'a, S> {
    pub io: &'a mut S,
    /// What was read from this end and is not yet written to the other (bytes already there
    /// leave first).
    pub buf: &'a mut Buffer,
    /// Inactivity allowed on this end (see the module docs).
    pub timeout: Duration,
    /// Inactivity allowed on this end once the direction towards it is closed, in place of
    /// `timeout` (HAProxy's `timeout client-fin` / `server-fin`); `None`: `timeout` stays.
    pub fin: Option<Duration>,
}

/// Which end of the tunnel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    Client,
    Server,
}

/// How a tunnel ended.
#[derive(Debug)]
pub(crate) enum Ending {
    /// Both ends closed their sending side, and each close was passed on.
    Closed,
    /// Inactive beyond this end's timeout.
    Timeout(Side),
    /// An I/O error (usually a reset) on this end.
    Failed(Side, io::Error),
}

/// What a tunnel reports when it ends.
#[derive(Debug)]
pub(crate) struct Report {
    /// Bytes written to the server (from the client).
    pub up: u64,
    /// Bytes written to the client (from the server).
    pub down: u64,
    pub ending: Ending,
}

/// What a direction waits for after a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wait {
    /// The sender: nothing to write, the read is pending.
    Sender,
    /// The receiver: a write, flush or shutdown is pending.
    Receiver,
    /// Not a wait: a read filled the buffer, and the direction may go on with `splice(2)`
    /// (seen only inside [`pump`]).
    Switch,
}

/// The state of one direction: from one end's reads to the other end's writes.
#[derive(Debug, Default)]
struct Flow {
    /// End of stream read from the sender.
    eof: bool,
    /// Bytes were written to the receiver since its last flush.
    unflushed: bool,
    /// The receiver's sending side is shut down: nothing more goes this way.
    done: bool,
    /// Bytes written to the receiver.
    bytes: u64,
    /// Something was read or written during the last poll.
    moved: bool,
    /// Since when the receiver has not taken what is pending for it.
    stalled: Idle,
    /// Both ends are plain sockets: the direction may switch to `splice(2)`.
    may_splice: bool,
    /// Both ends are plain sockets and the other direction is over: the end of stream needs
    /// no `shutdown(2)`, the close that follows the tunnel sends the FIN.
    closes_last: bool,
    /// A read filled the buffer (a bulk transfer, worth a pipe).
    big: bool,
    /// The direction's pipe, once it switched to `splice(2)`.
    pipe: Option<Pipe>,
}

/// Which end of a direction failed.
enum Fault {
    Sender(io::Error),
    Receiver(io::Error),
}

impl Flow {
    /// Moves bytes from `from` (through `buf`) to `to` until both sides would wait or the
    /// direction is over; what it waits for.
    fn pump<R, W>(
        &mut self,
        cx: &mut Context<'_>,
        from: &mut R,
        buf: &mut Buffer,
        to: &mut W,
    ) -> Result<Option<Wait>, Fault>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        loop {
            if self.done {
                return Ok(None);
            }
            if !buf.is_empty() {
                match Pin::new(&mut *to).poll_write(cx, buf.data()) {
                    Poll::Ready(Ok(0)) => {
                        return Err(Fault::Receiver(io::ErrorKind::WriteZero.into()))
                    }
                    Poll::Ready(Ok(n)) => {
                        buf.consume(n);
                        self.bytes += n as u64;
                        self.unflushed = true;
                        self.moved = true;
                        self.stalled.progress();
                    }
                    Poll::Ready(Err(e)) => return Err(Fault::Receiver(e)),
                    Poll::Pending => return Ok(Some(Wait::Receiver)),
                }
                continue;
            }
            if self.unflushed {
                match Pin::new(&mut *to).poll_flush(cx) {
                    Poll::Ready(Ok(())) => self.unflushed = false,
                    Poll::Ready(Err(e)) => return Err(Fault::Receiver(e)),
                    Poll::Pending => return Ok(Some(Wait::Receiver)),
                }
            }
            if self.eof && self.closes_last {
                self.done = true;
                return Ok(None);
            }
            if self.eof {
                return match Pin::new(&mut *to).poll_shutdown(cx) {
                    Poll::Ready(Ok(())) => {
                        self.done = true;
                        Ok(None)
                    }
                    Poll::Ready(Err(e)) => Err(Fault::Receiver(e)),
                    Poll::Pending => Ok(Some(Wait::Receiver)),
                };
            }
            if self.big {
                return Ok(Some(Wait::Switch));
            }
            // The buffer is empty, so it never grows: reads go into its working size.
            match buf.poll_read_from(from, cx) {
                Poll::Ready(Ok(0)) => self.eof = true,
                Poll::Ready(Ok(n)) => {
                    self.moved = true;
                    self.big = self.may_splice && n == buf.capacity();
                }
                Poll::Ready(Err(e)) => return Err(Fault::Sender(e)),
                Poll::Pending => return Ok(Some(Wait::Sender)),
            }
        }
    }

    /// [`Flow::pump`] through `pipe` with `splice(2)`, from socket to socket; `buf` must be
    /// empty (bytes read before the tunnel leave through [`Flow::pump`] first).
    fn pump_spliced(
        &mut self,
        cx: &mut Context<'_>,
        from: &TcpStream,
        pipe: &mut Pipe,
        to: &TcpStream,
    ) -> Result<Option<Wait>, Fault> {
        loop {
            if self.done {
                return Ok(None);
            }
            if !pipe.is_empty() {
                match pipe.poll_drain(to, cx) {
                    Poll::Ready(Ok(n)) => {
                        self.bytes += n as u64;
                        self.moved = true;
                        self.stalled.progress();
                    }
                    Poll::Ready(Err(e)) => return Err(Fault::Receiver(e)),
                    Poll::Pending => return Ok(Some(Wait::Receiver)),
                }
                continue;
            }
            if self.eof && self.closes_last {
                self.done = true;
                return Ok(None);
            }
            if self.eof {
                let shut = socket2::SockRef::from(to).shutdown(std::net::Shutdown::Write);
                return match shut {
                    Ok(()) => {
                        self.done = true;
                        Ok(None)
                    }
                    Err(e) => Err(Fault::Receiver(e)),
                };
            }
            match pipe.poll_fill(from, cx) {
                Poll::Ready(Ok(0)) => self.eof = true,
                Poll::Ready(Ok(_)) => self.moved = true,
                Poll::Ready(Err(e)) => return Err(Fault::Sender(e)),
                Poll::Pending => return Ok(Some(Wait::Sender)),
            }
        }
    }

    /// The deadline of a stalled receiver whose timeout is `timeout`, if the direction waits on
    /// it (otherwise the stall is over).
    fn stall_deadline(&mut self, wait: Option<Wait>, timeout: Duration) -> Option<Instant> {
        if wait == Some(Wait::Receiver) {
            Some(self.stalled.deadline(timeout))
        } else {
            self.stalled.progress();
            None
        }
    }
}

/// A tunnel in progress (see the module docs).
pub(crate) struct Tunnel<'a, C, S> {
    client: End<'a, C>,
    server: End<'a, S>,
    timer: &'a mut Timer,
    /// Client to server.
    up: Flow,
    /// Server to client.
    down: Flow,
    /// Since when neither direction moved.
    idle: Idle,
    /// Each end's plain socket, for `splice(2)` (see [`Tunnel::spliced`]).
    sockets: Option<(Socket<C>, Socket<S>)>,
}

/// An end's plain TCP socket, if it is one (the ends are borrowed by the tunnel already).
type Socket<T> = fn(&T) -> Option<&TcpStream>;

impl<'a, C, S> Tunnel<'a, C, S>
where
    C: AsyncRead + AsyncWrite + Unpin,
    S: AsyncRead + AsyncWrite + Unpin,
{
    /// A tunnel between `client` and `server`, its inactivity timed with `timer`.
    pub(crate) fn new(client: End<'a, C>, server: End<'a, S>, timer: &'a mut Timer) -> Self {
        Self {
            client,
            server,
            timer,
            up: Flow::default(),
            down: Flow::default(),
            idle: Idle::default(),
            sockets: None,
        }
    }

    /// Lets each direction switch to `splice(2)` once a read fills its buffer (a bulk
    /// transfer: a pipe costs two descriptors and three system calls, more than a short
    /// exchange saves), when both ends are plain TCP sockets (`client` and `server` give them).
    /// A direction that cannot have its pipe (descriptors exhausted) goes on copying.
    pub(crate) fn spliced(mut self, client: Socket<C>, server: Socket<S>) -> Self {
        if client(self.client.io).is_some() && server(self.server.io).is_some() {
            self.sockets = Some((client, server));
            self.up.may_splice = true;
            self.down.may_splice = true;
        }
        self
    }

    /// Relays both ways until both ends closed, one failed, or the tunnel expired.
    pub(crate) async fn run(mut self) -> Report {
        std::future::poll_fn(|cx| self.poll(cx)).await
    }

    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Report> {
        let (c, s) = (&mut self.client, &mut self.server);
        let (up_sockets, down_sockets) = match self.sockets {
            Some((cs, ss)) => (Some((cs, ss)), Some((ss, cs))),
            None => (None, None),
        };
        let plain = self.sockets.is_some();
        self.up.closes_last = plain && self.down.done;
        let up = match pump(&mut self.up, cx, c.io, c.buf, s.io, up_sockets) {
            Ok(wait) => wait,
            Err(Fault::Sender(e)) => return Poll::Ready(self.end(Ending::Failed(Side::Client, e))),
            Err(Fault::Receiver(e)) => {
                return Poll::Ready(self.end(Ending::Failed(Side::Server, e)))
            }
        };
        self.down.closes_last = plain && self.up.done;
        let down = match pump(&mut self.down, cx, s.io, s.buf, c.io, down_sockets) {
            Ok(wait) => wait,
            Err(Fault::Sender(e)) => return Poll::Ready(self.end(Ending::Failed(Side::Server, e))),
            Err(Fault::Receiver(e)) => {
                return Poll::Ready(self.end(Ending::Failed(Side::Client, e)))
            }
        };
        self.settle(cx, up, down)
    }

    /// After both directions were pumped: closed, expired, or waiting.
    fn settle(
        &mut self,
        cx: &mut Context<'_>,
        up: Option<Wait>,
        down: Option<Wait>,
    ) -> Poll<Report> {
        if self.up.done && self.down.done {
            return Poll::Ready(self.end(Ending::Closed));
        }
        match self.poll_timer(cx, up, down) {
            Some(side) => Poll::Ready(self.end(Ending::Timeout(side))),
            None => Poll::Pending,
        }
    }

    /// Polls the timer for the earliest deadline (see the module docs); the end whose timeout
    /// expired, if one did.
    fn poll_timer(
        &mut self,
        cx: &mut Context<'_>,
        up: Option<Wait>,
        down: Option<Wait>,
    ) -> Option<Side> {
        let ct = finishing(&self.client, self.down.done);
        let st = finishing(&self.server, self.up.done);
        if std::mem::take(&mut self.up.moved) | std::mem::take(&mut self.down.moved) {
            self.idle.progress();
        }
        let shorter = if ct <= st { Side::Client } else { Side::Server };
        let mut next = (self.idle.deadline(ct.min(st)), shorter);
        let stalls = [
            (self.up.stall_deadline(up, st), Side::Server),
            (self.down.stall_deadline(down, ct), Side::Client),
        ];
        for (deadline, side) in stalls {
            if let Some(at) = deadline.filter(|at| *at < next.0) {
                next = (at, side);
            }
        }
        self.timer.poll_at(next.0, cx).is_ready().then_some(next.1)
    }

    fn end(&self, ending: Ending) -> Report {
        Report {
            up: self.up.bytes,
            down: self.down.bytes,
            ending,
        }
    }
}

/// The timeout of `end`: its `fin` once the direction towards it is `closed`, if set.
fn finishing<S>(end: &End<'_, S>, closed: bool) -> Duration {
    match end.fin {
        Some(fin) if closed => fin,
        _ => end.timeout,
    }
}

/// Pumps one direction: copying through its buffer, or with `splice(2)` once it switched (its
/// buffer empty, so the bytes read before stay in order).
fn pump<R, W>(
    flow: &mut Flow,
    cx: &mut Context<'_>,
    from: &mut R,
    buf: &mut Buffer,
    to: &mut W,
    sockets: Option<(Socket<R>, Socket<W>)>,
) -> Result<Option<Wait>, Fault>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let spliced = sockets.filter(|_| flow.pipe.is_some() && buf.is_empty());
        if let Some((f, t)) = spliced {
            if let (Some(from), Some(to), Some(mut pipe)) = (f(from), t(to), flow.pipe.take()) {
                let wait = flow.pump_spliced(cx, from, &mut pipe, to);
                flow.pipe = Some(pipe);
                return wait;
            }
        }
        match flow.pump(cx, from, buf, to)? {
            Some(Wait::Switch) => {
                flow.big = false;
                match Pipe::new() {
                    Ok(pipe) => flow.pipe = Some(pipe),
                    Err(_) => flow.may_splice = false,
                }
            }
            wait => return Ok(wait),
        }
    }
}

/// Makes the coming close of `tcp` a reset (RST): the other end of a tunnel failed, and its peer
/// must not take the end of the tunnel for an orderly one.
pub(crate) fn reset(tcp: &tokio::net::TcpStream) {
    let _ = socket2::SockRef::from(tcp).set_linger(Some(Duration::ZERO));
}

#[cfg(test)]
mod tests;
