#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr};

pub(super) fn all_methods() -> Vec<BalanceMethod> {
    let hash = |key: HashKey, hash_type| BalanceMethod::Hash { key, hash_type };
    vec![
        BalanceMethod::RoundRobin,
        BalanceMethod::StaticRoundRobin,
        BalanceMethod::LeastConn,
        BalanceMethod::First,
        hash(HashKey::Source, HashType::MapBased),
        hash(
            HashKey::Uri { whole: false },
            HashType::Consistent { balance_factor: 0 },
        ),
        hash(
            HashKey::UrlParam("id".into()),
            HashType::Consistent {
                balance_factor: 125,
            },
        ),
        hash(HashKey::Header("X-User".into()), HashType::MapBased),
        BalanceMethod::random(),
        BalanceMethod::Random { draws: 1 },
        BalanceMethod::ewma(),
    ]
}

/// A context with every key filled, varying with `i`.
pub(super) fn ctx_for(i: u32, query: &[u8]) -> PickContext<'_> {
    PickContext::new()
        .with_client(IpAddr::V4(Ipv4Addr::from(i)))
        .with_path(b"/p")
        .with_query(query)
        .with_header(query)
        .with_now(u64::from(i) * 1000)
}

#[test]
fn backups_only_when_no_active_is_usable() {
    let servers = [
        ServerSpec::new(1).backup(),
        ServerSpec::new(1),
        ServerSpec::new(1).backup(),
        ServerSpec::new(1),
    ];
    let mut b = Balancer::new(BalanceMethod::RoundRobin, &servers, 0).unwrap();
    let ctx = PickContext::new();
    let got: Vec<_> = (0..4).map(|_| b.select(&ctx).unwrap()).collect();
    assert_eq!(got, vec![1, 3, 1, 3]);
    b.set_usable(1, false);
    b.set_weight(3, 0);
    let mut got: Vec<_> = (0..4).map(|_| b.select(&ctx).unwrap()).collect();
    assert_ne!(got[0], got[1], "backups alternate too");
    got.sort_unstable();
    assert_eq!(got, vec![0, 0, 2, 2]);
    b.set_usable(1, true);
    assert_eq!(b.select(&ctx), Ok(1));
    b.set_usable(1, false);
    b.set_usable(0, false);
    b.set_usable(2, false);
    assert_eq!(b.select(&ctx), Err(NoServer::Down));
}

#[test]
fn full_is_not_down_and_does_not_spill_to_backups() {
    let servers = [ServerSpec::new(1).maxconn(1), ServerSpec::new(1).backup()];
    let mut b = Balancer::new(BalanceMethod::First, &servers, 0).unwrap();
    let ctx = PickContext::new();
    assert_eq!(b.select(&ctx), Ok(0));
    b.on_start(0);
    assert_eq!(b.inflight(0), 1);
    assert_eq!(b.select(&ctx), Err(NoServer::Full));
    b.on_finish(0);
    assert_eq!(b.select(&ctx), Ok(0));
    b.set_usable(0, false);
    assert_eq!(b.select(&ctx), Ok(1));
}

#[test]
fn bad_parameters_are_refused() {
    let one = [ServerSpec::new(1)];
    let err = |m: BalanceMethod| Balancer::new(m, &one, 0).unwrap_err();
    assert_eq!(
        err(BalanceMethod::Random { draws: 0 }),
        BuildError::Draws(0)
    );
    assert_eq!(
        err(BalanceMethod::Random { draws: 65 }),
        BuildError::Draws(65)
    );
    let zero = BalanceMethod::Ewma {
        decay: Duration::ZERO,
        initial_rtt: Duration::ZERO,
    };
    assert_eq!(err(zero), BuildError::ZeroDecay);
    let factor = |balance_factor| BalanceMethod::Hash {
        key: HashKey::Source,
        hash_type: HashType::Consistent { balance_factor },
    };
    assert_eq!(err(factor(100)), BuildError::BalanceFactor(100));
    assert!(Balancer::new(factor(0), &one, 0).is_ok());
    assert!(Balancer::new(factor(101), &one, 0).is_ok());
    let empty = BalanceMethod::Hash {
        key: HashKey::Header("".into()),
        hash_type: HashType::MapBased,
    };
    assert_eq!(err(empty), BuildError::EmptyName);
    let heavy = Balancer::new(BalanceMethod::RoundRobin, &[ServerSpec::new(257)], 0);
    assert_eq!(
        heavy.unwrap_err(),
        BuildError::Weight {
            server: 0,
            weight: 257
        }
    );
    assert!(BuildError::Draws(0)
        .to_string()
        .contains("between 1 and 64"));
}

#[test]
fn weights_clamp_and_unknown_ids_are_ignored() {
    let mut b = Balancer::new(
        BalanceMethod::RoundRobin,
        &[ServerSpec::new(1), ServerSpec::new(1)],
        0,
    )
    .unwrap();
    b.set_weight(0, 10_000);
    let ctx = PickContext::new();
    let zeros = (0..257).filter(|_| b.select(&ctx) == Ok(0)).count();
    assert_eq!(zeros, 256);
    b.set_weight(9, 1);
    b.set_usable(9, false);
    b.on_start(9);
    b.on_finish(9);
    b.on_response(9, Duration::from_millis(1), 0);
    assert_eq!(b.inflight(9), 0);
    b.on_finish(0);
    assert_eq!(b.inflight(0), 0);
}

#[test]
fn key_source_and_clock_needs() {
    let one = [ServerSpec::new(1)];
    let b = |m| Balancer::new(m, &one, 0).unwrap();
    assert_eq!(b(BalanceMethod::RoundRobin).key_source(), KeySource::None);
    assert!(!b(BalanceMethod::LeastConn).needs_clock());
    assert!(b(BalanceMethod::ewma()).needs_clock());
    let hdr = b(BalanceMethod::Hash {
        key: HashKey::Header("X-User".into()),
        hash_type: HashType::MapBased,
    });
    assert_eq!(hdr.key_source(), KeySource::Header("X-User"));
    assert_eq!(
        hdr.method(),
        &BalanceMethod::Hash {
            key: HashKey::Header("X-User".into()),
            hash_type: HashType::MapBased,
        }
    );
}

#[test]
fn seeds_offset_workers() {
    let servers = [ServerSpec::new(1); 4];
    let first = |seed| {
        Balancer::new(BalanceMethod::RoundRobin, &servers, seed)
            .unwrap()
            .select(&PickContext::new())
            .unwrap()
    };
    assert_eq!((first(0), first(1), first(2), first(5)), (0, 1, 2, 1));
}

proptest! {
    /// For every method, over random tiers, health and weight changes and streams: a pick is
    /// always an eligible server, a backup only when no active server is usable, and `Down`
    /// exactly when no server at all is usable.
    #[test]
    fn picks_respect_health_drain_and_tiers(
        method in prop::sample::select(all_methods()),
        specs in prop::collection::vec((0u32..4, any::<bool>(), 0u32..3), 1..10),
        ops in prop::collection::vec((0u8..6, 0usize..10, 0u32..4), 1..120),
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
        let mut b = Balancer::new(method, &servers, seed).unwrap();
        let mut weight: Vec<u32> = servers.iter().map(|s| s.weight).collect();
        let mut up = vec![true; n];
        let mut held: Vec<ServerId> = Vec::new();
        for (step, (op, i, v)) in ops.into_iter().enumerate() {
            let i = i % n;
            match op {
                0 => { b.set_weight(i, v); weight[i] = v; }
                1 => { up[i] = !up[i]; b.set_usable(i, up[i]); }
                2 => if let Some(s) = held.pop() { b.on_finish(s); b.on_response(s, Duration::from_micros(u64::from(v) * 100), step as u64 * 1000); },
                _ => {}
            }
            let usable = |j: usize| up[j] && weight[j] > 0;
            let active_usable = (0..n).any(|j| !servers[j].backup && usable(j));
            let any_usable = (0..n).any(usable);
            let query = format!("id={v}");
            match b.select(&ctx_for(step as u32, query.as_bytes())) {
                Ok(s) => {
                    prop_assert!(usable(s), "picked unusable {}", s);
                    prop_assert_eq!(servers[s].backup, !active_usable, "tier of {}", s);
                    if op >= 3 {
                        b.on_start(s);
                        held.push(s);
                    }
                }
                Err(NoServer::Down) => prop_assert!(!any_usable),
                Err(NoServer::Full) => {
                    prop_assert!(matches!(b.method(), BalanceMethod::First));
                    prop_assert!(any_usable);
                }
            }
        }
    }
}
