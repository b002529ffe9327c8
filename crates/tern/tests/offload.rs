//! Handshake offload (`global.handshake_offload`) through the real binary: the TLS binds are
//! served by a low-priority thread next to each worker, which hands handshaken connections to
//! the worker. Scenarios: reloads under TLS load (the old generation's offload thread drains,
//! hands over and ends; no request fails), a stop that does not wait for handshakes in
//! progress (with and without offload), a plain bind next to an offloaded TLS bind, and the
//! handshake phase in the profile. Counters and the access log are checked with offload in
//! `tls_counters.rs` and `access_log.rs`, the rate cap in `overload.rs`.

#![allow(clippy::unwrap_used)]

mod support;
use support::*;

use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// A TLS configuration with offload on and `extra` global lines, its certificate in `dir`.
fn offload_config(dir: &Path, extra: &str) -> Config {
    let cert = dir.join("site.pem");
    if !cert.exists() {
        write_cert(dir, "site", KeyKind::EcdsaP256);
    }
    Config::new()
        .global(&format!("handshake_offload = true\n{extra}"))
        .tls(&[&format!("{cert:?}")])
}

/// `tern bench` on TLS keep-alive connections while tern reloads 5 times: every old generation
/// answers its connections' last requests with `Connection: close`, the client reconnects and
/// handshakes on the new generation's offload thread; no request fails, and each old offload
/// thread ends.
#[test]
fn reloads_under_tls_load_fail_no_request_and_end_the_old_threads() {
    let dir = temp_dir("offload-reload");
    let term = Term::start("s1");
    let config = |retries: u32| {
        offload_config(&dir, "")
            .terms(&[&term])
            .backend(&format!("retries = {retries}"))
            .toml()
    };
    let mut tern = Tern::run_in(dir.clone(), &config(1));
    assert_eq!(tern.proc.threads_named("tern-offload"), 1);
    let url = format!("https://{}/", tern.addr());
    let load = SteadyLoad::start(&dir, &url, 300, 4);
    std::thread::sleep(Duration::from_millis(500));
    for i in 0..5 {
        tern.reload(&config(2 + i));
        std::thread::sleep(Duration::from_millis(400));
    }
    let report = load.report();
    assert_eq!(report["errors_total"], 0, "{}", report["errors"]);
    let requests = report["requests"].as_u64().unwrap();
    assert!(requests > 800, "{requests} requests in 4 s at 300/s");
    // The old generations have no connection left: their offload threads are gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    while tern.proc.threads_named("tern-offload") != 1 {
        assert!(Instant::now() < deadline, "old offload threads still run");
        std::thread::sleep(Duration::from_millis(20));
    }
    let c = tern.stop_clean();
    assert!(c.get("frontend web", "requests") >= requests);
    // The first connections plus one per connection closed by a reload, at least.
    assert!(c.get("frontend web", "tls_full") >= 8, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_failures"), 0);
    assert_eq!(c.get("frontend web", "resp_5xx"), 0);
}

/// SIGTERM with a connection still in its handshake (it sent nothing) and an idle TLS
/// keep-alive connection: tern closes both and exits at once, although the handshake timeout
/// and the grace period are long.
fn a_stop_does_not_wait_for_a_handshake_in_progress(offload: bool) {
    let dir = temp_dir("offload-stop");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let toml = Config::new()
        .global(&format!("grace = \"20s\"\nhandshake_offload = {offload}"))
        .tls(&[&format!("{cert:?}")])
        .frontend("timeouts = { handshake = \"30s\" }")
        .toml();
    let mut tern = Tern::run_in(dir, &toml);
    let addr = tern.addr();
    let silent = TcpStream::connect(addr).unwrap();
    block_on(async {
        let mut idle = connect(addr, true).await;
        assert_eq!(send(&mut idle, get_req("/test")).await.status, 200);
        // Let tern take the silent connection in (accept, wait for its ClientHello).
        tokio::time::sleep(Duration::from_millis(200)).await;
        let start = Instant::now();
        tern.proc.signal("TERM");
        let status = tern.proc.wait_exit(Duration::from_secs(15));
        assert!(status.success(), "{status}");
        let took = start.elapsed();
        assert!(took < Duration::from_secs(5), "stop took {took:?}");
    });
    drop(silent);
}

#[test]
fn a_stop_does_not_wait_for_a_handshake_in_progress_offloaded() {
    a_stop_does_not_wait_for_a_handshake_in_progress(true);
}

#[test]
fn a_stop_does_not_wait_for_a_handshake_in_progress_inline() {
    a_stop_does_not_wait_for_a_handshake_in_progress(false);
}

/// A plain bind stays on the worker next to an offloaded TLS bind; the handshakes are profiled
/// on the offload thread's table, which the profile adds in.
#[test]
fn plain_and_offloaded_tls_binds_serve_and_handshakes_are_profiled() {
    let dir = temp_dir("offload-profile");
    let term = Term::start("s1");
    let toml = offload_config(&dir, "profiling = true")
        .terms(&[&term])
        .binds(&[
            "{ address = \"127.0.0.1:0\", tls = false }",
            "\"127.0.0.1:0\"",
        ])
        .toml();
    let tern = Tern::run_in(dir, &toml);
    assert!(!tern.is_tls(0) && tern.is_tls(1));
    let (plain, tls) = (tern.binds[0].1, tern.binds[1].1);
    block_on(async {
        for _ in 0..3 {
            assert_eq!(get(plain, false, "/").await.status, 200);
            assert_eq!(get(tls, true, "/").await.status, 200);
        }
    });
    let c = tern.stop_clean();
    let profile = |kind: &str, key: &str| c.get(&format!("profile {kind}"), key);
    assert_eq!(c.get("frontend web", "requests"), 6);
    assert_eq!(c.get("frontend web", "tls_full"), 3);
    assert!(profile("tls_handshake", "calls") >= 3, "{c:?}");
    assert!(profile("tls_handshake", "cpu_ns") > 0);
    // Both threads' accept loops: the plain bind's and the TLS bind's.
    assert!(profile("accept", "calls") >= 6);
    assert!(profile("request", "calls") >= 6);
}
