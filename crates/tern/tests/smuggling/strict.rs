//! A reader of the requests a proxy sends to its server, with no leniency at all: what it
//! accepts, every HTTP/1.1 parser reads the same way.
//!
//! It is the recording backend's parser. A smuggling vector works when the proxy and the server
//! frame the same bytes differently; a message that follows the grammar of RFC 9112 to the
//! letter (CRLF only, no obs-fold, one framing field with a plain value, chunk-size lines that
//! fit 64 bits, extensions in their grammar, no framing or routing fields in trailers) leaves no
//! room for a second reading. So instead of guessing how each real server might err, the
//! backend refuses anything a lenient server could read another way, and the runner reports
//! the reason as "ambiguous".
//!
//! Leading zeros in a chunk size and valid chunk extensions are accepted: no parser reads them
//! two ways, and HAProxy writes the former. Whitespace around a field value is accepted too,
//! except in the framing fields, where it is one more thing to disagree on.

/// A request read to its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    pub target: String,
    /// Every `X-Parsed` value: what the proxy wrote after parsing the request (see `proxies`).
    pub markers: Vec<String>,
    pub body: Vec<u8>,
}

/// What the reader made of the bytes at the front of a buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// A request and the bytes it took.
    Complete(Request, usize),
    /// Not all of the request is there yet.
    Partial,
}

/// Largest head the reader waits for.
const MAX_HEAD: usize = 64 * 1024;

/// Reads one request from the front of `buf`, or says why the bytes are open to two readings.
pub fn read_request(buf: &[u8]) -> Result<Read, String> {
    let Some(HeadLines {
        len: head_len,
        lines,
    }) = head_lines(buf)?
    else {
        return Ok(Read::Partial);
    };
    let (method, target, version) = request_line(lines[0])?;
    let head = fields(&lines[1..])?;
    head.check(&target, version)?;
    let rest = &buf[head_len..];
    let body = match head.framing()? {
        Framing::None => Some((Vec::new(), 0)),
        Framing::Length(n) => {
            let n = usize::try_from(n).map_err(|_| "Content-Length too large".to_owned())?;
            rest.get(..n).map(|b| (b.to_vec(), n))
        }
        Framing::Chunked => chunked(rest)?,
    };
    Ok(match body {
        None => Read::Partial,
        Some((body, used)) => Read::Complete(
            Request {
                method,
                target,
                markers: head.markers,
                body,
            },
            head_len + used,
        ),
    })
}

/// A complete head: its length and its lines (without their CRLF).
struct HeadLines<'a> {
    len: usize,
    lines: Vec<&'a [u8]>,
}

/// The head at the front of `buf`, once its empty line is in; `None` before.
fn head_lines(buf: &[u8]) -> Result<Option<HeadLines<'_>>, String> {
    let mut lines = Vec::new();
    let mut at = 0;
    loop {
        let Some((line, next)) = crlf_line(buf, at)? else {
            return if buf.len() > MAX_HEAD {
                Err("head too large".into())
            } else {
                Ok(None)
            };
        };
        at = next;
        if line.is_empty() {
            if lines.is_empty() {
                return Err("empty line before the request line".into());
            }
            return Ok(Some(HeadLines { len: at, lines }));
        }
        lines.push(line);
    }
}

/// The line starting at `at`, which must end in CRLF with no CR or LF before; `None` when the
/// line is not complete yet.
fn crlf_line(buf: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, String> {
    let rest = &buf[at.min(buf.len())..];
    let Some(end) = rest.iter().position(|b| *b == b'\r' || *b == b'\n') else {
        return Ok(None);
    };
    match (rest[end], rest.get(end + 1)) {
        (b'\n', _) => Err(format!("bare LF at offset {}", at + end)),
        (b'\r', Some(b'\n')) => Ok(Some((&rest[..end], at + end + 2))),
        (b'\r', None) => Ok(None),
        _ => Err(format!("bare CR at offset {}", at + end)),
    }
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `method SP target SP HTTP/1.x`, single spaces, token method, visible ASCII target.
fn request_line(line: &[u8]) -> Result<(String, String, u8), String> {
    let text = printable(line);
    let parts: Vec<&[u8]> = line.split(|b| *b == b' ').collect();
    let [method, target, version] = parts[..] else {
        return Err(format!("request line {text:?} is not three words"));
    };
    if method.is_empty() || !method.iter().all(|b| is_tchar(*b)) {
        return Err(format!("method in {text:?}"));
    }
    if target.is_empty() || !target.iter().all(|b| (0x21..0x7f).contains(b)) {
        return Err(format!("target in {text:?}"));
    }
    let minor = match version {
        b"HTTP/1.1" => 1,
        b"HTTP/1.0" => 0,
        _ => return Err(format!("version in {text:?}")),
    };
    Ok((printable(method), printable(target), minor))
}

/// The fields of a head as far as framing and routing go.
#[derive(Debug, Default)]
struct Head {
    lengths: Vec<Vec<u8>>,
    codings: Vec<Vec<u8>>,
    hosts: Vec<Vec<u8>>,
    markers: Vec<String>,
}

enum Framing {
    None,
    Length(u64),
    Chunked,
}

/// Reads the field lines of a head.
fn fields(lines: &[&[u8]]) -> Result<Head, String> {
    let mut head = Head::default();
    for line in lines {
        let (name, value) = field_line(line)?;
        match name.to_ascii_lowercase().as_slice() {
            b"content-length" => head.lengths.push(plain(value).to_vec()),
            b"transfer-encoding" => head.codings.push(plain(value).to_vec()),
            b"host" => head.hosts.push(trim(value).to_vec()),
            b"x-parsed" => head.markers.push(printable(trim(value))),
            lower if looks_like_framing(lower) => {
                return Err(format!(
                    "field {:?} reads as a framing field",
                    printable(name)
                ))
            }
            _ => {}
        }
    }
    Ok(head)
}

/// `name ":" OWS value OWS` with a token name and no control byte but HTAB in the value.
fn field_line(line: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let text = printable(line);
    if line.first().is_some_and(|b| *b == b' ' || *b == b'\t') {
        return Err(format!("obs-fold or leading whitespace: {text:?}"));
    }
    let colon = line
        .iter()
        .position(|b| *b == b':')
        .ok_or_else(|| format!("field line without a colon: {text:?}"))?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if name.is_empty() || !name.iter().all(|b| is_tchar(*b)) {
        return Err(format!("field name in {text:?}"));
    }
    if value
        .iter()
        .any(|b| (*b < 0x20 && *b != b'\t') || *b == 0x7f)
    {
        return Err(format!("control byte in field value: {text:?}"));
    }
    Ok((name, value))
}

/// `content_length`, `transfer_encoding` and the like: a server that maps `_` to `-` (CGI)
/// frames by a field the proxy did not.
fn looks_like_framing(lower: &[u8]) -> bool {
    let folded: Vec<u8> = lower
        .iter()
        .map(|b| if *b == b'_' { b'-' } else { *b })
        .collect();
    folded == b"content-length" || folded == b"transfer-encoding"
}

/// A framing field's value: one space after the colon at most, none after the value.
fn plain(value: &[u8]) -> &[u8] {
    value.strip_prefix(b" ").unwrap_or(value)
}

fn trim(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

impl Head {
    /// Host once (HTTP/1.1) and, for an absolute-form target, equal to its authority.
    fn check(&self, target: &str, minor: u8) -> Result<(), String> {
        if self.hosts.len() > 1 || (minor == 1 && self.hosts.is_empty()) {
            return Err(format!("{} Host fields", self.hosts.len()));
        }
        if let Some(authority) = absolute_authority(target) {
            let host = self.hosts.first().map(|h| printable(h));
            if host.as_deref() != Some(authority) {
                return Err(format!(
                    "absolute-form target {target:?} with Host {host:?}: two authorities"
                ));
            }
        }
        Ok(())
    }

    /// One framing field with a plain value.
    fn framing(&self) -> Result<Framing, String> {
        match (&self.lengths[..], &self.codings[..]) {
            ([], []) => Ok(Framing::None),
            ([n], []) if !n.is_empty() && n.len() <= 18 && n.iter().all(u8::is_ascii_digit) => {
                Ok(Framing::Length(printable(n).parse().map_err(|_| "length")?))
            }
            ([], [c]) if c.eq_ignore_ascii_case(b"chunked") => Ok(Framing::Chunked),
            (lengths, codings) => Err(format!(
                "framing fields Content-Length {:?}, Transfer-Encoding {:?}",
                lengths.iter().map(|v| printable(v)).collect::<Vec<_>>(),
                codings.iter().map(|v| printable(v)).collect::<Vec<_>>()
            )),
        }
    }
}

/// The authority of an absolute-form target (userinfo removed), if it is one.
fn absolute_authority(target: &str) -> Option<&str> {
    let (_, rest) = target.split_once("://")?;
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let authority = &rest[..end];
    Some(
        authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host),
    )
}

/// The path of a target: the target itself, or what follows an absolute-form's authority
/// (`/` when nothing does).
pub fn origin_form(target: &str) -> &str {
    match target.split_once("://") {
        Some((_, rest)) => match rest.find(['/', '?']) {
            Some(i) => &rest[i..],
            None => "/",
        },
        None => target,
    }
}

/// A chunked body: its data and length, `None` if incomplete.
fn chunked(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
    let mut data = Vec::new();
    let mut at = 0;
    loop {
        let Some((line, next)) = crlf_line(buf, at)? else {
            return Ok(None);
        };
        let size = chunk_size(line)?;
        at = next;
        if size == 0 {
            break;
        }
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| at.checked_add(s))
            .ok_or("chunk size")?;
        let Some(chunk) = buf.get(at..end) else {
            return Ok(None);
        };
        data.extend_from_slice(chunk);
        match buf.get(end..end + 2) {
            None | Some([b'\r']) => return Ok(None),
            Some(b"\r\n") => at = end + 2,
            Some(_) => return Err(format!("chunk data not followed by CRLF at {end}")),
        }
    }
    loop {
        let Some((line, next)) = crlf_line(buf, at)? else {
            return Ok(None);
        };
        at = next;
        if line.is_empty() {
            return Ok(Some((data, at)));
        }
        let (name, _) = field_line(line)?;
        let lower = name.to_ascii_lowercase();
        let forbidden: [&[u8]; 4] = [b"content-length", b"transfer-encoding", b"host", b"trailer"];
        if forbidden.contains(&lower.as_slice()) || looks_like_framing(&lower) {
            return Err(format!("trailer field {:?}", printable(name)));
        }
    }
}

/// `1*HEXDIG` fitting 64 bits, then extensions in the grammar of RFC 9112 §7.1.1 without
/// whitespace (`;name`, `;name=token`, `;name="quoted"`).
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let text = printable(line);
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let significant = line[..digits].iter().skip_while(|b| **b == b'0').count();
    if digits == 0 || significant > 16 {
        return Err(format!("chunk-size line {text:?}"));
    }
    let size = u64::from_str_radix(&text[..digits], 16).map_err(|e| e.to_string())?;
    if !valid_extensions(&line[digits..]) {
        return Err(format!("chunk extension in {text:?}"));
    }
    Ok(size)
}

fn valid_extensions(mut ext: &[u8]) -> bool {
    while let [b';', rest @ ..] = ext {
        let name = rest.iter().take_while(|b| is_tchar(**b)).count();
        if name == 0 {
            return false;
        }
        ext = &rest[name..];
        if let [b'=', value @ ..] = ext {
            let len = match value {
                [b'"', inner @ ..] => match quoted(inner) {
                    Some(n) => n + 1,
                    None => return false,
                },
                _ => value.iter().take_while(|b| is_tchar(**b)).count(),
            };
            if len == 0 {
                return false;
            }
            ext = &value[len..];
        }
    }
    ext.is_empty()
}

/// Length of a quoted string's rest after the opening quote, closing quote included.
fn quoted(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            b if b == b'\t' || b >= 0x20 && b != 0x7f => i += 1,
            _ => return None,
        }
    }
    None
}

/// Bytes as text, with anything outside printable ASCII escaped.
pub fn printable(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

#[test]
fn reads_canonical_requests_and_refuses_what_has_two_readings() {
    let ok =
        b"POST /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nX-Parsed: POST /a\r\n\r\n\
               05;a=\"b\"\r\nhello\r\n0\r\nx-sum: 1\r\n\r\nGET";
    let Ok(Read::Complete(req, used)) = read_request(ok) else {
        panic!("{:?}", read_request(ok));
    };
    assert_eq!((req.body.as_slice(), used), (&b"hello"[..], ok.len() - 3));
    assert_eq!(req.markers, ["POST /a"]);
    assert_eq!(read_request(&ok[..40]), Ok(Read::Partial));
    for bad in [
        &b"GET / HTTP/1.1\nHost: x\r\n\r\n"[..],
        b"GET / HTTP/1.1\r\nHost: x\r\n y\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\nx",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nHost: y\r\n\r\n",
        b"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: x\r\nContent_Length: 5\r\n\r\n",
    ] {
        assert!(read_request(bad).is_err(), "{}", printable(bad));
    }
}
