#![allow(clippy::unwrap_used)]

use super::*;

fn client(source: &str, destination: &str) -> Origin {
    Origin::Client {
        source: source.parse().unwrap(),
        destination: destination.parse().unwrap(),
    }
}

#[test]
fn v1_lines_are_the_specs_examples() {
    assert_eq!(
        header(
            ProxyProtocol::V1,
            client("192.168.0.1:56324", "192.168.0.11:443")
        ),
        b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n"
    );
    // The longest lines the spec announces: 56 bytes for TCP4, 104 for TCP6.
    let tcp4 = header(
        ProxyProtocol::V1,
        client("255.255.255.255:65535", "255.255.255.255:65535"),
    );
    assert_eq!(
        tcp4,
        b"PROXY TCP4 255.255.255.255 255.255.255.255 65535 65535\r\n"
    );
    assert_eq!(tcp4.len(), 56);
    let all = "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:65535";
    let tcp6 = header(ProxyProtocol::V1, client(all, all));
    assert_eq!(
        tcp6,
        b"PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff \
          ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n"
    );
    assert_eq!(tcp6.len(), 104);
}

#[test]
fn v1_writes_ipv6_in_its_short_form() {
    assert_eq!(
        header(
            ProxyProtocol::V1,
            client("[::1]:40000", "[2001:db8::1]:443")
        ),
        b"PROXY TCP6 ::1 2001:db8::1 40000 443\r\n"
    );
}

#[test]
fn v1_says_unknown_for_checks_unknown_addresses_and_mixed_families() {
    for origin in [
        Origin::Local,
        Origin::Unknown,
        client("10.0.0.1:1000", "[::1]:443"),
    ] {
        assert_eq!(header(ProxyProtocol::V1, origin), b"PROXY UNKNOWN\r\n");
    }
}

#[test]
fn v2_ipv4_matches_haproxys_bytes() {
    // What HAProxy sends for 172.19.0.1:42578 -> 172.19.0.3:80.
    let expected: [u8; 28] = [
        0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, // signature
        0x21, 0x11, 0x00, 0x0c, // v2 PROXY, TCP over IPv4, 12 bytes
        0xac, 0x13, 0x00, 0x01, 0xac, 0x13, 0x00, 0x03, // addresses
        0xa6, 0x52, 0x00, 0x50, // ports
    ];
    assert_eq!(
        header(
            ProxyProtocol::V2,
            client("172.19.0.1:42578", "172.19.0.3:80")
        ),
        expected
    );
}

#[test]
fn v2_ipv6_carries_36_bytes_of_addresses() {
    let out = header(ProxyProtocol::V2, client("[::1]:258", "[2001:db8::2]:443"));
    assert_eq!(out.len(), 16 + 36);
    assert_eq!(&out[..12], &V2_SIGNATURE);
    assert_eq!(&out[12..16], &[0x21, 0x21, 0x00, 36]);
    let source: std::net::Ipv6Addr = "::1".parse().unwrap();
    let destination: std::net::Ipv6Addr = "2001:db8::2".parse().unwrap();
    assert_eq!(&out[16..32], &source.octets());
    assert_eq!(&out[32..48], &destination.octets());
    assert_eq!(&out[48..], &[0x01, 0x02, 0x01, 0xbb]);
}

#[test]
fn v2_checks_are_local_and_unknown_addresses_unspecified() {
    let local = header(ProxyProtocol::V2, Origin::Local);
    assert_eq!(&local[..12], &V2_SIGNATURE);
    assert_eq!(&local[12..], &[0x20, 0x00, 0x00, 0x00]);
    let unknown = header(ProxyProtocol::V2, Origin::Unknown);
    assert_eq!(&unknown[12..], &[0x21, 0x00, 0x00, 0x00]);
    let mixed = header(ProxyProtocol::V2, client("10.0.0.1:1000", "[::1]:443"));
    assert_eq!(&mixed[12..], &[0x21, 0x00, 0x00, 0x00]);
}
