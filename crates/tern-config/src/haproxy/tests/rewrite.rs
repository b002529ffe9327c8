//! `redirect`, `http-request redirect` and the rewrite actions: what they become, their order
//! and their errors at the `.cfg` line.

use super::*;
use crate::model::{HttpAction, LinePart, NamePattern, RedirectTo};

fn frontend(body: &str) -> String {
    format!("{HEAD}frontend f\n  bind :80\n{body}  default_backend b\nbackend b\n  server s 10.0.0.1:80\n")
}

#[test]
fn redirects_become_rules_after_http_request_ones() {
    let c = convert(&frontend(
        "  redirect scheme https code 301 unless { ssl_fc }\n  \
         http-request redirect prefix https://%[hdr(host)] code 308 drop-query append-slash set-cookie SEEN=1 if { path_beg /old }\n  \
         http-request redirect location /x%[path] clear-cookie SEEN\n  \
         redirect location /100%\n",
    ));
    assert_has(
        &c,
        r#"{ action = "redirect", prefix = "https://%[hdr(host)]", code = 308, drop_query = true, append_slash = true, set_cookie = "SEEN=1", if = "{ path_beg /old }" },"#,
    );
    let config = validate(&c);
    let rules = &config.frontends[0].http_request;
    let kinds: Vec<(&RedirectTo, u16)> = rules
        .iter()
        .map(|r| match &r.action {
            HttpAction::Redirect(r) => (&r.to, r.code),
            other => panic!("{other:?}"),
        })
        .collect();
    assert!(matches!(kinds[0], (RedirectTo::Prefix(_), 308)));
    assert!(matches!(kinds[1], (RedirectTo::Location(_), 302)));
    // The two `redirect` lines come last, in their order.
    assert!(matches!(kinds[2], (RedirectTo::Scheme(_), 301)));
    assert_eq!(
        kinds[3].0,
        &RedirectTo::Location(crate::ValueFormat::text("/100%"))
    );
    match &rules[1].action {
        HttpAction::Redirect(r) => {
            assert_eq!(r.cookie.as_deref(), Some("SEEN; path=/; Max-Age=0;"))
        }
        _ => unreachable!(),
    }
}

#[test]
fn rewrites_translate_word_for_word() {
    let c = convert(&frontend(
        "  http-request set-path /v2%[path]\n  http-request set-query a=1 if { path /q }\n  \
         http-request set-uri /u\n  http-request set-method POST\n  \
         http-request replace-path ^/api/(.*) /\\1\n  http-request replace-uri ^/old(.*) /new\\1\n  \
         http-request replace-header Host (.*):.* \\1\n  http-request replace-value X-T ^a$ b\n  \
         http-request del-header X-Debug- -m beg\n  http-response set-status 404 reason \"Not Here\"\n  \
         http-response replace-header Server .* hidden\n  http-response del-header ^x-a -m reg\n",
    ));
    let config = validate(&c);
    let fe = &config.frontends[0];
    assert!(matches!(
        fe.http_request[0].action,
        HttpAction::SetLine {
            part: LinePart::Path,
            ..
        }
    ));
    assert!(!fe.http_request[1].condition.is_always());
    assert!(matches!(
        fe.http_request[4].action,
        HttpAction::ReplaceLine {
            part: LinePart::Path,
            ..
        }
    ));
    assert!(matches!(
        fe.http_request[5].action,
        HttpAction::ReplaceLine {
            part: LinePart::Uri,
            ..
        }
    ));
    assert!(
        matches!(&fe.http_request[6].action, HttpAction::ReplaceHeader { name, each_value: false, .. } if name == "Host")
    );
    assert!(matches!(
        fe.http_request[7].action,
        HttpAction::ReplaceHeader {
            each_value: true,
            ..
        }
    ));
    assert_eq!(
        fe.http_request[8].action,
        HttpAction::DelHeaders {
            pattern: NamePattern::Begins("X-Debug-".into())
        }
    );
    assert_eq!(
        fe.http_response[0].action,
        HttpAction::SetStatus {
            status: 404,
            reason: Some("Not Here".into())
        }
    );
    assert!(matches!(
        fe.http_response[2].action,
        HttpAction::DelHeaders {
            pattern: NamePattern::Regex(_)
        }
    ));
}

#[test]
fn mistakes_name_the_cfg_line() {
    assert_eq!(
        errors(&frontend("  http-request redirect somewhere /x\n  redirect prefix /p code\n")),
        [
            "haproxy.cfg:8: frontend f: unknown redirect type 'somewhere' (expected location, prefix or scheme)",
            "haproxy.cfg:9: frontend f: 'redirect ... code' needs a value",
        ]
    );
    let e = check_errors(&frontend(
        "  redirect scheme https code 305\n  http-request replace-path ^/(unclosed /x\n  \
         http-request set-method HEAD\n  \
         http-response set-status 204\n  http-request redirect location /x set-cookie \"a b\"\n",
    ));
    let all = e.join("\n");
    for (line, needle) in [
        (8, "not a redirect code"),
        (9, "bad regular expression"),
        (10, "changes how the response is framed"),
        (11, "204 cannot be set"),
        (12, "is not a cookie"),
    ] {
        assert!(
            e.iter()
                .any(|m| m.starts_with(&format!("haproxy.cfg:{line}:")) && m.contains(needle)),
            "no {needle:?} at line {line} in:\n{all}"
        );
    }
}

#[test]
fn set_var_takes_one_fetch_or_a_constant() {
    let c = convert(&frontend(
        "  http-request set-var(txn.p) path\n  http-request set-var(sess.k) str(100%) if { path /k }\n  \
         http-request set-var-fmt(txn.f) %[src]:%[dst_port]\n  http-response set-var(txn.n) int(5)\n",
    ));
    assert_has(
        &c,
        r#"{ action = "set-var", name = "txn.p", value = "%[path]" },"#,
    );
    assert_has(
        &c,
        r#"{ action = "set-var", name = "sess.k", value = "100%%", if = "{ path /k }" },"#,
    );
    let config = validate(&c);
    assert!(
        matches!(&config.frontends[0].http_request[2].action, HttpAction::SetVar { name, .. } if name == "txn.f")
    );
    let c = convert(&frontend(
        "  http-request set-log-level silent if { path /health }\n  http-response set-log-level err\n",
    ));
    let config = validate(&c);
    assert_eq!(
        config.frontends[0].http_request[0].action,
        HttpAction::SetLogLevel { severity: None }
    );
    assert_eq!(
        config.frontends[0].http_response[0].action,
        HttpAction::SetLogLevel { severity: Some(3) }
    );
    let e = check_errors(&frontend("  http-request set-log-level loud\n"));
    assert!(
        e[0].starts_with("haproxy.cfg:8:") && e[0].contains("not a log level"),
        "{e:?}"
    );
    let e = errors(&frontend("  http-request set-var(txn.x) src,ipmask(24)\n"));
    assert_eq!(e, ["haproxy.cfg:8: frontend f: keyword 'set-var(txn.x) with a converter' is not supported yet"]);
    let e = check_errors(&frontend(
        "  http-request set-var(proc.x) path\n  acl a var(nope) -m found\n",
    ));
    assert!(
        e[0].contains("proc variables") && e[1].contains("not a variable name"),
        "{e:?}"
    );
}
