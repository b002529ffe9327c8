//! One ACL expression (`FETCH [FLAGS] [PATTERNS...]`) → an [`AclTest`].
//!
//! Fetches and match methods are HAProxy's (doc/configuration.txt §7.1–7.3). A fetch named with
//! a match suffix (`path_beg`) chooses its match method; otherwise the sample's type chooses
//! it (text: exact string, `src`: networks, `dst_port`: integer ranges, `ssl_fc`: boolean), and
//! `-m` changes it. Every mistake is an error naming what is accepted: a misspelt fetch or flag
//! must not become an ACL that silently never matches.

use std::net::IpAddr;
use std::path::Path;

use crate::model::{
    AclTest, Counter, CounterFetch, CounterOp, CounterSource, Fetch, IntRange, IpNet, Matcher,
    Regex, TableRef, TextMatch, UserlistRef, TRACK_SLOTS,
};

use super::words::Word;

/// The type of a fetch's sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Ip,
    Bool,
}

/// A match method: `-m NAME` or a fetch suffix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MatchMethod {
    Text(TextMatch),
    Reg,
    Found,
    Len,
    Int,
    Ip,
    Bool,
}

const FETCHES: &str = "hdr(NAME), req.hdr(NAME), path, url, query, method, req.ver, src, \
    dst_port, ssl_fc, ssl_fc_sni, req.ssl_sni, req.ssl_hello_type, http_auth(L), http_auth_group(L), \
    fc_pp_tlv(ID), always_true, always_false (hdr, path, url and \
    ssl_fc_sni also with a _beg, _end, _sub, _dom, _dir, _reg or _len suffix), and the counters \
    sc0_NAME, sc_NAME(N), src_NAME([TABLE]) with NAME one of conn_cur, conn_cnt, conn_rate, \
    http_req_cnt, http_req_rate, http_err_rate, bytes_in_rate, bytes_out_rate, get_gpc0, \
    gpc0_rate, inc_gpc0, clr_gpc0";

const METHODS: &str = "str, beg, end, sub, dom, dir, reg, found, len, int, ip, bool";

/// Parses one ACL expression; `-f` files are read relative to `base_dir`.
pub(crate) fn acl_test(words: &[Word], base_dir: &Path) -> Result<AclTest, String> {
    let (first, rest) = words.split_first().ok_or("empty ACL expression")?;
    let (fetch, kind, suffix) = fetch(&first.text)?;
    let mut icase = false;
    let mut method = None;
    let mut patterns: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(word) = rest
        .get(at)
        .filter(|w| !w.quoted && w.text.starts_with('-'))
    {
        at += 1;
        match word.text.as_str() {
            "-i" => icase = true,
            "-n" => {}
            "--" => break,
            "-m" => {
                let name = rest.get(at).ok_or("`-m` needs a match method")?;
                at += 1;
                method = Some(method_named(&name.text)?);
            }
            "-f" => {
                let file = rest.get(at).ok_or("`-f` needs a file name")?;
                at += 1;
                patterns.extend(patterns_from_file(&base_dir.join(&file.text))?);
            }
            flag @ ("-M" | "-u") => return Err(format!("flag `{flag}` is not supported yet")),
            flag => {
                return Err(format!(
                    "unknown flag `{flag}`: expected -i, -m METHOD, -f FILE, -n or --"
                ))
            }
        }
    }
    patterns.extend(rest[at..].iter().map(|w| w.text.clone()));
    let method = match (suffix, method) {
        (Some(_), Some(_)) => {
            return Err(format!(
            "`{}` already chooses its match method; write the fetch without its suffix and `-m`",
            first.text
        ))
        }
        (Some(m), None) | (None, Some(m)) => m,
        (None, None) => default_method(kind),
    };
    let matcher = matcher(kind, method, icase, &patterns)?;
    Ok(AclTest { fetch, matcher })
}

/// A fetch name → what it reads, its sample type and the match its suffix implies.
fn fetch(name: &str) -> Result<(Fetch, Kind, Option<MatchMethod>), String> {
    let unknown = || format!("unknown fetch `{name}`: expected one of {FETCHES}");
    let (base, arg) = match name.split_once('(') {
        Some((base, rest)) => {
            let arg = rest.strip_suffix(')').ok_or_else(unknown)?;
            (base, Some(arg))
        }
        None => (name, None),
    };
    if let Some(counter) = counter_fetch(base, arg)? {
        return Ok((Fetch::Counter(counter), Kind::Int, None));
    }
    let (base, suffix) = split_suffix(base);
    let fetch = match (base, arg) {
        ("hdr" | "req.hdr", Some(arg)) => header(arg)?,
        ("hdr" | "req.hdr", None) => {
            return Err(format!("`{name}` needs a header name: hdr(host)"))
        }
        ("var", Some(arg)) => Fetch::Var(super::super::http_rules::var_name(arg)?),
        ("http_auth", Some(list)) => Fetch::HttpAuth(userlist(list)?),
        ("http_auth_group", Some(list)) => Fetch::HttpAuthGroup(userlist(list)?),
        ("http_auth" | "http_auth_group", None) => {
            return Err(format!("`{name}` needs a userlist name: {name}(admins)"))
        }
        ("fc_pp_tlv", Some(id)) => Fetch::PpTlv(super::super::proxy_v2::tlv_id(id)?),
        ("fc_pp_tlv", None) => return Err(format!("`{name}` needs a TLV type: fc_pp_tlv(0xE1)")),
        (_, Some(_)) => return Err(format!("fetch `{base}` takes no argument")),
        ("path", None) => Fetch::Path,
        ("url", None) => Fetch::Url,
        ("ssl_fc_sni" | "req.ssl_sni" | "req_ssl_sni", None) => Fetch::Sni,
        _ if suffix.is_some() => return Err(unknown()),
        ("query", None) => Fetch::Query,
        ("method", None) => Fetch::Method,
        ("req.ver" | "req_ver", None) => Fetch::Version,
        ("src", None) => Fetch::Src,
        ("dst_port", None) => Fetch::DstPort,
        ("ssl_fc", None) => Fetch::Tls,
        ("req.ssl_hello_type" | "req_ssl_hello_type", None) => Fetch::HelloType,
        ("always_true", None) => Fetch::Constant(true),
        ("always_false", None) => Fetch::Constant(false),
        _ => return Err(unknown()),
    };
    let kind = match fetch {
        Fetch::Src => Kind::Ip,
        Fetch::DstPort | Fetch::HelloType => Kind::Int,
        Fetch::Tls | Fetch::Constant(_) | Fetch::HttpAuth(_) => Kind::Bool,
        _ => Kind::Text,
    };
    Ok((fetch, kind, suffix))
}

/// The userlist a fetch names (checked to exist once the userlists are read).
fn userlist(name: &str) -> Result<UserlistRef, String> {
    if name.is_empty() {
        return Err("name a userlist: http_auth(admins)".into());
    }
    Ok(UserlistRef {
        name: name.to_owned(),
        index: 0,
    })
}

/// A fetch used as a key (`track-sc0 src`, `track-sc1 req.hdr(x-api-key)`): a plain sample,
/// no match suffix, no counter.
pub(crate) fn key_fetch(name: &str) -> Result<Fetch, String> {
    match fetch(name)? {
        (Fetch::Counter(_), _, _) | (_, Kind::Bool, _) => {
            Err(format!("`{name}` cannot be a table key"))
        }
        (_, _, Some(_)) => Err(format!(
            "`{name}` is a match, not a sample: write it without its suffix"
        )),
        (fetch, _, None) => Ok(fetch),
    }
}

/// `sc0_http_req_rate`, `sc_http_req_rate(0)`, `src_http_req_rate(T)`; `None` for a name of
/// another family.
fn counter_fetch(base: &str, arg: Option<&str>) -> Result<Option<CounterFetch>, String> {
    let (source, name) = if let Some(name) = base.strip_prefix("src_") {
        let table = TableRef::named(arg.map(str::trim).unwrap_or(""));
        (CounterSource::Src(table), name)
    } else if let Some(name) = base.strip_prefix("sc_") {
        let slot = match arg.map(str::trim) {
            Some(text) if text.contains(',') => {
                return Err(format!(
                    "`{base}({text})`: a table argument is not supported: the entry tracked in \
                     the slot is read"
                ))
            }
            Some(text) => slot(text, base)?,
            None => return Err(format!("`{base}` needs a slot: {base}(0)")),
        };
        (CounterSource::Tracked(slot), name)
    } else if let Some((digit, name)) = base
        .strip_prefix("sc")
        .and_then(|rest| rest.split_at_checked(1))
        .filter(|(d, n)| d.bytes().all(|b| b.is_ascii_digit()) && n.starts_with('_'))
    {
        if arg.is_some() {
            return Err(format!(
                "`{base}`: a table argument is not supported: the entry tracked in the slot is read"
            ));
        }
        (CounterSource::Tracked(slot(digit, base)?), &name[1..])
    } else {
        return Ok(None);
    };
    let op = match name {
        "get_gpc0" => CounterOp::Get(Counter::Gpc0),
        "inc_gpc0" => CounterOp::IncGpc0,
        "clr_gpc0" => CounterOp::ClrGpc0,
        other => match Counter::named(other).filter(|c| *c != Counter::Gpc0) {
            Some(counter) => CounterOp::Get(counter),
            None => return Ok(None),
        },
    };
    Ok(Some(CounterFetch { source, op }))
}

fn slot(text: &str, fetch: &str) -> Result<u8, String> {
    match text.parse::<u8>() {
        Ok(n) if n < TRACK_SLOTS => Ok(n),
        _ => Err(format!(
            "`{fetch}`: slot `{text}` does not exist: tern tracks in slots 0, 1 and 2"
        )),
    }
}

fn header(arg: &str) -> Result<Fetch, String> {
    if arg.contains(',') {
        return Err(format!(
            "hdr({arg}): an occurrence argument is not supported yet"
        ));
    }
    if arg.is_empty() || !arg.bytes().all(super::super::is_token_byte) {
        return Err(format!("hdr({arg}): not a header name"));
    }
    Ok(Fetch::Header(arg.to_ascii_lowercase()))
}

/// `path_beg` → (`path`, beg).
fn split_suffix(base: &str) -> (&str, Option<MatchMethod>) {
    let suffixes = [
        ("_beg", MatchMethod::Text(TextMatch::Beg)),
        ("_end", MatchMethod::Text(TextMatch::End)),
        ("_sub", MatchMethod::Text(TextMatch::Sub)),
        ("_dom", MatchMethod::Text(TextMatch::Dom)),
        ("_dir", MatchMethod::Text(TextMatch::Dir)),
        ("_reg", MatchMethod::Reg),
        ("_len", MatchMethod::Len),
    ];
    suffixes
        .iter()
        .find_map(|(suffix, method)| {
            let stem = base.strip_suffix(suffix)?;
            ["hdr", "path", "url", "ssl_fc_sni"]
                .contains(&stem)
                .then_some((stem, Some(*method)))
        })
        .unwrap_or((base, None))
}

fn method_named(name: &str) -> Result<MatchMethod, String> {
    Ok(match name {
        "str" => MatchMethod::Text(TextMatch::Str),
        "beg" => MatchMethod::Text(TextMatch::Beg),
        "end" => MatchMethod::Text(TextMatch::End),
        "sub" => MatchMethod::Text(TextMatch::Sub),
        "dom" => MatchMethod::Text(TextMatch::Dom),
        "dir" => MatchMethod::Text(TextMatch::Dir),
        "reg" => MatchMethod::Reg,
        "found" => MatchMethod::Found,
        "len" => MatchMethod::Len,
        "int" => MatchMethod::Int,
        "ip" => MatchMethod::Ip,
        "bool" => MatchMethod::Bool,
        other => {
            return Err(format!(
                "unknown match method `{other}`: expected one of {METHODS}"
            ))
        }
    })
}

fn default_method(kind: Kind) -> MatchMethod {
    match kind {
        Kind::Text => MatchMethod::Text(TextMatch::Str),
        Kind::Int => MatchMethod::Int,
        Kind::Ip => MatchMethod::Ip,
        Kind::Bool => MatchMethod::Bool,
    }
}

fn matcher(
    kind: Kind,
    method: MatchMethod,
    icase: bool,
    patterns: &[String],
) -> Result<Matcher, String> {
    let none_allowed = matches!(method, MatchMethod::Found | MatchMethod::Bool);
    if none_allowed && !patterns.is_empty() {
        return Err(format!("takes no patterns, found `{}`", patterns[0]));
    }
    if !none_allowed && patterns.is_empty() {
        return Err("needs at least one pattern (or `-m found`)".into());
    }
    Ok(match (kind, method) {
        (_, MatchMethod::Found) => Matcher::Found,
        (Kind::Text, MatchMethod::Text(how)) => Matcher::Text {
            how,
            icase,
            patterns: patterns.iter().map(|p| p.as_bytes().into()).collect(),
        },
        (Kind::Text, MatchMethod::Reg) => Matcher::Regex(collect(patterns, |p| regex(p, icase))?),
        (Kind::Text, MatchMethod::Len) => Matcher::Len(int_ranges(patterns)?),
        (Kind::Int, MatchMethod::Int) => Matcher::Int(int_ranges(patterns)?),
        (Kind::Ip, MatchMethod::Ip) => Matcher::Ip(collect(patterns, network)?),
        (Kind::Bool, MatchMethod::Bool) => Matcher::Bool,
        _ => return Err("this match method does not apply to this fetch's sample".into()),
    })
}

fn collect<T>(
    patterns: &[String],
    f: impl Fn(&str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    patterns.iter().map(|p| f(p)).collect()
}

pub(crate) fn regex(pattern: &str, icase: bool) -> Result<Regex, String> {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(icase)
        .size_limit(1 << 20)
        .build()
        .map(Regex)
        .map_err(|e| format!("bad regular expression `{pattern}`: {e}"))
}

/// Integer patterns: `N`, `N:M`, `:M`, `N:`, or an operator and a number (`gt 5`).
fn int_ranges(patterns: &[String]) -> Result<Vec<IntRange>, String> {
    let mut out = Vec::new();
    let mut it = patterns.iter();
    while let Some(p) = it.next() {
        let op = ["eq", "lt", "le", "gt", "ge"].contains(&p.as_str());
        let range = if op {
            let n = number(it.next().ok_or_else(|| format!("`{p}` needs a number"))?)?;
            match p.as_str() {
                "eq" => (n, n),
                "lt" => (0, n.checked_sub(1).ok_or("`lt 0` matches nothing")?),
                "le" => (0, n),
                "gt" => (n.checked_add(1).ok_or("`gt` overflows")?, u64::MAX),
                _ => (n, u64::MAX),
            }
        } else {
            match p.split_once(':') {
                Some((low, high)) => (
                    if low.is_empty() { 0 } else { number(low)? },
                    if high.is_empty() {
                        u64::MAX
                    } else {
                        number(high)?
                    },
                ),
                None => (number(p)?, number(p)?),
            }
        };
        if range.0 > range.1 {
            return Err(format!("empty range `{p}`"));
        }
        out.push(IntRange {
            low: range.0,
            high: range.1,
        });
    }
    Ok(out)
}

fn number(text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a non-negative integer"))
}

/// `10.0.0.0/8`, `10.0.0.0/255.0.0.0`, `::1`, `2001:db8::/32`.
pub(crate) fn network(text: &str) -> Result<IpNet, String> {
    let bad =
        || format!("`{text}` is not an address or network (host names are not resolved here)");
    let (addr, prefix) = match text.split_once('/') {
        Some((addr, prefix)) => (addr, Some(prefix)),
        None => (text, None),
    };
    let addr: IpAddr = addr.parse().map_err(|_| bad())?;
    let bits = if addr.is_ipv4() { 32 } else { 128 };
    let prefix = match prefix {
        None => bits,
        Some(p) => match (p.parse::<u8>(), p.parse::<std::net::Ipv4Addr>(), addr) {
            (Ok(n), _, _) if n <= bits => n,
            (_, Ok(mask), IpAddr::V4(_)) => mask_len(u32::from(mask)).ok_or_else(bad)?,
            _ => return Err(bad()),
        },
    };
    Ok(IpNet { addr, prefix })
}

/// `255.255.0.0` → 16; a mask with holes → None.
fn mask_len(mask: u32) -> Option<u8> {
    let ones = mask.leading_ones();
    (mask.checked_shl(ones).unwrap_or(0) == 0).then_some(ones as u8)
}

/// Patterns of a `-f` file: one per line, blank lines and `#` comments skipped.
fn patterns_from_file(path: &Path) -> Result<Vec<String>, String> {
    let text = crate::files::read_to_string(path)
        .map_err(|e| format!("cannot read pattern file {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}
