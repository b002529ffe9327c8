//! Logging to stderr with `tracing`; stdout is kept for the lines scripts and tests read
//! (listening addresses, ready, counters at exit).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. `RUST_LOG` wins over `--log-level`.
pub fn init(level: &str) {
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(level))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
