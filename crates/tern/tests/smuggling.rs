//! Request smuggling: framing vectors from RFC 9112 and the published research sent through
//! the real `tern` binary to a backend that records every byte (issue 19).
//!
//! Each vector runs against a fresh proxy and a fresh backend, so that no connection pool
//! carries one vector's bytes into another's record. A vector passes when tern refuses it, or
//! forwards it so that the backend reads, with a parser that has no leniency at all
//! (`smuggling/strict.rs`), exactly the requests tern parsed, each once (`outcome.rs` has the
//! rules). On top of that, each vector pins tern's outcome (`vectors.rs`), so a change of
//! behaviour shows up here and in the table of docs/security.md.
//!
//! The same runner drives HAProxy and nginx for that table:
//!
//! ```sh
//! cargo test -p tern --test smuggling -- --ignored --nocapture compare
//! ```
//!
//! prints one line per vector and a table per family for each proxy found on the PATH.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "smuggling/backend.rs"]
mod backend;
#[path = "smuggling/outcome.rs"]
mod outcome;
#[path = "smuggling/proxies.rs"]
mod proxies;
#[path = "smuggling/strict.rs"]
mod strict;
#[path = "smuggling/vectors.rs"]
mod vectors;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use proxies::Kind;
use vectors::{Family, Vector, VECTORS};

/// How many vectors run at once against tern (each with its own tern and backend).
const PARALLEL: usize = 4;

/// What one vector did through one proxy: the outcome, or why it was unsafe.
#[derive(Debug)]
struct Run {
    vector: Vector,
    verdict: Result<String, String>,
}

/// Sends one vector through a fresh `kind` proxy and judges it.
fn run_one(kind: Kind, vector: Vector) -> Run {
    let backend = backend::Backend::start();
    let proxy = proxies::start(kind, backend.addr);
    let client = outcome::send(proxy.addr(), &vector.bytes());
    proxy.kill();
    let conns = backend.finish();
    Run {
        vector,
        verdict: outcome::judge(&client, &conns),
    }
}

/// Runs every vector through `kind`, `parallel` at a time, in table order.
fn run_all(kind: Kind, parallel: usize) -> Vec<Run> {
    let next = AtomicUsize::new(0);
    let runs = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..parallel {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(vector) = VECTORS.get(i) else { break };
                let run = run_one(kind, *vector);
                runs.lock().unwrap().push((i, run));
            });
        }
    });
    let mut runs = runs.into_inner().unwrap();
    runs.sort_by_key(|(i, _)| *i);
    runs.into_iter().map(|(_, r)| r).collect()
}

fn verdict_text(r: &Run) -> String {
    match &r.verdict {
        Ok(outcome) => outcome.clone(),
        Err(why) => format!("UNSAFE: {why}"),
    }
}

#[test]
fn the_suite_covers_every_family_with_at_least_60_vectors() {
    assert!(VECTORS.len() >= 60, "{} vectors", VECTORS.len());
    for family in Family::ALL {
        let n = VECTORS.iter().filter(|v| v.family == family).count();
        assert!(n >= 4, "{}: {n} vectors", family.name());
    }
    let mut names: Vec<&str> = VECTORS.iter().map(|v| v.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), VECTORS.len(), "vector names repeat");
}

#[test]
fn every_vector_is_refused_or_forwarded_unambiguously_once() {
    let runs = run_all(Kind::Tern, PARALLEL);
    let mut failures = Vec::new();
    for r in &runs {
        let got = verdict_text(r);
        println!("{:<40} {got}", r.vector.name);
        if r.verdict.is_err() || got != r.vector.tern {
            failures.push(format!(
                "{}: expected {:?}, got {got}",
                r.vector.name, r.vector.tern
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} vectors:\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
}

#[test]
fn the_runner_catches_a_proxy_that_parses_only_the_first_head() {
    let caught = [
        "cl-te",
        "te-cl",
        "pipeline-of-two",
        "chunk-size-overflow",
        "chunk-size-trailing-space",
        "lf-only-head",
        "fold-host",
        "absolute-form-other-host",
        "trailer-framing-fields",
    ];
    let clean = ["get-body-is-a-request", "chunk-data-is-a-request"];
    for name in caught.into_iter().chain(clean) {
        let vector = *VECTORS.iter().find(|v| v.name == name).expect(name);
        let r = run_one(Kind::Naive, vector);
        let expected_unsafe = caught.contains(&name);
        assert_eq!(
            r.verdict.is_err(),
            expected_unsafe,
            "{name} through the naive proxy: {}",
            verdict_text(&r)
        );
    }
}

/// The comparison for docs/security.md: every vector through tern, HAProxy and nginx.
#[test]
#[ignore = "needs haproxy and nginx; run by hand for docs/security.md"]
fn compare() {
    let kinds: Vec<Kind> = [Kind::Tern, Kind::Haproxy, Kind::Nginx]
        .into_iter()
        .filter(|k| *k == Kind::Tern || support::have(&k.name().to_ascii_lowercase()))
        .collect();
    // One at a time: the other proxies inherit their listening socket (see proxies.rs).
    let results: Vec<(Kind, Vec<Run>)> = kinds.iter().map(|k| (*k, run_all(*k, 1))).collect();
    let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    println!("| vector | source | {} |", names.join(" | "));
    for (i, v) in VECTORS.iter().enumerate() {
        let cells: Vec<String> = results
            .iter()
            .map(|(_, runs)| verdict_text(&runs[i]))
            .collect();
        println!("| `{}` | {} | {} |", v.name, v.source, cells.join(" | "));
    }
    println!();
    summary(&results);
}

/// One row per family: how many vectors each proxy refused, forwarded, or forwarded unsafely.
fn summary(results: &[(Kind, Vec<Run>)]) {
    for family in Family::ALL {
        let n = VECTORS.iter().filter(|v| v.family == family).count();
        let cells: Vec<String> = results
            .iter()
            .map(|(_, runs)| {
                let of: Vec<&Run> = runs.iter().filter(|r| r.vector.family == family).collect();
                let unsafe_ = of.iter().filter(|r| r.verdict.is_err()).count();
                let refused = of
                    .iter()
                    .filter(|r| {
                        r.verdict
                            .as_ref()
                            .is_ok_and(|o| !o.starts_with("fwd") && !o.contains("100 fwd"))
                    })
                    .count();
                format!(
                    "{refused} refused, {} forwarded, {unsafe_} unsafe",
                    of.len() - refused - unsafe_
                )
            })
            .collect();
        println!("| {} | {n} | {} |", family.name(), cells.join(" | "));
    }
}
