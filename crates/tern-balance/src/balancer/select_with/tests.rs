#![allow(clippy::unwrap_used)]

use super::super::tests::{all_methods, ctx_for};
use super::super::{BalanceMethod, ServerSpec};
use super::*;
use crate::{HashKey, HashType};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn balancer(method: BalanceMethod, weights: &[u32]) -> Balancer {
    let servers: Vec<ServerSpec> = weights.iter().map(|&w| ServerSpec::new(w)).collect();
    Balancer::new(method, &servers, 0).unwrap()
}

/// Counts of `picks` picks by `select_with` refusing `refused`.
fn shares(b: &mut Balancer, n: usize, picks: usize, refused: ServerId) -> Vec<usize> {
    let mut counts = vec![0; n];
    for i in 0..picks {
        let s = b
            .select_with(&ctx_for(i as u32, b"id=1"), |s| s != refused)
            .unwrap();
        counts[s] += 1;
    }
    counts
}

#[test]
fn refused_round_robin_server_keeps_its_turn() {
    let mut b = balancer(BalanceMethod::RoundRobin, &[1, 1, 1]);
    let ctx = PickContext::new();
    assert_eq!(b.select_with(&ctx, |s| s != 0), Ok(1));
    assert_eq!(b.select(&ctx), Ok(0), "0 was refused, not skipped");
    assert_eq!(b.select(&ctx), Ok(2));
}

#[test]
fn static_rr_uses_up_the_skipped_entry() {
    let mut b = balancer(BalanceMethod::StaticRoundRobin, &[1, 1, 1]);
    let ctx = PickContext::new();
    assert_eq!(b.select_with(&ctx, |s| s != 0), Ok(1));
    assert_eq!(b.select(&ctx), Ok(2));
    assert_eq!(b.select(&ctx), Ok(0));
}

#[test]
fn one_refused_server_leaves_the_others_shares() {
    let weights = [3, 1, 2, 4];
    let rest: u32 = weights[1..].iter().sum();
    let cases = [
        (BalanceMethod::RoundRobin, 7_000, 1),
        (BalanceMethod::StaticRoundRobin, 7_000, 1),
        (BalanceMethod::Random { draws: 1 }, 21_000, 150),
        (BalanceMethod::random(), 21_000, 150),
    ];
    for (method, picks, tolerance) in cases {
        let mut b = balancer(method.clone(), &weights);
        let counts = shares(&mut b, weights.len(), picks, 0);
        assert_eq!(counts[0], 0);
        for (s, &w) in weights.iter().enumerate().skip(1) {
            let expected = picks * w as usize / rest as usize;
            assert!(
                counts[s].abs_diff(expected) <= tolerance,
                "{method:?}: server {s} got {} of {picks}, expected {expected}",
                counts[s]
            );
        }
    }
}

#[test]
fn stateful_orders_are_left_exactly_as_they_were() {
    for method in [BalanceMethod::LeastConn, BalanceMethod::First] {
        let servers = [ServerSpec::new(2).maxconn(3); 4];
        let mut b = Balancer::new(method.clone(), &servers, 0).unwrap();
        let ctx = PickContext::new();
        for _ in 0..5 {
            let s = b.select(&ctx).unwrap();
            b.on_start(s);
        }
        let mut twin = b.clone();
        let top = b.select(&ctx).unwrap();
        let second = b.select_with(&ctx, |s| s != top).unwrap();
        assert_ne!(second, top);
        for _ in 0..7 {
            let (x, y) = (b.select(&ctx), twin.select(&ctx));
            assert_eq!(x, y, "{method:?}");
            if let Ok(s) = x {
                b.on_start(s);
                twin.on_start(s);
            }
        }
    }
}

#[test]
fn refused_hash_keys_move_to_the_next_server_only_for_the_call() {
    let consistent = HashType::Consistent { balance_factor: 0 };
    for hash_type in [consistent, HashType::MapBased] {
        let method = BalanceMethod::Hash {
            key: HashKey::Uri { whole: false },
            hash_type,
        };
        let mut b = balancer(method, &[1, 2, 1, 3, 1]);
        let paths: Vec<String> = (0..200).map(|i| format!("/k/{i}")).collect();
        let place = |b: &mut Balancer| -> Vec<ServerId> {
            paths
                .iter()
                .map(|p| {
                    b.select(&PickContext::new().with_path(p.as_bytes()))
                        .unwrap()
                })
                .collect()
        };
        let before = place(&mut b);
        let ctx = PickContext::new().with_path(paths[0].as_bytes());
        let owner = before[0];
        let next = b.select_with(&ctx, |s| s != owner).unwrap();
        assert_ne!(next, owner);
        assert_eq!(b.select_with(&ctx, |s| s != owner), Ok(next), "stable");
        let mut tried = Vec::new();
        let all = b.select_with(&ctx, |s| {
            tried.push(s);
            false
        });
        assert_eq!(all, Err(NoServer::Full));
        tried.sort_unstable();
        assert_eq!(tried, vec![0, 1, 2, 3, 4]);
        assert_eq!(place(&mut b), before, "every key back on its server");
    }
}

#[test]
fn refusing_every_active_server_is_full_not_a_spill() {
    let servers = [
        ServerSpec::new(1),
        ServerSpec::new(1).backup(),
        ServerSpec::new(1),
    ];
    let mut b = Balancer::new(BalanceMethod::RoundRobin, &servers, 0).unwrap();
    let ctx = PickContext::new();
    let mut offered = Vec::new();
    let got = b.select_with(&ctx, |s| {
        offered.push(s);
        false
    });
    assert_eq!(got, Err(NoServer::Full));
    offered.sort_unstable();
    assert_eq!(offered, vec![0, 2]);
    b.set_usable(0, false);
    b.set_usable(2, false);
    assert_eq!(b.select_with(&ctx, |_| true), Ok(1));
    b.set_usable(1, false);
    assert_eq!(b.select_with(&ctx, |_| true), Err(NoServer::Down));
}

/// A context whose every key varies with `i`.
fn varied(i: u32, key: &str) -> PickContext<'_> {
    ctx_for(i, key.as_bytes()).with_path(key.as_bytes())
}

#[test]
fn exclusion_never_changes_health() {
    for method in all_methods() {
        let servers = [ServerSpec::new(1).maxconn(1); 4];
        let mut b = Balancer::new(method.clone(), &servers, 7).unwrap();
        b.set_usable(2, false);
        for i in 0..50u32 {
            let _ = b.select_with(&ctx_for(i, b"id=3"), |s| (i >> s) & 1 == 0);
        }
        let keys: Vec<String> = (0..200).map(|i| format!("id={i}")).collect();
        let mut seen = BTreeSet::new();
        for (i, key) in (0u32..).zip(&keys) {
            if let Ok(s) = b.select(&varied(i, key)) {
                b.on_start(s);
                seen.insert(s);
            }
        }
        assert_eq!(seen, BTreeSet::from([0, 1, 3]), "{method:?}");
        b.set_usable(2, true);
        let back = (0u32..).zip(&keys).any(|(i, key)| {
            let got = b.select(&varied(i, key));
            if let Ok(s) = got {
                b.on_start(s);
            }
            got == Ok(2)
        });
        assert!(back, "{method:?}: server 2 is usable again");
    }
}

proptest! {
    /// With `take` always true, `select_with` is `select`, state change included.
    #[test]
    fn always_taking_is_select(
        method in prop::sample::select(all_methods()),
        weights in prop::collection::vec(0u32..5, 1..8),
        seed in any::<u64>(),
    ) {
        let servers: Vec<ServerSpec> = weights.iter().map(|&w| ServerSpec::new(w).maxconn(2)).collect();
        let mut a = Balancer::new(method, &servers, seed).unwrap();
        let mut b = a.clone();
        for i in 0..60u32 {
            let ctx = ctx_for(i % 7, b"id=2");
            let (x, y) = (a.select(&ctx), b.select_with(&ctx, |_| true));
            prop_assert_eq!(x, y);
            if let Ok(s) = x {
                if i % 3 == 0 { a.on_finish(s); b.on_finish(s); } else { a.on_start(s); b.on_start(s); }
            }
        }
    }

    /// Over random tiers, health and weight changes, streams and refusals: each server is
    /// offered at most once, only usable servers of the right tier are offered, an accepted one
    /// is returned, `Full` means every usable server of the tier was refused (or, for `first`,
    /// refused or full), and plain picks afterwards still respect health.
    #[test]
    fn refusals_respect_health_tiers_and_exclusion(
        method in prop::sample::select(all_methods()),
        specs in prop::collection::vec((0u32..4, any::<bool>(), 0u32..3), 1..10),
        ops in prop::collection::vec((0u8..7, 0usize..10, 0u32..4, any::<u16>()), 1..120),
        seed in any::<u64>(),
    ) {
        let servers: Vec<ServerSpec> = specs
            .iter()
            .map(|&(w, backup, maxconn)| {
                let s = ServerSpec::new(w).maxconn(maxconn);
                if backup { s.backup() } else { s }
            })
            .collect();
        let n = servers.len();
        let is_first = matches!(method, BalanceMethod::First);
        let mut b = Balancer::new(method, &servers, seed).unwrap();
        let mut weight: Vec<u32> = servers.iter().map(|s| s.weight).collect();
        let mut up = vec![true; n];
        let mut held: Vec<ServerId> = Vec::new();
        for (step, (op, i, v, mask)) in ops.into_iter().enumerate() {
            let i = i % n;
            match op {
                0 => { b.set_weight(i, v); weight[i] = v; }
                1 => { up[i] = !up[i]; b.set_usable(i, up[i]); }
                2 => if let Some(s) = held.pop() { b.on_finish(s); },
                _ => {}
            }
            let usable = |j: usize| up[j] && weight[j] > 0;
            let active_usable = (0..n).any(|j| !servers[j].backup && usable(j));
            let tier: BTreeSet<ServerId> =
                (0..n).filter(|&j| usable(j) && servers[j].backup != active_usable).collect();
            let query = format!("id={v}");
            let ctx = if v == 0 { PickContext::new() } else { ctx_for(step as u32, query.as_bytes()) };
            let refused = |s: ServerId| (mask >> (s % 16)) & 1 == 1;
            let mut offered = Vec::new();
            let got = b.select_with(&ctx, |s| { offered.push(s); !refused(s) });
            let distinct: BTreeSet<ServerId> = offered.iter().copied().collect();
            prop_assert_eq!(distinct.len(), offered.len(), "offered twice: {:?}", offered);
            prop_assert!(distinct.is_subset(&tier), "offered {:?} outside {:?}", offered, tier);
            match got {
                Ok(s) => {
                    prop_assert_eq!(offered.last(), Some(&s));
                    prop_assert!(!refused(s));
                    if op >= 5 { b.on_start(s); held.push(s); }
                }
                Err(NoServer::Down) => {
                    prop_assert!(tier.is_empty());
                    prop_assert!(offered.is_empty());
                }
                Err(NoServer::Full) => {
                    prop_assert!(!tier.is_empty());
                    prop_assert!(offered.iter().all(|&s| refused(s)));
                    if !is_first {
                        prop_assert_eq!(&distinct, &tier, "not every usable server was offered");
                    }
                }
            }
            match b.select(&ctx) {
                Ok(s) => prop_assert!(tier.contains(&s), "plain pick {} outside {:?}", s, tier),
                Err(NoServer::Down) => prop_assert!(tier.is_empty()),
                Err(NoServer::Full) => prop_assert!(is_first && !tier.is_empty()),
            }
        }
    }
}
