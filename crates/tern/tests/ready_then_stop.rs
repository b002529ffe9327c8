//! The readiness contract of `tern run` and `tern term`: once `ready:` is printed, scripts and
//! tests may rely on the process, including stopping it, so a SIGTERM sent right after `ready:`
//! must be a graceful stop (exit status 0, `stats:` lines), never the default kill.

// Only the process helpers are used here.
#[allow(unused_imports)]
mod support;
use support::*;

/// How many start/stop rounds: the window between `ready:` and the SIGTERM handler is short.
const ROUNDS: usize = 20;

#[test]
fn sigterm_right_after_ready_stops_tern_run_gracefully() {
    let toml = Config::new().toml();
    for round in 0..ROUNDS {
        let tern = Tern::run(&toml);
        let (status, lines) = tern.proc.stop();
        assert!(status.success(), "round {round}: tern exited with {status}");
        assert!(
            lines.iter().any(|l| l.starts_with("stats: frontend web ")),
            "round {round}: {lines:?}"
        );
    }
}

#[test]
fn sigterm_right_after_ready_stops_tern_term_gracefully() {
    for round in 0..ROUNDS {
        let term = Term::start("s1");
        let (status, lines) = term.proc.stop();
        assert!(
            status.success(),
            "round {round}: tern term exited with {status}"
        );
        assert!(
            lines.iter().any(|l| l.starts_with("stats: term ")),
            "round {round}: {lines:?}"
        );
    }
}
