//! Starts the client threads of a run, supervises them from the calling thread, and collects
//! their results.
//!
//! The supervisor wakes at least every 50 ms to notice a stop request (Ctrl-C sets a flag it
//! polls), samples the process's CPU time at each whole second of the measured window (the
//! validity check needs the generator's own CPU use per second), and once a second hands a
//! [`Tick`] of whole-run counters to the progress callback. It does no work on the request path.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::cpu::CpuTime;
use crate::plan::{Plan, Timeline};
use crate::stats::{Live, Stats};
use crate::worker::{thread_main, Published, Share};
use crate::BenchError;

/// Longest the supervisor sleeps before looking at the stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// The progress ticks come this long after each whole second, when the threads have published.
const TICK_DELAY: Duration = Duration::from_millis(50);

/// What the threads of a run are to do.
#[derive(Debug)]
pub(crate) struct Setup {
    /// The main load and its threads.
    pub main: (Arc<Plan>, Vec<Share>),
    /// The reference probe and its thread.
    pub probe: Option<(Arc<Plan>, Share)>,
    /// CPUs' worth of capacity the generator may use (for the progress line's CPU share).
    pub capacity: f64,
}

/// What the threads measured.
#[derive(Debug)]
pub(crate) struct Collected {
    pub stats: Stats,
    pub reference: Option<Stats>,
    /// Process CPU time over the measured window (up to the stop, if early).
    pub cpu: Option<CpuTime>,
    /// Process CPU seconds in each whole second of the window.
    pub cpu_per_second: Vec<f64>,
    /// The part of the window actually run.
    pub measured: Duration,
    /// Whether the run was stopped before its end.
    pub stopped_early: bool,
}

/// The phase of a run a [`Tick`] falls in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// The load is climbing.
    Ramp,
    /// Full load, not yet measured.
    Warmup,
    /// The measured window.
    Measure,
}

/// Once-a-second progress of a run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    /// End of the second this tick reports, in seconds from the start of the measured window
    /// (negative before it).
    pub at: f64,
    /// The phase that second ran in.
    pub phase: Phase,
    /// Share of the whole run (ramp, warm-up and window) done, 0 to 1.
    pub done: f64,
    /// Counters since the start of the run (main load only).
    pub total: Live,
    /// Counters of the last interval (`active` is the current value).
    pub last: Live,
    /// Length of the last interval in seconds.
    pub interval: f64,
    /// The generator's CPU use over the last interval, as a share of its CPUs.
    pub cpu_share: Option<f64>,
}

/// Runs the threads to the end (or to a stop) and merges their results.
pub(crate) fn run(
    setup: Setup,
    external_stop: &AtomicBool,
    progress: &mut dyn FnMut(&Tick),
) -> Result<Collected, BenchError> {
    let plan = &setup.main.0;
    let control = plan.control.clone();
    let threads = spawn_all(&setup)?;
    let seen = supervise(
        plan.timeline,
        &setup,
        &threads.published,
        external_stop,
        progress,
    );
    control.request_stop();
    let stats = join_all(threads.main);
    let reference = threads.probe.map(join).transpose();
    if control.resumed.load(Ordering::Relaxed) {
        return Err(BenchError::Resumed);
    }
    Ok(collect(&plan.timeline, stats?, reference?, seen))
}

/// The running threads of a run.
struct Threads {
    main: Vec<JoinHandle<Result<Stats, BenchError>>>,
    published: Vec<Arc<Published>>,
    probe: Option<JoinHandle<Result<Stats, BenchError>>>,
}

/// Starts every thread; if one cannot start, stops and joins those already running.
fn spawn_all(setup: &Setup) -> Result<Threads, BenchError> {
    let (plan, shares) = &setup.main;
    let mut threads = Threads {
        main: Vec::with_capacity(shares.len()),
        published: Vec::with_capacity(shares.len()),
        probe: None,
    };
    let mut started = || -> Result<(), BenchError> {
        for share in shares {
            let p = Arc::new(Published::default());
            threads
                .main
                .push(spawn(plan, *share, p.clone(), "tern-bench")?);
            threads.published.push(p);
        }
        if let Some((probe, share)) = &setup.probe {
            let p = Arc::new(Published::default());
            threads.probe = Some(spawn(probe, *share, p, "tern-bench-ref")?);
        }
        Ok(())
    };
    match started() {
        Ok(()) => Ok(threads),
        Err(e) => {
            plan.control.request_stop();
            let _ = join_all(threads.main); // the run is failing anyway; its results are moot
            let _ = threads.probe.map(join);
            Err(e)
        }
    }
}

/// The results, cut to the whole seconds measured if the run stopped early.
fn collect(
    timeline: &Timeline,
    stats: Stats,
    reference: Option<Stats>,
    seen: Supervised,
) -> Collected {
    let window = timeline.end - timeline.window_start;
    let mut collected = Collected {
        stats,
        reference,
        cpu: seen.cpu,
        cpu_per_second: seen.cpu_per_second,
        measured: seen.stopped_at.map_or(window, |at| {
            at.saturating_duration_since(timeline.window_start)
        }),
        stopped_early: seen.stopped_at.is_some(),
    };
    if collected.stopped_early {
        let whole = collected.measured.as_secs() as usize;
        collected.stats.truncate_seconds(whole);
        if let Some(r) = &mut collected.reference {
            r.truncate_seconds(whole);
        }
        collected.cpu_per_second.truncate(whole);
    }
    collected
}

fn spawn(
    plan: &Arc<Plan>,
    share: Share,
    published: Arc<Published>,
    name: &str,
) -> Result<JoinHandle<Result<Stats, BenchError>>, BenchError> {
    let plan = plan.clone();
    std::thread::Builder::new()
        .name(format!("{name}-{}", share.index))
        .spawn(move || thread_main(plan, share, published))
        .map_err(BenchError::Thread)
}

fn join(handle: JoinHandle<Result<Stats, BenchError>>) -> Result<Stats, BenchError> {
    handle.join().unwrap_or(Err(BenchError::Panicked))
}

/// Joins every thread; merges their stats, or returns the first error.
fn join_all(handles: Vec<JoinHandle<Result<Stats, BenchError>>>) -> Result<Stats, BenchError> {
    let mut total: Option<Stats> = None;
    let mut first_error = None;
    for handle in handles {
        match join(handle) {
            Ok(stats) => match &mut total {
                Some(t) => t.merge(&stats),
                None => total = Some(stats),
            },
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    match (first_error, total) {
        (Some(e), _) => Err(e),
        (None, Some(total)) => Ok(total),
        (None, None) => Err(BenchError::Panicked),
    }
}

/// What the supervisor saw.
#[derive(Debug)]
struct Supervised {
    cpu: Option<CpuTime>,
    cpu_per_second: Vec<f64>,
    /// When the run was stopped, if before its end.
    stopped_at: Option<Instant>,
}

fn supervise(
    timeline: Timeline,
    setup: &Setup,
    published: &[Arc<Published>],
    external_stop: &AtomicBool,
    progress: &mut dyn FnMut(&Tick),
) -> Supervised {
    let control = &setup.main.0.control;
    let second = Duration::from_secs(1);
    let mut next_cpu = timeline.window_start;
    let mut cpu_samples: Vec<Option<CpuTime>> = Vec::new();
    let mut next_tick = timeline.first_tick() + second + TICK_DELAY;
    let mut last = (Instant::now(), Live::default(), CpuTime::now());
    let stopped_at = loop {
        let now = Instant::now();
        if external_stop.load(Ordering::Relaxed) {
            control.request_stop();
        }
        if control.stopped() {
            break (now < timeline.end).then_some(now);
        }
        if now >= timeline.end {
            break None;
        }
        if now >= next_cpu {
            cpu_samples.push(CpuTime::now());
            next_cpu += second;
        }
        if now >= next_tick {
            let nominal = next_tick - TICK_DELAY;
            let tick = make_tick(&timeline, setup.capacity, published, &mut last, nominal);
            progress(&tick);
            next_tick += second;
        }
        let wake = next_cpu.min(next_tick).min(timeline.end).min(now + POLL);
        std::thread::park_timeout(wake.saturating_duration_since(now));
    };
    let end_sample = CpuTime::now();
    if stopped_at.is_none() && next_cpu <= timeline.end {
        // The sample closing the last whole second falls on the end itself.
        cpu_samples.push(end_sample);
    }
    let in_window = stopped_at.is_none_or(|at| at > timeline.window_start);
    let cpu = match (cpu_samples.first(), in_window) {
        (Some(Some(before)), true) => end_sample.map(|after| after.since(before)),
        _ => None,
    };
    let cpu_per_second = cpu_samples
        .windows(2)
        .map(|w| match (w[0], w[1]) {
            (Some(a), Some(b)) => b.since(&a).total().as_secs_f64(),
            _ => 0.0,
        })
        .collect();
    Supervised {
        cpu,
        cpu_per_second,
        stopped_at,
    }
}

/// The tick for the second ending at `tick` (a whole second from the window's start).
fn make_tick(
    timeline: &Timeline,
    capacity: f64,
    published: &[Arc<Published>],
    last: &mut (Instant, Live, Option<CpuTime>),
    tick: Instant,
) -> Tick {
    let now = Instant::now();
    let mut total = Live::default();
    for p in published {
        total.add(&p.read());
    }
    let interval = now.duration_since(last.0).as_secs_f64();
    let cpu = CpuTime::now();
    let cpu_share = match (last.2, cpu) {
        (Some(a), Some(b)) if interval > 0.0 && capacity > 0.0 => {
            Some(b.since(&a).total().as_secs_f64() / interval / capacity)
        }
        _ => None,
    };
    let delta = Live {
        requests: total.requests.saturating_sub(last.1.requests),
        connections: total.connections.saturating_sub(last.1.connections),
        errors: total.errors.saturating_sub(last.1.errors),
        bytes: total.bytes.saturating_sub(last.1.bytes),
        active: total.active,
    };
    *last = (now, total, cpu);
    // The phase the second mostly ran in.
    let middle = tick.checked_sub(Duration::from_millis(500)).unwrap_or(tick);
    let phase = if middle >= timeline.window_start {
        Phase::Measure
    } else if middle >= timeline.start + timeline.ramp {
        Phase::Warmup
    } else {
        Phase::Ramp
    };
    let whole = timeline.end.duration_since(timeline.start).as_secs_f64();
    let done = tick.duration_since(timeline.start).as_secs_f64() / whole.max(1e-9);
    let at = if tick >= timeline.window_start {
        tick.duration_since(timeline.window_start).as_secs_f64()
    } else {
        -timeline.window_start.duration_since(tick).as_secs_f64()
    };
    Tick {
        at,
        phase,
        done: done.min(1.0),
        total,
        last: delta,
        interval,
        cpu_share,
    }
}
