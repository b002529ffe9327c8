use super::*;
use std::net::{Ipv4Addr, Ipv6Addr};

#[test]
fn url_param_finds_the_first_exact_name() {
    let q = b"ab=1&a=2&a=3&flag&b=";
    assert_eq!(url_param(q, b"a"), Some(&b"2"[..]));
    assert_eq!(url_param(q, b"ab"), Some(&b"1"[..]));
    assert_eq!(url_param(q, b"b"), Some(&b""[..]));
    assert_eq!(url_param(q, b"flag"), None);
    assert_eq!(url_param(q, b"c"), None);
    assert_eq!(url_param(b"", b"a"), None);
}

#[test]
fn mapped_ipv4_hashes_like_ipv4() {
    let v4 = Ipv4Addr::new(192, 0, 2, 7);
    assert_eq!(
        hash_addr(IpAddr::V4(v4)),
        hash_addr(IpAddr::V6(v4.to_ipv6_mapped()))
    );
    assert_ne!(
        hash_addr(IpAddr::V4(v4)),
        hash_addr(IpAddr::V6(Ipv6Addr::LOCALHOST))
    );
}

#[test]
fn path_hash_includes_the_query_only_when_given() {
    assert_eq!(hash_path(b"/a", None), hash_bytes(b"/a"));
    assert_ne!(hash_path(b"/a", Some(b"x=1")), hash_path(b"/a", None));
    assert_ne!(hash_path(b"/a", Some(b"")), hash_path(b"/a", None));
    assert_ne!(
        hash_path(b"/a", Some(b"x=1")),
        hash_path(b"/a", Some(b"x=2"))
    );
}

#[test]
fn length_and_every_byte_count() {
    // Zero padding of the last word must not make "a" and "a\0" collide.
    assert_ne!(hash_bytes(b"a"), hash_bytes(b"a\0"));
    assert_ne!(hash_bytes(b""), hash_bytes(b"\0"));
    let base = b"/static/item/1234.png".to_vec();
    for i in 0..base.len() {
        let mut changed = base.clone();
        changed[i] ^= 1;
        assert_ne!(hash_bytes(&changed), hash_bytes(&base), "byte {i}");
    }
}

#[test]
fn hash_is_stable_across_builds() {
    // Pinned values: a change here would move every hashed client to another server.
    assert_eq!(hash_bytes(b""), PINNED[0]);
    assert_eq!(hash_bytes(b"/index.html"), PINNED[1]);
    assert_eq!(
        hash_addr(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7))),
        PINNED[2]
    );
}

const PINNED: [u64; 3] = [
    0xe220_a839_7b1d_cdaf,
    0xc382_a243_3bb8_b4d0,
    0x1d55_f605_309f_e048,
];
