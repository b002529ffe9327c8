//! The configuration: TOML files, HAProxy `.cfg` files, and the two small languages inside
//! them (ACL expressions and conditions, header values in HAProxy's log-format).
//!
//! The operator writes these bytes, so the bar is: no panic, no hang, and every answer usable
//! (errors located on a line of the file, a translation that is valid TOML, parsed values that
//! keep their documented invariants). Inputs that are not UTF-8 are skipped, as the loader
//! refuses them before any parser sees them.
//!
//! Validation reads files the configuration names (certificates, pattern files) and resolves
//! server and syslog host names. The checks give a base directory that does not exist, so
//! relative paths lead nowhere; the `config_toml` and `haproxy_cfg` targets can still name any
//! absolute path or host, so `scripts/fuzz` runs them in a network namespace of their own
//! (no name reaches a resolver) with standard input closed. The `acl` and `header_value`
//! targets place the fuzzed text inside a fixed configuration whose addresses are literal.

use std::net::IpAddr;
use std::path::Path;

use tern_config::{
    haproxy, Condition, Config, ConfigErrors, Facts, Fetch, HttpAction, Piece, ValueFormat,
};

/// Where the fuzzed file pretends to live: a directory that does not exist.
pub(crate) const FILE: &str = "/nonexistent-tern-fuzz/tern.toml";
const CFG_FILE: &str = "/nonexistent-tern-fuzz/haproxy.cfg";

/// Every error names a line of the file (1-based; one past the end for "missing at the end").
fn check_errors(errors: &ConfigErrors, text: &str) {
    assert!(!errors.0.is_empty(), "an empty error list");
    let lines = text.lines().count().max(1);
    for e in &errors.0 {
        if let Some(line) = e.line {
            assert!(
                (1..=lines + 1).contains(&line),
                "line {line} of {lines}: {e}"
            );
        }
    }
    let _ = errors.to_string();
}

/// `config_toml`: [`tern_config::parse`] on any text.
pub fn config_toml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match tern_config::parse(text, Path::new(FILE)) {
        Ok(config) => {
            let _ = config.summary();
        }
        Err(errors) => check_errors(&errors, text),
    }
}

/// `haproxy_cfg`: the lexer, the sections and the translator; then the TOML stage on the
/// translation. The translation must be TOML, and the same text each time.
pub fn haproxy_cfg(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = Path::new(CFG_FILE);
    let converted = match haproxy::convert(text, file) {
        Ok(c) => c,
        Err(errors) => return check_errors(&errors, text),
    };
    if let Err(e) = converted.toml.parse::<toml::Table>() {
        panic!("the translation is not TOML: {e}\n{}", converted.toml);
    }
    // `tern convert` prints the same text every time (no hash map order leaks into it).
    let again = haproxy::convert(text, file).map(|c| c.toml);
    assert_eq!(
        again.as_ref(),
        Ok(&converted.toml),
        "a second translation differs"
    );
    let lines = text.lines().count().max(1);
    for w in &converted.warnings {
        assert!(
            (1..=lines).contains(&w.line),
            "warning on line {}: {w}",
            w.line
        );
    }
    let _ = haproxy::format_warnings(&converted.warnings);
    match converted.validate(file) {
        Ok(config) => {
            let _ = config.summary();
        }
        Err(errors) => check_errors(&errors, text),
    }
}

/// `s` as a TOML basic string, quotes included.
pub(crate) fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A configuration with one frontend around `rules` (TOML lines of the frontend table).
pub(crate) fn frontend_config(rules: &str) -> String {
    format!(
        "[[frontend]]\nname = \"f\"\nbind = [\"127.0.0.1:8080\"]\ndefault_backend = \"b\"\n\
         {rules}\n\n[[backend]]\nname = \"b\"\nservers = [{{ name = \"s\", address = \"127.0.0.1:9000\" }}]\n"
    )
}

/// `acl`: the first line of the input is an ACL expression (named `a`), the rest a condition
/// of a `use_backend` rule; an accepted condition is evaluated on a few requests.
pub fn acl(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (expr, cond) = text.split_once('\n').unwrap_or((text, "a"));
    let rules = format!(
        "acl = {{ a = {}, b = [\"path_beg /x\", \"src 10.0.0.0/8\"] }}\n\
         use_backend = [{{ backend = \"b\", if = {} }}]",
        toml_string(expr),
        toml_string(cond),
    );
    let config = match tern_config::parse(&frontend_config(&rules), Path::new(FILE)) {
        Ok(c) => c,
        Err(errors) => return assert!(!errors.0.is_empty()),
    };
    let condition = &only_frontend(&config).use_backend[0].condition;
    let _ = condition.fetches().count();
    for request in requests(expr.as_bytes(), cond.as_bytes()) {
        let _ = condition.matches(&request);
    }
    let _: &Condition = condition;
}

pub(crate) fn only_frontend(config: &Config) -> &tern_config::Frontend {
    assert_eq!(config.frontends.len(), 1);
    &config.frontends[0]
}

/// A request as a condition sees it.
#[derive(Debug)]
struct Request<'a> {
    method: &'a [u8],
    url: &'a [u8],
    path: &'a [u8],
    headers: Vec<(&'a str, &'a [u8])>,
    version: (u8, u8),
    src: IpAddr,
    tls: bool,
    sni: Option<&'a str>,
}

impl Facts for Request<'_> {
    fn method(&self) -> &[u8] {
        self.method
    }
    fn url(&self) -> &[u8] {
        self.url
    }
    fn path(&self) -> &[u8] {
        self.path
    }
    fn any_header(&self, name: &str, each: &mut dyn FnMut(&[u8]) -> bool) -> bool {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .flat_map(|(_, v)| v.split(|b| *b == b','))
            .any(each)
    }
    fn version(&self) -> (u8, u8) {
        self.version
    }
    fn src(&self) -> IpAddr {
        self.src
    }
    fn dst_port(&self) -> u16 {
        8080
    }
    fn tls(&self) -> bool {
        self.tls
    }
    fn sni(&self) -> Option<&str> {
        self.sni
    }
}

/// A plain request, and requests made of the fuzzed bytes themselves (so patterns meet
/// samples that look like them).
fn requests<'a>(a: &'a [u8], b: &'a [u8]) -> [Request<'a>; 3] {
    let sni = std::str::from_utf8(b).ok();
    [
        Request {
            method: b"GET",
            url: b"/x/y?q=1",
            path: b"/x/y",
            headers: vec![("host", b"example.com"), ("x-api-key", b"k")],
            version: (1, 1),
            src: IpAddr::from([10, 1, 2, 3]),
            tls: true,
            sni: Some("example.com"),
        },
        Request {
            method: a,
            url: a,
            path: b,
            headers: vec![("host", a), ("x", b), ("cookie", a)],
            version: (1, 0),
            src: IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
            tls: false,
            sni,
        },
        Request {
            method: b"",
            url: b,
            path: a,
            headers: Vec::new(),
            version: (0, 9),
            src: IpAddr::from([255, 255, 255, 255]),
            tls: true,
            sni: Some(""),
        },
    ]
}

/// `header_value`: the input is the value of a `set-header` rule. An accepted value holds no
/// control byte but tab, only the documented fetches, and prints back to the same pieces.
pub fn header_value(data: &[u8]) {
    let Ok(value) = std::str::from_utf8(data) else {
        return;
    };
    let Some(format) = parse_value(value) else {
        return;
    };
    let mut printed = String::new();
    for piece in &format.pieces {
        match piece {
            Piece::Text(t) => {
                assert!(!t.is_empty(), "an empty text piece");
                assert!(
                    !t.chars().any(|c| c.is_control() && c != '\t'),
                    "control character in {t:?}"
                );
                printed.push_str(&t.replace('%', "%%"));
            }
            Piece::Fetch(f) => printed.push_str(&format!("%[{}]", fetch_name(f))),
        }
    }
    let again = parse_value(&printed).unwrap_or_else(|| panic!("{printed:?} is refused"));
    assert_eq!(
        again.pieces, format.pieces,
        "{value:?} printed as {printed:?}"
    );
}

/// The value of a `set-header` rule in a generated configuration, if accepted.
fn parse_value(value: &str) -> Option<ValueFormat> {
    let rules = format!(
        "http_request = [{{ action = \"set-header\", name = \"X-V\", value = {} }}]",
        toml_string(value)
    );
    let config = match tern_config::parse(&frontend_config(&rules), Path::new(FILE)) {
        Ok(c) => c,
        Err(errors) => {
            assert!(!errors.0.is_empty());
            return None;
        }
    };
    match &only_frontend(&config).http_request[0].action {
        HttpAction::SetHeader { value, .. } => Some(value.clone()),
        other => panic!("a set-header rule became {other:?}"),
    }
}

/// How a fetch is written in a header value; only the fetches documented for header values
/// may appear there.
pub(crate) fn fetch_name(f: &Fetch) -> String {
    match f {
        Fetch::Src => "src".into(),
        Fetch::DstPort => "dst_port".into(),
        Fetch::Tls => "ssl_fc".into(),
        Fetch::Sni => "ssl_fc_sni".into(),
        Fetch::Method => "method".into(),
        Fetch::Path => "path".into(),
        Fetch::Url => "url".into(),
        Fetch::Header(name) => format!("hdr({name})"),
        Fetch::Query => "query".into(),
        Fetch::Var(name) => format!("var({name})"),
        Fetch::UniqueId => "unique-id".into(),
        Fetch::PpTlv(id) => format!("fc_pp_tlv({id:#04X})"),
        other => panic!("fetch {other:?} is not documented for header values"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_string("a\"b\\c\n\u{7f}é"), r#""a\"b\\c\u000A\u007Fé""#);
    }

    #[test]
    fn the_generated_configurations_are_valid() {
        let value = parse_value("%[src] via %[hdr(Host)] 100%%");
        assert_eq!(value.map(|v| v.pieces.len()), Some(4));
        header_value(b"%[req.hdr(x-a)]x%%");
        acl(b"path_beg -i /api/\na || { src 127.0.0.1 } !b");
    }
}
