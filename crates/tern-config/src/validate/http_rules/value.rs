//! Header values: the subset of HAProxy's log-format strings tern expands.
//!
//! Literal text, `%%` for a `%`, and `%[fetch]` for one sample of the request or its
//! connection. Anything else that starts with `%` (log variables such as `%ci`, flags such as
//! `%{+Q}`, converters such as `%[src,ipmask(24)]`) is refused rather than sent as written: a
//! value that silently differs from what HAProxy would send is worse than an error.

use crate::model::{Fetch, Piece, ValueFormat};

pub(crate) const FETCHES: &str = "src, dst_port, ssl_fc, ssl_fc_sni, method, path, query, url, \
     hdr(NAME), req.hdr(NAME), var(NAME), unique-id, fc_pp_tlv(ID)";

/// Parses a header value.
pub(crate) fn parse(text: &str) -> Result<ValueFormat, String> {
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(format!(
            "control character {c:?} in a header value (line breaks would end the header)"
        ));
    }
    let mut pieces = Vec::new();
    for token in scan(text)? {
        pieces.push(match token {
            Token::Text(text) => Piece::Text(text),
            Token::Sample { expr, flags: "" } => Piece::Fetch(fetch(expr)?),
            Token::Var { name, flags: "" } => {
                let shown: String = name.chars().take(8).collect();
                return Err(format!(
                    "`%{shown}`: log-format variables and flags are not supported yet in header \
                     values; write `%%` for a `%`, or `%[fetch]` with one of {FETCHES}"
                ));
            }
            Token::Sample { flags, .. } | Token::Var { flags, .. } => {
                let shown: String = flags.chars().take(8).collect();
                return Err(format!(
                    "`%{{{shown}}}`: log-format variables and flags are not supported yet in \
                     header values; write `%%` for a `%`, or `%[fetch]` with one of {FETCHES}"
                ));
            }
        });
    }
    Ok(ValueFormat { pieces })
}

/// One part of a log-format string, as [`scan`] cuts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token<'a> {
    /// Literal text, `%%` already turned into `%`.
    Text(String),
    /// `%{flags}[expr]`, flags empty without braces.
    Sample { expr: &'a str, flags: &'a str },
    /// `%{flags}name`: a log variable (letters and digits).
    Var { name: &'a str, flags: &'a str },
}

/// Cuts a HAProxy log-format string into text, samples and variables (shared by header values
/// and log formats, which give the variables their meaning).
pub(crate) fn scan(text: &str) -> Result<Vec<Token<'_>>, String> {
    let mut tokens = Vec::new();
    let mut literal = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        literal.push_str(&rest[..at]);
        let mut after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('%') {
            literal.push('%');
            rest = tail;
            continue;
        }
        let mut flags = "";
        if let Some(inner) = after.strip_prefix('{') {
            let end = inner
                .find('}')
                .ok_or("`%{` is not closed: write `%{+Q}r`, for instance")?;
            flags = &inner[..end];
            after = &inner[end + 1..];
        }
        if !literal.is_empty() {
            tokens.push(Token::Text(std::mem::take(&mut literal)));
        }
        if let Some(inner) = after.strip_prefix('[') {
            let end = inner
                .find(']')
                .ok_or("`%[` is not closed: write `%[fetch]`")?;
            tokens.push(Token::Sample {
                expr: &inner[..end],
                flags,
            });
            rest = &inner[end + 1..];
        } else {
            let len = after
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(after.len());
            if len == 0 {
                let shown: String = after.chars().take(8).collect();
                return Err(format!(
                    "`%{shown}`: a `%` starts a variable (`%ci`), a sample (`%[src]`) or `%%`"
                ));
            }
            tokens.push(Token::Var {
                name: &after[..len],
                flags,
            });
            rest = &after[len..];
        }
    }
    literal.push_str(rest);
    if !literal.is_empty() {
        tokens.push(Token::Text(literal));
    }
    Ok(tokens)
}

/// One fetch of `%[...]`.
pub(crate) fn fetch(expr: &str) -> Result<Fetch, String> {
    if comma_outside_parentheses(expr) {
        return Err(format!("`%[{expr}]`: converters are not supported yet"));
    }
    let unknown = || format!("`%[{expr}]`: fetch not supported yet; expected one of {FETCHES}");
    Ok(match expr {
        "src" => Fetch::Src,
        "dst_port" => Fetch::DstPort,
        "ssl_fc" => Fetch::Tls,
        "ssl_fc_sni" => Fetch::Sni,
        "method" => Fetch::Method,
        "path" => Fetch::Path,
        "url" => Fetch::Url,
        "query" => Fetch::Query,
        "unique-id" => Fetch::UniqueId,
        _ if expr.starts_with("var(") && expr.ends_with(')') => {
            Fetch::Var(super::var_name(&expr[4..expr.len() - 1])?)
        }
        _ if expr.starts_with("fc_pp_tlv(") && expr.ends_with(')') => {
            let id = &expr["fc_pp_tlv(".len()..expr.len() - 1];
            Fetch::PpTlv(
                super::super::proxy_v2::tlv_id(id).map_err(|e| format!("`%[{expr}]`: {e}"))?,
            )
        }
        _ => {
            let arg = expr
                .strip_prefix("hdr(")
                .or_else(|| expr.strip_prefix("req.hdr("))
                .and_then(|a| a.strip_suffix(')'))
                .ok_or_else(unknown)?;
            if arg.contains(',') {
                return Err(format!(
                    "`%[{expr}]`: an occurrence argument is not supported yet"
                ));
            }
            if arg.is_empty() || !arg.bytes().all(super::super::is_token_byte) {
                return Err(format!("`%[{expr}]`: `{arg}` is not a header name"));
            }
            Fetch::Header(arg.to_ascii_lowercase())
        }
    })
}

/// Whether `expr` has a converter (`fetch,converter`): a comma not inside an argument list.
fn comma_outside_parentheses(expr: &str) -> bool {
    let mut depth = 0u32;
    expr.chars().any(|c| {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        c == ',' && depth == 0
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn literal_text_percent_and_fetches() {
        let v = parse("for=%[src]; port=%[dst_port] 100%% %[hdr(X-Id)]").unwrap();
        assert_eq!(
            v.pieces,
            vec![
                Piece::Text("for=".into()),
                Piece::Fetch(Fetch::Src),
                Piece::Text("; port=".into()),
                Piece::Fetch(Fetch::DstPort),
                Piece::Text(" 100% ".into()),
                Piece::Fetch(Fetch::Header("x-id".into())),
            ]
        );
        assert_eq!(parse("").unwrap().pieces, vec![]);
        assert_eq!(
            parse("%[req.hdr(host)]").unwrap().pieces,
            vec![Piece::Fetch(Fetch::Header("host".into()))]
        );
    }

    #[test]
    fn everything_else_is_refused() {
        for (text, needle) in [
            ("%ci", "not supported yet"),
            ("%{+Q}o", "not supported yet"),
            ("50%", "starts a variable"),
            ("%[src", "not closed"),
            ("%[src,ipmask(24)]", "converters"),
            ("%[hdr(host),lower]", "converters"),
            ("%[req.cook(x)]", "fetch not supported yet"),
            ("%[hdr(a,1)]", "occurrence"),
            ("%[hdr()]", "not a header name"),
            ("a\r\nX-Injected: 1", "control character"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
        assert!(parse("tab\tok").is_ok());
    }
}
