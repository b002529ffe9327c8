//! The OpenSSL engine (`tls.engine = "openssl"`) through the real binary, driven by Debian's
//! `openssl s_client` and curl: static RSA (`AES128-SHA`), DHE-RSA on RFC 7919 ffdhe2048 (or
//! the bind's `dh_param_file`), AES-CBC with ECDHE, TLS 1.0 with a client at security level 0,
//! each request reaching the backend; refused families stay refused even from `ALL`, `tern
//! check` refuses RC4 and NULL naming the reason, and a rustls bind beside it keeps its policy.
//! Skipped (with a message) where openssl or curl is not installed.

// The engine exists in the default build only (`openssl-engine`).
#![cfg(feature = "openssl-engine")]
#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::time::Duration;

use tern_tls::KeyKind;

/// The first bytes of RFC 7919 ffdhe2048's prime after its 64 leading one bits, as
/// `s_client -msg` prints them in the ServerKeyExchange.
const FFDHE2048_P: &str = "ad f8 54 58 a2 bb 4a 9a";

const REQUEST: &[u8] = b"GET /ossl HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// The bytes `s_client -msg` printed, as one line of hex pairs (its dump wraps every 16).
fn hex_dump(out: &str) -> String {
    let pairs: Vec<&str> = out
        .split_whitespace()
        .filter(|w| w.len() == 2 && w.bytes().all(|b| b.is_ascii_hexdigit()))
        .collect();
    pairs.join(" ")
}

fn tools() -> bool {
    if have("openssl") {
        return true;
    }
    println!("skipped: openssl not installed");
    false
}

/// tern with an RSA certificate, one OpenSSL bind with `policy` (raw TOML keys of its `tls`
/// table) in front of one term backend.
fn tern_openssl(tag: &str, policy: &str) -> (Tern, Term) {
    let term = Term::start(&format!("{tag}-be"));
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let bind = format!("{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", {policy} }} }}");
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    let log = "[access_log]\ntarget = \"access.log\"\nformat = \"json\"\n";
    (Tern::run_in(dir, &format!("{}\n{log}", cfg.toml())), term)
}

/// The `tls` objects of the access log lines tern wrote in `dir` (read after it stopped).
fn logged_tls(dir: &std::path::Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("access.log")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["tls"].clone())
        .collect()
}

/// `s_client` with `args`, sending [`REQUEST`]; asserts the handshake and the backend's 200.
fn request_with(tern: &Tern, args: &[&str]) -> String {
    let s = s_client(tern.addr(), Some("localhost"), args, Some(REQUEST));
    assert!(s.ok, "s_client {args:?} failed:\n{}", s.out);
    assert!(
        s.out.contains("HTTP/1.1 200"),
        "no 200 through tern:\n{}",
        s.out
    );
    s.out
}

#[test]
fn static_rsa_dhe_and_cbc_suites_reach_the_backend() {
    if !tools() {
        return;
    }
    let (tern, _term) = tern_openssl(
        "ossl-suites",
        "ciphers = [\"ECDHE-RSA-AES128-GCM-SHA256\", \"AES128-SHA\", \
         \"DHE-RSA-AES128-GCM-SHA256\", \"ECDHE-RSA-AES128-SHA256\"]",
    );
    let out = request_with(&tern, &["-tls1_2", "-cipher", "AES128-SHA"]);
    assert!(out.contains("Cipher is AES128-SHA"), "{out}");
    // DHE on ffdhe2048: the prime is the group's.
    let out = request_with(
        &tern,
        &["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256", "-msg"],
    );
    assert!(out.contains("Cipher is DHE-RSA-AES128-GCM-SHA256"), "{out}");
    assert!(out.contains("Server Temp Key: DH, 2048 bits"), "{out}");
    assert!(
        hex_dump(&out).contains(FFDHE2048_P),
        "not ffdhe2048:\n{out}"
    );
    let out = request_with(&tern, &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"]);
    assert!(out.contains("Cipher is ECDHE-RSA-AES128-SHA256"), "{out}");
    // TLS 1.3 stays on with OpenSSL's default suites; ALPN answers http/1.1 when it is the
    // client's only protocol (h2 first otherwise: tls_openssl_parity.rs).
    let out = request_with(&tern, &["-alpn", "http/1.1"]);
    assert!(out.contains("New, TLSv1.3"), "{out}");
    assert!(out.contains("ALPN protocol: http/1.1"), "{out}");
    // A suite the bind does not list is refused, and counted.
    let s = s_client(
        tern.addr(),
        Some("localhost"),
        &["-tls1_2", "-cipher", "AES256-SHA"],
        None,
    );
    assert!(!s.ok, "AES256-SHA accepted:\n{}", s.out);
    let dir = tern.dir.clone();
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tls_full"), 4, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_failures"), 1, "{c:?}");
    // The access log names version and suite as on rustls binds (IANA names).
    let tls = logged_tls(&dir);
    let ciphers: Vec<&str> = tls.iter().filter_map(|t| t["cipher"].as_str()).collect();
    assert!(
        ciphers.starts_with(&[
            "TLS_RSA_WITH_AES_128_CBC_SHA",
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        ]),
        "{tls:?}"
    );
    assert_eq!(tls[0]["version"], "TLSv1.2", "{tls:?}");
    assert_eq!(tls[0]["sni"], "localhost", "{tls:?}");
}

#[test]
fn tls10_needs_a_bind_that_allows_it() {
    if !tools() {
        return;
    }
    let (tern, _term) = tern_openssl("ossl-tls10", "min_version = \"1.0\"");
    let out = request_with(&tern, &["-tls1", "-cipher", "AES128-SHA:@SECLEVEL=0"]);
    assert!(out.contains("Protocol  : TLSv1\n"), "{out}");
    let out = request_with(&tern, &["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"]);
    assert!(out.contains("Protocol  : TLSv1.1"), "{out}");
    tern.stop_clean();
    // The same engine at its default minimum (1.2) refuses a TLS 1.0 client.
    let (tern, _term) = tern_openssl("ossl-tls12", "max_version = \"1.3\"");
    let s = s_client(
        tern.addr(),
        Some("localhost"),
        &["-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"],
        None,
    );
    assert!(!s.ok, "TLS 1.0 accepted at min_version 1.2:\n{}", s.out);
    tern.stop_clean();
}

#[test]
fn refused_families_stay_refused_even_from_all() {
    if !tools() {
        return;
    }
    let (tern, _term) = tern_openssl(
        "ossl-all",
        "min_version = \"1.0\", ciphers = [\"ALL:COMPLEMENTOFALL\"]",
    );
    for suite in ["NULL-SHA", "ADH-AES128-SHA", "DES-CBC3-SHA", "NULL-SHA256"] {
        let cipher = format!("{suite}:@SECLEVEL=0");
        let s = s_client(
            tern.addr(),
            Some("localhost"),
            &["-tls1_2", "-cipher", &cipher],
            None,
        );
        assert!(!s.ok, "{suite} negotiated:\n{}", s.out);
    }
    request_with(&tern, &["-tls1_2", "-cipher", "AES128-SHA256"]);
    tern.stop_clean();
}

#[test]
fn curl_with_legacy_ciphers_and_sni_certificates() {
    if !tools() || !have("curl") {
        println!("skipped: curl not installed");
        return;
    }
    let term = Term::start("ossl-curl-be");
    let dir = temp_dir("ossl-curl");
    let first = write_cert(&dir, "first", KeyKind::EcdsaP256);
    let other = tern_tls::self_signed(&["other.test".to_owned()], KeyKind::Rsa2048).unwrap();
    let other_path = dir.join("other.pem");
    std::fs::write(&other_path, format!("{}{}", other.cert_pem, other.key_pem)).unwrap();
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{first:?}, {:?}], engine = \"openssl\", \
         ciphers = [\"AES128-SHA\", \"ECDHE-ECDSA-AES128-GCM-SHA256\"] }} }}",
        other_path.to_str().unwrap()
    );
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let port = tern.addr().port();
    // other.test is served with the RSA certificate, so static RSA works for it.
    let out = std::process::Command::new("curl")
        .args([
            "-sk",
            "--max-time",
            "10",
            "--tls-max",
            "1.2",
            "--ciphers",
            "AES128-SHA",
        ])
        .args(["--resolve", &format!("other.test:{port}:127.0.0.1")])
        .args(["-w", "%{http_code}", "-o", "/dev/null"])
        .arg(format!("https://other.test:{port}/"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200", "{out:?}");
    // Without a name, the first (ECDSA) certificate: ECDHE-ECDSA.
    let s = s_client(tern.addr(), None, &["-tls1_2"], Some(REQUEST));
    assert!(
        s.out.contains("Cipher is ECDHE-ECDSA-AES128-GCM-SHA256"),
        "{}",
        s.out
    );
    assert!(s.out.contains("HTTP/1.1 200"), "{}", s.out);
    tern.stop_clean();
}

#[test]
fn dh_param_file_is_the_group_used_and_weak_ones_are_refused() {
    if !tools() {
        return;
    }
    let dir = temp_dir("ossl-dh");
    let openssl = |args: &[&str]| {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        out.stdout
    };
    let ffdhe3072 = openssl(&[
        "genpkey",
        "-genparam",
        "-algorithm",
        "DH",
        "-pkeyopt",
        "group:ffdhe3072",
    ]);
    std::fs::write(dir.join("dh3072.pem"), ffdhe3072).unwrap();
    let (tern, _term) = tern_openssl(
        "ossl-dh-run",
        &format!(
            "dh_param_file = {:?}",
            dir.join("dh3072.pem").to_str().unwrap()
        ),
    );
    let out = request_with(&tern, &["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"]);
    assert!(out.contains("Server Temp Key: DH, 3072 bits"), "{out}");
    tern.stop_clean();
    // 1024-bit parameters (DSA-style, quick to make): refused at check time, naming the file.
    let weak = openssl(&["dhparam", "-dsaparam", "1024"]);
    std::fs::write(dir.join("dh1024.pem"), weak).unwrap();
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let text = Config::new()
        .frontend(&format!(
            "tls = {{ certs = [{cert:?}], engine = \"openssl\", dh_param_file = \"dh1024.pem\" }}"
        ))
        .toml();
    let path = dir.join("tern.toml");
    std::fs::write(&path, text).unwrap();
    let f = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(f.code, Some(2), "{f:?}");
    assert!(
        f.stderr.contains("dh1024.pem: DH prime of 1024 bits"),
        "{}",
        f.stderr
    );
}

#[test]
fn check_refuses_rc4_and_null_and_warns_below_tls12() {
    let dir = temp_dir("ossl-check");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let write = |name: &str, tls: &str| {
        let text = Config::new()
            .frontend(&format!(
                "tls = {{ certs = [{cert:?}], engine = \"openssl\", {tls} }}"
            ))
            .toml();
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let limit = Duration::from_secs(20);
    let rc4 = write("rc4.toml", "ciphers = [\"AES128-SHA:RC4-SHA\", \"eNULL\"]");
    let f = tern_finish(&["check", "-c", &rc4], limit);
    assert_eq!(f.code, Some(2), "{f:?}");
    assert!(
        f.stderr.contains(
            "frontend[0].tls.ciphers[0]: `RC4-SHA`: RC4 is prohibited in TLS by RFC 7465"
        ),
        "{}",
        f.stderr
    );
    assert!(
        f.stderr.contains("`eNULL`: NULL suites do not encrypt"),
        "{}",
        f.stderr
    );
    let old = write("old.toml", "min_version = \"1.0\"");
    let f = tern_finish(&["check", "-c", &old], limit);
    assert_eq!(f.code, Some(0), "{f:?}");
    assert!(
        f.stderr.contains("TLS on the OpenSSL engine"),
        "{}",
        f.stderr
    );
    assert!(
        f.stderr.contains("accepts TLS 1.0 (below 1.2"),
        "{}",
        f.stderr
    );
}

#[test]
fn a_rustls_bind_beside_keeps_its_policy() {
    if !tools() {
        return;
    }
    let term = Term::start("ossl-beside-be");
    let dir = temp_dir("ossl-beside");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let legacy = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [\"AES128-SHA\"] }} }}"
    );
    let modern = format!("{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}] }} }}");
    let cfg = Config::new().terms(&[&term]).binds(&[&legacy, &modern]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let rustls = tern.binds[1].1;
    let s = s_client(
        rustls,
        Some("localhost"),
        &["-tls1_2", "-cipher", "AES128-SHA"],
        None,
    );
    assert!(!s.ok, "the rustls bind negotiated AES128-SHA:\n{}", s.out);
    // Its ECDHE AEAD suites and ALPN as before (a request with -ign_eof: s_client prints its
    // summary before it can see the end of its input).
    let s = s_client(
        rustls,
        Some("localhost"),
        &["-tls1_2", "-alpn", "http/1.1"],
        Some(REQUEST),
    );
    assert!(s.out.contains("Cipher is ECDHE-RSA-"), "{}", s.out);
    assert!(s.out.contains("ALPN protocol: http/1.1"), "{}", s.out);
    assert!(s.out.contains("HTTP/1.1 200"), "{}", s.out);
    request_with(&tern, &["-tls1_2", "-cipher", "AES128-SHA"]);
    tern.stop_clean();
}

/// A HAProxy configuration with legacy ciphers and TLS 1.0, as seed 000's: `tern convert`
/// writes the OpenSSL engine, `tern check` says so, and `tern run` serves it as written.
#[test]
fn haproxy_cfg_with_legacy_ciphers_runs_as_written() {
    if !tools() {
        return;
    }
    let term = Term::start("ossl-cfg-be");
    let dir = temp_dir("ossl-cfg");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let cfg = format!(
        "global\n  ssl-default-bind-ciphers AES128-SHA:DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-SHA\n  \
         ssl-default-bind-options ssl-min-ver TLSv1.0\n\
         defaults\n  mode http\n  timeout client 10s\n  timeout server 10s\n  timeout connect 5s\n\
         frontend legacy\n  bind 127.0.0.1:0 ssl crt {cert}\n  default_backend app\n\
         backend app\n  server s1 {}\n",
        term.addr
    );
    let path = dir.join("haproxy.cfg");
    std::fs::write(&path, &cfg).unwrap();
    let path = path.to_str().unwrap();
    let limit = Duration::from_secs(20);
    let converted = tern_finish(&["convert", path], limit);
    assert_eq!(converted.code, Some(0), "{converted:?}");
    assert!(
        converted.stdout.contains("engine = \"openssl\""),
        "{}",
        converted.stdout
    );
    let checked = tern_finish(&["check", "-c", path], limit);
    assert!(
        checked.stderr.contains("TLS on the OpenSSL engine"),
        "{checked:?}"
    );
    assert!(checked.stderr.contains("accepts TLS 1.0"), "{checked:?}");
    let tern = Tern::run_file(&dir, "haproxy.cfg", &cfg);
    let stderr = tern.proc.stderr_text();
    assert!(stderr.contains("accepts TLS 1.0"), "{stderr}");
    let out = request_with(&tern, &["-tls1", "-cipher", "AES128-SHA:@SECLEVEL=0"]);
    assert!(out.contains("Protocol  : TLSv1\n"), "{out}");
    let out = request_with(&tern, &["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"]);
    assert!(out.contains("Cipher is DHE-RSA-AES128-GCM-SHA256"), "{out}");
    tern.stop_clean();
}

/// A reload (SIGHUP: a new generation) rebuilds the OpenSSL engine from the file: a changed
/// `ciphers` applies to the next handshakes.
#[test]
fn a_reload_applies_new_ciphers() {
    if !tools() {
        return;
    }
    let (mut tern, _term) = tern_openssl("ossl-reload", "ciphers = [\"AES128-SHA\"]");
    request_with(&tern, &["-tls1_2", "-cipher", "AES128-SHA"]);
    let path = tern.dir.join("tern.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"AES128-SHA\"", "\"AES256-SHA\"")).unwrap();
    tern.proc.signal("HUP");
    tern.proc.wait_line("reloaded:");
    let addr = tern.proc.listening().last().unwrap().1;
    let s = s_client(
        addr,
        Some("localhost"),
        &["-tls1_2", "-cipher", "AES256-SHA"],
        Some(REQUEST),
    );
    assert!(s.out.contains("Cipher is AES256-SHA"), "{}", s.out);
    assert!(s.out.contains("HTTP/1.1 200"), "{}", s.out);
    let s = s_client(
        addr,
        Some("localhost"),
        &["-tls1_2", "-cipher", "AES128-SHA"],
        None,
    );
    assert!(
        !s.ok,
        "AES128-SHA still accepted after the reload:\n{}",
        s.out
    );
    tern.stop_clean();
}

/// TCP mode on an OpenSSL bind (stunnel's job for a legacy client): the decrypted bytes are
/// relayed whole to the server, here an HTTP one.
#[test]
fn tcp_mode_relays_a_legacy_client() {
    if !tools() {
        return;
    }
    let term = Term::start("ossl-tcp-be");
    let dir = temp_dir("ossl-tcp");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let toml = format!(
        "[global]\nworkers = 1\n\n[[frontend]]\nname = \"web\"\nmode = \"tcp\"\n\
         bind = [ {{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [\"AES128-SHA256\"] }} }} ]\ndefault_backend = \"app\"\n\n\
         [[backend]]\nname = \"app\"\nmode = \"tcp\"\nservers = [ {{ name = \"s1\", address = \"{}\" }} ]\n",
        term.addr
    );
    let tern = Tern::run_in(dir, &toml);
    let out = request_with(&tern, &["-tls1_2", "-cipher", "AES128-SHA256"]);
    assert!(out.contains("Cipher is AES128-SHA256"), "{out}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "tcp_sessions"), 1, "{c:?}");
}

/// Bad input on an OpenSSL bind is closed and counted by reason, as on rustls binds: plain
/// HTTP, a silent client (the handshake timeout), no shared suite; nothing panics.
#[test]
fn bad_clients_are_closed_and_counted_by_reason() {
    if !tools() {
        return;
    }
    let term = Term::start("ossl-bad-be");
    let dir = temp_dir("ossl-bad");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [\"AES128-SHA\"], max_version = \"1.2\" }} }}"
    );
    let cfg = Config::new()
        .terms(&[&term])
        .binds(&[&bind])
        .frontend("timeouts = { handshake = \"300ms\" }");
    let tern = Tern::run_in(dir, &cfg.toml());
    let wait = Duration::from_secs(5);
    let raw = raw_exchange(tern.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n", wait);
    assert!(raw.closed);
    assert!(!raw.text().contains("HTTP/1.1"), "{}", raw.text());
    let mut silent = std::net::TcpStream::connect(tern.addr()).unwrap();
    assert!(read_until_closed(&mut silent, wait).closed);
    let s = s_client(
        tern.addr(),
        Some("localhost"),
        &["-cipher", "AES256-SHA"],
        None,
    );
    assert!(!s.ok, "{}", s.out);
    let c = tern.stop_clean();
    let tls = |k: &str| c.get("tls web", k);
    assert_eq!(tls("fail_protocol"), 1, "{c:?}");
    assert_eq!(tls("fail_timeout"), 1, "{c:?}");
    assert_eq!(tls("fail_no_shared_cipher"), 1, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_failures"), 2, "{c:?}");
    assert_eq!(c.get("frontend web", "tls_timeouts"), 1, "{c:?}");
}
