//! The PROXY protocol between tern and the programs it replaces or feeds, through the real
//! binaries: Debian's hitch (`write-proxy-v2`, its SSL/ALPN/authority TLVs, read by
//! `fc_pp_tlv` into a header and into a TLV tern sends on) and stunnel
//! (`protocol = proxy`) in front of tern's `accept_proxy` binds; tern's own PROXY v2 header,
//! with the TLVs of the TLS it terminated, into HAProxy 2.6 (`accept-proxy`, read back from its
//! log and from the headers it forwards) and into `tern term --accept-proxy`, whose decoder of
//! TLVs is independent of tern's; HAProxy's CRC32C TLV verified by tern, and a wrong one
//! refused and counted; tern's own CRC32C (`proxy_v2_crc32c`) verified by HAProxy. Each program is started on loopback ports by the test and killed by its
//! PID; a test whose program is not installed says so and passes.

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::io::Write;
use std::net::TcpStream;
use std::process::Command;
use std::time::Duration;

/// Longest wait for anything in these tests.
const WAIT: Duration = Duration::from_secs(10);

/// curl's output (headers and body, lowercased) for `url`, connecting from 127.0.0.3.
fn curl(url: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "-sS",
        "-i",
        "-k",
        "--max-time",
        "10",
        "--interface",
        "127.0.0.3",
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let out = Command::new("curl").args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).to_ascii_lowercase()
}

/// `--resolve` for `localhost` on `port`, so the SNI is `localhost` and the address IPv4.
fn resolve(port: u16) -> String {
    format!("localhost:{port}:127.0.0.1")
}

fn skip_without(programs: &[&str]) -> bool {
    for program in programs {
        if !have(program) {
            eprintln!("skipped: {program} is not installed");
            return true;
        }
    }
    false
}

/// A TOML frontend `name` in `mode` on a plain `accept_proxy` bind, to backend `backend`.
fn proxied_frontend(name: &str, mode: &str, backend: &str) -> String {
    format!(
        "[[frontend]]\nname = \"{name}\"\nmode = \"{mode}\"\n\
         bind = [{{ address = \"127.0.0.1:0\", accept_proxy = true }}]\n\
         default_backend = \"{backend}\"\n\n"
    )
}

/// A TOML backend `name` in `mode` with one server at `address`, `extra` added to it.
fn backend(name: &str, mode: &str, address: &str, extra: &str) -> String {
    format!(
        "[[backend]]\nname = \"{name}\"\nmode = \"{mode}\"\n\
         servers = [{{ name = \"s\", address = \"{address}\"{extra} }}]\n\n"
    )
}

/// hitch in front of a tern bind at `backend_port`, terminating TLS on `port`.
fn hitch(dir: &std::path::Path, tag: &str, cert: &str, port: u16, backend_port: u16) -> Other {
    let ocsp = dir.join(format!("ocsp-{tag}"));
    std::fs::create_dir_all(&ocsp).unwrap();
    // hitch refuses to run its workers as root.
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"));
    let user = if root { "user = \"nobody\"\n" } else { "" };
    let cfg = format!(
        "{user}frontend = \"[127.0.0.1]:{port}\"\nbackend = \"[127.0.0.1]:{backend_port}\"\n\
         pem-file = \"{cert}\"\nwrite-proxy-v2 = on\nalpn-protos = \"http/1.1\"\n\
         daemon = off\nworkers = 1\nocsp-dir = \"{}\"\n",
        ocsp.display()
    );
    let path = dir.join(format!("hitch-{tag}.conf"));
    std::fs::write(&path, cfg).unwrap();
    let arg = format!("--config={}", path.display());
    Other::start(dir, "hitch", &[&arg], &[port])
}

#[test]
fn hitch_sends_proxy_v2_with_its_tlvs_into_tern_http_and_tcp() {
    if skip_without(&["hitch", "curl"]) {
        return;
    }
    let dir = temp_dir("interop-hitch");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let (app, onward) = (
        Term::start("app"),
        Term::start_with("onward", &["--accept-proxy"]),
    );
    // hitch's TLVs read by fc_pp_tlv: in a header (HTTP), passed on in a TLV of tern's (TCP).
    let web = proxied_frontend("web", "http", "app").replace(
        "default_backend",
        "http_request = [{ action = \"set-header\", name = \"X-Hitch\", \
         value = \"%[fc_pp_tlv(SSL_VERSION)] %[fc_pp_tlv(AUTHORITY)] %[fc_pp_tlv(ALPN)]\" }]\n\
         default_backend",
    );
    let toml = format!(
        "{}{}{}{}",
        web,
        proxied_frontend("raw", "tcp", "onward"),
        backend("app", "http", &app.addr.to_string(), ""),
        backend(
            "onward",
            "tcp",
            &onward.addr.to_string(),
            ", proxy_protocol = \"v2\", proxy_v2_tlvs = [{ id = 0xE0, format = \"%[fc_pp_tlv(SSL_VERSION)]\" }]"
        ),
    );
    let tern = Tern::run_with(dir.clone(), &toml, &["--log-level", "debug"]);
    let (web, raw) = (tern.bind_of("web").port(), tern.bind_of("raw").port());
    let (h1, h2) = (free_port(), free_port());
    let _hitch_web = hitch(&dir, "web", &cert, h1, web);
    let _hitch_raw = hitch(&dir, "raw", &cert, h2, raw);

    // HTTP mode: the client behind hitch is the request's X-Forwarded-For.
    let url = format!("https://localhost:{h1}/?h=1");
    let got = curl(&url, &["--resolve", &resolve(h1)]);
    assert!(got.contains("x-forwarded-for: 127.0.0.3"), "{got}");
    assert!(got.contains("x-hitch: tlsv1.3 localhost http/1.1"), "{got}");
    // TCP mode: tern passes the carried address on in its own header.
    let url = format!("https://localhost:{h2}/?h=1");
    let got = curl(&url, &["--resolve", &resolve(h2)]);
    assert!(got.contains("x-proxy-src: 127.0.0.3:"), "{got}");
    assert!(got.contains("x-proxy-tlvs: 0xe0=tlsv1.3"), "{got}");
    // hitch's TLVs reached tern's parser whole: ALPN, the SNI, the SSL flag.
    let log = tern.proc.stderr_text();
    // (hitch's own connections, such as those of the readiness probes, come from 127.0.0.1.)
    let received: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("PROXY header received") && l.contains("client=127.0.0.3:"))
        .collect();
    assert_eq!(received.len(), 2, "{log}");
    for line in received {
        assert!(line.contains("alpn=Some(\"http/1.1\")"), "{line}");
        assert!(line.contains("authority=Some(\"localhost\")"), "{line}");
        assert!(line.contains("ssl=true"), "{line}");
    }
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
    assert_eq!(c.get("frontend raw", "proxy_errors"), 0);
    assert_eq!(c.get("frontend raw", "tcp_sessions"), 1);
}

/// A TOML frontend `name` in `mode` terminating TLS with `cert`, to backend `backend`.
fn tls_frontend(name: &str, mode: &str, cert: &str, backend: &str) -> String {
    format!(
        "[[frontend]]\nname = \"{name}\"\nmode = \"{mode}\"\nbind = [\"127.0.0.1:0\"]\n\
         tls = {{ certs = [\"{cert}\"] }}\ndefault_backend = \"{backend}\"\n\n"
    )
}

#[test]
fn tern_tells_its_servers_the_clients_tls_in_proxy_v2_tlvs() {
    if skip_without(&["curl"]) {
        return;
    }
    let dir = temp_dir("interop-tlvs");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let term = Term::start_with("t", &["--accept-proxy"]);
    let server = term.addr.to_string();
    let v2 = ", proxy_protocol = \"v2\"";
    let toml = format!(
        "{}{}{}{}",
        tls_frontend("web", "http", &cert, "app"),
        tls_frontend("raw", "tcp", &cert, "pass"),
        backend("app", "http", &server, v2),
        backend("pass", "tcp", &server, v2),
    );
    let tern = Tern::run_in(dir, &toml);
    let (web, raw) = (tern.bind_of("web").port(), tern.bind_of("raw").port());
    let tlvs = |port: u16, extra: &[&str]| {
        let url = format!("https://localhost:{port}/");
        let resolved = resolve(port);
        let mut args = vec!["--resolve", resolved.as_str()];
        args.extend_from_slice(extra);
        let got = curl(&url, &args);
        let line = got
            .lines()
            .find(|l| l.starts_with("x-proxy-tlvs:"))
            .unwrap_or_else(|| panic!("no TLVs: {got}"))
            .to_owned();
        assert!(got.contains("x-proxy-src: 127.0.0.3:"), "{got}");
        line
    };
    let ssl = "authority=localhost ssl=0x01 verify=1 version=tlsv1.3 cipher=tls_";
    // HTTP/1.1 and HTTP/2 over TLS: the ALPN protocol, the SNI, the SSL facts.
    let h1 = tlvs(web, &["--http1.1"]);
    assert!(h1.contains(&format!("alpn=http/1.1 {ssl}")), "{h1}");
    let h2 = tlvs(web, &["--http2"]);
    assert!(h2.contains(&format!("alpn=h2 {ssl}")), "{h2}");
    // TLS 1.2 in TCP mode, which offers no ALPN (so there is no ALPN TLV): OpenSSL's name of a
    // TLS 1.2 suite.
    let tcp = tlvs(raw, &["--tlsv1.2", "--tls-max", "1.2"]);
    assert!(
        tcp.starts_with(
            "x-proxy-tlvs: authority=localhost ssl=0x01 verify=1 version=tlsv1.2 cipher=ecdhe-ecdsa-"
        ),
        "{tcp}"
    );
    tern.stop();
}

#[test]
fn tern_sends_proxy_v2_into_haproxy_which_reads_the_client_and_the_authority() {
    if skip_without(&["haproxy", "curl"]) {
        return;
    }
    let dir = temp_dir("interop-haproxy");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let term = Term::start("t");
    let (tcp_in, http_in) = (free_port(), free_port());
    let cfg = format!(
        "global\n  log stdout format raw local0\n\
         defaults\n  log global\n  timeout client 10s\n  timeout server 10s\n  timeout connect 2s\n\
         listen tcpin\n  mode tcp\n  bind 127.0.0.1:{tcp_in} accept-proxy\n\
         \x20 log-format \"tcpin src=%ci authority=%[fc_pp_authority] bytes=%B\"\n\
         \x20 server t {}\n\
         listen httpin\n  mode http\n  bind 127.0.0.1:{http_in} accept-proxy\n  option forwardfor\n\
         \x20 http-request set-header X-PP-Authority %[fc_pp_authority]\n  server t {}\n",
        term.addr, term.addr
    );
    let haproxy = Other::haproxy(&dir, &cfg, &[tcp_in, http_in]);
    let v2 = ", proxy_protocol = \"v2\"";
    let toml = format!(
        "{}{}{}{}",
        tls_frontend("web", "http", &cert, "hap_http"),
        tls_frontend("raw", "tcp", &cert, "hap_tcp"),
        backend("hap_http", "http", &format!("127.0.0.1:{http_in}"), v2),
        backend("hap_tcp", "tcp", &format!("127.0.0.1:{tcp_in}"), v2),
    );
    let tern = Tern::run_in(dir, &toml);
    let (web, raw) = (tern.bind_of("web").port(), tern.bind_of("raw").port());

    // HTTP: HAProxy's X-Forwarded-For is the client tern's header named, and the authority
    // TLV is the SNI.
    let got = curl(
        &format!("https://localhost:{web}/?h=1"),
        &["--resolve", &resolve(web)],
    );
    assert!(got.contains("x-pp-authority: localhost"), "{got}");
    assert!(got.contains("x-forwarded-for: 127.0.0.3"), "{got}");
    // TCP: HAProxy's log line of the session says the same.
    let got = curl(
        &format!("https://localhost:{raw}/?h=1"),
        &["--http1.1", "--resolve", &resolve(raw)],
    );
    assert!(got.starts_with("http/1.1 200"), "{got}");
    let log = haproxy.wait_log("tcpin src=", WAIT);
    assert!(
        log.contains("tcpin src=127.0.0.3 authority=localhost bytes="),
        "{log}"
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend raw", "tcp_sessions"), 1);
}

#[test]
fn tern_seals_its_proxy_v2_headers_with_a_crc32c_that_haproxy_verifies() {
    if skip_without(&["haproxy", "curl"]) {
        return;
    }
    let dir = temp_dir("interop-crc-out");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let term = Term::start("t");
    let (tcp_in, http_in) = (free_port(), free_port());
    let cfg = format!(
        "global\n  log stdout format raw local0\n\
         defaults\n  log global\n  timeout client 10s\n  timeout server 10s\n  timeout connect 2s\n\
         listen tcpin\n  mode tcp\n  bind 127.0.0.1:{tcp_in} accept-proxy\n\
         \x20 log-format \"tcpin src=%ci authority=%[fc_pp_authority]\"\n  server t {}\n\
         listen httpin\n  mode http\n  bind 127.0.0.1:{http_in} accept-proxy\n  option forwardfor\n\
         \x20 server t {}\n",
        term.addr, term.addr
    );
    let haproxy = Other::haproxy(&dir, &cfg, &[tcp_in, http_in]);
    // HAProxy does verify the checksum: a wrong one closes the connection unanswered.
    let mut bad = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x13".to_vec();
    bad.extend_from_slice(&[192, 0, 2, 7, 127, 0, 0, 1, 0x10, 0x00, 0x00, 0x50]);
    bad.extend_from_slice(&[0x03, 0x00, 0x04, 0xde, 0xad, 0xbe, 0xef]);
    bad.extend_from_slice(b"GET /?h=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut s = TcpStream::connect(("127.0.0.1", http_in)).unwrap();
    s.write_all(&bad).unwrap();
    let got = read_until_closed(&mut s, WAIT);
    assert!(got.bytes.is_empty(), "HAProxy answered {:?}", got.text());

    let crc = ", proxy_protocol = \"v2\", proxy_v2_crc32c = true";
    let toml = format!(
        "{}{}{}{}",
        tls_frontend("web", "http", &cert, "hap_http"),
        tls_frontend("raw", "tcp", &cert, "hap_tcp"),
        backend("hap_http", "http", &format!("127.0.0.1:{http_in}"), crc),
        backend("hap_tcp", "tcp", &format!("127.0.0.1:{tcp_in}"), crc),
    );
    let tern = Tern::run_in(dir, &toml);
    let (web, raw) = (tern.bind_of("web").port(), tern.bind_of("raw").port());
    // HTTP mode: HAProxy took tern's sealed header, TLS TLVs and all, and the client in it.
    let got = curl(
        &format!("https://localhost:{web}/?h=1"),
        &["--resolve", &resolve(web)],
    );
    assert!(got.starts_with("http/2 200"), "{got}");
    assert!(got.contains("x-forwarded-for: 127.0.0.3"), "{got}");
    // TCP mode: the same, read from HAProxy's log line of the session.
    let got = curl(
        &format!("https://localhost:{raw}/?h=1"),
        &["--http1.1", "--resolve", &resolve(raw)],
    );
    assert!(got.starts_with("http/1.1 200"), "{got}");
    let log = haproxy.wait_log("tcpin src=127.0.0.3", WAIT);
    assert!(
        log.contains("tcpin src=127.0.0.3 authority=localhost"),
        "{log}"
    );
    let c = tern.stop();
    assert_eq!(c.get("frontend raw", "tcp_sessions"), 1);
}

#[test]
fn haproxys_crc32c_is_verified_and_a_wrong_one_refused_and_counted() {
    if skip_without(&["haproxy", "curl"]) {
        return;
    }
    let dir = temp_dir("interop-crc");
    let term = Term::start("t");
    let toml = format!(
        "{}{}",
        proxied_frontend("web", "http", "app"),
        backend("app", "http", &term.addr.to_string(), "")
    );
    let tern = Tern::run_with(dir.clone(), &toml, &["--log-level", "debug"]);
    let port = free_port();
    let cfg = format!(
        "defaults\n  mode tcp\n  timeout client 10s\n  timeout server 10s\n  timeout connect 2s\n\
         listen crc\n  bind 127.0.0.1:{port}\n  server t {} send-proxy-v2 proxy-v2-options crc32c\n",
        tern.addr()
    );
    let _haproxy = Other::haproxy(&dir, &cfg, &[port]);
    let got = curl(&format!("http://127.0.0.1:{port}/?h=1"), &[]);
    assert!(got.contains("x-forwarded-for: 127.0.0.3"), "{got}");
    let log = tern.proc.stderr_text();
    assert!(
        log.lines()
            .any(|l| l.contains("PROXY header received") && l.contains("crc32c=true")),
        "{log}"
    );
    // The same kind of header with a checksum that does not match: closed, nothing answered.
    let mut bad = b"\r\n\r\n\0\r\nQUIT\n\x21\x11\x00\x13".to_vec();
    bad.extend_from_slice(&[192, 0, 2, 7, 127, 0, 0, 1, 0x10, 0x00, 0x00, 0x50]);
    bad.extend_from_slice(&[0x03, 0x00, 0x04, 0xde, 0xad, 0xbe, 0xef]);
    bad.extend_from_slice(b"GET /?h=1 HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut s = TcpStream::connect(tern.addr()).unwrap();
    s.write_all(&bad).unwrap();
    let got = read_until_closed(&mut s, WAIT);
    assert!(got.bytes.is_empty(), "answered {:?}", got.text());
    let c = tern.stop();
    assert_eq!(c.get("frontend web", "proxy_errors"), 1);
    assert_eq!(c.get("frontend web", "requests"), 1);
}

#[test]
fn stunnel_as_a_tls_client_of_tern_and_as_a_proxy_v1_sender_in_front() {
    if skip_without(&["stunnel", "curl"]) {
        return;
    }
    let dir = temp_dir("interop-stunnel");
    let cert = write_cert(&dir, "c", tern_tls::KeyKind::EcdsaP256);
    let term = Term::start("t");
    let server = term.addr.to_string();
    let toml = format!(
        "{}{}{}",
        tls_frontend("raw", "tcp", &cert, "pass"),
        proxied_frontend("web", "http", "app"),
        backend("pass", "tcp", &server, "")
    ) + &backend("app", "http", &server, "");
    let tern = Tern::run_in(dir.clone(), &toml);
    let (raw, web) = (tern.bind_of("raw").port(), tern.bind_of("web").port());
    let (client_port, server_port) = (free_port(), free_port());
    let cfg = format!(
        "foreground = yes\npid =\n\n\
         [to-tern]\nclient = yes\naccept = 127.0.0.1:{client_port}\nconnect = 127.0.0.1:{raw}\n\
         sni = localhost\nverifyChain = no\n\n\
         [in-front]\naccept = 127.0.0.1:{server_port}\nconnect = 127.0.0.1:{web}\n\
         cert = {cert}\nprotocol = proxy\n"
    );
    let path = dir.join("stunnel.conf");
    std::fs::write(&path, cfg).unwrap();
    let _stunnel = Other::start(
        &dir,
        "stunnel",
        &[path.to_str().unwrap()],
        &[client_port, server_port],
    );
    // stunnel's TLS into tern's TCP mode, plain from tern to the server.
    let got = curl(&format!("http://127.0.0.1:{client_port}/?h=1"), &[]);
    assert!(got.starts_with("http/1.1 200"), "{got}");
    // stunnel terminating TLS in front, its PROXY v1 line into tern.
    let got = curl(&format!("https://127.0.0.1:{server_port}/?h=1"), &[]);
    assert!(got.contains("x-forwarded-for: 127.0.0.3"), "{got}");
    let c = tern.stop();
    // stunnel's client opens its TLS connection to tern as soon as a client connects, so the
    // readiness probes are sessions too.
    assert!(c.get("frontend raw", "tcp_sessions") >= 1);
    assert_eq!(c.get("frontend web", "proxy_errors"), 0);
}
