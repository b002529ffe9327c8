//! Compiling a HAProxy log-format string (`log_format`, `unique_id_format`) into a
//! [`LogTemplate`], once, at load time.
//!
//! The string is cut by the same scanner as header values (`http_rules/value.rs` `scan`), and
//! `%[fetch]` takes the same fetches; here the variables get their meaning ([`VARIABLES`]).
//! Anything tern does not write as HAProxy would (an unknown variable, a converter, a flag
//! other than `Q`, `X`, `E`) is refused with the name of what is wrong, never written wrong.

use crate::model::{LogFlags, LogPiece, LogTemplate, LogVar, LOG_VARIABLES as VARIABLES};
use crate::validate::http_rules::value::{fetch, scan, Token};

/// HAProxy variables tern does not write, with why (docs/haproxy-migration.md lists them).
const NOT_YET: &[(&str, &str)] = &[
    (
        "ac",
        "process-wide connection counts are not kept per request",
    ),
    (
        "fc",
        "process-wide connection counts are not kept per request",
    ),
    (
        "bc",
        "process-wide connection counts are not kept per request",
    ),
    (
        "sc",
        "process-wide connection counts are not kept per request",
    ),
    ("bq", "queue positions are not kept per request"),
    ("sq", "queue positions are not kept per request"),
    ("lc", "tern keeps no per-frontend log counter"),
    ("bi", "the server connection's source address is not kept"),
    ("bp", "the server connection's source port is not kept"),
    ("Tl", "tern writes dates in UTC only"),
    ("trl", "tern writes dates in UTC only"),
];

/// Where a template is used: what its variables may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// `log_format`: anything; on a TCP frontend, samples of the connection only.
    Log { http: bool },
    /// `unique_id_format`: what is known when the request is routed.
    UniqueId,
}

/// Compiles `text`.
pub(crate) fn compile(text: &str, used: Use) -> Result<LogTemplate, String> {
    if let Some(c) = text.chars().find(|c| c.is_control() && *c != '\t') {
        return Err(format!(
            "control character {c:?} in a log format (a line break would split the line)"
        ));
    }
    let mut template = LogTemplate::default();
    for token in scan(text)? {
        let piece = match token {
            Token::Text(text) => {
                separated(&text, &mut template.pieces);
                continue;
            }
            Token::Sample { expr, flags } => {
                let fetch = fetch(expr)?;
                if used == (Use::Log { http: false }) && !tcp_sample(&fetch) {
                    return Err(format!(
                        "`%[{expr}]` reads a request, and a TCP frontend parses none: its log \
                         format takes the connection's samples (src, dst_port, ssl_fc, \
                         ssl_fc_sni, fc_pp_tlv)"
                    ));
                }
                if used == Use::UniqueId && fetch == crate::model::Fetch::UniqueId {
                    return Err("`%[unique-id]` in unique_id_format would read itself".into());
                }
                template.samples += 1;
                LogPiece::Sample {
                    fetch,
                    flags: flags_of(flags)?,
                    slot: template.samples - 1,
                }
            }
            Token::Var { name: "o", flags } => LogPiece::Flags(flags_of(flags)?),
            Token::Var { name, flags } => {
                let var = variable(name)?;
                if used == Use::UniqueId && !var.at_request() {
                    return Err(format!(
                        "`%{name}` is not known yet when the request id is made (when the \
                         request is routed); use client, frontend, date, counter and request \
                         variables"
                    ));
                }
                LogPiece::Var {
                    var,
                    flags: flags_of(flags)?,
                }
            }
        };
        template.pieces.push(piece);
    }
    Ok(template)
}

/// Whether a TCP frontend's log line can have `fetch`: what its connection knows.
fn tcp_sample(fetch: &crate::model::Fetch) -> bool {
    use crate::model::Fetch;
    matches!(
        fetch,
        Fetch::Src | Fetch::DstPort | Fetch::Tls | Fetch::Sni | Fetch::PpTlv(_)
    )
}

/// Adds `text` as text pieces, each run of spaces a separator (HAProxy's log-format).
fn separated(text: &str, pieces: &mut Vec<LogPiece>) {
    for (i, part) in text.split(' ').enumerate() {
        if i > 0 && pieces.last() != Some(&LogPiece::Separator) {
            pieces.push(LogPiece::Separator);
        }
        if !part.is_empty() {
            pieces.push(LogPiece::Text(part.to_owned()));
        }
    }
}

/// The variable named `name`.
fn variable(name: &str) -> Result<LogVar, String> {
    if let Some((_, var)) = VARIABLES.iter().find(|(n, _)| *n == name) {
        return Ok(*var);
    }
    match NOT_YET.iter().find(|(n, _)| *n == name) {
        Some((_, why)) => Err(format!("`%{name}` is not supported yet: {why}")),
        None => Err(format!(
            "`%{name}` is not a log-format variable tern knows; write `%%` for a `%`"
        )),
    }
}

/// Flags in braces: `+Q`, `-Q`, `+X`, `+E`, several in a row (`+Q+X`).
fn flags_of(text: &str) -> Result<LogFlags, String> {
    let mut flags = LogFlags::default();
    let mut rest = text;
    while !rest.is_empty() {
        let mut chars = rest.chars();
        let (sign, flag) = (chars.next(), chars.next());
        let on = match sign {
            Some('+') => true,
            Some('-') => false,
            _ => {
                return Err(format!(
                    "`%{{{text}}}`: flags are written `+Q`, `-Q`, `+X`, `+E`"
                ))
            }
        };
        match flag {
            Some('Q') => flags.quote = on,
            Some('X') => flags.hex = on,
            Some('E') => flags.escape = on,
            _ => {
                return Err(format!(
                    "`%{{{text}}}`: tern knows the flags Q (quote), X (hexadecimal) and E \
                     (escape)"
                ))
            }
        }
        rest = chars.as_str();
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::Fetch;

    const LOG: Use = Use::Log { http: true };

    #[test]
    fn haproxy_httplog_compiles() {
        let t = compile(
            "%ci:%cp [%tr] %ft %b/%s %TR/%Tw/%Tc/%Tr/%Ta %ST %B %CC %CS %tsc %rc %hr %hs %{+Q}r",
            LOG,
        )
        .unwrap();
        assert_eq!(
            t.pieces[0],
            LogPiece::Var {
                var: LogVar::ClientIp,
                flags: LogFlags::default()
            }
        );
        assert_eq!(t.pieces[1], LogPiece::Text(":".into()));
        assert_eq!(t.pieces[3], LogPiece::Separator);
        let last = t.pieces.last().unwrap();
        assert_eq!(
            *last,
            LogPiece::Var {
                var: LogVar::RequestLine,
                flags: LogFlags {
                    quote: true,
                    ..LogFlags::default()
                }
            }
        );
        assert_eq!(t.samples, 0);
    }

    #[test]
    fn unique_id_example_and_samples() {
        let t = compile("%{+X}o %ci:%cp_%fi:%fp_%Ts_%rt:%pid", Use::UniqueId).unwrap();
        assert_eq!(
            t.pieces[0],
            LogPiece::Flags(LogFlags {
                hex: true,
                ..LogFlags::default()
            })
        );
        let t = compile("%[hdr(host)] %{+Q}[src] 100%%", LOG).unwrap();
        assert_eq!(t.samples, 2);
        assert!(matches!(
            &t.pieces[0],
            LogPiece::Sample { fetch: Fetch::Header(h), slot: 0, .. } if h == "host"
        ));
        assert_eq!(
            t.pieces[t.pieces.len() - 2..],
            [LogPiece::Separator, LogPiece::Text("100%".into())]
        );
        let t = compile("a   b ", LOG).unwrap();
        assert_eq!(
            t.pieces,
            [
                LogPiece::Text("a".into()),
                LogPiece::Separator,
                LogPiece::Text("b".into()),
                LogPiece::Separator
            ]
        );
    }

    #[test]
    fn what_tern_would_write_wrong_is_refused() {
        for (text, used, needle) in [
            ("%zz", LOG, "not a log-format variable"),
            ("%ac/%fc", LOG, "not supported yet"),
            ("%Tl", LOG, "UTC"),
            ("%{+Z}r", LOG, "flags"),
            ("%{Q}r", LOG, "flags"),
            ("%{+Q", LOG, "not closed"),
            ("%[src,ipmask(24)]", LOG, "converters"),
            ("%[path]", Use::Log { http: false }, "TCP frontend"),
            ("50% off", LOG, "starts a variable"),
            ("%ST", Use::UniqueId, "not known yet"),
            ("%[unique-id]", Use::UniqueId, "itself"),
            ("a\nb", LOG, "control character"),
        ] {
            let e = compile(text, used).unwrap_err();
            assert!(e.contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_tcp_frontend_logs_the_samples_of_its_connection() {
        let tcp = Use::Log { http: false };
        let t = compile("%ci %[src] %[fc_pp_tlv(0xE1)] %[ssl_fc_sni]", tcp).unwrap();
        assert_eq!(t.samples, 3);
        assert!(t.pieces.contains(&LogPiece::Sample {
            fetch: Fetch::PpTlv(0xE1),
            flags: LogFlags::default(),
            slot: 1
        }));
        assert!(compile("%[hdr(host)]", tcp)
            .unwrap_err()
            .contains("reads a request"));
    }
}
