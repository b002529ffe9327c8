//! A server's `disabled` and `proxy_protocol` keys.

#![allow(clippy::unwrap_used)]

use crate::test_support::*;
use crate::ProxyProtocol;

/// `MINIMAL` with `keys` added to its server's table (line 8).
fn with_server_keys(keys: &str) -> String {
    MINIMAL.replace(
        "address = \"127.0.0.1:8080\" }",
        &format!("address = \"127.0.0.1:8080\", {keys} }}"),
    )
}

#[test]
fn servers_are_enabled_and_send_no_proxy_header_by_default() {
    let server = &parse_ok(MINIMAL).backends[0].servers[0];
    assert!(!server.disabled);
    assert_eq!(server.proxy_protocol, None);
}

#[test]
fn disabled_and_proxy_protocol_are_read() {
    let config = parse_ok(&with_server_keys(
        "disabled = true, proxy_protocol = \"v1\"",
    ));
    let server = &config.backends[0].servers[0];
    assert!(server.disabled);
    assert_eq!(server.proxy_protocol, Some(ProxyProtocol::V1));
    let config = parse_ok(&with_server_keys(
        "disabled = false, proxy_protocol = \"V2\"",
    ));
    let server = &config.backends[0].servers[0];
    assert!(!server.disabled);
    assert_eq!(server.proxy_protocol, Some(ProxyProtocol::V2));
}

#[test]
fn only_versions_1_and_2_exist() {
    for bad in ["\"v3\"", "\"1\"", "\"\""] {
        assert_error(
            &with_server_keys(&format!("proxy_protocol = {bad}")),
            8,
            "backend[0].servers[0].proxy_protocol",
            "expected \"v1\" or \"v2\"",
        );
    }
    assert_error(
        &with_server_keys("proxy_protocol = 2"),
        8,
        "backend[0].servers[0].proxy_protocol",
        "",
    );
    assert_error(
        &with_server_keys("disabled = \"yes\""),
        8,
        "backend[0].servers[0].disabled",
        "",
    );
}

#[test]
fn a_crc32c_is_sent_only_in_v2_headers() {
    let config = parse_ok(&with_server_keys(
        "proxy_protocol = \"v2\", proxy_v2_crc32c = true",
    ));
    assert!(config.backends[0].servers[0].proxy_v2.crc32c);
    assert!(!parse_ok(MINIMAL).backends[0].servers[0].proxy_v2.crc32c);
    for without in ["proxy_protocol = \"v1\", ", ""] {
        assert_error(
            &with_server_keys(&format!("{without}proxy_v2_crc32c = true")),
            8,
            "backend[0].servers[0].proxy_v2_crc32c",
            "needs `proxy_protocol = \"v2\"`",
        );
    }
}

#[test]
fn proxy_v2_tlvs_are_formats_of_connection_samples() {
    let config = parse_ok(&with_server_keys(
        "proxy_protocol = \"v2\", proxy_v2_tlvs = [{ id = 0xE1, format = \"%[fc_pp_tlv(0xE1)]\" }, \
         { id = \"UNIQUE_ID\", format = \"id-%[src]\" }]",
    ));
    let tlvs = &config.backends[0].servers[0].proxy_v2.tlvs;
    assert_eq!(tlvs.len(), 2);
    assert_eq!(tlvs[0].id, 0xE1);
    assert_eq!(
        tlvs[0].format.pieces,
        [crate::Piece::Fetch(crate::Fetch::PpTlv(0xE1))]
    );
    assert_eq!(tlvs[1].id, 0x05);
    assert!(parse_ok(MINIMAL).backends[0].servers[0]
        .proxy_v2
        .tlvs
        .is_empty());
}

#[test]
fn proxy_v2_tlvs_refuse_reserved_types_request_samples_and_v1() {
    let at = "backend[0].servers[0].proxy_v2_tlvs[0].id";
    for (id, why) in [
        ("3", "proxy_v2_crc32c"),
        ("\"NOOP\"", "padding"),
        ("0x20", "PP2_TYPE_SSL"),
        ("256", "not within 0-255"),
        ("\"0xZZ\"", "not a TLV type"),
    ] {
        let keys =
            format!("proxy_protocol = \"v2\", proxy_v2_tlvs = [{{ id = {id}, format = \"x\" }}]");
        assert_error(&with_server_keys(&keys), 8, at, why);
    }
    assert_error(
        &with_server_keys(
            "proxy_protocol = \"v2\", proxy_v2_tlvs = [{ id = 0xE0, format = \"%[path]\" }]",
        ),
        8,
        "backend[0].servers[0].proxy_v2_tlvs[0].format",
        "not known when a server connection opens",
    );
    assert_error(
        &with_server_keys(
            "proxy_protocol = \"v2\", proxy_v2_tlvs = [{ id = 0xE0, format = \"a\" }, \
             { id = 0xE0, format = \"b\" }]",
        ),
        8,
        "backend[0].servers[0].proxy_v2_tlvs[1].id",
        "already set",
    );
    assert_error(
        &with_server_keys(
            "proxy_protocol = \"v1\", proxy_v2_tlvs = [{ id = 0xE0, format = \"a\" }]",
        ),
        8,
        "backend[0].servers[0].proxy_v2_tlvs",
        "needs `proxy_protocol = \"v2\"`",
    );
}
