//! HTTP/2 attacks on the real binary (issue 16, "Attacks"; docs/security.md): CONTINUATION
//! floods, HPACK bombs and oversized header lists, SETTINGS / PING / empty DATA /
//! WINDOW_UPDATE floods, zero-window stalls and stream limit abuse, each written frame by frame
//! by `clients/h2_attack.py` (rapid reset is in `http2.rs`).
//!
//! Each test checks what the attacked connection gets (the GOAWAY and its error code, or the
//! answers that bound the attack), that it is counted in `h2_errors`, that tern's CPU time and
//! resident memory stay within generous bounds, that an h2load client on another connection
//! completes all its requests while the attack runs, and that tern never panics. The p99 that
//! client keeps under attack is a benchmark figure (`bench/h2-attacks.sh`, BENCHMARKS.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use support::*;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tern_tls::KeyKind;

/// Requests the well-behaved client makes while an attack runs, and how long they may take.
const GOOD_REQUESTS: usize = 200;
const GOOD_LIMIT: Duration = Duration::from_secs(30);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// tern over one term, speaking HTTP/2 on a TLS bind (`tls`) or h2c on a plain one, with more
/// keys in its `http2` table and extra frontend lines.
fn tern_h2(tag: &str, term: &Term, tls: bool, http2: &str, frontend: &[&str]) -> Tern {
    let dir = temp_dir(tag);
    let mut cfg = Config::new()
        .terms(&[term])
        .frontend(&format!("http2 = {{ cleartext = {} {http2} }}", !tls));
    if tls {
        let cert = write_cert(&dir, "site", KeyKind::EcdsaP256);
        cfg = cfg.frontend(&format!(
            "tls = {{ certs = [{cert:?}], alpn = [\"h2\", \"http/1.1\"] }}"
        ));
    }
    for line in frontend {
        cfg = cfg.frontend(line);
    }
    Tern::run_in(dir, &cfg.toml())
}

/// What tern has used so far: CPU time and resident memory.
struct Usage {
    cpu: Duration,
    rss_kb: u64,
}

fn usage(tern: &Tern) -> Usage {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", tern.proc.pid())).unwrap();
    // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
    let fields: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks = fields[11] + fields[12];
    Usage {
        cpu: Duration::from_millis(ticks * 1000 / clock_ticks()),
        rss_kb: tern.proc_status_kb("VmRSS"),
    }
}

fn clock_ticks() -> u64 {
    let out = Command::new("getconf").arg("CLK_TCK").output().unwrap();
    text(&out.stdout).trim().parse().unwrap()
}

/// Starts `h2_attack.py ATTACK` on `connections` connections, one after the other.
fn start_attack(tern: &Tern, attack: &str, tls: bool, connections: usize) -> Child {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/h2_attack.py");
    Command::new("python3")
        .args([
            script,
            attack,
            "127.0.0.1",
            &tern.addr().port().to_string(),
            if tls { "tls" } else { "h2c" },
            &connections.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs")
}

/// A `key=value` figure of an attack line.
fn figure(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('='))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {key}= in {line:?}"))
}

/// Runs h2load on its own connection and asserts every request succeeds within the limit.
fn well_behaved(tern: &Tern, tls: bool) {
    let scheme = if tls { "https" } else { "http" };
    let start = Instant::now();
    let out = Command::new("h2load")
        .args([
            "-n",
            &GOOD_REQUESTS.to_string(),
            "-c",
            "1",
            "-m",
            "10",
            &format!("{scheme}://127.0.0.1:{}/?s=1k", tern.addr().port()),
        ])
        .stdin(Stdio::null())
        .output()
        .expect("h2load runs (Debian's nghttp2-client; .ci/run installs it)");
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    let want = format!("{GOOD_REQUESTS} succeeded, 0 failed, 0 errored");
    assert!(report.contains(&want), "{report}");
    assert!(start.elapsed() < GOOD_LIMIT, "{:?}", start.elapsed());
}

/// What an attack left: its lines (one per connection), what tern used meanwhile, and how
/// many requests the well-behaved client made.
struct Attacked {
    lines: Vec<String>,
    used: Usage,
    good: u64,
}

impl Attacked {
    /// Asserts tern used less CPU than `per_connection` for each attack connection (plus a
    /// millisecond per well-behaved request) and grew its resident memory by less than `kb`.
    fn bounded(&self, per_connection: Duration, kb: u64) {
        let connections = u32::try_from(self.lines.len()).unwrap();
        let good = u32::try_from(self.good).unwrap();
        let cpu = per_connection * connections + Duration::from_millis(1) * good;
        assert!(
            self.used.cpu < cpu,
            "{:?} of CPU, {cpu:?} allowed",
            self.used.cpu
        );
        assert!(
            self.used.rss_kb < kb,
            "{} kB more resident",
            self.used.rss_kb
        );
    }
}

/// Runs an attack on `connections` connections, one after the other. Once the first is over,
/// the well-behaved client makes its requests again and again until the attack ends.
fn under_attack(tern: &Tern, attack: &str, tls: bool, connections: usize) -> Attacked {
    let before = usage(tern);
    let mut child = start_attack(tern, attack, tls, connections);
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let first = rx.recv_timeout(Duration::from_secs(60));
    let mut good = 0;
    while first.is_ok() {
        well_behaved(tern, tls);
        good += GOOD_REQUESTS as u64;
        if child.try_wait().unwrap().is_some() {
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    reader.join().unwrap();
    let lines: Vec<String> = first.into_iter().chain(rx.try_iter()).collect();
    assert!(
        out.status.success(),
        "{lines:?}\n{} (Python's h2 package: .ci/run installs it)",
        text(&out.stderr)
    );
    assert_eq!(lines.len(), connections, "{lines:?}");
    let after = usage(tern);
    let used = Usage {
        cpu: after.cpu.saturating_sub(before.cpu),
        rss_kb: after.rss_kb.saturating_sub(before.rss_kb),
    };
    eprintln!(
        "{attack} x{connections}: tern used {:?} of CPU with {good} good requests, \
         resident memory {} kB -> {} kB",
        used.cpu, before.rss_kb, after.rss_kb
    );
    Attacked { lines, used, good }
}

#[test]
fn continuation_flood_ends_with_enhance_your_calm() {
    let term = Term::start("h2-cont");
    let tern = tern_h2("h2-cont", &term, true, "", &[]);
    let a = under_attack(&tern, "continuation", true, 10);
    for line in &a.lines {
        // The h2 crate's limit: a few CONTINUATION frames past what the header list needs.
        assert!(line.starts_with("goaway 11 "), "{:?}", a.lines);
        assert!(figure(line, "sent") < 100_000, "{:?}", a.lines);
    }
    a.bounded(Duration::from_millis(100), 64 * 1024);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_errors"), 10, "{c:?}");
    // No flooded request reached the server: only the well-behaved client's did.
    assert_eq!(c.get("backend app", "requests"), a.good, "{c:?}");
}

#[test]
fn hpack_bomb_ends_with_enhance_your_calm_and_large_heads_get_431() {
    let term = Term::start("h2-hpack");
    let tern = tern_h2("h2-hpack", &term, false, "", &[]);
    // 4096 one-byte references to a 4000-byte field: 16 MiB decoded from 8 KiB sent, stopped
    // at four times `max_header_list_size` (the h2 crate's abuse limit).
    let bomb = under_attack(&tern, "hpack-bomb", false, 10);
    for line in &bomb.lines {
        assert_eq!(line, "goaway 11 status=-", "{:?}", bomb.lines);
    }
    bomb.bounded(Duration::from_millis(100), 64 * 1024);
    // A header list above the limit but not abusive: 431 for that stream, and the connection
    // goes on (the next request on it is served).
    let big = under_attack(&tern, "big-headers", false, 3);
    for line in &big.lines {
        assert_eq!(line, "open first=431 second=200", "{:?}", big.lines);
    }
    big.bounded(Duration::from_millis(100), 64 * 1024);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_errors"), 10, "{c:?}");
    // Each 80 KiB block was read in slices of 16 KiB, a turn each (`http2/pace.rs`): four
    // yields per block when it arrives whole, fewer when a loaded machine delivers it in
    // pieces that end turns by themselves; at least one per connection (without the pacing,
    // none).
    assert!(c.get("frontend web", "h2_yields") >= 3, "{c:?}");
    assert_eq!(
        c.get("backend app", "requests"),
        bomb.good + big.good + 3,
        "{c:?}"
    );
}

/// A flood of `attack` frames on 10 connections: each ends with ENHANCE_YOUR_CALM once the
/// budget of `max_control_frames` (set to 500 here) is spent, with at most that many answers;
/// with `paced`, each connection is read a slice per turn once past its allowance.
fn control_flood(attack: &str, answers: Option<&str>, tls: bool, paced: bool) {
    let term = Term::start(&format!("h2-{attack}"));
    let tern = tern_h2(
        &format!("h2-{attack}"),
        &term,
        tls,
        ", max_control_frames = 500",
        &[],
    );
    let a = under_attack(&tern, attack, tls, 10);
    for line in &a.lines {
        assert!(line.starts_with("goaway 11 "), "{:?}", a.lines);
        // The connection ended long before the script's 100,000 frames went out, and tern
        // answered none past the budget (the frame that spends it is not read). Each batch of
        // 200 is paced by a PING, which counts too.
        assert!(figure(line, "sent") <= 600, "{:?}", a.lines);
        if let Some(key) = answers {
            assert!(figure(line, key) <= 500, "{:?}", a.lines);
        }
    }
    // Without the budget each connection costs seconds of CPU (a debug build).
    a.bounded(Duration::from_millis(100), 64 * 1024);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_errors"), 10, "{c:?}");
    if paced {
        assert!(c.get("frontend web", "h2_yields") >= 10, "{c:?}");
    }
}

#[test]
fn settings_flood_ends_with_enhance_your_calm() {
    control_flood("settings", Some("acks"), false, true);
}

#[test]
fn ping_flood_ends_with_enhance_your_calm() {
    control_flood("ping", Some("pongs"), false, true);
}

#[test]
fn ping_flood_over_tls_ends_with_enhance_your_calm() {
    control_flood("ping", Some("pongs"), true, true);
}

#[test]
fn window_update_flood_ends_with_enhance_your_calm() {
    control_flood("window-update", None, false, true);
}

#[test]
fn empty_data_flood_ends_with_enhance_your_calm() {
    // The h2 crate's own limit: 100 empty DATA frames per connection, fewer bytes than a turn.
    control_flood("empty-data", None, false, false);
}

#[test]
fn well_behaved_clients_are_not_paced() {
    let term = Term::start("h2-calm");
    let tern = tern_h2("h2-calm", &term, true, "", &[]);
    well_behaved(&tern, true);
    let c = tern.stop_clean();
    assert_eq!(
        c.get("frontend web", "requests"),
        GOOD_REQUESTS as u64,
        "{c:?}"
    );
    // Requests of a few hundred bytes never spend a turn's read budget (`http2/pace.rs`).
    assert_eq!(c.get("frontend web", "h2_yields"), 0, "{c:?}");
}

#[test]
fn zero_window_stalls_hold_bounded_memory_until_the_timeouts() {
    let term = Term::start("h2-zero");
    let tern = tern_h2(
        "h2-zero",
        &term,
        true,
        "",
        &["timeouts = { client = \"1s\", keep_alive = \"1s\" }"],
    );
    let base = tern.proc_status_kb("VmRSS");
    // Three connections, one after the other, each with 100 streams asking for 1 MiB and a
    // window of 0: tern may hold a response buffer per stream, not the responses.
    let a = under_attack(&tern, "zero-window", true, 3);
    for line in &a.lines {
        // The client timeout resets each stream; the idle connection then gets GOAWAY.
        assert!(line.starts_with("goaway 0 "), "{:?}", a.lines);
        assert_eq!(figure(line, "data"), 0, "{:?}", a.lines);
        assert_eq!(figure(line, "resets"), 100, "{:?}", a.lines);
    }
    // 100 MiB asked per connection; what a stream may hold is about 200 KiB.
    let peak = tern.proc_status_kb("VmHWM");
    assert!(peak - base < 48 * 1024, "peak {peak} kB from {base} kB");
    a.bounded(Duration::from_millis(500), 48 * 1024);
    let c = tern.stop_clean();
    assert_eq!(
        c.get("frontend web", "h2_sessions"),
        3 + a.good / 200,
        "{c:?}"
    );
}

#[test]
fn streams_above_the_limit_are_refused_and_the_rest_served() {
    let term = Term::start("h2-streams");
    let tern = tern_h2("h2-streams", &term, false, "", &[]);
    // 300 streams at once against SETTINGS_MAX_CONCURRENT_STREAMS 100: the first 100 are
    // served, the others refused (RST_STREAM REFUSED_STREAM), the connection goes on.
    let a = under_attack(&tern, "streams", false, 3);
    for line in &a.lines {
        assert_eq!(line, "open ok=100 refused=200", "{:?}", a.lines);
    }
    a.bounded(Duration::from_millis(200), 64 * 1024);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_errors"), 0, "{c:?}");
    assert_eq!(c.get("backend app", "requests"), a.good + 300, "{c:?}");
}

#[test]
fn refusing_streams_ends_when_the_client_keeps_opening_them() {
    let term = Term::start("h2-refused");
    let tern = tern_h2(
        "h2-refused",
        &term,
        false,
        ", max_local_error_reset_streams = 100",
        &[],
    );
    // 200 refused streams per connection, beyond the 100 tern resets before it calls it abuse.
    let a = under_attack(&tern, "streams", false, 2);
    for line in &a.lines {
        assert!(line.starts_with("goaway 11 "), "{:?}", a.lines);
        assert!(figure(line, "refused") <= 100, "{:?}", a.lines);
    }
    a.bounded(Duration::from_millis(200), 64 * 1024);
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_errors"), 2, "{c:?}");
}
