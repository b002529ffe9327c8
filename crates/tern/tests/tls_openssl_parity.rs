//! What the OpenSSL engine (`tls.engine = "openssl"`) does as the rustls engine does, through
//! the real binary with clients written by others (curl, h2load, `openssl s_client`): HTTP/2
//! over ALPN `h2`, CBC suites included; an RSA and an ECDSA certificate for the same names,
//! each served to the clients that need it; `groups` and `sigalgs`, and the handshake counters
//! by group, certificate type and suite; OCSP stapling; the client's TLS in the PROXY v2
//! header sent to servers; `show tls`. Skipped (with a message) where a tool is missing.

// The engine exists in the default build only (`openssl-engine`).
#![cfg(feature = "openssl-engine")]
#![allow(clippy::unwrap_used)]

mod support;
use support::tls_client::*;
use support::*;

use std::process::{Command, Output, Stdio};

use tern_tls::KeyKind;

fn tools(names: &[&str]) -> bool {
    match names.iter().find(|n| !have(n)) {
        None => true,
        Some(missing) => {
            println!("skipped: {missing} not installed");
            false
        }
    }
}

/// tern with an RSA certificate for `localhost`, one OpenSSL bind with `policy` (raw TOML keys
/// of its `tls` table) in front of one term backend.
fn tern_openssl(tag: &str, policy: &str) -> (Tern, Term) {
    let term = Term::start(&format!("{tag}-be"));
    let dir = temp_dir(tag);
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", {policy} }} }}"
    );
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    (Tern::run_in(dir, &cfg.toml()), term)
}

/// curl against `https://localhost:PORT/PATH` on tern's first bind, with `args`.
fn curl(tern: &Tern, path: &str, args: &[&str]) -> Output {
    let port = tern.addr().port();
    Command::new("curl")
        .args(["-sSk", "--max-time", "20"])
        .args(["--resolve", &format!("localhost:{port}:127.0.0.1")])
        .args(args)
        .arg(format!("https://localhost:{port}{path}"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// ALPN `h2` on an OpenSSL bind is HTTP/2, served by the code of rustls binds: the default
/// ALPN list offers it first, curl gets its bodies both ways over TLS 1.3 and over a TLS 1.2
/// CBC suite (served, as HAProxy and nginx do: RFC 9113 §9.2.2 allows it), h2load runs many
/// streams per connection, and the frontend counts HTTP/2 sessions.
#[test]
fn http2_is_served_on_openssl_binds() {
    if !tools(&["openssl", "curl", "h2load"]) {
        return;
    }
    let (tern, _term) = tern_openssl(
        "ossl-h2",
        "ciphers = [\"ECDHE-RSA-AES128-GCM-SHA256\", \"AES128-SHA\"]",
    );
    // The default ALPN is the rustls engine's: curl offers h2 and http/1.1, and gets h2.
    let out = curl(
        &tern,
        "/?s=1k",
        &["--http2", "-w", "%{http_version} %{http_code}"],
    );
    let body = text(&out.stdout);
    assert!(body.ends_with("2 200"), "{out:?}");
    assert_eq!(body.len(), 1024 + "2 200".len(), "{out:?}");
    // A request body over HTTP/2, echoed back by the term server.
    let out = curl(
        &tern,
        "/?e=1",
        &[
            "--http2",
            "--data-binary",
            "hello over h2",
            "-w",
            " %{http_version}",
        ],
    );
    assert!(text(&out.stdout).contains("hello over h2"), "{out:?}");
    assert!(text(&out.stdout).ends_with(" 2"), "{out:?}");
    // Static RSA with AES-CBC, still HTTP/2.
    let cbc = [
        "--http2",
        "--tls-max",
        "1.2",
        "--ciphers",
        "AES128-SHA",
        "-w",
        "%{http_version} %{http_code}",
        "-o",
        "/dev/null",
    ];
    let out = curl(&tern, "/", &cbc);
    assert_eq!(text(&out.stdout), "2 200", "{out:?}");
    let port = tern.addr().port();
    let out = Command::new("h2load")
        .args(["-n", "400", "-c", "2", "-m", "16"])
        .arg(format!("https://127.0.0.1:{port}/?s=1k"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report = text(&out.stdout);
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    assert!(report.contains("Application protocol: h2"), "{report}");
    assert!(
        report.contains("400 succeeded, 0 failed, 0 errored"),
        "{report}"
    );
    // HTTP/1.1 is still what a client offering only it gets.
    let out = curl(
        &tern,
        "/",
        &["--http1.1", "-w", "%{http_version}", "-o", "/dev/null"],
    );
    assert_eq!(text(&out.stdout), "1.1", "{out:?}");
    let c = tern.stop_clean();
    assert_eq!(c.get("frontend web", "h2_sessions"), 5, "{c:?}");
    assert_eq!(c.get("frontend web", "h2_errors"), 0, "{c:?}");
    assert_eq!(c.get("frontend web", "h2_streams"), 403, "{c:?}");
}

const REQUEST: &[u8] = b"GET /ossl HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

/// The size of the server's key as `s_client` reports it (`Server public key is N bit`).
fn server_key_bits(out: &str) -> &str {
    out.split("Server public key is ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("none")
}

/// tern with an ECDSA and an RSA certificate for the same names on one OpenSSL bind, in that
/// order, with `policy` (raw TOML keys of its `tls` table).
fn tern_dual(tag: &str, policy: &str) -> (Tern, Term) {
    let term = Term::start(&format!("{tag}-be"));
    let dir = temp_dir(tag);
    let ecdsa = write_cert(&dir, "site-ecdsa", KeyKind::EcdsaP256);
    let rsa = write_cert(&dir, "site-rsa", KeyKind::Rsa2048);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{ecdsa:?}, {rsa:?}], engine = \"openssl\", \
         {policy} }} }}"
    );
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    (Tern::run_in(dir, &cfg.toml()), term)
}

/// Two certificates for the same names, ECDSA and RSA: an ECDSA-capable client gets the ECDSA
/// one (TLS 1.3 and 1.2, with or without SNI), an RSA-only client the RSA one (RSA signature
/// algorithms only, or a static-RSA suite); each request reaches the backend.
#[test]
fn dual_rsa_and_ecdsa_certificates_serve_each_client_its_type() {
    if !tools(&["openssl"]) {
        return;
    }
    let (tern, _term) = tern_dual(
        "ossl-dual",
        "ciphers = [\"ECDHE-ECDSA-AES128-GCM-SHA256\", \"ECDHE-RSA-AES128-GCM-SHA256\", \
         \"AES128-SHA\"]",
    );
    let run = |sni: Option<&str>, args: &[&str]| {
        let s = s_client(tern.addr(), sni, args, Some(REQUEST));
        assert!(s.out.contains("HTTP/1.1 200"), "{args:?}:\n{}", s.out);
        s.out
    };
    for args in [&["-alpn", "http/1.1"][..], &["-tls1_2"]] {
        let out = run(Some("localhost"), args);
        assert_eq!(server_key_bits(&out), "256", "{args:?}:\n{out}");
    }
    let out = run(None, &["-tls1_2"]);
    assert!(
        out.contains("Cipher is ECDHE-ECDSA-AES128-GCM-SHA256"),
        "{out}"
    );
    for args in [
        &["-tls1_2", "-sigalgs", "RSA+SHA256"][..],
        &["-tls1_2", "-cipher", "AES128-SHA"],
        &["-sigalgs", "rsa_pss_rsae_sha256", "-alpn", "http/1.1"],
    ] {
        let out = run(Some("localhost"), args);
        assert_eq!(server_key_bits(&out), "2048", "{args:?}:\n{out}");
    }
    let out = run(None, &["-tls1_2", "-cipher", "AES128-SHA"]);
    assert_eq!(server_key_bits(&out), "2048", "{out}");
    let c = tern.stop_clean();
    assert_eq!(c.get("tls web", "cert_ecdsa"), 3, "{c:?}");
    assert_eq!(c.get("tls web", "cert_rsa"), 4, "{c:?}");
    assert_eq!(c.get("tls web", "cert_other"), 0, "{c:?}");
}

/// `groups` and `sigalgs` on an OpenSSL bind, with the rustls engine's names: the group and
/// the signature scheme are the listed ones, a client without a listed group is refused; and
/// the handshakes are counted by group, certificate type and suite under their names (legacy
/// suites by their IANA names, a static-RSA one as exchanging no key).
#[test]
fn groups_and_sigalgs_apply_and_handshakes_are_counted_by_name() {
    if !tools(&["openssl"]) {
        return;
    }
    let (tern, _term) = tern_openssl(
        "ossl-groups",
        "groups = [\"P-384\"], sigalgs = [\"rsa_pss_rsae_sha384\"], \
         ciphers = [\"ECDHE-RSA-AES128-GCM-SHA256\", \"AES128-SHA\", \
         \"DHE-RSA-AES128-GCM-SHA256\", \"ECDHE-RSA-AES128-SHA256\"]",
    );
    let run = |args: &[&str]| {
        let s = s_client(tern.addr(), Some("localhost"), args, Some(REQUEST));
        assert!(s.out.contains("HTTP/1.1 200"), "{args:?}:\n{}", s.out);
        s.out
    };
    for args in [
        &["-alpn", "http/1.1"][..],
        &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"],
        &["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"],
    ] {
        let out = run(args);
        assert!(
            out.contains("Server Temp Key: ECDH, secp384r1"),
            "{args:?}:\n{out}"
        );
        assert!(
            out.contains("Peer signing digest: SHA384"),
            "{args:?}:\n{out}"
        );
    }
    run(&["-tls1_2", "-cipher", "AES128-SHA"]);
    let out = run(&["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256"]);
    assert!(out.contains("Server Temp Key: DH, 2048 bits"), "{out}");
    let s = s_client(tern.addr(), Some("localhost"), &["-groups", "X25519"], None);
    assert!(!s.ok, "a client without P-384 was served:\n{}", s.out);
    let c = tern.stop_clean();
    let tls = |k: &str| c.get("tls web", k);
    let suites = |k: &str| c.get("tls_suites web", k);
    assert_eq!(tls("full_tls13"), 1, "{c:?}");
    assert_eq!(tls("full_tls12"), 4, "{c:?}");
    assert_eq!(tls("full_p384"), 3, "{c:?}");
    assert_eq!(tls("full_ffdhe2048"), 1, "{c:?}");
    assert_eq!(tls("full_none"), 1, "{c:?}");
    assert_eq!(tls("full_other"), 0, "{c:?}");
    assert_eq!(tls("cert_rsa"), 5, "{c:?}");
    assert_eq!(tls("fail_no_shared_cipher"), 1, "{c:?}");
    for suite in [
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_RSA_WITH_AES_128_CBC_SHA",
        "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
    ] {
        assert_eq!(suites(&format!("full_{suite}")), 1, "{suite}: {c:?}");
    }
    assert_eq!(suites("full_other"), 0, "{c:?}");
}

/// OCSP stapling on an OpenSSL bind, from `<certificate file>.ocsp` as on rustls binds: a
/// client that asks (`s_client -status`) gets the response of the certificate it is served,
/// here the ECDSA one's; the RSA certificate beside it has none, and its clients get none.
#[test]
fn ocsp_responses_are_stapled_per_certificate() {
    if !tools(&["openssl"]) {
        return;
    }
    let term = Term::start("ossl-ocsp-be");
    let dir = temp_dir("ossl-ocsp");
    let (ecdsa, rsa) = stapled_pair(&dir);
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{ecdsa:?}, {rsa:?}], engine = \"openssl\" }} }}"
    );
    let cfg = Config::new().terms(&[&term]).binds(&[&bind]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let s = s_client(tern.addr(), Some("localhost"), &["-status"], Some(REQUEST));
    assert_eq!(server_key_bits(&s.out), "256", "{}", s.out);
    assert!(
        s.out.contains("OCSP Response Status: successful"),
        "{}",
        s.out
    );
    assert!(s.out.contains("Cert Status: good"), "{}", s.out);
    assert!(s.out.contains("HTTP/1.1 200"), "{}", s.out);
    let s = s_client(
        tern.addr(),
        Some("localhost"),
        &[
            "-status",
            "-tls1_2",
            "-cipher",
            "ECDHE-RSA-AES128-GCM-SHA256",
        ],
        None,
    );
    assert_eq!(server_key_bits(&s.out), "2048", "{}", s.out);
    assert!(
        s.out.contains("OCSP response: no response sent"),
        "{}",
        s.out
    );
    // Without -status, nothing is stapled.
    let s = s_client(tern.addr(), Some("localhost"), &[], None);
    assert!(!s.out.contains("OCSP Response Status"), "{}", s.out);
    tern.stop_clean();
}

/// The client's TLS in the PROXY v2 header tern sends its servers, from an OpenSSL bind as from
/// a rustls one: ALPN, SNI and the SSL TLV with OpenSSL's version and suite names (a legacy
/// suite over HTTP/1.1, TLS 1.3 over HTTP/2), decoded by `tern term --accept-proxy`.
#[test]
fn proxy_v2_tells_servers_the_clients_tls() {
    if !tools(&["openssl", "curl"]) {
        return;
    }
    let term = Term::start_with("ossl-pp2-be", &["--accept-proxy"]);
    let dir = temp_dir("ossl-pp2");
    let cert = write_cert(&dir, "site", KeyKind::Rsa2048);
    let toml = format!(
        "[[frontend]]\nname = \"web\"\n\
         bind = [ {{ address = \"127.0.0.1:0\", tls = {{ certs = [{cert:?}], engine = \"openssl\", \
         ciphers = [\"ECDHE-RSA-AES128-GCM-SHA256\", \"AES128-SHA\"] }} }} ]\n\
         default_backend = \"app\"\n\n[[backend]]\nname = \"app\"\n\
         servers = [ {{ name = \"s1\", address = \"{}\", proxy_protocol = \"v2\" }} ]\n",
        term.addr
    );
    let tern = Tern::run_in(dir, &toml);
    let tlvs = |args: &[&str]| {
        let out = curl(
            &tern,
            "/",
            &[&["-D", "-", "-o", "/dev/null"][..], args].concat(),
        );
        let head = text(&out.stdout);
        head.lines()
            .find(|l| l.to_ascii_lowercase().starts_with("x-proxy-tlvs:"))
            .unwrap_or_else(|| panic!("no TLVs: {out:?}"))
            .to_ascii_lowercase()
    };
    let h1 = tlvs(&["--http1.1", "--tls-max", "1.2", "--ciphers", "AES128-SHA"]);
    assert!(
        h1.contains(
            "alpn=http/1.1 authority=localhost ssl=0x01 verify=1 version=tlsv1.2 cipher=aes128-sha"
        ),
        "{h1}"
    );
    let h2 = tlvs(&["--http2"]);
    assert!(
        h2.contains(
            "alpn=h2 authority=localhost ssl=0x01 verify=1 version=tlsv1.3 cipher=tls_aes_"
        ),
        "{h2}"
    );
    tern.stop_clean();
}

/// `show tls` lists an OpenSSL bind's certificates as loaded (both key types, the first the
/// default, the ECDSA one's OCSP response) and its tickets as OpenSSL's own key.
#[test]
fn show_tls_describes_openssl_binds() {
    if !tools(&["openssl"]) {
        return;
    }
    let term = Term::start("ossl-show-be");
    let dir = temp_dir("ossl-show");
    let (ecdsa, rsa) = stapled_pair(&dir);
    let socket = dir.join("tern.sock");
    let bind = format!(
        "{{ address = \"127.0.0.1:0\", tls = {{ certs = [{ecdsa:?}, {rsa:?}], engine = \"openssl\" }} }}"
    );
    let cfg = Config::new()
        .global(&format!(
            "\n[control]\nsocket = {:?}",
            socket.to_str().unwrap()
        ))
        .terms(&[&term])
        .binds(&[&bind]);
    let tern = Tern::run_in(dir, &cfg.toml());
    let socket = socket.to_str().unwrap().to_owned();
    let (code, out, err) = tern_output(&["ctl", "-s", &socket, "json", "show", "tls"]);
    assert_eq!(code, 0, "{out}{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let bind = &json["output"][0];
    let certs = &bind["certificates"];
    assert!(
        certs[0]["file"]
            .as_str()
            .unwrap()
            .ends_with("site-ecdsa.pem"),
        "{json}"
    );
    assert_eq!(certs[0]["key_type"], "ECDSA P-256", "{json}");
    assert_eq!(certs[0]["default"], true, "{json}");
    assert_eq!(certs[0]["ocsp"]["stapled"], true, "{json}");
    assert!(
        certs[1]["key_type"].as_str().unwrap().starts_with("RSA"),
        "{json}"
    );
    assert_eq!(certs[1]["ocsp"]["stapled"], false, "{json}");
    let resumption = &bind["resumption"];
    assert_eq!(resumption["tickets"], true, "{json}");
    assert_eq!(resumption["ticket_keys"]["source"], "openssl", "{json}");
    tern.stop_clean();
}

/// An ECDSA and an RSA certificate for the same names in `dir`, the ECDSA one with an OCSP
/// response beside it (`site-ecdsa.pem.ocsp`); returns their PEM files.
fn stapled_pair(dir: &std::path::Path) -> (String, String) {
    let ecdsa = write_cert(dir, "site-ecdsa", KeyKind::EcdsaP256);
    let rsa = write_cert(dir, "site-rsa", KeyKind::Rsa2048);
    write_ocsp_response(
        &dir.join("site-ecdsa.crt"),
        &dir.join("site-ecdsa.key"),
        &dir.join("site-ecdsa.pem.ocsp"),
    );
    (ecdsa, rsa)
}
