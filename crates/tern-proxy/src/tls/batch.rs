//! Batched key exchanges (`global.crypto_batch`): the handshakes of one thread (a worker, or its
//! handshake offload thread) wait for each other so that the IFMA kernels of `tern-mb` compute
//! up to eight X25519 server halves at once (docs/design/0004-batched-crypto.md).
//!
//! A handshake whose ClientHello will have rustls use X25519 (`client_hello::x25519_share`)
//! calls [`prepare`] with the client's share before handing the ClientHello to rustls. The
//! request joins this thread's queue and the task waits. The queue runs as one batch:
//! - at once, when it holds `size` requests (the request that fills it runs it);
//! - otherwise when the thread has nothing else ready: a flusher task, spawned with the first
//!   request, yields to the event loop and looks again. Tasks that were ready (other
//!   handshakes whose ClientHello arrived in the same turn) have run by then; if none joined
//!   the queue since its last look it runs the batch, else it yields again,
//! - and in any case once the first request has waited `deadline`.
//!
//! So at low load a handshake waits one turn of the event loop, finds itself alone and is
//! computed by aws-lc-rs as before (a batch of one costs more than aws-lc-rs alone); under
//! load, handshakes that arrive together share a batch. The result goes to rustls through
//! tern-tls's X25519 (`with_prepared_x25519`), which uses it only for the share it was made for.
//!
//! Thread-local, like everything of a worker: no lock, and a batch never mixes threads. A
//! handshake given up while it waits (timeout, stop) leaves its request behind; the batch skips
//! requests nobody waits for any more.

mod compute;
mod counters;

#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use tern_config::CryptoBatch;
use tern_tls::PreparedX25519;
use tokio::sync::oneshot;

use counters::How;
pub use counters::{BatchCounters, BatchSnapshot};

/// One handshake waiting for its batch.
struct Waiting {
    peer: [u8; 32],
    reply: oneshot::Sender<(Option<PreparedX25519>, How)>,
}

/// This thread's queue.
#[derive(Default)]
struct Queue {
    waiting: Vec<Waiting>,
    /// When the oldest request joined.
    since: Option<Instant>,
    /// A flusher task is watching the queue.
    flusher: bool,
}

thread_local! {
    static QUEUE: RefCell<Queue> = RefCell::new(Queue::default());
}

/// The server half of an X25519 key exchange with the client's `peer` share, computed in a
/// batch with other handshakes of this thread; `None` when it was not (no IFMA, alone in its
/// batch, its check failed): the handshake then computes it with aws-lc-rs. Counted.
pub(crate) async fn prepare(
    settings: &CryptoBatch,
    counters: &BatchCounters,
    peer: [u8; 32],
) -> Option<PreparedX25519> {
    if tern_mb::Kernel::detect().is_none() {
        counters.count(How::NoIfma);
        return None;
    }
    let (reply, answer) = oneshot::channel();
    enqueue(settings, Waiting { peer, reply });
    // The sender goes only with a batch that ran (or the thread's end): no answer is no result.
    let (prepared, how) = answer.await.ok()?;
    counters.count(how);
    prepared
}

fn enqueue(settings: &CryptoBatch, request: Waiting) {
    let full = QUEUE.with(|q| {
        let mut q = q.borrow_mut();
        q.since.get_or_insert_with(Instant::now);
        q.waiting.push(request);
        if q.waiting.len() >= settings.size {
            return Some(take(&mut q));
        }
        if !q.flusher {
            q.flusher = true;
            tokio::task::spawn_local(flush(settings.deadline));
        }
        None
    });
    if let Some(batch) = full {
        run(batch);
    }
}

fn take(q: &mut Queue) -> Vec<Waiting> {
    q.since = None;
    std::mem::take(&mut q.waiting)
}

/// Runs the queue's batch once the thread has nothing else ready, or at the deadline.
async fn flush(deadline: Duration) {
    let mut seen = queued();
    loop {
        tokio::task::yield_now().await;
        let now = queued();
        let late = QUEUE.with(|q| q.borrow().since.is_some_and(|s| s.elapsed() >= deadline));
        if now == 0 {
            break;
        }
        if now == seen || late {
            run(QUEUE.with(|q| take(&mut q.borrow_mut())));
            break;
        }
        seen = now;
    }
    QUEUE.with(|q| q.borrow_mut().flusher = false);
}

fn queued() -> usize {
    QUEUE.with(|q| q.borrow().waiting.len())
}

/// Computes a batch and answers each request still waited for.
fn run(batch: Vec<Waiting>) {
    let live: Vec<Waiting> = batch.into_iter().filter(|w| !w.reply.is_closed()).collect();
    if live.len() < 2 {
        for w in live {
            let _ = w.reply.send((None, How::Alone));
        }
        return;
    }
    let peers: Vec<[u8; 32]> = live.iter().map(|w| w.peer).collect();
    let fill = live.len();
    match compute::server_halves(&peers) {
        None => {
            for w in live {
                let _ = w.reply.send((None, How::Failed));
            }
        }
        Some(halves) => {
            for (i, (w, half)) in live.into_iter().zip(halves).enumerate() {
                let how = match half {
                    Some(_) => How::Batched {
                        fill,
                        first: i == 0,
                    },
                    None => How::Failed,
                };
                let _ = w.reply.send((half, how));
            }
        }
    }
}
