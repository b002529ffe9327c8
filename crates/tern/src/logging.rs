//! Logging to stderr with `tracing`; stdout is kept for the lines scripts and tests read
//! (listening addresses, ready, counters at exit).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// What the `h2` crate may log below `--log-level debug`: nothing. It warns about what a client
/// did wrong (a PING ack never asked for, a refused stream); each such connection is counted
/// (`h2_errors`) and ended by tern, and a client must not be able to fill the log.
const QUIET_H2: &str = "h2=off";

/// Installs the global subscriber. `RUST_LOG` wins over `--log-level`.
pub fn init(level: &str) {
    let directives = match level {
        "debug" | "trace" => level.to_owned(),
        _ => format!("{level},{QUIET_H2}"),
    };
    let filter = EnvFilter::try_from_default_env()
        .or_else(|_| EnvFilter::try_new(&directives))
        .unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
