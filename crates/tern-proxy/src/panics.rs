//! Tasks that survive their own panics: a panic ends the connection (or stream) whose task it
//! was, is logged and counted, and the worker goes on serving every other connection.
//!
//! No input is meant to panic the data path (the parsers are fuzzed, and external data is never
//! unwrapped), but a worker serves thousands of connections on one thread: a bug reached by one
//! of them must cost that one only, and must not go unnoticed. tokio already catches a task's
//! panic and keeps the event loop running; what it does not do is say so anywhere an operator
//! looks. [`Guarded`] wraps each connection's (and HTTP/2 stream's) future in `catch_unwind`,
//! logs the message at error level, and counts it in the frontend's (or, for an HTTP/2
//! connection to a server, the backend's) `panics` counter.
//!
//! The task's state is dropped after the panic, so whatever it held (connection slots, buffers,
//! a server slot) is given back by its guards as on any other end. Asserting unwind safety is
//! what tokio's own catch does too: a panic in the middle of changing the worker's shared
//! state (balancers, pools, behind `RefCell`s; a `RefCell` borrowed at the time is released by
//! the unwinding) could leave that state odd, and the shared mutexes ignore poisoning
//! (`exchange/servers.rs`). The guard does not make that worse; the count and the log line make
//! it visible.
//!
//! Debug builds also carry [`trigger`], the only way the tests have to make a task panic.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;
use tracing::error;

use crate::stats::{bump, WorkerStats};

/// Where a panic is counted. Indices are `u32`, as [`Task`] is a byte: the guard is part of
/// every connection's task, whose size each idle connection pays (ARCHITECTURE.md, "Session").
#[derive(Debug, Clone, Copy)]
pub(crate) enum Place {
    /// A client connection, or one of its HTTP/2 streams, of this frontend.
    Frontend(u32),
    /// An HTTP/2 connection to a server of this backend.
    Backend(u32),
}

impl Place {
    /// A task of frontend `index` (an index past `u32` counts nowhere, as one out of range).
    pub(crate) fn frontend(index: usize) -> Place {
        Place::Frontend(u32::try_from(index).unwrap_or(u32::MAX))
    }

    /// A task of backend `index`.
    pub(crate) fn backend(index: usize) -> Place {
        Place::Backend(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

/// What a guarded task serves, named in the log line of its panic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Task {
    Connection,
    Handshake,
    Http2Stream,
    Http2ServerConnection,
    #[cfg(test)]
    Test,
}

impl Task {
    fn name(self) -> &'static str {
        match self {
            Task::Connection => "connection",
            Task::Handshake => "handshake",
            Task::Http2Stream => "HTTP/2 stream",
            Task::Http2ServerConnection => "HTTP/2 server connection",
            #[cfg(test)]
            Task::Test => "test",
        }
    }
}

pin_project! {
    /// A future whose panic is caught, logged and counted; it then completes with `()`.
    #[must_use = "futures do nothing unless polled"]
    pub(crate) struct Guarded<F> {
        #[pin]
        inner: F,
        stats: Arc<WorkerStats>,
        place: Place,
        what: Task,
        // Set once the inner future panicked: it is never polled again.
        done: bool,
    }
}

impl<F> std::fmt::Debug for Guarded<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guarded")
            .field("place", &self.place)
            .field("what", &self.what)
            .finish_non_exhaustive()
    }
}

impl<F: Future<Output = ()>> Guarded<F> {
    /// Wraps `inner`, a task serving `what` (for the log line), counted under `place`.
    pub(crate) fn new(stats: &Arc<WorkerStats>, place: Place, what: Task, inner: F) -> Self {
        Self {
            inner,
            stats: Arc::clone(stats),
            place,
            what,
            done: false,
        }
    }
}

impl<F: Future<Output = ()>> Future for Guarded<F> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.project();
        if *this.done {
            return Poll::Ready(());
        }
        let inner = this.inner;
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(poll) => poll,
            Err(payload) => {
                *this.done = true;
                let counter = match *this.place {
                    Place::Frontend(f) => this.stats.frontends.get(f as usize).map(|c| &c.panics),
                    Place::Backend(b) => this.stats.backends.get(b as usize).map(|c| &c.panics),
                };
                if let Some(counter) = counter {
                    bump(counter);
                }
                error!(
                    task = this.what.name(),
                    place = ?this.place,
                    panic = message(payload.as_ref()),
                    "a task panicked: its connection is closed, the worker goes on"
                );
                Poll::Ready(())
            }
        }
    }
}

/// The text of a panic's payload (`panic!` with a literal or a formatted message).
fn message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(not a string)"
    }
}

/// Environment variable naming a request target that panics the task serving it, in debug
/// builds only (`cargo build` without `--release`): the tests' way to prove that a panic is
/// contained. Release builds have no such code.
#[cfg(debug_assertions)]
pub(crate) const TRIGGER_ENV: &str = "TERN_DEBUG_PANIC_TARGET";

/// Panics when `target` is the request target named by [`TRIGGER_ENV`] (debug builds only).
#[cfg(debug_assertions)]
pub(crate) fn trigger(target: &[u8]) {
    static NAMED: std::sync::OnceLock<Option<Vec<u8>>> = std::sync::OnceLock::new();
    let named = NAMED
        .get_or_init(|| std::env::var_os(TRIGGER_ENV).map(std::ffi::OsString::into_encoded_bytes));
    if named.as_deref() == Some(target) {
        panic!("{TRIGGER_ENV} asked for a panic on this request");
    }
}

#[cfg(test)]
mod tests;
