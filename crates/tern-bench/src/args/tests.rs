#![allow(clippy::unwrap_used)]

use std::time::Duration;

use super::*;

#[test]
fn parses_urls() {
    let t = Target::parse("https://example.test:8443/test?x=1").unwrap();
    assert!(t.tls);
    assert_eq!(
        (t.host.as_str(), t.port, t.path.as_str()),
        ("example.test", 8443, "/test?x=1")
    );
    assert_eq!(t.authority, "example.test:8443");
    let t = Target::parse("http://127.0.0.1").unwrap();
    assert_eq!((t.tls, t.port, t.path.as_str()), (false, 80, "/"));
    let t = Target::parse("https://[::1]/").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("::1", 443));
    let t = Target::parse("http://[::1]:81/a").unwrap();
    assert_eq!((t.host.as_str(), t.port), ("::1", 81));
    assert_eq!(t.to_string(), "http://[::1]:81/a");
}

#[test]
fn rejects_bad_urls() {
    for url in [
        "ftp://x/",
        "https://",
        "https://:80/",
        "http://a:0/",
        "http://a:99999/",
        "http://u@a/",
        "http://a/b c",
        "http://::1/",
        "http://[::1/",
    ] {
        assert!(Target::parse(url).is_err(), "{url}");
    }
}

#[test]
fn parses_cpu_lists_seconds_rates_and_ratios() {
    assert_eq!(parse_cpu_list("1").unwrap(), CpuList(vec![1]));
    assert_eq!(parse_cpu_list("0,2-4").unwrap(), CpuList(vec![0, 2, 3, 4]));
    assert!(parse_cpu_list("3-1").is_err());
    assert!(parse_cpu_list("a").is_err());
    assert_eq!(parse_secs("0.5").unwrap(), Duration::from_millis(500));
    assert!(parse_secs("-1").is_err());
    assert!(parse_secs("nan").is_err());
    assert_eq!(parse_rate("2.5").unwrap(), 2.5);
    for bad in ["0", "-3", "inf", "x", "1e8"] {
        assert!(parse_rate(bad).is_err(), "{bad}");
    }
    assert_eq!(parse_ratio("0").unwrap(), 0.0);
    assert_eq!(parse_ratio("0.25").unwrap(), 0.25);
    assert!(parse_ratio("1.5").is_err());
    assert!(parse_ratio("nan").is_err());
}

#[test]
fn from_args_parses_like_the_command_line() {
    let a = BenchArgs::from_args(["https://127.0.0.1:8443/", "-c", "32"]).unwrap();
    assert_eq!(a.connections, 32);
    assert_eq!(a.rate, None);
    assert_eq!(a.groups, vec![KxGroup::X25519]);
    assert_eq!(a.resume_share(), 0.0);
    assert!(!a.quiet);

    let a = BenchArgs::from_args([
        "https://h/",
        "--rate",
        "1000",
        "--ramp",
        "3",
        "--ciphers",
        "TLS_AES_128_GCM_SHA256",
        "--cipher",
        "TLS_AES_256_GCM_SHA384",
        "--groups",
        "x25519mlkem768,secp256r1",
        "--sigalg",
        "ecdsa_secp256r1_sha256,rsa_pss_rsae_sha256",
        "--alpn",
        "http/1.1",
        "--resume",
        "ticket",
        "--resume-ratio",
        "0.5",
        "--ref-url",
        "http://127.0.0.1:8080/",
        "--ref-rate",
        "5",
        "-q",
    ])
    .unwrap();
    assert_eq!(a.rate, Some(1000.0));
    assert_eq!(a.ramp, Duration::from_secs(3));
    assert_eq!(a.ciphers.len(), 2);
    assert_eq!(a.groups, vec![KxGroup::X25519mlkem768, KxGroup::P256]);
    assert_eq!(
        a.sigalgs,
        vec![SigAlg::EcdsaSecp256r1Sha256, SigAlg::RsaPssRsaeSha256]
    );
    assert_eq!(a.alpn, vec!["http/1.1".to_owned()]);
    assert_eq!(a.resume, Some(ResumeMode::Ticket));
    assert_eq!(a.resume_share(), 0.5);
    assert_eq!(a.ref_url.as_ref().unwrap().port, 8080);
    assert_eq!(a.ref_rate, 5.0);
    assert!(a.quiet);
    assert_eq!(value_name(&SigAlg::Ed25519), "ed25519");

    let a = BenchArgs::from_args(["https://h/", "--resume", "id"]).unwrap();
    assert_eq!(a.resume_share(), 1.0);
}

#[test]
fn from_args_rejects_bad_combinations() {
    for bad in [
        &["https://h/", "--insecure", "--cacert", "ca.pem"][..],
        &["gopher://x/"],
        &["https://h/", "--resume-ratio", "0.5"],
        &["https://h/", "--ref-rate", "5"],
        &["https://h/", "--rate", "0"],
        &["https://h/", "--sigalg", "md5"],
        &["https://h/", "-c", "0"],
    ] {
        assert!(BenchArgs::from_args(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn cli_definition_is_consistent() {
    use clap::CommandFactory;
    Standalone::command().debug_assert();
}
