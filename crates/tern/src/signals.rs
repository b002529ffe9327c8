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
    /// SIGHUP: reload the configuration.
    Reload,
    /// SIGUSR2: upgrade the binary.
    Upgrade,
    /// The process handed over to a new one (an upgrade asked through the runtime API).
    HandedOver,
    /// A reload changed `[control]`: the control API must restart.
    ControlChanged,
}

/// Installed stop handlers.
pub struct StopSignals {
    rt: Runtime,
    int: Signal,
    term: Signal,
    hup: Signal,
    usr2: Signal,
    /// Notified when the process handed over to a new one.
    pub handed_over: std::sync::Arc<tokio::sync::Notify>,
    /// Notified when a reload changed `[control]`.
    pub control_changed: std::sync::Arc<tokio::sync::Notify>,
}

impl StopSignals {
    /// Installs handlers for SIGINT, SIGTERM and SIGHUP.
    pub fn install() -> anyhow::Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("signal loop")?;
        let (int, term, hup, usr2) = rt.block_on(async {
            anyhow::Ok((
                signal(SignalKind::interrupt()).context("SIGINT handler")?,
                signal(SignalKind::terminate()).context("SIGTERM handler")?,
                signal(SignalKind::hangup()).context("SIGHUP handler")?,
                signal(SignalKind::user_defined2()).context("SIGUSR2 handler")?,
            ))
        })?;
        Ok(Self {
            rt,
            int,
            term,
            hup,
            usr2,
            handed_over: std::sync::Arc::default(),
            control_changed: std::sync::Arc::default(),
        })
    }

    /// Blocks until the next signal.
    pub fn next(&mut self) -> SignalEvent {
        loop {
            if let Some(event) = self.next_within(None) {
                return event;
            }
        }
    }

    /// Waits for the next signal, up to `limit` if there is one.
    pub fn next_within(&mut self, limit: Option<std::time::Duration>) -> Option<SignalEvent> {
        let expired = async {
            match limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        self.rt.block_on(async {
            tokio::select! {
                _ = self.int.recv() => Some(SignalEvent::Stop("SIGINT")),
                _ = self.term.recv() => Some(SignalEvent::Stop("SIGTERM")),
                _ = self.hup.recv() => Some(SignalEvent::Reload),
                _ = self.usr2.recv() => Some(SignalEvent::Upgrade),
                () = self.handed_over.notified() => Some(SignalEvent::HandedOver),
                () = self.control_changed.notified() => Some(SignalEvent::ControlChanged),
                () = expired => None,
            }
        })
    }

    /// Waits up to `limit` for SIGINT or SIGTERM; the name of the signal, if one came.
    pub fn stop_within(&mut self, limit: std::time::Duration) -> Option<&'static str> {
        self.rt.block_on(async {
            tokio::select! {
                _ = self.int.recv() => Some("SIGINT"),
                _ = self.term.recv() => Some("SIGTERM"),
                () = tokio::time::sleep(limit) => None,
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
                    _ = self.usr2.recv() => warn!("SIGUSR2 received: nothing to upgrade, ignoring"),
                }
            }
        })
    }
}
