//! A budget of control frames per HTTP/2 connection, against floods of frames that carry no
//! request: SETTINGS (CVE-2019-9515), PING (CVE-2019-9512), WINDOW_UPDATE, PRIORITY
//! (CVE-2019-9516's kin), RST_STREAM on closed streams, GOAWAY and frames of unknown types.
//!
//! The `h2` crate answers each of these correctly and with bounded memory (one PING ack and one
//! SETTINGS ack pending at most; it stops reading while it cannot write them), but forever: a
//! client that reads the answers keeps tern busy with 9- to 17-byte frames, 100,000 PINGs in
//! 1.3 s of one core, until it tires. What the crate does bound already, tern leaves to it:
//! CONTINUATION floods and header lists (`max_header_list_size`), empty and tiny DATA frames
//! (100 empty ones per connection), streams reset before they are accepted.
//!
//! [`FloodGuard`] sits between the `h2` connection and the client's bytes. It reads the 9-byte
//! frame headers as the bytes pass in each direction (no copy, no decoding) and holds the
//! client to: **control frames received ≤ `max_control_frames` + one per HEADERS frame
//! received + two per DATA frame sent.** The HEADERS credit lets each stream have its PRIORITY
//! or RST_STREAM; the DATA credit is the stream and connection WINDOW_UPDATEs a client returns
//! for tern's data, however small its windows. A client over budget is marked in
//! [`ControlBudget`]; the connection task then ends the connection with GOAWAY
//! (ENHANCE_YOUR_CALM) and counts it in `h2_errors`, and the guard reads nothing more meanwhile.
//! Work per connection is then bounded by the work it asked for, as HAProxy's "glitches"
//! counter and Envoy's per-frame limits do.
//!
//! Within that budget a flood is also **paced**, so that it cannot hold the worker while other
//! connections wait: once a client has spent more than [`PACED_AFTER`] control frames of its
//! unearned allowance (a browser spends a handful), each turn of its connection task reads at
//! most [`PACED_READ`] bytes (a few dozen small frames), then yields until the worker has
//! polled its sockets again. Unpaced, the `h2` crate answered a batch of 200 SETTINGS frames in
//! one turn, and a well-behaved client's p99 on another connection rose from 0.6 ms to 2.2 ms
//! (`bench/h2-attacks.sh`). Clients within the allowance are never paced.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// RFC 9113 frame types (§6) the budget tells apart.
const DATA: u8 = 0x0;
const HEADERS: u8 = 0x1;
const PUSH_PROMISE: u8 = 0x5;
const CONTINUATION: u8 = 0x9;

/// The client connection preface (RFC 9113 §3.4) that precedes the client's first frame.
const PREFACE_LEN: usize = 24;

/// Frame header length (RFC 9113 §4.1).
const HEAD_LEN: usize = 9;

/// Control frames of its unearned allowance a client may spend before its reads are paced.
const PACED_AFTER: u64 = 64;

/// The most bytes a paced connection reads per turn: about 20 SETTINGS or PING frames.
const PACED_READ: usize = 384;

/// What a connection's client spent and earned, shared by the guard and the connection task.
#[derive(Debug)]
pub(crate) struct ControlBudget {
    /// Control frames received beyond which the client is over budget.
    allowed: Cell<u64>,
    /// Of `allowed`, what the client earned (by requests, and by the data tern sent).
    earned: Cell<u64>,
    /// Control frames received.
    spent: Cell<u64>,
    /// The connection task, to wake when the client goes over budget.
    waker: RefCell<Option<Waker>>,
}

impl ControlBudget {
    pub(crate) fn new(max_control_frames: u64) -> Rc<Self> {
        Rc::new(ControlBudget {
            allowed: Cell::new(max_control_frames),
            earned: Cell::new(0),
            spent: Cell::new(0),
            waker: RefCell::new(None),
        })
    }

    /// Whether the client sent more control frames than it may; registers `cx` to be woken
    /// when it does.
    pub(crate) fn poll_exceeded(&self, cx: &mut Context<'_>) -> bool {
        if self.exceeded() {
            return true;
        }
        let mut waker = self.waker.borrow_mut();
        if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waker = Some(cx.waker().clone());
        }
        false
    }

    fn exceeded(&self) -> bool {
        self.spent.get() > self.allowed.get()
    }

    fn earn(&self, frames: u64) {
        self.allowed.set(self.allowed.get().saturating_add(frames));
        self.earned.set(self.earned.get().saturating_add(frames));
    }

    /// Whether the client spent more than [`PACED_AFTER`] control frames it did not earn.
    fn paced(&self) -> bool {
        self.spent.get().saturating_sub(self.earned.get()) > PACED_AFTER
    }

    fn spend(&self) {
        self.spent.set(self.spent.get() + 1);
        if self.exceeded() {
            if let Some(waker) = self.waker.borrow_mut().take() {
                waker.wake();
            }
        }
    }

    /// Accounts a frame the client sent; returns whether the client is still within budget.
    fn received(&self, kind: u8) -> bool {
        match kind {
            HEADERS => self.earn(1),
            // DATA's floods are the `h2` crate's; CONTINUATION and PUSH_PROMISE are header
            // blocks it bounds (or refuses, for PUSH_PROMISE from a client).
            DATA | CONTINUATION | PUSH_PROMISE => {}
            _ => self.spend(),
        }
        !self.exceeded()
    }

    /// Accounts a frame tern sent.
    fn sent(&self, kind: u8) {
        if kind == DATA {
            self.earn(2);
        }
    }
}

/// Where a byte stream of frames stands: the bytes still to skip (a preface or a payload),
/// then the next frame header being gathered.
#[derive(Debug)]
struct FrameCursor {
    skip: usize,
    head: [u8; HEAD_LEN],
    have: usize,
}

impl FrameCursor {
    fn new(skip: usize) -> Self {
        FrameCursor {
            skip,
            head: [0; HEAD_LEN],
            have: 0,
        }
    }

    /// Follows `bytes`, calling `on_frame` with the type of each frame whose header ends in them
    /// until it returns `false`; returns how many bytes were followed (all, or up to the end of
    /// that frame's header).
    fn feed(&mut self, bytes: &[u8], mut on_frame: impl FnMut(u8) -> bool) -> usize {
        let mut at = 0;
        while at < bytes.len() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len() - at);
                self.skip -= n;
                at += n;
                continue;
            }
            let n = (HEAD_LEN - self.have).min(bytes.len() - at);
            self.head[self.have..self.have + n].copy_from_slice(&bytes[at..at + n]);
            self.have += n;
            at += n;
            if self.have == HEAD_LEN {
                let [a, b, c, kind, ..] = self.head;
                self.skip = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
                self.have = 0;
                if !on_frame(kind) {
                    break;
                }
            }
        }
        at
    }
}

/// A client connection's byte stream, with its frames accounted in a [`ControlBudget`].
#[derive(Debug)]
pub(crate) struct FloodGuard<T> {
    io: T,
    budget: Rc<ControlBudget>,
    received: FrameCursor,
    sent: FrameCursor,
    /// A paced read was made in this turn: the next read yields first.
    turn_used: bool,
}

impl<T> FloodGuard<T> {
    /// Guards `io` from its first byte: the client's preface, then frames both ways.
    pub(crate) fn new(io: T, budget: Rc<ControlBudget>) -> Self {
        FloodGuard {
            io,
            budget,
            received: FrameCursor::new(PREFACE_LEN),
            sent: FrameCursor::new(0),
            turn_used: false,
        }
    }

    fn account_sent(&mut self, bufs: &[IoSlice<'_>], mut n: usize) {
        let budget = &self.budget;
        for buf in bufs {
            if n == 0 {
                break;
            }
            let part = &buf[..n.min(buf.len())];
            n -= part.len();
            self.sent.feed(part, |kind| {
                budget.sent(kind);
                true
            });
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for FloodGuard<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.budget.exceeded() {
            // Over budget: nothing more is read while the connection task ends the connection.
            return Poll::Pending;
        }
        if !this.budget.paced() {
            return this.read_into(cx, buf);
        }
        if std::mem::take(&mut this.turn_used) {
            yield_turn(cx);
            return Poll::Pending;
        }
        let limit = PACED_READ.min(buf.remaining());
        let mut small = ReadBuf::new(buf.initialize_unfilled_to(limit));
        std::task::ready!(this.read_into(cx, &mut small))?;
        let n = small.filled().len();
        buf.advance(n);
        this.turn_used = true;
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncRead + Unpin> FloodGuard<T> {
    /// Reads into `buf`, accounting the frames; the frame that went over budget and what
    /// follows it never reach the `h2` crate.
    fn read_into(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        let budget = &self.budget;
        let used = self
            .received
            .feed(&buf.filled()[before..], |kind| budget.received(kind));
        buf.set_filled(before + used);
        Poll::Ready(Ok(()))
    }
}

/// Ends the task's turn: it is woken again once the worker has polled its sockets, so the
/// connections that became ready meanwhile are served first (`tokio::task::yield_now`'s
/// deferral, registered by its first poll; the future may be dropped after that).
fn yield_turn(cx: &mut Context<'_>) {
    let mut yielded = std::pin::pin!(tokio::task::yield_now());
    let _ = yielded.as_mut().poll(cx);
}

impl<T: AsyncWrite + Unpin> AsyncWrite for FloodGuard<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = std::task::ready!(Pin::new(&mut this.io).poll_write(cx, buf))?;
        this.account_sent(&[IoSlice::new(buf)], n);
        Poll::Ready(Ok(n))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let n = std::task::ready!(Pin::new(&mut this.io).poll_write_vectored(cx, bufs))?;
        this.account_sent(bufs, n);
        Poll::Ready(Ok(n))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
