//! What redirect and rewrite rules need beyond a header value: HAProxy's `redirect`
//! (`location`, `prefix`, `scheme` and their options), the parts of the request line
//! `set-*` / `replace-*` act on, the header-name patterns of `del-header -m`, and the
//! expansion of `\N` back-references in a replacement (HAProxy's `exp_replace`).
//!
//! Semantics follow HAProxy's configuration manual: a `replace-*` rule replaces the *whole*
//! matched part (the path, the target, a field value) with its replacement when the regex
//! finds a match anywhere in it, not only the matched substring.

use super::condition::Regex;
use super::http_rules::ValueFormat;

/// The statuses a redirect may answer with (HAProxy's `code`).
pub const REDIRECT_CODES: &[u16] = &[301, 302, 303, 307, 308];

/// One redirect rule, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Redirect {
    /// What the `Location` is made of.
    pub to: RedirectTo,
    /// 301, 302 (the default), 303, 307 or 308.
    pub code: u16,
    /// `drop-query`: the query string of the request is not carried over (`prefix`, `scheme`).
    pub drop_query: bool,
    /// `append-slash`: a `/` ends the location if it does not already (`prefix`, `scheme`).
    pub append_slash: bool,
    /// The `Set-Cookie` value sent with the redirect (`set-cookie NAME[=V]` becomes
    /// `NAME[=V]; path=/;`, `clear-cookie NAME` becomes `NAME; path=/; Max-Age=0;`).
    pub cookie: Option<String>,
}

/// How the `Location` is built.
#[derive(Debug, Clone, PartialEq)]
pub enum RedirectTo {
    /// `location L`: exactly L.
    Location(ValueFormat),
    /// `prefix P`: P then the request's path and query (a P of exactly `/` adds nothing).
    Prefix(ValueFormat),
    /// `scheme S`: S, `://`, the request's `Host`, then its path and query.
    Scheme(ValueFormat),
}

/// A part of the request line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinePart {
    Method,
    /// The path, without the query string.
    Path,
    /// The query string, without its `?`.
    Query,
    /// The whole target (path and query).
    Uri,
}

/// Which header names a `del-header -m` rule removes (`str` is a plain `del-header`).
#[derive(Debug, Clone, PartialEq)]
pub enum NamePattern {
    /// `-m beg`: names starting with the text (case-insensitive, as header names are).
    Begins(String),
    /// `-m end`.
    Ends(String),
    /// `-m sub`.
    Contains(String),
    /// `-m reg`: names the regex matches.
    Regex(Regex),
}

impl NamePattern {
    /// Whether the field name `name` is one to remove.
    pub fn matches(&self, name: &[u8]) -> bool {
        let lower = |t: &str, at: usize| {
            name.get(at..at + t.len())
                .is_some_and(|n| n.eq_ignore_ascii_case(t.as_bytes()))
        };
        match self {
            NamePattern::Begins(t) => lower(t, 0),
            NamePattern::Ends(t) => name.len() >= t.len() && lower(t, name.len() - t.len()),
            NamePattern::Contains(t) => {
                t.is_empty()
                    || name
                        .windows(t.len())
                        .any(|w| w.eq_ignore_ascii_case(t.as_bytes()))
            }
            NamePattern::Regex(r) => r.0.is_match(name),
        }
    }
}

impl Regex {
    /// When the regex matches `subject` somewhere, appends `template` to `out` with each `\N`
    /// (N a digit) replaced by group N of the first match (empty when that group did not
    /// take part) and returns true; otherwise appends nothing and returns false. A `\` not
    /// followed by a digit is kept as it is, as in HAProxy.
    pub fn replace_whole(&self, subject: &[u8], template: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(caps) = self.0.captures(subject) else {
            return false;
        };
        let mut rest = template;
        while let Some(at) = rest.iter().position(|&b| b == b'\\') {
            out.extend_from_slice(&rest[..at]);
            match rest.get(at + 1) {
                Some(d @ b'0'..=b'9') => {
                    let group = usize::from(d - b'0');
                    if let Some(m) = caps.get(group) {
                        out.extend_from_slice(m.as_bytes());
                    }
                    rest = &rest[at + 2..];
                }
                _ => {
                    out.push(b'\\');
                    rest = &rest[at + 1..];
                }
            }
        }
        out.extend_from_slice(rest);
        true
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn re(s: &str) -> Regex {
        Regex(regex::bytes::Regex::new(s).unwrap())
    }

    #[test]
    fn replace_whole_expands_groups_and_keeps_other_backslashes() {
        let mut out = Vec::new();
        assert!(re("^/api/(.*)").replace_whole(b"/api/v1/x", b"/v2/\\1\\z\\9", &mut out));
        assert_eq!(out, b"/v2/v1/x\\z");
        out.clear();
        assert!(!re("^/api/").replace_whole(b"/web", b"x", &mut out));
        assert!(out.is_empty());
        // The whole subject is replaced, not only the matched part (HAProxy's semantics).
        assert!(re("b").replace_whole(b"abc", b"X", &mut out));
        assert_eq!(out, b"X");
    }

    #[test]
    fn name_patterns_ignore_case() {
        assert!(NamePattern::Begins("x-debug-".into()).matches(b"X-Debug-A"));
        assert!(!NamePattern::Begins("x-debug-".into()).matches(b"X-Deb"));
        assert!(NamePattern::Ends("-id".into()).matches(b"X-Req-ID"));
        assert!(NamePattern::Contains("secret".into()).matches(b"X-Secret-Key"));
        assert!(NamePattern::Regex(re("^X-[0-9]+$")).matches(b"X-12"));
        assert!(!NamePattern::Regex(re("^X-[0-9]+$")).matches(b"X-a"));
    }
}
