//! The signals that stop tern (SIGINT, SIGTERM) and the one that reloads its certificates
//! (SIGHUP).
//!
//! Handlers are installed *before* tern binds or prints `ready:`, so a supervisor (or a test)
//! that sends SIGTERM as soon as it reads the ready line always gets a graceful stop, never the
//! default action of the signal.

use anyhow::Context;
use tokio::runtime::Runtime;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tracing::warn;

/// What a signal asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignalEvent {
    /// SIGINT or SIGTERM (its name): stop gracefully.
    Stop(&'static str),
    /// SIGHUP: reload the certificates.
    Reload,
}

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

    /// Blocks until the next signal.
    pub fn next(&mut self) -> SignalEvent {
        self.rt.block_on(async {
            tokio::select! {
                _ = self.int.recv() => SignalEvent::Stop("SIGINT"),
                _ = self.term.recv() => SignalEvent::Stop("SIGTERM"),
                _ = self.hup.recv() => SignalEvent::Reload,
            }
        })
    }

    /// Blocks until SIGINT or SIGTERM, for processes with nothing to reload (`tern term`).
    /// SIGHUP is logged and ignored: a stray hang-up must not take a process down.
    pub fn wait(mut self) -> &'static str {
        self.rt.block_on(async {
            loop {
                tokio::select! {
                    _ = self.int.recv() => return "SIGINT",
                    _ = self.term.recv() => return "SIGTERM",
                    _ = self.hup.recv() => warn!("SIGHUP received: nothing to reload, ignoring"),
                }
            }
        })
    }
}
