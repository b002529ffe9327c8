//! Formatting (text, JSON, dates, syslog headers) and the queue: a writer that does not keep up
//! makes lines drop and count, never wait.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc::TryRecvError;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tern_config::{AccessLogSettings, LogFormat, LogTarget, SyslogFraming, SyslogSettings};

use super::format::{self, Civil};
use super::record::{Record, Request, Text, Timers, TlsFields, TARGET_MAX};
use super::writer::Msg;
use super::AccessLog;

/// 2025-05-14 10:00:00.123456 UTC.
fn may_14() -> SystemTime {
    UNIX_EPOCH + Duration::from_micros(1_747_216_800_123_456)
}

/// A complete request over TLS, answered by server s1.
pub(super) fn record() -> Record {
    let mut r = Record::new("192.0.2.7:40000".parse().unwrap(), "web");
    r.time = may_14();
    r.backend.set(b"app");
    r.server.set(b"s1");
    r.timers = Timers {
        handshake: 2_500,
        idle: 40,
        request: 1_200,
        queue: 0,
        connect: 350,
        response: 12_700,
        active: 15_000,
    };
    r.status = 200;
    r.bytes_out = 1_234;
    r.bytes_in = 78;
    r.termination = *b"--";
    r.request = Request::Line;
    r.method.set(b"GET");
    r.target.set(b"/index.html?q=1");
    r.version = 11;
    r.tls = Some(TlsFields {
        version: "TLSv1.3",
        cipher: "TLS_AES_128_GCM_SHA256",
        sni: Text::from_bytes(b"example.com"),
        resumed: true,
    });
    r
}

fn text(r: &Record) -> String {
    let mut out = Vec::new();
    format::text(r, &mut out);
    String::from_utf8(out).unwrap()
}

fn json(r: &Record) -> String {
    let mut out = Vec::new();
    format::json(r, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn text_line_in_haproxy_order() {
    assert_eq!(
        text(&record()),
        "192.0.2.7:40000 [14/May/2025:10:00:00.123] web~ app/s1 1/0/0/12/15 200 1234 78 -- 0 \
         \"GET /index.html?q=1 HTTP/1.1\" 2/0 TLSv1.3/TLS_AES_128_GCM_SHA256/example.com/1"
    );
}

#[test]
fn tcp_sessions_get_tcplog_lines() {
    let mut r = record();
    r.request = Request::Tcp;
    r.timers.active = 5_012_000;
    r.status = -1;
    assert_eq!(
        text(&r),
        "192.0.2.7:40000 [14/May/2025:10:00:00.123] web~ app/s1 0/0/5012 1234 78 -- 0 2 \
         TLSv1.3/TLS_AES_128_GCM_SHA256/example.com/1"
    );
    let j = json(&r);
    assert!(
        j.contains(r#""method":null,"path":null,"version":null,"error":null,"mode":"tcp""#),
        "{j}"
    );
}

#[test]
fn text_line_of_a_refused_request() {
    let mut r = Record::new("[2001:db8::1]:5000".parse().unwrap(), "web");
    r.time = may_14();
    r.status = 400;
    r.bytes_out = 90;
    r.termination = *b"PR";
    r.timers.request = -1;
    r.timers.active = 3_000;
    r.timers.handshake = 0;
    r.timers.idle = 0;
    assert_eq!(
        text(&r),
        "[2001:db8::1]:5000 [14/May/2025:10:00:00.123] web web/<NOSRV> -1/-1/-1/-1/3 400 90 0 PR \
         0 \"<BADREQ>\" 0/0 -"
    );
}

#[test]
fn text_line_of_a_redispatched_request_and_a_failed_handshake() {
    let mut r = record();
    r.retries = 2;
    r.redispatched = true;
    r.tls.as_mut().unwrap().sni = Text::new();
    let line = text(&r);
    assert!(line.contains(" -- +2 \""), "{line}");
    assert!(line.ends_with("/TLS_AES_128_GCM_SHA256/-/1"), "{line}");

    let mut r = Record::new("192.0.2.7:40000".parse().unwrap(), "web");
    r.time = may_14();
    r.termination = *b"cR";
    r.request = Request::Tls("timeout");
    r.timers.handshake = 10_000_000;
    let line = text(&r);
    assert!(
        line.ends_with("-1 0 0 cR 0 \"<TLS:timeout>\" 10000/-1 -"),
        "{line}"
    );
}

#[test]
fn text_escapes_what_would_break_the_line() {
    let mut r = record();
    r.target.set(b"/a\"b#c d\x01\xc3\xa9");
    let line = text(&r);
    assert!(
        line.contains("\"GET /a#22b#23c#20d#01#C3#A9 HTTP/1.1\""),
        "{line}"
    );
}

#[test]
fn json_object_has_the_documented_keys() {
    let line = json(&record());
    let v: serde_json::Value = serde_json::from_str(&line).expect(&line);
    assert_eq!(v["time"], "2025-05-14T10:00:00.123456Z");
    assert_eq!(v["client_ip"], "192.0.2.7");
    assert_eq!(v["client_port"], 40000);
    assert_eq!(v["frontend"], "web");
    assert_eq!(v["backend"], "app");
    assert_eq!(v["server"], "s1");
    assert_eq!(v["handshake_us"], 2_500);
    assert_eq!(v["idle_us"], 40);
    assert_eq!(v["request_us"], 1_200);
    assert_eq!(v["queue_us"], 0);
    assert_eq!(v["connect_us"], 350);
    assert_eq!(v["response_us"], 12_700);
    assert_eq!(v["active_us"], 15_000);
    assert_eq!(v["status"], 200);
    assert_eq!(v["bytes_out"], 1_234);
    assert_eq!(v["bytes_in"], 78);
    assert_eq!(v["retries"], 0);
    assert_eq!(v["redispatched"], false);
    assert_eq!(v["termination"], "--");
    assert_eq!(v["method"], "GET");
    assert_eq!(v["path"], "/index.html?q=1");
    assert_eq!(v["version"], "HTTP/1.1");
    assert_eq!(v["error"], serde_json::Value::Null);
    assert_eq!(v["tls"]["version"], "TLSv1.3");
    assert_eq!(v["tls"]["cipher"], "TLS_AES_128_GCM_SHA256");
    assert_eq!(v["tls"]["sni"], "example.com");
    assert_eq!(v["tls"]["resumed"], true);
    assert_eq!(v.as_object().unwrap().len(), 24, "{line}");
}

#[test]
fn json_of_a_missing_request_and_awkward_bytes() {
    let mut r = Record::new("192.0.2.7:1".parse().unwrap(), "web");
    r.request = Request::Missing("request_timeout");
    let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(v["backend"], serde_json::Value::Null);
    assert_eq!(v["server"], serde_json::Value::Null);
    assert_eq!(v["method"], serde_json::Value::Null);
    assert_eq!(v["path"], serde_json::Value::Null);
    assert_eq!(v["error"], "request_timeout");
    assert_eq!(v["status"], -1);
    assert_eq!(v["tls"], serde_json::Value::Null);

    let mut r = record();
    r.target.set(b"/q\"\\\n\x01\xff\xc3\xa9");
    let line = json(&r);
    let v: serde_json::Value = serde_json::from_str(&line).expect(&line);
    assert_eq!(v["path"], "/q\"\\\n\u{1}\u{fffd}\u{e9}");
    r.request = Request::Tls("unknown_sni");
    let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(v["error"], "tls_unknown_sni");
}

#[test]
fn long_targets_are_cut() {
    let mut r = record();
    r.target.set(&[b'a'; TARGET_MAX + 100]);
    assert_eq!(r.target.get().len(), TARGET_MAX);
    let line = text(&r);
    assert!(line.contains(&format!("GET {} HTTP", "a".repeat(TARGET_MAX))));
}

#[test]
fn dates() {
    let at = |secs: u64| Civil::of(UNIX_EPOCH + Duration::from_secs(secs));
    let epoch = at(0);
    assert_eq!((epoch.year, epoch.month, epoch.day), (1970, 1, 1));
    // 2000-02-29 (a leap day in a century year divisible by 400) and the day after.
    let leap = at(951_782_400);
    assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
    let next = at(951_782_400 + 86_400);
    assert_eq!((next.year, next.month, next.day), (2000, 3, 1));
    let late = at(4_102_444_799);
    assert_eq!(
        (
            late.year,
            late.month,
            late.day,
            late.hour,
            late.minute,
            late.second
        ),
        (2099, 12, 31, 23, 59, 59)
    );
    let mut out = Vec::new();
    at(1_746_352_800).write_rfc3164(&mut out);
    assert_eq!(String::from_utf8(out).unwrap(), "May  4 10:00:00");
}

#[test]
fn record_stays_small_enough_for_an_inline_queue_slot() {
    // docs/configuration.md quotes the size of a queue slot.
    let size = std::mem::size_of::<Msg>();
    assert!(size < 1800, "a queue slot is {size} bytes");
}

fn settings(target: LogTarget, format: LogFormat, buffer: usize) -> AccessLogSettings {
    AccessLogSettings {
        target,
        format,
        buffer,
        frontends: None,
        syslog: SyslogSettings::default(),
    }
}

/// A file in the temp directory, unique to this test process.
fn temp_file(name: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("tern-access-log-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[test]
fn a_full_queue_drops_and_counts_without_waiting() {
    let path = temp_file("full-queue");
    let s = settings(LogTarget::File(path.clone()), LogFormat::Text, 4);
    // A writer that takes nothing: the test holds the queue's receiving end.
    let (log, writer) = AccessLog::detached(&s, Arc::default()).unwrap();
    let started = std::time::Instant::now();
    for _ in 0..10 {
        log.send(record());
    }
    assert!(started.elapsed() < Duration::from_secs(1), "send waited");
    assert_eq!(log.stats().dropped, 6);
    assert_eq!(log.stats().written, 0);
    // The writer comes back: the four queued lines are written, the dropped ones are gone.
    let thread = std::thread::spawn(move || writer.run());
    assert!(log.flush(Duration::from_secs(5)));
    assert_eq!(log.stats().written, 4);
    assert_eq!(log.stats().dropped, 6);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 4);
    assert!(text.lines().all(|l| l.ends_with("/example.com/1")));
    drop(log);
    thread.join().unwrap();
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_file_is_appended_to_and_reopened() {
    let path = temp_file("reopen");
    std::fs::write(&path, "earlier line\n").unwrap();
    let log = AccessLog::open(&settings(
        LogTarget::File(path.clone()),
        LogFormat::Json,
        16,
    ))
    .unwrap();
    log.send(record());
    assert!(log.flush(Duration::from_secs(5)));
    // Rotation by renaming: the writer keeps writing to the renamed file until asked to reopen.
    let rotated = path.with_extension("1");
    std::fs::rename(&path, &rotated).unwrap();
    log.reopen();
    log.send(record());
    assert!(log.flush(Duration::from_secs(5)));
    let old = std::fs::read_to_string(&rotated).unwrap();
    assert_eq!(old.lines().count(), 2, "{old}");
    assert_eq!(old.lines().next(), Some("earlier line"));
    let new = std::fs::read_to_string(&path).unwrap();
    assert_eq!(new.lines().count(), 1, "{new}");
    serde_json::from_str::<serde_json::Value>(new.trim_end()).unwrap();
    assert_eq!(log.stats().written, 2);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&rotated);
}

#[test]
fn an_unwritable_file_is_an_error_at_open() {
    let s = settings(
        LogTarget::File("/nonexistent-dir-for-tern/access.log".into()),
        LogFormat::Text,
        16,
    );
    let e = AccessLog::open(&s).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("access_log target /nonexistent-dir-for-tern/access.log: "),
        "{e}"
    );
}

fn receive(socket: &UdpSocket) -> String {
    socket
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = socket.recv(&mut buf).unwrap();
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

#[test]
fn syslog_over_udp_one_datagram_per_line() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr: SocketAddr = server.local_addr().unwrap();
    let mut s = settings(LogTarget::Udp(addr), LogFormat::Text, 16);
    let log = AccessLog::open(&s).unwrap();
    log.send(record());
    log.send(record());
    assert!(log.flush(Duration::from_secs(5)));
    let pid = std::process::id();
    for _ in 0..2 {
        let got = receive(&server);
        // local0.info = 16 * 8 + 6.
        let (header, line) = got.split_once(&format!(" tern[{pid}]: ")).expect(&got);
        assert!(header.starts_with("<134>"), "{got}");
        assert_eq!(header.len(), "<134>May 14 10:00:00".len(), "{got}");
        assert_eq!(line, text(&record()));
    }
    drop(log);

    s.syslog = SyslogSettings {
        framing: SyslogFraming::Rfc5424,
        facility: 3,
        tag: "edge".to_owned(),
    };
    s.format = LogFormat::Json;
    let log = AccessLog::open(&s).unwrap();
    log.send(record());
    assert!(log.flush(Duration::from_secs(5)));
    let got = receive(&server);
    // daemon.info = 3 * 8 + 6, version 1, then TIMESTAMP HOSTNAME APP-NAME PROCID MSGID SD.
    let fields: Vec<&str> = got.splitn(8, ' ').collect();
    assert_eq!(fields[0], "<30>1", "{got}");
    assert!(fields[1].ends_with('Z'), "{got}");
    assert_eq!(&fields[3..7], ["edge", &pid.to_string(), "-", "-"], "{got}");
    serde_json::from_str::<serde_json::Value>(fields[7]).expect(&got);
    assert_eq!(log.stats().written, 1);
}

#[test]
fn the_writer_ends_when_the_last_handle_is_gone() {
    let s = settings(LogTarget::Stderr, LogFormat::Text, 4);
    let (log, writer) = AccessLog::detached(&s, Arc::default()).unwrap();
    let copy = log.clone();
    drop(log);
    assert!(matches!(writer.rx.try_recv(), Err(TryRecvError::Empty)));
    drop(copy);
    assert!(matches!(
        writer.rx.try_recv(),
        Err(TryRecvError::Disconnected)
    ));
}

#[test]
fn numbers_and_addresses() {
    let mut out = Vec::new();
    for v in [0, 7, -1, 10, 1_234_567, i64::MIN, i64::MAX] {
        out.clear();
        format::int(&mut out, v);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), v.to_string());
    }
    let mut r = record();
    r.client = "[2001:db8::7]:443".parse().unwrap();
    assert!(text(&r).starts_with("[2001:db8::7]:443 ["));
    let v: serde_json::Value = serde_json::from_str(&json(&r)).unwrap();
    assert_eq!(v["client_ip"], "2001:db8::7");
    assert_eq!(v["client_port"], 443);
}
