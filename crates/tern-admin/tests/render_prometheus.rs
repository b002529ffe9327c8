//! `/metrics` from a synthetic view: valid exposition text, the right numbers, bounded labels,
//! and every family in the registry (docs/metrics.md).

mod support;

use std::collections::HashSet;
use std::sync::Arc;

use support::promcheck::{check, value, Family};
use support::view;
use tern_admin::render::prometheus::metrics;
use tern_proxy::StatsSnapshot;

fn families() -> Vec<Family> {
    let text = metrics(&view::view());
    check(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn the_text_is_valid_exposition() {
    let families = families();
    assert!(families.len() > 30, "{} families", families.len());
}

#[test]
fn counters_and_gauges_carry_the_view() {
    let f = families();
    let web = [("frontend", "web")];
    assert_eq!(
        value(&f, "tern_frontend_requests_total", &web),
        Some(125_000.0)
    );
    assert_eq!(
        value(
            &f,
            "tern_frontend_responses_total",
            &[("frontend", "web"), ("code", "5xx")]
        ),
        Some(85.0)
    );
    let failed = [("backend", "app"), ("reason", "upstream_error")];
    assert_eq!(
        value(&f, "tern_backend_failed_requests_total", &failed),
        Some(80.0)
    );
    let app3 = [("backend", "app"), ("server", "app3")];
    assert_eq!(value(&f, "tern_server_up", &app3), Some(0.0));
    assert_eq!(
        value(&f, "tern_server_requests_total", &app3),
        Some(24_000.0)
    );
    let checks = [("backend", "app"), ("server", "app3"), ("result", "failed")];
    assert_eq!(value(&f, "tern_server_checks_total", &checks), Some(30.0));
    let nx = [("resolvers", "dns"), ("outcome", "nx")];
    assert_eq!(value(&f, "tern_resolver_resolutions_total", &nx), Some(2.0));
    let dns = [("resolvers", "dns")];
    assert_eq!(
        value(&f, "tern_resolver_invalid_replies_total", &dns),
        Some(5.0)
    );
    let maint = [("backend", "app"), ("server", "app4"), ("state", "maint")];
    assert_eq!(value(&f, "tern_server_admin_state", &maint), Some(1.0));
    let ready = [("backend", "app"), ("server", "app4"), ("state", "ready")];
    assert_eq!(value(&f, "tern_server_admin_state", &ready), Some(0.0));
    for (status, n) in [("up", 2.0), ("down", 1.0), ("drain", 1.0), ("maint", 1.0)] {
        let labels = [("backend", "app"), ("status", status)];
        assert_eq!(
            value(&f, "tern_backend_servers", &labels),
            Some(n),
            "{status}"
        );
    }
    let app2 = [("backend", "app"), ("server", "app2")];
    assert_eq!(value(&f, "tern_server_active_requests", &app2), Some(17.0));
    assert_eq!(value(&f, "tern_server_max_connections", &app2), Some(100.0));
    assert_eq!(
        value(&f, "tern_server_active_requests", &app3),
        None,
        "no maxconn, no gauge"
    );
    assert_eq!(
        value(&f, "tern_build_info", &[("version", "0.1.0")]),
        Some(1.0)
    );
    assert_eq!(
        value(&f, "tern_process_start_time_seconds", &[]),
        Some(1_700_000_000.0)
    );
    assert_eq!(value(&f, "tern_uptime_seconds", &[]), Some(93_784.0));
    assert_eq!(value(&f, "tern_generation", &[]), Some(3.0));
    assert_eq!(value(&f, "tern_connections", &[]), Some(57.0));
    let refused = [("result", "refused")];
    assert_eq!(
        value(&f, "tern_tls_certificate_reloads_total", &refused),
        Some(1.0)
    );
}

#[test]
fn tls_families_cover_tls_frontends_only() {
    let f = families();
    let full13 = [("frontend", "web"), ("kind", "full"), ("version", "tls13")];
    assert_eq!(
        value(&f, "tern_frontend_tls_versions_total", &full13),
        Some(880.0)
    );
    let resumed = [("frontend", "web"), ("kind", "resumed")];
    assert_eq!(
        value(&f, "tern_frontend_tls_handshakes_total", &resumed),
        Some(3_000.0)
    );
    let ecdsa = [("frontend", "web"), ("key_type", "ecdsa")];
    assert_eq!(
        value(&f, "tern_frontend_tls_certificates_total", &ecdsa),
        Some(900.0)
    );
    let timeouts = [("frontend", "web"), ("reason", "timeout")];
    assert!(value(&f, "tern_frontend_tls_handshake_failures_total", &timeouts).is_some());
    let tls_families = f
        .iter()
        .filter(|f| f.name.starts_with("tern_frontend_tls_"));
    for family in tls_families {
        assert!(!family.samples.is_empty(), "{}", family.name);
        for s in &family.samples {
            assert_eq!(
                s.labels.get("frontend").map(String::as_str),
                Some("web"),
                "{s:?}"
            );
        }
    }
}

#[test]
fn handshake_latency_is_a_histogram() {
    let f = families();
    let name = "tern_frontend_tls_handshake_duration_seconds";
    let family = f.iter().find(|f| f.name == name).expect("histogram family");
    assert_eq!(family.kind, "histogram");
    let web = [("frontend", "web")];
    let total: u64 = view::tls_snapshot().latency.iter().sum();
    assert_eq!(
        value(&f, &format!("{name}_count"), &web),
        Some(total as f64)
    );
    let le = |le: &str| {
        value(
            &f,
            &format!("{name}_bucket"),
            &[("frontend", "web"), ("le", le)],
        )
    };
    assert_eq!(le("0.0001"), Some(0.0));
    assert_eq!(le("0.0002"), Some(5.0));
    assert_eq!(le("0.0005"), Some(45.0));
    assert_eq!(le("5"), Some(total as f64));
    assert_eq!(le("+Inf"), Some(total as f64));
}

#[test]
fn labels_are_bounded() {
    let allowed: HashSet<&str> = [
        "frontend",
        "backend",
        "server",
        "version",
        "code",
        "reason",
        "kind",
        "group",
        "suite",
        "key_type",
        "event",
        "result",
        "to",
        "status",
        "state",
        "le",
        "direction",
        "action",
        "resolvers",
        "outcome",
        // Batch fill: 2 to 8 handshakes.
        "handshakes",
    ]
    .into();
    let view = view::view();
    let names: HashSet<&str> = view
        .config
        .frontends
        .iter()
        .map(|f| f.name.as_str())
        .chain(view.config.backends.iter().map(|b| b.name.as_str()))
        .chain(
            view.config
                .backends
                .iter()
                .flat_map(|b| b.servers.iter().map(|s| s.name.as_str())),
        )
        .collect();
    for family in families() {
        for s in &family.samples {
            for (label, value) in &s.labels {
                assert!(
                    allowed.contains(label.as_str()),
                    "{}: label {label}",
                    family.name
                );
                if ["frontend", "backend", "server"].contains(&label.as_str()) {
                    assert!(
                        names.contains(value.as_str()),
                        "{}: {label}={value}",
                        family.name
                    );
                }
            }
        }
    }
}

#[test]
fn series_grow_with_the_configuration_not_the_counters() {
    let small = view::view();
    let mut big = view::view();
    for n in big.stats.servers.iter_mut().flatten() {
        n.requests *= 1_000;
    }
    let count = |v| check(&metrics(&v)).map(|f| f.iter().map(|f| f.samples.len()).sum::<usize>());
    assert_eq!(count(small), count(big));
}

#[test]
fn names_are_escaped_into_labels() {
    let mut view = view::view();
    let odd = "we\"b\\x\nnew";
    Arc::make_mut(&mut view.config).frontends[0].name = odd.into();
    let text = metrics(&view);
    let f = check(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        value(&f, "tern_frontend_requests_total", &[("frontend", odd)]),
        Some(125_000.0)
    );
}

#[test]
fn an_empty_snapshot_is_still_valid() {
    let mut view = view::view();
    view.stats = StatsSnapshot::default();
    let text = metrics(&view);
    let f = check(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(
        value(
            &f,
            "tern_server_requests_total",
            &[("backend", "app"), ("server", "app1")]
        ),
        Some(0.0)
    );
}

#[test]
fn every_family_is_in_the_registry() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/metrics.md");
    let registry = std::fs::read_to_string(path).expect("docs/metrics.md");
    for family in families() {
        let entry = format!("`{}`", family.name);
        assert!(
            registry.contains(&entry),
            "{} is not in docs/metrics.md",
            family.name
        );
        let row = registry
            .lines()
            .find(|l| l.contains(&entry))
            .unwrap_or_default();
        assert!(
            row.contains(&family.kind),
            "{}: docs/metrics.md does not say {}",
            family.name,
            family.kind
        );
    }
}
