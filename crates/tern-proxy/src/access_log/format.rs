//! Writing a [`Record`] as a text line (HAProxy-like) or a JSON object, and the dates of both
//! and of the syslog headers. Runs on the writer thread only.
//!
//! Dates are UTC (no time zone database to consult, and lines from several machines compare
//! as they are). Strings from the network are escaped: in text, bytes outside printable ASCII
//! and `"` and `#` become `#XX` (HAProxy's escaping); in JSON, the usual escapes, with bytes
//! that are not UTF-8 replaced by U+FFFD.

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::{SystemTime, UNIX_EPOCH};

use super::record::{Record, Request, Text};

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A UTC date and time, broken down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micros: u32,
}

impl Civil {
    /// `t` in UTC (times before 1970 are shown as 1970-01-01).
    pub(crate) fn of(t: SystemTime) -> Self {
        let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since.as_secs() as i64;
        let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32);
        let (year, month, day) = civil_from_days(days);
        Self {
            year,
            month,
            day,
            hour: rest / 3600,
            minute: rest / 60 % 60,
            second: rest % 60,
            micros: since.subsec_micros(),
        }
    }

    fn month_name(&self) -> &'static str {
        MONTHS[(self.month as usize).saturating_sub(1).min(11)]
    }

    /// `14/May/2025:10:00:00 +0000` (HAProxy's `%T`).
    pub(crate) fn write_gmt(&self, out: &mut Vec<u8>) {
        padded(out, self.day, 2);
        out.push(b'/');
        out.extend_from_slice(self.month_name().as_bytes());
        out.push(b'/');
        int(out, self.year);
        out.push(b':');
        self.write_time(out);
        out.extend_from_slice(b" +0000");
    }

    /// `hh:mm:ss`.
    fn write_time(&self, out: &mut Vec<u8>) {
        padded(out, self.hour, 2);
        out.push(b':');
        padded(out, self.minute, 2);
        out.push(b':');
        padded(out, self.second, 2);
    }

    /// `14/May/2025:10:00:00.123` (HAProxy's `%tr` layout, in UTC).
    pub(crate) fn write_haproxy(&self, out: &mut Vec<u8>) {
        padded(out, self.day, 2);
        out.push(b'/');
        out.extend_from_slice(self.month_name().as_bytes());
        out.push(b'/');
        int(out, self.year);
        out.push(b':');
        self.write_time(out);
        out.push(b'.');
        padded(out, self.micros / 1000, 3);
    }

    /// `2025-05-14T10:00:00.123456Z` (RFC 3339, also RFC 5424's TIMESTAMP).
    pub(crate) fn write_rfc3339(&self, out: &mut Vec<u8>) {
        int(out, self.year);
        out.push(b'-');
        padded(out, self.month, 2);
        out.push(b'-');
        padded(out, self.day, 2);
        out.push(b'T');
        self.write_time(out);
        out.push(b'.');
        padded(out, self.micros, 6);
        out.push(b'Z');
    }

    /// `May 14 10:00:00`, the day padded with a space (RFC 3164's TIMESTAMP).
    pub(crate) fn write_rfc3164(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.month_name().as_bytes());
        out.push(b' ');
        if self.day < 10 {
            out.push(b' ');
        }
        int(out, i64::from(self.day));
        out.push(b' ');
        self.write_time(out);
    }
}

/// Appends `v` in decimal (the `fmt` machinery costs several times more, per field, on the
/// writer thread).
pub(crate) fn int(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut n = v.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn uint(out: &mut Vec<u8>, v: u64) {
    int(out, i64::try_from(v).unwrap_or(i64::MAX));
}

/// Appends `v` with leading zeros to `width` digits.
pub(super) fn padded(out: &mut Vec<u8>, v: u32, width: usize) {
    let start = out.len();
    int(out, i64::from(v));
    let len = out.len() - start;
    if len < width {
        out.splice(start..start, std::iter::repeat_n(b'0', width - len));
    }
}

/// Appends an IP address.
fn ip(out: &mut Vec<u8>, ip: &IpAddr) {
    match ip {
        IpAddr::V4(v4) => {
            for (i, octet) in v4.octets().iter().enumerate() {
                if i > 0 {
                    out.push(b'.');
                }
                int(out, i64::from(*octet));
            }
        }
        IpAddr::V6(v6) => {
            let _ = write!(out, "{v6}");
        }
    }
}

/// Appends an address as `ip:port` (`[ip]:port` for IPv6).
fn address(out: &mut Vec<u8>, addr: &SocketAddr) {
    if addr.is_ipv6() {
        out.push(b'[');
        ip(out, &addr.ip());
        out.push(b']');
    } else {
        ip(out, &addr.ip());
    }
    out.push(b':');
    int(out, i64::from(addr.port()));
}

/// Year, month (1-12) and day of the `days`-th day after 1970-01-01 (H. Hinnant's
/// `civil_from_days`, proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Milliseconds of a timer in microseconds, -1 staying -1.
pub(super) fn millis(us: i64) -> i64 {
    if us < 0 {
        -1
    } else {
        us / 1000
    }
}

/// Appends `bytes`, printable ASCII as is and anything else (space, `"`, `#` included) as `#XX`.
fn text_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        if b.is_ascii_graphic() && b != b'"' && b != b'#' {
            out.push(b);
        } else {
            const HEX: &[u8; 16] = b"0123456789ABCDEF";
            out.extend_from_slice(&[b'#', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]);
        }
    }
}

/// Appends `text` escaped, or `-` when it is empty.
fn text_or_dash<const N: usize>(out: &mut Vec<u8>, text: &Text<N>) {
    if text.is_empty() {
        out.push(b'-');
    } else {
        text_escaped(out, text.get());
    }
}

pub(super) fn version_name(version: u8) -> &'static str {
    match version {
        10 => "HTTP/1.0",
        20 => "HTTP/2.0",
        _ => "HTTP/1.1",
    }
}

/// Appends `r` as one text line (without the newline); the layout is in docs/configuration.md:
///
/// `CLIENT [DATE] FRONTEND[~] BACKEND/SERVER TR/Tw/Tc/Tr/Ta STATUS BYTES_OUT BYTES_IN STATE
/// RETRIES "REQUEST" Th/Ti TLS`
pub(crate) fn text(r: &Record, out: &mut Vec<u8>) {
    if r.request == Request::Tcp {
        return tcp_text(r, out);
    }
    who(r, out);
    let t = &r.timers;
    for (i, timer) in [t.request, t.queue, t.connect, t.response, t.active]
        .into_iter()
        .enumerate()
    {
        out.push(if i == 0 { b' ' } else { b'/' });
        int(out, millis(timer));
    }
    out.push(b' ');
    int(out, i64::from(r.status));
    out.push(b' ');
    uint(out, r.bytes_out);
    out.push(b' ');
    uint(out, r.bytes_in);
    out.push(b' ');
    out.extend_from_slice(&r.termination);
    out.extend_from_slice(if r.redispatched { b" +" } else { b" " });
    int(out, i64::from(r.retries));
    captured(r, out);
    out.extend_from_slice(b" \"");
    match r.request {
        Request::Line => {
            text_escaped(out, r.method.get());
            out.push(b' ');
            text_escaped(out, r.target.get());
            out.push(b' ');
            out.extend_from_slice(version_name(r.version).as_bytes());
        }
        Request::Missing(_) => out.extend_from_slice(b"<BADREQ>"),
        Request::Tls(why) => {
            out.extend_from_slice(b"<TLS:");
            out.extend_from_slice(why.as_bytes());
            out.push(b'>');
        }
        // Written by `tcp_text`.
        Request::Tcp => out.extend_from_slice(b"<TCP>"),
    }
    out.extend_from_slice(b"\" ");
    int(out, millis(t.handshake));
    out.push(b'/');
    int(out, millis(t.idle));
    out.push(b' ');
    tls_text(r, out);
}

/// The captured fields, ` {req1|req2} {res1}` as in HAProxy's httplog; nothing for a frontend
/// without captures.
fn captured(r: &Record, out: &mut Vec<u8>) {
    let Some(extra) = r.extra.as_deref() else {
        return;
    };
    for list in [&extra.request_captures, &extra.response_captures] {
        if !list.is_empty() {
            out.push(b' ');
            super::template::captures(out, list, false, false);
        }
    }
}

/// `CLIENT [DATE] FRONTEND[~] BACKEND/SERVER`: the start of both text lines (HTTP and TCP).
fn who(r: &Record, out: &mut Vec<u8>) {
    address(out, &r.client);
    out.extend_from_slice(b" [");
    Civil::of(r.time).write_haproxy(out);
    out.extend_from_slice(b"] ");
    text_escaped(out, r.frontend.get());
    if r.tls.is_some() {
        out.push(b'~');
    }
    out.push(b' ');
    // HAProxy names the frontend as the backend of a request that never reached one.
    let backend = if r.backend.is_empty() {
        &r.frontend
    } else {
        &r.backend
    };
    text_escaped(out, backend.get());
    out.push(b'/');
    if r.server.is_empty() {
        out.extend_from_slice(b"<NOSRV>");
    } else {
        text_escaped(out, r.server.get());
    }
}

/// Appends the `tcplog` line of a TCP-mode session (HAProxy's `option tcplog` fields, with the
/// bytes received beside those sent, and the TLS session as on HTTP lines):
///
/// `CLIENT [DATE] FRONTEND[~] BACKEND/SERVER Tw/Tc/Tt BYTES_OUT BYTES_IN STATE RETRIES Th TLS`
fn tcp_text(r: &Record, out: &mut Vec<u8>) {
    who(r, out);
    let t = &r.timers;
    for (i, timer) in [t.queue, t.connect, t.active].into_iter().enumerate() {
        out.push(if i == 0 { b' ' } else { b'/' });
        int(out, millis(timer));
    }
    out.push(b' ');
    uint(out, r.bytes_out);
    out.push(b' ');
    uint(out, r.bytes_in);
    out.push(b' ');
    out.extend_from_slice(&r.termination);
    out.extend_from_slice(if r.redispatched { b" +" } else { b" " });
    int(out, i64::from(r.retries));
    out.push(b' ');
    int(out, millis(t.handshake));
    out.push(b' ');
    tls_text(r, out);
}

/// The TLS fields of a text line: `VERSION/CIPHER/SNI/RESUMED`, or `-` on a plain connection.
fn tls_text(r: &Record, out: &mut Vec<u8>) {
    match &r.tls {
        None => out.push(b'-'),
        Some(tls) => {
            out.extend_from_slice(tls.version.as_bytes());
            out.push(b'/');
            out.extend_from_slice(tls.cipher.as_bytes());
            out.push(b'/');
            text_or_dash(out, &tls.sni);
            out.extend_from_slice(if tls.resumed { b"/1" } else { b"/0" });
        }
    }
}

/// Appends `bytes` as a JSON string (quotes included).
fn json_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let mut utf8 = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Appends `,"key":`.
fn json_key(out: &mut Vec<u8>, key: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// Appends `,"key":v`.
fn json_int(out: &mut Vec<u8>, key: &str, v: i64) {
    json_key(out, key);
    int(out, v);
}

/// Appends `"key":` then `text` as a JSON string, or `null` when it is empty.
fn json_text<const N: usize>(out: &mut Vec<u8>, key: &str, text: &Text<N>) {
    json_key(out, key);
    if text.is_empty() {
        out.extend_from_slice(b"null");
    } else {
        json_string(out, text.get());
    }
}

/// Appends `r` as one JSON object (without the newline); the keys are in docs/configuration.md.
pub(crate) fn json(r: &Record, out: &mut Vec<u8>) {
    out.extend_from_slice(b"{\"time\":\"");
    Civil::of(r.time).write_rfc3339(out);
    out.extend_from_slice(b"\",\"client_ip\":\"");
    ip(out, &r.client.ip());
    out.push(b'"');
    json_int(out, "client_port", i64::from(r.client.port()));
    json_text(out, "frontend", &r.frontend);
    json_text(out, "backend", &r.backend);
    json_text(out, "server", &r.server);
    let t = &r.timers;
    json_int(out, "handshake_us", t.handshake);
    json_int(out, "idle_us", t.idle);
    json_int(out, "request_us", t.request);
    json_int(out, "queue_us", t.queue);
    json_int(out, "connect_us", t.connect);
    json_int(out, "response_us", t.response);
    json_int(out, "active_us", t.active);
    json_int(out, "status", i64::from(r.status));
    json_key(out, "bytes_out");
    uint(out, r.bytes_out);
    json_key(out, "bytes_in");
    uint(out, r.bytes_in);
    json_int(out, "retries", i64::from(r.retries));
    json_key(out, "redispatched");
    out.extend_from_slice(if r.redispatched { b"true" } else { b"false" });
    out.extend_from_slice(b",\"termination\":\"");
    text_escaped(out, &r.termination);
    out.push(b'"');
    match r.request {
        Request::Line => {
            json_text(out, "method", &r.method);
            out.extend_from_slice(b",\"path\":");
            json_string(out, r.target.get());
            out.extend_from_slice(b",\"version\":\"");
            out.extend_from_slice(version_name(r.version).as_bytes());
            out.extend_from_slice(b"\",\"error\":null");
            if r.stream != 0 {
                let _ = write!(out, ",\"stream\":{}", r.stream);
            }
        }
        Request::Missing(why) => {
            let _ = write!(
                out,
                ",\"method\":null,\"path\":null,\"version\":null,\"error\":\"{why}\""
            );
        }
        Request::Tls(why) => {
            let _ = write!(
                out,
                ",\"method\":null,\"path\":null,\"version\":null,\"error\":\"tls_{why}\""
            );
        }
        Request::Tcp => out.extend_from_slice(
            b",\"method\":null,\"path\":null,\"version\":null,\"error\":null,\"mode\":\"tcp\"",
        ),
    }
    if let Some(extra) = r.extra.as_deref() {
        json_extra(extra, out);
    }
    match &r.tls {
        None => out.extend_from_slice(b",\"tls\":null}"),
        Some(tls) => {
            out.extend_from_slice(b",\"tls\":{\"version\":\"");
            out.extend_from_slice(tls.version.as_bytes());
            out.extend_from_slice(b"\",\"cipher\":\"");
            out.extend_from_slice(tls.cipher.as_bytes());
            out.push(b'"');
            json_text(out, "sni", &tls.sni);
            out.extend_from_slice(if tls.resumed {
                b",\"resumed\":true}}"
            } else {
                b",\"resumed\":false}}"
            });
        }
    }
}

/// The request id and the captured fields, when the frontend has them.
fn json_extra(extra: &super::record::Extra, out: &mut Vec<u8>) {
    if !extra.unique_id.is_empty() {
        json_key(out, "unique_id");
        json_string(out, &extra.unique_id);
    }
    for (key, list) in [
        ("captured_request_headers", &extra.request_captures),
        ("captured_response_headers", &extra.response_captures),
    ] {
        if !list.is_empty() {
            json_key(out, key);
            out.push(b'[');
            for (i, value) in list.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                json_string(out, value);
            }
            out.push(b']');
        }
    }
}
