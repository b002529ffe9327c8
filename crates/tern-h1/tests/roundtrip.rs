//! Heads round-trip: what `write_request` / `write_response` produce is accepted by
//! `parse_request` / `parse_response` and means the same thing (method, path, Host, framing,
//! end-to-end fields in order, trailers), for generated messages and for any mutation of them
//! that the parser accepts.

#![allow(clippy::unwrap_used)]

mod support;

use std::net::{IpAddr, Ipv4Addr};

use proptest::collection::vec;
use proptest::prelude::*;
use support::{request, response};
use tern_h1::{
    parse_request, parse_response, write_request, write_response, ClientBody, FieldKind,
    Forwarding, Framing, Limits, Method, RequestHead, RequestInfo, ResponseBody, ResponseHead,
    Status, TargetForm, Version,
};

/// End-to-end fields the rewrite copies as they are: (name, value).
fn copied(fields: &[tern_h1::Field], buf: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    fields
        .iter()
        .filter(|f| {
            !f.is_hop_by_hop() && matches!(f.kind(), FieldKind::Other | FieldKind::XForwardedProto)
        })
        .map(|f| (f.name(buf).to_vec(), f.value(buf).to_vec()))
        .collect()
}

/// Rewrites an accepted request and checks the result against it.
fn check_request(raw: &[u8], head: &RequestHead, fwd: &Forwarding, client: &str) {
    let mut out = Vec::new();
    write_request(head, raw, fwd, &mut out);
    let mut again = RequestHead::new();
    let text = String::from_utf8_lossy(&out).into_owned();
    assert_eq!(
        parse_request(&out, &Limits::default(), &mut again),
        Ok(Status::Complete(out.len())),
        "rewritten head refused: {text:?}"
    );
    assert_eq!(again.method_bytes(&out), head.method_bytes(raw));
    assert_eq!(again.version(), Version::Http11);
    assert_eq!(
        again.form(),
        match head.form() {
            TargetForm::Absolute { .. } => TargetForm::Origin,
            other => other,
        }
    );
    let path = head.path().get(raw);
    let absolute = matches!(head.form(), TargetForm::Absolute { .. });
    let want_path = if absolute && path.first() != Some(&b'/') {
        [b"/", path].concat()
    } else {
        path.to_vec()
    };
    assert_eq!(again.target().get(&out), &want_path[..], "{text:?}");
    assert_eq!(
        again.host().map(|h| h.get(&out)),
        Some(head.authority().map_or(&b""[..], |a| a.get(raw))),
    );
    assert_eq!(again.framing(), head.framing());
    assert_eq!(again.te_trailers(), head.te_trailers());
    assert!(!again.expect_continue(), "Expect forwarded");
    assert!(again.keep_alive());
    // Forwarding on: XFF names the client last; proto replaced, so compare other fields.
    let xff: Vec<&[u8]> = again
        .fields()
        .iter()
        .filter(|f| f.kind() == FieldKind::XForwardedFor)
        .map(|f| f.value(&out))
        .collect();
    assert_eq!(xff.len(), 1, "{text:?}");
    assert!(xff[0].ends_with(client.as_bytes()), "{text:?}");
    let before: Vec<_> = copied(head.fields(), raw)
        .into_iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case(b"x-forwarded-proto"))
        .collect();
    let after: Vec<_> = copied(again.fields(), &out)
        .into_iter()
        .filter(|(n, _)| !n.eq_ignore_ascii_case(b"x-forwarded-proto"))
        .collect();
    assert_eq!(before, after, "{text:?}");
}

/// Applies byte edits to `raw[..head_len]`: (position, byte, 0 replace / 1 insert / 2 delete).
fn mutate(raw: &[u8], head_len: usize, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut head = raw[..head_len].to_vec();
    for &(pos, byte, op) in edits {
        let pos = pos % head.len().max(1);
        match op {
            0 if !head.is_empty() => head[pos] = byte,
            1 => head.insert(pos, byte),
            _ if !head.is_empty() => {
                head.remove(pos);
            }
            _ => {}
        }
    }
    head.extend_from_slice(&raw[head_len..]);
    head
}

fn fwd() -> (Forwarding, &'static str) {
    let ip = IpAddr::V4(Ipv4Addr::new(198, 51, 100, 9));
    (
        Forwarding::none().with_for(ip).with_proto(false),
        "198.51.100.9",
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn rewritten_requests_mean_the_same(msg in request()) {
        let mut head = RequestHead::new();
        parse_request(&msg.bytes, &Limits::default(), &mut head).unwrap();
        let (fwd, client) = fwd();
        check_request(&msg.bytes, &head, &fwd, client);
    }

    #[test]
    fn accepted_mutations_round_trip(msg in request(), edits in vec((any::<usize>(), any::<u8>(), 0..3u8), 1..4)) {
        let raw = mutate(&msg.bytes, msg.head_len, &edits);
        let mut head = RequestHead::new();
        if let Ok(Status::Complete(_)) = parse_request(&raw, &Limits::default(), &mut head) {
            let (fwd, client) = fwd();
            check_request(&raw, &head, &fwd, client);
        }
    }

    #[test]
    fn rewritten_responses_mean_the_same(
        msg in response(),
        http11 in any::<bool>(),
        keep_alive in any::<bool>(),
        edits in vec((any::<usize>(), any::<u8>(), 0..3u8), 0..3),
    ) {
        let raw = mutate(&msg.bytes, msg.head_len, &edits);
        let mut head = ResponseHead::new();
        let Ok(Status::Complete(_)) = parse_response(&raw, &Limits::default(), &mut head, Method::Get) else {
            return Ok(());
        };
        let version = if http11 { Version::Http11 } else { Version::Http10 };
        let info = RequestInfo { method: Method::Get, version, keep_alive, upgrade: false };
        let mut out = Vec::new();
        let plan = write_response(&head, &raw, &info, &mut out);
        let text = String::from_utf8_lossy(&out).into_owned();
        let mut again = ResponseHead::new();
        prop_assert_eq!(
            parse_response(&out, &Limits::default(), &mut again, Method::Get),
            Ok(Status::Complete(out.len())),
            "{:?}", text
        );
        prop_assert_eq!(again.status(), head.status());
        prop_assert_eq!(again.reason().get(&out), head.reason().get(&raw));
        let want = match plan.body {
            ClientBody::None => ResponseBody::None,
            ClientBody::Length(n) => ResponseBody::Length(n),
            ClientBody::Chunked | ClientBody::Rechunk | ClientBody::Encoded => ResponseBody::Chunked,
            ClientBody::Dechunk | ClientBody::UntilClose => ResponseBody::UntilClose,
            ClientBody::Tunnel => unreachable!("GET"),
        };
        if head.status() >= 200 && head.status() != 204 && head.status() != 304 {
            prop_assert_eq!(again.body(), want, "{:?}", text);
            prop_assert_eq!(again.keep_alive(), plan.keep_alive, "{:?}", text);
        }
        prop_assert_eq!(copied(again.fields(), &out), copied(head.fields(), &raw));
        prop_assert!(plan.keep_alive <= keep_alive);
    }
}

#[test]
fn a_request_with_conflicting_framing_reaches_the_server_as_chunked_only() {
    let raw =
        b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
    let mut head = RequestHead::new();
    parse_request(raw, &Limits::default(), &mut head).unwrap();
    assert_eq!(head.framing(), Framing::Chunked);
    let (fwd, client) = fwd();
    check_request(raw, &head, &fwd, client);
}

/// The mutation property only means something if mutated heads are often still accepted.
#[test]
fn mutations_are_often_accepted() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = (request(), vec((any::<usize>(), any::<u8>(), 0..3u8), 1..4));
    let mut accepted = 0;
    for _ in 0..500 {
        let (msg, edits) = strategy.new_tree(&mut runner).unwrap().current();
        let raw = mutate(&msg.bytes, msg.head_len, &edits);
        let mut head = RequestHead::new();
        if let Ok(Status::Complete(_)) = parse_request(&raw, &Limits::default(), &mut head) {
            accepted += 1;
        }
    }
    assert!(
        accepted > 100,
        "only {accepted} of 500 mutated heads accepted"
    );
}
