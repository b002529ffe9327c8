use super::*;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

#[test]
fn timeline_phases_and_stairs() {
    let t0 = Instant::now();
    let t = Timeline::new(t0, secs(4.0), secs(1.5), secs(10.0));
    assert_eq!(t.stairs, 4);
    assert_eq!(t.window_start, t0 + secs(5.5));
    assert_eq!(t.end, t0 + secs(15.5));
    assert_eq!(t.level(t0), 0.2);
    assert_eq!(t.level(t0 + secs(0.99)), 0.2);
    assert_eq!(t.level(t0 + secs(1.0)), 0.4);
    assert_eq!(t.level(t0 + secs(3.99)), 0.8);
    assert_eq!(t.level(t0 + secs(4.0)), 1.0);
    assert_eq!(t.level(t.window_start), 1.0);
    // Ticks are aligned to whole seconds from the window's start.
    assert_eq!(t.first_tick(), t0 + secs(0.5));

    let long = Timeline::new(t0, secs(60.0), Duration::ZERO, secs(1.0));
    assert_eq!(long.stairs, MAX_STAIRS);
    assert_eq!(long.stair_start(1), t0 + secs(6.0));
    let none = Timeline::new(t0, Duration::ZERO, Duration::ZERO, secs(1.0));
    assert_eq!((none.stairs, none.level(t0)), (1, 1.0));
    assert_eq!(none.first_tick(), t0);
}

#[test]
fn closed_loop_clients_start_on_the_stairs() {
    let t0 = Instant::now();
    let t = Timeline::new(t0, secs(3.0), Duration::ZERO, secs(1.0));
    // Three stairs at 1/4, 2/4 and 3/4 of 8 clients: 2, 4, 6 running; all 8 after the ramp.
    let starts: Vec<Duration> = (0..8).map(|j| t.client_start(j, 8) - t0).collect();
    assert_eq!(
        starts,
        [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0].map(secs).to_vec()
    );
    let flat = Timeline::new(t0, Duration::ZERO, secs(1.0), secs(1.0));
    assert_eq!(flat.client_start(5, 8), t0);
}

#[test]
fn control_stops_and_flags_resumption() {
    let c = Control::new();
    let rx = c.subscribe();
    assert!(!c.stopped() && !*rx.borrow());
    c.abort_resumed();
    assert!(c.stopped() && *rx.borrow());
    assert!(c.resumed.load(Ordering::Relaxed));
}
