//! `tern bench suite` end to end: the real binary runs a tiny scenario (tern only, one backend,
//! one one-second workload) and writes the three reports; a bad scenario is refused before
//! anything starts.

#![allow(clippy::unwrap_used)]

// Only the process helpers are used here.
#[allow(unused_imports)]
mod support;

use std::path::Path;
use std::time::Duration;

use support::*;

const TINY: &str = r#"
[scenario]
name = "tiny"
title = "Tiny <suite> test"
targets = ["tern"]

[cpus]
target = [0]
client = [0]
backends = [0]

[backends]
count = 1

[[workload]]
name = "keepalive"
path = "/?s=107"
cert = "ecdsa"
version = "1.3"
suite = "TLS_AES_128_GCM_SHA256"
concurrency = 4
duration = "1s"
warmup = "200ms"
runs = 1
"#;

fn write_scenario(dir: &Path, text: &str) -> String {
    let path = dir.join("tiny.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn suite_runs_a_tiny_scenario_and_writes_the_reports() {
    let dir = temp_dir("suite");
    let scenario = write_scenario(&dir, TINY);
    let out = dir.join("out");
    let done = tern_finish(
        &["bench", "suite", &scenario, "--out", out.to_str().unwrap()],
        Duration::from_secs(60),
    );
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(done.stdout.contains("run 1/1 tern:"), "{}", done.stdout);

    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("# Tiny <suite> test"), "{md}");
    assert!(md.contains("| tern |"), "{md}");

    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<svg "), "no chart in the HTML report");
    assert!(
        html.contains("Tiny &lt;suite&gt; test"),
        "title not escaped"
    );
    assert!(!html.contains("<script"));

    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let runs = json["workloads"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{json}");
    let outcome = &runs[0]["outcome"];
    assert_eq!(outcome["status"], "measured", "{outcome}");
    let client = &outcome["client"];
    assert!(client["requests"].as_u64().unwrap() > 0, "{client}");
    assert_eq!(client["errors"], 0, "{client}");
    assert_eq!(client["resumed_handshakes"], 0);
    assert!(client["full_handshakes"].as_u64().unwrap() >= 1);
    // The target's CPU time was read, and tern counted the handshakes itself.
    assert!(outcome["target_cpu_us"].as_f64().is_some(), "{outcome}");
    assert!(
        outcome["server"]["full"].as_u64().unwrap() >= 4,
        "{outcome}"
    );
    assert_eq!(outcome["server"]["resumed"], 0);
    // The run's own tern bench report is embedded.
    assert!(client["bench"].is_object(), "{client}");
    // Configuration and certificates were generated into the output folder.
    assert!(out.join("configs/keepalive-tern-1/tern.toml").exists());
    assert!(out.join("certs/ecdsa.pem").exists());
}

#[test]
fn a_bad_scenario_is_refused_before_anything_starts() {
    let dir = temp_dir("suite-bad");
    let bad = TINY
        .replace("concurrency = 4", "concurency = 4")
        .replace("targets = [\"tern\"]", "targets = [\"tern\", \"squid\"]");
    let scenario = write_scenario(&dir, &bad);
    let out = dir.join("out");
    let done = tern_finish(
        &["bench", "suite", &scenario, "--out", out.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_ne!(done.code, Some(0), "{done:?}");
    // serde stops at the unknown key; its error names file, line and key path.
    assert!(
        done.stderr
            .contains("tiny.toml:21: workload[0].concurency: unknown field `concurency`"),
        "{}",
        done.stderr
    );
    assert!(!out.exists(), "nothing may start for a bad scenario");

    let scenario = write_scenario(&dir, &TINY.replace("[\"tern\"]", "[\"tern\", \"squid\"]"));
    let done = tern_finish(
        &["bench", "suite", &scenario, "--dry-run"],
        Duration::from_secs(20),
    );
    assert_ne!(done.code, Some(0));
    assert!(
        done.stderr
            .contains("tiny.toml:5: scenario.targets[1]: unknown target \"squid\""),
        "{}",
        done.stderr
    );
}

#[test]
fn dry_run_prints_configurations_and_starts_nothing() {
    let dir = temp_dir("suite-dry");
    let scenario = write_scenario(&dir, TINY);
    let out = dir.join("out");
    let done = tern_finish(
        &[
            "bench",
            "suite",
            &scenario,
            "--dry-run",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(20),
    );
    assert_eq!(done.code, Some(0), "{done:?}");
    assert!(
        done.stdout.contains("-- tern: tern.toml"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout.contains("workers = 1\ncpus = [0]"),
        "{}",
        done.stdout
    );
    assert!(
        done.stdout
            .contains("-- client (in-process): tern bench https://"),
        "{}",
        done.stdout
    );
    assert!(!out.exists(), "a dry run writes nothing");
}

/// The HTTP/2 workload of bench/scenarios/h2.toml at test size: tern (and HAProxy when
/// installed) behind `tern bench --h2`, over TLS with ALPN h2.
const TINY_H2: &str = r#"
[scenario]
name = "tiny-h2"
title = "Tiny HTTP/2 test"
targets = ["tern"]
optional = ["haproxy"]

[cpus]
target = [0]
client = [0]
backends = [0]

[backends]
count = 1

[[workload]]
name = "h2"
path = "/?s=1k"
cert = "ecdsa"
version = "1.3"
suite = "TLS_AES_128_GCM_SHA256"
h2 = true
streams = 8
concurrency = 2
duration = "1s"
warmup = "200ms"
runs = 1
"#;

#[test]
fn suite_runs_an_http2_scenario_side_by_side() {
    let dir = temp_dir("suite-h2");
    let scenario = write_scenario(&dir, TINY_H2);
    let out = dir.join("out");
    let done = tern_finish(
        &["bench", "suite", &scenario, "--out", out.to_str().unwrap()],
        Duration::from_secs(90),
    );
    assert_eq!(done.code, Some(0), "{done:?}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("HTTP/2, 8 streams per connection"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let runs = json["workloads"][0]["runs"].as_array().unwrap();
    let targets: Vec<&str> = runs.iter().filter_map(|r| r["target"].as_str()).collect();
    assert!(targets.contains(&"tern"), "{json}");
    if have("haproxy") {
        assert!(targets.contains(&"haproxy"), "{json}");
    }
    for run in runs {
        let outcome = &run["outcome"];
        assert_eq!(outcome["status"], "measured", "{outcome}");
        let client = &outcome["client"];
        assert!(client["requests"].as_u64().unwrap() > 0, "{client}");
        assert_eq!(client["errors"], 0, "{client}");
        // Every target negotiated h2: the generator refuses any other ALPN answer.
        let bench = &client["bench"];
        assert_eq!(bench["tls"]["alpn"], "h2", "{bench}");
        assert_eq!(bench["settings"]["protocol"], "HTTP/2", "{bench}");
        assert_eq!(bench["settings"]["streams_per_conn"], 8, "{bench}");
        assert_eq!(client["full_handshakes"], 2, "{client}");
    }
}

/// bench/scenarios/tcp.toml and seed 004's tern+haproxy at test size: the TCP relays (tern and
/// whichever of HAProxy, stunnel and hitch are installed) on a TLS and a plain workload, and
/// tern in TCP mode in front of HAProxy on an HTTP one.
const TINY_TCP: &str = r#"
[scenario]
name = "tiny-tcp"
targets = ["tern"]
optional = ["haproxy", "stunnel", "hitch", "tern+haproxy"]

[cpus]
target = [0]
client = [0]
backends = [0]

[defaults]
path = "/?s=107"
cert = "ecdsa"
suite = "TLS_AES_256_GCM_SHA384"
requests_per_conn = 1
concurrency = 4
duration = "2s"
warmup = "400ms"
runs = 1

[[workload]]
name = "tls"
mode = "tcp"

[[workload]]
name = "plain"
mode = "tcp"
tls = false
path = "/?s=1k"
requests_per_conn = 0

[[workload]]
name = "http"
"#;

#[test]
fn suite_runs_the_tcp_relays_and_tern_in_front_of_haproxy() {
    let dir = temp_dir("suite-tcp");
    let scenario = write_scenario(&dir, TINY_TCP);
    let out = dir.join("out");
    let done = tern_finish(
        &[
            "bench",
            "suite",
            &scenario,
            "--quick",
            "2",
            "--out",
            out.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(done.code, Some(0), "{done:?}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let outcome = |workload: usize, target: &str| {
        json["workloads"][workload]["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == target)
            .map(|r| r["outcome"].clone())
    };
    let measured = |workload: usize, target: &str| {
        let o = outcome(workload, target).unwrap_or_else(|| panic!("{target}: no run\n{json}"));
        assert_eq!(o["status"], "measured", "{target}: {o}");
        assert!(o["client"]["requests"].as_u64().unwrap() > 0, "{o}");
        assert_eq!(o["client"]["errors"], 0, "{target}: {o}");
        assert!(o["target_cpu_us"].as_f64().is_some(), "{o}");
        o
    };
    // tern relays TLS it terminated itself, and counts the handshakes.
    let tern = measured(0, "tern");
    assert!(tern["server"]["full"].as_u64().unwrap() >= 4, "{tern}");
    measured(1, "tern");
    let tcp_conf = std::fs::read_to_string(out.join("configs/tls-tern-1/tern.toml")).unwrap();
    assert!(tcp_conf.contains("mode = \"tcp\""), "{tcp_conf}");
    for (program, target) in [
        ("haproxy", "haproxy"),
        ("stunnel4", "stunnel"),
        ("hitch", "hitch"),
    ] {
        if !have(program) {
            continue;
        }
        measured(0, target);
        if target == "haproxy" {
            measured(1, target);
        } else {
            let plain = outcome(1, target).unwrap();
            assert_eq!(plain["status"], "not_applicable", "{plain}");
        }
    }
    if have("haproxy") {
        // tern terminates TLS in TCP mode; HAProxy behind it answers in plain HTTP.
        let o = measured(2, "tern+haproxy");
        assert!(o["server"]["full"].as_u64().unwrap() >= 4, "{o}");
        assert_eq!(
            outcome(0, "tern+haproxy").unwrap()["status"],
            "not_applicable"
        );
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("TCP relay, TLS 1.3"), "{md}");
}

/// The `tern.toml` blocks a dry run printed, by workload name.
#[cfg(feature = "openssl-engine")]
fn tern_configs(dry_run: &str) -> Vec<(String, String)> {
    let mut configs = Vec::new();
    let mut workload = String::new();
    let mut lines = dry_run.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.strip_prefix("== workload ") {
            workload = rest.split(':').next().unwrap().to_owned();
        } else if line == "-- tern: tern.toml" {
            let block: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("-- "))
                .collect();
            configs.push((workload.clone(), block.join("\n")));
        }
    }
    configs
}

/// The seed scenarios' legacy rows (static RSA, DHE, CBC) put tern's bind on the OpenSSL engine
/// and the client on `tern bench --tls-engine openssl`; every tern configuration the shipped
/// seed scenarios generate passes `tern check`.
#[cfg(feature = "openssl-engine")]
#[test]
fn seed_scenarios_generate_configurations_tern_check_accepts() {
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/scenarios");
    let dir = temp_dir("suite-seed-check");
    // The dry run's configurations name ../../certs/<kind>.pem from configs/<row>/.
    let certs = dir.join("certs");
    let row = dir.join("configs").join("row");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::create_dir_all(&row).unwrap();
    write_cert(&certs, "rsa", tern_tls::KeyKind::Rsa2048);
    write_cert(&certs, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    let mut legacy = 0;
    for seed in ["seed-000", "seed-002", "seed-004"] {
        let file = scenarios.join(format!("{seed}.toml"));
        let done = tern_finish(
            &["bench", "suite", file.to_str().unwrap(), "--dry-run"],
            Duration::from_secs(30),
        );
        assert_eq!(done.code, Some(0), "{seed}: {done:?}");
        for line in done
            .stdout
            .lines()
            .filter(|l| l.contains("engine = \"openssl\""))
        {
            assert!(line.contains("ciphers = ["), "{seed}: {line}");
            legacy += 1;
        }
        let clients = done
            .stdout
            .lines()
            .filter(|l| l.contains("--tls-engine openssl"));
        assert!(
            clients.count() > 0,
            "{seed}: no OpenSSL client\n{}",
            done.stdout
        );
        assert!(!done.stdout.contains("n/a"), "{seed}:\n{}", done.stdout);
        for (workload, config) in tern_configs(&done.stdout) {
            let path = row.join("tern.toml");
            std::fs::write(&path, &config).unwrap();
            let check = tern_finish(
                &["check", "-c", path.to_str().unwrap()],
                Duration::from_secs(30),
            );
            assert_eq!(
                check.code,
                Some(0),
                "{seed} {workload}:\n{config}\n{check:?}"
            );
        }
    }
    // seed 000: RSA and DHE at 1 and 2 cores; seed 002: 4 rows; seed 004: 1 row, also in TCP mode.
    assert!(legacy >= 9, "{legacy} OpenSSL binds");
}
