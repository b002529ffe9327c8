#![allow(clippy::unwrap_used)]

use serde_json::Value;

use crate::report::tests::sample_report;

#[test]
fn schema_fields_are_all_there() {
    let report = sample_report();
    let v = report.to_json_value();
    assert_eq!(v["schema"], "tern-bench/1");
    assert_eq!(v["versions"]["rustls"], report.system.rustls);
    assert!(v["system"]["cpu_model"].is_string());
    assert_eq!(v["settings"]["target"], "http://a\"b/");
    assert_eq!(v["settings"]["load"], "closed");
    assert_eq!(v["settings"]["tls_offer"]["groups"][0], "x25519");
    assert_eq!(v["valid"], true);
    assert_eq!(v["partial"], false);
    assert_eq!(v["requests"], 401);
    assert_eq!(v["ok"], 400);
    assert_eq!(v["requests_per_s"], 100.25);
    assert_eq!(v["bytes"], 48_000);
    assert_eq!(v["handshakes"]["resumed"], 0);
    assert_eq!(v["errors"]["timeout"], 1);
    assert_eq!(v["errors_total"], 2);
    assert_eq!(v["abandoned"], 0);
    assert_eq!(v["status"]["5xx"], 1);
    assert_eq!(v["client_cpu"]["share"], 0.5);
    assert_eq!(
        v["client_cpu"]["share_per_second"]
            .as_array()
            .unwrap()
            .len(),
        4
    );
    for h in ["connect", "handshake", "ttfb", "total"] {
        for key in ["count", "min", "p50", "p99.9999", "max", "mean", "stdev"] {
            assert!(v["latency_us"][h][key].is_number(), "{h}.{key}");
        }
    }
    assert_eq!(v["latency_us"]["total"]["count"], 400);
    let curve = v["percentile_curves_us"]["total"].as_array().unwrap();
    assert_eq!(curve.len(), 62);
    assert_eq!(curve[60][0].as_f64().unwrap(), 99.9999);
    assert_eq!(curve[61][0], 100.0);
    assert!(v["percentile_curves_us"]["handshake"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(
        v["per_second"]["requests"],
        serde_json::json!([101, 100, 100, 100])
    );
    assert_eq!(
        v["per_second"]["errors"]["5xx"],
        serde_json::json!([1, 0, 0, 0])
    );
    assert_eq!(v["per_second"]["active"].as_array().unwrap().len(), 4);
    assert_eq!(v["reference"], Value::Null);
}

#[test]
fn the_file_keeps_summary_keys_first() {
    let text = sample_report().to_json();
    let parsed: Value = serde_json::from_str(&text).unwrap();
    let value = sample_report().to_json_value();
    for key in [
        "settings",
        "requests",
        "handshakes",
        "errors",
        "latency_us",
        "per_second",
    ] {
        assert_eq!(parsed[key], value[key], "{key}");
    }
    // bench/lib.sh reads the first `"key":value` of the file: the summary must come first.
    let first = |key: &str| text.find(&format!("\"{key}\":")).unwrap();
    assert!(first("requests") < first("per_second"));
    let reference = text.rfind("\"reference\":").unwrap();
    assert!(first("requests") < reference && first("us_per_request") < reference);
    assert!(first("full") < first("latency_us"));
    assert!(first("errors_total") < first("latency_us"));
    assert!(text.starts_with("{\"schema\":\"tern-bench/1\""), "{text}");
    assert!(!text.contains('\n'));
}
