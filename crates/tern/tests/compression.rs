//! Response compression (issue 18) through the real binary, in TOML and `.cfg`: every coding
//! (gzip, deflate, br, zstd) decoded by curl `--compressed`, by Python's gzip and zlib, and by
//! the crates that coded it; Content-Length and chunked bodies of several MiB; HTTP/1.1 and
//! HTTP/2 (curl `--http2` over TLS); `Accept-Encoding` negotiation; HAProxy's skip rules and
//! tern's `min_size`; `offload`; a streaming response that keeps streaming.
//!
//! Two backends: `tern term` (a generated `application/octet-stream` body, checked byte by
//! byte, through the frontend's table that lists no type) and `clients/text_origin.py` (text
//! with the fields a test asks for, through the backend's table: text types, `offload`).

#![allow(clippy::unwrap_used)]

mod support;
use support::others::{free_port, Other};
use support::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tern_tls::KeyKind;

/// The text `text_origin.py` serves for `n=BYTES`.
fn text(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n + 64);
    let mut i = 0;
    while out.len() < n {
        out.extend_from_slice(
            format!("{i:08} the quick brown fox jumps over the lazy dog\n").as_bytes(),
        );
        i += 1;
    }
    out.truncate(n);
    out
}

fn origin(dir: &Path) -> (Other, u16) {
    let port = free_port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/clients/text_origin.py");
    let other = Other::start(dir, "python3", &[script, &port.to_string()], &[port]);
    (other, port)
}

fn toml(cert: &str, port: u16, term: &str) -> String {
    format!(
        r#"[global]
workers = 1

[[frontend]]
name = "web"
bind = [{{ address = "127.0.0.1:0", tls = false }}, "127.0.0.1:0"]
tls = {{ certs = ["{cert}"], alpn = ["h2", "http/1.1"] }}
use_backend = [{{ backend = "term", if = "{{ path_beg /term }}" }}]
default_backend = "text"
compression = {{ algos = ["br", "gzip", "deflate", "zstd"], min_size = 0 }}

[[backend]]
name = "text"
compression = {{ algos = ["gzip", "br", "zstd", "deflate"], types = ["text/html", "text/plain"], offload = true }}
servers = [{{ name = "py", address = "127.0.0.1:{port}" }}]

[[backend]]
name = "term"
servers = [{{ name = "t", address = "{term}" }}]
"#
    )
}

fn cfg(port: u16, term: &str) -> String {
    format!(
        "global\n  nbthread 1\n  tune.comp.maxlevel 1\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend web\n  bind 127.0.0.1:0\n  bind 127.0.0.1:0 ssl crt site.pem alpn h2,http/1.1\n  \
         compression algo br gzip deflate zstd\n  use_backend term if {{ path_beg /term }}\n  \
         default_backend text\n\
         backend text\n  compression algo gzip br zstd deflate\n  compression type text/html text/plain\n  \
         compression offload\n  server py 127.0.0.1:{port}\n\
         backend term\n  server t {term}\n"
    )
}

/// curl's response head (lower-cased) and body bytes.
fn fetch(args: &[&str], url: &str) -> (String, Vec<u8>) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "60", "-k", "-D", "/dev/stderr"])
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("curl runs (the tests need it: .ci/run installs it)");
    let head = String::from_utf8_lossy(&out.stderr).to_ascii_lowercase();
    assert!(out.status.success(), "{head}");
    (head, out.stdout)
}

fn field<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}:")))
        .map(str::trim)
}

fn decode(coding: &str, coded: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    match coding {
        "gzip" => flate2::read::GzDecoder::new(coded).read_to_end(&mut plain),
        "deflate" => flate2::read::ZlibDecoder::new(coded).read_to_end(&mut plain),
        "br" => brotli::Decompressor::new(coded, 4096).read_to_end(&mut plain),
        "zstd" => zstd::stream::read::Decoder::new(coded)
            .unwrap()
            .read_to_end(&mut plain),
        other => panic!("no decoder for {other}"),
    }
    .unwrap_or_else(|e| panic!("{coding} does not decode: {e}"));
    plain
}

/// Both syntaxes, each with its own directory and certificate, over the same backends.
fn both(tag: &str, port: u16, term: &str) -> [Tern; 2] {
    let toml_dir = temp_dir(&format!("{tag}-toml"));
    let cert = write_cert(&toml_dir, "site", KeyKind::EcdsaP256);
    let cfg_dir = temp_dir(&format!("{tag}-cfg"));
    write_cert(&cfg_dir, "site", KeyKind::EcdsaP256);
    [
        Tern::run_file(&toml_dir, "tern.toml", &toml(&cert, port, term)),
        Tern::run_file(&cfg_dir, "haproxy.cfg", &cfg(port, term)),
    ]
}

/// The HTTP/2 (TLS) arguments and base URL of `tern`'s second bind.
fn h2(tern: &Tern) -> (Vec<String>, String) {
    let port = tern.binds[1].1.port();
    let args = vec![
        "--http2".to_owned(),
        "--resolve".to_owned(),
        format!("localhost:{port}:127.0.0.1"),
    ];
    (args, format!("https://localhost:{port}"))
}

#[test]
fn every_coding_for_large_bodies_over_both_protocols_in_both_syntaxes() {
    let dir = temp_dir("comp-all");
    let (_py, port) = origin(&dir);
    let term = Term::start("comp");
    for tern in both("comp-all", port, &term.addr.to_string()) {
        let plain = format!("http://{}", tern.binds[0].1);
        let (h2_args, h2_base) = h2(&tern);
        for coding in ["gzip", "deflate", "br", "zstd"] {
            let accept = format!("accept-encoding: {coding}");
            // Several MiB, framed by length and chunked by the server, over HTTP/1.1; 1 MiB
            // over HTTP/2.
            for (base, extra, query) in [
                (&plain, &[][..], "s=4m"),
                (&plain, &[][..], "s=4m&c=1"),
                (&h2_base, &h2_args[..], "s=1m"),
            ] {
                let mut args: Vec<&str> = extra.iter().map(String::as_str).collect();
                args.extend(["-H", &accept]);
                let (head, body) = fetch(&args, &format!("{base}/term?{query}"));
                assert_eq!(field(&head, "content-encoding"), Some(coding), "{head}");
                assert_eq!(field(&head, "vary"), Some("accept-encoding"), "{head}");
                assert_eq!(field(&head, "content-length"), None, "{head}");
                let plain_body = decode(coding, &body);
                let size = if query.starts_with("s=4m") {
                    4 << 20
                } else {
                    1 << 20
                };
                assert_eq!(plain_body.len(), size, "{coding} {query}");
                assert_eq!(fill_mismatch(&plain_body), None, "{coding} {query}");
                assert!(body.len() < size / 10, "{coding}: {} bytes", body.len());
            }
            // A real client decodes it: curl --compressed, both protocols, the text backend.
            let expected = text(300_000);
            let url = format!("{plain}/page?n=300000");
            let (head, body) = fetch(&["--compressed", "-H", &accept], &url);
            assert_eq!(field(&head, "content-encoding"), Some(coding), "{head}");
            assert!(body == expected, "{coding}: curl --compressed");
            let mut args: Vec<&str> = h2_args.iter().map(String::as_str).collect();
            args.extend(["--compressed", "-H", &accept]);
            let (head, body) = fetch(&args, &format!("{h2_base}/page?n=300000&chunked=1"));
            assert!(head.starts_with("http/2 200"), "{head}");
            assert_eq!(field(&head, "content-encoding"), Some(coding), "{head}");
            assert!(body == expected, "{coding}: curl --compressed --http2");
        }
        tern.stop();
    }
}

#[test]
fn python_decodes_gzip_and_deflate() {
    let dir = temp_dir("comp-py");
    let (_py, port) = origin(&dir);
    let term = Term::start("comp-py");
    let [tern, _] = both("comp-py", port, &term.addr.to_string());
    let script = r#"
import gzip, sys, urllib.request, zlib
base = sys.argv[1]
def text(n):
    out = b"".join(b"%08d the quick brown fox jumps over the lazy dog\n" % i for i in range(n // 50 + 1))
    return out[:n]
for coding, decode in (("gzip", gzip.decompress), ("deflate", zlib.decompress)):
    for query in ("n=2000000", "n=2000000&chunked=1"):
        req = urllib.request.Request(base + "/p?" + query, headers={"Accept-Encoding": coding})
        with urllib.request.urlopen(req, timeout=60) as r:
            assert r.headers["Content-Encoding"] == coding, r.headers
            assert decode(r.read()) == text(2000000), (coding, query)
print("ok")
"#;
    let out = Command::new("python3")
        .args(["-c", script, &format!("http://{}", tern.binds[0].1)])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "ok",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    tern.stop();
}

#[test]
fn skip_rules_and_negotiation() {
    let dir = temp_dir("comp-skip");
    let (_py, port) = origin(&dir);
    let term = Term::start("comp-skip");
    let [tern, _] = both("comp-skip", port, &term.addr.to_string());
    let base = format!("http://{}", tern.binds[0].1);
    let gzip = ["-H", "accept-encoding: gzip"];
    // Left alone, each for its reason: the body arrives as the server sent it.
    for query in [
        "h=Content-Encoding:identity",
        "h=Cache-Control:public,%20no-transform",
        "status=404",
        "status=206&h=Content-Range:bytes%200-4095/9000",
        "h=Content-Range:bytes%200-4095/4096",
        "type=image/png",
        "type=multipart/mixed",
        "type=none",
        "n=1000",
        "ver=1.0",
        "h=ETag:v1",
        "h=ETag:%22a%22&h=ETag:%22b%22",
    ] {
        let (head, body) = fetch(&gzip, &format!("{base}/p?{query}"));
        // (The first one's `identity` is the server's own.)
        assert_ne!(
            field(&head, "content-encoding"),
            Some("gzip"),
            "{query}: {head}"
        );
        let n = if query == "n=1000" { 1000 } else { 4096 };
        assert!(body == text(n), "{query}");
    }
    // Under min_size but chunked (length unknown): compressed.
    let (head, body) = fetch(&gzip, &format!("{base}/p?n=1000&chunked=1"));
    assert_eq!(field(&head, "content-encoding"), Some("gzip"), "{head}");
    assert_eq!(decode("gzip", &body), text(1000));
    // HEAD, an HTTP/1.0 client, and statuses without a body.
    let (head, _) = fetch(&["-I", "-H", "accept-encoding: gzip"], &format!("{base}/p"));
    assert_eq!(field(&head, "content-encoding"), None, "{head}");
    assert_eq!(field(&head, "content-length"), Some("4096"), "{head}");
    let (head, body) = fetch(&["-0", "-H", "accept-encoding: gzip"], &format!("{base}/p"));
    assert_eq!(field(&head, "content-encoding"), None, "{head}");
    assert!(body == text(4096));
    for status in ["204", "304"] {
        let (head, body) = fetch(&gzip, &format!("{base}/term?r={status}"));
        assert_eq!(field(&head, "content-encoding"), None, "{head}");
        assert!(body.is_empty());
    }
    // Negotiation: weights, refusals, `*`, the backend's order between equals; offload removes
    // the request's Accept-Encoding only when tern compresses.
    for (accept, expect, seen) in [
        ("gzip, br", Some("gzip"), "none"),
        ("br, zstd", Some("br"), "none"),
        ("gzip;q=0.5, zstd;q=0.9", Some("zstd"), "none"),
        ("gzip;q=0, br;q=0", None, "gzip;q=0, br;q=0"),
        ("*", Some("gzip"), "none"),
        ("gzip;q=0, *;q=0.1", Some("br"), "none"),
        ("identity", None, "identity"),
        ("compress", None, "compress"),
    ] {
        let header = format!("accept-encoding: {accept}");
        let (head, body) = fetch(&["-H", &header], &format!("{base}/p"));
        assert_eq!(field(&head, "content-encoding"), expect, "{accept}: {head}");
        assert_eq!(
            field(&head, "x-seen-accept-encoding"),
            Some(seen),
            "{accept}"
        );
        let plain = expect.map_or(body.clone(), |c| decode(c, &body));
        assert!(plain == text(4096), "{accept}");
    }
    let (head, _) = fetch(&[], &format!("{base}/p"));
    assert_eq!(field(&head, "content-encoding"), None, "{head}");
    // A strong ETag becomes weak; a weak one stays; the server's Vary is kept and extended.
    let (head, _) = fetch(&gzip, &format!("{base}/p?h=ETag:%22v1%22&h=Vary:Origin"));
    assert_eq!(field(&head, "etag"), Some("w/\"v1\""), "{head}");
    assert!(
        head.contains("\r\nvary: origin\r\n") && head.contains("\r\nvary: accept-encoding\r\n"),
        "{head}"
    );
    let (head, _) = fetch(&gzip, &format!("{base}/p?h=ETag:W/%22v1%22"));
    assert_eq!(field(&head, "etag"), Some("w/\"v1\""), "{head}");
    assert_eq!(field(&head, "content-encoding"), Some("gzip"), "{head}");
    tern.stop();
}

/// Reads chunks from `raw` (after the head) into `decoder` until `done` says so.
fn feed_chunks(raw: &[u8], decoder: &mut flate2::write::GzDecoder<Vec<u8>>) -> bool {
    let mut rest = raw;
    loop {
        let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") else {
            return false;
        };
        let size = usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap(), 16).unwrap();
        if size == 0 {
            return true;
        }
        let Some(data) = rest.get(eol + 2..eol + 2 + size) else {
            return false;
        };
        decoder.write_all(data).unwrap();
        rest = &rest[eol + 2 + size + 2..];
    }
}

#[test]
fn a_streaming_response_keeps_streaming() {
    let dir = temp_dir("comp-stream");
    let (_py, port) = origin(&dir);
    let term = Term::start("comp-stream");
    let [tern, _] = both("comp-stream", port, &term.addr.to_string());
    let marker = dir.join("go");
    let mut s = TcpStream::connect(tern.binds[0].1).unwrap();
    let request = format!(
        "GET /p?n=100000&chunked=1&wait={} HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n",
        marker.display()
    );
    s.write_all(request.as_bytes()).unwrap();
    // The server sent its first line and waits: that line arrives, decodable, before the rest.
    let mut decoder = flate2::write::GzDecoder::new(Vec::new());
    let first = b"00000000 the quick brown fox jumps over the lazy dog\n";
    let mut bytes = Vec::new();
    let mut buf = [0u8; 65536];
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    while decoder.get_ref().len() < first.len() {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "closed early");
        bytes.extend_from_slice(&buf[..n]);
        if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            decoder = flate2::write::GzDecoder::new(Vec::new());
            feed_chunks(&bytes[end + 4..], &mut decoder);
            decoder.flush().unwrap();
        }
    }
    assert_eq!(decoder.get_ref().as_slice(), first);
    std::fs::write(&marker, b"").unwrap();
    let (rest, done) = read_until_contains(&mut s, b"\r\n0\r\n\r\n", Duration::from_secs(20));
    assert!(done);
    bytes.extend_from_slice(&rest);
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let mut decoder = flate2::write::GzDecoder::new(Vec::new());
    assert!(feed_chunks(&bytes[end + 4..], &mut decoder));
    assert!(decoder.finish().unwrap() == text(100_000));
    tern.stop();
}

#[test]
fn bad_tables_stop_tern_check_with_file_line_and_key() {
    let dir = temp_dir("comp-check");
    let path = dir.join("tern.toml");
    std::fs::write(
        &path,
        "[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\ndefault_backend = \"app\"\n\
         compression = { algos = [\"gzip\", \"lzw\"], br_level = 12 }\n\n\
         [[backend]]\nname = \"app\"\nservers = [{ name = \"s\", address = \"127.0.0.1:1\" }]\n",
    )
    .unwrap();
    let out = tern_finish(
        &["check", "-c", path.to_str().unwrap()],
        Duration::from_secs(20),
    );
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr
            .contains("tern.toml:5: frontend[0].compression.algos[1]: unknown coding `lzw`"),
        "{out:?}"
    );
    assert!(
        out.stderr
            .contains("frontend[0].compression.br_level: 12 is out of range"),
        "{out:?}"
    );
}

/// The same `.cfg` served by HAProxy and by tern, on its own port each.
fn haproxy_cfg(listen: u16, origin: u16) -> String {
    format!(
        "global\n  nbthread 1\n\
         defaults\n  mode http\n  timeout client 30s\n  timeout server 30s\n  timeout connect 5s\n\
         frontend web\n  bind 127.0.0.1:{listen}\n  compression algo gzip deflate\n  \
         compression type text/html text/plain\n  default_backend text\n\
         backend text\n  server py 127.0.0.1:{origin}\n"
    )
}

/// What a client sees of the compression of one response: the coding, Vary, the ETag, and
/// whether the body decodes to what the origin sent.
fn seen(
    base: &str,
    query: &str,
    args: &[&str],
) -> (Option<String>, Option<String>, Option<String>) {
    let (head, body) = fetch(args, &format!("{base}/p?{query}"));
    let coding = field(&head, "content-encoding").map(str::to_owned);
    let plain = match coding.as_deref() {
        Some("gzip") | Some("deflate") => decode(coding.as_deref().unwrap(), &body),
        _ => body,
    };
    let n = query
        .split('&')
        .find_map(|p| p.strip_prefix("n="))
        .map_or(4096, |n| n.parse().unwrap());
    let head_only = args.contains(&"-I");
    assert!(
        head_only || plain == text(n),
        "{base} {query} {args:?}: body differs"
    );
    let vary = field(&head, "vary").map(str::to_owned);
    (coding, vary, field(&head, "etag").map(str::to_owned))
}

#[test]
fn decisions_match_haproxy_on_the_same_cfg() {
    if !have("haproxy") {
        panic!("haproxy is needed (.ci/run installs it)");
    }
    let dir = temp_dir("comp-haproxy");
    let (_py, port) = origin(&dir);
    let haproxy_port = free_port();
    let _haproxy = Other::haproxy(&dir, &haproxy_cfg(haproxy_port, port), &[haproxy_port]);
    let tern_dir = temp_dir("comp-haproxy-tern");
    let tern = Tern::run_file(&tern_dir, "haproxy.cfg", &haproxy_cfg(0, port));
    let bases = [
        format!("http://127.0.0.1:{haproxy_port}"),
        format!("http://{}", tern.binds[0].1),
    ];
    let mut cases = Vec::new();
    for accept in [
        "gzip",
        "deflate",
        "gzip;q=0",
        "gzip;q=0.5, deflate;q=0.8",
        // Not `*`: HAProxy gives it the last coding listed, tern the first (docs, differences).
        "identity",
        "br",
    ] {
        cases.push(("", format!("accept-encoding: {accept}")));
    }
    for query in [
        "status=201",
        "status=404",
        "chunked=1",
        "n=20",
        "type=text/plain",
        "type=image/png",
        "type=multipart/mixed",
        "type=none",
        "ver=1.0",
        "h=Content-Encoding:identity",
        "h=Cache-Control:no-transform",
        "h=ETag:%22v1%22",
        "h=ETag:W/%22v1%22",
        "h=ETag:v1",
        "h=ETag:%22a%22&h=ETag:%22b%22",
        "h=Vary:Origin",
    ] {
        cases.push((query, "accept-encoding: gzip".to_owned()));
    }
    for (query, accept) in &cases {
        let args = ["-H", accept.as_str()];
        let [h, t] = &bases;
        assert_eq!(
            seen(h, query, &args),
            seen(t, query, &args),
            "{query} {accept}"
        );
    }
    // No Accept-Encoding (Vary all the same), HEAD, and an HTTP/1.0 client.
    for args in [
        &[][..],
        &["-I", "-H", "accept-encoding: gzip"],
        &["-0", "-H", "accept-encoding: gzip"],
    ] {
        let [h, t] = &bases;
        assert_eq!(seen(h, "", args), seen(t, "", args), "{args:?}");
    }
    tern.stop();
}
