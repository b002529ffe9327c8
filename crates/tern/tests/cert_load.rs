//! Benchmark (ignored by default): how long `tern check` takes to load a `cert_dir` of 10,000
//! certificates, through the same code path as `tern run` (configuration validation, then every
//! bind's certificate set loaded in parallel, keys checked against their certificates). The
//! issue's target is well under 10 s on this machine; the figure goes to BENCHMARKS.md.
//!
//! ```text
//! cargo test --release -p tern --test cert_load -- --ignored --nocapture
//! ```
//!
//! `TERN_CERT_LOAD_COUNT` changes the number of certificates (default 10,000). Half the files
//! hold their key, half keep it in `<file>.key`, so both directory layouts are measured. The keys
//! are ECDSA P-256 (making 10,000 RSA keys would take minutes; loading an RSA key costs more).

#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::check_config;
use support::*;

use std::path::Path;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// Writes `count` certificates `host-NNNNN.pem` (for `hNNNNN.example.test`) into `dir`, on two
/// threads.
fn write_certs(dir: &Path, count: usize) {
    let threads = 2;
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                for i in (t..count).step_by(threads) {
                    let name = format!("h{i:05}.example.test");
                    let cert = tern_tls::self_signed(&[name], KeyKind::EcdsaP256).unwrap();
                    let pem = dir.join(format!("host-{i:05}.pem"));
                    if i % 2 == 0 {
                        std::fs::write(&pem, format!("{}{}", cert.cert_pem, cert.key_pem))
                    } else {
                        std::fs::write(&pem, &cert.cert_pem).unwrap();
                        std::fs::write(dir.join(format!("host-{i:05}.pem.key")), &cert.key_pem)
                    }
                    .unwrap();
                }
            });
        }
    });
}

#[test]
#[ignore = "benchmark: run with --release --ignored --nocapture"]
fn check_loads_10k_certificates_from_a_cert_dir() {
    let count: usize = std::env::var("TERN_CERT_LOAD_COUNT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dir = temp_dir("cert-load");
    let hosted = dir.join("hosted");
    std::fs::create_dir_all(&hosted).unwrap();
    let started = Instant::now();
    write_certs(&hosted, count);
    println!(
        "generated {count} certificates in {:.2?}",
        started.elapsed()
    );

    let toml = Config::new()
        .frontend("tls = { cert_dir = \"hosted\" }")
        .toml();
    let mut times = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let (_, done) = check_config(&dir, &toml);
        times.push(started.elapsed());
        assert_eq!(done.code, Some(0), "{done:?}");
    }
    times.sort();
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "tern check, cert_dir of {count} certificates, {cpus} CPUs: best {:.2?}, median {:.2?} \
         (runs: {times:?})",
        times[0], times[1]
    );
    assert!(
        times[1] < Duration::from_secs(10),
        "loading {count} certificates took {:?}",
        times[1]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
