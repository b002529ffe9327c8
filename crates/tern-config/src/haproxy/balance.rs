//! `balance`, `hash-type` and `hash-balance-factor` → the backend's `balance`, `hash_type` and
//! `hash_balance_factor`.
//!
//! tern writes its algorithms as HAProxy does (`roundrobin`, `uri whole`, `hdr(Host)`,
//! `random(3)`), except `url_param NAME`, which tern writes `url_param(NAME)`. HAProxy's choice
//! of hash function (`hash-type consistent sdbm`) has no tern equivalent: tern hashes with its
//! own function, so keys land on other servers than HAProxy's, with the same properties.

use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};

pub(crate) fn balance(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    match line.keyword() {
        "balance" => algorithm(line, p, cx),
        "hash-type" => hash_type(line, p, cx),
        _ => p.hash_balance_factor = cx.uint_arg(line, 1).map(|v| Src::new(v, line.no)),
    }
}

fn algorithm(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(name) = cx.arg(line, 1, "an algorithm") else {
        return;
    };
    let args = &line.words[2..];
    let extra = |cx: &mut Cx<'_>, args: &[String]| {
        if !args.is_empty() {
            let what = format!("balance {name} {}", args.join(" "));
            cx.unsupported(line.no, &what);
        }
    };
    let value = match name {
        "roundrobin" | "static-rr" | "leastconn" | "first" | "source" => {
            extra(cx, args);
            name.to_owned()
        }
        "uri" => match args {
            [] => "uri".to_owned(),
            [whole] if whole == "whole" => "uri whole".to_owned(),
            _ => {
                extra(cx, args);
                return;
            }
        },
        "url_param" => {
            let Some((param, rest)) = args.split_first() else {
                cx.error(line.no, "'balance url_param' needs a parameter name");
                return;
            };
            extra(cx, rest);
            format!("url_param({param})")
        }
        _ if name.starts_with("hdr(") && name.ends_with(')') => {
            extra(cx, args);
            name.to_owned()
        }
        _ if name == "random" || (name.starts_with("random(") && name.ends_with(')')) => {
            extra(cx, args);
            name.to_owned()
        }
        "rdp-cookie" | "hash" | "log-hash" | "sticky" | "wrr" | "lb-agent" => {
            cx.unsupported(line.no, &format!("balance {name}"));
            return;
        }
        _ if name.starts_with("rdp-cookie(") => {
            cx.unsupported(line.no, "balance rdp-cookie");
            return;
        }
        other => {
            cx.error(line.no, format!("unknown balance algorithm '{other}'"));
            return;
        }
    };
    p.balance = Some(Src::new(value, line.no));
}

fn hash_type(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(method) = cx.arg(line, 1, "map-based or consistent") else {
        return;
    };
    if !matches!(method, "map-based" | "consistent") {
        cx.error(
            line.no,
            format!("unknown hash-type '{method}' (map-based or consistent)"),
        );
        return;
    }
    if line.words.len() > 2 {
        let what = format!(
            "tern hashes with its own function ({} ignored): keys map to other servers than with HAProxy, as evenly and as stably",
            line.words[2..].join(" ")
        );
        cx.approx(line.no, "hash-type", &what);
    }
    p.hash_type = Some(Src::new(method.to_owned(), line.no));
}
