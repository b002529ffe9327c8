//! Profiling: time goes to the kind being polled (nested phases excluded from the outer one),
//! latency is measured from a wake-up to the next poll, nothing is recorded while off, and the
//! report sums the workers' tables.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::report::{duration, sum};
use super::*;
use crate::stats::WorkerStats;

/// The switch is process-wide: tests that set it run one at a time.
static SWITCH: Mutex<()> = Mutex::new(());

fn exclusive(on: bool) -> MutexGuard<'static, ()> {
    let guard = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    set_enabled(on);
    guard
}

/// A fresh table attached to this test's thread.
fn attached() -> Arc<WorkerStats> {
    let stats = Arc::new(WorkerStats::new(0, &[]));
    attach(&stats, super::Table::Worker);
    stats
}

fn row(stats: &WorkerStats, kind: Kind) -> (u64, u64, u64, u64) {
    let c = stats.profile.kind(kind);
    let get = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
    (get(&c.calls), get(&c.cpu_ns), get(&c.lat_ns), get(&c.wakes))
}

fn spin(d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// Pending on its first poll (keeping the waker it was given), ready on the next; burns
/// `burn` on each poll.
struct Gate {
    polls: usize,
    burn: Duration,
    waker: Arc<Mutex<Option<Waker>>>,
}

impl Gate {
    fn new(burn: Duration) -> (Self, Arc<Mutex<Option<Waker>>>) {
        let waker = Arc::new(Mutex::new(None));
        let gate = Gate {
            polls: 0,
            burn,
            waker: Arc::clone(&waker),
        };
        (gate, waker)
    }
}

impl Future for Gate {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        spin(self.burn);
        self.polls += 1;
        if self.polls > 1 {
            return Poll::Ready(());
        }
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A waker that does nothing.
struct Flag;

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {}
}

fn poll_once<F: Future>(f: Pin<&mut F>) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn a_future_that_burns_cpu_is_counted_under_its_kind() {
    let _on = exclusive(true);
    let stats = attached();
    let burn = Duration::from_millis(3);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(Profiled::new(Kind::Response, async move { spin(burn) }));
    let (calls, cpu, _, _) = row(&stats, Kind::Response);
    assert_eq!(calls, 1);
    assert!(cpu >= 3_000_000, "cpu {cpu} ns < 3 ms");
    assert!(cpu < 1_000_000_000, "cpu {cpu} ns");
    assert_eq!(row(&stats, Kind::Request).0, 0);
}

#[test]
fn nested_phases_take_their_time_out_of_the_outer_one() {
    let _on = exclusive(true);
    let stats = attached();
    let outer = Profiled::new(Kind::Request, async {
        spin(Duration::from_millis(2));
        Profiled::new(Kind::Response, async { spin(Duration::from_millis(6)) }).await;
    });
    assert!(poll_once(pin!(outer)).is_ready());
    let (req_calls, req_cpu, _, _) = row(&stats, Kind::Request);
    let (resp_calls, resp_cpu, _, _) = row(&stats, Kind::Response);
    assert_eq!((req_calls, resp_calls), (1, 1));
    assert!(resp_cpu >= 6_000_000, "response {resp_cpu} ns");
    assert!(req_cpu >= 2_000_000, "request {req_cpu} ns");
    assert!(
        req_cpu < 6_000_000,
        "request {req_cpu} ns includes the nested 6 ms"
    );
}

#[test]
fn latency_runs_from_the_wake_up_to_the_next_poll() {
    let _on = exclusive(true);
    let stats = attached();
    let (gate, waker) = Gate::new(Duration::ZERO);
    let mut fut = pin!(Profiled::new(Kind::Queue, gate));
    assert!(poll_once(fut.as_mut()).is_pending());
    // Not woken yet: a first poll has no latency.
    assert_eq!(
        row(&stats, Kind::Queue),
        (1, row(&stats, Kind::Queue).1, 0, 0)
    );
    waker
        .lock()
        .unwrap()
        .take()
        .expect("the gate kept a waker")
        .wake();
    spin(Duration::from_millis(4));
    assert!(poll_once(fut.as_mut()).is_ready());
    let (calls, _, lat, wakes) = row(&stats, Kind::Queue);
    assert_eq!((calls, wakes), (2, 1));
    assert!(lat >= 4_000_000, "latency {lat} ns < 4 ms");
    assert!(lat < 1_000_000_000, "latency {lat} ns");
}

#[test]
fn a_wake_up_counts_for_the_phase_the_task_waited_in() {
    let _on = exclusive(true);
    let stats = attached();
    // Suspended in the nested phase: the latency is the response's.
    let (gate, waker) = Gate::new(Duration::ZERO);
    let mut fut = pin!(Profiled::new(
        Kind::Request,
        Profiled::new(Kind::Response, gate)
    ));
    assert!(poll_once(fut.as_mut()).is_pending());
    waker.lock().unwrap().take().unwrap().wake_by_ref();
    spin(Duration::from_millis(2));
    assert!(poll_once(fut.as_mut()).is_ready());
    let (resp_calls, _, resp_lat, resp_wakes) = row(&stats, Kind::Response);
    let (req_calls, _, req_lat, req_wakes) = row(&stats, Kind::Request);
    assert_eq!((req_calls, resp_calls), (2, 2));
    assert_eq!((resp_wakes, req_wakes, req_lat), (1, 0, 0));
    assert!(resp_lat >= 2_000_000, "latency {resp_lat} ns");

    // Suspended in the outer phase's own code, after a nested phase ended: the request's.
    let stats = attached();
    let (gate, waker) = Gate::new(Duration::ZERO);
    let mut fut = pin!(Profiled::new(Kind::Request, async {
        Profiled::new(Kind::Response, async {}).await;
        gate.await;
    }));
    assert!(poll_once(fut.as_mut()).is_pending());
    waker.lock().unwrap().take().unwrap().wake_by_ref();
    spin(Duration::from_millis(2));
    assert!(poll_once(fut.as_mut()).is_ready());
    assert_eq!(row(&stats, Kind::Response).3, 0);
    let (_, _, req_lat, req_wakes) = row(&stats, Kind::Request);
    assert_eq!(req_wakes, 1);
    assert!(req_lat >= 2_000_000, "latency {req_lat} ns");
}

#[test]
fn the_task_is_woken_through_the_wrapping_waker() {
    let _on = exclusive(true);
    let _stats = attached();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    // A timer wakes the task through the wrapper; a lost wake-up would hang (bounded).
    let done = rt.block_on(async {
        let task = Profiled::new(Kind::PoolSweep, async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            tokio::task::yield_now().await;
        });
        tokio::time::timeout(Duration::from_secs(5), task).await
    });
    assert!(done.is_ok());
}

#[test]
fn nothing_is_recorded_while_off() {
    let _off = exclusive(false);
    let stats = attached();
    let (gate, waker) = Gate::new(Duration::from_millis(1));
    let mut fut = pin!(Profiled::new(Kind::Accept, gate));
    let task = Arc::new(Flag);
    let task_waker = Waker::from(Arc::clone(&task));
    assert!(fut
        .as_mut()
        .poll(&mut Context::from_waker(&task_waker))
        .is_pending());
    // The future keeps a clone of the caller's waker itself (the test's two handles and the
    // clone): no wrapper while off.
    assert_eq!(Arc::strong_count(&task), 3);
    waker.lock().unwrap().take().unwrap().wake();
    assert!(poll_once(fut.as_mut()).is_ready());
    for kind in Kind::ALL {
        assert_eq!(row(&stats, kind), (0, 0, 0, 0), "{kind:?}");
    }
}

#[test]
fn a_thread_without_a_table_records_nothing_and_still_runs() {
    let _on = exclusive(true);
    let stats = Arc::new(WorkerStats::new(0, &[]));
    let other = Arc::clone(&stats);
    std::thread::spawn(move || {
        // This thread never attached `other`.
        let fut = Profiled::new(Kind::Accept, async { 7 });
        assert_eq!(poll_once(pin!(fut)), Poll::Ready(7));
        drop(other);
    })
    .join()
    .unwrap();
    assert_eq!(row(&stats, Kind::Accept), (0, 0, 0, 0));
}

#[test]
fn the_report_sums_every_table() {
    let a = Arc::new(WorkerStats::new(0, &[]));
    let b = Arc::new(WorkerStats::new(0, &[]));
    let set = |s: &WorkerStats, kind, calls, cpu, lat, wakes| {
        let c = s.profile.kind(kind);
        let o = std::sync::atomic::Ordering::Relaxed;
        c.calls.store(calls, o);
        c.cpu_ns.store(cpu, o);
        c.lat_ns.store(lat, o);
        c.wakes.store(wakes, o);
    };
    set(&a, Kind::Request, 10, 20_000, 5_000, 5);
    set(&b, Kind::Request, 30, 60_000, 0, 0);
    set(&b, Kind::HealthCheck, 3, 2_500_000_000, 900, 3);
    let report = sum([&*a, &*b].into_iter());
    assert_eq!(report.rows.len(), Kind::ALL.len());
    let req = report.row(Kind::Request).unwrap();
    assert_eq!(
        (req.calls, req.cpu_ns, req.lat_ns, req.wakes),
        (40, 80_000, 5_000, 5)
    );
    assert_eq!(req.avg_cpu_ns(), Some(2_000));
    assert_eq!(req.avg_lat_ns(), Some(1_000));
    assert_eq!(report.row(Kind::Accept).unwrap().avg_cpu_ns(), None);
    let text = report.to_string();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[1]
        .split_whitespace()
        .eq(["kind", "calls", "tot_cpu", "avg_cpu", "tot_lat", "avg_lat"]));
    assert!(lines[2]
        .split_whitespace()
        .eq(["request", "40", "80.00us", "2.000us", "5.000us", "1.000us"]));
    assert!(lines[3].split_whitespace().eq([
        "health_check",
        "3",
        "2.500s",
        "833.3ms",
        "900.0ns",
        "300.0ns"
    ]));
}

#[test]
fn an_empty_report_says_how_to_fill_it() {
    let one = WorkerStats::new(0, &[]);
    let report = sum([&one].into_iter());
    assert!(report.is_empty());
    assert!(report.to_string().contains("nothing recorded"));
}

#[test]
fn durations_read_like_haproxy() {
    assert_eq!(duration(0), "0.0ns");
    assert_eq!(duration(294), "294.0ns");
    assert_eq!(duration(2_477), "2.477us");
    assert_eq!(duration(214_000), "214.0us");
    assert_eq!(duration(10_650_000), "10.65ms");
    assert_eq!(duration(9_089_000_000), "9.089s");
    assert_eq!(duration(746_400_000_000), "12.44m");
    assert_eq!(duration(22_734_000_000_000), "6.315h");
}

/// The cost of one read of each clock, to choose the profiling clock (see the module docs).
/// `cargo test -p tern-proxy --release -- --ignored clock_costs --nocapture`
#[test]
#[ignore = "a measurement, not a check"]
fn clock_costs() {
    use nix::time::{clock_gettime, ClockId};
    const N: u32 = 1_000_000;
    let per_read = |f: &dyn Fn()| {
        let start = Instant::now();
        for _ in 0..N {
            f();
        }
        start.elapsed() / N
    };
    for _ in 0..3 {
        let mono = per_read(&|| {
            std::hint::black_box(Instant::now());
        });
        let thread_cpu = per_read(&|| {
            std::hint::black_box(clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok());
        });
        super::clock::prepare();
        let clock = super::clock::get().expect("prepared");
        let tsc = per_read(&|| {
            std::hint::black_box(clock.raw());
        });
        println!("monotonic {mono:?}, profiling's clock {tsc:?}, thread CPU {thread_cpu:?}");
    }
}

#[test]
fn an_old_generations_rows_add_up_by_kind() {
    let row = |kind, calls| ProfileRow {
        kind,
        calls,
        cpu_ns: calls * 10,
        lat_ns: calls,
        wakes: 1,
    };
    let mut mine = vec![row(Kind::Accept, 1), row(Kind::Request, 2)];
    absorb(
        &mut mine,
        &[row(Kind::Request, 5), row(Kind::HealthCheck, 3)],
    );
    assert_eq!(
        mine,
        vec![
            row(Kind::Accept, 1),
            ProfileRow {
                wakes: 2,
                ..row(Kind::Request, 7)
            },
            row(Kind::HealthCheck, 3),
        ]
    );
}

/// Wakes itself and returns `Pending` `left` times, then `Ready`: each cycle is one wake-up and
/// one poll, as a connection's task sees them.
struct Spinner {
    left: u32,
}

impl Future for Spinner {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.left == 0 {
            return Poll::Ready(());
        }
        self.left -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// Nanoseconds per wake-up and poll of `fut` (polled to the end with a do-nothing waker).
fn per_cycle<F: Future>(fut: F, cycles: u32) -> f64 {
    let mut fut = pin!(fut);
    let start = Instant::now();
    while poll_once(fut.as_mut()).is_pending() {}
    start.elapsed().as_nanos() as f64 / f64::from(cycles)
}

/// What profiling adds to a wake-up and poll, off and on, for one phase and for two nested
/// ones (a request's relay runs inside its request phase: the data path's common case).
/// `cargo test -p tern-proxy --release -- --ignored poll_costs --nocapture`
#[test]
#[ignore = "a measurement, not a check"]
fn poll_costs() {
    const N: u32 = 2_000_000;
    let _stats = attached();
    let guard = exclusive(false);
    let one = |on: bool| {
        set_enabled(on);
        per_cycle(Profiled::new(Kind::Response, Spinner { left: N }), N)
    };
    let two = |on: bool| {
        set_enabled(on);
        let inner = Profiled::new(Kind::Response, Spinner { left: N });
        per_cycle(Profiled::new(Kind::Request, inner), N)
    };
    for _ in 0..3 {
        let bare = per_cycle(Spinner { left: N }, N);
        println!(
            "ns per wake-up + poll: bare {bare:.1}; one phase off {:.1}, on {:.1}; \
             two nested off {:.1}, on {:.1}",
            one(false),
            one(true),
            two(false),
            two(true)
        );
    }
    drop(guard);
}

#[test]
fn a_wake_up_through_an_old_registration_reaches_the_current_task_waker() {
    let _on = exclusive(true);
    let _stats = attached();
    let kept: Arc<Mutex<Option<Waker>>> = Arc::default();
    let hold = {
        let kept = Arc::clone(&kept);
        std::future::poll_fn(move |cx| {
            // Registers once, like a resource not polled again.
            kept.lock()
                .unwrap()
                .get_or_insert_with(|| cx.waker().clone());
            Poll::<()>::Pending
        })
    };
    let mut fut = pin!(Profiled::new(Kind::Request, hold));
    let first = Arc::new(Counted::default());
    let second = Arc::new(Counted::default());
    for task in [&first, &second] {
        let waker = Waker::from(Arc::clone(task));
        assert!(fut
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
    }
    kept.lock().unwrap().take().unwrap().wake();
    let n = |c: &Counted| c.0.load(std::sync::atomic::Ordering::Relaxed);
    assert_eq!((n(&first), n(&second)), (0, 1));
}

/// A waker that counts its wake-ups.
#[derive(Default)]
struct Counted(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Counted {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn a_panicking_phase_leaves_the_thread_able_to_profile() {
    let _on = exclusive(true);
    let stats = attached();
    let panicked = std::panic::catch_unwind(|| {
        let fut = Profiled::new(Kind::Request, async { panic!("boom") });
        let _ = poll_once(pin!(fut));
    });
    assert!(panicked.is_err());
    // The next outermost phase still measures its wake-up latency (it is outermost again).
    let (gate, waker) = Gate::new(Duration::ZERO);
    let mut fut = pin!(Profiled::new(Kind::Queue, gate));
    assert!(poll_once(fut.as_mut()).is_pending());
    waker.lock().unwrap().take().unwrap().wake();
    assert!(poll_once(fut.as_mut()).is_ready());
    assert_eq!(row(&stats, Kind::Queue).3, 1);
}

#[test]
fn wake_ups_while_off_are_not_charged_when_profiling_comes_back() {
    let _on = exclusive(true);
    let stats = attached();
    let (gate, waker) = Gate::new(Duration::ZERO);
    let spins = Arc::new(Mutex::new(0));
    let mut fut = pin!(Profiled::new(Kind::Request, async {
        gate.await;
        // Pending once more, waking itself: a wake-up seen while profiling is on.
        std::future::poll_fn(|cx| {
            let mut n = spins.lock().unwrap();
            *n += 1;
            if *n > 1 {
                return Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await;
    }));
    assert!(poll_once(fut.as_mut()).is_pending());
    set_enabled(false);
    // Woken through the stamp while off, polled while off.
    waker.lock().unwrap().take().unwrap().wake();
    spin(Duration::from_millis(5));
    assert!(poll_once(fut.as_mut()).is_pending());
    set_enabled(true);
    assert!(poll_once(fut.as_mut()).is_ready());
    // Only the self-wake after profiling came back is measured, and it is recent.
    let (_, _, lat, wakes) = row(&stats, Kind::Request);
    assert!(wakes <= 1, "{wakes} wake-ups");
    assert!(
        lat < 5_000_000,
        "a wake-up from while profiling was off: {lat} ns"
    );
}
