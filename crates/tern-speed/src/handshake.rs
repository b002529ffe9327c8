//! Full TLS handshakes per second in memory: a rustls client and a rustls server in one thread,
//! records passed through a buffer, no sockets and no system calls.
//!
//! This is the ceiling a proxy's handshake rate can approach on one core: the server side is
//! tern's real termination configuration ([`tern_tls::server_config_from_keys`]: tern's
//! provider and policy, ALPN, one TLS 1.3 ticket per handshake), the client is tern's own
//! ([`tern_tls::client_config`], resumption off, so every handshake is a full one; it checks the
//! server's signature but not the self-signed chain, like `tern bench`). Every handshake is
//! checked to have completed, as a full handshake, in the expected version.
//!
//! The client's and the server's calls are timed apart, so each row also gives the server's
//! share of the CPU time and the server-only rate (handshakes per CPU-second of server work).
//!
//! Certificates: RSA-2048 and ECDSA P-256 are those `tern demo` generates. Ed25519 is not among
//! them (browsers do not accept Ed25519 certificates), but tern's provider can load and serve
//! an Ed25519 key, so it is measured too.

use std::sync::Arc;

use rcgen::{CertificateParams, KeyPair};
use rustls::crypto::aws_lc_rs::kx_group;
use rustls::crypto::{CryptoProvider, SupportedKxGroup};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, ClientConnection, Connection, HandshakeKind, ServerConfig};
use rustls::{ServerConnection, SupportedProtocolVersion};
use tern_tls::{ClientOptions, KeyKind};

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Op, Settings, Split};
use crate::report::{HandshakeDetail, Row};
use crate::sig::progress;
use crate::SpeedError;

/// A full handshake takes 2 (TLS 1.3) or 3 (TLS 1.2) flights plus the ticket; more means
/// something is wrong.
const MAX_FLIGHTS: usize = 8;

const CLIENT: usize = 0;
const SERVER: usize = 1;

/// One handshake row of a certificate: version and key exchange group.
#[derive(Debug, Clone, Copy)]
struct Case {
    version: &'static SupportedProtocolVersion,
    group: &'static dyn SupportedKxGroup,
}

fn cases(cert: Algo) -> Vec<Case> {
    let tls13 = &rustls::version::TLS13;
    let tls12 = &rustls::version::TLS12;
    let case = |version, group| Case { version, group };
    let mut cases = vec![case(tls13, kx_group::X25519), case(tls12, kx_group::X25519)];
    if cert != Algo::HandshakeEd25519 {
        // What a browser offering the post-quantum hybrid first gets (TLS 1.3 only).
        cases.push(case(tls13, kx_group::X25519MLKEM768));
    }
    cases
}

/// Measures the selected handshake rows.
pub fn run(algos: &[Algo], settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let mut rows = Vec::new();
    let name = ServerName::try_from("localhost")
        .map_err(|err| SpeedError::Handshake(format!("server name: {err}")))?;
    for &cert in algos {
        if cert.section() != Section::Handshake {
            continue;
        }
        let server = tern_tls::server_config_from_keys(vec![certified_key(cert)?])?;
        for case in cases(cert) {
            let client = client_config(case)?;
            // One handshake outside the clock, to check it works and record what it negotiated.
            let first = handshake(&server, &client, &name, &mut Split::default())?;
            let detail = HandshakeDetail {
                version: version_name(case.version).to_owned(),
                group: format!("{:?}", case.group.name()),
                negotiated: tern_tls::describe(&first),
            };
            if first.protocol_version() != Some(case.version.version) {
                return Err(SpeedError::Handshake(format!(
                    "expected {}, negotiated {}",
                    detail.version, detail.negotiated
                )));
            }
            progress(
                cert,
                &format!("{} {} handshake", detail.version, detail.group),
                settings,
            );
            let measured = measure(settings, || {
                let (server, client, name) = (&server, &client, &name);
                let op: Op =
                    Box::new(move |split| handshake(server, client, name, split).map(drop));
                Ok(op)
            })?;
            let algorithm = cert.name().trim_start_matches("handshake-");
            let mut row = Row::new(Section::Handshake, algorithm, "handshake", &measured);
            row.handshake = Some(detail);
            rows.push(row);
        }
    }
    Ok(rows)
}

fn version_name(version: &SupportedProtocolVersion) -> &'static str {
    if version.version == rustls::ProtocolVersion::TLSv1_2 {
        "TLSv1.2"
    } else {
        "TLSv1.3"
    }
}

/// The served certificate of a handshake row, generated in memory.
fn certified_key(cert: Algo) -> Result<Arc<CertifiedKey>, SpeedError> {
    let names = ["localhost".to_owned()];
    match cert {
        Algo::HandshakeRsa2048 => {
            Ok(tern_tls::self_signed(&names, KeyKind::Rsa2048)?.certified_key)
        }
        Algo::HandshakeEcdsaP256 => {
            Ok(tern_tls::self_signed(&names, KeyKind::EcdsaP256)?.certified_key)
        }
        _ => {
            let key_pair = KeyPair::generate_for(&rcgen::PKCS_ED25519)?;
            let generated = CertificateParams::new(names.to_vec())?.self_signed(&key_pair)?;
            let der = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key_pair.serialize_der()));
            // Loaded through tern's provider, as tern would load an Ed25519 key file.
            let signing = tern_tls::provider().key_provider.load_private_key(der)?;
            Ok(Arc::new(CertifiedKey::new(
                vec![generated.der().clone()],
                signing,
            )))
        }
    }
}

/// tern's client configuration offering only the case's version and group, no resumption.
fn client_config(case: Case) -> Result<Arc<ClientConfig>, SpeedError> {
    let provider = CryptoProvider {
        kx_groups: vec![case.group],
        ..(*tern_tls::provider()).clone()
    };
    let options = ClientOptions {
        resumption: false,
        versions: Some(vec![case.version]),
        ..ClientOptions::default()
    };
    Ok(tern_tls::client_config_with_provider(
        &options,
        Arc::new(provider),
    )?)
}

/// One full handshake; returns the server side, checked complete and full.
fn handshake(
    server_config: &Arc<ServerConfig>,
    client_config: &Arc<ClientConfig>,
    name: &ServerName<'static>,
    split: &mut Split,
) -> Result<Connection, SpeedError> {
    let client = split.time(CLIENT, || {
        ClientConnection::new(client_config.clone(), name.clone())
    })?;
    let server = split.time(SERVER, || ServerConnection::new(server_config.clone()))?;
    let (mut client, mut server) = (Connection::from(client), Connection::from(server));
    let mut buffer = Vec::with_capacity(8192);
    let mut flights = 0;
    loop {
        let sent = transfer(&mut client, &mut server, &mut buffer, split, CLIENT)?
            + transfer(&mut server, &mut client, &mut buffer, split, SERVER)?;
        if sent == 0 {
            break;
        }
        flights += 1;
        if flights > MAX_FLIGHTS {
            return Err(SpeedError::Handshake(format!(
                "still sending after {MAX_FLIGHTS} flights"
            )));
        }
    }
    for (side, conn) in [("client", &client), ("server", &server)] {
        if conn.is_handshaking() {
            return Err(SpeedError::Handshake(format!("{side} did not finish")));
        }
        if conn.handshake_kind() != Some(HandshakeKind::Full) {
            return Err(SpeedError::Handshake(format!(
                "{side} saw {:?}, not a full handshake",
                conn.handshake_kind()
            )));
        }
    }
    Ok(server)
}

/// Moves everything `from` wants to send into `to`; returns the number of bytes moved. The
/// sender's calls are charged to `from_part`, the receiver's to the other part.
fn transfer(
    from: &mut Connection,
    to: &mut Connection,
    buffer: &mut Vec<u8>,
    split: &mut Split,
    from_part: usize,
) -> Result<usize, SpeedError> {
    let io_error = |err: std::io::Error| SpeedError::Handshake(err.to_string());
    buffer.clear();
    split.time(from_part, || {
        while from.wants_write() {
            from.write_tls(buffer).map_err(io_error)?;
        }
        Ok::<_, SpeedError>(())
    })?;
    let mut pending = buffer.as_slice();
    split.time(1 - from_part, || {
        while !pending.is_empty() {
            to.read_tls(&mut pending).map_err(io_error)?;
            to.process_new_packets()?;
        }
        Ok::<_, SpeedError>(())
    })?;
    Ok(buffer.len())
}
