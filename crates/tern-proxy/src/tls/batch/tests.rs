//! The batcher: full batches, partial batches when the thread has nothing else ready,
//! handshakes alone, fallbacks; and the batch's results against aws-lc-rs.

#![allow(clippy::unwrap_used)]

use std::rc::Rc;

use aws_lc_rs::agreement::{self, PrivateKey, UnparsedPublicKey};
use rustls::crypto::CompletedKeyExchange;
use rustls::NamedGroup;
use tern_tls::{provider, with_prepared_x25519};

use super::*;

fn ifma() -> bool {
    tern_mb::Kernel::detect().is_some()
}

/// A client key pair of aws-lc-rs: (scalar, public share).
fn client(seed: u8) -> ([u8; 32], [u8; 32]) {
    let scalar = [seed; 32];
    let key = PrivateKey::from_private_key(&agreement::X25519, &scalar).unwrap();
    let public = key.compute_public_key().unwrap();
    (scalar, public.as_ref().try_into().unwrap())
}

/// What the handshake gets from tern's X25519 with `prepared` offered for `peer`.
fn complete(prepared: PreparedX25519, peer: &[u8; 32]) -> CompletedKeyExchange {
    let group = provider()
        .kx_groups
        .iter()
        .copied()
        .find(|g| g.name() == NamedGroup::X25519)
        .unwrap();
    let mut slot = Some(prepared);
    let done = with_prepared_x25519(&mut slot, || group.start_and_complete(peer)).unwrap();
    assert!(slot.is_none(), "the prepared result was used");
    done
}

/// The client's view: its scalar with the server's public key.
fn client_secret(scalar: &[u8; 32], server_public: &[u8]) -> Vec<u8> {
    let key = PrivateKey::from_private_key(&agreement::X25519, scalar).unwrap();
    let public = UnparsedPublicKey::new(&agreement::X25519, server_public);
    agreement::agree(&key, public, (), |s| Ok(s.to_vec())).unwrap()
}

#[test]
fn every_fill_agrees_with_aws_lc() {
    for n in 1..=8u8 {
        let clients: Vec<_> = (0..n).map(|i| client(i + 1)).collect();
        let peers: Vec<[u8; 32]> = clients.iter().map(|c| c.1).collect();
        let Some(halves) = compute::server_halves(&peers) else {
            assert!(!ifma(), "the kernels are there: a batch must compute");
            return;
        };
        assert_eq!(halves.len(), usize::from(n));
        for ((scalar, share), half) in clients.iter().zip(halves) {
            let done = complete(half.unwrap(), share);
            let expected = client_secret(scalar, &done.pub_key);
            assert_eq!(done.secret.secret_bytes(), &expected[..], "fill {n}");
        }
    }
}

#[test]
fn a_low_order_share_fails_its_check_alone() {
    let good = client(3).1;
    let Some(halves) = compute::server_halves(&[good, [0; 32], good]) else {
        assert!(!ifma());
        return;
    };
    assert!(halves[0].is_some() && halves[2].is_some());
    assert!(halves[1].is_none(), "an all-zero secret is not used");
}

/// Runs `requests` handshakes' `prepare` on one thread's event loop with `size`; returns how
/// many got a result and the counters.
fn batch_of(requests: usize, size: usize) -> (usize, BatchSnapshot) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let counters = Rc::new(BatchCounters::default());
    let settings = CryptoBatch {
        enabled: true,
        size,
        deadline: Duration::from_millis(5),
    };
    let got = local.block_on(&rt, async {
        let tasks: Vec<_> = (0..requests)
            .map(|i| {
                let counters = Rc::clone(&counters);
                let peer = client(i as u8 + 1).1;
                tokio::task::spawn_local(async move {
                    prepare(&settings, &counters, peer).await.is_some()
                })
            })
            .collect();
        let mut got = 0;
        for t in tasks {
            got += usize::from(t.await.unwrap());
        }
        got
    });
    let mut snap = BatchSnapshot::default();
    counters.add_to(&mut snap);
    (got, snap)
}

#[test]
fn a_full_batch_runs_at_once() {
    let (got, snap) = batch_of(8, 8);
    if !ifma() {
        assert_eq!((got, snap.no_ifma, snap.batches), (0, 8, 0));
        return;
    }
    assert_eq!(got, 8);
    assert_eq!((snap.batches, snap.batched), (1, 8));
    assert_eq!(snap.fill[8], 1);
    assert_eq!(snap.fallbacks(), 0);
}

#[test]
fn more_than_a_batch_makes_a_full_one_and_a_partial_one() {
    let (got, snap) = batch_of(11, 8);
    if !ifma() {
        assert_eq!((got, snap.no_ifma), (0, 11));
        return;
    }
    assert_eq!(got, 11);
    assert_eq!((snap.batches, snap.fill[8], snap.fill[3]), (2, 1, 1));
    assert!((snap.mean_fill() - 5.5).abs() < 1e-9);
}

#[test]
fn a_partial_batch_runs_when_nothing_else_is_ready() {
    let (got, snap) = batch_of(3, 8);
    if !ifma() {
        assert_eq!(snap.no_ifma, 3);
        return;
    }
    assert_eq!(got, 3);
    assert_eq!((snap.batches, snap.fill[3]), (1, 1));
}

#[test]
fn a_smaller_size_splits_the_batches() {
    let (got, snap) = batch_of(6, 3);
    if !ifma() {
        return;
    }
    assert_eq!(got, 6);
    assert_eq!((snap.batches, snap.fill[3]), (2, 2));
}

#[test]
fn a_handshake_alone_falls_back_to_aws_lc() {
    let (got, snap) = batch_of(1, 8);
    assert_eq!(got, 0);
    if ifma() {
        assert_eq!((snap.alone, snap.batches), (1, 0));
    } else {
        assert_eq!(snap.no_ifma, 1);
    }
    assert_eq!(snap.fallbacks(), 1);
}

#[test]
fn a_partial_batch_runs_at_the_deadline_while_handshakes_keep_coming() {
    if !ifma() {
        return;
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let counters = Rc::new(BatchCounters::default());
    let settings = CryptoBatch {
        enabled: true,
        size: 8,
        deadline: Duration::from_millis(10),
    };
    local.block_on(&rt, async {
        // A busy thread where a new handshake asks before every look of the flusher (and 5 ms
        // of other work each turn): the queue grows at every look and never fills, so only the
        // deadline makes it run before the last request (35 ms).
        let mut answers = Vec::new();
        for i in 0..7u8 {
            let (reply, answer) = oneshot::channel();
            enqueue(
                &settings,
                Waiting {
                    peer: client(i + 1).1,
                    reply,
                },
            );
            answers.push(answer);
            tokio::task::yield_now().await;
            std::thread::sleep(Duration::from_millis(5));
        }
        for answer in answers {
            let (_, how) = answer.await.unwrap();
            counters.count(how);
        }
    });
    let mut snap = BatchSnapshot::default();
    counters.add_to(&mut snap);
    assert_eq!(snap.batched + snap.alone, 7, "every request answered");
    assert!(snap.batches >= 2, "cut by the deadline: {snap:?}");
    assert!(snap.fill[7] == 0, "not one batch of all seven: {snap:?}");
}

#[test]
fn requests_nobody_waits_for_are_skipped() {
    if !ifma() {
        return;
    }
    let (reply, answer) = oneshot::channel();
    drop(answer);
    let gone = Waiting {
        peer: client(1).1,
        reply,
    };
    let (reply, answer) = oneshot::channel();
    let alone = Waiting {
        peer: client(2).1,
        reply,
    };
    run(vec![gone, alone]);
    let (prepared, how) = answer.blocking_recv().unwrap();
    assert!(prepared.is_none());
    assert_eq!(how, How::Alone);
}
