//! The signals that stop tern.
//!
//! Handlers are installed *before* tern binds or prints `ready:`, so a supervisor (or a test)
//! that sends SIGTERM as soon as it reads the ready line always gets a graceful stop, never the
//! default action of the signal.

use anyhow::Context;
use tokio::runtime::Runtime;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tracing::warn;

/// Installed stop handlers.
pub struct StopSignals {
    rt: Runtime,
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl StopSignals {
    /// Installs handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> anyhow::Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("signal loop")?;
        let (int, term, hup) = rt.block_on(async {
            anyhow::Ok((
                signal(SignalKind::interrupt()).context("SIGINT handler")?,
                signal(SignalKind::terminate()).context("SIGTERM handler")?,
                signal(SignalKind::hangup()).context("SIGHUP handler")?,
            ))
        })?;
        Ok(Self { rt, int, term, hup })
    }

    /// Blocks until SIGINT or SIGTERM. SIGHUP is logged and ignored: configuration reload
    /// arrives with the operations work, and a stray hang-up must not take a load balancer down.
    pub fn wait(mut self) -> &'static str {
        self.rt.block_on(async {
            loop {
                tokio::select! {
                    _ = self.int.recv() => return "SIGINT",
                    _ = self.term.recv() => return "SIGTERM",
                    _ = self.hup.recv() => warn!("SIGHUP received: reload is not supported yet, ignoring"),
                }
            }
        })
    }
}
