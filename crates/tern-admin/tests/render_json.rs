//! `show stat`, `show info` and `show servers` as JSON: the documented keys, the right values.

mod support;

use serde_json::{json, Value};
use support::view;
use tern_admin::render::json;

#[test]
fn stat_lists_frontends_backends_and_servers() {
    let v = json::stat(&view::view());
    let web = &v["frontends"][0];
    assert_eq!(web["name"], "web");
    assert_eq!(web["tls_enabled"], true);
    assert_eq!(web["counters"]["requests"], 125_000);
    assert_eq!(web["counters"]["resp_5xx"], 85);
    assert_eq!(v["frontends"][1]["tls"], Value::Null);
    let app = &v["backends"][0];
    assert_eq!(app["name"], "app");
    assert_eq!(app["counters"]["upstream_errors"], 80);
    assert_eq!(
        app["servers_by_status"],
        json!({"up": 2, "down": 1, "drain": 1, "maint": 1})
    );
    let app2 = &app["servers"][1];
    assert_eq!(app2["name"], "app2");
    assert_eq!(app2["address"], "10.0.1.2:8080");
    assert_eq!(app2["status"], "UP");
    assert_eq!(app2["active"], 17);
    assert_eq!(app2["maxconn"], 100);
    assert_eq!(app2["counters"]["requests"], 40_000);
    assert_eq!(app["servers"][3]["admin"], "maint");
    assert_eq!(app["servers"][4]["backup"], true);
    assert_eq!(
        v["tls_certificate_reloads"],
        json!({"applied": 2, "refused": 1})
    );
}

#[test]
fn stat_names_tls_counters() {
    let v = json::stat(&view::view());
    let tls = &v["frontends"][0]["tls"];
    assert_eq!(tls["versions"]["full"]["tls13"], 880);
    assert_eq!(tls["versions"]["resumed"]["tls12"], 10);
    assert_eq!(tls["groups"]["full"]["x25519"], 700);
    assert_eq!(tls["certificates"]["ecdsa"], 900);
    assert!(tls["failures"]["timeout"].is_u64());
    assert_eq!(tls["admission"]["resume_offers"], 40);
    let latency = tls["latency"].as_array().expect("latency buckets");
    assert_eq!(latency.len(), 16);
    assert_eq!(latency[0], json!({"le_seconds": 0.0001, "count": 0}));
    assert_eq!(latency[15]["le_seconds"], Value::Null);
}

/// The documented keys, so a rename shows up here (and in docs/metrics.md).
#[test]
fn keys_are_stable() {
    let v = json::stat(&view::view());
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(
        keys(&v),
        [
            "backends",
            "frontends",
            "resolvers",
            "tls_certificate_reloads"
        ]
    );
    assert_eq!(
        keys(&v["frontends"][0]),
        ["counters", "name", "tls", "tls_enabled"]
    );
    assert_eq!(
        keys(&v["backends"][0]),
        ["counters", "name", "servers", "servers_by_status"]
    );
    assert_eq!(
        keys(&v["backends"][0]["servers"][0]),
        [
            "active",
            "address",
            "admin",
            "backup",
            "checked",
            "configured_weight",
            "counters",
            "last_check",
            "maxconn",
            "name",
            "status",
            "unresolved",
            "up",
            "weight"
        ]
    );
    assert_eq!(
        keys(&v["frontends"][0]["tls"]),
        [
            "admission",
            "certificates",
            "failures",
            "groups",
            "latency",
            "suites",
            "versions"
        ]
    );
    let registry = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/metrics.md"
    ))
    .expect("docs/metrics.md");
    let documented = |key: &str| registry.contains(&format!("`{key}`"));
    let all = [
        keys(&v),
        keys(&v["frontends"][0]),
        keys(&v["backends"][0]),
        keys(&v["backends"][0]["servers"][0]),
    ];
    for key in all.iter().flatten() {
        assert!(documented(key), "{key} is not in docs/metrics.md");
    }
    for section in ["frontends", "backends"] {
        for key in keys(&v[section][0]["counters"]) {
            assert!(documented(&key), "counter {key} is not in docs/metrics.md");
        }
    }
    for key in keys(&v["backends"][0]["servers"][0]["counters"]) {
        assert!(
            documented(&key),
            "server counter {key} is not in docs/metrics.md"
        );
    }
}

#[test]
fn info_has_process_facts() {
    let v = json::info(&view::info());
    assert_eq!(
        v,
        json!({
            "version": "0.1.0",
            "pid": 4242,
            "started": "2023-11-14T22:13:20Z",
            "started_unix_seconds": 1_700_000_000u64,
            "uptime_seconds": 93_784,
            "workers": 2,
            "generation": 3,
            "draining_generations": 1,
            "connections": 57,
            "profiling": false,
            "crypto_batch": null,
        })
    );
}

#[test]
fn info_has_the_batch_counters_when_batching_is_on() {
    let mut info = view::info();
    info.crypto_batch = Some(tern_proxy::BatchSnapshot {
        batches: 2,
        batched: 11,
        fill: vec![0, 0, 0, 1, 0, 0, 0, 0, 1],
        alone: 3,
        no_ifma: 0,
        failed: 1,
        unused: 4,
        ..Default::default()
    });
    let v = json::info(&info);
    let b = &v["crypto_batch"];
    assert_eq!(b["batches"], 2);
    assert_eq!(b["batched"], 11);
    assert_eq!(b["fill_3"], 1);
    assert_eq!(b["fill_8"], 1);
    assert_eq!(b["fallback_alone"], 3);
    assert_eq!(b["fallback_failed"], 1);
    assert_eq!(b["unused"], 4);
    assert_eq!(b["mean_fill"], 5.5);
}

#[test]
fn servers_is_a_flat_list_without_counters() {
    let v = json::servers(&view::view());
    let list = v.as_array().expect("a list");
    assert_eq!(list.len(), 7);
    assert_eq!(list[2]["backend"], "app");
    assert_eq!(list[2]["name"], "app3");
    assert_eq!(list[2]["status"], "DOWN");
    assert_eq!(list[2]["checked"], true);
    assert_eq!(list[5]["backend"], "static");
    assert_eq!(list[5]["checked"], false);
    assert!(list.iter().all(|s| s.get("counters").is_none()));
}
