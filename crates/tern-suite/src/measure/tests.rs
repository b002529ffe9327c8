#![allow(clippy::unwrap_used)]

use std::path::Path;

use super::*;
use crate::scenario::{self, Host};

fn spec<'a>(w: &'a Workload, cpus: &'a [usize]) -> LoadSpec<'a> {
    LoadSpec {
        url: "https://127.0.0.1:8443/test".into(),
        workload: w,
        client_cpus: cpus,
        warmup: Duration::ZERO,
        duration: w.duration,
        reference_url: Some("http://127.0.0.1:9001/test".into()),
    }
}

#[test]
fn this_generator_has_every_feature_the_suite_uses() {
    let caps = capabilities();
    assert!(
        caps.rate && caps.ramp && caps.reference && caps.find_max,
        "{caps:?}"
    );
}

#[test]
fn options_name_every_setting_and_parse_with_the_generators_own_parser() {
    let text = "[scenario]\nname = \"m\"\ntargets = [\"tern\"]\n[[workload]]\nname = \"w\"\n\
                version = \"1.2\"\ncert = \"ecdsa\"\nrequests_per_conn = 1\nrate = 300\nconcurrency = 50\n\
                ramp = \"3s\"\nreference = true\nfind_max = true\n";
    let host = Host {
        cpus: vec![0, 1],
        open_loop: true,
        ..Host::default()
    };
    let s = scenario::parse(text, Path::new("m.toml"), &host).unwrap();
    let w = &s.workloads[0];
    let caps = capabilities();
    let (args, pending) = bench_args(&spec(w, &[1]), caps);
    assert!(pending.is_empty(), "{pending:?}");
    let line = args.join(" ");
    for part in [
        "--rate 300",
        "-c 50",
        "--requests-per-conn 1",
        "--ramp 3.000",
        "--warmup 0.000",
        "--tls-version 1.2",
        "--ciphers TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "--groups x25519",
        "--cpus 1",
        "--ref-url http://127.0.0.1:9001/test --ref-rate 100",
    ] {
        assert!(line.contains(part), "{part:?} missing from {line}");
    }
    check_args(&args).unwrap();
    let slo = find_max_args(&spec(w, &[1]), caps).unwrap();
    let line = slo.join(" ");
    assert!(
        !line.contains("--rate") && !line.contains("--ref-url") && !line.contains("--ramp"),
        "{line}"
    );
    assert!(
        line.contains("--find-max")
            && line.contains("--slo-max 2.000")
            && line.contains("--resolution 5%"),
        "{line}"
    );
    check_args(&slo).unwrap();
}

#[test]
fn without_a_generator_ramp_the_ramp_is_noted_as_pending() {
    let text = "[scenario]\nname = \"m\"\ntargets = [\"tern\"]\n[[workload]]\nname = \"w\"\nramp = \"3s\"\n";
    let host = Host {
        cpus: vec![0, 1],
        ..Host::default()
    };
    let s = scenario::parse(text, Path::new("m.toml"), &host).unwrap();
    let caps = Capabilities {
        ramp: false,
        ..capabilities()
    };
    let (args, pending) = bench_args(&spec(&s.workloads[0], &[1]), caps);
    assert!(!args.join(" ").contains("--ramp"));
    assert!(pending[0].contains("ramp"), "{pending:?}");
}

#[test]
fn bad_options_are_reported_not_panicked() {
    let err = check_args(&["gopher://x/".to_owned()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("tern bench rejected the options"), "{err}");
}

#[test]
fn the_percentile_curve_climbs_to_six_nines() {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
    for v in 1..=100_000u64 {
        h.record(v).unwrap();
    }
    let c = curve(&h);
    assert_eq!(c.len(), 61);
    assert_eq!(c[0].0, 0.0);
    assert!((c[60].0 - 6.0).abs() < 1e-9);
    assert!(c.windows(2).all(|p| p[0].1 <= p[1].1), "monotonic");
    let p = percentiles(&h);
    assert!((49_900..=50_100).contains(&p.p50), "{p:?}");
    assert!((98_900..=99_100).contains(&p.p99), "{p:?}");
    assert_eq!(p.count, 100_000);
    assert!(curve(&Histogram::<u64>::new(3).unwrap()).is_empty());
}

#[test]
fn http2_workloads_ask_for_h2_and_streams() {
    let text = "[scenario]\nname = \"m\"\ntargets = [\"tern\"]\n[[workload]]\nname = \"w\"\n\
                cert = \"ecdsa\"\nh2 = true\nstreams = 32\nconcurrency = 16\n";
    let host = Host {
        cpus: vec![0, 1],
        ..Host::default()
    };
    let s = scenario::parse(text, Path::new("m.toml"), &host).unwrap();
    let (args, _) = bench_args(&spec(&s.workloads[0], &[1]), capabilities());
    let line = args.join(" ");
    assert!(
        line.contains("-c 16 ") && line.ends_with(" --h2 -m 32"),
        "{line}"
    );
    let parsed = parse(&args).unwrap();
    assert!(parsed.h2 && parsed.streams == 32);
}

#[test]
fn suites_rustls_lacks_go_through_the_openssl_engine() {
    let text = "[scenario]\nname = \"m\"\ntargets = [\"tern\"]\n[[workload]]\nname = \"w\"\n\
                version = \"1.2\"\ncert = \"rsa\"\nsuite = \"AES128-SHA\"\n";
    let s = scenario::parse(text, Path::new("m.toml"), &Host::default()).unwrap();
    let (args, _) = bench_args(&spec(&s.workloads[0], &[1]), capabilities());
    let line = args.join(" ");
    assert!(
        line.contains("--tls-engine openssl --ciphers AES128-SHA"),
        "{line}"
    );
    let parsed = parse(&args).unwrap();
    assert_eq!(parsed.tls_engine, tern_bench::args::TlsEngine::Openssl);
}
