#![allow(clippy::unwrap_used)]

use super::*;
use http::Request;

fn fwd() -> Forwarding {
    Forwarding {
        forwarded_for: Some(HeaderValue::from_static("192.0.2.7")),
        forwarded_proto: Some(HeaderValue::from_static("https")),
    }
}

fn parts(req: Request<()>) -> request::Parts {
    req.into_parts().0
}

#[test]
fn hop_by_hop_and_connection_listed_headers_are_removed() {
    let mut p = parts(
        Request::get("/a")
            .header("connection", "keep-alive, x-secret")
            .header("keep-alive", "timeout=5")
            .header("x-secret", "1")
            .header("te", "gzip")
            .header("upgrade", "websocket")
            .header("proxy-connection", "close")
            .header("expect", "100-continue")
            .header("x-kept", "yes")
            .header("host", "example.test")
            .body(())
            .unwrap(),
    );
    prepare_request(&mut p, &fwd());
    for gone in [
        "connection",
        "keep-alive",
        "x-secret",
        "te",
        "upgrade",
        "proxy-connection",
        "expect",
    ] {
        assert!(!p.headers.contains_key(gone), "{gone} still present");
    }
    assert_eq!(p.headers["x-kept"], "yes");
    assert_eq!(p.headers["host"], "example.test");
    assert_eq!(p.headers["x-forwarded-for"], "192.0.2.7");
    assert_eq!(p.headers["x-forwarded-proto"], "https");
}

#[test]
fn forwarded_for_appends_to_an_existing_chain() {
    let mut p = parts(
        Request::get("/")
            .header("x-forwarded-for", "10.0.0.1")
            .body(())
            .unwrap(),
    );
    prepare_request(&mut p, &fwd());
    assert_eq!(p.headers["x-forwarded-for"], "10.0.0.1, 192.0.2.7");
}

#[test]
fn forwarding_headers_can_be_turned_off() {
    let mut p = parts(Request::get("/").body(()).unwrap());
    let off = Forwarding {
        forwarded_for: None,
        forwarded_proto: None,
    };
    prepare_request(&mut p, &off);
    assert!(!p.headers.contains_key("x-forwarded-for"));
    assert!(!p.headers.contains_key("x-forwarded-proto"));
}

#[test]
fn absolute_form_becomes_origin_form_with_host() {
    let mut p = parts(
        Request::get("http://example.test:8080/p?q=1")
            .header("host", "other")
            .body(())
            .unwrap(),
    );
    prepare_request(&mut p, &fwd());
    assert_eq!(p.uri, "/p?q=1");
    assert_eq!(p.headers["host"], "example.test:8080");
}

#[test]
fn response_hop_by_hop_removed() {
    let mut h = HeaderMap::new();
    h.insert("connection", HeaderValue::from_static("close"));
    h.insert("transfer-encoding", HeaderValue::from_static("chunked"));
    h.insert("content-type", HeaderValue::from_static("text/plain"));
    prepare_response(&mut h);
    assert_eq!(h.len(), 1);
}

#[test]
fn te_is_reduced_to_trailers_when_the_client_accepts_them() {
    let mut p = parts(
        Request::get("/")
            .header("te", "gzip, Trailers;q=1")
            .body(())
            .unwrap(),
    );
    prepare_request(&mut p, &fwd());
    assert_eq!(p.headers["te"], "trailers");
}

#[test]
fn trailer_header_is_end_to_end() {
    let mut h = HeaderMap::new();
    h.insert("trailer", HeaderValue::from_static("x-checksum"));
    prepare_response(&mut h);
    assert_eq!(h["trailer"], "x-checksum");
}

#[test]
fn userinfo_never_reaches_host() {
    let mut p = parts(
        Request::get("http://user:pw@example.test:8080/p")
            .body(())
            .unwrap(),
    );
    prepare_request(&mut p, &fwd());
    assert_eq!(p.headers["host"], "example.test:8080");
    let mut p = parts(Request::get("http://user@[::1]/p").body(()).unwrap());
    prepare_request(&mut p, &fwd());
    assert_eq!(p.headers["host"], "[::1]");
}

#[test]
fn only_chunked_is_a_known_transfer_coding() {
    let mut h = HeaderMap::new();
    assert!(!has_foreign_transfer_coding(&h));
    h.insert("transfer-encoding", HeaderValue::from_static("Chunked"));
    assert!(!has_foreign_transfer_coding(&h));
    h.insert(
        "transfer-encoding",
        HeaderValue::from_static("gzip, chunked"),
    );
    assert!(has_foreign_transfer_coding(&h));
    h.insert("transfer-encoding", HeaderValue::from_static("identity"));
    assert!(has_foreign_transfer_coding(&h));
}
