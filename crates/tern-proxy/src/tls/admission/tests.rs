#![allow(clippy::unwrap_used)]

use std::rc::Rc;

use super::*;

fn global(rate: Option<u32>, per_source: Option<u32>) -> Global {
    Global {
        workers: Some(1),
        cpus: None,
        maxconn: 100,
        grace: Duration::from_secs(1),
        hard_stop_after: Duration::from_secs(1),
        backlog: 16,
        max_tls_handshake_rate: rate,
        max_tls_handshakes_per_source: per_source,
        profiling: false,
        handshake_offload: false,
        max_conn_rate: None,
        max_sess_rate: None,
        crypto_batch: tern_config::CryptoBatch::default(),
    }
}

#[test]
fn no_caps_no_admission() {
    assert!(Admission::new(&global(None, None), 1).is_none());
}

#[tokio::test(start_paused = true)]
async fn rate_is_split_over_workers_and_spreads_a_burst() {
    // 40/s over 2 workers: 20/s here, a burst of 2.
    let a = Admission::new(&global(Some(40), None), 2).unwrap();
    let start = Instant::now();
    let mut kinds = Vec::new();
    for _ in 0..22 {
        kinds.push(a.full_handshake(|| false).await);
    }
    assert_eq!(&kinds[..2], &[Admitted::AtOnce, Admitted::AtOnce]);
    assert!(kinds[2..].iter().all(|k| *k == Admitted::Delayed));
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(990), "{took:?}");
    assert!(took <= Duration::from_millis(1100), "{took:?}");
}

#[tokio::test(start_paused = true)]
async fn waiters_are_served_in_order_and_pause_accepting() {
    let mut a = Admission::new(&global(Some(2), None), 1).unwrap();
    assert_eq!(a.waiting_limit, 16);
    a.waiting_limit = 2;
    let a = Rc::new(a);
    assert_eq!(a.full_handshake(|| false).await, Admitted::AtOnce);
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    let local = tokio::task::LocalSet::new();
    local
        .run_until(async {
            let mut tasks = Vec::new();
            for i in 0..3 {
                let (a, order) = (Rc::clone(&a), Rc::clone(&order));
                tasks.push(tokio::task::spawn_local(async move {
                    a.full_handshake(|| false).await;
                    order.borrow_mut().push(i);
                }));
                tokio::task::yield_now().await;
            }
            // Three wait, the room holds two: accepting pauses until one is served.
            assert_eq!(a.waiting.get(), 3);
            let room = a.room();
            tokio::pin!(room);
            assert!(futures_poll(room.as_mut()).await.is_none());
            a.room().await;
            assert_eq!(a.waiting.get(), 1);
            for t in tasks {
                t.await.unwrap();
            }
        })
        .await;
    assert_eq!(*order.borrow(), vec![0, 1, 2]);
}

/// Polls a future once.
async fn futures_poll<F: std::future::Future + Unpin>(f: F) -> Option<F::Output> {
    let mut f = f;
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut f).poll(cx) {
            std::task::Poll::Ready(v) => Some(v),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_charge_delays_the_next_full_handshake() {
    let a = Admission::new(&global(Some(10), None), 1).unwrap();
    let ip: IpAddr = "192.0.2.1".parse().unwrap();
    a.charge_full(ip);
    a.charge_full(ip);
    let start = Instant::now();
    assert_eq!(a.full_handshake(|| false).await, Admitted::Delayed);
    assert!(start.elapsed() >= Duration::from_millis(190));
}

#[tokio::test(start_paused = true)]
async fn per_source_budget() {
    let a = Admission::new(&global(None, Some(3)), 1).unwrap();
    assert!(!a.has_rate_cap());
    let one: IpAddr = "192.0.2.1".parse().unwrap();
    let other: IpAddr = "2001:db8::1".parse().unwrap();
    assert!((0..3).all(|_| a.source_allows(one)));
    assert!(!a.source_allows(one));
    // Another source has its own budget (a collision in 4096 slots is not expected here).
    assert!(a.source_allows(other));
    tokio::time::advance(Duration::from_millis(340)).await;
    assert!(a.source_allows(one));
    assert!(!a.source_allows(one));
    // Without a rate cap, full handshakes never wait.
    assert_eq!(a.full_handshake(|| false).await, Admitted::AtOnce);
}

#[tokio::test(start_paused = true)]
async fn a_client_that_left_while_waiting_takes_no_token() {
    let a = Admission::new(&global(Some(10), None), 1).unwrap();
    let ip: IpAddr = "192.0.2.1".parse().unwrap();
    a.charge_full(ip);
    a.charge_full(ip);
    assert_eq!(a.full_handshake(|| true).await, Admitted::Abandoned);
    // The token it did not take is there for the next one, after the same wait as before.
    let start = Instant::now();
    assert_eq!(a.full_handshake(|| false).await, Admitted::Delayed);
    assert!(start.elapsed() <= Duration::from_millis(250));
}
