//! A sub-millisecond timer for the open-loop scheduler.
//!
//! Why not `tokio::time::sleep_until`: tokio's timer wheel has a resolution of one millisecond
//! and rounds deadlines up, so each arrival would be sent up to a millisecond after its intended
//! time, and that delay would count in its latency (measured from the intended time). At the
//! reference probe's rates the bias would exceed the latency being measured. On Linux this
//! timer is a `timerfd` armed with the exact remaining time and awaited through tokio's reactor
//! (epoll), so the thread sleeps until the arrival is due, within microseconds, without
//! spinning. Elsewhere it falls back to tokio's timer.

use std::time::Instant;

/// A one-shot timer for one thread's scheduler.
#[derive(Debug)]
pub struct Timer {
    #[cfg(target_os = "linux")]
    fd: Option<tokio::io::unix::AsyncFd<linux::Fd>>,
}

impl Timer {
    /// A timer registered with the current tokio runtime (which must have I/O enabled). If the
    /// timerfd cannot be created, tokio's millisecond timer is used.
    pub fn new() -> Self {
        Self {
            #[cfg(target_os = "linux")]
            fd: linux::Fd::new().ok(),
        }
    }

    /// Whether the precise (timerfd) timer is in use.
    #[cfg(test)]
    pub fn precise(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.fd.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// Waits until `at` (returns at once if it has passed).
    pub async fn sleep_until(&self, at: Instant) {
        let now = Instant::now();
        if at <= now {
            return;
        }
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            if linux::wait(fd, at - now).await.is_ok() {
                return;
            }
        }
        tokio::time::sleep_until(at.into()).await;
    }
}

impl Default for Timer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io;
    use std::os::fd::{AsFd, AsRawFd, RawFd};
    use std::time::Duration;

    use nix::sys::time::TimeSpec;
    use nix::sys::timerfd::{ClockId, Expiration, TimerFd, TimerFlags, TimerSetTimeFlags};
    use tokio::io::unix::AsyncFd;

    /// A non-blocking monotonic timerfd.
    #[derive(Debug)]
    pub struct Fd(TimerFd);

    impl AsRawFd for Fd {
        fn as_raw_fd(&self) -> RawFd {
            self.0.as_fd().as_raw_fd()
        }
    }

    impl Fd {
        pub fn new() -> io::Result<AsyncFd<Fd>> {
            let flags = TimerFlags::TFD_NONBLOCK | TimerFlags::TFD_CLOEXEC;
            let fd = TimerFd::new(ClockId::CLOCK_MONOTONIC, flags).map_err(io::Error::from)?;
            // `new` is deprecated for types whose raw descriptor could change or close while
            // registered (its replacement, `register`, is `unsafe`). `Fd` owns its descriptor
            // and always returns the same one, which stays open as long as the `AsyncFd` owns
            // the `Fd`: the condition `register` asks callers to uphold holds by construction.
            #[allow(deprecated)]
            AsyncFd::new(Fd(fd))
        }
    }

    /// Arms the timer for `after` and waits for it to expire.
    pub async fn wait(fd: &AsyncFd<Fd>, after: Duration) -> io::Result<()> {
        let when = Expiration::OneShot(TimeSpec::from_duration(after));
        fd.get_ref()
            .0
            .set(when, TimerSetTimeFlags::empty())
            .map_err(io::Error::from)?;
        loop {
            let mut ready = fd.readable().await?;
            let mut expirations = [0u8; 8];
            match ready.try_io(|inner| {
                nix::unistd::read(inner.get_ref().0.as_fd(), &mut expirations)
                    .map_err(io::Error::from)
            }) {
                Ok(result) => return result.map(drop),
                Err(_would_block) => continue,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn wakes_after_the_deadline_and_well_within_a_millisecond() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("runtime: {e}"));
        rt.block_on(async {
            let timer = Timer::new();
            assert_eq!(timer.precise(), cfg!(target_os = "linux"));
            let mut late = Vec::new();
            for _ in 0..20 {
                let at = Instant::now() + Duration::from_micros(1300);
                timer.sleep_until(at).await;
                let now = Instant::now();
                assert!(now >= at);
                late.push(now - at);
            }
            late.sort();
            // The median lateness: tokio's own timer would be up to 1 ms late on each wait.
            if timer.precise() {
                assert!(late[10] < Duration::from_micros(500), "{late:?}");
            }
            timer.sleep_until(Instant::now()).await;
        });
    }
}
