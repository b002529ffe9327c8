//! `tern speed` as a user runs it: the real binary measures X25519, AES-128-GCM and in-memory
//! handshakes for a few milliseconds each, prints its tables, compares with `openssl speed`
//! when openssl is installed, and writes a JSON report whose figures are checked here for
//! consistency (not for values: the machine is shared). Bad options exit non-zero with a
//! message and measure nothing.

#![allow(clippy::unwrap_used)]

// Only the process helpers are used here.
#[allow(unused_imports)]
mod support;
use support::*;

use std::time::Duration;

use serde_json::Value;

/// Measuring takes ~1 s plus, with openssl, a whole second per openssl figure (7 here).
const LIMIT: Duration = Duration::from_secs(120);

fn openssl_installed() -> bool {
    std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok_and(|out| out.status.success())
}

fn rows<'a>(report: &'a Value, algorithm: &str, operation: &str) -> Vec<&'a Value> {
    report["rows"]
        .as_array()
        .expect("rows is an array")
        .iter()
        .filter(|row| row["algorithm"] == algorithm && row["operation"] == operation)
        .collect()
}

fn number(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing: {row}"))
}

#[test]
fn measures_the_selected_algorithms_and_writes_json() {
    let json = temp_dir("speed").join("speed.json");
    let json_arg = json.to_str().expect("temp path is UTF-8");
    let args = [
        "speed",
        "--seconds",
        "0.05",
        "x25519",
        "aes-128-gcm",
        "handshake",
        "--json",
        json_arg,
    ];
    let out = tern_finish(&args, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    for heading in [
        "key agreement",
        "16384 bytes",
        "handshakes/s",
        "AES-128-GCM tern",
    ] {
        assert!(
            out.stdout.contains(heading),
            "no {heading:?}: {}",
            out.stdout
        );
    }

    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["seconds"], 0.05);
    assert_eq!(report["multi"], 1);
    assert_eq!(report["rate_basis"], "cpu");
    let all = report["rows"].as_array().unwrap();
    // x25519: keygen, derive, TLS exchange, and on CPUs with AVX-512 IFMA their batched rows
    // (tern-mb); 6 cipher sizes; 8 handshake rows; nothing else.
    let batched = all
        .iter()
        .filter(|r| {
            r["operation"]
                .as_str()
                .is_some_and(|o| o.ends_with("_batched"))
        })
        .count();
    assert!(batched == 0 || batched == 2, "{report:#}");
    assert_eq!(all.len() - batched, 3 + 6 + 8, "{report:#}");
    for row in all {
        assert!(row["ops"].as_u64().unwrap() > 0, "{row}");
        assert!(number(row, "ops_per_sec") > 0.0, "{row}");
        assert!(number(row, "cpu_seconds") > 0.0, "{row}");
        assert!(number(row, "wall_seconds") >= 0.05, "{row}");
    }

    let seals = rows(&report, "aes-128-gcm", "seal");
    let sizes: Vec<u64> = seals.iter().map(|r| r["bytes"].as_u64().unwrap()).collect();
    assert_eq!(sizes, [16, 64, 256, 1024, 8192, 16384]);
    for row in &seals {
        let expected = number(row, "ops_per_sec") * number(row, "bytes");
        assert!(
            (number(row, "bytes_per_sec") - expected).abs() <= expected * 1e-9,
            "{row}"
        );
    }

    let exchange = &rows(&report, "x25519", "tls_key_exchange")[0];
    let split = &exchange["split"];
    let shares = number(split, "client_share") + number(split, "server_share");
    assert!((shares - 1.0).abs() < 1e-6, "{exchange}");

    let handshakes = rows(&report, "rsa2048", "handshake").len()
        + rows(&report, "ecdsap256", "handshake").len()
        + rows(&report, "ed25519", "handshake").len();
    assert_eq!(handshakes, 8, "{report:#}");
    for row in all.iter().filter(|row| row["section"] == "handshake") {
        let version = row["handshake"]["version"].as_str().unwrap();
        let negotiated = row["handshake"]["negotiated"].as_str().unwrap();
        assert!(negotiated.starts_with(version), "{row}");
        assert!(
            negotiated.ends_with(row["handshake"]["group"].as_str().unwrap()),
            "{row}"
        );
        // The server-only rate is above the rate of client and server together.
        assert!(number(&row["split"], "server_ops_per_sec") > number(row, "ops_per_sec"));
    }

    if openssl_installed() {
        assert!(
            report["openssl"].as_str().unwrap().contains("OpenSSL"),
            "{report:#}"
        );
        let derive = &rows(&report, "x25519", "derive")[0];
        let ratio = number(derive, "ops_per_sec") / number(derive, "openssl");
        assert!((number(derive, "ratio") - ratio).abs() < 1e-9, "{derive}");
        for row in &seals {
            assert!(number(row, "openssl") > 0.0, "{row}");
        }
        assert!(out.stdout.contains("AES-128-GCM openssl"), "{}", out.stdout);
    } else {
        assert!(report["openssl"].is_null(), "{report:#}");
        assert!(!report["notes"].as_array().unwrap().is_empty());
    }
}

#[test]
fn several_threads_on_chosen_cpus_sum_their_rates() {
    let json = temp_dir("speed-multi").join("speed.json");
    let args = [
        "speed",
        "--seconds",
        "0.05",
        "--multi",
        "2",
        "--cpus",
        "0",
        "--no-openssl",
        "ed25519",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = tern_finish(&args, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["multi"], 2);
    assert_eq!(report["rate_basis"], "wall");
    assert_eq!(report["cpus"], serde_json::json!([0]));
    assert!(report["openssl"].is_null());
    let all = report["rows"].as_array().unwrap();
    assert_eq!(all.len(), 2, "{report:#}");
    for row in all {
        assert_eq!(row["algorithm"], "ed25519");
        assert!(row["openssl"].is_null(), "{row}");
        // Both threads ran, on CPU 0 only: together they used at most one CPU's time.
        let (cpu, wall) = (number(row, "cpu_seconds"), number(row, "wall_seconds"));
        assert!(cpu > 0.0 && cpu <= wall * 1.05 + 0.005, "{row}");
    }
}

#[test]
fn bad_options_exit_non_zero_with_a_message() {
    let cases: [(&[&str], &str); 5] = [
        (&["speed", "--seconds", "0", "x25519"], "--seconds"),
        (&["speed", "--seconds=-1", "x25519"], "--seconds"),
        (&["speed", "--multi", "0", "x25519"], "--multi"),
        (&["speed", "--no-openssl", "x25519", "rsa1024"], "rsa1024"),
        (&["speed", "--cpus", "3-1", "x25519"], "--cpus"),
    ];
    for (args, mention) in cases {
        let out = tern_finish(args, Duration::from_secs(30));
        assert_ne!(out.code, Some(0), "{args:?}: {out:?}");
        assert!(out.code.is_some(), "{args:?} was killed: {out:?}");
        assert!(out.stderr.contains(mention), "{args:?}: {out:?}");
        assert!(!out.stderr.contains("panicked"), "{args:?}: {out:?}");
        assert!(!out.stderr.contains("doing "), "{args:?} measured: {out:?}");
    }
}

/// Whether this CPU has what tern-mb's kernels need, read independently of tern.
fn cpu_has_ifma() -> bool {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = info
        .lines()
        .find(|line| line.starts_with("flags"))
        .unwrap_or_default();
    let words: Vec<&str> = flags.split_whitespace().collect();
    words.contains(&"avx512f") && words.contains(&"avx512ifma")
}

#[test]
fn rsa_rows_show_the_batched_rate_when_the_cpu_has_ifma() {
    let json = temp_dir("speed-batched").join("speed.json");
    let json_arg = json.to_str().expect("temp path is UTF-8");
    let args = [
        "speed",
        "--seconds",
        "0.05",
        "--no-openssl",
        "rsa2048",
        "--json",
        json_arg,
    ];
    let out = tern_finish(&args, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("batched/s"), "{}", out.stdout);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let batched = rows(&report, "rsa2048", "sign_batched");
    if cpu_has_ifma() {
        assert_eq!(batched.len(), 1, "{report:#}");
        // Eight signatures per batch, each counted.
        let ops = batched[0]["ops"].as_u64().unwrap();
        assert!(ops >= 8 && ops % 8 == 0, "{report:#}");
        assert!(number(batched[0], "ops_per_sec") > 0.0);
        assert!(
            out.stdout.contains("AVX-512 IFMA (tern-mb)"),
            "{}",
            out.stdout
        );
    } else {
        assert!(batched.is_empty(), "{report:#}");
        assert!(out.stdout.contains("lacks AVX-512 IFMA"), "{}", out.stdout);
    }
}

/// Seed 002's table: the CBC rows (stitched where OpenSSL has the cipher, else composed) and
/// AES-128-GCM on OpenSSL and on aws-lc-rs, at every size, with positive rates.
#[test]
fn seed_002_cbc_table_has_every_row() {
    let json = temp_dir("speed-cbc").join("speed.json");
    let args = [
        "speed",
        "--seconds",
        "0.02",
        "--no-openssl",
        "cbc",
        "--json",
        json.to_str().unwrap(),
    ];
    let out = tern_finish(&args, LIMIT);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert!(out.stdout.contains("seed 002"), "{}", out.stdout);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let all = report["rows"].as_array().unwrap();
    let sizes = [16, 64, 256, 1024, 8192, 16384];
    let openssl = cfg!(feature = "openssl-engine");
    assert_eq!(all.len(), sizes.len() * if openssl { 3 } else { 1 });
    for row in all {
        assert_eq!(row["section"], "cbc_vs_gcm", "{row}");
        assert!(number(row, "bytes_per_sec") > 0.0, "{row}");
    }
    let gcm = |library: &str| {
        rows(&report, "aes-128-gcm", "seal")
            .into_iter()
            .filter(|r| r["library"] == library)
            .count()
    };
    assert_eq!(gcm("aws-lc-rs"), sizes.len());
    if openssl {
        assert_eq!(gcm("openssl"), sizes.len());
        let stitched = rows(&report, "aes-128-cbc-hmac-sha1", "stitched").len();
        let composed = rows(&report, "aes-128-cbc-hmac-sha1", "composed").len();
        assert_eq!(stitched + composed, sizes.len(), "{report:#}");
        assert!(out.stdout.contains("CBC-SHA1 / GCM"), "{}", out.stdout);
    }
    let notes = report["notes"].to_string();
    assert!(notes.contains("seed 002"), "{notes}");
}
