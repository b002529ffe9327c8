//! The parser against the spec's forms, each refusal case, and every split of valid headers.

#![allow(clippy::unwrap_used)]

use super::*;

fn complete(buf: &[u8]) -> Header {
    match parse(buf) {
        Ok(Parsed::Complete(h)) => h,
        other => panic!("{:?}: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn refused(buf: &[u8]) -> &'static str {
    match parse(buf) {
        Err(Refused(why)) => why,
        other => panic!("{:?} not refused: {other:?}", String::from_utf8_lossy(buf)),
    }
}

fn client(source: &str, destination: &str) -> Origin {
    Origin::Client {
        source: source.parse().unwrap(),
        destination: destination.parse().unwrap(),
    }
}

/// A v2 header: command, family/transport, body.
fn v2h(command: u8, fam: u8, body: &[u8]) -> Vec<u8> {
    let mut out = V2_SIGNATURE.to_vec();
    out.push(command);
    out.push(fam);
    out.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn v4_body() -> Vec<u8> {
    let mut b = vec![192, 0, 2, 7, 10, 0, 0, 1];
    b.extend_from_slice(&51234u16.to_be_bytes());
    b.extend_from_slice(&443u16.to_be_bytes());
    b
}

#[test]
fn v1_tcp4_tcp6_and_unknown() {
    let h = complete(b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\r\nGET / HTTP/1.1\r\n");
    assert_eq!(h.len, 41);
    assert_eq!(h.origin, client("192.0.2.7:51234", "10.0.0.1:443"));
    let h = complete(b"PROXY TCP6 2001:db8::7 ::1 1 65535\r\n");
    assert_eq!(h.origin, client("[2001:db8::7]:1", "[::1]:65535"));
    assert_eq!(complete(b"PROXY UNKNOWN\r\n").origin, Origin::Unknown);
    let h = complete(b"PROXY UNKNOWN ffff::1 ffff::2 1 2\r\nrest");
    assert_eq!((h.origin, h.len), (Origin::Unknown, 35));
}

#[test]
fn v1_refusals() {
    for bad in [
        &b"GET / HTTP/1.1\r\n"[..],
        b"\x16\x03\x01\x02\x00",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\rX",
        b"PROXY TCP4 192.0.2.7  10.0.0.1 51234 443\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 51234\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443 9\r\n",
        b"PROXY TCP4 ::1 ::1 1 2\r\n",
        b"PROXY TCP6 1.2.3.4 1.2.3.4 1 2\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 051234 443\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 01 443\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 65536 443\r\n",
        b"PROXY TCP4 192.0.2.7 10.0.0.1 +1 443\r\n",
        b"PROXY TCP4 192.0.2.07 10.0.0.1 1 443\r\n",
        b"PROXY UDP4 192.0.2.7 10.0.0.1 1 443\r\n",
        b"PROXY tcp4 192.0.2.7 10.0.0.1 1 443\r\n",
        b"proxy TCP4 192.0.2.7 10.0.0.1 1 443\r\n",
        b"PROXY \r\n",
    ] {
        refused(bad);
    }
    // No CRLF within 107 bytes.
    let long = format!("PROXY UNKNOWN {}", "x".repeat(120));
    assert_eq!(refused(long.as_bytes()), "v1 line longer than 107 bytes");
    // Exactly 107 bytes with its CRLF is accepted.
    let max = format!("PROXY UNKNOWN {}\r\n", "x".repeat(107 - 16));
    assert_eq!(max.len(), 107);
    assert_eq!(complete(max.as_bytes()).len, 107);
}

#[test]
fn v2_inet_inet6_local_unspec() {
    let h = complete(&v2h(0x21, 0x11, &v4_body()));
    assert_eq!(h.origin, client("192.0.2.7:51234", "10.0.0.1:443"));
    assert_eq!(h.len, 28);
    let mut body6 = vec![0u8; 36];
    body6[15] = 1;
    body6[31] = 2;
    body6[32..34].copy_from_slice(&80u16.to_be_bytes());
    body6[34..36].copy_from_slice(&8080u16.to_be_bytes());
    assert_eq!(
        complete(&v2h(0x21, 0x21, &body6)).origin,
        client("[::1]:80", "[::2]:8080")
    );
    assert_eq!(complete(&v2h(0x20, 0x00, &[])).origin, Origin::Local);
    // LOCAL skips its body whatever the family byte says.
    assert_eq!(complete(&v2h(0x20, 0x11, &[1, 2, 3])).origin, Origin::Local);
    assert_eq!(complete(&v2h(0x21, 0x00, &[])).origin, Origin::Unknown);
    assert_eq!(
        complete(&v2h(0x21, 0x31, &[0; 216])).origin,
        Origin::Unknown
    );
}

#[test]
fn v2_tlvs_kept_and_walked() {
    let mut body = v4_body();
    body.extend_from_slice(&[PP2_TYPE_ALPN, 0, 2, b'h', b'2']);
    body.extend_from_slice(&[PP2_TYPE_AUTHORITY, 0, 3, b'a', b'.', b'b']);
    body.extend_from_slice(&[0x04, 0, 0]); // NOOP
                                           // SSL: client flags, verify, one sub-TLV (version "TLSv1.3").
    let mut ssl = vec![PP2_CLIENT_SSL, 0, 0, 0, 0, 0x21, 0, 7];
    ssl.extend_from_slice(b"TLSv1.3");
    body.push(PP2_TYPE_SSL);
    body.extend_from_slice(&u16::try_from(ssl.len()).unwrap().to_be_bytes());
    body.extend_from_slice(&ssl);
    let h = complete(&v2h(0x21, 0x11, &body));
    assert_eq!(h.tlvs.alpn.as_deref(), Some(&b"h2"[..]));
    assert_eq!(h.tlvs.authority.as_deref(), Some(&b"a.b"[..]));
    assert!(h.tlvs.client_ssl());
    assert_eq!(h.tlvs.value(0x21), Some(&b"TLSv1.3"[..]));
    assert_eq!(h.tlvs.value(0x23), None);
    let ssl = h.tlvs.ssl.unwrap();
    assert_eq!(ssl.version.as_deref(), Some(&b"TLSv1.3"[..]));
    assert_eq!((ssl.verify, ssl.cipher), (0, None));
    assert!(!h.tlvs.crc32c);
}

#[test]
fn v2_refusals() {
    let mut tlv_long = v4_body();
    tlv_long.extend_from_slice(&[0x01, 0, 9, b'x']);
    let mut tlv_cut = v4_body();
    tlv_cut.extend_from_slice(&[0x01, 0]);
    let mut ssl_cut = v4_body();
    ssl_cut.extend_from_slice(&[PP2_TYPE_SSL, 0, 3, 1, 0, 0]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (v2h(0x11, 0x11, &v4_body()), "v2 version is not 2"),
        (
            v2h(0x22, 0x11, &v4_body()),
            "v2 command neither LOCAL nor PROXY",
        ),
        (
            v2h(0x21, 0x11, &v4_body()[..11]),
            "v2 length shorter than its addresses",
        ),
        (
            v2h(0x21, 0x21, &v4_body()),
            "v2 length shorter than its addresses",
        ),
        (
            v2h(0x21, 0x12, &v4_body()),
            "v2 family or transport tern does not relay",
        ),
        (
            v2h(0x21, 0x41, &v4_body()),
            "v2 family or transport tern does not relay",
        ),
        (v2h(0x21, 0x11, &tlv_long), "v2 TLV longer than the header"),
        (v2h(0x21, 0x11, &tlv_cut), "v2 TLV cut short"),
        (v2h(0x21, 0x11, &ssl_cut), "v2 SSL TLV cut short"),
        (
            v2h(0x21, 0x11, &[0; MAX_V2_BODY + 1]),
            "v2 header longer than tern accepts",
        ),
    ];
    for (bytes, why) in cases {
        assert_eq!(refused(&bytes), why, "{bytes:?}");
    }
    assert_eq!(
        refused(b"\r\n\r\n\0\r\nQUIX\n"),
        "not a PROXY protocol header"
    );
}

#[test]
fn every_prefix_of_a_valid_header_asks_for_more_and_never_refuses() {
    let mut v2 = v2h(0x21, 0x11, &v4_body());
    v2.extend_from_slice(&[PP2_TYPE_ALPN, 0, 2, b'h', b'2']);
    let v2 = v2h(0x21, 0x11, &v2[16..]);
    let headers: [&[u8]; 3] = [
        b"PROXY TCP4 192.0.2.7 10.0.0.1 51234 443\r\n",
        b"PROXY UNKNOWN\r\n",
        &v2,
    ];
    for header in headers {
        for cut in 0..header.len() {
            assert_eq!(parse(&header[..cut]), Ok(Parsed::Partial), "{cut}");
        }
        assert_eq!(complete(header).len, header.len());
    }
}

/// A v4 PROXY header with an ALPN TLV then a CRC32C TLV holding `crc` (`None`: the right one).
fn with_crc32c(crc: Option<u32>) -> Vec<u8> {
    let mut body = v4_body();
    body.extend_from_slice(&[PP2_TYPE_ALPN, 0, 2, b'h', b'2']);
    body.extend_from_slice(&[PP2_TYPE_CRC32C, 0, 4, 0, 0, 0, 0]);
    let mut header = v2h(0x21, 0x11, &body);
    let at = header.len() - 4;
    let crc = crc.unwrap_or_else(|| crc32c::crc32c(&header));
    header[at..].copy_from_slice(&crc.to_be_bytes());
    header
}

#[test]
fn v2_crc32c_checked() {
    // The algorithm is CRC-32C (Castagnoli): its standard check value.
    assert_eq!(crc32c::crc32c(b"123456789"), 0xe306_9283);
    let good = with_crc32c(None);
    let h = complete(&good);
    assert!(h.tlvs.crc32c);
    assert_eq!(h.tlvs.alpn.as_deref(), Some(&b"h2"[..]));
    // One bit changed anywhere (here: the source address) is a mismatch.
    let mut changed = good.clone();
    changed[16] ^= 1;
    assert_eq!(refused(&changed), "v2 CRC32C checksum mismatch");
    let wrong = with_crc32c(Some(0xdead_beef));
    assert_eq!(refused(&wrong), "v2 CRC32C checksum mismatch");
    // A checksum of another length.
    let mut body = v4_body();
    body.extend_from_slice(&[PP2_TYPE_CRC32C, 0, 2, 0, 0]);
    assert_eq!(
        refused(&v2h(0x21, 0x11, &body)),
        "v2 CRC32C TLV not 4 bytes long"
    );
}

#[test]
fn an_appended_crc32c_is_the_one_the_parser_verifies() {
    // The checksum `append_crc32c` writes is computed independently here, from the bytes.
    let mut header = v2h(0x21, 0x11, &v4_body());
    header.extend_from_slice(&[PP2_TYPE_ALPN, 0, 2, b'h', b'2']);
    header[14..16].copy_from_slice(&17u16.to_be_bytes());
    assert!(crate::append_crc32c(&mut header));
    assert_eq!(u16::from_be_bytes([header[14], header[15]]), 24);
    assert_eq!(header.len(), 16 + 24);
    let at = header.len() - 4;
    assert_eq!(header[at - 3..at], [PP2_TYPE_CRC32C, 0, 4]);
    let mut zeroed = header.clone();
    zeroed[at..].fill(0);
    assert_eq!(header[at..], crc32c::crc32c(&zeroed).to_be_bytes());
    let h = complete(&header);
    assert!(h.tlvs.crc32c);
    assert_eq!(h.tlvs.alpn.as_deref(), Some(&b"h2"[..]));
    // A LOCAL header without addresses takes one too.
    let mut local = v2h(0x20, 0x00, &[]);
    assert!(crate::append_crc32c(&mut local));
    assert_eq!(complete(&local).len, 16 + 7);
    // Not a v2 header, or one that would outgrow its length field: left alone.
    let mut short = vec![0u8; 10];
    assert!(!crate::append_crc32c(&mut short));
    assert_eq!(short.len(), 10);
    let mut long = vec![0u8; 16 + 65_530];
    assert!(!crate::append_crc32c(&mut long));
}

#[test]
fn other_tlvs_are_kept_in_order_for_fc_pp_tlv() {
    let mut body = v4_body();
    body.extend_from_slice(&[PP2_TYPE_ALPN, 0, 2, b'h', b'2']);
    body.extend_from_slice(&[0xE1, 0, 3, b'a', b'b', b'c']);
    body.extend_from_slice(&[PP2_TYPE_NOOP, 0, 2, 0, 0]);
    body.extend_from_slice(&[0x05, 0, 2, b'i', b'd']);
    body.extend_from_slice(&[0xE1, 0, 1, b'z']);
    body.extend_from_slice(&[0xEA, 0, 0]);
    let h = complete(&v2h(0x21, 0x11, &body));
    let others: Vec<(u8, &[u8])> = h.tlvs.others.iter().map(|(k, v)| (*k, &v[..])).collect();
    assert_eq!(
        others,
        [
            (0xE1, &b"abc"[..]),
            (0x05, b"id"),
            (0xE1, b"z"),
            (0xEA, b"")
        ]
    );
    assert_eq!(h.tlvs.value(0xE1), Some(&b"abc"[..]));
    assert_eq!(h.tlvs.value(0xEA), Some(&b""[..]));
    assert_eq!(h.tlvs.value(PP2_TYPE_ALPN), Some(&b"h2"[..]));
    assert_eq!(h.tlvs.value(0xE2), None);
    assert_eq!(h.tlvs.value(PP2_TYPE_NOOP), None);
    assert!(!h.tlvs.is_empty());
    // None kept: nothing allocated.
    let plain = complete(&v2h(0x21, 0x11, &v4_body()));
    assert_eq!(plain.tlvs.others.capacity(), 0);
    assert!(plain.tlvs.is_empty());
}
