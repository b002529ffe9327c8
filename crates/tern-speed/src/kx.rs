//! Key agreement: X25519, P-256, ML-KEM-768 and the X25519MLKEM768 hybrid.
//!
//! Three kinds of rows:
//! - **primitives** through aws-lc-rs: `keygen` (a private key and its public encoding, what
//!   each side sends), `derive` (the shared secret from a peer key parsed once, which is what
//!   `openssl speed ecdhx25519` counts as an "op"), and ML-KEM-768 `keygen` (including the
//!   encapsulation key's encoding), `encapsulate` (from the client's key bytes, as a server
//!   does) and `decapsulate`; X25519 also eight at a time on AVX-512 IFMA
//!   ([`crate::batched`]: `keygen_batched`, `derive_batched`);
//! - **the exchange as TLS runs it** (`tls_key_exchange`): rustls's own key exchange groups,
//!   the code a tern handshake executes. The client's share is `start` (its key pair) plus
//!   `complete` (parsing the server's share, deriving); the server's share is
//!   `start_and_complete` (for the hybrid: an X25519 key pair and derivation plus ML-KEM
//!   encapsulation). Both sides run in one thread, timed apart, so the row gives exchanges/s
//!   for the pair and for each side alone. Both sides' secrets are compared on every exchange.

use aws_lc_rs::agreement::{self, ParsedPublicKey, PrivateKey, UnparsedPublicKey};
use aws_lc_rs::error::Unspecified;
use aws_lc_rs::kem::{Ciphertext, DecapsulationKey, EncapsulationKey, ML_KEM_768};
use rustls::crypto::aws_lc_rs::kx_group;
use rustls::crypto::SupportedKxGroup;

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Measured, Op, Settings};
use crate::report::Row;
use crate::sig::progress;
use crate::SpeedError;

/// Measures every selected key agreement algorithm.
pub fn run(algos: &[Algo], settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let mut rows = Vec::new();
    for &algo in algos {
        match algo {
            Algo::X25519 => {
                ecdh(algo, &agreement::X25519, settings, &mut rows)?;
                rows.extend(crate::batched::measure_x25519(settings)?);
            }
            Algo::P256 => ecdh(algo, &agreement::ECDH_P256, settings, &mut rows)?,
            Algo::MlKem768 => mlkem(algo, settings, &mut rows)?,
            _ => {}
        }
        if let Some(group) = tls_group(algo) {
            progress(algo, "tls_key_exchange", settings);
            let measured = measure(settings, || Ok(tls_exchange(group)))?;
            rows.push(Row::new(
                Section::KeyAgreement,
                algo.name(),
                "tls_key_exchange",
                &measured,
            ));
        }
    }
    Ok(rows)
}

/// rustls's group for an algorithm that TLS negotiates as a whole.
fn tls_group(algo: Algo) -> Option<&'static dyn SupportedKxGroup> {
    match algo {
        Algo::X25519 => Some(kx_group::X25519),
        Algo::P256 => Some(kx_group::SECP256R1),
        Algo::X25519MlKem768 => Some(kx_group::X25519MLKEM768),
        _ => None,
    }
}

/// One exchange as a TLS handshake runs it: client part 0, server part 1.
fn tls_exchange<'a>(group: &'static dyn SupportedKxGroup) -> Op<'a> {
    Box::new(move |split| {
        let client = split.time(0, || group.start())?;
        let server = split.time(1, || group.start_and_complete(client.pub_key()))?;
        let secret = split.time(0, || client.complete(&server.pub_key))?;
        if secret.secret_bytes() != server.secret.secret_bytes() {
            return Err(SpeedError::crypto(
                format!("{:?} exchange", group.name()),
                "client and server derived different secrets",
            ));
        }
        Ok(())
    })
}

fn ecdh(
    algo: Algo,
    alg: &'static agreement::Algorithm,
    settings: &Settings,
    rows: &mut Vec<Row>,
) -> Result<(), SpeedError> {
    let failed = |what: &str, err: Unspecified| SpeedError::crypto(what, err);
    let keygen = move || -> Result<(PrivateKey, Vec<u8>), SpeedError> {
        let private = PrivateKey::generate(alg).map_err(|err| failed("key generation", err))?;
        let public = private
            .compute_public_key()
            .map_err(|err| failed("public key", err))?;
        Ok((private, public.as_ref().to_vec()))
    };

    progress(algo, "keygen", settings);
    let measured = measure(settings, || {
        let op: Op = Box::new(move |_| keygen().map(drop));
        Ok(op)
    })?;
    rows.push(Row::new(
        Section::KeyAgreement,
        algo.name(),
        "keygen",
        &measured,
    ));

    let (mine, _) = keygen()?;
    let (_, peer) = keygen()?;
    progress(algo, "derive", settings);
    let measured = measure(settings, || {
        // Parsed per thread: agreement takes the parsed key mutably inside aws-lc-rs.
        let parsed = ParsedPublicKey::try_from(UnparsedPublicKey::new(alg, &peer))
            .map_err(|err| SpeedError::crypto("peer public key", err))?;
        let mine = &mine;
        let op: Op = Box::new(move |_| {
            agreement::agree(mine, parsed.clone(), Unspecified, |secret| Ok(secret.len()))
                .map(drop)
                .map_err(|err| failed("derivation", err))
        });
        Ok(op)
    })?;
    rows.push(Row::new(
        Section::KeyAgreement,
        algo.name(),
        "derive",
        &measured,
    ));
    Ok(())
}

/// ML-KEM-768 key generation as a TLS client does it: the key pair and the encoded
/// encapsulation key it sends.
fn mlkem_keygen() -> Result<(DecapsulationKey, Vec<u8>), SpeedError> {
    let dk = DecapsulationKey::generate(&ML_KEM_768)
        .map_err(|err| SpeedError::crypto("ML-KEM-768 keygen", err))?;
    let ek = dk
        .encapsulation_key()
        .and_then(|ek| ek.key_bytes())
        .map_err(|err| SpeedError::crypto("ML-KEM-768 encapsulation key", err))?;
    Ok((dk, ek.as_ref().to_vec()))
}

/// ML-KEM-768 encapsulation as a TLS server does it, from the client's key bytes; returns the
/// ciphertext and the shared secret.
fn mlkem_encapsulate(ek: &[u8]) -> Result<(Vec<u8>, Vec<u8>), SpeedError> {
    let key = EncapsulationKey::new(&ML_KEM_768, ek)
        .map_err(|err| SpeedError::crypto("ML-KEM-768 encapsulation key", err))?;
    let (ct, secret) = key
        .encapsulate()
        .map_err(|err| SpeedError::crypto("ML-KEM-768 encapsulate", err))?;
    Ok((ct.as_ref().to_vec(), secret.as_ref().to_vec()))
}

fn mlkem(algo: Algo, settings: &Settings, rows: &mut Vec<Row>) -> Result<(), SpeedError> {
    let mut push = |operation: &str, measured: Measured| {
        rows.push(Row::new(
            Section::KeyAgreement,
            algo.name(),
            operation,
            &measured,
        ));
    };

    progress(algo, "keygen", settings);
    push(
        "keygen",
        measure(settings, || {
            let op: Op = Box::new(|_| mlkem_keygen().map(drop));
            Ok(op)
        })?,
    );

    let (dk, ek) = mlkem_keygen()?;
    progress(algo, "encapsulate", settings);
    push(
        "encapsulate",
        measure(settings, || {
            let ek = &ek;
            let op: Op = Box::new(move |_| mlkem_encapsulate(ek).map(drop));
            Ok(op)
        })?,
    );

    let (ct, expected) = mlkem_encapsulate(&ek)?;
    progress(algo, "decapsulate", settings);
    push(
        "decapsulate",
        measure(settings, || {
            let (dk, ct, expected) = (&dk, &ct, &expected);
            let op: Op = Box::new(move |_| {
                let secret = dk
                    .decapsulate(Ciphertext::from(ct.as_slice()))
                    .map_err(|err| SpeedError::crypto("ML-KEM-768 decapsulate", err))?;
                if secret.as_ref() != expected.as_slice() {
                    return Err(SpeedError::crypto("ML-KEM-768 decapsulate", "wrong secret"));
                }
                Ok(())
            });
            Ok(op)
        })?,
    );
    Ok(())
}
