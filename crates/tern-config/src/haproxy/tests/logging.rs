//! `unique-id-*`, `capture`, `log-format` and their interplay with `defaults` and `option
//! httplog`.

use super::*;

#[test]
fn formats_and_captures_become_frontend_keys() {
    let c = convert(&format!(
        "{HEAD}  log-format %ci\\ %ID\n  unique-id-format %{{+X}}o\\ %ci_%rt\n\
         frontend f\n  bind :80\n  unique-id-header X-ID\n  capture request header Host len 20\n\
         \x20 capture response header Server len 8\n  default_backend b\n\
         frontend g\n  bind :81\n  log-format \"%ci %b\"\n  option httplog\n  default_backend b\n\
         backend b\n  log-format %ci\n  server s 10.0.0.1:80\n"
    ));
    assert_has(&c, r#"unique_id_format = "%{+X}o %ci_%rt""#);
    assert_has(&c, r#"unique_id_header = "X-ID""#);
    assert_has(&c, r#"log_format = "%ci %ID""#);
    assert_has(&c, r#"{ name = "Host", len = 20 },"#);
    assert_has(&c, r#"{ name = "Server", len = 8 },"#);
    let config = validate(&c);
    let (f, g) = (
        &config.frontends[0].request_log,
        &config.frontends[1].request_log,
    );
    assert_eq!(f.capture_request[0].name, "host");
    assert!(f.unique_id_format.is_some() && f.log_format.is_some());
    // `option httplog` after `log-format` in a section: tern's own line again.
    assert!(g.log_format.is_none());
    assert!(g.unique_id_format.is_some(), "from defaults");
    // A backend's `log-format` does nothing (lines follow their frontend's).
    assert!(
        warned(&c.warnings).contains(&"20: log-format".to_owned()),
        "{:?}",
        c.warnings
    );
}

#[test]
fn mistakes_are_errors_at_their_line() {
    let errs = errors(&format!(
        "{HEAD}  capture request header Host len 9\nfrontend f\n  bind :80\n  log-format %ci %b\n\
         \x20 capture request header Host len x\n  capture cookie SID len 32\n  capture foo\n\
         \x20 default_backend b\nbackend b\n  server s 10.0.0.1:80\n"
    ));
    let expected = [
        "haproxy.cfg:6:",
        "haproxy.cfg:9: frontend f: 'log-format' expects one argument",
        "haproxy.cfg:10: frontend f: 'len x'",
        "haproxy.cfg:11: frontend f: keyword 'capture cookie' is not supported",
        "haproxy.cfg:12: frontend f: expected 'capture request header",
    ];
    for (err, want) in errs.iter().zip(expected) {
        assert!(err.starts_with(want), "{err} / {want}\n{errs:?}");
    }
    assert_eq!(errs.len(), expected.len(), "{errs:?}");
    let errs = check_errors(&format!(
        "{HEAD}frontend f\n  bind :80\n  unique-id-format %ci-%ST\n  default_backend b\n\
         backend b\n  server s 10.0.0.1:80\n"
    ));
    assert!(errs[0].starts_with("haproxy.cfg:8:"), "{errs:?}");
    assert!(errs[0].contains("`%ST` is not known yet"), "{errs:?}");
}
