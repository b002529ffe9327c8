//! The TLVs of a received PROXY v2 header through the real binary: `fc_pp_tlv(<id>)` read in
//! routing conditions, header values and the `log_format` (HTTP and TCP mode), and passed on
//! to servers with `proxy_v2_tlvs` (HAProxy's `set-proxy-v2-tlv-fmt`). Clients send crafted
//! headers (custom TLVs 0xE1, UNIQUE_ID), and Debian's HAProxy 2.6 sends its request id as a
//! UNIQUE_ID TLV (`proxy-v2-options unique-id`) before HTTP/2 streams; the receivers are
//! `tern term --accept-proxy`, whose decoder of TLVs is independent of tern's
//! (`x-proxy-tlvs`), and HAProxy 2.6, which reads the UNIQUE_ID TLV with `fc_pp_unique_id`.

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::net::SocketAddr;
use std::time::Duration;

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// A request for `term`'s dump of the request head.
const DUMP: &[u8] = b"GET /?h=1 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// A PROXY v2 header from 198.51.100.9:40000 to 127.0.0.1:8443 with `tlvs`, then `DUMP`.
fn proxied_request(tlvs: &[(u8, &[u8])]) -> Vec<u8> {
    let mut body = vec![198, 51, 100, 9, 127, 0, 0, 1, 0x9c, 0x40, 0x20, 0xfb];
    for (kind, value) in tlvs {
        body.push(*kind);
        body.extend_from_slice(&u16::try_from(value.len()).unwrap().to_be_bytes());
        body.extend_from_slice(value);
    }
    let mut out = b"\r\n\r\n\0\r\nQUIT\n\x21\x11".to_vec();
    out.extend_from_slice(&u16::try_from(body.len()).unwrap().to_be_bytes());
    out.extend_from_slice(&body);
    out.extend_from_slice(DUMP);
    out
}

fn exchange(addr: SocketAddr, bytes: &[u8]) -> Raw {
    raw_exchange(addr, bytes, WAIT)
}

/// A server table sending PROXY v2 with the received 0xE1 passed on and a TLV of its own.
fn passing_on(addr: SocketAddr) -> String {
    format!(
        "{{ name = \"t\", address = \"{addr}\", proxy_protocol = \"v2\", proxy_v2_tlvs = [\
         {{ id = 0xE1, format = \"%[fc_pp_tlv(0xE1)]\" }}, \
         {{ id = 0xE5, format = \"via-%[src]:%[dst_port]\" }}] }}"
    )
}

#[test]
fn http_routes_logs_and_passes_on_a_received_tlv() {
    let tenants = Term::start_with("tenants", &["--accept-proxy"]);
    let app = Term::start("app");
    let toml = format!(
        r#"[[frontend]]
name = "web"
bind = [{{ address = "127.0.0.1:0", accept_proxy = true }}]
default_backend = "app"
use_backend = [{{ backend = "tenants", if = "{{ fc_pp_tlv(0xE1) -m beg acme }}" }}]
http_request = [{{ action = "set-header", name = "X-Tenant", value = "%[fc_pp_tlv(0xE1)]" }}]
log_format = "%ci tenant=%[fc_pp_tlv(0xE1)] uid=%[fc_pp_tlv(UNIQUE_ID)] %b"

[[backend]]
name = "tenants"
servers = [{}]

[[backend]]
name = "app"
servers = [{{ name = "a", address = "{}" }}]

[access_log]
target = "access.log"
"#,
        passing_on(tenants.addr),
        app.addr
    );
    let tern = Tern::run(&toml);
    let log = tern.dir.join("access.log");

    let got = exchange(
        tern.addr(),
        &proxied_request(&[(0xE1, b"acme-1"), (0x05, b"uid-42")]),
    );
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(got.dumped("x-tenant").as_deref(), Some("acme-1"));
    // term decoded what tern sent on: the received TLV, and the format of its own.
    assert_eq!(
        got.head_value("x-proxy-tlvs").as_deref(),
        Some("0xe1=acme-1 0xe5=via-198.51.100.9:8443")
    );

    // No such TLV: the condition does not hold, the value and the log field are empty.
    let got = exchange(tern.addr(), &proxied_request(&[(0xE2, b"acme-2")]));
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(got.head_value("x-proxy-tlvs"), None, "went to app");
    assert!(got.dumped("x-tenant").unwrap_or_default().is_empty());

    let lines = wait_log_lines(&log, 2, WAIT);
    assert_eq!(lines[0], "198.51.100.9 tenant=acme-1 uid=uid-42 tenants");
    assert_eq!(lines[1], "198.51.100.9 tenant=- uid=- app");
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}

#[test]
fn tcp_mode_routes_logs_and_passes_on_a_received_tlv() {
    let tenants = Term::start_with("tenants", &["--accept-proxy"]);
    let app = Term::start("app");
    let toml = format!(
        r#"[[frontend]]
name = "raw"
mode = "tcp"
bind = [{{ address = "127.0.0.1:0", accept_proxy = true }}]
default_backend = "app"
use_backend = [{{ backend = "tenants", if = "{{ fc_pp_tlv(0xE1) acme-1 }}" }}]
log_format = "%ci tenant=%[fc_pp_tlv(0xE1)] %b"

[[backend]]
name = "tenants"
mode = "tcp"
servers = [{}]

[[backend]]
name = "app"
mode = "tcp"
servers = [{{ name = "a", address = "{}" }}]

[access_log]
target = "access.log"
"#,
        passing_on(tenants.addr),
        app.addr
    );
    let tern = Tern::run(&toml);
    let got = exchange(tern.addr(), &proxied_request(&[(0xE1, b"acme-1")]));
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(
        got.head_value("x-proxy-tlvs").as_deref(),
        Some("0xe1=acme-1 0xe5=via-198.51.100.9:8443")
    );
    let got = exchange(tern.addr(), &proxied_request(&[(0xE1, b"acme-9")]));
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(got.head_value("x-proxy-tlvs"), None, "went to app");
    // A TCP session's line is written when it ends, and the two sessions' ends race.
    let mut lines = wait_log_lines(&tern.dir.join("access.log"), 2, WAIT);
    lines.sort();
    assert_eq!(lines[0], "198.51.100.9 tenant=acme-1 tenants");
    assert_eq!(lines[1], "198.51.100.9 tenant=acme-9 app");
    let c = tern.stop();
    assert_eq!(c.get("frontend raw", "tcp_sessions"), 2);
}

#[test]
fn haproxy_reads_the_unique_id_tern_formats_from_a_received_tlv() {
    if !have("haproxy") {
        eprintln!("skipped: haproxy is not installed");
        return;
    }
    let dir = temp_dir("pp-tlv-haproxy");
    let term = Term::start("t");
    let http_in = free_port();
    let cfg = format!(
        "defaults\n  timeout client 10s\n  timeout server 10s\n  timeout connect 2s\n\
         listen httpin\n  mode http\n  bind 127.0.0.1:{http_in} accept-proxy\n\
         \x20 http-request set-header X-PP-UID %[fc_pp_unique_id]\n  server t {}\n",
        term.addr
    );
    let _haproxy = Other::haproxy(&dir, &cfg, &[http_in]);
    // The same converted from HAProxy's syntax: `set-proxy-v2-tlv-fmt`.
    let hap = format!(
        "frontend web\n  mode http\n  bind 127.0.0.1:0 accept-proxy\n  default_backend hap\n\
         backend hap\n  mode http\n  server h 127.0.0.1:{http_in} send-proxy-v2 \
         set-proxy-v2-tlv-fmt(0x05) tenant-%[fc_pp_tlv(0xE1)]\n"
    );
    std::fs::write(dir.join("tern.cfg"), hap).unwrap();
    let out = std::process::Command::new(tern_bin())
        .args(["convert", "tern.cfg"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let toml = String::from_utf8(out.stdout).unwrap();
    assert!(
        toml.contains("proxy_v2_tlvs = [{ id = 0x05, format = \"tenant-%[fc_pp_tlv(0xE1)]\" }]"),
        "{toml}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tern = Tern::run_in(dir, &toml);
    let got = exchange(tern.addr(), &proxied_request(&[(0xE1, b"acme-1")]));
    assert_eq!(got.status(), Some(200), "{}", got.text());
    assert_eq!(got.dumped("x-pp-uid").as_deref(), Some("tenant-acme-1"));
    assert_eq!(got.dumped("x-forwarded-for"), None);
    tern.stop();
}

#[test]
fn haproxys_unique_id_tlv_is_read_on_an_h2c_bind() {
    if !have("haproxy") || !have("curl") {
        eprintln!("skipped: haproxy or curl is not installed");
        return;
    }
    let app = Term::start("app");
    let toml = format!(
        r#"[[frontend]]
name = "web"
bind = [{{ address = "127.0.0.1:0", accept_proxy = true }}]
http2 = {{ cleartext = true }}
default_backend = "app"
http_request = [{{ action = "set-header", name = "X-UID", value = "%[fc_pp_tlv(UNIQUE_ID)]" }}]

[[backend]]
name = "app"
servers = [{{ name = "a", address = "{}" }}]
"#,
        app.addr
    );
    let tern = Tern::run(&toml);
    // HAProxy 2.6 in front, speaking h2c to tern with its request id in the UNIQUE_ID TLV.
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode http\n  timeout client 10s\n  timeout server 10s\n  timeout connect 2s\n\
         frontend in\n  bind 127.0.0.1:{port}\n  unique-id-format tenant-42\n  default_backend tern\n\
         backend tern\n  server t {} send-proxy-v2 proxy-v2-options unique-id proto h2\n",
        tern.addr()
    );
    let _haproxy = Other::haproxy(&tern.dir, &cfg, &[port]);
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "--max-time",
            "10",
            &format!("http://127.0.0.1:{port}/?h=1"),
        ])
        .output()
        .unwrap();
    let body = String::from_utf8_lossy(&out.stdout).to_ascii_lowercase();
    assert!(body.contains("x-uid: tenant-42"), "{body}");
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}
