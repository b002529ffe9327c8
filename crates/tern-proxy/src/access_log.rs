//! The access log: one line per request (and per connection that ended without one worth
//! serving: a failed TLS handshake, a refused or incomplete request head), with HAProxy's phase
//! timers and termination state, written off the request path.
//!
//! - **Workers** fill a [`Record`] as the request goes (`tracker.rs`: a few clock reads at
//!   phase boundaries, names and the target copied into fixed buffers) and hand it to a
//!   bounded queue with `try_send`. When the queue is full the line is dropped and counted; a
//!   worker never waits for the log. Without `[access_log]` a connection carries no
//!   tracker and each hook is one branch on `None`.
//! - **One writer thread** (`writer.rs`) formats the lines (`format.rs`: text or JSON; or a
//!   frontend's `log_format`, `template.rs` over `record_values.rs`) and writes them to stdout, stderr, a file or syslog (UDP or a Unix datagram socket).
//! - [`AccessLog`] is the cloneable handle to the queue: opened once by the binary from
//!   `[access_log]`, it outlives the workers, so a reload hands the same sink to the next set
//!   of workers and no line is lost or duplicated in between. The writer ends when the last
//!   handle is dropped, after writing what is queued.
//!
//! What is logged, and the termination states produced, are documented with `[access_log]` in
//! docs/configuration.md.

mod format;
mod record;
mod record_values;
pub(crate) mod template;
mod tracker;
mod writer;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_template;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_config::{AccessLogSettings, LogTarget};

pub(crate) use format::Civil;
pub(crate) use record::Record;
pub(crate) use tracker::Tracker;
use writer::{Msg, Output, Writer};

/// Why the access log could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("access_log target {target}: {cause}")]
pub struct AccessLogError {
    pub target: String,
    pub cause: std::io::Error,
}

/// Lines written, dropped (queue full) and lost to write errors; shared by the handles and the
/// writer thread.
#[derive(Debug, Default)]
pub(crate) struct LogCounters {
    written: AtomicU64,
    dropped: AtomicU64,
    failed: AtomicU64,
}

/// The access log's counters at one moment.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct AccessLogStats {
    /// Lines written to the target.
    pub written: u64,
    /// Lines dropped because the queue was full (the writer fell behind).
    pub dropped: u64,
    /// Lines lost because writing to the target failed.
    pub failed: u64,
}

impl AccessLogStats {
    /// `name=value` pairs, for the line printed at exit.
    pub fn fields(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("written", self.written),
            ("dropped", self.dropped),
            ("failed", self.failed),
        ]
    }
}

/// A handle to the access log: cheap to clone, shared by every worker of every generation.
#[derive(Clone)]
pub struct AccessLog {
    inner: Arc<Inner>,
}

struct Inner {
    tx: SyncSender<Msg>,
    counters: Arc<LogCounters>,
    reopen: Arc<AtomicBool>,
    settings: AccessLogSettings,
}

impl fmt::Debug for AccessLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessLog")
            .field("target", &describe(&self.inner.settings.target))
            .field("stats", &self.stats())
            .finish()
    }
}

impl AccessLog {
    /// Opens the target of `settings` and starts the writer thread.
    pub fn open(settings: &AccessLogSettings) -> Result<Self, AccessLogError> {
        Self::start(settings, Arc::default())
    }

    /// A log for changed settings (a reload): a new target and writer, the counters of this one
    /// continued. This one's writer ends once its last handle is gone.
    pub fn replace(&self, settings: &AccessLogSettings) -> Result<Self, AccessLogError> {
        Self::start(settings, Arc::clone(&self.inner.counters))
    }

    fn start(
        settings: &AccessLogSettings,
        counters: Arc<LogCounters>,
    ) -> Result<Self, AccessLogError> {
        let (log, writer) = Self::detached(settings, counters)?;
        std::thread::Builder::new()
            .name("tern-access-log".to_owned())
            .spawn(move || writer.run())
            .map_err(|cause| AccessLogError {
                target: describe(&settings.target),
                cause,
            })?;
        Ok(log)
    }

    /// Opens the target and the queue; the writer is returned, not started (tests hold it to
    /// play a writer that does not keep up).
    fn detached(
        settings: &AccessLogSettings,
        counters: Arc<LogCounters>,
    ) -> Result<(Self, Writer), AccessLogError> {
        let output = Output::open(&settings.target).map_err(|cause| AccessLogError {
            target: describe(&settings.target),
            cause,
        })?;
        let (tx, rx) = mpsc::sync_channel(settings.buffer.max(1));
        let reopen = Arc::new(AtomicBool::new(false));
        let writer = Writer::new(
            rx,
            output,
            settings.format,
            &settings.syslog,
            Arc::clone(&counters),
            Arc::clone(&reopen),
        );
        let log = Self {
            inner: Arc::new(Inner {
                tx,
                counters,
                reopen,
                settings: settings.clone(),
            }),
        };
        Ok((log, writer))
    }

    /// The settings this log was opened with (a reload may keep the handle when they are
    /// unchanged).
    pub fn settings(&self) -> &AccessLogSettings {
        &self.inner.settings
    }

    /// Queues a line, or drops and counts it when the queue is full. Never waits.
    pub(crate) fn send(&self, record: Record) {
        match self.inner.tx.try_send(Msg::Line(record)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.inner.counters.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> AccessLogStats {
        let c = &self.inner.counters;
        AccessLogStats {
            written: c.written.load(Ordering::Relaxed),
            dropped: c.dropped.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        }
    }

    /// Asks the writer to open a file target again (or reconnect a Unix socket) before its next
    /// write: for log rotation by renaming (SIGHUP).
    pub fn reopen(&self) {
        self.inner.reopen.store(true, Ordering::Release);
    }

    /// Waits until every line queued before the call is written, for at most `within`; false
    /// if the writer did not get there in time (stuck on its target).
    pub fn flush(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let (done, finished) = mpsc::channel();
        let mut msg = Msg::Flush(done);
        loop {
            match self.inner.tx.try_send(msg) {
                Ok(()) => break,
                Err(TrySendError::Full(back)) if Instant::now() < deadline => {
                    // The queue is full: the writer is busy emptying it. Bounded by `within`.
                    msg = back;
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(_) => return false,
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        finished.recv_timeout(left).is_ok()
    }
}

/// The target as written in the configuration, for messages.
fn describe(target: &LogTarget) -> String {
    match target {
        LogTarget::Stdout => "stdout".to_owned(),
        LogTarget::Stderr => "stderr".to_owned(),
        LogTarget::File(path) => path.display().to_string(),
        LogTarget::Udp(addr) => format!("udp://{addr}"),
        LogTarget::Unix(path) => format!("unix:{}", path.display()),
    }
}
