//! Writing a compiled HAProxy log-format ([`LogTemplate`]): the frontend's `log_format` on the
//! writer thread (values from a [`Record`], `record_values.rs`), and its `unique_id_format` on
//! the request path (values of the request being routed, `rules/request_id.rs`).
//!
//! One walk of the pieces for both; each side answers [`Values`]. HAProxy's conventions: a
//! value that is absent or empty is written `-` (`""` when quoted), `%{+Q}` quotes strings,
//! `%{+X}` writes addresses, ports, `%Ts`, `%ms`, `%rt` and `%pid` in hexadecimal (`%04X`, and
//! the address as its bytes), `%{+E}` escapes `"`, `\` and `]` with a `\`, and `%o` applies
//! its flags to every following piece. Spaces are separators: one is written for a run of
//! them, none at the start (HAProxy's `last_isspace`). Strings from the network are escaped as HAProxy
//! does: bytes below 32 or above 126, `"` and `#` as `#XX`, and in captured fields `{`, `|`
//! and `}` too.

use std::net::IpAddr;
use std::sync::OnceLock;

use tern_config::{Fetch, LogFlags, LogPiece, LogTemplate, LogVar};

use super::format::int;

/// What a template reads.
pub(crate) trait Values {
    /// Appends `var` (nothing when it has no value: the caller writes `-`).
    fn var(&self, var: LogVar, flags: LogFlags, out: &mut Vec<u8>);
    /// Appends the sample of `slot` (`fetch` in the template).
    fn sample(&self, fetch: &Fetch, slot: usize, out: &mut Vec<u8>);
}

/// Appends the line `template` makes of `values`.
pub(crate) fn render(template: &LogTemplate, values: &dyn Values, out: &mut Vec<u8>) {
    let mut every = LogFlags::default();
    // HAProxy's `last_isspace`: a separator at the start or after another writes nothing.
    let mut spaced = true;
    for piece in &template.pieces {
        match piece {
            LogPiece::Separator if spaced => continue,
            LogPiece::Separator => out.push(b' '),
            LogPiece::Text(text) => out.extend_from_slice(text.as_bytes()),
            LogPiece::Flags(flags) => {
                every = *flags;
                continue;
            }
            LogPiece::Var { var, flags } => {
                let flags = merged(every, *flags);
                let before = out.len();
                field(out, flags, Kind::of(*var), |out| {
                    values.var(*var, flags, out)
                });
                if out.len() == before && *var != LogVar::Query {
                    // No capture block (no request): the next separator still counts as the
                    // only one, as in HAProxy (whose empty `%HQ` does count).
                    continue;
                }
            }
            LogPiece::Sample { fetch, flags, slot } => {
                let flags = merged(every, *flags);
                field(out, flags, Kind::Text, |out| {
                    values.sample(fetch, *slot, out)
                });
            }
        }
        spaced = *piece == LogPiece::Separator;
    }
}

/// How the renderer treats a variable's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A string: quoted with `Q`, escaped with `E`, `-` when empty.
    Text,
    /// A number or a date: `-` when empty.
    Number,
    /// Written whole by [`Values::var`], nothing added (the captures, and `%HQ`, which is
    /// empty without a query).
    Raw,
}

impl Kind {
    fn of(var: LogVar) -> Kind {
        use LogVar::*;
        match var {
            CapturedRequest | CapturedResponse | CapturedRequestList | CapturedResponseList
            | Query => Kind::Raw,
            ClientPort | FrontendPort | ServerPort | Timestamp | Millis | Th | Ti | TR | Tw
            | Tc | Tr | Ta | Tt | Tq | Td | Tu | Status | BytesOut | BytesIn | Retries | Pid
            | RequestCounter => Kind::Number,
            _ => Kind::Text,
        }
    }
}

fn merged(every: LogFlags, own: LogFlags) -> LogFlags {
    LogFlags {
        quote: every.quote || own.quote,
        hex: every.hex || own.hex,
        escape: every.escape || own.escape,
    }
}

/// Appends one value with the flags' quoting and escaping, `-` when it is empty.
fn field(out: &mut Vec<u8>, flags: LogFlags, kind: Kind, write: impl FnOnce(&mut Vec<u8>)) {
    let quote = kind == Kind::Text && flags.quote;
    if quote {
        out.push(b'"');
    }
    let start = out.len();
    write(out);
    if out.len() == start && !quote && kind != Kind::Raw {
        out.push(b'-');
    }
    if kind == Kind::Text && flags.escape && out[start..].iter().any(|b| b"\"\\]".contains(b)) {
        let written = out.split_off(start);
        for b in written {
            if b"\"\\]".contains(&b) {
                out.push(b'\\');
            }
            out.push(b);
        }
    }
    if quote {
        out.push(b'"');
    }
}

/// Which bytes a string is written with as `#XX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// Requests and samples: bytes outside 32..=126, `"` and `#` (HAProxy's URL map).
    Url,
    /// Captured fields: also `{`, `|` and `}` (HAProxy's header map).
    Header,
}

/// Appends `bytes` with the bytes `map` names as `#XX`.
pub(crate) fn encoded(out: &mut Vec<u8>, bytes: &[u8], map: Escape) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in bytes {
        let escaped = !(32..=126).contains(&b)
            || b == b'"'
            || b == b'#'
            || (map == Escape::Header && matches!(b, b'{' | b'|' | b'}'));
        if escaped {
            out.extend_from_slice(&[b'#', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        } else {
            out.push(b);
        }
    }
}

/// Appends a number, in decimal or as HAProxy's `%04X`.
pub(crate) fn number(out: &mut Vec<u8>, v: u64, hex: bool) {
    if hex {
        out.extend_from_slice(format!("{v:04X}").as_bytes());
    } else {
        int(out, i64::try_from(v).unwrap_or(i64::MAX));
    }
}

/// Appends an address: dotted or colon notation, or its bytes in hexadecimal.
pub(crate) fn address(out: &mut Vec<u8>, ip: IpAddr, hex: bool) {
    if !hex {
        out.extend_from_slice(ip.to_canonical().to_string().as_bytes());
        return;
    }
    let bytes: Vec<u8> = match ip.to_canonical() {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    for b in bytes {
        out.extend_from_slice(format!("{b:02X}").as_bytes());
    }
}

/// Appends `captures` as `%hr` (`{a|b}`) or, `list`, as `%hrl` (`a b`, `-` for an empty
/// one, each quoted with `quote`).
pub(crate) fn captures(out: &mut Vec<u8>, captures: &[Vec<u8>], list: bool, quote: bool) {
    if captures.is_empty() {
        return;
    }
    if !list {
        out.push(b'{');
    }
    for (i, value) in captures.iter().enumerate() {
        if i > 0 {
            out.push(if list { b' ' } else { b'|' });
        }
        if list && quote {
            out.push(b'"');
        }
        if list && value.is_empty() && !quote {
            out.push(b'-');
        }
        encoded(out, value, Escape::Header);
        if list && quote {
            out.push(b'"');
        }
    }
    if !list {
        out.push(b'}');
    }
}

/// The machine's host name (`%H`), read once.
pub(crate) fn hostname() -> &'static str {
    static HOST: OnceLock<String> = OnceLock::new();
    HOST.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_owned())
            .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_graphic()))
            .unwrap_or_default()
    })
}

/// The parts of a request target: `%HP` (without the query), `%HPO` (the path only, without
/// scheme and authority), `%HQ` (`?` and the query, empty without one).
pub(crate) fn target_parts(target: &[u8]) -> (&[u8], &[u8], &[u8]) {
    let (uri, query) = match target.iter().position(|&b| b == b'?') {
        Some(at) => target.split_at(at),
        None => (target, &b""[..]),
    };
    let path = match uri.windows(3).position(|w| w == b"://") {
        Some(at) => {
            let after = &uri[at + 3..];
            after
                .iter()
                .position(|&b| b == b'/')
                .map_or(&b"/"[..], |p| &after[p..])
        }
        None => uri,
    };
    (uri, path, query)
}
