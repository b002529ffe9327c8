//! `accept_proxy`: the PROXY protocol header (v1 or v2, HAProxy's doc/proxy-protocol.txt) a
//! connection must open with, so tests can see what a proxy told its server.
//!
//! Why here and so small: term is a test backend; it reads the header a proxy sends (`tern run`
//! with `proxy_protocol`, HAProxy with `send-proxy`) and echoes what it said in response
//! headers. It reads no more bytes than the header has (the TLS handshake or the HTTP request
//! follows at once): 12 bytes first (no v1 line is shorter), then the v2 length it announces,
//! or the rest of the v1 line a byte at a time. The v2 TLVs a TLS-terminating proxy adds
//! (ALPN, authority, SSL with its version and cipher) are decoded here on their own, apart from
//! tern's parser, and echoed in `x-proxy-tlvs`, and so is any other TLV but CRC32C and NOOP, as
//! `0xE1=value` (custom TLVs, `proxy_v2_tlvs`). A connection that does not open with a valid
//! header is closed.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::io::{AsyncRead, AsyncReadExt};

/// The v2 signature.
const V2_SIGNATURE: [u8; 12] = *b"\r\n\r\n\0\r\nQUIT\n";
/// The longest v1 line, CRLF included.
const V1_MAX: usize = 107;

/// What a PROXY header said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Proxied {
    /// 1 or 2.
    pub version: u8,
    pub said: Said,
    /// The TLVs decoded, as `x-proxy-tlvs` shows them (`alpn=h2 authority=localhost
    /// ssl=0x01 verify=1 version=TLSv1.3 cipher=TLS_AES_128_GCM_SHA256 0xe1=acme`); empty
    /// without.
    pub tlvs: String,
}

/// The connection a header describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Said {
    /// A relayed client connection: its source and destination.
    Client {
        source: SocketAddr,
        destination: SocketAddr,
    },
    /// Relayed, addresses not given (v1 `UNKNOWN`, v2 unspecified family).
    Unknown,
    /// The proxy's own connection, such as a health check (v2 LOCAL).
    Local,
}

impl Proxied {
    /// The source as echoed in `x-proxy-src`: `IP:PORT`, `unknown` or `local`.
    pub(crate) fn source(&self) -> String {
        match self.said {
            Said::Client { source, .. } => source.to_string(),
            Said::Unknown => "unknown".to_owned(),
            Said::Local => "local".to_owned(),
        }
    }

    /// The destination as echoed in `x-proxy-dst`.
    pub(crate) fn destination(&self) -> String {
        match self.said {
            Said::Client { destination, .. } => destination.to_string(),
            Said::Unknown => "unknown".to_owned(),
            Said::Local => "local".to_owned(),
        }
    }
}

/// Reads the header that must open `s`.
pub(crate) async fn read<S: AsyncRead + Unpin>(s: &mut S) -> io::Result<Proxied> {
    let mut start = [0u8; 12];
    s.read_exact(&mut start).await?;
    if start == V2_SIGNATURE {
        let mut fixed = [0u8; 4];
        s.read_exact(&mut fixed).await?;
        let mut rest = vec![0u8; usize::from(u16::from_be_bytes([fixed[2], fixed[3]]))];
        s.read_exact(&mut rest).await?;
        return parse_v2(fixed[0], fixed[1], &rest).map_err(invalid);
    }
    if !start.starts_with(b"PROXY ") {
        return Err(invalid("the connection does not start with a PROXY header"));
    }
    let mut line = start.to_vec();
    let mut byte = [0u8; 1];
    // Bounded by V1_MAX.
    while !line.ends_with(b"\r\n") {
        if line.len() >= V1_MAX {
            return Err(invalid("PROXY v1 line longer than 107 bytes"));
        }
        s.read_exact(&mut byte).await?;
        line.push(byte[0]);
    }
    parse_v1(&line).map_err(invalid)
}

fn invalid(message: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.into())
}

/// A whole v1 line, CRLF included.
pub(crate) fn parse_v1(line: &[u8]) -> Result<Proxied, String> {
    let text = std::str::from_utf8(line).map_err(|_| "PROXY v1 line is not text".to_owned())?;
    let text = text
        .strip_suffix("\r\n")
        .ok_or("PROXY v1 line without CRLF")?;
    let fields: Vec<&str> = text.split(' ').collect();
    let said = match fields.as_slice() {
        ["PROXY", "UNKNOWN", ..] => Said::Unknown,
        ["PROXY", family @ ("TCP4" | "TCP6"), src, dst, sport, dport] => {
            let ip = |t: &str| -> Result<IpAddr, String> {
                let ip: IpAddr = t.parse().map_err(|_| format!("bad address {t:?}"))?;
                if ip.is_ipv4() != (*family == "TCP4") {
                    return Err(format!("{t} is not a {family} address"));
                }
                Ok(ip)
            };
            let port = |t: &str| -> Result<u16, String> {
                t.parse().map_err(|_| format!("bad port {t:?}"))
            };
            Said::Client {
                source: SocketAddr::new(ip(src)?, port(sport)?),
                destination: SocketAddr::new(ip(dst)?, port(dport)?),
            }
        }
        _ => return Err(format!("bad PROXY v1 line {text:?}")),
    };
    Ok(Proxied {
        version: 1,
        said,
        tlvs: String::new(),
    })
}

/// A v2 header after its signature: version and command, family and transport, and the
/// `rest` its length announced.
pub(crate) fn parse_v2(version_command: u8, family: u8, rest: &[u8]) -> Result<Proxied, String> {
    if version_command >> 4 != 2 {
        return Err(format!(
            "PROXY v2 header of version {}",
            version_command >> 4
        ));
    }
    let (said, at) = match version_command & 0x0f {
        0 => (Said::Local, rest.len()),
        1 => match family {
            0x11 if rest.len() >= 12 => (
                Said::Client {
                    source: v4(&rest[0..4], &rest[8..10]),
                    destination: v4(&rest[4..8], &rest[10..12]),
                },
                12,
            ),
            0x21 if rest.len() >= 36 => (
                Said::Client {
                    source: v6(&rest[0..16], &rest[32..34]),
                    destination: v6(&rest[16..32], &rest[34..36]),
                },
                36,
            ),
            0x11 | 0x21 => return Err("PROXY v2 addresses cut short".to_owned()),
            _ => (Said::Unknown, rest.len()),
        },
        command => return Err(format!("PROXY v2 command {command}")),
    };
    let mut tlvs = Vec::new();
    walk_tlvs(&rest[at..], &mut |kind, value| match kind {
        0x01 => tlvs.push(format!("alpn={}", text(value))),
        0x02 => tlvs.push(format!("authority={}", text(value))),
        0x20 => tlvs.push(ssl_tlv(value)),
        // CRC32C and NOOP say nothing of the connection.
        0x03 | 0x04 => {}
        _ => tlvs.push(format!("0x{kind:02x}={}", text(value))),
    })?;
    Ok(Proxied {
        version: 2,
        said,
        tlvs: tlvs.join(" "),
    })
}

/// Calls `each` with the type and value of every TLV in `rest`, which must hold them whole.
fn walk_tlvs(mut rest: &[u8], each: &mut dyn FnMut(u8, &[u8])) -> Result<(), String> {
    while !rest.is_empty() {
        if rest.len() < 3 {
            return Err("PROXY v2 TLV cut short".to_owned());
        }
        let len = usize::from(u16::from_be_bytes([rest[1], rest[2]]));
        let value = rest
            .get(3..3 + len)
            .ok_or("PROXY v2 TLV longer than the header")?;
        each(rest[0], value);
        rest = &rest[3 + len..];
    }
    Ok(())
}

/// `ssl=FLAGS verify=N`, then the version and cipher sub-TLVs; `ssl=bad` if cut short.
fn ssl_tlv(value: &[u8]) -> String {
    let [client, a, b, c, d, ..] = *value else {
        return "ssl=bad".to_owned();
    };
    let verify = u32::from_be_bytes([a, b, c, d]);
    let mut out = format!("ssl=0x{client:02x} verify={verify}");
    let walked = walk_tlvs(&value[5..], &mut |kind, value| match kind {
        0x21 => out.push_str(&format!(" version={}", text(value))),
        0x22 => out.push_str(&format!(" cn={}", text(value))),
        0x23 => out.push_str(&format!(" cipher={}", text(value))),
        _ => {}
    });
    if walked.is_err() {
        out.push_str(" sub-tlvs=bad");
    }
    out
}

/// A TLV value as header-safe text: printable ASCII kept, anything else as `?`.
fn text(value: &[u8]) -> String {
    value
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() {
                char::from(b)
            } else {
                '?'
            }
        })
        .collect()
}

fn port(bytes: &[u8]) -> u16 {
    u16::from_be_bytes([bytes[0], bytes[1]])
}

fn v4(ip: &[u8], p: &[u8]) -> SocketAddr {
    let octets: [u8; 4] = [ip[0], ip[1], ip[2], ip[3]];
    SocketAddr::new(IpAddr::V4(Ipv4Addr::from(octets)), port(p))
}

fn v6(ip: &[u8], p: &[u8]) -> SocketAddr {
    let mut octets = [0u8; 16];
    octets.copy_from_slice(ip);
    SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), port(p))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn client(source: &str, destination: &str) -> Said {
        Said::Client {
            source: source.parse().unwrap(),
            destination: destination.parse().unwrap(),
        }
    }

    #[test]
    fn v1_lines() {
        let p = parse_v1(b"PROXY TCP4 192.168.0.1 192.168.0.11 56324 443\r\n").unwrap();
        assert_eq!(p.version, 1);
        assert_eq!(p.said, client("192.168.0.1:56324", "192.168.0.11:443"));
        assert_eq!(p.source(), "192.168.0.1:56324");
        let p = parse_v1(b"PROXY TCP6 ::1 2001:db8::1 40000 443\r\n").unwrap();
        assert_eq!(p.said, client("[::1]:40000", "[2001:db8::1]:443"));
        let p = parse_v1(b"PROXY UNKNOWN\r\n").unwrap();
        assert_eq!((p.said, p.source().as_str()), (Said::Unknown, "unknown"));
        for bad in [
            &b"PROXY TCP4 ::1 ::1 1 2\r\n"[..],
            b"PROXY TCP4 1.2.3.4 1.2.3.4 1 70000\r\n",
            b"PROXY TCP5 1.2.3.4 1.2.3.4 1 2\r\n",
            b"PROXY TCP4 1.2.3.4 1.2.3.4 1 2\n",
        ] {
            assert!(parse_v1(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn v2_headers() {
        let rest = [172, 19, 0, 1, 172, 19, 0, 3, 0xa6, 0x52, 0x00, 0x50];
        let p = parse_v2(0x21, 0x11, &rest).unwrap();
        assert_eq!(p.version, 2);
        assert_eq!(p.said, client("172.19.0.1:42578", "172.19.0.3:80"));
        let mut rest = Vec::new();
        rest.extend_from_slice(&"::1".parse::<Ipv6Addr>().unwrap().octets());
        rest.extend_from_slice(&"::2".parse::<Ipv6Addr>().unwrap().octets());
        rest.extend_from_slice(&[0, 1, 0, 2]);
        rest.extend_from_slice(&[0x20, 0, 1, 7]); // an SSL TLV cut short
        let p = parse_v2(0x21, 0x21, &rest).unwrap();
        assert_eq!(p.said, client("[::1]:1", "[::2]:2"));
        assert_eq!(p.tlvs, "ssl=bad");
        let mut rest = vec![10, 0, 0, 1, 10, 0, 0, 2, 0, 80, 1, 187];
        rest.extend_from_slice(b"\x01\x00\x02h2\x02\x00\x01a\x04\x00\x00");
        rest.extend_from_slice(b"\x20\x00\x0f\x05\x00\x00\x00\x00\x21\x00\x07TLSv1.2");
        let p = parse_v2(0x21, 0x11, &rest).unwrap();
        assert_eq!(
            p.tlvs,
            "alpn=h2 authority=a ssl=0x05 verify=0 version=TLSv1.2"
        );
        rest.push(0x01);
        assert!(parse_v2(0x21, 0x11, &rest).is_err(), "TLV cut short");
        assert_eq!(parse_v2(0x20, 0x00, &[]).unwrap().said, Said::Local);
        assert_eq!(parse_v2(0x21, 0x00, &[]).unwrap().said, Said::Unknown);
        assert!(parse_v2(0x11, 0x11, &[0; 12]).is_err(), "version 1");
        assert!(parse_v2(0x22, 0x11, &[0; 12]).is_err(), "command 2");
        assert!(parse_v2(0x21, 0x11, &[0; 11]).is_err(), "cut short");
    }

    #[tokio::test]
    async fn read_takes_the_header_and_nothing_more() {
        let mut input: &[u8] = b"PROXY UNKNOWN\r\nGET / HTTP/1.1\r\n";
        let p = read(&mut input).await.unwrap();
        assert_eq!(p.said, Said::Unknown);
        assert_eq!(input, b"GET / HTTP/1.1\r\n");
        let mut v2 = V2_SIGNATURE.to_vec();
        v2.extend_from_slice(&[0x21, 0x11, 0, 12, 10, 0, 0, 1, 10, 0, 0, 2, 0, 80, 1, 187]);
        v2.extend_from_slice(b"\x16\x03\x01");
        let mut input = v2.as_slice();
        let p = read(&mut input).await.unwrap();
        assert_eq!(p.said, client("10.0.0.1:80", "10.0.0.2:443"));
        assert_eq!(input, b"\x16\x03\x01");
        let mut input: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        assert!(read(&mut input).await.is_err());
    }
}
