//! `errorfile`, `errorfiles` with `http-errors` sections, `http-error` and `return ... file`:
//! what they become, files read and checked, errors at the `.cfg` line and the file's.

use super::*;

const PAGE: &str = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n\r\n<p>down</p>";

fn files(tag: &str) -> PathBuf {
    let dir = temp_dir(tag);
    std::fs::create_dir_all(dir.join("errors")).unwrap();
    std::fs::write(dir.join("errors/503.http"), PAGE).unwrap();
    std::fs::write(
        dir.join("errors/bad.http"),
        "HTTP/1.1 503 x\nno colon here\n\n",
    )
    .unwrap();
    std::fs::write(dir.join("errors/sorry.html"), "<p>sorry</p>").unwrap();
    dir
}

fn parse_in(dir: &Path, text: &str) -> Result<crate::Config, Vec<String>> {
    let path = dir.join("haproxy.cfg");
    super::super::parse(text, &path)
        .map(|(c, _)| c)
        .map_err(|e| e.iter().map(ToString::to_string).collect())
}

#[test]
fn pages_come_from_defaults_sections_and_proxies() {
    let dir = files("ep-ok");
    let text = format!(
        "{HEAD}  errorfile 503 errors/503.http\n\
         http-errors site\n  errorfile 503 errors/503.http\n\
         frontend f\n  bind :80\n  http-error status 429 content-type text/plain string slow-down\n  \
         http-error status 403 content-type text/html file errors/sorry.html\n  \
         http-request return status 200 content-type text/html file errors/sorry.html if {{ path /s }}\n  \
         default_backend b\n\
         backend b\n  errorfiles site 503\n  server s 10.0.0.1:80\n"
    );
    let c = convert_in(&dir, &text).unwrap();
    assert_has(
        &c,
        r#"error_pages.429 = { content_type = "text/plain", body = "slow-down" }"#,
    );
    let config = parse_in(&dir, &text).unwrap_or_else(|e| panic!("{e:?}\n{}", c.toml));
    let fe = &config.frontends[0].error_pages;
    assert_eq!(fe.statuses().collect::<Vec<_>>(), [403, 429, 503]);
    assert_eq!(fe.get(429).unwrap().body, b"slow-down");
    assert_eq!(fe.get(403).unwrap().body, b"<p>sorry</p>");
    assert_eq!(
        fe.get(503).unwrap().head,
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/html\r\n"
    );
    assert!(config.backends[0].error_pages.get(503).is_some());
    match &config.frontends[0].http_request[0].action {
        crate::HttpAction::Return { body, .. } => assert_eq!(body, b"<p>sorry</p>"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_pages_name_the_cfg_line_and_the_file_line() {
    let dir = files("ep-bad");
    let text = format!(
        "{HEAD}frontend f\n  bind :80\n  errorfile 503 errors/bad.http\n  errorfile 502 errors/none.http\n  \
         errorfile 418 errors/503.http\n  default_backend b\nbackend b\n  errorfiles nowhere\n  server s 10.0.0.1:80\n"
    );
    let e = errors(&text);
    assert_eq!(
        e,
        ["haproxy.cfg:13: backend b: no http-errors section named 'nowhere'"]
    );
    let text = text.replace("  errorfiles nowhere\n", "");
    let e = parse_in(&dir, &text).unwrap_err().join("\n");
    assert!(e.contains("haproxy.cfg:8: frontend f: error_pages.503.errorfile: errors/bad.http:2: `no colon here` is not a field"), "{e}");
    assert!(
        e.contains("haproxy.cfg:9: frontend f: error_pages.502.errorfile: ")
            && e.contains("none.http"),
        "{e}"
    );
    assert!(e.contains("haproxy.cfg:10: frontend f: error_pages.418: `418` is not a status tern answers itself"), "{e}");
}
