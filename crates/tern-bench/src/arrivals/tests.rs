//! The open-loop scheduler against an artificially slow server: latency must be measured from
//! the intended start, so queueing behind a slow server shows (no coordinated omission).

#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::args::Target;
use crate::http1;
use crate::plan::{Control, Load, Plan, Timeline};
use crate::stats::Stats;
use crate::worker::{thread_main, Published, Share};

#[test]
fn schedule_is_evenly_spaced_and_climbs_the_ramp() {
    let t0 = Instant::now();
    let flat = Timeline::new(t0, Duration::ZERO, Duration::ZERO, Duration::from_secs(1));
    let mut s = Schedule::new(flat, 1000.0, 0.0005);
    let first: Vec<Duration> = (0..3).map(|_| s.next_arrival() - t0).collect();
    assert_eq!(
        first,
        [500_000, 1_500_000, 2_500_000]
            .map(Duration::from_nanos)
            .to_vec()
    );

    // Two stairs at 1/3 and 2/3 of 300/s, then 300/s.
    let ramp = Timeline::new(
        t0,
        Duration::from_secs(2),
        Duration::ZERO,
        Duration::from_secs(1),
    );
    let mut s = Schedule::new(ramp, 300.0, 0.0);
    let mut per_second = [0u32; 3];
    loop {
        let at = s.next_arrival() - t0;
        if at >= Duration::from_secs(3) {
            break;
        }
        per_second[at.as_secs() as usize] += 1;
    }
    assert_eq!(per_second, [100, 200, 300]);
}

/// A server that answers each request `delay` after reading it, one at a time per connection.
fn slow_server(delay: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut pending = Vec::new();
                loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    while let Some(end) = pending.windows(4).position(|w| w == b"\r\n\r\n") {
                        pending.drain(..end + 4);
                        std::thread::sleep(delay);
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if stream.write_all(ok).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    addr
}

/// Runs one client thread of `load` with `connections` against `addr` for `secs`.
fn run(addr: SocketAddr, load: Load, connections: u32, secs: f64, timeout: f64) -> Stats {
    let target = Target::parse(&format!("http://{addr}/")).unwrap();
    let timeline = Timeline::new(
        Instant::now(),
        Duration::ZERO,
        Duration::ZERO,
        Duration::from_secs_f64(secs),
    );
    let plan = Arc::new(Plan {
        addr,
        tls: None,
        keep_alive_request: http1::request(&target, false),
        close_request: http1::request(&target, true),
        requests_per_conn: 0,
        h2: None,
        timeout: Duration::from_secs_f64(timeout),
        load,
        timeline,
        control: Arc::new(Control::new()),
        resumption: false,
    });
    let share = Share {
        index: 0,
        of: 1,
        connections,
        cpu: None,
    };
    thread_main(plan, share, Arc::new(Published::default())).unwrap()
}

const SERVICE: Duration = Duration::from_millis(20);

#[test]
fn open_loop_latency_includes_queueing_behind_a_slow_server() {
    let addr = slow_server(SERVICE);
    // 200 arrivals/s on one connection that serves 50/s: arrival j waits for j earlier ones, so
    // its latency is about 20 ms + 15 ms × j from its intended time.
    let s = run(addr, Load::Open { rate: 200.0 }, 1, 0.6, 10.0);
    assert_eq!(s.connections, 1, "the cap holds: {s:?}");
    assert!((20..=31).contains(&s.ok), "{} responses", s.ok);
    let (p50, max) = (s.total.value_at_quantile(0.5), s.total.max());
    assert!(s.total.min() >= 19_000, "min {}", s.total.min());
    assert!(p50 >= 150_000, "p50 {p50} µs: queueing must show");
    assert!(max >= 300_000, "max {max} µs: queueing must show");
    assert_eq!(s.errors.iter().sum::<u64>(), 0);

    // The closed loop on the same server never sees the queue.
    let s = run(addr, Load::Closed, 1, 0.4, 10.0);
    assert!(s.ok >= 10, "{} responses", s.ok);
    assert!(
        s.total.max() < 150_000,
        "closed-loop max {} µs",
        s.total.max()
    );
}

#[test]
fn queued_arrivals_past_their_timeout_are_errors_not_samples() {
    let addr = slow_server(SERVICE);
    let s = run(addr, Load::Open { rate: 200.0 }, 1, 0.6, 0.15);
    assert!(s.ok > 0);
    assert!(
        s.total.max() <= 151_000,
        "max {} µs over the timeout",
        s.total.max()
    );
    let timeouts = s.errors[crate::stats::ErrorKind::Timeout as usize];
    // About 120 arrivals in the window, at most ~30 served: most time out in the queue.
    assert!(timeouts >= 50, "{timeouts} timeouts; {s:?}");
}

#[test]
fn open_loop_opens_connections_up_to_the_cap() {
    let addr = slow_server(SERVICE);
    // 200/s with 20 ms each needs 4 connections in parallel; the cap of 8 allows that.
    let s = run(addr, Load::Open { rate: 200.0 }, 8, 0.5, 10.0);
    assert!(
        (3..=8).contains(&s.connections),
        "{} connections",
        s.connections
    );
    assert!(
        s.total.value_at_quantile(0.9) < 100_000,
        "{:?}",
        s.total.max()
    );
    assert!(s.ok >= 80, "{} responses", s.ok);
}

#[test]
fn an_open_loop_behind_schedule_keeps_its_connection() {
    let addr = slow_server(SERVICE);
    // 200/s on one connection serving 50/s, a 150 ms timeout: the queue soon holds arrivals
    // with less time left than a response takes. Their exchanges must still run to their end
    // on the same connection (counted as timeouts), not be cut at their limit with the
    // connection, which would make every later arrival pay for a new connection.
    let s = run(addr, Load::Open { rate: 200.0 }, 1, 0.8, 0.15);
    assert_eq!(s.connections, 1, "{} connections", s.connections);
    assert!(s.ok >= 5, "{} responses", s.ok);
    assert!(s.total.max() <= 151_000, "max {} µs", s.total.max());
}
