//! Persistence: `cookie NAME insert|rewrite|prefix ...` (+ each server's `cookie VALUE`) →
//! `cookie`, and `stick-table type ip ...` + `stick on src` → `stick`.
//!
//! tern has HAProxy's three active cookie modes; the passive mode (no mode word: HAProxy only
//! reads a cookie the server sets) is not supported yet. HAProxy refuses two modes at once and
//! `rewrite` with `indirect`, and so does the converter. The options that set attributes of an
//! inserted cookie (`nocache` ... `domain`) do nothing in HAProxy's other modes: they are
//! dropped with a warning, since tern's TOML refuses them there. tern's stickiness table
//! remembers client addresses only; a `stick-table` with `store` is a counter table
//! (`counters.rs`).

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{Cookie, ProxyCfg, Src, StickTableLine};
use super::units::{parse_size, parse_time, Unit};

/// The options of an inserted cookie: no effect in rewrite and prefix modes.
const INSERT_ONLY: [&str; 5] = ["nocache", "postonly", "httponly", "secure", "domain"];

pub(crate) fn cookie(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(name) = cx.arg(line, 1, "a cookie name") else {
        return;
    };
    let mut c = Cookie {
        name: name.to_owned(),
        ..Cookie::default()
    };
    let mut modes: Vec<&'static str> = Vec::new();
    let words = &line.words[2..];
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        match word {
            "insert" => modes.push("insert"),
            "rewrite" => modes.push("rewrite"),
            "prefix" => modes.push("prefix"),
            "indirect" => c.indirect = true,
            "nocache" => c.nocache = true,
            "postonly" => c.postonly = true,
            "httponly" => c.httponly = true,
            "secure" => c.secure = true,
            "domain" => {
                let Some(domain) = words.get(i + 1) else {
                    cx.error(line.no, "'cookie ... domain' needs a domain");
                    return;
                };
                if c.domain.is_some() {
                    cx.unsupported_because(
                        line.no,
                        "cookie ... domain",
                        "tern sets one Domain attribute",
                    );
                }
                c.domain = Some(domain.clone());
                i += 1;
            }
            "preserve" | "dynamic" => {
                cx.unsupported(line.no, &format!("cookie ... {word}"));
            }
            "maxidle" | "maxlife" | "attr" => {
                cx.unsupported(line.no, &format!("cookie ... {word}"));
                i += 1;
            }
            other => {
                cx.error(line.no, format!("'cookie': unknown option '{other}'"));
                return;
            }
        }
        i += 1;
    }
    modes.sort_unstable();
    modes.dedup();
    let mode = match modes.as_slice() {
        [] => {
            cx.unsupported_because(
                line.no,
                "cookie",
                "without a mode HAProxy only reads a cookie the server sets; write 'insert', 'rewrite' or 'prefix'",
            );
            return;
        }
        [mode] => *mode,
        [_, _, ..] => {
            cx.error(
                line.no,
                "'cookie': 'rewrite', 'insert' and 'prefix' modes are incompatible",
            );
            return;
        }
    };
    if mode == "rewrite" && c.indirect {
        cx.error(
            line.no,
            "'cookie': 'rewrite' and 'indirect' modes are incompatible",
        );
        return;
    }
    if mode != "insert" {
        drop_insert_options(&mut c, mode, line, cx);
        c.mode = Some(mode);
    }
    p.cookie = Some(Src::new(c, line.no));
}

/// Removes, with a warning each, the options that only act on an inserted cookie.
fn drop_insert_options(c: &mut Cookie, mode: &str, line: &Line, cx: &mut Cx<'_>) {
    let flags = [
        std::mem::take(&mut c.nocache),
        std::mem::take(&mut c.postonly),
        std::mem::take(&mut c.httponly),
        std::mem::take(&mut c.secure),
        c.domain.take().is_some(),
    ];
    for (option, _) in INSERT_ONLY.iter().zip(flags).filter(|(_, on)| *on) {
        cx.no_effect(
            line.no,
            &format!("cookie ... {option}"),
            &format!("it acts on an inserted cookie; in '{mode}' mode the server sets the cookie"),
        );
    }
}

pub(crate) fn stick_table(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    if !cx.not_in_defaults(line) {
        return;
    }
    let words = &line.words[1..];
    let mut table = StickTableLine {
        key: String::new(),
        size: 0,
        expire: None,
        store: Vec::new(),
        peers: None,
    };
    let mut i = 0;
    while i < words.len() {
        if words[i] == "nopurge" {
            cx.unsupported(line.no, "stick-table ... nopurge");
            i += 1;
            continue;
        }
        let Some(value) = words.get(i + 1) else {
            cx.error(
                line.no,
                format!("'stick-table': '{}' needs a value", words[i]),
            );
            return;
        };
        match words[i].as_str() {
            "type" => match value.as_str() {
                kind @ ("ip" | "ipv6" | "string" | "integer") => table.key = kind.to_owned(),
                other => {
                    cx.unsupported_because(
                        line.no,
                        &format!("stick-table type {other}"),
                        "tern's tables hold ip, ipv6, string or integer keys",
                    );
                    return;
                }
            },
            "len" => cx.approx(
                line.no,
                "stick-table ... len",
                "tern keeps string keys of up to 32 bytes, HAProxy's default",
            ),
            "size" => match parse_size(value) {
                Ok(size) => table.size = size,
                Err(e) => cx.error(line.no, format!("'stick-table size': {e}")),
            },
            "expire" => match parse_time(value, Unit::Ms) {
                Ok(ms) => table.expire = Some(ms),
                Err(e) => cx.error(line.no, format!("'stick-table expire': {e}")),
            },
            "store" => table.store.extend(
                value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned),
            ),
            "peers" => table.peers = Some(value.clone()),
            option @ ("srvkey" | "write-to" | "recv-only") => {
                cx.unsupported(line.no, &format!("stick-table ... {option}"));
            }
            other => {
                cx.error(line.no, format!("'stick-table': unknown option '{other}'"));
                return;
            }
        }
        i += 2;
    }
    if table.key.is_empty() || table.size == 0 {
        cx.error(line.no, "'stick-table' needs a 'type' and a 'size'");
        return;
    }
    p.stick_table = Some(Src::new(table, line.no));
}

pub(crate) fn stick(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    match (line.word(1), line.word(2), line.words.len()) {
        (Some("on"), Some("src"), 3) => p.stick_on = Some(Src::new((), line.no)),
        (Some("on"), Some("src"), _) => {
            let what = format!("stick on src {}", line.words[3..].join(" "));
            cx.unsupported_because(
                line.no,
                &what,
                "tern sticks every request of a backend to its own table",
            );
        }
        (Some(_), _, _) => {
            let what = format!("stick {}", line.words[1..].join(" "));
            cx.unsupported_because(
                line.no,
                &what,
                "tern sticks on the client's address ('stick on src')",
            );
        }
        (None, _, _) => cx.error(line.no, "'stick' needs 'on src'"),
    }
}
