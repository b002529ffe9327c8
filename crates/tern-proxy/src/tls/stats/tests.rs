#![allow(clippy::unwrap_used)]

use super::*;

fn field(lines: &[(&str, Fields); 3], line: &str, name: &str) -> u64 {
    let (_, fields) = lines.iter().find(|(l, _)| *l == line).unwrap();
    fields
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {fields:?}"))
        .1
}

#[test]
fn handshakes_are_counted_by_what_they_negotiated() {
    let c = TlsCounters::default();
    let full = Negotiated {
        kind: Some(HandshakeKind::Full),
        version: Some(ProtocolVersion::TLSv1_3),
        suite: Some(CipherSuite::TLS13_AES_128_GCM_SHA256),
        group: Some(NamedGroup::X25519),
        cert: Some(SignatureAlgorithm::ECDSA),
        latency: Duration::from_micros(700),
    };
    c.completed(&full);
    c.completed(&Negotiated {
        kind: Some(HandshakeKind::Resumed),
        version: Some(ProtocolVersion::TLSv1_2),
        suite: Some(CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384),
        group: None,
        cert: None,
        latency: Duration::from_secs(9),
    });
    c.failed(Failure::Protocol);
    c.failed(Failure::ClientRevoked);
    c.admission(AdmissionEvent::RateDelayed);
    let mut snap = TlsSnapshot::default();
    c.add_to(&mut snap);
    c.add_to(&mut snap);
    let lines = snap.lines();
    assert_eq!(field(&lines, "tls", "full_tls13"), 2);
    assert_eq!(field(&lines, "tls", "full_tls12"), 0);
    assert_eq!(field(&lines, "tls", "resumed_tls12"), 2);
    assert_eq!(field(&lines, "tls", "full_x25519"), 2);
    assert_eq!(field(&lines, "tls", "resumed_none"), 2);
    assert_eq!(field(&lines, "tls", "cert_ecdsa"), 2);
    assert_eq!(field(&lines, "tls", "cert_rsa"), 0);
    assert_eq!(field(&lines, "tls", "fail_protocol"), 2);
    assert_eq!(field(&lines, "tls", "fail_client_revoked"), 2);
    assert_eq!(field(&lines, "tls", "fail_client_cert_other"), 0);
    assert_eq!(field(&lines, "tls", "rate_delayed"), 2);
    assert_eq!(
        field(&lines, "tls_suites", "full_TLS13_AES_128_GCM_SHA256"),
        2
    );
    assert_eq!(
        field(
            &lines,
            "tls_suites",
            "resumed_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
        ),
        2
    );
    assert_eq!(field(&lines, "tls_latency", "le_1ms"), 2);
    assert_eq!(field(&lines, "tls_latency", "gt_5s"), 2);
    assert_eq!(field(&lines, "tls_latency", "le_500us"), 0);
}

#[test]
fn latency_bucket_bounds_are_inclusive() {
    let c = TlsCounters::default();
    for us in [100, 101, 5_000_000, 5_000_001] {
        c.completed(&Negotiated {
            kind: Some(HandshakeKind::Full),
            version: None,
            suite: None,
            group: None,
            cert: None,
            latency: Duration::from_micros(us),
        });
    }
    let mut snap = TlsSnapshot::default();
    c.add_to(&mut snap);
    let lines = snap.lines();
    assert_eq!(field(&lines, "tls_latency", "le_100us"), 1);
    assert_eq!(field(&lines, "tls_latency", "le_200us"), 1);
    assert_eq!(field(&lines, "tls_latency", "le_5s"), 1);
    assert_eq!(field(&lines, "tls_latency", "gt_5s"), 1);
    assert_eq!(field(&lines, "tls", "full_other"), 4);
    assert_eq!(field(&lines, "tls", "cert_other"), 4);
}
