#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn names_are_classified_case_insensitively() {
    for (name, kind) in [
        ("TE", FieldKind::Te),
        ("host", FieldKind::Host),
        ("Expect", FieldKind::Expect),
        ("UPGRADE", FieldKind::Upgrade),
        ("Connection", FieldKind::Connection),
        ("keep-alive", FieldKind::KeepAlive),
        ("Content-Length", FieldKind::ContentLength),
        ("X-Forwarded-For", FieldKind::XForwardedFor),
        ("Proxy-Connection", FieldKind::ProxyConnection),
        ("transfer-encoding", FieldKind::TransferEncoding),
        ("x-forwarded-proto", FieldKind::XForwardedProto),
        ("Trailer", FieldKind::Other),
        ("Content-Lengthx", FieldKind::Other),
        ("hosts", FieldKind::Other),
    ] {
        assert_eq!(FieldKind::of(name.as_bytes()), kind, "{name}");
    }
}

#[test]
fn list_elements_are_split_and_trimmed() {
    let got: Vec<&[u8]> = elements(b" a , b,,c\t,").collect();
    assert_eq!(got, [&b"a"[..], b"b", b"", b"c", b""]);
    assert_eq!(elements(b"").collect::<Vec<_>>(), [b""]);
    assert_eq!(trim_ows(b" \t x y\t "), b"x y");
    assert_eq!(trim_ows(b" \t "), b"");
}

#[test]
fn lent_storage_keeps_its_allocation() {
    let mut store: Vec<httparse::Header<'static>> = Vec::new();
    let v = lend(&mut store, 50);
    let (cap, ptr) = (v.capacity(), v.as_ptr().addr());
    assert!(cap >= 50);
    store = give_back(v);
    assert_eq!((store.capacity(), store.as_ptr().addr()), (cap, ptr));
    let v = lend(&mut store, 50);
    assert_eq!((v.capacity(), v.as_ptr().addr()), (cap, ptr));
}
