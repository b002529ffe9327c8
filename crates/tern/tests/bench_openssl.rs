//! `tern bench --tls-engine openssl` against tern's OpenSSL bind, through the real binaries:
//! the suite asked with `--ciphers` is what both ends saw (the report's `tls` object, and the
//! cipher of each request in tern's access log, which names it per request where the
//! `tls_suites` counters only count) for static RSA, DHE-RSA and ECDHE-RSA with CBC; keep-alive
//! and a bulk body work; a suite the server refuses is a counted TLS error that ends on time,
//! not a hang; TLS 1.0/1.1 against a bind that allows them; TLS 1.3 with HTTP/2 and the open
//! loop against a rustls bind.

// The engine exists in the default build only (`openssl-engine`).
#![cfg(feature = "openssl-engine")]
#![allow(clippy::unwrap_used)]

#[allow(unused_imports)] // the HTTP client helpers are not needed here
mod support;
use support::*;

use std::path::Path;
use std::time::Duration;

use tern_tls::KeyKind;

/// tern with an RSA certificate and one OpenSSL bind offering `ciphers` (TLS 1.2, then any
/// other keys of its `tls` table in `more`), in a fresh directory that also receives the
/// reports.
fn ossl_tern(tag: &str, ciphers: &str, more: &str) -> (std::path::PathBuf, Tern, Term) {
    let term = Term::start(&format!("{tag}-be"));
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [{ciphers}]{more} }} }}"
    );
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    let log = "[access_log]\ntarget = \"access.log\"\nformat = \"json\"\n";
    let toml = format!("{}\n{log}", cfg.toml());
    (dir.clone(), Tern::run_in(dir, &toml), term)
}

/// How many requests tern logged with each cipher (read after it stopped).
fn logged_ciphers(dir: &Path) -> std::collections::HashMap<String, u64> {
    let text = std::fs::read_to_string(dir.join("access.log")).unwrap_or_default();
    let mut counts = std::collections::HashMap::new();
    for line in text.lines() {
        let entry: serde_json::Value = serde_json::from_str(line).unwrap();
        let cipher = entry["tls"]["cipher"].as_str().unwrap_or("none").to_owned();
        *counts.entry(cipher).or_insert(0) += 1;
    }
    counts
}

/// Runs `tern bench ARGS` (a short run, bounded) and returns its exit code, stdout and JSON.
fn bench(dir: &Path, name: &str, args: &[&str]) -> (Option<i32>, String, serde_json::Value) {
    let json = dir.join(format!("{name}.json"));
    let mut argv = vec!["bench", "-q", "--json", json.to_str().unwrap()];
    argv.extend_from_slice(args);
    argv.extend(["-d", "1", "--warmup", "0", "--timeout", "2"]);
    let done = tern_finish(&argv, Duration::from_secs(30));
    let text = std::fs::read_to_string(&json)
        .unwrap_or_else(|_| panic!("no report for {args:?}:\n{}\n{}", done.stdout, done.stderr));
    (done.code, done.stdout, serde_json::from_str(&text).unwrap())
}

/// A run of full handshakes with `--ciphers SUITE`; returns the report.
fn handshakes_with(dir: &Path, url: &str, suite: &str) -> serde_json::Value {
    let args = [
        url,
        "--tls-engine",
        "openssl",
        "--ciphers",
        suite,
        "-c",
        "2",
        "--requests-per-conn",
        "1",
    ];
    let (code, out, report) = bench(dir, suite, &args);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(report["errors_total"], 0, "{report}");
    assert!(
        report["handshakes"]["full"].as_u64().unwrap() > 5,
        "{report}"
    );
    assert_eq!(report["tls"]["engine"], "openssl", "{report}");
    assert_eq!(report["settings"]["tls_offer"]["engine"], "openssl");
    assert!(out.contains("openssl client"), "{out}");
    report
}

#[test]
fn openssl_client_negotiates_the_suite_asked_for() {
    let ciphers = "\"AES128-SHA\", \"DHE-RSA-AES128-GCM-SHA256\", \"ECDHE-RSA-AES128-SHA\"";
    let (dir, tern, _term) = ossl_tern("bench-ossl", ciphers, "");
    let url = format!("https://{}/", tern.addr());

    let rsa = handshakes_with(&dir, &url, "AES128-SHA");
    let tls = &rsa["tls"];
    assert_eq!(tls["suite"], "TLS_RSA_WITH_AES_128_CBC_SHA", "{tls}");
    assert_eq!(tls["key_exchange"], "RSA", "{tls}");
    assert_eq!(tls["group"], "none", "{tls}");
    assert_eq!(tls["version"], "TLSv1_2", "{tls}");

    let dhe = handshakes_with(&dir, &url, "DHE-RSA-AES128-GCM-SHA256");
    let tls = &dhe["tls"];
    assert_eq!(tls["suite"], "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", "{tls}");
    assert_eq!(tls["key_exchange"], "DHE", "{tls}");
    assert_eq!(tls["group"], "DH2048", "{tls}");

    // Keep-alive with a bulk body on ECDHE-RSA with CBC.
    let bulk = format!("https://{}/?s=256k", tern.addr());
    let args = [
        bulk.as_str(),
        "--tls-engine",
        "openssl",
        "--ciphers",
        "ECDHE-RSA-AES128-SHA",
        "-c",
        "1",
    ];
    let (code, out, report) = bench(&dir, "bulk", &args);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(report["errors_total"], 0, "{report}");
    assert_eq!(report["tls"]["suite"], "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA");
    assert_eq!(report["tls"]["key_exchange"], "ECDHE");
    assert_eq!(report["tls"]["group"], "X25519");
    let requests = report["requests"].as_u64().unwrap();
    assert!(requests > 2, "{report}");
    assert!(
        report["bytes"].as_u64().unwrap() > requests * 256 * 1024,
        "{report}"
    );
    // Keep-alive: far fewer handshakes than requests.
    assert!(
        report["handshakes"]["full"].as_u64().unwrap() <= 2,
        "{report}"
    );

    // tern made as many TLS 1.2 handshakes, and logged each request with the suite asked for
    // (both ends may differ by the requests in flight at a run's deadline).
    let c = tern.stop_clean();
    let client = |r: &serde_json::Value| r["handshakes"]["full"].as_u64().unwrap();
    let full = client(&rsa) + client(&dhe) + client(&report);
    assert!(c.get("tls web", "full_tls12").abs_diff(full) <= 6, "{c:?}");
    let logged = logged_ciphers(&dir);
    let count = |k: &str| logged.get(k).copied().unwrap_or(0);
    let served = |r: &serde_json::Value| r["requests"].as_u64().unwrap();
    let rsa_logged = count("TLS_RSA_WITH_AES_128_CBC_SHA");
    assert!(rsa_logged.abs_diff(served(&rsa)) <= 2, "{logged:?}");
    let dhe_logged = count("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256");
    assert!(dhe_logged.abs_diff(served(&dhe)) <= 2, "{logged:?}");
    let cbc_logged = count("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA");
    assert!(cbc_logged.abs_diff(requests) <= 2, "{logged:?}");
}

#[test]
fn a_refused_suite_is_a_counted_tls_error() {
    let (dir, tern, _term) = ossl_tern("bench-ossl-refused", "\"AES128-SHA\"", "");
    let url = format!("https://{}/", tern.addr());
    let args = [
        url.as_str(),
        "--tls-engine",
        "openssl",
        "--ciphers",
        "AES256-SHA",
        "-c",
        "1",
        "--requests-per-conn",
        "1",
    ];
    let started = std::time::Instant::now();
    let (_, out, report) = bench(&dir, "refused", &args);
    assert!(started.elapsed() < Duration::from_secs(10), "{out}");
    assert!(report["errors"]["tls"].as_u64().unwrap() > 0, "{report}");
    assert_eq!(report["requests"], 0, "{report}");
    assert_eq!(report["valid"], false, "{report}");
    let c = tern.stop_clean();
    assert!(c.get("frontend web", "tls_failures") > 0, "{c:?}");
}

#[test]
fn options_the_engine_cannot_honour_are_refused() {
    let dir = temp_dir("bench-ossl-options");
    let json = dir.join("never.json");
    for (args, message) in [
        (
            vec!["--tls-engine", "openssl", "--resume", "ticket"],
            "--resume is not available with --tls-engine openssl",
        ),
        (vec!["--tls-version", "1.0"], "rustls has no TLS 1.0"),
        (
            vec!["--tls-engine", "openssl", "--ciphers", "NO-SUCH-SUITE"],
            "openssl refuses cipher string",
        ),
    ] {
        let mut argv = vec![
            "bench",
            "https://127.0.0.1:9/",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ];
        argv.extend(args);
        let done = tern_finish(&argv, Duration::from_secs(10));
        assert_ne!(done.code, Some(0), "{argv:?}");
        assert!(done.stderr.contains(message), "{argv:?}: {}", done.stderr);
    }
    assert!(!json.exists());
}

/// The OpenSSL client drives the other load models too, against a rustls bind: TLS 1.3 with
/// HTTP/2 (ALPN h2, streams in flight) and the open loop.
#[test]
fn openssl_client_speaks_tls13_h2_and_the_open_loop() {
    let dir = temp_dir("bench-ossl-h2");
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let tern = Tern::run_in(
        dir.clone(),
        &Config::new().tls(&[&format!("{cert:?}")]).toml(),
    );
    let url = format!("https://{}/test", tern.addr());
    let engine = ["--tls-engine", "openssl"];
    let mut h2 = vec![url.as_str(), "--h2", "-c", "2", "-m", "4"];
    h2.extend(engine);
    let (code, out, report) = bench(&dir, "h2", &h2);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(report["errors_total"], 0, "{report}");
    assert!(report["requests"].as_u64().unwrap() > 10, "{report}");
    let tls = &report["tls"];
    assert_eq!(tls["engine"], "openssl", "{tls}");
    assert_eq!(tls["alpn"], "h2", "{tls}");
    assert_eq!(tls["version"], "TLSv1_3", "{tls}");
    assert_eq!(tls["key_exchange"], "ECDHE", "{tls}");
    assert_eq!(tls["group"], "X25519", "{tls}");
    assert!(
        tls["suite"].as_str().unwrap().starts_with("TLS13_"),
        "{tls}"
    );

    let mut open = vec![url.as_str(), "--rate", "100", "--requests-per-conn", "1"];
    open.extend(engine);
    let (code, out, report) = bench(&dir, "open", &open);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(report["errors_total"], 0, "{report}");
    assert!(
        report["handshakes"]["full"].as_u64().unwrap() > 50,
        "{report}"
    );
    tern.stop_clean();
}

/// TLS 1.0 and 1.1 need the OpenSSL client and a bind that allows them.
#[test]
fn openssl_client_speaks_tls10_and_tls11() {
    let more = ", min_version = \"1.0\"";
    let (dir, tern, _term) = ossl_tern("bench-ossl-tls10", "\"AES128-SHA\"", more);
    let url = format!("https://{}/", tern.addr());
    for (version, name) in [("1.0", "TLSv1_0"), ("1.1", "TLSv1_1")] {
        let args = [
            url.as_str(),
            "--tls-engine",
            "openssl",
            "--tls-version",
            version,
            "--ciphers",
            "AES128-SHA",
            "-c",
            "1",
            "--requests-per-conn",
            "1",
        ];
        let (code, out, report) = bench(&dir, version, &args);
        assert_eq!(code, Some(0), "{out}");
        assert_eq!(report["errors_total"], 0, "{report}");
        assert_eq!(report["tls"]["version"], name, "{report}");
        assert_eq!(report["settings"]["tls_offer"]["versions"], version);
    }
    tern.stop_clean();
}
