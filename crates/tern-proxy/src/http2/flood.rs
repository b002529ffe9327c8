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
//! Within that budget a flood is also **paced** (`pace.rs`): once a client has spent more than
//! [`PACED_AFTER`] control frames of its unearned allowance (a browser spends a handful), each
//! turn of its connection task reads at most [`pace::PACED`]'s few hundred bytes (a few dozen
//! small frames), then yields until the worker has polled its sockets again. Unpaced, the `h2`
//! crate answered a batch of 200 SETTINGS frames in one turn, and a well-behaved client's p99 on
//! another connection rose from 0.6 ms to 2.2 ms (`bench/h2-attacks.sh`). Every other client
//! has the open turn ([`pace::OPEN`]), which bounds header blocks and DATA alike. The guard
//! is where both are applied, since it already follows the frames as their bytes pass.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::pace::{self, Turn};

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
    /// Turns the guard ended at their read budget, not yet counted in the frontend's stats.
    yields: Cell<u64>,
}

impl ControlBudget {
    pub(crate) fn new(max_control_frames: u64) -> Rc<Self> {
        Rc::new(ControlBudget {
            allowed: Cell::new(max_control_frames),
            earned: Cell::new(0),
            spent: Cell::new(0),
            waker: RefCell::new(None),
            yields: Cell::new(0),
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

    /// The turns ended at their read budget since the last call (for `h2_yields`).
    pub(crate) fn take_yields(&self) -> u64 {
        self.yields.take()
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
    /// The bytes skipped are a header block's (the payload of HEADERS, CONTINUATION or
    /// PUSH_PROMISE).
    in_block: bool,
    head: [u8; HEAD_LEN],
    have: usize,
}

/// What [`FrameCursor::feed`] followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fed {
    /// Bytes followed.
    bytes: usize,
    /// Of them, header-block bytes.
    header: usize,
}

/// Whether a frame's payload is (part of) a header block.
fn is_header_block(kind: u8) -> bool {
    matches!(kind, HEADERS | CONTINUATION | PUSH_PROMISE)
}

impl FrameCursor {
    fn new(skip: usize) -> Self {
        FrameCursor {
            skip,
            in_block: false,
            head: [0; HEAD_LEN],
            have: 0,
        }
    }

    /// Bytes ahead that are surely not a header block's: the rest of the payload being skipped,
    /// when it is not one.
    fn other_ahead(&self) -> usize {
        if self.in_block {
            0
        } else {
            self.skip
        }
    }

    /// Follows `bytes`, calling `on_frame` with the type of each frame whose header ends in them
    /// until it returns `false`; returns how many bytes were followed (all, or up to the end of
    /// that frame's header), and how many of them were header block.
    fn feed(&mut self, bytes: &[u8], mut on_frame: impl FnMut(u8) -> bool) -> Fed {
        let mut at = 0;
        let mut header = 0;
        while at < bytes.len() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len() - at);
                self.skip -= n;
                at += n;
                if self.in_block {
                    header += n;
                }
                continue;
            }
            let n = (HEAD_LEN - self.have).min(bytes.len() - at);
            self.head[self.have..self.have + n].copy_from_slice(&bytes[at..at + n]);
            self.have += n;
            at += n;
            if self.have == HEAD_LEN {
                let [a, b, c, kind, ..] = self.head;
                self.skip = usize::from(a) << 16 | usize::from(b) << 8 | usize::from(c);
                self.in_block = is_header_block(kind);
                self.have = 0;
                if !on_frame(kind) {
                    break;
                }
            }
        }
        Fed { bytes: at, header }
    }
}

/// A client connection's byte stream, with its frames accounted in a [`ControlBudget`].
#[derive(Debug)]
pub(crate) struct FloodGuard<T> {
    io: T,
    budget: Rc<ControlBudget>,
    received: FrameCursor,
    sent: FrameCursor,
    /// What the connection task's current turn has read (`pace.rs`).
    turn: Turn,
}

impl<T> FloodGuard<T> {
    /// Guards `io` from its first byte: the client's preface, then frames both ways.
    pub(crate) fn new(io: T, budget: Rc<ControlBudget>) -> Self {
        FloodGuard {
            io,
            budget,
            received: FrameCursor::new(PREFACE_LEN),
            sent: FrameCursor::new(0),
            turn: Turn::default(),
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
        let limit = if this.budget.paced() {
            pace::PACED
        } else {
            pace::OPEN
        };
        let allowance = this.turn.allowance(limit, this.received.other_ahead());
        if allowance == 0 {
            // The turn has read its share: the next read starts the next turn.
            this.turn.end();
            this.budget.yields.set(this.budget.yields.get() + 1);
            yield_turn(cx);
            return Poll::Pending;
        }
        let polled = if buf.remaining() <= allowance {
            this.read_into(cx, buf)
        } else {
            // The turn's rest is smaller than the caller's buffer: that part is zeroed first.
            let mut part = ReadBuf::new(buf.initialize_unfilled_to(allowance));
            let polled = this.read_into(cx, &mut part);
            let n = part.filled().len();
            buf.advance(n);
            polled
        };
        match polled {
            Poll::Ready(Ok(fed)) => {
                this.turn.took(fed.bytes, fed.header);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                this.turn.end();
                Poll::Pending
            }
        }
    }
}

impl<T: AsyncRead + Unpin> FloodGuard<T> {
    /// Reads into `buf`, accounting the frames; the frame that went over budget and what
    /// follows it never reach the `h2` crate.
    fn read_into(&mut self, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<Fed>> {
        let before = buf.filled().len();
        std::task::ready!(Pin::new(&mut self.io).poll_read(cx, buf))?;
        let budget = &self.budget;
        let fed = self
            .received
            .feed(&buf.filled()[before..], |kind| budget.received(kind));
        buf.set_filled(before + fed.bytes);
        Poll::Ready(Ok(fed))
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
