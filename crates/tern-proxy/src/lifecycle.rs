//! What a thread serving connections is asked to do (run, drain, stop) and how many sessions
//! it still holds: shared by a worker and its handshake offload thread (`tls/offload.rs`), each of
//! which has one.
//!
//! Both follow the generation's [`Mode`]: accept while it is `Run`, then let their sessions end
//! (each knows how); the thread's end waits for its count of sessions to reach zero.

use std::cell::Cell;
use std::rc::Rc;

use tokio::sync::futures::Notified;
use tokio::sync::{watch, Notify};

/// What a generation of workers is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Accept and serve.
    Run,
    /// A newer generation took over (reload, upgrade): accept nothing, let every connection
    /// finish — its next response says `Connection: close`, an idle one closes when its
    /// keep-alive timeout expires — for up to `hard_stop_after`.
    Drain,
    /// Stop (SIGTERM): accept nothing, close idle connections now, give requests in flight up
    /// to `grace`.
    Stop,
}

/// One thread's mode and session count, reached from its tasks through an `Rc`.
#[derive(Debug)]
pub(crate) struct Lifecycle {
    mode: Cell<Mode>,
    /// Notified at every change of `mode`.
    changed: Notify,
    sessions: Cell<usize>,
    drained: Notify,
}

impl Lifecycle {
    pub(crate) fn new() -> Self {
        Self {
            mode: Cell::new(Mode::Run),
            changed: Notify::new(),
            sessions: Cell::new(0),
            drained: Notify::new(),
        }
    }

    /// Whether the thread is draining or stopping (connections finish their request, then
    /// close).
    pub(crate) fn is_stopping(&self) -> bool {
        self.mode.get() != Mode::Run
    }

    /// Whether idle connections must close now (a stop, not a drain).
    pub(crate) fn closes_idle(&self) -> bool {
        self.mode.get() == Mode::Stop
    }

    /// Resolves when the thread starts draining or stopping (at once if it has): accept
    /// nothing more.
    pub(crate) async fn stopping(&self) {
        self.until(|m| m != Mode::Run).await;
    }

    /// Resolves when idle connections must close (a stop).
    pub(crate) async fn closing_idle(&self) {
        self.until(|m| m == Mode::Stop).await;
    }

    /// Resolves at the next change of mode: for a wait that only has to wake up and look (see
    /// `listen/first_bytes.rs`); `enable` it before reading the mode, as [`Self::until`] does.
    pub(crate) fn changed(&self) -> Notified<'_> {
        self.changed.notified()
    }

    async fn until(&self, done: impl Fn(Mode) -> bool) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done(self.mode.get()) {
                return;
            }
            notified.await;
        }
    }

    pub(crate) fn set_mode(&self, mode: Mode) {
        self.mode.set(mode);
        self.changed.notify_waiters();
    }

    /// Sessions alive.
    pub(crate) fn sessions(&self) -> usize {
        self.sessions.get()
    }

    /// Counts a session; the guard uncounts it.
    pub(crate) fn session_started(self: &Rc<Self>) -> SessionCount {
        self.sessions.set(self.sessions.get() + 1);
        SessionCount {
            life: Rc::clone(self),
        }
    }

    /// Resolves when no session is left (at once if none is).
    pub(crate) async fn drained(&self) {
        loop {
            let notified = self.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.sessions.get() == 0 {
                return;
            }
            notified.await;
        }
    }
}

/// Keeps a session counted while alive.
#[derive(Debug)]
pub(crate) struct SessionCount {
    life: Rc<Lifecycle>,
}

impl Drop for SessionCount {
    fn drop(&mut self) {
        let life = &self.life;
        life.sessions.set(life.sessions.get().saturating_sub(1));
        if life.sessions.get() == 0 && life.is_stopping() {
            life.drained.notify_one();
        }
    }
}

/// Waits for a mode `wanted` accepts; `Stop` when the sender is gone.
pub(crate) async fn next_mode(
    rx: &mut watch::Receiver<Mode>,
    wanted: impl Fn(Mode) -> bool,
) -> Mode {
    loop {
        let mode = *rx.borrow_and_update();
        if wanted(mode) {
            return mode;
        }
        if rx.changed().await.is_err() {
            return Mode::Stop;
        }
    }
}
