//! The client's TLS as a PROXY v2 header tells it to a server (see the parent module): what
//! is read from the rustls session once tern terminated it, and the TLVs written from it.
//!
//! Names are OpenSSL's (`TLSv1.3`, `TLS_AES_128_GCM_SHA256`, `ECDHE-RSA-AES128-GCM-SHA256`),
//! since the servers reading these TLVs were written for hitch and HAProxy, which send
//! OpenSSL's `SSL_get_version` and `SSL_CIPHER_get_name`.

use rustls::{CipherSuite, HandshakeKind, ProtocolVersion, ServerConnection};
use tern_config::{Named, Tls12Cipher};
use tern_proxy_protocol::{
    PP2_CLIENT_CERT_CONN, PP2_CLIENT_CERT_SESS, PP2_CLIENT_SSL, PP2_SUBTYPE_SSL_CIPHER,
    PP2_SUBTYPE_SSL_VERSION, PP2_TYPE_ALPN, PP2_TYPE_AUTHORITY, PP2_TYPE_SSL,
};

/// What tern knows of a client's TLS session, for the TLVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClientTls<'a> {
    /// `TLSv1.2`, `TLSv1.3`.
    pub version: &'static str,
    /// The suite's OpenSSL name.
    pub cipher: &'static str,
    /// The server name the client asked for (SNI).
    pub sni: Option<&'a str>,
    /// The protocol ALPN chose.
    pub alpn: Option<&'a [u8]>,
    /// The client presented a certificate (verified by `client_auth`: a handshake with one
    /// that fails verification does not complete).
    pub cert: bool,
    /// The session was resumed: a certificate came with the original handshake, not this one.
    pub resumed: bool,
}

impl<'a> ClientTls<'a> {
    /// The facts of an established session.
    pub(crate) fn of(conn: &'a ServerConnection) -> Self {
        Self {
            version: version_name(conn.protocol_version()),
            cipher: conn
                .negotiated_cipher_suite()
                .map_or("", |s| cipher_name(s.suite())),
            sni: conn.server_name(),
            alpn: conn.alpn_protocol(),
            cert: conn.peer_certificates().is_some_and(|c| !c.is_empty()),
            resumed: conn.handshake_kind() == Some(HandshakeKind::Resumed),
        }
    }

    /// Appends `PP2_TYPE_ALPN`, `PP2_TYPE_AUTHORITY` and `PP2_TYPE_SSL` (with its version and
    /// cipher sub-TLVs) to `out`, but not the types `replaced` says another value is sent for.
    pub(super) fn write_tlvs(&self, out: &mut Vec<u8>, replaced: impl Fn(u8) -> bool) {
        if let Some(alpn) = self.alpn.filter(|_| !replaced(PP2_TYPE_ALPN)) {
            tlv(out, PP2_TYPE_ALPN, alpn);
        }
        if let Some(sni) = self.sni.filter(|_| !replaced(PP2_TYPE_AUTHORITY)) {
            tlv(out, PP2_TYPE_AUTHORITY, sni.as_bytes());
        }
        let mut client = PP2_CLIENT_SSL;
        if self.cert {
            client |= PP2_CLIENT_CERT_SESS;
            if !self.resumed {
                client |= PP2_CLIENT_CERT_CONN;
            }
        }
        let verify: u32 = if self.cert { 0 } else { 1 };
        let mut ssl = Vec::with_capacity(5 + 3 + 7 + 3 + 32);
        ssl.push(client);
        ssl.extend_from_slice(&verify.to_be_bytes());
        tlv(&mut ssl, PP2_SUBTYPE_SSL_VERSION, self.version.as_bytes());
        if !self.cipher.is_empty() {
            tlv(&mut ssl, PP2_SUBTYPE_SSL_CIPHER, self.cipher.as_bytes());
        }
        tlv(out, PP2_TYPE_SSL, &ssl);
    }
}

/// One TLV: type, length (big endian), value. Values here are short (names, flags); a longer
/// one would be cut at 65535 bytes rather than announce a wrong length.
pub(super) fn tlv(out: &mut Vec<u8>, kind: u8, value: &[u8]) {
    let len = u16::try_from(value.len()).unwrap_or(u16::MAX);
    out.push(kind);
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&value[..usize::from(len)]);
}

/// OpenSSL's name of a protocol version.
fn version_name(version: Option<ProtocolVersion>) -> &'static str {
    match version {
        Some(ProtocolVersion::TLSv1_3) => "TLSv1.3",
        Some(ProtocolVersion::TLSv1_2) => "TLSv1.2",
        _ => "TLS",
    }
}

/// OpenSSL's name of a suite: TLS 1.3 suites by their RFC 8446 names, TLS 1.2 ones by
/// OpenSSL's own (tern-config lists both spellings).
fn cipher_name(suite: CipherSuite) -> &'static str {
    match suite {
        CipherSuite::TLS13_AES_128_GCM_SHA256 => "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_256_GCM_SHA384 => "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256 => "TLS_CHACHA20_POLY1305_SHA256",
        other => {
            let iana = other.as_str().unwrap_or("");
            Tls12Cipher::from_name(iana)
                .and_then(|c| c.names().get(1).copied())
                .unwrap_or(iana)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_names_are_openssls() {
        assert_eq!(
            cipher_name(CipherSuite::TLS13_AES_256_GCM_SHA384),
            "TLS_AES_256_GCM_SHA384"
        );
        assert_eq!(
            cipher_name(CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256),
            "ECDHE-RSA-AES128-GCM-SHA256"
        );
        assert_eq!(
            cipher_name(CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256),
            "ECDHE-ECDSA-CHACHA20-POLY1305"
        );
    }
}
