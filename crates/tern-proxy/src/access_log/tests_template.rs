//! `log_format` lines and captures in tern's own lines, from a record built by hand.

#![allow(clippy::unwrap_used)]

use tern_config::{Fetch, LogFlags, LogPiece, LogTemplate, LogVar};

use super::format;
use super::record::{Extra, Record, Request};
use super::template::render;
use super::tests::record;

fn var(var: LogVar) -> LogPiece {
    LogPiece::Var {
        var,
        flags: LogFlags::default(),
    }
}

fn text(t: &str) -> LogPiece {
    LogPiece::Text(t.into())
}

fn rendered(r: &Record, pieces: Vec<LogPiece>) -> String {
    let samples = pieces
        .iter()
        .filter(|p| matches!(p, LogPiece::Sample { .. }))
        .count();
    let mut out = Vec::new();
    render(&LogTemplate { pieces, samples }, r, &mut out);
    String::from_utf8(out).unwrap()
}

fn with_extra(mut r: Record) -> Record {
    r.extra = Some(Box::new(Extra {
        format: None,
        unique_id: b"id-1".to_vec(),
        request_captures: vec![b"example.com".to_vec(), Vec::new(), b"a|b\"".to_vec()],
        response_captures: vec![b"text/html".to_vec()],
        samples: vec![Some(b"v 1".to_vec()), None],
        local: Some("198.51.100.1:443".parse().unwrap()),
        server: Some("10.0.0.9:8080".parse().unwrap()),
        counter: 26,
    }));
    r
}

#[test]
fn variables_as_haproxy_writes_them() {
    let r = with_extra(record());
    let q = LogFlags {
        quote: true,
        ..LogFlags::default()
    };
    let line = rendered(
        &r,
        vec![
            var(LogVar::ClientIp),
            text(":"),
            var(LogVar::ClientPort),
            text(" ["),
            var(LogVar::RequestDate),
            text("] "),
            var(LogVar::FrontendTransport),
            text(" "),
            var(LogVar::Backend),
            text("/"),
            var(LogVar::Server),
            text(" "),
            var(LogVar::Tq),
            text("/"),
            var(LogVar::Td),
            text("/"),
            var(LogVar::Tt),
            text(" "),
            var(LogVar::TerminationCookie),
            text(" "),
            var(LogVar::CapturedRequest),
            text(" "),
            var(LogVar::CapturedResponseList),
            text(" "),
            LogPiece::Var {
                var: LogVar::RequestLine,
                flags: q,
            },
            text(" "),
            var(LogVar::PathOnly),
            text(" "),
            var(LogVar::Query),
            text(" "),
            var(LogVar::UniqueId),
            text(" "),
            var(LogVar::CapturedCookie),
            text(" "),
            var(LogVar::FrontendIp),
            text(" "),
            var(LogVar::ServerPort),
            text(" "),
            LogPiece::Sample {
                fetch: Fetch::Src,
                flags: LogFlags::default(),
                slot: 0,
            },
            text(" "),
            LogPiece::Sample {
                fetch: Fetch::Src,
                flags: q,
                slot: 1,
            },
        ],
    );
    assert_eq!(
        line,
        "192.0.2.7:40000 [14/May/2025:10:00:00.123] web~ app/s1 3/0/17 ---- \
         {example.com||a#7Cb#22} text/html \"GET /index.html?q=1 HTTP/1.1\" /index.html ?q=1 \
         id-1 - 198.51.100.1 8080 v 1 \"\""
    );
}

#[test]
fn flags_hex_and_escape() {
    let mut r = with_extra(record());
    r.backend.set(b"a]\"b");
    let hex = LogFlags {
        hex: true,
        ..LogFlags::default()
    };
    let line = rendered(
        &r,
        vec![
            LogPiece::Flags(hex),
            var(LogVar::ClientIp),
            text(":"),
            var(LogVar::ClientPort),
            text("_"),
            var(LogVar::RequestCounter),
            text(" "),
            LogPiece::Var {
                var: LogVar::Backend,
                flags: LogFlags {
                    escape: true,
                    ..LogFlags::default()
                },
            },
        ],
    );
    assert_eq!(line, "C0000207:9C40_001A a\\]#22b");
}

#[test]
fn missing_request_and_tcp_sessions() {
    let mut r = record();
    r.request = Request::Missing("bad_request");
    r.server.set(b"");
    let line = rendered(
        &r,
        vec![
            var(LogVar::RequestLine),
            text(" "),
            var(LogVar::Server),
            text(" "),
            var(LogVar::Method),
        ],
    );
    assert_eq!(line, "<BADREQ> <NOSRV> <BADREQ>");
    r.request = Request::Tcp;
    assert_eq!(
        rendered(&r, vec![var(LogVar::Tt), var(LogVar::RequestLine)]),
        "15-"
    );
    // Empty captures write nothing, and their separators fold (HAProxy's layout).
    let line = rendered(
        &r,
        vec![
            LogPiece::Separator,
            var(LogVar::Status),
            LogPiece::Separator,
            var(LogVar::CapturedRequest),
            LogPiece::Separator,
            var(LogVar::CapturedResponse),
            LogPiece::Separator,
            var(LogVar::Termination),
        ],
    );
    assert_eq!(line, "200 --");
}

#[test]
fn captures_in_tern_s_own_lines() {
    let r = with_extra(record());
    let mut out = Vec::new();
    format::text(&r, &mut out);
    let line = String::from_utf8(out).unwrap();
    assert!(
        line.contains(" -- 0 {example.com||a#7Cb#22} {text/html} \"GET "),
        "{line}"
    );
    let mut out = Vec::new();
    format::json(&r, &mut out);
    let json = String::from_utf8(out).unwrap();
    assert!(json.contains(",\"unique_id\":\"id-1\""), "{json}");
    assert!(
        json.contains(",\"captured_request_headers\":[\"example.com\",\"\",\"a|b\\\"\"]"),
        "{json}"
    );
}
