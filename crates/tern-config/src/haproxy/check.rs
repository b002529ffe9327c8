//! `option httpchk` and `http-check send|expect` → the backend's `check` table.
//!
//! HAProxy's HTTP check is `OPTIONS / HTTP/1.0` unless told otherwise, passing on 2xx and 3xx;
//! tern's defaults are `GET /` and the same statuses, so the method and path are always
//! written. The old way of adding a Host header (`option httpchk GET / HTTP/1.1\r\nHost:\ x`)
//! is understood. tern sends its checks as HTTP/1.1 whatever version is written.

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{CheckSend, Expect, HttpChk, ProxyCfg, Src};
use super::toml_text::{array, string};

/// `option httpchk [[METHOD] URI [VERSION]]` (`args` after `httpchk`).
pub(crate) fn httpchk(line: &Line, args: &[String], p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let (method, path, version) = match args {
        [] => ("OPTIONS", "/", None),
        [uri] => ("OPTIONS", uri.as_str(), None),
        [method, uri] => (method.as_str(), uri.as_str(), None),
        [method, uri, rest @ ..] => (method.as_str(), uri.as_str(), Some(rest.join(" "))),
    };
    let mut chk = HttpChk {
        method: method.to_owned(),
        path: path.to_owned(),
        host: None,
    };
    if let Some(version) = version {
        for header in version.split("\r\n").skip(1).filter(|h| !h.is_empty()) {
            match header.split_once(':') {
                Some((name, value)) if name.eq_ignore_ascii_case("host") => {
                    chk.host = Some(value.trim().to_owned())
                }
                _ => {
                    let what = format!("option httpchk ... {header}");
                    cx.unsupported_because(
                        line.no,
                        &what,
                        "tern's check request has a Host header only",
                    );
                }
            }
        }
    }
    p.httpchk = Some(Src::new(chk, line.no));
}

/// `http-check send|expect|...`.
pub(crate) fn http_check(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    match line.word(1) {
        Some("send") => send(line, p, cx),
        Some("expect") => expect(line, p, cx),
        Some(
            sub @ ("disable-on-404" | "send-state" | "connect" | "set-var" | "unset-var"
            | "comment"),
        ) => {
            cx.unsupported(line.no, &format!("http-check {sub}"));
        }
        Some(other) => cx.error(line.no, format!("unknown 'http-check {other}'")),
        None => cx.error(line.no, "'http-check' needs send or expect"),
    }
}

fn send(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let mut send = CheckSend::default();
    let words = &line.words[2..];
    let mut i = 0;
    while i < words.len() {
        let arg = words.get(i + 1).map(String::as_str);
        match (words[i].as_str(), arg) {
            ("meth", Some(m)) => send.method = Some(m.to_owned()),
            ("uri", Some(u)) => send.path = Some(u.to_owned()),
            // tern sends HTTP/1.1 checks.
            ("ver", Some(_)) => {}
            ("hdr", Some(name)) if name.eq_ignore_ascii_case("host") => {
                let Some(value) = words.get(i + 2) else {
                    cx.error(line.no, "'http-check send hdr' needs a name and a value");
                    return;
                };
                send.host = Some(value.clone());
                i += 1;
            }
            ("hdr", Some(name)) => {
                let what = format!("http-check send hdr {name}");
                cx.unsupported_because(
                    line.no,
                    &what,
                    "tern's check request has a Host header only",
                );
                i += 1;
            }
            (option @ ("uri-lf" | "body" | "body-lf" | "comment"), Some(_)) => {
                cx.unsupported(line.no, &format!("http-check send {option}"));
            }
            (option, _) => {
                cx.error(line.no, format!("'http-check send': unexpected '{option}'"));
                return;
            }
        }
        i += 2;
    }
    p.check_send = Some(Src::new(send, line.no));
}

fn expect(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let words = &line.words[2..];
    let Some((kind, pattern)) = words.split_first() else {
        cx.error(line.no, "'http-check expect' needs a match and a pattern");
        return;
    };
    let Some(pattern) = pattern.first().filter(|_| pattern.len() == 1) else {
        let what = format!("http-check expect {}", words.join(" "));
        cx.unsupported_because(
            line.no,
            &what,
            "tern understands 'status CODES' and 'string TEXT'",
        );
        return;
    };
    let expect = match kind.as_str() {
        "status" => match statuses(pattern) {
            Ok(toml) => Expect::Status(toml),
            Err(e) => {
                cx.error(line.no, e);
                return;
            }
        },
        "string" => Expect::Body(pattern.clone()),
        other => {
            let what = format!("http-check expect {other}");
            cx.unsupported_because(
                line.no,
                &what,
                "tern understands 'status CODES' and 'string TEXT'",
            );
            return;
        }
    };
    p.expect = Some(Src::new(expect, line.no));
}

/// `200`, `200,204`, `200-299`, `300-399,404` → tern's `expect_status` value.
pub(crate) fn statuses(pattern: &str) -> Result<String, String> {
    let bad = || format!("invalid status list '{pattern}' (codes and ranges like 200,300-399)");
    let code = |s: &str| {
        s.parse::<u16>()
            .ok()
            .filter(|c| (100..=599).contains(c))
            .ok_or_else(bad)
    };
    let mut items = Vec::new();
    for part in pattern.split(',') {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (code(a)?, code(b)?);
                if a > b {
                    return Err(bad());
                }
                // Whole hundreds become classes ("2xx"), the rest single codes.
                let mut c = a;
                while c <= b {
                    if c % 100 == 0 && c + 99 <= b {
                        items.push(string(&format!("{}xx", c / 100)));
                        c += 100;
                    } else {
                        items.push(c.to_string());
                        c += 1;
                    }
                }
            }
            None => items.push(code(part)?.to_string()),
        }
    }
    Ok(match items.as_slice() {
        [one] => one.clone(),
        _ => array(&items),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lists() {
        assert_eq!(statuses("200").as_deref(), Ok("200"));
        assert_eq!(statuses("200,204").as_deref(), Ok("[200, 204]"));
        assert_eq!(statuses("200-299").as_deref(), Ok("\"2xx\""));
        assert_eq!(statuses("200-399").as_deref(), Ok(r#"["2xx", "3xx"]"#));
        assert_eq!(statuses("198-201").as_deref(), Ok("[198, 199, 200, 201]"));
        assert_eq!(statuses("301-302,404").as_deref(), Ok("[301, 302, 404]"));
        assert!(statuses("2xx").is_err());
        assert!(statuses("399-200").is_err());
    }
}
