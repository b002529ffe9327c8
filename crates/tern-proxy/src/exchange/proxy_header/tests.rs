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

fn tls(cert: bool, resumed: bool) -> ClientTls<'static> {
    ClientTls {
        version: "TLSv1.3",
        cipher: "TLS_AES_128_GCM_SHA256",
        sni: Some("example.com"),
        alpn: Some(b"h2"),
        cert,
        resumed,
    }
}

fn with_tls(origin: Origin, tls: ClientTls<'_>) -> Vec<u8> {
    Proxied {
        version: ProxyProtocol::V2,
        origin,
        tls: Some(tls),
        crc32c: false,
        custom: None,
    }
    .header()
}

#[test]
fn v2_tlvs_say_alpn_authority_and_ssl_in_haproxys_layout() {
    let out = with_tls(client("192.0.2.7:51234", "10.0.0.1:443"), tls(false, false));
    let mut expected = b"\r\n\r\n\0\r\nQUIT\n\x21\x11".to_vec();
    let mut body = vec![192, 0, 2, 7, 10, 0, 0, 1, 0xc8, 0x22, 0x01, 0xbb];
    body.extend_from_slice(b"\x01\x00\x02h2");
    body.extend_from_slice(b"\x02\x00\x0bexample.com");
    // SSL: 5 + 3 + 7 + 3 + 22 bytes; PP2_CLIENT_SSL, verify 1 (no certificate).
    body.extend_from_slice(b"\x20\x00\x28\x01\x00\x00\x00\x01");
    body.extend_from_slice(b"\x21\x00\x07TLSv1.3");
    body.extend_from_slice(b"\x23\x00\x16TLS_AES_128_GCM_SHA256");
    expected.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    expected.extend_from_slice(&body);
    assert_eq!(out, expected);
}

#[test]
fn v2_tlvs_are_read_back_by_the_parser_of_received_headers() {
    for (cert, resumed, flags, verify) in [
        (false, false, 0x01, 1),
        (true, false, 0x07, 0),
        (true, true, 0x05, 0),
    ] {
        let out = with_tls(client("[::1]:1000", "[::1]:443"), tls(cert, resumed));
        let Ok(tern_proxy_protocol::Parsed::Complete(h)) = tern_proxy_protocol::parse(&out) else {
            panic!("{out:?}");
        };
        assert_eq!(h.len, out.len());
        assert_eq!(h.origin, client("[::1]:1000", "[::1]:443"));
        assert_eq!(h.tlvs.alpn.as_deref(), Some(&b"h2"[..]));
        assert_eq!(h.tlvs.authority.as_deref(), Some(&b"example.com"[..]));
        let ssl = h.tlvs.ssl.unwrap();
        assert_eq!((ssl.client, ssl.verify), (flags, verify));
        assert_eq!(ssl.version.as_deref(), Some(&b"TLSv1.3"[..]));
        assert_eq!(ssl.cipher.as_deref(), Some(&b"TLS_AES_128_GCM_SHA256"[..]));
    }
}

#[test]
fn v2_without_addresses_and_v1_carry_no_tlvs() {
    for origin in [Origin::Local, Origin::Unknown] {
        assert_eq!(with_tls(origin, tls(true, false)).len(), 16);
    }
    let v1 = Proxied {
        version: ProxyProtocol::V1,
        origin: client("10.0.0.1:1000", "10.0.0.2:443"),
        tls: Some(tls(false, false)),
        crc32c: true,
        custom: None,
    };
    assert_eq!(v1.header(), b"PROXY TCP4 10.0.0.1 10.0.0.2 1000 443\r\n");
}

#[test]
fn a_crc32c_tlv_seals_v2_headers_as_the_receiving_parser_checks_it() {
    let mut sealed = Proxied {
        version: ProxyProtocol::V2,
        origin: client("192.0.2.7:51234", "10.0.0.1:443"),
        tls: Some(tls(true, false)),
        crc32c: true,
        custom: None,
    };
    let plain = Proxied {
        crc32c: false,
        custom: None,
        ..sealed
    }
    .header();
    for origin in [sealed.origin, Origin::Local] {
        sealed.origin = origin;
        let out = sealed.header();
        let Ok(tern_proxy_protocol::Parsed::Complete(h)) = tern_proxy_protocol::parse(&out) else {
            panic!("{out:?}");
        };
        assert_eq!(h.len, out.len());
        assert_eq!(h.origin, origin);
        if origin != Origin::Local {
            assert!(h.tlvs.crc32c, "the parser found and verified the TLV");
            // The TLVs before it are those of the unsealed header, the checksum last.
            assert_eq!(out.len(), plain.len() + 7);
            assert_eq!(out[16..plain.len()], plain[16..]);
            assert_eq!(out[plain.len()..plain.len() + 3], [0x03, 0x00, 0x04]);
            // A bit changed on the way is refused.
            let mut changed = out.clone();
            changed[20] ^= 0x40;
            assert!(tern_proxy_protocol::parse(&changed).is_err());
        }
    }
}

fn formats(list: &[(u8, Vec<tern_config::Piece>)]) -> Vec<tern_config::ProxyV2Tlv> {
    list.iter()
        .map(|(id, pieces)| tern_config::ProxyV2Tlv {
            id: *id,
            format: tern_config::ValueFormat {
                pieces: pieces.clone(),
            },
        })
        .collect()
}

#[test]
fn proxy_v2_tlvs_follow_terns_own_and_read_the_connection() {
    use tern_config::{Fetch, Piece};
    let received = tern_proxy_protocol::Tlvs {
        others: vec![(0xE1, b"acme\r\n\0".to_vec())],
        ..Default::default()
    };
    let formats = formats(&[
        (0xE1, vec![Piece::Fetch(Fetch::PpTlv(0xE1))]),
        (
            0x02,
            vec![Piece::Text("via-".into()), Piece::Fetch(Fetch::Src)],
        ),
        (0xE2, vec![Piece::Fetch(Fetch::PpTlv(0xE9))]),
        (
            0xE3,
            vec![Piece::Fetch(Fetch::DstPort), Piece::Fetch(Fetch::Tls)],
        ),
    ]);
    let proxied = Proxied {
        version: ProxyProtocol::V2,
        origin: client("192.0.2.7:51234", "10.0.0.1:443"),
        tls: Some(tls(false, false)),
        crc32c: true,
        custom: Some(Custom {
            formats: &formats,
            tls: true,
            sni: Some("example.com"),
            received: Some(&received),
        }),
    };
    let out = proxied.header();
    let Ok(tern_proxy_protocol::Parsed::Complete(h)) = tern_proxy_protocol::parse(&out) else {
        panic!("{out:?}");
    };
    assert_eq!(h.len, out.len());
    assert!(h.tlvs.crc32c, "sealed last, over the custom TLVs too");
    // Unescaped, as received; the format's AUTHORITY replaces tern's SNI.
    assert_eq!(h.tlvs.value(0xE1), Some(&b"acme\r\n\0"[..]));
    assert_eq!(h.tlvs.authority.as_deref(), Some(&b"via-192.0.2.7"[..]));
    assert_eq!(h.tlvs.alpn.as_deref(), Some(&b"h2"[..]));
    assert_eq!(h.tlvs.value(0xE2), Some(&b""[..]), "absent: sent empty");
    assert_eq!(h.tlvs.value(0xE3), Some(&b"4431"[..]));
}

#[test]
fn proxy_v2_tlvs_stay_within_what_a_receiver_accepts() {
    use tern_config::Piece;
    let big = "x".repeat(3000);
    let formats = formats(&[
        (0xE1, vec![Piece::Text(big.clone())]),
        (0xE2, vec![Piece::Text(big)]),
        (0xE3, vec![Piece::Text("small".into())]),
    ]);
    let custom = Custom {
        formats: &formats,
        tls: false,
        sni: None,
        received: None,
    };
    let out = Proxied {
        version: ProxyProtocol::V2,
        origin: client("192.0.2.7:51234", "10.0.0.1:443"),
        tls: None,
        crc32c: false,
        custom: Some(custom),
    }
    .header();
    let Ok(tern_proxy_protocol::Parsed::Complete(h)) = tern_proxy_protocol::parse(&out) else {
        panic!("{}", out.len());
    };
    assert_eq!(h.tlvs.value(0xE1).map(<[u8]>::len), Some(3000));
    assert_eq!(h.tlvs.value(0xE2), None, "left out");
    assert_eq!(h.tlvs.value(0xE3), Some(&b"small"[..]));
    // A check's LOCAL header carries none.
    let local = Proxied {
        version: ProxyProtocol::V2,
        origin: Origin::Local,
        tls: None,
        crc32c: false,
        custom: Some(custom),
    };
    assert_eq!(local.header().len(), 16);
}
