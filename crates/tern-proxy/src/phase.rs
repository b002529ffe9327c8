//! Where a client connection is in its life: waiting for a request head, or serving streams.
//!
//! hyper's own header timeout covers idle time and head reading as one span and closes without a
//! response, but operators expect HAProxy's three distinct timeouts: `http_request` (the head must
//! arrive in time, else 408), `keep_alive` (idle between requests, closed silently) and `client`
//! (inactivity during a stream). The I/O wrapper ([`crate::client_io`]) needs to know which one
//! applies, and only the request handler knows when a stream starts and ends, so the two share
//! this small per-connection state. It lives on one worker thread only (`Rc`, `Cell`).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Waker;
use tokio::time::Instant;

/// Per-connection phase shared by the I/O wrapper and the request handler.
#[derive(Debug)]
pub(crate) struct Phase {
    /// Live stream guards: a stream holds one for its response body and one for its request
    /// body, so it ends when both are done (more than one stream only with pipelining).
    active: Cell<u32>,
    /// Times the connection went idle after a stream (0 until the first request is over).
    served: Cell<u64>,
    /// When the connection last became idle (accept for the first request).
    idle_since: Cell<Instant>,
    /// When the first byte of the next request head arrived, if it has.
    head_started: Cell<Option<Instant>>,
    /// The reader parked while a stream was active, woken when the connection becomes idle so
    /// the idle timers get armed.
    parked_reader: RefCell<Option<Waker>>,
}

impl Phase {
    pub(crate) fn new(now: Instant) -> Rc<Self> {
        Rc::new(Self {
            active: Cell::new(0),
            served: Cell::new(0),
            idle_since: Cell::new(now),
            head_started: Cell::new(None),
            parked_reader: RefCell::new(None),
        })
    }

    /// Marks the start of a stream. The stream lasts until the returned guard and every guard
    /// taken from it with [`StreamGuard::hold`] are dropped.
    pub(crate) fn start_stream(self: &Rc<Self>) -> StreamGuard {
        self.head_started.set(None);
        StreamGuard::new(self)
    }

    pub(crate) fn is_active(&self) -> bool {
        self.active.get() > 0
    }

    pub(crate) fn is_first_request(&self) -> bool {
        self.served.get() == 0
    }

    pub(crate) fn idle_since(&self) -> Instant {
        self.idle_since.get()
    }

    pub(crate) fn head_started(&self) -> Option<Instant> {
        self.head_started.get()
    }

    /// Records the arrival of request bytes while idle.
    pub(crate) fn saw_bytes(&self, now: Instant) {
        if self.active.get() == 0 && self.head_started.get().is_none() {
            self.head_started.set(Some(now));
        }
    }

    pub(crate) fn park_reader(&self, waker: &Waker) {
        let mut parked = self.parked_reader.borrow_mut();
        if !parked.as_ref().is_some_and(|w| w.will_wake(waker)) {
            *parked = Some(waker.clone());
        }
    }
}

/// Keeps a stream active while alive; the last one dropped ends the stream.
#[derive(Debug)]
pub(crate) struct StreamGuard {
    phase: Rc<Phase>,
}

impl StreamGuard {
    fn new(phase: &Rc<Phase>) -> Self {
        phase.active.set(phase.active.get() + 1);
        Self {
            phase: Rc::clone(phase),
        }
    }

    /// Another hold on the same stream (for the request body, next to the response body's).
    pub(crate) fn hold(&self) -> Self {
        Self::new(&self.phase)
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        let p = &self.phase;
        p.active.set(p.active.get().saturating_sub(1));
        if p.active.get() == 0 {
            p.served.set(p.served.get() + 1);
            p.idle_since.set(Instant::now());
            if let Some(w) = p.parked_reader.borrow_mut().take() {
                w.wake();
            }
        }
    }
}
