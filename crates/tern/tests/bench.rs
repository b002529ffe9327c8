//! `tern bench` against the real `tern run`: the full and resumed handshakes the generator
//! reports agree with tern's own counters (`stats:` lines), and an interrupt ends a run with a
//! partial report; `--h2` against `tern term`, checked against h2load.

#![allow(clippy::unwrap_used)]

#[allow(unused_imports)] // the HTTP client helpers are not needed here
mod support;
use support::*;

use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// Runs `tern bench ARGS` to completion (bounded) and returns its JSON report.
fn bench_json(dir: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let json = dir.join("bench.json");
    let mut argv = vec!["bench"];
    argv.extend_from_slice(args);
    argv.extend(["-q", "--json", json.to_str().unwrap()]);
    let done = tern_finish(&argv, Duration::from_secs(30));
    assert_eq!(done.code, Some(0), "{}\n{}", done.stdout, done.stderr);
    assert!(done.stdout.contains("handshakes  full"), "{}", done.stdout);
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// A TLS tern (ECDSA certificate) in a fresh directory, which also receives the JSON reports.
fn tls_tern(tag: &str) -> (std::path::PathBuf, Tern) {
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
    let tern = Tern::run_in(
        dir.clone(),
        &Config::new().tls(&[&format!("{cert:?}")]).toml(),
    );
    (dir, tern)
}

#[test]
fn full_and_resumed_handshakes_agree_with_tern() {
    let (dir, tern) = tls_tern("bench-resume");
    let url = format!("https://{}/test", tern.addr());
    let args = [
        url.as_str(),
        "-c",
        "2",
        "--requests-per-conn",
        "1",
        "--resume",
        "ticket",
        "--resume-ratio",
        "0.5",
        "-d",
        "1",
        "--warmup",
        "0",
    ];
    let report = bench_json(&dir, &args);
    let counters = tern.stop_clean();
    let client = |key: &str| report["handshakes"][key].as_u64().unwrap();
    let (full, resumed) = (client("full"), client("resumed"));
    assert!(full > 10 && resumed > 10, "{report}");
    assert_eq!(report["errors_total"], 0);
    // Both ends count every handshake; they may differ by those in flight at the deadline.
    let server_full = counters.get("frontend web", "tls_full");
    let server_resumed = counters.get("frontend web", "tls_resumed");
    assert!(
        full.abs_diff(server_full) <= 2,
        "client {full} vs tern {server_full}"
    );
    assert!(
        resumed.abs_diff(server_resumed) <= 2,
        "client {resumed} vs tern {server_resumed}"
    );
    // Half of the connections offered a ticket, and each offered ticket resumed.
    let offered = client("resume_offered");
    assert!(offered.abs_diff((full + resumed) / 2) <= 2, "{report}");
    assert!(resumed.abs_diff(offered) <= 2, "{report}");
}

#[test]
fn without_resume_every_handshake_is_full_on_both_ends() {
    let (dir, tern) = tls_tern("bench-full");
    let url = format!("https://{}/test", tern.addr());
    let args = [
        url.as_str(),
        "-c",
        "2",
        "--requests-per-conn",
        "1",
        "-d",
        "0.5",
        "--warmup",
        "0",
    ];
    let report = bench_json(&dir, &args);
    let counters = tern.stop_clean();
    let full = report["handshakes"]["full"].as_u64().unwrap();
    assert!(full > 10);
    assert_eq!(report["handshakes"]["resumed"], 0);
    assert_eq!(counters.get("frontend web", "tls_resumed"), 0);
    let server_full = counters.get("frontend web", "tls_full");
    assert!(
        full.abs_diff(server_full) <= 2,
        "client {full} vs tern {server_full}"
    );
}

#[test]
fn an_interrupt_ends_the_run_with_a_partial_report() {
    let term = Term::start("s1");
    let dir = temp_dir("bench-int");
    let json = dir.join("partial.json");
    let url = format!("http://{}/", term.addr);
    let args = [
        "bench",
        url.as_str(),
        "-d",
        "60",
        "--warmup",
        "0",
        "--json",
        json.to_str().unwrap(),
    ];
    let mut bench = Proc::spawn(&args, &dir);
    // The first progress line (stderr) shows the measured window has begun.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !bench.stderr_text().contains("[measure") {
        assert!(
            Instant::now() < deadline,
            "no progress: {}",
            bench.stderr_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    bench.signal("INT");
    let status = bench.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(1), "{}", bench.stderr_text());
    let stderr = bench.stderr_text();
    assert!(stderr.contains("interrupted"), "{stderr}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["partial"], true);
    assert_eq!(report["valid"], false);
    assert!(report["requests"].as_u64().unwrap() > 0);
    let measured = report["measured_s"].as_f64().unwrap();
    assert!(measured > 0.5 && measured < 30.0, "{measured}");
}

#[test]
fn help_names_the_load_generator_options() {
    let (code, out, _) = tern_output(&["bench", "--help"]);
    assert_eq!(code, 0);
    for option in [
        "--rate",
        "--ramp",
        "--resume",
        "--resume-ratio",
        "--sigalg",
        "--alpn",
        "--group",
        "--cipher",
        "--ref-url",
        "--ref-rate",
        "--h2",
        "--streams",
        "--json",
        "--quiet",
    ] {
        assert!(out.contains(option), "{option} missing from:\n{out}");
    }
}

#[test]
fn with_many_connections_every_connection_after_the_first_round_resumes() {
    let (dir, tern) = tls_tern("bench-resume-many");
    let url = format!("https://{}/test", tern.addr());
    let args = [
        url.as_str(),
        "-c",
        "24",
        "--requests-per-conn",
        "1",
        "--resume",
        "ticket",
        "-d",
        "1",
        "--warmup",
        "0",
    ];
    let report = bench_json(&dir, &args);
    tern.stop_clean();
    let client = |key: &str| report["handshakes"][key].as_u64().unwrap();
    let (full, resumed) = (client("full"), client("resumed"));
    // The first round (one full handshake per connection) has nothing to resume; every ticket
    // that comes back is kept for the next connection (rustls' own cache keeps 8 per server).
    assert!(full <= 24 + 2, "{full} full, {resumed} resumed");
    assert!(resumed > full, "{full} full, {resumed} resumed");
}

/// `h2load`'s summary: (succeeded, failed) from `requests: N total, … N succeeded, N failed`.
fn h2load(args: &[&str]) -> (u64, u64, String) {
    let out = std::process::Command::new("h2load")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text
        .lines()
        .find(|l| l.starts_with("requests:"))
        .unwrap_or_else(|| panic!("no h2load summary: {text}"))
        .to_owned();
    let count = |word: &str| -> u64 {
        let at = line.find(word).unwrap();
        line[..at]
            .split_whitespace()
            .last()
            .unwrap()
            .parse()
            .unwrap()
    };
    (count(" succeeded"), count(" failed"), text)
}

/// `tern bench --h2` and h2load against the same `tern term`, h2c and TLS: both see every
/// request succeed, and the term's own counters account for both clients' requests and
/// HTTP/2 connections.
#[test]
fn h2_bench_and_h2load_agree_on_tern_term() {
    let dir = temp_dir("bench-h2");
    let cert = write_cert(&dir, "term", KeyKind::EcdsaP256);
    for tls in [false, true] {
        let term = match tls {
            false => Term::start("h2c"),
            true => Term::start_with("h2tls", &["--tls-cert", &cert]),
        };
        let url = match tls {
            false => format!("http://{}/?s=1k", term.addr),
            true => format!("https://localhost:{}/?s=1k", term.addr.port()),
        };
        let json = dir.join("h2.json");
        let args = [
            "bench",
            &url,
            "--h2",
            "-c",
            "2",
            "-m",
            "8",
            "-d",
            "1",
            "--warmup",
            "0",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ];
        let done = tern_finish(&args, Duration::from_secs(30));
        assert_eq!(done.code, Some(0), "{}\n{}", done.stdout, done.stderr);
        assert!(
            done.stdout.contains("× 8 HTTP/2 streams"),
            "{}",
            done.stdout
        );
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        let requests = report["requests"].as_u64().unwrap();
        assert!(requests > 100, "{report}");
        assert_eq!(report["errors_total"], 0, "{report}");
        assert_eq!(report["connections"], 2, "{report}");
        assert_eq!(report["bytes"].as_u64().unwrap(), requests * 1024);
        if tls {
            assert_eq!(report["tls"]["alpn"], "h2", "{report}");
        }
        let h2load_url = url.replace("localhost", "127.0.0.1");
        let (ok, failed, text) =
            h2load(&["-n", "1000", "-c", "2", "-m", "8", "-T", "10", &h2load_url]);
        assert_eq!((ok, failed), (1000, 0), "{text}");
        let served = term.stop_counters();
        assert_eq!(served["http2"], 4, "{served:?}");
        // Every request the generator sent is counted or abandoned in flight at its deadline
        // (at most its 2 x 8 streams): the term answered every request both clients counted,
        // and at most those abandoned more.
        let abandoned = report["abandoned"].as_u64().unwrap();
        assert!(abandoned <= 16, "{report}");
        let both = requests + 1000;
        assert!(
            (both..=both + abandoned).contains(&served["requests"]),
            "{served:?} vs {both} + {abandoned} abandoned"
        );
    }
}
