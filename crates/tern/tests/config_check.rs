//! `tern check -c FILE`: a valid configuration (certificates included) exits 0 with a one-line
//! summary; configuration mistakes exit 2 with `FILE:LINE: KEY_PATH: message` lines (all
//! validation errors at once); certificate mistakes (missing file, garbage file, a key that does
//! not match its certificate) exit 2 naming the file. `tern run` refuses the same files with the
//! same errors and never prints `ready:`.

#![allow(clippy::unwrap_used)]

// Only the process and certificate helpers are used here.
#[allow(unused_imports)]
mod support;
use support::*;

use std::path::Path;
use std::time::Duration;

/// `check` and a refused `run` exit on their own; generous for a loaded CI machine.
const LIMIT: Duration = Duration::from_secs(20);

/// A frontend and a backend; `frontend_extra` and `global` are raw TOML lines.
fn config_text(global: &str, frontend_extra: &str, default_backend: &str) -> String {
    format!(
        "[global]\n{global}\n\n[[frontend]]\nname = \"web\"\nbind = [\"127.0.0.1:0\"]\n\
         default_backend = \"{default_backend}\"\n{frontend_extra}\n\n[[backend]]\nname = \"app\"\n\
         servers = [ {{ name = \"s1\", address = \"127.0.0.1:1\" }} ]\n"
    )
}

/// Writes `text` as `tern.toml` in `dir` and returns its path.
fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("tern.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// 1-based number of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle:?} not in:\n{text}"))
        + 1
}

fn check(path: &str) -> Finished {
    tern_finish(&["check", "-c", path], LIMIT)
}

/// The non-empty lines of a stream.
fn lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty()).collect()
}

#[test]
fn valid_config_with_certificates_prints_a_one_line_summary() {
    let dir = temp_dir("check-ok");
    std::fs::create_dir_all(dir.join("certs")).unwrap();
    write_cert(&dir.join("certs"), "ecdsa", tern_tls::KeyKind::EcdsaP256);
    write_cert(&dir.join("certs"), "rsa", tern_tls::KeyKind::Rsa2048);
    // Relative certificate paths: resolved against the configuration's directory, not the
    // directory tern runs in (the test's working directory is the crate).
    let text = "[global]\nworkers = 2\n\n[[frontend]]\nname = \"web\"\n\
                bind = [\"127.0.0.1:0\", { address = \"127.0.0.1:0\", tls = false }]\n\
                tls = { certs = [\"certs/ecdsa.pem\", { cert = \"certs/rsa.crt\", key = \"certs/rsa.key\" }] }\n\
                default_backend = \"app\"\n\n[[backend]]\nname = \"app\"\nservers = [\n  \
                { name = \"s1\", address = \"127.0.0.1:1\" },\n  { name = \"s2\", address = \"127.0.0.1:2\" },\n]\n";
    let path = write_config(&dir, text);
    let out = check(&path);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        lines(&out.stdout),
        vec![format!(
            "{path}: ok: 1 frontend (2 binds, 1 with TLS), 1 backend, 2 servers, workers=2, maxconn=10000"
        )]
    );
    assert!(!out.stderr.contains("ERROR"), "{out:?}");
}

#[test]
fn minimal_plain_config_is_valid() {
    let dir = temp_dir("check-min");
    let path = write_config(&dir, &config_text("", "", "app"));
    let out = check(&path);
    assert_eq!(out.code, Some(0), "{out:?}");
    assert_eq!(
        lines(&out.stdout),
        vec![format!(
            "{path}: ok: 1 frontend (1 bind, 0 with TLS), 1 backend, 1 server, workers=auto, maxconn=10000"
        )]
    );
}

#[test]
fn unknown_key_is_located_and_lists_the_accepted_keys() {
    let dir = temp_dir("check-unknown");
    let text = config_text("", "timeouts.clientt = \"5s\"", "app");
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let line = line_of(&text, "clientt");
    assert_eq!(
        lines(&out.stderr),
        vec![format!(
            "{path}:{line}: frontend[0].timeouts.clientt: unknown field `clientt`, \
             expected one of `client`, `http_request`, `keep_alive`, `handshake`, `client_fin`, `tarpit`"
        )]
    );
}

#[test]
fn unknown_key_in_global_and_in_a_server() {
    let dir = temp_dir("check-unknown2");
    let text = config_text("wrokers = 2", "", "app");
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    let first = lines(&out.stderr)[0].to_owned();
    assert!(
        first.starts_with(&format!(
            "{path}:{}: global.wrokers: unknown field `wrokers`",
            line_of(&text, "wrokers")
        )),
        "{out:?}"
    );
    assert!(first.contains("`workers`"), "{out:?}");

    let text = config_text("", "", "app").replace(
        "{ name = \"s1\", address = \"127.0.0.1:1\" }",
        "{ name = \"s1\", adress = \"127.0.0.1:1\" }",
    );
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(
        out.stderr.contains(&format!(
            "{path}:{}: backend[0].servers[0].adress: unknown field `adress`",
            line_of(&text, "adress")
        )),
        "{out:?}"
    );
}

#[test]
fn validation_errors_are_all_reported_at_once_in_file_order() {
    let dir = temp_dir("check-many");
    let text = config_text(
        "workers = 0\ngrace = \"soon\"",
        "timeouts = { client = \"30\" }\nlimits.max_headers = 5000",
        "nope",
    );
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let got = lines(&out.stderr);
    let expected = [
        (
            line_of(&text, "workers"),
            "global.workers: 0 is out of range",
        ),
        (
            line_of(&text, "grace"),
            "global.grace: invalid duration `soon`",
        ),
        (
            line_of(&text, "default_backend"),
            "frontend[0].default_backend: no backend named `nope` (backends: `app`)",
        ),
        (
            line_of(&text, "client = \"30\""),
            "frontend[0].timeouts.client: duration `30` needs a unit",
        ),
        (
            line_of(&text, "max_headers"),
            "frontend[0].limits.max_headers: 5000 is out of range",
        ),
    ];
    assert_eq!(got.len(), expected.len(), "{got:#?}");
    for (line, (want_line, want)) in got.iter().zip(expected) {
        let prefix = format!("{path}:{want_line}: {want}");
        assert!(
            line.starts_with(&prefix),
            "expected {prefix:?}, got {line:?}"
        );
    }
}

#[test]
fn a_bare_number_duration_is_refused_with_a_hint() {
    let dir = temp_dir("check-bare");
    let text = config_text("", "timeouts.client = 30", "app");
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    let line = line_of(&text, "timeouts.client");
    assert!(
        out.stderr.starts_with(&format!(
            "{path}:{line}: frontend[0].timeouts.client: a duration needs a unit: write \"30s\""
        )),
        "{out:?}"
    );
}

#[test]
fn toml_syntax_error_is_located() {
    let dir = temp_dir("check-syntax");
    let text = format!("{}\n[global\nworkers = 2\n", config_text("", "", "app"));
    let path = write_config(&dir, &text);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    // The second, unterminated `[global` table header.
    let broken = text.lines().position(|l| l == "[global").unwrap() + 1;
    assert!(
        out.stderr.starts_with(&format!("{path}:{broken}: ")),
        "{out:?}"
    );
}

/// A TLS config whose only certificate item is the raw TOML `cert_item`.
fn tls_config(dir: &Path, cert_item: &str) -> String {
    write_config(
        dir,
        &config_text("", &format!("tls = {{ certs = [{cert_item}] }}"), "app"),
    )
}

fn assert_refused_naming(out: &Finished, config: &str, file: &Path, reason: &str) {
    assert_eq!(out.code, Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let file = file.to_str().unwrap();
    assert!(out.stderr.starts_with(&format!("{config}: ")), "{out:?}");
    assert!(out.stderr.contains(file), "expected {file} in {out:?}");
    assert!(
        out.stderr.contains(reason),
        "expected {reason:?} in {out:?}"
    );
}

#[test]
fn missing_certificate_file_is_named() {
    let dir = temp_dir("check-nocert");
    let path = tls_config(&dir, "\"certs/missing.pem\"");
    let out = check(&path);
    assert_refused_naming(&out, &path, &dir.join("certs/missing.pem"), "cannot read");
    assert!(out.stderr.contains("No such file or directory"), "{out:?}");
}

#[test]
fn garbage_certificate_file_is_named() {
    let dir = temp_dir("check-garbage");
    std::fs::write(dir.join("garbage.pem"), garbage(3000, 7)).unwrap();
    let path = tls_config(&dir, "\"garbage.pem\"");
    let out = check(&path);
    assert_refused_naming(
        &out,
        &path,
        &dir.join("garbage.pem"),
        "no certificate found",
    );

    // Text that looks like PEM but is not base64 inside.
    std::fs::write(
        dir.join("broken.pem"),
        "-----BEGIN CERTIFICATE-----\n!!!! not base64 !!!!\n-----END CERTIFICATE-----\n",
    )
    .unwrap();
    let path = tls_config(&dir, "\"broken.pem\"");
    let out = check(&path);
    assert_refused_naming(&out, &path, &dir.join("broken.pem"), "malformed PEM");
}

#[test]
fn combined_file_without_a_key_is_named() {
    let dir = temp_dir("check-nokey");
    write_cert(&dir, "ecdsa", tern_tls::KeyKind::EcdsaP256);
    // The `.crt` file holds only the certificate: not usable as a combined file.
    let path = tls_config(&dir, "\"ecdsa.crt\"");
    let out = check(&path);
    assert_refused_naming(&out, &path, &dir.join("ecdsa.crt"), "no private key found");
}

#[test]
fn key_of_another_certificate_is_refused_naming_both_files() {
    let dir = temp_dir("check-mismatch");
    write_cert(&dir, "one", tern_tls::KeyKind::EcdsaP256);
    write_cert(&dir, "two", tern_tls::KeyKind::EcdsaP256);
    let path = tls_config(&dir, "{ cert = \"one.crt\", key = \"two.key\" }");
    let out = check(&path);
    assert_refused_naming(
        &out,
        &path,
        &dir.join("two.key"),
        "does not match the certificate",
    );
    assert!(
        out.stderr.contains(dir.join("one.crt").to_str().unwrap()),
        "{out:?}"
    );

    // Different key types: an RSA key for an ECDSA certificate.
    write_cert(&dir, "rsa", tern_tls::KeyKind::Rsa2048);
    let path = tls_config(&dir, "{ cert = \"one.crt\", key = \"rsa.key\" }");
    let out = check(&path);
    assert_refused_naming(
        &out,
        &path,
        &dir.join("rsa.key"),
        "does not match the certificate",
    );
}

#[test]
fn a_bad_certificate_after_a_good_one_is_still_found() {
    let dir = temp_dir("check-second");
    let good = write_cert(&dir, "good", tern_tls::KeyKind::EcdsaP256);
    let path = tls_config(&dir, &format!("{good:?}, \"second-missing.pem\""));
    let out = check(&path);
    assert_refused_naming(&out, &path, &dir.join("second-missing.pem"), "cannot read");
}

#[test]
fn run_refuses_an_invalid_config_with_the_same_errors_and_never_gets_ready() {
    let dir = temp_dir("run-invalid");
    let cases: Vec<(&str, String)> = vec![
        (
            "unknown key",
            config_text("", "timeouts.clientt = \"5s\"", "app"),
        ),
        (
            "validation",
            config_text("grace = \"soon\"", "timeouts = { client = \"30\" }", "nope"),
        ),
        (
            "missing cert",
            config_text("", "tls = { certs = [\"missing.pem\"] }", "app"),
        ),
    ];
    for (what, text) in cases {
        let path = write_config(&dir, &text);
        let checked = check(&path);
        assert_eq!(checked.code, Some(2), "{what}: {checked:?}");
        let run = tern_finish(&["run", "-c", &path], LIMIT);
        assert_eq!(run.code, Some(1), "{what}: {run:?}");
        assert!(!run.stdout.contains("ready:"), "{what}: {run:?}");
        assert!(!run.stdout.contains("listening:"), "{what}: {run:?}");
        for error in lines(&checked.stderr) {
            // `check` prefixes certificate errors with the file name, `run` with `tern:`.
            let error = error.strip_prefix(&format!("{path}: ")).unwrap_or(error);
            assert!(
                run.stderr.contains(error),
                "{what}: {error:?} not in run's stderr:\n{}",
                run.stderr
            );
        }
    }
}

/// Each error is a line of its own, ending in a newline, so tools (editors, CI log parsers)
/// that match `FILE:LINE: ...` lines see it whole.
#[test]
fn every_error_is_a_whole_line() {
    let dir = temp_dir("check-lines");
    let text = config_text("", "timeouts = { client = \"30\" }", "nope");
    let path = write_config(&dir, &text);
    let checked = check(&path);
    assert_eq!(checked.code, Some(2), "{checked:?}");
    assert!(
        checked.stderr.ends_with('\n'),
        "check's stderr has no final newline: {:?}",
        checked.stderr
    );
    let run = tern_finish(&["run", "-c", &path], LIMIT);
    let run_lines: Vec<&str> = run.stderr.lines().collect();
    for error in lines(&checked.stderr) {
        assert!(
            run_lines.contains(&error),
            "{error:?} is not a line of its own in run's stderr: {:?}",
            run.stderr
        );
    }
}

/// The reason a certificate cannot be read is given once, not repeated.
#[test]
fn unreadable_certificate_reason_is_stated_once() {
    let dir = temp_dir("check-once");
    let path = tls_config(&dir, "\"missing.pem\"");
    for command in ["check", "run"] {
        let out = tern_finish(&[command, "-c", &path], LIMIT);
        assert_ne!(out.code, Some(0), "{out:?}");
        assert_eq!(
            out.stderr.matches("No such file or directory").count(),
            1,
            "tern {command}: {:?}",
            out.stderr
        );
    }
}

#[test]
fn the_sample_configuration_in_dist_is_valid() {
    let dir = temp_dir("dist-sample");
    let cert = write_cert(&dir, "site", tern_tls::KeyKind::EcdsaP256);
    let sample = concat!(env!("CARGO_MANIFEST_DIR"), "/../../dist/tern.toml");
    let text = std::fs::read_to_string(sample)
        .unwrap()
        .replace("/etc/tern/certs/site.pem", &cert);
    assert!(text.contains(&cert), "the sample names its certificate");
    let done = check(&write_config(&dir, &text));
    assert_eq!(done.code, Some(0), "{}\n{}", done.stdout, done.stderr);
}

/// A path that names a device or a FIFO, for the configuration or a certificate, is refused at
/// once with its reason: `/dev/zero` never ends and a FIFO never answers, so reading either
/// would eat memory or hang `tern check` (and a reload).
#[test]
fn devices_and_fifos_are_refused_not_read() {
    let f = check("/dev/zero");
    assert_eq!(f.code, Some(2), "{}", f.stderr);
    assert!(f.stderr.contains("not a regular file"), "{}", f.stderr);

    let dir = temp_dir("check-dev");
    let fifo = dir.join("certs.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    for cert in ["/dev/urandom", fifo.to_str().unwrap()] {
        let text = config_text("", &format!("tls = {{ certs = [{cert:?}] }}"), "app");
        let f = check(&write_config(&dir, &text));
        assert_eq!(f.code, Some(2), "{cert}: {}", f.stderr);
        assert!(
            f.stderr.contains("not a regular file"),
            "{cert}: {}",
            f.stderr
        );
    }
}

#[test]
fn an_http_fetch_in_a_tcp_frontends_conditions_is_named_with_why() {
    let dir = temp_dir("check-tcp-http-fetch");
    // In TOML: the use_backend rule and the tcp_request rule each name their fetch as written.
    let toml = "[[frontend]]\nname = \"f\"\nmode = \"tcp\"\nbind = [\"127.0.0.1:0\"]\n\
                default_backend = \"b\"\n\
                use_backend = [{ backend = \"b\", if = \"{ hdr(Host) -i example.com }\" }]\n\
                tcp_request.content = [{ action = \"reject\", if = \"{ path_beg /admin }\" }]\n\n\
                [[backend]]\nname = \"b\"\nmode = \"tcp\"\n\
                servers = [{ name = \"s\", address = \"127.0.0.1:9\" }]\n";
    let path = write_config(&dir, toml);
    let out = check(&path);
    assert_eq!(out.code, Some(2), "{out:?}");
    let why = "use connection facts only (src, dst_port, ssl_fc, ssl_fc_sni, req.ssl_sni, \
               req.ssl_hello_type, fc_pp_tlv)";
    assert_eq!(
        lines(&out.stderr),
        vec![
            format!(
                "{path}:{}: frontend[0].use_backend[0]: `hdr(host)` is an HTTP fetch: it reads \
                 the request, and a frontend with mode = \"tcp\" parses none; {why}",
                line_of(toml, "hdr(Host)")
            ),
            format!(
                "{path}:{}: frontend[0].tcp_request.content[0]: `path` is an HTTP fetch: it \
                 reads the request, and a tcp_request rule parses none; {why}",
                line_of(toml, "path_beg")
            ),
        ]
    );
    // The same from a haproxy.cfg: the line of the `use_backend` keyword.
    let cfg = "defaults\n  mode tcp\n  timeout client 10s\n  timeout server 10s\n\
               \x20 timeout connect 2s\n\nfrontend f\n  bind 127.0.0.1:0\n\
               \x20 use_backend b if { hdr(host) -i example.com }\n  default_backend b\n\n\
               backend b\n  server s 127.0.0.1:9\n";
    let cfg_path = dir.join("haproxy.cfg");
    std::fs::write(&cfg_path, cfg).unwrap();
    let out = check(cfg_path.to_str().unwrap());
    assert_eq!(out.code, Some(2), "{out:?}");
    let expected = format!(
        "{}:9: frontend f: use_backend[0]: `hdr(host)` is an HTTP fetch",
        cfg_path.display()
    );
    assert!(
        lines(&out.stderr).iter().any(|l| l.starts_with(&expected)),
        "{out:?}"
    );
    assert!(!out.stderr.contains("Header("), "{out:?}");
}
