#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

const SEC: u64 = 1_000_000_000;

#[test]
fn counters_in_place_are_bounded_listed_and_cleared() {
    let mut t: StickTable<u32, u64> = StickTable::new(2, Duration::from_secs(10));
    *t.get_or_insert_with(&1, 0, || 0).unwrap() += 5;
    *t.get_or_insert_with(&1, SEC, || 0).unwrap() += 1;
    *t.get_or_insert_with(&2, 2 * SEC, || 7).unwrap() += 1;
    *t.get_or_insert_with(&3, 3 * SEC, || 0).unwrap() += 1;
    // Key 1 was the least recently used: evicted for key 3.
    let listed: Vec<(u32, u64)> = t.iter(3 * SEC).map(|(k, v)| (*k, *v)).collect();
    assert_eq!(listed, vec![(2, 8), (3, 1)]);
    // Expired entries are not listed, and start afresh.
    assert_eq!(t.iter(13 * SEC).count(), 0);
    assert_eq!(*t.get_or_insert_with(&2, 13 * SEC, || 0).unwrap(), 0);
    t.clear();
    assert!(t.is_empty());
    let mut none: StickTable<u32, u64> = StickTable::new(0, Duration::from_secs(10));
    assert!(none.get_or_insert_with(&1, 0, || 0).is_none());
}

#[test]
fn remembers_and_refreshes() {
    let mut t = StickTable::new(10, Duration::from_secs(30));
    assert_eq!(t.get("a", 0), None);
    t.put("a".to_string(), 3, 0);
    assert_eq!(t.get("a", 20 * SEC), Some(3));
    assert_eq!(
        t.get("a", 49 * SEC),
        Some(3),
        "the get at 20 s refreshed it"
    );
    assert_eq!(
        t.get("a", 79 * SEC),
        None,
        "expired 30 s after its last use"
    );
    assert!(t.is_empty());
    t.put("a".to_string(), 1, 80 * SEC);
    t.put("a".to_string(), 2, 81 * SEC);
    assert_eq!(t.get("a", 82 * SEC), Some(2));
    assert_eq!(t.len(), 1);
    assert_eq!(t.size(), 10);
}

#[test]
fn full_table_evicts_the_least_recently_used() {
    let mut t = StickTable::new(3, Duration::from_secs(60));
    t.put(1u32, 10, 0);
    t.put(2, 20, 1);
    t.put(3, 30, 2);
    assert_eq!(t.get(&1, 3), Some(10));
    t.put(4, 40, 4);
    assert_eq!(t.len(), 3);
    assert_eq!(t.get(&2, 5), None, "2 was the least recently used");
    assert_eq!(t.get(&1, 5), Some(10));
    assert_eq!(t.get(&3, 5), Some(30));
    assert_eq!(t.get(&4, 5), Some(40));
}

#[test]
fn borrowed_lookups() {
    let mut t: StickTable<Vec<u8>> = StickTable::new(4, Duration::from_secs(1));
    t.put(b"cookie".to_vec(), 2, 0);
    assert_eq!(t.get(&b"cookie"[..], 1), Some(2));
    assert_eq!(t.remove(&b"cookie"[..]), Some(2));
    assert_eq!(t.remove(&b"cookie"[..]), None);
}

#[test]
fn forget_server_and_zero_size() {
    let mut t = StickTable::new(8, Duration::from_secs(60));
    for k in 0..6u32 {
        t.put(k, (k % 2) as ServerId, 0);
    }
    t.forget_server(1);
    assert_eq!(t.len(), 3);
    assert!((0..6u32).all(|k| t.get(&k, 1) != Some(1)));
    let mut none = StickTable::new(0, Duration::from_secs(60));
    none.put(1u32, 1, 0);
    assert_eq!(none.get(&1, 0), None);
    assert!(none.is_empty());
}

#[test]
fn purge_and_bounded_memory() {
    let mut t = StickTable::new(4, Duration::from_secs(10));
    for i in 0..10_000u64 {
        t.put(i % 6, 0, i);
        t.get(&(i % 3), i);
        assert!(t.uses.len() <= 2 * t.len() + SLACK);
        assert!(t.entries.len() <= 4);
    }
    t.purge(10_000 + 10 * SEC);
    assert!(t.is_empty());
    let mut t = StickTable::new(4, Duration::ZERO);
    t.put(1u32, 1, 5);
    assert_eq!(t.get(&1, 5), None, "a zero expiry keeps nothing");
}

#[derive(Debug, Clone)]
enum Op {
    Get(u8),
    Put(u8, ServerId),
    Wait(u64),
    Remove(u8),
    Forget(ServerId),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u8..12).prop_map(Op::Get),
        4 => (0u8..12, 0usize..4).prop_map(|(k, s)| Op::Put(k, s)),
        2 => (0u64..20).prop_map(Op::Wait),
        1 => (0u8..12).prop_map(Op::Remove),
        1 => (0usize..4).prop_map(Op::Forget),
    ]
}

/// key -> (server, last seen, last use number)
type Model = BTreeMap<u8, (ServerId, u64, u64)>;

fn purge(model: &mut Model, now: u64, expire: u64) {
    model.retain(|_, e| now - e.1 < expire);
}

proptest! {
    /// Against a plain map with explicit expiry and LRU: same answers, same size, never above
    /// `size`, and the use FIFO stays bounded.
    #[test]
    fn behaves_like_an_lru_map(
        size in 0usize..6,
        expire in 1u64..40,
        ops in prop::collection::vec(op(), 1..300),
    ) {
        let mut t = StickTable::new(size, Duration::from_nanos(expire));
        let mut model = Model::new();
        let (mut now, mut uses) = (0u64, 0u64);
        for op in ops {
            match op {
                Op::Get(k) => {
                    purge(&mut model, now, expire);
                    let want = model.get_mut(&k).map(|e| {
                        (e.1, e.2) = (now, uses);
                        e.0
                    });
                    uses += 1;
                    prop_assert_eq!(t.get(&k, now), want);
                }
                Op::Put(k, s) => {
                    purge(&mut model, now, expire);
                    if !model.contains_key(&k) && model.len() >= size && size > 0 {
                        let lru = *model.iter().min_by_key(|(_, e)| e.2).unwrap().0;
                        model.remove(&lru);
                    }
                    if size > 0 {
                        model.insert(k, (s, now, uses));
                    }
                    uses += 1;
                    t.put(k, s, now);
                }
                Op::Wait(d) => now += d,
                Op::Remove(k) => {
                    prop_assert_eq!(t.remove(&k), model.remove(&k).map(|e| e.0));
                }
                Op::Forget(s) => {
                    model.retain(|_, e| e.0 != s);
                    t.forget_server(s);
                }
            }
            // `remove` of an expired, unpurged entry is allowed to find it: compare after a
            // purge on both sides.
            t.purge(now);
            purge(&mut model, now, expire);
            prop_assert_eq!(t.len(), model.len());
            prop_assert!(t.len() <= size);
            prop_assert!(t.entries.len() <= size);
            prop_assert!(t.uses.len() <= 2 * t.len() + SLACK);
        }
    }
}
