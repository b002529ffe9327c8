#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use super::svg::{escape, latency, log_ticks, nice_ticks, short};
use super::*;
use crate::results::*;

fn measurement(rate: f64, p99: u64, seconds: usize) -> Measurement {
    let latency = Percentiles {
        count: 1000,
        p50: p99 / 4,
        p90: p99 / 2,
        p99,
        p99_9: p99 * 2,
        p99_99: p99 * 3,
        p99_999: p99 * 4,
        p99_9999: p99 * 5,
        max: p99 * 6,
        mean: p99 as f64 / 3.0,
    };
    Measurement {
        ops: (rate * seconds as f64) as u64,
        rate,
        window_s: seconds as f64,
        requests: (rate * seconds as f64) as u64,
        connections: (rate * seconds as f64) as u64,
        full_handshakes: (rate * seconds as f64) as u64,
        resumed_handshakes: 0,
        errors: 0,
        error_kinds: BTreeMap::new(),
        latency,
        curve: (0..=60u32)
            .map(|i| (f64::from(i) / 10.0, (p99 / 4) * (1 + u64::from(i) / 10)))
            .collect(),
        per_second: vec![rate as u64; seconds],
        tls: Some("TLSv1_3 TLS13_AES_256_GCM_SHA384 X25519".into()),
        client_cpu_share: Some(0.5),
        client_bound: false,
        reference: Some(latency),
        byte_rate: rate * 1_048_700.0,
        valid: true,
        notes: vec!["reference probe: pending".into()],
        bench: serde_json::json!({"requests": 1}),
    }
}

fn measured(rate: f64, cpu: f64, p99: u64) -> Outcome {
    let client = measurement(rate, p99, 5);
    Outcome::Measured(Box::new(Measured {
        target_cpu_us: Some(cpu * client.ops as f64),
        cpu_us_per_op: Some(cpu),
        target_cpu_share: Some(cpu * rate / 1e6),
        affinity: vec!["tern: 0".into()],
        client,
        server: ServerCounts {
            full: Some(5000),
            resumed: Some(0),
            note: "test".into(),
        },
        find_max: Some(FindMax::Pending {
            reason: "not yet".into(),
        }),
    }))
}

fn record(target: &str, run: u32, outcome: Outcome) -> RunRecord {
    RunRecord {
        target: target.into(),
        run,
        outcome,
    }
}

/// A report with three targets, one n/a and one failed run, and names that need escaping.
fn synthetic() -> SuiteReport {
    let runs = vec![
        record("tern", 1, measured(2000.0, 500.0, 3000)),
        record("haproxy", 1, measured(1450.0, 690.0, 9000)),
        record(
            "nginx",
            1,
            Outcome::NotApplicable {
                reason: "needs <dhparam> & more".into(),
            },
        ),
        record("tern", 2, measured(2100.0, 480.0, 2800)),
        record(
            "haproxy",
            2,
            Outcome::Failed {
                error: "haproxy exited: port in use".into(),
            },
        ),
    ];
    SuiteReport {
        scenario: ScenarioInfo {
            name: "synthetic".into(),
            title: "Handshakes <RSA> & \"ECDSA\"".into(),
            about: "A test.\n\nSecond paragraph.".into(),
            file: "s.toml".into(),
            quick: 4.0,
            started: "2026-11-21T07:00:00Z".into(),
            finished: "2026-11-21T07:05:00Z".into(),
            partial: true,
            cpus: CpuInfo {
                target: vec![0],
                client: vec![1],
                backends: vec![1],
            },
            backends: 3,
            monitor_uri: "/test".into(),
        },
        machine: Machine {
            cpu_model: "Test CPU".into(),
            cpus_online: 2,
            kernel: "6.0".into(),
            load_average: "0.1 0.2 0.3".into(),
            load_average_end: "0.4 0.5 0.6".into(),
        },
        versions: BTreeMap::from([("haproxy".to_owned(), "HAProxy version 2.6".to_owned())]),
        targets: ["tern", "haproxy", "nginx"]
            .iter()
            .map(|t| TargetInfo {
                name: (*t).into(),
                skipped: None,
            })
            .collect(),
        workloads: vec![WorkloadResult {
            name: "hs<rsa>".into(),
            about: "full handshakes".into(),
            settings: "TLS 1.3; 1 request per connection".into(),
            unit: "conn/s".into(),
            response_bytes: Some(1 << 20),
            runs,
        }],
        speed: Some(SpeedResult {
            text: "rsa2048 sign <1000/s>".into(),
            json: None,
            error: None,
        }),
        notes: vec!["interrupted & partial".into()],
    }
}

/// Tags open and close in balance (self-closing ones aside), per element name.
fn assert_balanced(doc: &str, names: &[&str]) {
    for name in names {
        let opens =
            doc.matches(&format!("<{name}>")).count() + doc.matches(&format!("<{name} ")).count();
        let closes = doc.matches(&format!("</{name}>")).count();
        let self_closed = doc
            .split(&format!("<{name} "))
            .skip(1)
            .filter(|rest| rest.split('>').next().is_some_and(|tag| tag.ends_with('/')))
            .count();
        assert_eq!(opens - self_closed, closes, "unbalanced <{name}>");
    }
}

#[test]
fn html_report_is_self_contained_with_svg_charts() {
    let r = synthetic();
    let html = render_html(&r);
    assert!(html.starts_with("<!DOCTYPE html>"));
    // rate over time, percentiles, CPU bars, rate bars
    assert_eq!(html.matches("<svg ").count(), 4, "{html}");
    assert_balanced(
        &html,
        &[
            "svg", "table", "tr", "td", "th", "text", "title", "p", "ul", "li", "div", "pre",
        ],
    );
    assert!(!html.contains("<script") && !html.contains("src=") && !html.contains("http-equiv"));
    assert!(!html.contains("href=\"http"), "no links to the network");
    // Every name from the scenario is escaped, in text and in SVG labels.
    assert!(html.contains("Handshakes &lt;RSA&gt; &amp; &quot;ECDSA&quot;"));
    assert!(html.contains("hs&lt;rsa&gt;: latency percentiles"));
    assert!(!html.contains("hs<rsa>"));
    assert!(html.contains("n/a: needs &lt;dhparam&gt; &amp; more"));
    assert!(html.contains("rsa2048 sign &lt;1000/s&gt;"));
    assert!(html.contains("99.9999%"), "percentile axis up to six nines");
    assert!(html.contains("Partial report"));
    assert!(html.contains("reference (straight to a backend)"));
    assert!(html.contains("stroke-dasharray"));
}

#[test]
fn markdown_report_has_the_tables() {
    let md = render_markdown(&synthetic());
    assert!(md.contains("**Partial report**"));
    assert!(
        md.contains("| target | conn/s | CPU-µs/op | per CPU-s |"),
        "{md}"
    );
    // tern: median of 2000 and 2100, spread; CPU 490 median (1e6/480 and 1e6/500 per
    // CPU-second); ratio 1.00×.
    assert!(
        md.contains("| tern | 2,050 (2,000–2,100) | 490 (480–500) | 2,042 (2,000–2,083) | 100 % |"),
        "{md}"
    );
    assert!(md.contains("| 1.00× | 1.00× |"), "{md}");
    // haproxy: one run measured, rate ratio 1450/2050, CPU ratio 690/490.
    assert!(md.contains("| 0.71× | 1.41× |"), "{md}");
    assert!(
        md.contains("| nginx | n/a: needs <dhparam> & more |"),
        "{md}"
    );
    assert!(
        md.contains("| conn/s per run | run 1 | run 2 | CPU-µs/op per run | find-max | allowed CPUs (/proc) |"),
        "{md}"
    );
    assert!(
        md.contains("| haproxy | 1,450 | failed | 690 | pending | tern: 0 |"),
        "{md}"
    );
    assert!(md.contains("| Gbit/s | Gbit/s per core |"), "{md}");
    // 1,048,700 bytes per response ÷ 480 and 500 CPU-µs per response.
    assert!(md.contains("| 17.13 (16.78–17.48) |"), "{md}");
    assert!(md.contains("```text\nrsa2048 sign <1000/s>\n```"));
    assert!(md.contains("Note: tern run 1: reference probe: pending"));
}

#[test]
fn json_report_holds_every_run() {
    let v = serde_json::to_value(synthetic()).unwrap();
    let runs = &v["workloads"][0]["runs"];
    assert_eq!(runs.as_array().unwrap().len(), 5);
    assert_eq!(runs[0]["outcome"]["status"], "measured");
    assert_eq!(runs[0]["outcome"]["client"]["bench"]["requests"], 1);
    assert_eq!(runs[2]["outcome"]["status"], "not_applicable");
    assert_eq!(runs[4]["outcome"]["status"], "failed");
}

#[test]
fn reports_are_written_to_a_folder() {
    let dir = std::env::temp_dir().join(format!("tern-suite-report-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write_all(&synthetic(), &dir).unwrap();
    for f in ["report.md", "report.html", "report.json"] {
        assert!(std::fs::metadata(dir.join(f)).unwrap().len() > 500, "{f}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spreads_and_formats() {
    let s = Spread::of(&[3.0, 1.0, 2.0, f64::NAN]).unwrap();
    assert_eq!((s.median, s.min, s.max), (2.0, 1.0, 3.0));
    assert_eq!(Spread::of(&[1.0, 2.0]).unwrap().median, 1.5);
    assert!(Spread::of(&[]).is_none());
    assert_eq!(group(1234567.4), "1,234,567");
    assert_eq!(group(999.0), "999");
    assert_eq!(ratio(Some(3.0), Some(2.0)), "1.50×");
    assert_eq!(ratio(Some(3.0), None), "—");
    assert_eq!(latency(850.0), "850 µs");
    assert_eq!(latency(12_500.0), "12.5 ms");
    assert_eq!(latency(2_000_000.0), "2.00 s");
    assert_eq!(short(1500.0), "1.5k");
    assert_eq!(short(34_000.0), "34k");
}

#[test]
fn svg_helpers() {
    assert_eq!(
        escape("<a href=\"x\">'&'</a>"),
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    );
    assert_eq!(
        nice_ticks(4300.0),
        vec![0.0, 1000.0, 2000.0, 3000.0, 4000.0, 5000.0]
    );
    assert_eq!(nice_ticks(0.0), vec![0.0, 1.0]);
    assert_eq!(
        log_ticks(120.0, 45_000.0),
        vec![100.0, 1000.0, 10_000.0, 100_000.0]
    );
    let chart = charts::bar_chart("a <b>", "µs", &[("x&y".into(), "#000", 5.0)], us1);
    assert!(chart.contains("<title>a &lt;b&gt;</title>") && chart.contains(">x&amp;y</text>"));
    assert_balanced(&chart, &["svg", "text", "title"]);
}
