//! The wait for a plain HTTP/1.1 client's first bytes, before its session exists.
//!
//! A connection that has sent nothing yet needs its socket, a timer and a way to hear of a
//! stop: not the HTTP/1.1 session (about 1.6 KiB: head, edits, forwarding, the loop's state),
//! which is only built once there is something to read. Until then the connection costs its
//! task, its socket's registration and a timer, about 1 KiB, less than HAProxy 2.6 and 3.0
//! for the same connection (`bench/idle-memory.sh`, mode `plain`): what a flood of idle
//! connections, or browsers that open connections ahead of their requests, hold.
//!
//! The wait decides nothing: whatever ends it (bytes, the client's close or an error, the
//! `http_request` deadline, a change of the worker's mode) hands the connection to the session,
//! with the bytes read, and the session reads on, times out or closes exactly as if it had
//! waited itself, since it counts its deadline from the same accept.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tern_config::Frontend;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::futures::Notified;
use tokio::time::Instant;

use crate::http1::conn::IDLE_READ;
use crate::lifecycle::Lifecycle;
use crate::timer::Timer;

pin_project! {
    /// Resolves when `stream` has bytes for the session (returned, at most the frontend's
    /// `max_head_size`), or it closed or failed, or the frontend's `http_request` timeout
    /// counted from `since` passed, or the worker's mode changed (a drain or a stop); in
    /// those cases nothing was read and the session finds out for itself.
    ///
    /// A future by hand rather than an `async fn`: the connection's task holds it inline, and
    /// this is half the size. It keeps the start of the wait and reads its limits from the
    /// frontend rather than keeping a deadline beside a start: 16 bytes, but the task is
    /// sized in steps of 128 (`listen/session.rs`).
    #[derive(Debug)]
    pub(crate) struct Wait<'a> {
        #[pin]
        changed: Notified<'a>,
        life: &'a Lifecycle,
        stream: &'a mut TcpStream,
        frontend: &'a Frontend,
        timer: Timer,
        since: Instant,
        listening: bool,
    }
}

/// What the wait came to: the bytes read (none when something else ended it), and when it
/// began, which the session counts its `http_request` timeout from.
#[derive(Debug)]
pub(crate) struct First {
    pub bytes: Box<[u8]>,
    pub since: Instant,
}

/// Waits, from now, for a plain client's first bytes (see [`Wait`]).
pub(crate) fn wait<'a>(
    life: &'a Lifecycle,
    stream: &'a mut TcpStream,
    frontend: &'a Frontend,
) -> Wait<'a> {
    Wait {
        changed: life.changed(),
        life,
        stream,
        frontend,
        timer: Timer::default(),
        since: Instant::now(),
        listening: false,
    }
}

/// A wait that read nothing.
fn nothing(since: Instant) -> First {
    First {
        bytes: Box::default(),
        since,
    }
}

impl Future for Wait<'_> {
    type Output = First;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<First> {
        let mut this = self.project();
        if !*this.listening {
            // Registered before the mode is read, so a change between the two still wakes
            // the wait.
            this.changed.as_mut().enable();
            *this.listening = true;
            if this.life.is_stopping() {
                return Poll::Ready(nothing(*this.since));
            }
        }
        // On the stack, not in the future: copied out only when something arrived.
        let mut first = [0u8; IDLE_READ];
        let max = this.frontend.limits.max_head_size.clamp(1, IDLE_READ);
        let mut rb = ReadBuf::new(&mut first[..max]);
        if let Poll::Ready(read) = Pin::new(&mut **this.stream).poll_read(cx, &mut rb) {
            // An error or the end of the stream: the session's own read will see it again.
            let bytes = match read {
                Ok(()) => rb.filled().into(),
                Err(_) => Box::default(),
            };
            let since = *this.since;
            return Poll::Ready(First { bytes, since });
        }
        let deadline = *this.since + this.frontend.timeouts.http_request;
        if this.changed.poll(cx).is_ready() || this.timer.poll_at(deadline, cx).is_ready() {
            return Poll::Ready(nothing(*this.since));
        }
        Poll::Pending
    }
}
