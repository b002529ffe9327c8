//! Handshake offload: the CPU-heavy step of a TLS handshake runs on a low-priority thread next
//! to the worker, so that requests on established connections never wait behind it.
//!
//! A worker is one event loop. Without offload, every full handshake it runs (key exchange and
//! signature, ~140 µs for ECDSA, ~1 ms for RSA-2048) blocks the loop, and under a flood of new
//! connections a keep-alive request that arrives waits for all the handshakes ahead of it in
//! that turn of the loop: its latency grows with the flood, whatever the rate cap. With
//! `handshake_offload`, each worker has a helper thread at nice 19 (pinned to the worker's CPU
//! when the worker is pinned); the worker hands it the rustls connection for
//! `process_new_packets` and goes on serving. When both are runnable the kernel gives the
//! worker (nice 0) the CPU first, so established traffic is served at once and handshakes use
//! what is left: the scheduler, not the event loop, sets the priority.
//!
//! Jobs run in arrival order, and a job whose worker side gave up (the handshake timed out and
//! the connection was dropped) is skipped without running, and purged from a long queue. Tried
//! and not kept: newest first, which under a flood finishes more handshakes for clients still
//! waiting (1.6x the flood's goodput) but lets that many more new connections send requests on
//! the worker, so the keep-alive clients' flooded p99 went from 0.3-0.9 ms to 1.9-5.5 ms
//! (BENCHMARKS.md): the goal here is the established connections' latency, and the rate cap is
//! the knob for the flood's share.
//!
//! Cost: one hand-off per handshake (a queue push and a wake-up each way; only the processing
//! up to the server's first flight is offloaded, see `tls_io.rs`), measured at about 30 µs of
//! CPU per handshake, +28% for ECDSA P-256 (BENCHMARKS.md), hence off by default. The helper
//! thread ends when its worker drops the [`Offload`].

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, PoisonError};

use tokio::sync::oneshot;

/// The niceness of offload threads: the lowest priority short of SCHED_IDLE, which could starve
/// handshakes entirely on a CPU kept busy by established traffic.
const NICE: i32 = 19;

/// Queue length from which a push first drops the jobs whose worker side gave up.
const PURGE_AT: usize = 1024;

/// A unit of work for the offload thread.
trait Job: Send {
    /// Whether anyone still waits for the result.
    fn wanted(&self) -> bool;
    /// Runs the job and delivers its result.
    fn run(self: Box<Self>);
}

/// A function and the channel its result goes back on.
struct Call<T, F> {
    f: F,
    result: oneshot::Sender<T>,
}

impl<T: Send, F: FnOnce() -> T + Send> Job for Call<T, F> {
    fn wanted(&self) -> bool {
        !self.result.is_closed()
    }

    fn run(self: Box<Self>) {
        // The worker may have given up on the connection meanwhile: nothing to deliver.
        let _ = self.result.send((self.f)());
    }
}

/// The jobs waiting, oldest first, and whether the worker is gone.
#[derive(Default)]
struct Queue {
    jobs: VecDeque<Box<dyn Job>>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        // A job runs outside the lock: a panic cannot leave the queue half-changed.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The oldest job still wanted, waiting for one; `None` once the worker is gone.
    fn next(&self) -> Option<Box<dyn Job>> {
        let mut queue = self.lock();
        loop {
            while let Some(job) = queue.jobs.pop_front() {
                if job.wanted() {
                    return Some(job);
                }
            }
            if queue.closed {
                return None;
            }
            queue = self
                .ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// A worker's handle on its offload thread.
pub(crate) struct Offload {
    shared: Arc<Shared>,
    thread: std::thread::Thread,
}

impl std::fmt::Debug for Offload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Offload")
            .field("thread", &self.thread.name())
            .finish_non_exhaustive()
    }
}

/// The offload thread is gone (it cannot panic on its own; a job that panicked took it down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gone;

impl Offload {
    /// Starts the offload thread of worker `index`, pinned to `cpu` when given.
    pub(crate) fn start(index: usize, cpu: Option<usize>) -> std::io::Result<Self> {
        let shared = Arc::new(Shared::default());
        let theirs = shared.clone();
        let handle = std::thread::Builder::new()
            .name(format!("tern-offload-{index}"))
            .spawn(move || {
                lower_priority(cpu);
                // Ends when the worker drops its handle.
                while let Some(job) = theirs.next() {
                    job.run();
                }
            })?;
        Ok(Self {
            shared,
            thread: handle.thread().clone(),
        })
    }

    /// Runs `f` on the offload thread and waits for its result without blocking the worker.
    /// Dropping the returned future cancels the job if it has not started.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Gone> {
        let (result, rx) = oneshot::channel();
        {
            let mut queue = self.shared.lock();
            if queue.jobs.len() >= PURGE_AT && queue.jobs.len().is_power_of_two() {
                queue.jobs.retain(|job| job.wanted());
            }
            queue.jobs.push_back(Box::new(Call { f, result }));
        }
        self.shared.ready.notify_one();
        rx.await.map_err(|_| Gone)
    }
}

impl Drop for Offload {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
    }
}

fn lower_priority(cpu: Option<usize>) {
    if let Some(cpu) = cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
            tracing::warn!(cpu, "could not pin the handshake offload thread");
        }
    }
    let tid = rustix::thread::gettid();
    // On Linux the "process" priority of a thread id is that thread's alone.
    if let Err(e) = rustix::process::setpriority_process(Some(tid), NICE) {
        tracing::warn!(error = %e, "could not lower the handshake offload thread's priority");
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test(flavor = "current_thread")]
    async fn runs_jobs_on_a_low_priority_thread() {
        let offload = Offload::start(0, None).unwrap();
        let (nice, name) = offload
            .run(|| {
                let tid = rustix::thread::gettid();
                let nice = rustix::process::getpriority_process(Some(tid)).unwrap();
                (nice, std::thread::current().name().map(str::to_owned))
            })
            .await
            .unwrap();
        assert_eq!(nice, NICE);
        assert_eq!(name.as_deref(), Some("tern-offload-0"));
        assert_eq!(offload.run(|| 6 * 7).await, Ok(42));
    }

    /// With a backlog, jobs run in order and cancelled ones do not run at all.
    #[tokio::test(flavor = "current_thread")]
    async fn jobs_run_in_order_and_cancelled_ones_are_skipped() {
        let offload = Offload::start(1, None).unwrap();
        let (hold, held) = std::sync::mpsc::channel::<()>();
        let order = Arc::new(Mutex::new(Vec::new()));
        // Occupies the thread until `hold` is dropped, so the next jobs queue up.
        let blocker = offload.run(move || {
            let _ = held.recv();
        });
        let mut blocker = Box::pin(blocker);
        // Let the thread take the blocker before queuing the rest.
        tokio::select! {
            _ = &mut blocker => unreachable!("held"),
            _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
        }
        let job = |n: u32| {
            let order = order.clone();
            offload.run(move || order.lock().unwrap().push(n))
        };
        let (first, cancelled, last) = (job(1), job(2), job(3));
        let (mut first, mut last) = (Box::pin(first), Box::pin(last));
        // Polling each once queues it; dropping the second cancels it.
        let mut cancelled = Box::pin(cancelled);
        for fut in [&mut first, &mut cancelled, &mut last] {
            tokio::select! {
                biased;
                _ = fut => unreachable!("the thread is held"),
                _ = std::future::ready(()) => {}
            }
        }
        drop(cancelled);
        drop(hold);
        blocker.await.unwrap();
        last.await.unwrap();
        first.await.unwrap();
        assert_eq!(*order.lock().unwrap(), vec![1, 3]);
    }
}
