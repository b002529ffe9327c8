//! Work that must not slow the workers down: building a new generation's configuration
//! (certificates, and in a freshly upgraded process the crypto library's entropy seeding, some
//! 20–30 ms of CPU) runs on a thread of its own at a low scheduling priority (nice 10), so that
//! on a core shared with a busy worker the worker keeps most of the CPU. Only that thread is
//! lowered: the workers, started afterwards by the caller, keep the normal priority.

/// The niceness of the preparation thread.
const NICE: i32 = 10;

/// Runs `f` on a low-priority thread and returns its result.
pub fn low<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    let thread = std::thread::Builder::new()
        .name("tern-prepare".to_owned())
        .spawn(move || {
            let tid = rustix::thread::gettid();
            // On Linux the "process" priority of a thread id is that thread's alone.
            if let Err(e) = rustix::process::setpriority_process(Some(tid), NICE) {
                tracing::debug!(error = %e, "could not lower the preparation thread's priority");
            }
            f()
        })?;
    thread
        .join()
        .map_err(|_| anyhow::anyhow!("the preparation thread panicked"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn runs_at_a_lower_priority_and_leaves_the_caller_alone() {
        let before = rustix::process::getpriority_process(None).unwrap();
        let inside = super::low(|| {
            rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap()
        })
        .unwrap();
        assert_eq!(inside, super::NICE.max(before));
        assert_eq!(rustix::process::getpriority_process(None).unwrap(), before);
    }
}
