//! Signatures: sign/s and verify/s per key, as in `openssl speed rsa2048 ecdsap256 ed25519`.
//!
//! The schemes are those tern's handshakes use: RSA-PSS with SHA-256 (TLS 1.3 allows no
//! PKCS#1 v1.5 handshake signatures, and rustls prefers PSS in TLS 1.2 too), ECDSA with the
//! curve's hash and DER signatures, and Ed25519. The message is 128 bytes, about what a TLS 1.3
//! CertificateVerify signs (64 spaces, a context string and a transcript hash); its hashing is
//! a negligible part of the cost. Keys are generated once at start and shared by the threads.
//! Verification uses a public key parsed once, as `openssl speed` does; a TLS client parses the
//! certificate's key again per handshake, which the handshake rows include.
//!
//! RSA and ECDSA P-256 keys also get a batched row ([`crate::batched`]): RSA signatures eight
//! at a time on AVX-512 IFMA, P-256 signatures from nonce pairs computed eight at a time.

use std::sync::Arc;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::rsa::KeySize;
use aws_lc_rs::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, ParsedPublicKey};
use aws_lc_rs::signature::{EcdsaVerificationAlgorithm, RsaKeyPair, VerificationAlgorithm};

use crate::catalog::{Algo, Section};
use crate::measure::{measure, Op, Settings};
use crate::report::Row;
use crate::SpeedError;

const MESSAGE: [u8; 128] = [0x20; 128];

/// A private key of one of the measured kinds.
#[derive(Debug)]
enum Signer {
    Rsa(RsaKeyPair),
    Ecdsa(EcdsaKeyPair, &'static EcdsaVerificationAlgorithm),
    Ed25519(Ed25519KeyPair),
}

impl Signer {
    fn generate(algo: Algo) -> Result<Self, SpeedError> {
        let failed = |err| SpeedError::crypto(format!("{} key generation", algo.name()), err);
        let rsa = |size| RsaKeyPair::generate(size).map(Signer::Rsa).map_err(failed);
        let ecdsa = |alg, verify| {
            EcdsaKeyPair::generate(alg)
                .map(|key| Signer::Ecdsa(key, verify))
                .map_err(failed)
        };
        match algo {
            Algo::Rsa2048 => rsa(KeySize::Rsa2048),
            Algo::Rsa3072 => rsa(KeySize::Rsa3072),
            Algo::Rsa4096 => rsa(KeySize::Rsa4096),
            Algo::EcdsaP256 => ecdsa(
                &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
                &signature::ECDSA_P256_SHA256_ASN1,
            ),
            Algo::EcdsaP384 => ecdsa(
                &signature::ECDSA_P384_SHA384_ASN1_SIGNING,
                &signature::ECDSA_P384_SHA384_ASN1,
            ),
            Algo::Ed25519 => Ed25519KeyPair::generate()
                .map(Signer::Ed25519)
                .map_err(failed),
            other => Err(SpeedError::crypto(
                format!("{} signing", other.name()),
                "not a signature algorithm",
            )),
        }
    }

    fn verification(&self) -> &'static dyn VerificationAlgorithm {
        match self {
            Signer::Rsa(_) => &signature::RSA_PSS_2048_8192_SHA256,
            Signer::Ecdsa(_, verify) => *verify,
            Signer::Ed25519(_) => &signature::ED25519,
        }
    }

    fn public_key(&self) -> &[u8] {
        match self {
            Signer::Rsa(key) => key.public_key().as_ref(),
            Signer::Ecdsa(key, _) => key.public_key().as_ref(),
            Signer::Ed25519(key) => key.public_key().as_ref(),
        }
    }

    /// Signs `MESSAGE` into `out` (resized to the signature).
    fn sign(&self, rng: &SystemRandom, out: &mut Vec<u8>) -> Result<(), SpeedError> {
        let failed = |err| SpeedError::crypto("signing", err);
        match self {
            Signer::Rsa(key) => {
                out.resize(key.public_modulus_len(), 0);
                key.sign(&signature::RSA_PSS_SHA256, rng, &MESSAGE, out)
                    .map_err(failed)
            }
            Signer::Ecdsa(key, _) => {
                let sig = key.sign(rng, &MESSAGE).map_err(failed)?;
                out.clear();
                out.extend_from_slice(sig.as_ref());
                Ok(())
            }
            Signer::Ed25519(key) => {
                let sig = key.sign(&MESSAGE);
                out.clear();
                out.extend_from_slice(sig.as_ref());
                Ok(())
            }
        }
    }
}

/// Measures sign/s and verify/s for each algorithm of the signature section.
pub fn run(algos: &[Algo], settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    let mut rows = Vec::new();
    for &algo in algos {
        if algo.section() != Section::Signature {
            continue;
        }
        eprintln!("generating a {} key", algo.name());
        let signer = Arc::new(Signer::generate(algo)?);
        let rng = SystemRandom::new();
        let mut reference = Vec::new();
        signer.sign(&rng, &mut reference)?;
        let public = ParsedPublicKey::new(signer.verification(), signer.public_key())
            .map_err(|err| SpeedError::crypto(format!("{} public key", algo.name()), err))?;

        progress(algo, "sign", settings);
        let measured = measure(settings, || {
            let (signer, rng, mut out) = (signer.clone(), SystemRandom::new(), Vec::new());
            let op: Op = Box::new(move |_| signer.sign(&rng, &mut out));
            Ok(op)
        })?;
        rows.push(Row::new(Section::Signature, algo.name(), "sign", &measured));
        match signer.as_ref() {
            Signer::Rsa(key) => {
                rows.extend(crate::batched::measure_rsa(algo, key, &MESSAGE, settings)?)
            }
            Signer::Ecdsa(key, _) if algo == Algo::EcdsaP256 => {
                rows.extend(crate::batched::measure_p256(algo, key, &MESSAGE, settings)?)
            }
            _ => {}
        }

        progress(algo, "verify", settings);
        let measured = measure(settings, || {
            let (public, reference) = (&public, &reference);
            let op: Op = Box::new(move |_| {
                public
                    .verify_sig(&MESSAGE, reference)
                    .map_err(|err| SpeedError::crypto("verification", err))
            });
            Ok(op)
        })?;
        rows.push(Row::new(
            Section::Signature,
            algo.name(),
            "verify",
            &measured,
        ));
    }
    Ok(rows)
}

/// The `Doing ...` line of `openssl speed`, on stderr.
pub(crate) fn progress(algo: Algo, operation: &str, settings: &Settings) {
    eprintln!(
        "doing {} {operation} for {:.2}s on {} thread(s)",
        algo.name(),
        settings.duration.as_secs_f64(),
        settings.threads
    );
}
