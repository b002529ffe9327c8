//! Waiting for the signals that stop tern.

use anyhow::Context;
use tokio::signal::unix::{signal, SignalKind};
use tracing::warn;

/// Blocks until SIGINT or SIGTERM. SIGHUP is caught and logged rather than left to kill the
/// process: configuration reload arrives with the operations work, and a stray hang-up must not
/// take a load balancer down.
pub fn wait_for_stop() -> anyhow::Result<&'static str> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("signal loop")?;
    rt.block_on(async {
        let mut int = signal(SignalKind::interrupt()).context("SIGINT handler")?;
        let mut term = signal(SignalKind::terminate()).context("SIGTERM handler")?;
        let mut hup = signal(SignalKind::hangup()).context("SIGHUP handler")?;
        loop {
            tokio::select! {
                _ = int.recv() => return Ok("SIGINT"),
                _ = term.recv() => return Ok("SIGTERM"),
                _ = hup.recv() => warn!("SIGHUP received: reload is not supported yet, ignoring"),
            }
        }
    })
}
