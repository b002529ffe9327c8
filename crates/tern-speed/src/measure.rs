//! The measuring loop: run one operation over and over for a fixed time on N threads.
//!
//! Like `openssl speed`, each thread counts operations for `--seconds` of wall-clock time and
//! the rate is the count divided by the thread's own CPU time (or by the wall-clock time with
//! `--elapsed`); with `--multi N` the per-thread rates are summed. Dividing by CPU time keeps
//! the figure honest on a shared machine: time the thread spent waiting for a core is not
//! charged to the algorithm.
//!
//! The clock is read once per batch, not per operation, so that a 16-byte seal (tens of
//! nanoseconds) is not dominated by clock reads: the batch doubles until it lasts ~100 µs, so
//! the run overshoots its deadline by at most a few hundred microseconds.
//!
//! An operation may split its time between two parts ([`Split`], e.g. client and server of a
//! handshake). One operation in [`SAMPLE_EVERY`] is timed part by part with the thread's CPU
//! clock; the thread's time is then shared out between the parts in those proportions, which
//! gives a per-part rate (e.g. server-only handshakes per second). CPU time, not wall-clock
//! time, because on a busy machine a thread is preempted often and wall-clock intervals then
//! charge someone else's time to whichever part happened to be running (measured here: the
//! split of an X25519 exchange swung between 42% and 74% from run to run on wall-clock time).
//! Sampling, because reading the CPU clock is a system call (~0.3 µs here) and timing every
//! operation would slow the very rate being measured by a few percent.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use nix::sched::{sched_setaffinity, CpuSet};
use nix::time::{clock_gettime, ClockId};
use nix::unistd::Pid;

use crate::SpeedError;

/// What a rate is divided by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The measuring thread's CPU time (user + system), like `openssl speed`.
    Cpu,
    /// Wall-clock time, like `openssl speed -elapsed`.
    Wall,
}

/// How long and where to measure.
#[derive(Debug, Clone)]
pub struct Settings {
    pub duration: Duration,
    pub threads: usize,
    /// Thread i is pinned to `cpus[i % len]`; empty means not pinned.
    pub cpus: Vec<usize>,
    pub basis: Basis,
}

/// One operation in this many is timed part by part (see the module docs).
pub const SAMPLE_EVERY: u64 = 8;

/// CPU time of the two parts of a split operation (index 0 and 1), over the sampled operations.
#[derive(Debug, Default, Clone)]
pub struct Split {
    parts: [f64; 2],
    sampling: bool,
}

impl Split {
    /// Runs `f`; when this operation is sampled, charges its CPU time to `part` (0 or 1).
    pub fn time<R>(&mut self, part: usize, f: impl FnOnce() -> R) -> R {
        if !self.sampling {
            return f();
        }
        let start = thread_cpu_seconds();
        let out = f();
        // The clock cannot fail for the calling thread; if it ever did, the interval is lost.
        if let (Ok(start), Ok(end), Some(slot)) =
            (start, thread_cpu_seconds(), self.parts.get_mut(part))
        {
            *slot += end - start;
        }
        out
    }
}

/// The operation run by one thread; called once per counted operation.
pub type Op<'a> = Box<dyn FnMut(&mut Split) -> Result<(), SpeedError> + 'a>;

/// The result of one measurement over all threads.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// Operations counted, all threads.
    pub ops: u64,
    /// Longest wall-clock time of a thread.
    pub wall_seconds: f64,
    /// CPU time of the measuring threads, summed.
    pub cpu_seconds: f64,
    /// Operations per second: per-thread rates (on the chosen basis), summed.
    pub rate: f64,
    /// Per-part rates (operations per second of the time spent in that part), summed over
    /// threads; zero for operations that do not split.
    pub part_rates: [f64; 2],
    /// Fraction of the time spent in each part (zero when not split).
    pub part_shares: [f64; 2],
}

/// One thread's count.
#[derive(Debug, Clone)]
struct Sample {
    ops: u64,
    wall: f64,
    cpu: f64,
    split: Split,
}

/// Measures the operation built by `make` (called once in each thread, so per-thread state
/// such as nonces or buffers is not shared) on `settings.threads` threads.
///
/// The operation runs once before the clock starts, so that a broken setup fails fast and
/// lazy initialisation is not counted.
pub fn measure<'a, F>(settings: &Settings, make: F) -> Result<Measured, SpeedError>
where
    F: Fn() -> Result<Op<'a>, SpeedError> + Sync,
{
    let threads = settings.threads.max(1);
    let barrier = Barrier::new(threads);
    let samples: Vec<Result<Sample, SpeedError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|index| {
                let cpu = cpu_for(&settings.cpus, index);
                let (make, barrier) = (&make, &barrier);
                scope.spawn(move || run_thread(settings, cpu, barrier, make))
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap_or(Err(SpeedError::ThreadPanicked)))
            .collect()
    });
    let samples = samples.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(combine(&samples, settings.basis))
}

/// The CPU of thread `index`, cycling through the list.
fn cpu_for(cpus: &[usize], index: usize) -> Option<usize> {
    if cpus.is_empty() {
        None
    } else {
        cpus.get(index % cpus.len()).copied()
    }
}

fn run_thread<'a, F>(
    settings: &Settings,
    cpu: Option<usize>,
    barrier: &Barrier,
    make: &F,
) -> Result<Sample, SpeedError>
where
    F: Fn() -> Result<Op<'a>, SpeedError>,
{
    let ready = (|| -> Result<Op<'a>, SpeedError> {
        if let Some(cpu) = cpu {
            pin_current_thread(&[cpu])?;
        }
        let mut op = make()?;
        op(&mut Split::default())?;
        Ok(op)
    })();
    // Every thread reaches the barrier, even one whose setup failed, so none waits forever.
    barrier.wait();
    let mut op = ready?;

    let mut split = Split::default();
    let cpu_start = thread_cpu_seconds()?;
    let start = Instant::now();
    let deadline = start + settings.duration;
    let mut ops = 0u64;
    let mut batch = 1u64;
    loop {
        let batch_start = Instant::now();
        for index in ops..ops + batch {
            split.sampling = index % SAMPLE_EVERY == 0;
            op(&mut split)?;
        }
        ops += batch;
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        if now - batch_start < Duration::from_micros(100) && batch < 1 << 20 {
            batch *= 2;
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds()? - cpu_start;
    Ok(Sample {
        ops,
        wall,
        cpu,
        split,
    })
}

/// Sums per-thread rates, as `openssl speed -multi` does.
fn combine(samples: &[Sample], basis: Basis) -> Measured {
    let mut out = Measured::default();
    let mut part_seconds = [0.0f64; 2];
    let mut basis_total = 0.0f64;
    for sample in samples {
        out.ops += sample.ops;
        out.wall_seconds = out.wall_seconds.max(sample.wall);
        out.cpu_seconds += sample.cpu;
        let seconds = match basis {
            Basis::Cpu => sample.cpu,
            Basis::Wall => sample.wall,
        }
        .max(1e-9);
        basis_total += seconds;
        out.rate += sample.ops as f64 / seconds;
        let parts = sample.split.parts;
        let timed: f64 = parts.iter().sum();
        if timed > 0.0 {
            for (index, part) in parts.iter().enumerate() {
                let share_seconds = seconds * part / timed;
                part_seconds[index] += share_seconds;
                if share_seconds > 0.0 {
                    out.part_rates[index] += sample.ops as f64 / share_seconds;
                }
            }
        }
    }
    if basis_total > 0.0 && part_seconds.iter().sum::<f64>() > 0.0 {
        out.part_shares = part_seconds.map(|part| part / basis_total);
    }
    out
}

/// CPU time of the calling thread, in seconds.
fn thread_cpu_seconds() -> Result<f64, SpeedError> {
    let now = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_err(SpeedError::Clock)?;
    Ok(now.tv_sec() as f64 + now.tv_nsec() as f64 * 1e-9)
}

/// Restricts the calling thread to `cpus` (threads and processes it starts inherit the mask).
pub fn pin_current_thread(cpus: &[usize]) -> Result<(), SpeedError> {
    let pin_error = |source| SpeedError::Pin {
        cpus: cpus.to_vec(),
        source,
    };
    let mut set = CpuSet::new();
    for &cpu in cpus {
        set.set(cpu).map_err(pin_error)?;
    }
    // Pid 0 is the calling thread.
    sched_setaffinity(Pid::from_raw(0), &set).map_err(pin_error)
}

/// Parses a CPU list like `1`, `0,2` or `0-3,6`.
pub fn parse_cpu_list(list: &str) -> Result<Vec<usize>, SpeedError> {
    let bad = |reason: &str| SpeedError::BadCpus {
        list: list.to_owned(),
        reason: reason.to_owned(),
    };
    let mut cpus = Vec::new();
    for part in list.split(',').map(str::trim) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let parse = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| bad("expected CPU numbers like 1, 0,2 or 0-3"))
        };
        let (lo, hi) = (parse(lo)?, parse(hi)?);
        if lo > hi {
            return Err(bad("a range must go upwards (0-3, not 3-0)"));
        }
        if hi >= CpuSet::count() {
            return Err(bad("CPU number too large"));
        }
        cpus.extend(lo..=hi);
    }
    cpus.dedup();
    Ok(cpus)
}
