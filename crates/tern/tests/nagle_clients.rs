//! Clients that leave Nagle on get their first response on a new TLS connection at once.
//!
//! Such a client (Python's `ssl` over a default socket, as here; `http.client`, Java's
//! `HttpURLConnection`) holds its request back while its TLS Finished is unacknowledged. If
//! tern sent nothing and let the kernel delay its ACK, every new connection would wait ~40 ms
//! (the delayed-ACK timer) for its first response: the defect this file pins, for full TLS 1.3
//! handshakes on a worker and on the offload thread, and for resumed TLS 1.2 sessions (where
//! the client's Finished is the last flight too).
//!
//! The bound is a median over 20 connections: 20 ms, half the 40 ms the stall costs (a stall
//! delays every connection, so the median with it is above 40 ms) and far over what a handshake
//! costs here (under 2 ms quiet; a median of 10 ms was once seen with two builds running).

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::process::Command;

use tern_tls::KeyKind;

const CONNECTIONS: usize = 20;
/// The median first-response time allowed, in milliseconds.
const MEDIAN_LIMIT_MS: f64 = 20.0;

/// The first-response times (ms) of `CONNECTIONS` new connections from the Python client.
fn python_first_responses(tern: &Tern, mode: &str) -> Vec<f64> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/clients/nagle_first_response.py"
    );
    let addr = tern.addr();
    let out = Command::new("python3")
        .args([
            script,
            &addr.ip().to_string(),
            &addr.port().to_string(),
            &CONNECTIONS.to_string(),
            mode,
        ])
        .output()
        .expect("python3 runs (the tests need it: .ci/run installs it)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{mode}: the Python client failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .trim()
        .split(',')
        .map(|t| t.parse().unwrap())
        .collect()
}

fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// tern over one `tern term`, ECDSA certificate, with `global` lines added.
fn tern_tls(tag: &str, global: &str) -> (Tern, Term) {
    let term = Term::start(tag);
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let cfg = Config::new()
        .tls(&[&format!("{cert:?}")])
        .terms(&[&term])
        .global(global);
    (Tern::run_in(dir, &cfg.toml()), term)
}

fn assert_prompt(tern: &Tern, mode: &str) {
    let times = python_first_responses(tern, mode);
    assert_eq!(times.len(), CONNECTIONS);
    let median = median(times.clone());
    println!("{mode}: median first response {median:.2} ms: {times:?}");
    assert!(
        median < MEDIAN_LIMIT_MS,
        "{mode}: median first response {median:.1} ms over {CONNECTIONS} connections \
         (limit {MEDIAN_LIMIT_MS} ms): {times:?}"
    );
}

#[test]
fn nagle_client_gets_its_first_tls13_response_at_once() {
    let (tern, _term) = tern_tls("nagle-inline", "");
    assert_prompt(&tern, "tls13");
    let counters = tern.stop();
    assert!(counters.get("frontend web", "tls_full") >= CONNECTIONS as u64);
}

#[test]
fn nagle_client_gets_its_first_response_at_once_with_offload() {
    let (tern, _term) = tern_tls("nagle-offload", "handshake_offload = true");
    assert_prompt(&tern, "tls13");
    tern.stop();
}

#[test]
fn nagle_client_gets_its_first_response_at_once_on_a_resumed_tls12_session() {
    let (tern, _term) = tern_tls("nagle-tls12", "");
    assert_prompt(&tern, "tls12-resumed");
    let counters = tern.stop();
    assert!(counters.get("frontend web", "tls_resumed") >= CONNECTIONS as u64);
}
