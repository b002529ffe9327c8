//! Whether a run's figures can be trusted, and why not.
//!
//! A run is **invalid** when
//! - it was stopped early (a partial window is not the window asked for);
//! - no request succeeded (nothing was measured);
//! - the generator used more than [`CLIENT_BOUND_SHARE`] (90%) of the CPUs it may use over the
//!   window: it then measures itself, not the server (seed rules: "mark a run invalid when the
//!   load generator itself saturates its CPU");
//! - the per-second completed requests of the window are not flat by the rule of
//!   [`crate::series`] (every second within ±20% of the median and a coefficient of variation
//!   of at most 10%), nor the per-second new connections when every request opens a connection
//!   (`--requests-per-conn 1`, a handshake benchmark).
//!
//! Errors do not make a run invalid: they are part of its result. Remarks that do not
//! invalidate (a window too short to judge flatness, an open loop that completed fewer requests
//! than it sent, errors on the reference probe) are notes.

use crate::report::{error_count, Report, CLIENT_BOUND_SHARE};
use crate::series::{flatness, Flatness, MIN_SECONDS};

/// The verdict on a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validity {
    /// True when no reason below applies.
    pub valid: bool,
    /// Why the run is invalid (empty when valid).
    pub reasons: Vec<String>,
    /// Remarks that do not invalidate the run.
    pub notes: Vec<String>,
}

/// Applies the rules above to a report (its `validity` field is ignored).
pub fn check(report: &Report) -> Validity {
    let mut reasons = Vec::new();
    let mut notes = Vec::new();
    let s = &report.stats;
    if report.partial {
        reasons.push(format!(
            "stopped early: {:.1} s of the {:.1} s window measured",
            report.measured.as_secs_f64(),
            report.settings.duration.as_secs_f64()
        ));
    }
    if s.ok == 0 {
        reasons.push("no request succeeded in the measured window".to_owned());
    }
    if let Some(share) = report.cpu_share() {
        if share > CLIENT_BOUND_SHARE {
            reasons.push(format!(
                "the generator used {:.0}% of its {} CPU(s) (limit {:.0}%): it may have \
                 measured itself; add --threads/--cpus",
                share * 100.0,
                report.cpu_capacity,
                CLIENT_BOUND_SHARE * 100.0
            ));
        }
    }
    let mut series = vec![("requests/s", &s.series.requests)];
    if report.settings.requests_per_conn == 1 {
        series.push(("connections/s", &s.series.connections));
    }
    for (name, values) in series {
        match flatness(name, values) {
            Flatness::Flat => {}
            Flatness::TooShort => notes.push(format!(
                "{name}: fewer than {MIN_SECONDS} whole seconds measured, flatness not checked"
            )),
            Flatness::NotFlat(why) if s.ok > 0 => reasons.push(format!("not flat: {why}")),
            Flatness::NotFlat(_) => {}
        }
    }
    if let Some(rate) = report.settings.rate {
        let achieved = report.request_rate();
        if achieved < rate * 0.9 {
            notes.push(format!(
                "open loop: {achieved:.1} responses/s for {rate} arrivals/s: the server (or the \
                 connection cap -c) did not keep up; see the timeouts and the latency tail"
            ));
        }
    }
    if let Some(r) = &report.reference {
        let errors = error_count(r);
        if errors > 0 {
            notes.push(format!("the reference probe had {errors} errors"));
        }
    }
    Validity {
        valid: reasons.is_empty(),
        reasons,
        notes,
    }
}
