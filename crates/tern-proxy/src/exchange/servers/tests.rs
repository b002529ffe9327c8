#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;

/// The shared state of one backend with these servers (`maxconn` each) and backend lines.
fn backend(maxconns: &[u32], lines: &str) -> BackendState {
    let servers: Vec<String> = maxconns
        .iter()
        .enumerate()
        .map(|(i, m)| {
            format!(
                "{{ name = \"s{i}\", address = \"127.0.0.1:{}\", maxconn = {m} }}",
                i + 1
            )
        })
        .collect();
    let text = format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
         [[backend]]\nname = \"b\"\n{lines}\nservers = [ {} ]\n",
        servers.join(", ")
    );
    let config = tern_config::parse(&text, Path::new("test.toml")).unwrap();
    BackendState::new(&config.backends[0])
}

#[test]
fn slots_stop_at_maxconn_and_come_back() {
    let b = backend(&[2], "");
    let s = b.server(0).unwrap();
    assert!(s.try_take());
    assert!(s.try_take());
    assert!(!s.try_take());
    assert_eq!(s.active(), 2);
    b.release(0);
    assert_eq!(s.active(), 1);
    assert!(s.try_take());
}

#[test]
fn a_released_slot_goes_to_the_oldest_waiter_still_counted() {
    let b = backend(&[1, 1], "");
    assert!(b.server(0).unwrap().try_take());
    assert!(b.server(1).unwrap().try_take());
    let (_, mut first) = b.enqueue(None, u64::MAX).unwrap();
    let (_, mut second) = b.enqueue(None, u64::MAX).unwrap();
    b.release(1);
    assert_eq!(first.try_recv().unwrap(), Grant::Server(1));
    assert!(second.try_recv().is_err(), "only one slot was freed");
    assert_eq!(
        b.server(1).unwrap().active(),
        1,
        "handed over, not given back"
    );
    b.release(0);
    assert_eq!(second.try_recv().unwrap(), Grant::Server(0));
}

#[test]
fn a_persistent_waiter_waits_for_its_own_server() {
    let b = backend(&[1, 1], "");
    assert!(b.server(0).unwrap().try_take());
    assert!(b.server(1).unwrap().try_take());
    let (_, mut wants_zero) = b.enqueue(Some(0), u64::MAX).unwrap();
    b.release(1);
    assert!(wants_zero.try_recv().is_err());
    assert_eq!(b.server(1).unwrap().active(), 0);
    b.release(0);
    assert_eq!(wants_zero.try_recv().unwrap(), Grant::Server(0));
}

#[test]
fn a_withdrawn_or_abandoned_waiter_does_not_swallow_a_slot() {
    let b = backend(&[1], "");
    assert!(b.server(0).unwrap().try_take());
    let (ticket, _rx) = b.enqueue(None, u64::MAX).unwrap();
    assert!(b.withdraw(ticket));
    let (_, abandoned) = b.enqueue(None, u64::MAX).unwrap();
    drop(abandoned);
    b.release(0);
    assert_eq!(b.server(0).unwrap().active(), 0);
}

#[test]
fn the_queue_limit_refuses_at_once() {
    let b = backend(&[1], "queue = { max = 1 }");
    assert!(b.server(0).unwrap().try_take());
    let _kept = b.enqueue(None, u64::MAX).unwrap();
    assert!(b.enqueue(None, u64::MAX).is_err());
    let never = backend(&[1], "queue = { max = 0 }");
    assert!(never.enqueue(None, u64::MAX).is_err());
}

#[test]
fn waiters_give_up_when_no_server_is_left_up_and_wake_when_one_returns() {
    let b = backend(&[1, 1], "");
    assert!(b.server(0).unwrap().try_take());
    assert!(b.server(1).unwrap().try_take());
    let g = b.generation();
    assert!(b.set_up(0, false));
    assert!(b.generation() > g, "workers must see the change");
    let (_, mut rx) = b.enqueue(None, u64::MAX).unwrap();
    assert!(b.set_up(1, false));
    assert_eq!(rx.try_recv().unwrap(), Grant::GiveUp);
    // A server coming back with a free slot serves a new waiter at once.
    b.release(0);
    let (_, mut rx) = b.enqueue(None, u64::MAX).unwrap();
    assert!(rx.try_recv().is_err());
    assert!(b.set_up(0, true));
    assert_eq!(rx.try_recv().unwrap(), Grant::Server(0));
    assert!(!b.set_up(0, true), "no change, no new generation");
}

#[test]
fn passive_errors_trip_at_the_limit_and_successes_reset_them() {
    let b = backend(&[1], "");
    let s = b.server(0).unwrap();
    assert!(!s.observe(true, 3));
    assert!(!s.observe(true, 3));
    assert!(!s.observe(false, 3), "a success resets the count");
    assert!(!s.observe(true, 3));
    assert!(!s.observe(true, 3));
    assert!(s.observe(true, 3));
    assert!(!s.observe(true, 3), "the count starts again");
}

#[test]
fn servers_without_maxconn_are_never_counted() {
    let text = "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
                [[backend]]\nname = \"b\"\nservers = [ { name = \"s\", address = \"127.0.0.1:1\" } ]\n";
    let config = tern_config::parse(text, Path::new("test.toml")).unwrap();
    let b = BackendState::new(&config.backends[0]);
    for _ in 0..10 {
        assert!(b.server(0).unwrap().try_take());
    }
    assert_eq!(b.server(0).unwrap().active(), 0);
    b.release(0);
}

#[test]
fn waiters_pinned_to_a_server_that_goes_down_are_sent_back_to_balancing() {
    let b = backend(&[1, 1], "");
    assert!(b.server(0).unwrap().try_take());
    assert!(b.server(1).unwrap().try_take());
    let (_, mut pinned) = b.enqueue(Some(0), u64::MAX).unwrap();
    let (_, mut any) = b.enqueue(None, u64::MAX).unwrap();
    assert!(b.set_up(0, false));
    assert_eq!(pinned.try_recv().unwrap(), Grant::Rebalance);
    assert!(any.try_recv().is_err(), "the others keep waiting");
}

#[tokio::test]
async fn disabled_servers_start_in_maintenance_and_wake_their_check_when_enabled() {
    let text = "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"b\"\n\
                [[backend]]\nname = \"b\"\nservers = [ { name = \"s\", address = \"127.0.0.1:1\", \
                disabled = true }, { name = \"t\", address = \"127.0.0.1:2\" } ]\n";
    let config = tern_config::parse(text, Path::new("test.toml")).unwrap();
    let b = BackendState::new(&config.backends[0]);
    let (s, t) = (b.server(0).unwrap(), b.server(1).unwrap());
    assert_eq!(s.admin(), AdminState::Maint);
    assert!(!s.usable());
    assert_eq!(t.admin(), AdminState::Ready);
    assert!(t.usable());
    assert!(b.set_admin(0, AdminState::Drain));
    // Leaving maintenance left a wake-up for the checker.
    tokio::time::timeout(std::time::Duration::from_secs(1), s.resumed.notified())
        .await
        .expect("the check is woken");
    assert!(b.set_admin(0, AdminState::Ready));
    assert!(s.usable());
}
