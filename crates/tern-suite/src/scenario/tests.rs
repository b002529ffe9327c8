#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Duration;

use super::*;

fn host() -> Host {
    Host {
        cpus: vec![0, 1],
        missing: vec![(TargetKind::HitchHaproxy, "hitch not installed".into())],
        open_loop: true,
    }
}

fn parse_ok(text: &str) -> Scenario {
    parse(text, Path::new("s.toml"), &host()).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(text: &str) -> Vec<String> {
    parse(text, Path::new("s.toml"), &host())
        .unwrap_err()
        .0
        .iter()
        .map(ToString::to_string)
        .collect()
}

const MINIMAL: &str = r#"
[scenario]
name = "tiny"
targets = ["tern", "haproxy"]

[[workload]]
name = "hs"
path = "/test"
"#;

#[test]
fn minimal_scenario_gets_the_documented_defaults() {
    let s = parse_ok(MINIMAL);
    assert_eq!(s.name, "tiny");
    assert_eq!(s.title, "tiny");
    assert_eq!(s.monitor_uri, "/test");
    assert_eq!(s.backends, 1);
    assert_eq!(
        s.cpus,
        CpuSets {
            target: vec![0],
            client: vec![1],
            backends: vec![1]
        }
    );
    let kinds: Vec<_> = s.targets.iter().map(|t| (t.kind, t.optional)).collect();
    assert_eq!(
        kinds,
        [(TargetKind::Tern, false), (TargetKind::Haproxy, false)]
    );
    let w = &s.workloads[0];
    assert_eq!(w.duration, Duration::from_secs(10));
    assert_eq!(w.warmup, Duration::from_secs(1));
    assert_eq!(w.load, Load::Closed { connections: 32 });
    assert_eq!((w.requests_per_conn, w.runs, w.client_threads), (0, 1, 1));
    let tls = w.tls.unwrap();
    assert_eq!(tls.cert, CertKind::Rsa2048);
    assert_eq!(tls.version, TlsVersion::Tls13);
    assert_eq!(tls.suite.iana, "TLS_AES_256_GCM_SHA384");
    assert_eq!(tls.group, Group::X25519);
    assert!(w.is_monitor(&s.monitor_uri));
    assert_eq!(w.response_bytes, None);
}

#[test]
fn defaults_apply_to_every_workload_and_workloads_override_them() {
    let s = parse_ok(
        r#"
[scenario]
name = "d"
targets = ["tern"]
optional = ["hitch+haproxy", "nginx"]

[cpus]
target = [0, 1]
client = [1]
backends = [0]

[backends]
count = 3
threads = 2

[defaults]
requests_per_conn = 1
duration = "2m"
runs = 3
cert = "ecdsa"
version = "1.2"

[[workload]]
name = "a"
path = "/?s=107"

[[workload]]
name = "b"
path = "/?s=16m"
duration = "500ms"
rate = 1000
concurrency = 64
target_cpus = [1]
suite = "ECDHE-ECDSA-AES256-GCM-SHA384"
reference = true
find_max = true
slo_max = "1s"
"#,
    );
    assert_eq!((s.backends, s.backend_threads), (3, 2));
    assert_eq!(s.targets.len(), 3);
    assert!(s.targets[1].optional);
    let (a, b) = (&s.workloads[0], &s.workloads[1]);
    assert_eq!(a.duration, Duration::from_secs(120));
    assert_eq!(b.duration, Duration::from_millis(500));
    assert_eq!((a.runs, b.runs, b.requests_per_conn), (3, 3, 1));
    assert_eq!(a.target_cpus, [0, 1]);
    assert_eq!(b.target_cpus, [1]);
    assert_eq!(
        a.tls.unwrap().suite.iana,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
    );
    assert_eq!(
        b.tls.unwrap().suite.openssl,
        "ECDHE-ECDSA-AES256-GCM-SHA384"
    );
    assert_eq!(
        b.load,
        Load::Open {
            rate: 1000.0,
            connections: 64
        }
    );
    assert_eq!(b.reference, Some(100.0));
    let f = b.find_max.clone().unwrap();
    assert_eq!(
        (f.slo_max, f.time, f.start_rate),
        (Duration::from_secs(1), Duration::from_secs(60), 200.0)
    );
    assert_eq!(
        (f.trial, f.resolution.as_str()),
        (Duration::from_secs(2), "5%")
    );
    assert_eq!(a.response_bytes, Some(107));
    assert_eq!(b.response_bytes, Some(16 << 20));
}

#[test]
fn unknown_keys_are_located_errors() {
    let text = MINIMAL.replace("path = \"/test\"", "path = \"/test\"\nduraton = \"10s\"");
    let errs = errors(&text);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s.toml:9: workload[0].duraton: unknown field `duraton`"),
        "{errs:?}"
    );
    let errs = errors(&format!("{MINIMAL}\n[cpu]\ntarget = [0]\n"));
    assert!(
        errs[0].starts_with("s.toml:10: cpu: unknown field `cpu`"),
        "{errs:?}"
    );
}

#[test]
fn wrong_types_are_located_errors() {
    let errs = errors(&MINIMAL.replace("path = \"/test\"", "concurrency = \"many\""));
    assert!(
        errs[0].starts_with("s.toml:8: workload[0].concurrency:"),
        "{errs:?}"
    );
    assert!(errs[0].contains("expected an integer"), "{errs:?}");
}

#[test]
fn every_bad_value_is_reported_at_once_with_its_line() {
    let errs = errors(
        r#"[scenario]
name = "bad name"
targets = ["tern", "apache", "tern", "hitch+haproxy"]

[cpus]
target = [7]

[[workload]]
name = "w"
path = "test"
concurrency = 0
duration = "10"
warmup = "soon"
version = "1.1"
suite = "TLS_AES_9_GCM"
group = "x448"
cert = "dsa"

[[workload]]
name = "w"
tls = false
cert = "rsa"
"#,
    );
    let expect = [
        "s.toml:2: scenario.name:",
        "s.toml:3: scenario.targets[1]: unknown target \"apache\"",
        "s.toml:3: scenario.targets[2]: target \"tern\" is listed twice",
        "s.toml:3: scenario.targets[3]: hitch+haproxy: hitch not installed",
        "s.toml:6: cpus.target[0]: CPU 7 is not available",
        "s.toml:10: workload[0].path:",
        "s.toml:11: workload[0].concurrency: 0 is out of range",
        "s.toml:12: workload[0].duration: \"10\" needs a unit",
        "s.toml:13: workload[0].warmup: invalid duration",
        "s.toml:14: workload[0].version: unknown TLS version",
        "s.toml:15: workload[0].suite: unknown cipher suite",
        "s.toml:16: workload[0].group: unknown group",
        "s.toml:17: workload[0].cert: unknown certificate",
        "s.toml:20: workload[1].name: duplicate workload name",
        "s.toml:22: workload[1].cert: tls is false",
    ];
    for e in expect {
        assert!(
            errs.iter().any(|x| x.starts_with(e)),
            "missing {e:?} in {errs:#?}"
        );
    }
    assert_eq!(errs.len(), expect.len(), "{errs:#?}");
}

#[test]
fn suites_must_match_version_and_certificate() {
    let w = |extra: &str| format!("{MINIMAL}{extra}\n");
    let errs = errors(&w(
        "version = \"1.3\"\nsuite = \"ECDHE-RSA-AES128-GCM-SHA256\"",
    ));
    assert!(
        errs[0].contains("is a TLS 1.2 suite, but version is 1.3"),
        "{errs:?}"
    );
    let errs = errors(&w(
        "cert = \"ecdsa\"\nsuite = \"ECDHE-RSA-AES128-GCM-SHA256\"",
    ));
    assert!(
        errs[0].contains("needs an RSA-2048 certificate"),
        "{errs:?}"
    );
    // OpenSSL and IANA spellings, and rustls' TLS13_ prefix, name the same suites.
    let s = parse_ok(&w("suite = \"TLS13_AES_128_GCM_SHA256\""));
    assert_eq!(
        s.workloads[0].tls.unwrap().suite.iana,
        "TLS_AES_128_GCM_SHA256"
    );
    let s = parse_ok(&w("suite = \"DHE-RSA-AES128-SHA\""));
    let tls = s.workloads[0].tls.unwrap();
    assert_eq!(
        (tls.version, tls.suite.kx),
        (TlsVersion::Tls12, KeyExchange::Dhe)
    );
}

#[test]
fn missing_pieces_are_errors() {
    let errs = errors("[scenario]\nname = \"x\"\n");
    assert!(
        errs.iter()
            .any(|e| e.contains("scenario.targets: no targets")),
        "{errs:?}"
    );
    assert!(
        errs.iter().any(|e| e.contains("workload: no [[workload]]")),
        "{errs:?}"
    );
    let errs = errors("[[workload]]\nname = \"w\"\n");
    assert!(
        errs.iter().any(|e| e.contains("missing [scenario] table")),
        "{errs:?}"
    );
}

#[test]
fn open_loop_needs_a_generator_that_has_it() {
    let text = format!("{MINIMAL}rate = 500\n");
    let mut h = host();
    h.open_loop = false;
    let errs = parse(&text, Path::new("s.toml"), &h)
        .unwrap_err()
        .to_string();
    assert!(
        errs.starts_with("s.toml:9: workload[0].rate: this tern bench has no open loop"),
        "{errs}"
    );
}

#[test]
fn http2_takes_streams_and_a_closed_loop_only() {
    let s = parse_ok(&format!("{MINIMAL}h2 = true\nstreams = 32\n"));
    assert_eq!(s.workloads[0].h2_streams, Some(32));
    assert_eq!(parse_ok(MINIMAL).workloads[0].h2_streams, None);
    let errs = errors(&format!("{MINIMAL}streams = 4\n"));
    assert_eq!(
        errs,
        ["s.toml:9: workload[0].streams: streams are HTTP/2 streams per connection: add h2 = true"]
    );
    let errs = errors(&format!("{MINIMAL}h2 = true\nrate = 100\nstreams = 0\n"));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].contains("workload[0].rate: rate: tern bench --h2 has a closed loop only"));
    assert!(errs[1].contains("workload[0].streams"), "{errs:?}");
}

#[test]
fn optional_targets_that_are_missing_are_not_errors() {
    let s = parse_ok(&MINIMAL.replace(
        "targets = [\"tern\", \"haproxy\"]",
        "targets = [\"tern\"]\noptional = [\"hitch+haproxy\"]",
    ));
    assert_eq!(s.targets.len(), 2);
}

#[test]
fn quick_divides_durations_but_keeps_a_second() {
    let mut s = parse_ok(&format!(
        "{MINIMAL}duration = \"2m\"\nwarmup = \"10s\"\nramp = \"30s\"\n"
    ));
    s.shorten(60.0);
    let w = &s.workloads[0];
    assert_eq!(w.duration, Duration::from_secs(2));
    assert_eq!(w.ramp, Duration::from_millis(500));
    s.shorten(1000.0);
    assert_eq!(s.workloads[0].duration, Duration::from_secs(1));
}

#[test]
fn workloads_can_be_selected_and_their_runs_set() {
    let two = format!("{MINIMAL}\n[[workload]]\nname = \"second\"\npath = \"/test\"\n");
    let mut s = parse_ok(&two);
    s.select_workloads(" second ").unwrap();
    assert_eq!(s.workloads.len(), 1);
    assert_eq!(s.workloads[0].name, "second");
    let e = s.select_workloads("nope").unwrap_err();
    assert!(
        e.contains("\"nope\" is not a workload") && e.contains("second"),
        "{e}"
    );
    assert!(s.select_workloads(",").is_err());
    s.set_runs(7);
    assert_eq!(s.workloads[0].runs, 7);
}

#[test]
fn missing_file_is_a_clear_error() {
    let e = load(Path::new("/nonexistent/s.toml"), &host())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("/nonexistent/s.toml: cannot read the scenario"),
        "{e}"
    );
}

#[test]
fn the_shipped_scenarios_are_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let h = Host {
                cpus: vec![0, 1],
                missing: Vec::new(),
                open_loop: true,
            };
            load(&path, &h).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(
        n >= 5,
        "expected the five seed scenarios in {}",
        dir.display()
    );
}

const TCP: &str = r#"
[scenario]
name = "tcp"
targets = ["tern", "haproxy", "stunnel"]

[defaults]
mode = "tcp"

[[workload]]
name = "hs"
path = "/?s=107"
"#;

#[test]
fn tcp_mode_is_a_workload_key_defaulting_to_http() {
    let s = parse_ok(TCP);
    assert_eq!(s.workloads[0].mode, Mode::Tcp);
    assert_eq!(parse_ok(MINIMAL).workloads[0].mode, Mode::Http);
    let s = parse_ok(&format!(
        "{TCP}\n[[workload]]\nname = \"h\"\nmode = \"http\"\n"
    ));
    assert_eq!(s.workloads[1].mode, Mode::Http);
    let errs = errors(&format!("{MINIMAL}mode = \"udp\"\n"));
    assert_eq!(
        errs,
        ["s.toml:9: workload[0].mode: \"udp\": expected \"http\" or \"tcp\""]
    );
}

#[test]
fn tcp_mode_refuses_what_a_relay_cannot_do() {
    // The monitor URI: no relay answers it.
    let errs = errors(&TCP.replace("/?s=107", "/test"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s.toml:11: workload[0].path: \"/test\" is the monitor URI"),
        "{errs:?}"
    );
    // A path from [defaults] is located there.
    let errs = errors(
        &TCP.replace("path = \"/?s=107\"\n", "")
            .replace("[defaults]", "[defaults]\npath = \"/test\""),
    );
    assert!(
        errs[0].starts_with("s.toml:7: defaults.path: \"/test\" is the monitor URI"),
        "{errs:?}"
    );
    // HTTP/2 streams.
    let errs = errors(&format!("{TCP}h2 = true\nstreams = 8\n"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s.toml:12: workload[0].h2: HTTP/2 streams need an HTTP proxy"),
        "{errs:?}"
    );
}

#[test]
fn stunnel_and_hitch_alone_need_tcp_workloads_and_hitch_one_backend() {
    let errs = errors(&TCP.replace("mode = \"tcp\"", "mode = \"http\""));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s.toml:4: scenario.targets[2]: stunnel relays TCP: no workload"),
        "{errs:?}"
    );
    let text = TCP.replace("\"stunnel\"]", "\"stunnel\"]\noptional = [\"hitch\"]");
    assert_eq!(parse_ok(&text).targets.len(), 4);
    let errs = errors(&format!("{text}\n[backends]\ncount = 2\n"));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("s.toml:5: scenario.optional[0]: hitch relays to one backend"),
        "{errs:?}"
    );
    // stunnel takes the backends in turn: more than one is fine.
    parse_ok(&format!("{TCP}\n[backends]\ncount = 2\n"));
}
