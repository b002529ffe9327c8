//! The OpenSSL client context built from the options: versions, TLS 1.2 cipher string and TLS 1.3
//! suites, groups, signature algorithms, ALPN, certificate checking; and the per-connection
//! `Ssl` with its SNI.
//!
//! `--cipher` entries are split as OpenSSL splits them: names starting with `TLS_` are TLS 1.3
//! suites (`SSL_CTX_set_ciphersuites`), the rest one TLS 1.2 cipher string joined with `:`
//! (`SSL_CTX_set_cipher_list`). As with rustls, listing only TLS 1.2 suites offers TLS 1.2 at
//! most and listing only TLS 1.3 suites offers TLS 1.3 alone; `--tls-version` pins both ends.
//! TLS 1.0 and 1.1 lower the security level to 0, since OpenSSL 3 refuses their MD5+SHA-1
//! signatures at level 1 and the server, not the benchmark client, decides what is acceptable.

use std::net::IpAddr;
use std::path::Path;

use openssl::error::ErrorStack;
use openssl::ssl::{
    Ssl, SslContext, SslContextBuilder, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode,
    SslVersion,
};

use crate::args::{value_name, BenchArgs, KxGroup, TlsVersion};
use crate::BenchError;

/// The shared client context and the server name of one stream of load.
pub(crate) struct OsslSetup {
    ctx: SslContext,
    /// SNI (a DNS name; an IP address is not sent, as RFC 6066 says).
    name: String,
    /// With `--cacert`: the name (or address) the certificate must match.
    verify: bool,
}

impl std::fmt::Debug for OsslSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OsslSetup")
            .field("name", &self.name)
            .field("verify", &self.verify)
            .finish_non_exhaustive()
    }
}

impl OsslSetup {
    /// The context described by `args` for a server called `name`; `allow_resume` is false for
    /// the reference probe, which never offers h2.
    pub fn new(args: &BenchArgs, name: &str, allow_resume: bool) -> Result<Self, BenchError> {
        if args.resume.is_some() && allow_resume {
            return Err(BenchError::Tls(
                "--resume is not available with --tls-engine openssl: offering a session \
                 takes SSL_set_session, which the openssl crate exposes only as unsafe code"
                    .to_owned(),
            ));
        }
        let tls = |what: &str, e: ErrorStack| BenchError::Tls(format!("openssl: {what}: {e}"));
        let mut b = SslContext::builder(SslMethod::tls_client()).map_err(|e| tls("context", e))?;
        versions(&mut b, args)?;
        groups(&mut b, &args.groups).map_err(|e| tls("--group", e))?;
        if !args.sigalgs.is_empty() {
            let list: Vec<String> = args.sigalgs.iter().map(value_name).collect();
            b.set_sigalgs_list(&list.join(":"))
                .map_err(|e| tls("--sigalg", e))?;
        }
        let alpn = match allow_resume {
            true => args.offered_alpn(),
            false => args.alpn.iter().filter(|p| *p != "h2").cloned().collect(),
        };
        if !alpn.is_empty() {
            b.set_alpn_protos(&wire_alpn(&alpn)?)
                .map_err(|e| tls("--alpn", e))?;
        }
        // Every handshake full: no client session cache, no TLS 1.2 ticket extension.
        b.set_session_cache_mode(SslSessionCacheMode::OFF);
        b.set_options(SslOptions::NO_TICKET | SslOptions::NO_COMPRESSION);
        match &args.cacert {
            Some(path) => load_roots(&mut b, path)?,
            None => b.set_verify(SslVerifyMode::NONE),
        }
        Ok(Self {
            ctx: b.build(),
            name: name.to_owned(),
            verify: args.cacert.is_some(),
        })
    }

    /// A new connection's `Ssl`, in client mode, with SNI and the name to verify.
    pub fn ssl(&self) -> Result<Ssl, ErrorStack> {
        let mut ssl = Ssl::new(&self.ctx)?;
        ssl.set_connect_state();
        let ip = self.name.parse::<IpAddr>().ok();
        if ip.is_none() {
            ssl.set_hostname(&self.name)?;
        }
        if self.verify {
            match ip {
                Some(ip) => ssl.param_mut().set_ip(ip)?,
                None => ssl.param_mut().set_host(&self.name)?,
            }
        }
        Ok(ssl)
    }
}

/// Protocol versions and suites (see the module docs).
fn versions(b: &mut SslContextBuilder, args: &BenchArgs) -> Result<(), BenchError> {
    let (tls13, tls12): (Vec<&str>, Vec<&str>) = args
        .ciphers
        .iter()
        .map(|c| c.trim())
        .filter(|c| !c.is_empty())
        .partition(|c| c.starts_with("TLS_"));
    let bad = |what: &str, e: ErrorStack| {
        BenchError::Tls(format!(
            "openssl refuses {what} ({e}); see `openssl ciphers -v`"
        ))
    };
    if !tls12.is_empty() {
        let list = tls12.join(":");
        b.set_cipher_list(&list)
            .map_err(|e| bad(&format!("cipher string {list:?}"), e))?;
    }
    if !tls13.is_empty() {
        let list = tls13.join(":");
        b.set_ciphersuites(&list)
            .map_err(|e| bad(&format!("TLS 1.3 suites {list:?}"), e))?;
    }
    let (min, max) = match args.tls_version {
        Some(v) => (v, v),
        None if !tls12.is_empty() && tls13.is_empty() => (TlsVersion::Tls12, TlsVersion::Tls12),
        None if tls12.is_empty() && !tls13.is_empty() => (TlsVersion::Tls13, TlsVersion::Tls13),
        None => (TlsVersion::Tls12, TlsVersion::Tls13),
    };
    if matches!(min, TlsVersion::Tls10 | TlsVersion::Tls11) {
        b.set_security_level(0);
    }
    let pin = |e| bad("the version range", e);
    b.set_min_proto_version(Some(version(min))).map_err(pin)?;
    b.set_max_proto_version(Some(version(max))).map_err(pin)
}

fn version(v: TlsVersion) -> SslVersion {
    match v {
        TlsVersion::Tls10 => SslVersion::TLS1,
        TlsVersion::Tls11 => SslVersion::TLS1_1,
        TlsVersion::Tls12 => SslVersion::TLS1_2,
        TlsVersion::Tls13 => SslVersion::TLS1_3,
    }
}

/// `--group` in OpenSSL's names; OpenSSL refuses those it does not have (ML-KEM before 3.5).
fn groups(b: &mut SslContextBuilder, groups: &[KxGroup]) -> Result<(), ErrorStack> {
    let names: Vec<&str> = groups
        .iter()
        .map(|g| match g {
            KxGroup::X25519 => "X25519",
            KxGroup::P256 => "P-256",
            KxGroup::P384 => "P-384",
            KxGroup::X25519mlkem768 => "X25519MLKEM768",
            KxGroup::P256mlkem768 => "SecP256r1MLKEM768",
            KxGroup::Mlkem768 => "MLKEM768",
        })
        .collect();
    b.set_groups_list(&names.join(":"))
}

/// ALPN protocols in wire format: each prefixed by its length.
pub(super) fn wire_alpn(protocols: &[String]) -> Result<Vec<u8>, BenchError> {
    let mut wire = Vec::new();
    for p in protocols {
        let len = u8::try_from(p.len())
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| BenchError::Tls(format!("--alpn: bad protocol name {p:?}")))?;
        wire.push(len);
        wire.extend_from_slice(p.as_bytes());
    }
    Ok(wire)
}

fn load_roots(b: &mut SslContextBuilder, path: &Path) -> Result<(), BenchError> {
    b.set_ca_file(path)
        .map_err(|e| BenchError::Tls(format!("{}: {e}", path.display())))?;
    b.set_verify(SslVerifyMode::PEER);
    Ok(())
}
