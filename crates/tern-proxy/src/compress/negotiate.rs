//! Which coding a request accepts (RFC 9110 §12.5.3), among those configured.
//!
//! Each element of `Accept-Encoding` (all its fields) is a coding with an optional weight
//! `q` (0 to 1, three decimals; 1 when absent). A configured coding is acceptable when its
//! token is listed with q > 0, or, not listed, when `*` is listed with q > 0: `gzip;q=0, *`
//! refuses gzip and accepts the rest. The highest weight wins; between equal weights, the
//! order of `algos` (the operator's preference; HAProxy takes the client's first). No
//! `Accept-Encoding`, or nothing acceptable, means no compression: identity is always
//! acceptable in practice, so tern never answers 406.
//!
//! HAProxy also refuses old user agents known to mishandle compressed responses ("Mozilla/4"
//! but MSIE 6 SP2 and later); tern does the same.

use tern_config::{Coding, Compression};
use tern_h1::{HeaderEdits, Method, RequestHead, Version};

/// What a request negotiated: the coding, and the table in force for its response.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Offer<'a> {
    pub coding: Coding,
    pub config: &'a Compression,
}

/// The coding for the response to `head` (parsed from `buf`) under the frontend's and the
/// backend's tables, if any; with `offload` the request's `Accept-Encoding` is then deleted
/// through `edits`. HEAD and HTTP/1.0 requests are never compressed (HAProxy's rules).
pub(crate) fn negotiate<'a>(
    frontend: Option<&'a Compression>,
    backend: Option<&'a Compression>,
    head: &RequestHead,
    buf: &[u8],
    edits: &mut HeaderEdits,
) -> Option<Offer<'a>> {
    let (config, offload) = Compression::effective(frontend, backend)?;
    if head.version() != Version::Http11 || head.method() == Method::Head {
        return None;
    }
    let named = |name: &'static [u8]| {
        head.fields()
            .iter()
            .filter(move |f| f.name(buf).eq_ignore_ascii_case(name))
            .map(|f| f.value(buf))
    };
    if named(b"user-agent").any(old_mozilla) {
        return None;
    }
    let coding = choose(&config.algos, named(b"accept-encoding"))?;
    if offload {
        edits.delete(b"accept-encoding");
    }
    Some(Offer { coding, config })
}

/// The best of `algos` for the `Accept-Encoding` field values `values` (read several times,
/// nothing copied).
pub(super) fn choose<'v>(
    algos: &[Coding],
    values: impl Iterator<Item = &'v [u8]> + Clone,
) -> Option<Coding> {
    let elements = || {
        values
            .clone()
            .flat_map(|v| v.split(|b| *b == b','))
            .filter_map(element)
    };
    let star = elements().find(|(t, _)| *t == b"*").map(|(_, q)| q);
    let mut best: Option<(Coding, u16)> = None;
    for &coding in algos {
        let token = coding.token().as_bytes();
        let q = elements()
            .find(|(t, _)| t.eq_ignore_ascii_case(token))
            .map(|(_, q)| q)
            .or(star)
            .unwrap_or(0);
        if q > 0 && best.is_none_or(|(_, b)| q > b) {
            best = Some((coding, q));
        }
    }
    best.map(|(c, _)| c)
}

/// One element `token *( OWS ";" OWS param )`: the token and its weight in thousandths.
fn element(raw: &[u8]) -> Option<(&[u8], u16)> {
    let mut parts = raw.split(|b| *b == b';');
    let token = parts.next()?.trim_ascii();
    if token.is_empty() {
        return None;
    }
    let mut q = 1000;
    for param in parts {
        let param = param.trim_ascii();
        if param.len() >= 2 && param[..2].eq_ignore_ascii_case(b"q=") {
            q = qvalue(&param[2..]).unwrap_or(0);
        }
    }
    Some((token, q))
}

/// `qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`, in thousandths.
fn qvalue(v: &[u8]) -> Option<u16> {
    let (int, frac) = match v.iter().position(|b| *b == b'.') {
        Some(dot) => (&v[..dot], &v[dot + 1..]),
        None => (v, &[][..]),
    };
    if frac.len() > 3 || !frac.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let mut thousandths = 0u16;
    for i in 0..3 {
        thousandths = thousandths * 10 + frac.get(i).map_or(0, |d| u16::from(d - b'0'));
    }
    match int {
        b"0" => Some(thousandths),
        b"1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

/// HAProxy's test for user agents that mishandle compression: "Mozilla/4" unless MSIE 6 with
/// XP SP2 ("SV1") or MSIE 7 and later.
pub(super) fn old_mozilla(ua: &[u8]) -> bool {
    if !ua.starts_with(b"Mozilla/4") {
        return false;
    }
    let msie = ua.get(25..30) == Some(&b"MSIE "[..]);
    match ua.get(30) {
        Some(v) if msie && *v > b'6' => false,
        Some(b'6') if msie => ua.get(51..54) != Some(&b"SV1"[..]),
        _ => true,
    }
}
