//! The PROXY protocol header parsed from bytes, with no I/O (spec: HAProxy's
//! doc/proxy-protocol.txt; section numbers below are its own).
//!
//! [`parse`] is given the bytes received so far and answers one of three things: the header is
//! complete (its length and what it says), more bytes are needed, or it is refused. It never
//! looks past the header's end, so the bytes that follow (a TLS ClientHello, an HTTP request)
//! belong to the caller untouched. Everything the spec does not allow is refused, as HAProxy
//! does: a PROXY header is untrusted input, and a lenient reader would let a client that reaches
//! the port directly choose the address tern logs and routes on.
//!
//! | form | layout | bound |
//! |---|---|---|
//! | v1 (2.1) | `PROXY TCP4\|TCP6 <src> <dst> <sport> <dport>\r\n`, or `PROXY UNKNOWN...\r\n` | 107 bytes |
//! | v2 (2.2) | 12-byte signature, version/command, family/transport, length (big endian), addresses, TLVs | 16 + [`MAX_V2_BODY`] bytes |

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::str::FromStr;

use crate::Origin;

/// The v2 signature (2.2).
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The v1 prefix (2.1).
const V1_PREFIX: &[u8] = b"PROXY ";
/// The longest v1 line, CRLF included (2.1: "107 bytes").
pub const V1_MAX: usize = 107;
/// The largest v2 body (addresses and TLVs) accepted. The spec allows 65535; senders put a few
/// hundred bytes there at most (hitch's SSL TLVs), and a bound keeps what one connection may
/// make tern hold small. HAProxy bounds it by its buffer size in the same way.
pub const MAX_V2_BODY: usize = 4096;
/// The longest header this parser accepts, of either form.
pub const MAX_HEADER: usize = 16 + MAX_V2_BODY;

/// v2 TLV types kept or checked (2.2.1 - 2.2.5); the others are walked over.
pub const PP2_TYPE_ALPN: u8 = 0x01;
pub const PP2_TYPE_AUTHORITY: u8 = 0x02;
pub const PP2_TYPE_CRC32C: u8 = 0x03;
pub const PP2_TYPE_NOOP: u8 = 0x04;
pub const PP2_TYPE_SSL: u8 = 0x20;
/// Sub-TLVs of `PP2_TYPE_SSL` (2.2.5).
pub const PP2_SUBTYPE_SSL_VERSION: u8 = 0x21;
pub const PP2_SUBTYPE_SSL_CN: u8 = 0x22;
pub const PP2_SUBTYPE_SSL_CIPHER: u8 = 0x23;
/// `PP2_TYPE_SSL` client flags (2.2.5): the client connected over TLS, presented a certificate
/// on this connection, presented one in the session (this connection or a resumed one).
pub const PP2_CLIENT_SSL: u8 = 0x01;
pub const PP2_CLIENT_CERT_CONN: u8 = 0x02;
pub const PP2_CLIENT_CERT_SESS: u8 = 0x04;

/// What a complete header says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The header's length: where the client's own bytes start.
    pub len: usize,
    /// The carried addresses (`Origin::Client`), or none to use (`Origin::Unknown` for v1
    /// `UNKNOWN` and v2 unspecified or Unix families, `Origin::Local` for v2 LOCAL): the
    /// connection's own addresses stand then.
    pub origin: Origin,
    /// v2 TLVs that tern keeps, for the logs.
    pub tlvs: Tlvs,
}

/// The v2 TLVs kept (2.2.1 - 2.2.5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tlvs {
    /// `PP2_TYPE_ALPN`: the protocol the client negotiated with the sender.
    pub alpn: Option<Vec<u8>>,
    /// `PP2_TYPE_AUTHORITY`: the host name the client asked for (its SNI).
    pub authority: Option<Vec<u8>>,
    /// `PP2_TYPE_SSL`: what the sender knows of the client's TLS.
    pub ssl: Option<Box<Ssl>>,
    /// `PP2_TYPE_CRC32C` was present, and the header's checksum matched it (a mismatch is
    /// refused).
    pub crc32c: bool,
    /// The other TLVs (custom ones such as `0xE0`-`0xEF`, `PP2_TYPE_UNIQUE_ID`, ...), in
    /// order, for HAProxy's `fc_pp_tlv(<id>)`: type and value. Bounded by the header's
    /// [`MAX_V2_BODY`]; no allocation when there are none.
    pub others: Vec<(u8, Vec<u8>)>,
}

impl Tlvs {
    /// Whether no TLV was kept that [`Tlvs::value`] could return.
    pub fn is_empty(&self) -> bool {
        self.alpn.is_none()
            && self.authority.is_none()
            && self.ssl.is_none()
            && self.others.is_empty()
    }

    /// The value of the first TLV of type `kind` (HAProxy's `fc_pp_tlv(<id>)`): ALPN, authority
    /// and the SSL sub-TLVs read from their fields, any other type but SSL and CRC32C from
    /// [`Tlvs::others`].
    pub fn value(&self, kind: u8) -> Option<&[u8]> {
        let ssl = || self.ssl.as_deref();
        match kind {
            PP2_TYPE_ALPN => self.alpn.as_deref(),
            PP2_TYPE_AUTHORITY => self.authority.as_deref(),
            PP2_SUBTYPE_SSL_VERSION => ssl()?.version.as_deref(),
            PP2_SUBTYPE_SSL_CN => ssl()?.cn.as_deref(),
            PP2_SUBTYPE_SSL_CIPHER => ssl()?.cipher.as_deref(),
            _ => self
                .others
                .iter()
                .find(|(k, _)| *k == kind)
                .map(|(_, v)| v.as_slice()),
        }
    }

    /// `PP2_TYPE_SSL` with `PP2_CLIENT_SSL`: the client spoke TLS to the sender.
    pub fn client_ssl(&self) -> bool {
        self.ssl
            .as_ref()
            .is_some_and(|ssl| ssl.client & PP2_CLIENT_SSL != 0)
    }
}

/// The `PP2_TYPE_SSL` TLV (2.2.5).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ssl {
    /// `PP2_CLIENT_*` flags.
    pub client: u8,
    /// Zero when the client presented a certificate that was verified.
    pub verify: u32,
    /// `PP2_SUBTYPE_SSL_VERSION`: `TLSv1.3`, ...
    pub version: Option<Vec<u8>>,
    /// `PP2_SUBTYPE_SSL_CIPHER`: the suite's OpenSSL name.
    pub cipher: Option<Vec<u8>>,
    /// `PP2_SUBTYPE_SSL_CN`: the client certificate's subject common name.
    pub cn: Option<Vec<u8>>,
}

/// Why a header was refused: the reason, for the debug log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused(pub &'static str);

/// What the bytes so far make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Complete(Header),
    /// The bytes so far are a correct beginning: read more (all of them belong to the header).
    Partial,
}

/// Parses the header at the start of `buf`.
pub fn parse(buf: &[u8]) -> Result<Parsed, Refused> {
    if buf.is_empty() {
        return Ok(Parsed::Partial);
    }
    if buf[0] == V2_SIGNATURE[0] {
        v2(buf)
    } else {
        v1(buf)
    }
}

/// The text form (2.1).
fn v1(buf: &[u8]) -> Result<Parsed, Refused> {
    let prefix = buf.len().min(V1_PREFIX.len());
    if buf[..prefix] != V1_PREFIX[..prefix] {
        return Err(Refused("not a PROXY protocol header"));
    }
    let window = &buf[..buf.len().min(V1_MAX)];
    let Some(cr) = window.iter().position(|&b| b == b'\r' || b == b'\n') else {
        return if buf.len() >= V1_MAX {
            Err(Refused("v1 line longer than 107 bytes"))
        } else {
            Ok(Parsed::Partial)
        };
    };
    if window[cr] == b'\n' {
        return Err(Refused("v1 line with a bare LF"));
    }
    match window.get(cr + 1) {
        None => return Ok(Parsed::Partial),
        Some(b'\n') => {}
        Some(_) => return Err(Refused("v1 line with a CR not followed by LF")),
    }
    let line = std::str::from_utf8(&window[V1_PREFIX.len().min(cr)..cr])
        .map_err(|_| Refused("v1 line not in ASCII"))?;
    let origin = v1_fields(line)?;
    Ok(Parsed::Complete(Header {
        len: cr + 2,
        origin,
        tlvs: Tlvs::default(),
    }))
}

/// The fields after `PROXY `: single spaces between them, nothing else.
fn v1_fields(line: &str) -> Result<Origin, Refused> {
    // 2.1: after UNKNOWN, the receiver ignores everything up to the CRLF.
    if line == "UNKNOWN" || line.starts_with("UNKNOWN ") {
        return Ok(Origin::Unknown);
    }
    let mut fields = line.split(' ');
    let family = fields.next().unwrap_or_default();
    let (src, dst, sport, dport) = match (
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
        fields.next(),
    ) {
        (Some(a), Some(b), Some(c), Some(d), None) => (a, b, c, d),
        _ => return Err(Refused("v1 line without exactly four address fields")),
    };
    let (src, dst) = match family {
        "TCP4" => (
            IpAddr::V4(v1_ip::<Ipv4Addr>(src)?),
            IpAddr::V4(v1_ip::<Ipv4Addr>(dst)?),
        ),
        "TCP6" => (
            IpAddr::V6(v1_ip::<Ipv6Addr>(src)?),
            IpAddr::V6(v1_ip::<Ipv6Addr>(dst)?),
        ),
        _ => return Err(Refused("v1 protocol neither TCP4, TCP6 nor UNKNOWN")),
    };
    Ok(Origin::Client {
        source: SocketAddr::new(src, v1_port(sport)?),
        destination: SocketAddr::new(dst, v1_port(dport)?),
    })
}

fn v1_ip<T: FromStr>(text: &str) -> Result<T, Refused> {
    text.parse().map_err(|_| Refused("v1 address malformed"))
}

/// A port: 1 to 5 digits, no sign, no leading zero (2.1: "leading zeroes are not permitted").
fn v1_port(text: &str) -> Result<u16, Refused> {
    let digits = !text.is_empty() && text.len() <= 5 && text.bytes().all(|b| b.is_ascii_digit());
    if !digits || (text.len() > 1 && text.starts_with('0')) {
        return Err(Refused("v1 port malformed"));
    }
    text.parse().map_err(|_| Refused("v1 port out of range"))
}

/// The binary form (2.2).
fn v2(buf: &[u8]) -> Result<Parsed, Refused> {
    let prefix = buf.len().min(V2_SIGNATURE.len());
    if buf[..prefix] != V2_SIGNATURE[..prefix] {
        return Err(Refused("not a PROXY protocol header"));
    }
    if buf.len() < 16 {
        return Ok(Parsed::Partial);
    }
    let (version, command) = (buf[12] >> 4, buf[12] & 0x0f);
    if version != 2 {
        return Err(Refused("v2 version is not 2"));
    }
    let body_len = usize::from(u16::from_be_bytes([buf[14], buf[15]]));
    if body_len > MAX_V2_BODY {
        return Err(Refused("v2 header longer than tern accepts"));
    }
    let Some(body) = buf.get(16..16 + body_len) else {
        return Ok(Parsed::Partial);
    };
    let (family, transport) = (buf[13] >> 4, buf[13] & 0x0f);
    let (origin, mut tlvs) = match command {
        // 2.2: LOCAL: the receiver uses the connection's own addresses and skips the body
        // whatever the family byte says.
        0x0 => (Origin::Local, Tlvs::default()),
        0x1 => {
            let (addresses, at) = v2_addresses(family, transport, body)?;
            let origin =
                addresses.map_or(Origin::Unknown, |(source, destination)| Origin::Client {
                    source,
                    destination,
                });
            (origin, tlvs(&body[at..])?)
        }
        _ => return Err(Refused("v2 command neither LOCAL nor PROXY")),
    };
    if let Some(at) = crc32c_at(command, family, transport, body)? {
        check_crc32c(&buf[..16 + body_len], 16 + at)?;
        tlvs.crc32c = true;
    }
    Ok(Parsed::Complete(Header {
        len: 16 + body_len,
        origin,
        tlvs,
    }))
}

type Addresses = Option<(SocketAddr, SocketAddr)>;

/// The addresses of `family` over `transport` at the start of `body`, and where they end.
fn v2_addresses(family: u8, transport: u8, body: &[u8]) -> Result<(Addresses, usize), Refused> {
    const STREAM: u8 = 0x1;
    let short = || Refused("v2 length shorter than its addresses");
    match (family, transport) {
        // UNSPEC: addresses (if any) are ignored; TLVs are not expected to follow.
        (0x0, 0x0) => Ok((None, body.len())),
        (0x1, STREAM) => {
            let a = body.get(..12).ok_or_else(short)?;
            let ip = |i: usize| IpAddr::V4(Ipv4Addr::new(a[i], a[i + 1], a[i + 2], a[i + 3]));
            let port = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
            Ok((
                Some((
                    SocketAddr::new(ip(0), port(8)),
                    SocketAddr::new(ip(4), port(10)),
                )),
                12,
            ))
        }
        (0x2, STREAM) => {
            let a = body.get(..36).ok_or_else(short)?;
            let ip = |i: usize| {
                let mut octets = [0u8; 16];
                octets.copy_from_slice(&a[i..i + 16]);
                IpAddr::V6(Ipv6Addr::from(octets))
            };
            let port = |i: usize| u16::from_be_bytes([a[i], a[i + 1]]);
            Ok((
                Some((
                    SocketAddr::new(ip(0), port(32)),
                    SocketAddr::new(ip(16), port(34)),
                )),
                36,
            ))
        }
        // AF_UNIX stream: two 108-byte paths, no IP address to use.
        (0x3, STREAM) => {
            body.get(..216).ok_or_else(short)?;
            Ok((None, 216))
        }
        _ => Err(Refused("v2 family or transport tern does not relay")),
    }
}

/// Walks the TLVs (2.2.1): each must fit whole in what the length announced.
fn tlvs(mut rest: &[u8]) -> Result<Tlvs, Refused> {
    let mut kept = Tlvs::default();
    while !rest.is_empty() {
        let (kind, value, next) = tlv(rest)?;
        match kind {
            PP2_TYPE_ALPN => kept.alpn = Some(value.to_vec()),
            PP2_TYPE_AUTHORITY => kept.authority = Some(value.to_vec()),
            PP2_TYPE_SSL => kept.ssl = Some(Box::new(ssl(value)?)),
            PP2_TYPE_CRC32C if value.len() != 4 => {
                return Err(Refused("v2 CRC32C TLV not 4 bytes long"))
            }
            PP2_TYPE_CRC32C => {}
            // 2.2.7: NOOP, padding only.
            PP2_TYPE_NOOP => {}
            _ => kept.others.push((kind, value.to_vec())),
        }
        rest = next;
    }
    Ok(kept)
}

/// Where the value of the `PP2_TYPE_CRC32C` TLV starts in `body`, if a PROXY command's TLVs
/// (already walked, so well formed) have one.
fn crc32c_at(
    command: u8,
    family: u8,
    transport: u8,
    body: &[u8],
) -> Result<Option<usize>, Refused> {
    if command != 0x1 {
        return Ok(None);
    }
    let (_, mut at) = v2_addresses(family, transport, body)?;
    while at < body.len() {
        let (kind, value, _) = tlv(&body[at..])?;
        if kind == PP2_TYPE_CRC32C {
            return Ok(Some(at + 3));
        }
        at += 3 + value.len();
    }
    Ok(None)
}

/// 2.2.2: the CRC32c of the whole header (signature to the last TLV) with the checksum's own
/// four bytes (at `at`) taken as zero must equal them.
fn check_crc32c(header: &[u8], at: usize) -> Result<(), Refused> {
    let sent = header
        .get(at..at + 4)
        .ok_or(Refused("v2 CRC32C TLV cut short"))?;
    let sent = u32::from_be_bytes([sent[0], sent[1], sent[2], sent[3]]);
    if crate::crc::crc32c_of(header, at) == Some(sent) {
        Ok(())
    } else {
        Err(Refused("v2 CRC32C checksum mismatch"))
    }
}

/// One TLV at the start of `rest`: its type, its value and what follows it.
fn tlv(rest: &[u8]) -> Result<(u8, &[u8], &[u8]), Refused> {
    let [kind, hi, lo, ..] = *rest else {
        return Err(Refused("v2 TLV cut short"));
    };
    let len = usize::from(u16::from_be_bytes([hi, lo]));
    let value = rest
        .get(3..3 + len)
        .ok_or(Refused("v2 TLV longer than the header"))?;
    Ok((kind, value, &rest[3 + len..]))
}

/// `PP2_TYPE_SSL` (2.2.5): client flags (1 byte), verify result (4), then sub-TLVs, each of
/// which must fit.
fn ssl(value: &[u8]) -> Result<Ssl, Refused> {
    let [client, v0, v1, v2, v3, ..] = *value else {
        return Err(Refused("v2 SSL TLV cut short"));
    };
    let mut kept = Ssl {
        client,
        verify: u32::from_be_bytes([v0, v1, v2, v3]),
        ..Ssl::default()
    };
    let mut rest = &value[5..];
    while !rest.is_empty() {
        let (kind, value, next) = tlv(rest)?;
        match kind {
            PP2_SUBTYPE_SSL_VERSION => kept.version = Some(value.to_vec()),
            PP2_SUBTYPE_SSL_CIPHER => kept.cipher = Some(value.to_vec()),
            PP2_SUBTYPE_SSL_CN => kept.cn = Some(value.to_vec()),
            _ => {}
        }
        rest = next;
    }
    Ok(kept)
}

#[cfg(test)]
mod tests;
