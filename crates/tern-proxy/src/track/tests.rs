#![allow(clippy::unwrap_used)]

use std::time::Duration;

use tern_config::{CounterFetch, CounterOp, CounterSource, CounterTable, Store, TableKey};

use super::*;

fn tables(size: usize) -> Arc<Tables> {
    let store = Store {
        conn_cur: true,
        http_req_rate: Some(Duration::from_secs(10)),
        gpc0: true,
        ..Store::default()
    };
    Arc::new(Tables::build(&[CounterTable {
        name: "t".into(),
        key: TableKey::Ip,
        size,
        expire: Duration::from_secs(60),
        store,
        peers: None,
    }]))
}

fn get(c: Counter) -> CounterFetch {
    CounterFetch {
        source: CounterSource::Tracked(0),
        op: CounterOp::Get(c),
    }
}

const PEER: IpAddr = IpAddr::V4(std::net::Ipv4Addr::new(192, 0, 2, 1));

#[test]
fn a_request_track_counts_and_ends_with_its_request() {
    let t = tables(10);
    let mut s = Tracking::new(&t);
    s.track(0, 0, Key::Ip(PEER), false);
    assert_eq!(s.counter(&get(Counter::HttpReqRate), PEER), Some(1));
    assert_eq!(s.counter(&get(Counter::ConnCur), PEER), Some(1));
    // Not stored: absent.
    assert_eq!(s.counter(&get(Counter::ConnCnt), PEER), None);
    let inc = CounterFetch {
        source: CounterSource::Tracked(0),
        op: CounterOp::IncGpc0,
    };
    assert_eq!(s.counter(&inc, PEER), Some(1));
    assert_eq!(s.counter(&inc, PEER), Some(2));
    s.request_ended();
    assert!(s.is_idle());
    let mut other = Tracking::new(&t);
    other.track(1, 0, Key::Ip(PEER), true);
    let by_src = CounterFetch {
        source: CounterSource::Src(tern_config::TableRef {
            name: "t".into(),
            index: 0,
        }),
        op: CounterOp::Get(Counter::ConnCur),
    };
    assert_eq!(other.counter(&by_src, PEER), Some(1));
    drop(other);
    assert_eq!(Tracking::new(&t).counter(&by_src, PEER), Some(0));
}

/// The documented bound: a limit of 100 requests per 10 s checked by two workers at once
/// lets through 100 requests, less at most one per worker deciding at the same instant.
#[test]
fn two_workers_enforce_a_limit_within_its_bound() {
    let t = tables(100);
    let passed = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                for _ in 0..300 {
                    let mut s = Tracking::new(&t);
                    s.track(0, 0, Key::Ip(PEER), false);
                    if s.counter(&get(Counter::HttpReqRate), PEER).unwrap() <= 100 {
                        passed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let passed = passed.into_inner();
    assert!((95..=100).contains(&passed), "{passed} requests passed");
}

/// The memory per entry docs/configuration.md gives rests on these sizes.
#[test]
fn entry_sizes_match_the_documented_cost() {
    assert_eq!(std::mem::size_of::<table::Entry>(), 112);
    assert_eq!(std::mem::size_of::<Key>(), 24);
}
