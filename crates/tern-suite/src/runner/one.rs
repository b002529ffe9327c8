//! One measurement: a fresh target, a discarded warm-up run, then the measured run with the
//! target's CPU time read around it.
//!
//! The warm-up is a separate generator run (as in bench/handshakes.sh) so that the target's CPU
//! time read before the measured run covers only measured work. With a ramp, the generator
//! climbs its stairs inside the measured run and reports only the window after it; the target's
//! CPU time is then read by a helper thread when the ramp ends.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use crate::measure::{self, Capabilities, LoadSpec};
use crate::results::{FindMax, Measured, Outcome};
use crate::scenario::{CertKind, Scenario, TargetKind, Workload};
use crate::targets::{Layout, Tools};

use super::target;

/// Everything fixed for the whole suite run.
#[derive(Debug)]
pub struct Context<'a> {
    pub scenario: &'a Scenario,
    pub tools: &'a Tools,
    pub caps: Capabilities,
    pub certs: &'a std::collections::BTreeMap<CertKind, std::path::PathBuf>,
    pub backends: &'a [SocketAddr],
    pub out: &'a Path,
    /// Set by Ctrl-C: the generator stops the run in progress.
    pub stop: &'a Arc<AtomicBool>,
}

/// Measures `kind` on workload `w`, run number `run`.
pub fn measure(cx: &Context<'_>, w: &Workload, kind: TargetKind, run: u32) -> Outcome {
    if let Some(reason) =
        crate::targets::client_unsupported(w).or_else(|| crate::targets::unsupported(kind, w))
    {
        return Outcome::NotApplicable { reason };
    }
    match measure_started(cx, w, kind, run) {
        Ok(m) => Outcome::Measured(Box::new(m)),
        Err(error) => Outcome::Failed { error },
    }
}

/// Loopback addresses for a target's listeners: free ports, except tern's front (port 0, read
/// back from its `listening:` line, also when tern is the offloader in front of HAProxy).
fn addresses(kind: TargetKind) -> Result<[SocketAddr; 3], String> {
    let port = || crate::procs::free_port().map_err(|e| format!("no free loopback port: {e}"));
    let front = match kind {
        TargetKind::Tern | TargetKind::TernUnbatched | TargetKind::TernHaproxy => {
            SocketAddr::from(([127, 0, 0, 1], 0))
        }
        _ => port()?,
    };
    Ok([front, port()?, port()?])
}

fn measure_started(
    cx: &Context<'_>,
    w: &Workload,
    kind: TargetKind,
    run: u32,
) -> Result<Measured, String> {
    let running = start(cx, w, kind, run)?;
    let scheme = if w.tls.is_some() { "https" } else { "http" };
    let spec = LoadSpec {
        url: format!("{scheme}://{}{}", running.front, w.path),
        workload: w,
        client_cpus: &cx.scenario.cpus.client,
        warmup: Duration::ZERO,
        duration: w.duration,
        reference_url: cx.backends.first().map(|b| format!("http://{b}{}", w.path)),
    };
    warm_up(cx, &spec, kind)?;
    // Without a generator ramp, the ramp was spent in the warm-up run.
    let mut measured_w = w.clone();
    if !cx.caps.ramp {
        measured_w.ramp = Duration::ZERO;
    }
    let (args, pending) = measure::bench_args(
        &LoadSpec {
            workload: &measured_w,
            ..spec.clone()
        },
        cx.caps,
    );
    let affinity = running.affinity();
    let ssl_before = running.ssl_conns();
    let (cpu_before, result) = run_with_cpu(&running, &args, &measured_w, cx.stop);
    let cpu_after = running.cpu();
    let ssl_delta = ssl_before
        .zip(running.ssl_conns())
        .map(|(b, a)| a.saturating_sub(b));
    let find_max = match measure::find_max_args(&spec, cx.caps) {
        Some(_) if !cx.caps.find_max => Some(FindMax::Pending {
            reason: "this tern bench has no SLO search: the closed-loop rate is reported".into(),
        }),
        Some(args) if result.is_ok() => Some(measure::find_max(&args, cx.stop).unwrap_or_else(
            |e| FindMax::Failed {
                error: e.to_string(),
            },
        )),
        _ => None,
    };
    let server = running.stop(ssl_delta);
    let mut client = result.map_err(|e| format!("{kind}: {e}"))?;
    client.notes.extend(pending);
    let target_cpu_us = cpu_before
        .zip(cpu_after)
        .map(|(b, a)| a.saturating_sub(b).as_secs_f64() * 1e6);
    let cpu_us_per_op = target_cpu_us
        .filter(|_| client.ops > 0)
        .map(|us| us / client.ops as f64);
    let capacity = client.window_s * 1e6 * w.target_cpus.len() as f64;
    let target_cpu_share = target_cpu_us
        .filter(|_| capacity > 0.0)
        .map(|us| us / capacity);
    Ok(Measured {
        client,
        target_cpu_us,
        cpu_us_per_op,
        target_cpu_share,
        affinity,
        server,
        find_max,
    })
}

/// Writes the target's configuration for this measurement and starts it.
fn start(
    cx: &Context<'_>,
    w: &Workload,
    kind: TargetKind,
    run: u32,
) -> Result<target::Running, String> {
    let tag = format!("{}-{}-{run}", w.name, kind.name().replace('+', "-"));
    let [front, inner, stats] = addresses(kind)?;
    let layout = Layout {
        workload: w,
        monitor_uri: &cx.scenario.monitor_uri,
        cpus: &w.target_cpus,
        // Relative to the configuration folder (configs/TAG/), where the target runs.
        cert: w.tls.and_then(|t| {
            let file = cx.certs.get(&t.cert)?.file_name()?;
            Some(PathBuf::from("../../certs").join(file))
        }),
        front,
        inner,
        stats,
        backends: cx.backends,
        dir: cx.out.join("configs").join(&tag),
    };
    target::start(kind, &layout, cx.tools, &cx.out.join("logs"), &tag)
}

/// The discarded warm-up run (plus the ramp, when the generator cannot ramp).
fn warm_up(cx: &Context<'_>, spec: &LoadSpec<'_>, kind: TargetKind) -> Result<(), String> {
    let w = spec.workload;
    let ramp = if cx.caps.ramp { Duration::ZERO } else { w.ramp };
    if (w.warmup + ramp).is_zero() {
        return Ok(());
    }
    let mut warm = w.clone();
    warm.ramp = Duration::ZERO;
    warm.reference = None;
    let warm_spec = LoadSpec {
        workload: &warm,
        duration: w.warmup + ramp,
        reference_url: None,
        ..spec.clone()
    };
    let (args, _) = measure::bench_args(&warm_spec, cx.caps);
    measure::run(&args, cx.stop).map_err(|e| format!("warm-up against {kind}: {e}"))?;
    Ok(())
}

/// Runs the generator, reading the target's CPU time when the measured window opens (after
/// the ramp, if any).
fn run_with_cpu(
    running: &target::Running,
    args: &[String],
    w: &Workload,
    stop: &Arc<AtomicBool>,
) -> (
    Option<Duration>,
    Result<crate::results::Measurement, measure::MeasureError>,
) {
    if w.ramp.is_zero() {
        let before = running.cpu();
        return (before, measure::run(args, stop));
    }
    let pids = running.pids();
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            // Timing a sample, not waiting for readiness: the window opens when the ramp ends.
            std::thread::sleep(w.ramp);
            crate::procs::tree_cpu(&pids)
        });
        let result = measure::run(args, stop);
        let before = sampler.join().ok().flatten();
        (before, result)
    })
}
