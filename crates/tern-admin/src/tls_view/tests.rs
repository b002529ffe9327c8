#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use serde_json::{json, Value};
use tern_proxy::{BindTlsInfo, CertificateInfo, CertificateSummary, TicketState};

use super::to_json;

const NOW: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z

fn certificate(default: bool, not_after: i64, ocsp_len: Option<usize>) -> CertificateInfo {
    CertificateInfo {
        loaded: CertificateSummary {
            file: Some(PathBuf::from("/etc/tern/site.pem")),
            default,
            subject_cn: Some("site.test".to_owned()),
            issuer_cn: None,
            dns_names: vec!["site.test".to_owned(), "*.site.test".to_owned()],
            ip_addresses: vec!["127.0.0.1".parse().unwrap(), "::1".parse().unwrap()],
            sni_names: vec!["site.test".to_owned(), "*.site.test".to_owned()],
            key_type: "ECDSA P-256".to_owned(),
            not_before: 0,
            not_after,
            not_before_text: "1970-01-01T00:00:00Z".to_owned(),
            not_after_text: "text of not_after".to_owned(),
            ocsp_len,
            chain_len: 2,
        },
        days_until_expiry: (not_after - NOW).div_euclid(86_400),
    }
}

fn bind(certificates: Vec<CertificateInfo>, tickets: Option<TicketState>) -> BindTlsInfo {
    BindTlsInfo {
        frontend: "web".to_owned(),
        address: "[::]:443".parse().unwrap(),
        strict_sni: false,
        certificates,
        tickets,
        cache_size: 0,
        taken_at: NOW,
    }
}

fn rotating() -> TicketState {
    TicketState {
        key_file: None,
        lifetime_secs: 7200,
        rotation_secs: Some(3600),
        keys: 2,
        key_since: Some(NOW - 600),
        key_age_secs: Some(600),
        next_rotation: Some(NOW + 3000),
        loaded_at: None,
    }
}

#[test]
fn a_bind_lists_its_certificates_with_expiry_names_and_ocsp() {
    let binds = [bind(
        vec![
            certificate(true, NOW + 30 * 86_400, Some(1234)),
            certificate(false, NOW - 1, None),
        ],
        Some(rotating()),
    )];
    let out = to_json(&binds);
    let b = &out[0];
    assert_eq!(b["frontend"], "web");
    assert_eq!(b["address"], "[::]:443");
    assert_eq!(b["strict_sni"], false);
    assert_eq!(b["taken_at"], "2026-01-01T00:00:00Z");
    assert_eq!(b["taken_at_unix_seconds"], NOW);

    let valid = &b["certificates"][0];
    assert_eq!(valid["file"], "/etc/tern/site.pem");
    assert_eq!(valid["default"], true);
    assert_eq!(valid["subject_cn"], "site.test");
    assert_eq!(valid["issuer_cn"], Value::Null);
    assert_eq!(valid["dns_names"], json!(["site.test", "*.site.test"]));
    assert_eq!(valid["ip_addresses"], json!(["127.0.0.1", "::1"]));
    assert_eq!(valid["sni_names"], json!(["site.test", "*.site.test"]));
    assert_eq!(valid["key_type"], "ECDSA P-256");
    assert_eq!(valid["not_before"], "1970-01-01T00:00:00Z");
    assert_eq!(valid["not_after"], "text of not_after");
    assert_eq!(valid["not_after_unix_seconds"], NOW + 30 * 86_400);
    assert_eq!(valid["days_until_expiry"], 30);
    assert_eq!(valid["expired"], false);
    assert_eq!(valid["chain_length"], 2);
    assert_eq!(valid["ocsp"], json!({ "stapled": true, "bytes": 1234 }));

    let expired = &b["certificates"][1];
    assert_eq!(expired["days_until_expiry"], -1);
    assert_eq!(expired["expired"], true);
    assert_eq!(expired["ocsp"], json!({ "stapled": false, "bytes": null }));
}

#[test]
fn ticket_keys_rotating_from_a_file_or_off() {
    let file = TicketState {
        key_file: Some(PathBuf::from("/etc/tern/tickets.key")),
        lifetime_secs: 7200,
        rotation_secs: None,
        keys: 3,
        key_since: None,
        key_age_secs: None,
        next_rotation: None,
        loaded_at: Some(NOW - 60),
    };
    let mut cached = bind(vec![], None);
    cached.cache_size = 1000;
    let out = to_json(&[
        bind(vec![], Some(rotating())),
        bind(vec![], Some(file)),
        cached,
    ]);
    assert_eq!(
        out[0]["resumption"],
        json!({
            "tickets": true,
            "cache_size": 0,
            "ticket_keys": {
                "source": "rotating",
                "key_file": null,
                "keys": 2,
                "lifetime_seconds": 7200,
                "rotation_seconds": 3600,
                "current_key_age_seconds": 600,
                "current_key_created": "2025-12-31T23:50:00Z",
                "current_key_created_unix_seconds": NOW - 600,
                "next_rotation": "2026-01-01T00:50:00Z",
                "next_rotation_unix_seconds": NOW + 3000,
                "loaded_at": null,
                "loaded_at_unix_seconds": null,
            },
        })
    );
    let keys = &out[1]["resumption"]["ticket_keys"];
    assert_eq!(keys["source"], "file");
    assert_eq!(keys["key_file"], "/etc/tern/tickets.key");
    assert_eq!(keys["keys"], 3);
    assert_eq!(keys["current_key_created"], Value::Null);
    assert_eq!(keys["loaded_at"], "2025-12-31T23:59:00Z");
    assert_eq!(
        out[2]["resumption"],
        json!({ "tickets": false, "ticket_keys": null, "cache_size": 1000 })
    );
    assert_eq!(to_json(&[]), json!([]));
}
