#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

#[test]
fn fifo_for_any_server() {
    let mut q = Queue::new(None);
    for i in 0..5 {
        q.push(i, None, 100).unwrap();
    }
    assert_eq!(q.len(), 5);
    let got: Vec<_> = (0..5).map(|s| q.take_for(s).unwrap().1).collect();
    assert_eq!(got, vec![0, 1, 2, 3, 4]);
    assert!(q.is_empty());
    assert!(q.take_for(0).is_none());
}

#[test]
fn pinned_waiters_go_only_to_their_server() {
    let mut q = Queue::new(None);
    q.push("a->1", Some(1), 100).unwrap();
    q.push("b", None, 100).unwrap();
    q.push("c->2", Some(2), 100).unwrap();
    q.push("d->1", Some(1), 100).unwrap();
    assert_eq!(q.take_for(0).unwrap().1, "b");
    assert!(
        q.take_for(0).is_none(),
        "server 0 may take no pinned waiter"
    );
    assert_eq!(q.take_for(2).unwrap().1, "c->2");
    assert_eq!(q.take_for(1).unwrap().1, "a->1");
    q.push("e", None, 100).unwrap();
    assert_eq!(q.take_for(1).unwrap().1, "d->1", "older than e");
    assert_eq!(q.take_for(1).unwrap().1, "e");
    assert!(q.pinned.is_empty());
}

#[test]
fn limits() {
    let mut never = Queue::new(Some(0));
    assert_eq!(never.push(1, None, 0), Err(1));
    let mut q = Queue::new(Some(2));
    assert_eq!(q.max(), Some(2));
    q.push(1, None, 0).unwrap();
    q.push(2, Some(3), 0).unwrap();
    assert_eq!(q.push(3, None, 0), Err(3));
    q.take_for(0).unwrap();
    q.push(3, None, 0).unwrap();
}

#[test]
fn remove_and_stale_tickets() {
    let mut q = Queue::new(None);
    let a = q.push('a', None, 100).unwrap();
    let b = q.push('b', Some(0), 100).unwrap();
    assert_eq!(q.remove(a), Some('a'));
    assert_eq!(q.remove(a), None);
    // The slot is reused; the old ticket must not reach the new waiter.
    let c = q.push('c', None, 100).unwrap();
    assert_eq!(c.slot, a.slot);
    assert_eq!(q.remove(a), None);
    assert_eq!(q.take_for(0), Some((b, 'b')));
    assert_eq!(q.remove(b), None);
    assert_eq!(q.take_for(5), Some((c, 'c')));
}

#[test]
fn expiry_by_deadline() {
    let mut q = Queue::new(None);
    q.push(1, None, 30).unwrap();
    q.push(2, Some(4), 10).unwrap();
    let t3 = q.push(3, None, 20).unwrap();
    q.push(4, None, 20).unwrap();
    assert_eq!(q.next_deadline(), Some(10));
    assert!(q.pop_expired(9).is_none());
    assert_eq!(q.expired(10), vec![2]);
    q.remove(t3);
    assert_eq!(q.next_deadline(), Some(20));
    assert_eq!(q.expired(25), vec![4]);
    assert_eq!(q.len(), 1);
    assert_eq!(q.take_for(0).unwrap().1, 1);
    assert_eq!(q.next_deadline(), None);
}

#[test]
fn drain_empties_oldest_first() {
    let mut q = Queue::new(Some(10));
    for i in 0..6 {
        let want = (i % 2 == 0).then_some(i);
        q.push(i, want, 50 - i as u64).unwrap();
    }
    assert_eq!(q.take_for(3).unwrap().1, 1);
    let drained: Vec<_> = q.drain().collect();
    assert_eq!(drained, vec![0, 2, 3, 4, 5]);
    assert!(q.is_empty());
    assert!(q.take_for(0).is_none());
    assert_eq!(q.next_deadline(), None);
    q.push(9, None, 1).unwrap();
    assert_eq!(q.len(), 1);
}

#[test]
fn stale_references_are_bounded() {
    let mut q = Queue::new(None);
    let keep = q.push(0u32, Some(7), u64::MAX).unwrap();
    for i in 0..10_000 {
        let t = q.push(i, None, u64::from(i)).unwrap();
        let p = q.push(i, Some(1), u64::from(i)).unwrap();
        if i % 2 == 0 {
            q.remove(p);
            q.take_for(2).unwrap();
        } else {
            q.remove(t);
            q.take_for(1).unwrap();
        }
        assert!(q.refs <= 2 * q.len() + SLACK);
        assert!(q.deadlines.len() <= 2 * q.len() + SLACK);
        assert!(q.slots.len() <= 3);
    }
    assert_eq!(q.len(), 1);
    assert_eq!(q.remove(keep), Some(0));
}

#[derive(Debug, Clone)]
enum Op {
    Push(Option<ServerId>, u64),
    Take(ServerId),
    Remove(usize),
    Expire(u64),
    Drain,
}

fn op() -> impl Strategy<Value = Op> {
    let want = prop::option::of(0usize..3);
    prop_oneof![
        5 => (want, 0u64..50).prop_map(|(w, d)| Op::Push(w, d)),
        4 => (0usize..4).prop_map(Op::Take),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => (0u64..10).prop_map(Op::Expire),
        1 => Just(Op::Drain),
    ]
}

proptest! {
    /// Against a plain list: FIFO among the waiters a server may take, pinned waiters only to
    /// their server, the limit, removal, expiry and drain, and bounded stale references.
    #[test]
    fn behaves_like_a_list(
        max in prop::option::of(0usize..8),
        ops in prop::collection::vec(op(), 1..200),
    ) {
        let mut q = Queue::new(max);
        // (id, want, deadline), arrival order.
        let mut model: Vec<(u32, Option<ServerId>, u64)> = Vec::new();
        let mut tickets: Vec<(Ticket, u32)> = Vec::new();
        let mut now = 0u64;
        for (id, op) in (0u32..).zip(ops) {
            match op {
                Op::Push(want, wait) => {
                    let full = max.is_some_and(|m| model.len() >= m);
                    match q.push(id, want, now + wait) {
                        Ok(t) => {
                            prop_assert!(!full);
                            model.push((id, want, now + wait));
                            tickets.push((t, id));
                        }
                        Err(back) => {
                            prop_assert!(full);
                            prop_assert_eq!(back, id);
                        }
                    }
                }
                Op::Take(server) => {
                    let expected = model
                        .iter()
                        .position(|&(_, w, _)| w.is_none() || w == Some(server));
                    let got = q.take_for(server).map(|(_, v)| v);
                    prop_assert_eq!(got, expected.map(|i| model.remove(i).0));
                }
                Op::Remove(k) if !tickets.is_empty() => {
                    let (t, v) = tickets[k % tickets.len()];
                    let at = model.iter().position(|&(id, _, _)| id == v);
                    prop_assert_eq!(q.remove(t), at.map(|i| model.remove(i).0));
                }
                Op::Remove(_) => {}
                Op::Expire(step) => {
                    now += step;
                    let mut due: Vec<_> = model.iter().filter(|e| e.2 <= now).copied().collect();
                    due.sort_by_key(|&(id, _, d)| (d, id));
                    let got = q.expired(now);
                    prop_assert_eq!(got, due.iter().map(|e| e.0).collect::<Vec<_>>());
                    model.retain(|e| e.2 > now);
                    let next = model.iter().map(|e| e.2).min();
                    prop_assert_eq!(q.next_deadline(), next);
                }
                Op::Drain => {
                    let got: Vec<_> = q.drain().collect();
                    prop_assert_eq!(got, model.drain(..).map(|e| e.0).collect::<Vec<_>>());
                }
            }
            prop_assert_eq!(q.len(), model.len());
            prop_assert!(max.is_none_or(|m| q.len() <= m));
            prop_assert!(q.refs <= 2 * q.len() + SLACK);
            prop_assert!(q.deadlines.len() <= 2 * q.len() + SLACK);
        }
    }
}

#[test]
fn waiters_pinned_to_a_server_can_be_taken_out_together() {
    let mut q = Queue::new(None);
    let a = q.push("a", Some(1), 10).unwrap();
    q.push("any", None, 10).unwrap();
    q.push("b", Some(1), 10).unwrap();
    q.push("other", Some(2), 10).unwrap();
    assert!(q.remove(a).is_some());
    assert_eq!(q.take_pinned(1), vec!["b"]);
    assert_eq!(q.len(), 2);
    assert!(q.take_pinned(1).is_empty());
    assert_eq!(q.take_for(1).map(|(_, w)| w), Some("any"));
    assert_eq!(q.take_for(2).map(|(_, w)| w), Some("other"));
    assert!(q.is_empty());
}
