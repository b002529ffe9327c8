//! [`Profiled`]: a future that times the polls of the future it wraps, and the wake-up latency
//! before them, for its [`Kind`].
//!
//! Nesting is tracked in a thread-local [`Frame`]: a poll starts a fresh frame, nested profiled
//! polls add their elapsed time to it, and at the end the poll charges its own time minus the
//! nested time, then adds its whole elapsed time to the enclosing frame.
//!
//! Only the outermost profiled future of a task (none is polled around it) wraps the waker: a
//! wake-up goes through one stamp whichever phase registered it, and nested phases (a relay,
//! made per request) allocate nothing. The phase the task was suspended in is the innermost
//! one that returned `Pending`; the outermost future remembers it, and charges the latency of
//! the next wake-up to it.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use pin_project_lite::pin_project;

use super::{clock, counters, enabled, Kind};

pin_project! {
    /// A future whose polls are counted and timed under `kind` while profiling is on.
    #[must_use = "futures do nothing unless polled"]
    pub(crate) struct Profiled<F> {
        #[pin]
        inner: F,
        kind: Kind,
        // Outermost only: the waker that stamps wake-ups (made on the first poll with
        // profiling on), and the phase the task is suspended in.
        wake: Option<Wrapped>,
        waiting: Kind,
    }
}

impl<F> std::fmt::Debug for Profiled<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiled")
            .field("kind", &self.kind)
            .finish()
    }
}

impl<F: Future> Profiled<F> {
    /// Wraps `inner`, whose polls count as `kind`.
    pub(crate) fn new(kind: Kind, inner: F) -> Self {
        Self {
            inner,
            kind,
            wake: None,
            waiting: kind,
        }
    }
}

impl<F: Future> Future for Profiled<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        // Off: one relaxed load (the clock is only looked up when on).
        let clock = if enabled() { clock::get() } else { None };
        let Some(clock) = clock else {
            // Off: the stamp would keep wake-ups of this period and charge them, hugely late,
            // to the first poll after profiling comes back on. A new one is made then.
            *this.wake = None;
            return this.inner.poll(cx);
        };
        let start = clock.raw();
        let outer = FRAME.replace(Frame {
            inside: true,
            ..Frame::default()
        });
        // Should the future panic (tokio catches it and the worker goes on), the thread's frame
        // is put back as it was, not left "inside" for every later poll.
        let unwind = Unwind(outer);
        let kind = *this.kind;
        let (result, woken) = if outer.inside {
            (this.inner.poll(cx), None)
        } else {
            let wrapped = Wrapped::current(this.wake, cx.waker());
            let lat = wrapped
                .stamp
                .take()
                .map(|at| clock.delta_as_nanos(at, start));
            let result = this.inner.poll(&mut Context::from_waker(&wrapped.waker));
            (result, lat.map(|lat| (*this.waiting, lat)))
        };
        let elapsed = clock.delta_as_nanos(start, clock.raw());
        let nested = FRAME.get();
        counters::charge(kind, elapsed.saturating_sub(nested.nested_ns), woken);
        let suspended = match result {
            Poll::Pending => nested.suspended.or(Some(kind)),
            Poll::Ready(_) => None,
        };
        if outer.inside {
            FRAME.set(Frame {
                inside: true,
                nested_ns: outer.nested_ns.saturating_add(elapsed),
                suspended: outer.suspended.or(suspended),
            });
        } else {
            FRAME.set(outer);
            *this.waiting = suspended.unwrap_or(kind);
        }
        std::mem::forget(unwind);
        result
    }
}

/// Restores the thread's frame when a profiled poll unwinds.
struct Unwind(Frame);

impl Drop for Unwind {
    fn drop(&mut self) {
        FRAME.set(self.0);
    }
}

/// What the profiled polls in progress on this thread know of the ones nested in them.
#[derive(Debug, Clone, Copy, Default)]
struct Frame {
    /// A profiled poll is in progress (the next one is nested).
    inside: bool,
    /// Time spent in nested profiled polls, to leave out of the enclosing poll's own time.
    nested_ns: u64,
    /// The innermost phase that returned `Pending` in this poll.
    suspended: Option<Kind>,
}

thread_local! {
    static FRAME: Cell<Frame> = const {
        Cell::new(Frame { inside: false, nested_ns: 0, suspended: None })
    };
}

/// A profiled future's own waker.
struct Wrapped {
    stamp: Arc<Stamp>,
    /// `stamp` as a [`Waker`], made once: the same waker on every poll, so that what registers
    /// it (`will_wake`) does not clone it again.
    waker: Waker,
}

impl Wrapped {
    /// The wrapper for a poll with `parent` as the caller's waker: made on the first poll,
    /// replaced when the caller's waker changed (the old stamp forwards to the new one, for
    /// whatever still holds it).
    fn current<'a>(slot: &'a mut Option<Wrapped>, parent: &Waker) -> &'a Wrapped {
        let fresh = |parent: &Waker| {
            let stamp = Arc::new(Stamp {
                woken_at: AtomicU64::new(0),
                parent: parent.clone(),
                next: OnceLock::new(),
            });
            Wrapped {
                waker: Waker::from(Arc::clone(&stamp)),
                stamp,
            }
        };
        if let Some(old) = slot.take_if(|w| !w.stamp.parent.will_wake(parent)) {
            let new = fresh(parent);
            let _ = old.stamp.next.set(Arc::clone(&new.stamp));
            // A wake-up stamped on the old one is still this poll's.
            let woken = old.stamp.take().unwrap_or(0);
            new.stamp.woken_at.store(woken, Ordering::Relaxed);
            *slot = Some(new);
        }
        slot.get_or_insert_with(|| fresh(parent))
    }
}

/// Records when a profiled future was first woken since its last poll, then wakes its task.
/// The parent waker never changes (no lock on a wake-up); a new stamp replaces this one if the
/// future is polled with another waker.
struct Stamp {
    /// The clock's raw reading at the first wake-up since the last poll; 0 when none.
    woken_at: AtomicU64,
    /// The task's waker.
    parent: Waker,
    /// The stamp that replaced this one.
    next: OnceLock<Arc<Stamp>>,
}

impl Stamp {
    /// The time of the wake-up since the last poll, if any, clearing it. Load then store: a
    /// wake-up from another thread in between is lost to the latency figures, not to the task.
    fn take(&self) -> Option<u64> {
        let at = self.woken_at.load(Ordering::Relaxed);
        if at == 0 {
            return None;
        }
        self.woken_at.store(0, Ordering::Relaxed);
        Some(at)
    }
}

impl Wake for Stamp {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut stamp = self;
        while let Some(next) = stamp.next.get() {
            stamp = next;
        }
        // The first wake-up since the poll counts; later ones wait no longer.
        if stamp.woken_at.load(Ordering::Relaxed) == 0 {
            if let Some(clock) = clock::get() {
                stamp.woken_at.store(clock.raw().max(1), Ordering::Relaxed);
            }
        }
        stamp.parent.wake_by_ref();
    }
}
