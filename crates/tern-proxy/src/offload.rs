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
//! Cost: one hand-off per handshake (a channel send and a wake-up each way; only the processing
//! up to the server's first flight is offloaded, see `tls_io.rs`), measured at about 30 µs of
//! CPU per handshake, +28% for ECDSA P-256 (BENCHMARKS.md), hence off by default. The helper
//! thread ends when its worker drops the [`Offload`].

use std::sync::mpsc;

use tokio::sync::oneshot;

/// The niceness of offload threads: the lowest priority short of SCHED_IDLE, which could starve
/// handshakes entirely on a CPU kept busy by established traffic.
const NICE: i32 = 19;

type Job = Box<dyn FnOnce() + Send>;

/// A worker's handle on its offload thread.
#[derive(Debug)]
pub(crate) struct Offload {
    jobs: mpsc::Sender<Job>,
}

/// The offload thread is gone (it cannot panic on its own; a job that panicked took it down).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gone;

impl Offload {
    /// Starts the offload thread of worker `index`, pinned to `cpu` when given.
    pub(crate) fn start(index: usize, cpu: Option<usize>) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name(format!("tern-offload-{index}"))
            .spawn(move || {
                lower_priority(cpu);
                // Ends when the worker drops its sender.
                while let Ok(job) = queue.recv() {
                    job();
                }
            })?;
        Ok(Self { jobs })
    }

    /// Runs `f` on the offload thread and waits for its result without blocking the worker.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Gone> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            // The worker may have given up on the connection (timeout): nothing to deliver.
            let _ = tx.send(f());
        });
        self.jobs.send(job).map_err(|_| Gone)?;
        rx.await.map_err(|_| Gone)
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
}
