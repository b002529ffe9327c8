//! TLS 1.3 cipher suites whose key schedule runs HKDF on keyed HMAC states, with the part of
//! it that is the same in every full handshake computed once.
//!
//! Why: rustls' aws-lc-rs provider implements each HKDF step with aws-lc's one-shot functions.
//! A pseudorandom key that came from HKDF-Extract is kept as *salt and secret*, so every
//! HKDF-Expand-Label derived from it runs `HKDF()` again: the extract, then the expand, each
//! keying HMAC from scratch (hashing the inner and outer padded keys) before the one or two
//! blocks of real input. A full TLS 1.3 handshake derives about 20 secrets, keys and IVs on the
//! server, and most of that hashing is this repeated set-up. Here a pseudorandom key is kept as
//! a *keyed* HMAC (the padded-key blocks hashed once, their states copied for each use), so each
//! label costs one HMAC over a few bytes: the same RFC 5869 output for a fraction of the
//! hashing. It matters for the SHA-384 suite, whose hash has no instructions of its own on
//! common x86 CPUs (~0.2 µs per 128-byte block on the benchmark host); with SHA-256 and the SHA
//! extensions the hashing was cheap to begin with.
//!
//! One step further: without a pre-shared key (every full handshake), RFC 8446's Early Secret is
//! `HKDF-Extract(0, 0)` and the salt of the Handshake Secret is
//! `Derive-Secret(Early Secret, "derived", "")`: both are constants of the hash. They are
//! computed once per process (with the HMAC keyed by each), which spares the ten or so hash
//! blocks that rustls' key schedule would spend on them in every handshake. Outputs are
//! recognised by their exact inputs, so a handshake with a PSK, whose Early Secret differs,
//! takes the general path.
//!
//! Only the HKDF changes: the AEAD, the transcript hash, QUIC support and the limits of each
//! suite are the provider's own (the suites are rebuilt from the provider's, once). The output
//! is checked against RFC 5869's vectors and against the provider's own HKDF in `hkdf/tests.rs`,
//! and both implementations meet in real handshakes there.

use std::sync::OnceLock;

use aws_lc_rs::{constant_time, digest, hmac};
use rustls::crypto::hash::HashAlgorithm;
use rustls::crypto::tls13::{Hkdf, HkdfExpander, OkmBlock, OutputLengthError};
use rustls::{CipherSuiteCommon, SupportedCipherSuite, Tls13CipherSuite};

/// The longest hash output of the suites (SHA-384), and of any HMAC tag rustls handles.
const MAX_HASH_LEN: usize = rustls::crypto::hmac::Tag::MAX_LEN;

static HKDF_SHA256: HmacHkdf = HmacHkdf::new(&hmac::HMAC_SHA256, &NO_PSK_SHA256);
static HKDF_SHA384: HmacHkdf = HmacHkdf::new(&hmac::HMAC_SHA384, &NO_PSK_SHA384);
static NO_PSK_SHA256: OnceLock<NoPsk> = OnceLock::new();
static NO_PSK_SHA384: OnceLock<NoPsk> = OnceLock::new();

/// HKDF (RFC 5869) for one hash, on aws-lc-rs' keyed HMAC.
struct HmacHkdf {
    algorithm: &'static hmac::Algorithm,
    /// The constants of a handshake without PSK, computed on first use.
    no_psk: &'static OnceLock<NoPsk>,
}

/// The start of the key schedule of every handshake without PSK (RFC 8446, section 7.1).
struct NoPsk {
    /// HMAC keyed with the Early Secret, `HKDF-Extract(0, 0)`.
    early: hmac::Key,
    /// The HkdfLabel of `Derive-Secret(., "derived", "")`.
    derived_info: Vec<u8>,
    /// `Derive-Secret(Early Secret, "derived", "")`: the salt of the Handshake Secret.
    derived: Vec<u8>,
    /// HMAC keyed with `derived`, for extracting the Handshake Secret.
    derived_key: hmac::Key,
}

impl HmacHkdf {
    const fn new(algorithm: &'static hmac::Algorithm, no_psk: &'static OnceLock<NoPsk>) -> Self {
        Self { algorithm, no_psk }
    }

    fn hash_len(&self) -> usize {
        self.algorithm.digest_algorithm().output_len()
    }

    fn keyed(&self, key: &[u8]) -> hmac::Key {
        hmac::Key::new(*self.algorithm, key)
    }

    fn no_psk(&self) -> &'static NoPsk {
        self.no_psk.get_or_init(|| {
            let len = self.hash_len();
            let zeros = [0u8; MAX_HASH_LEN];
            let early_secret = hmac::sign(&self.keyed(&zeros[..len]), &zeros[..len]);
            let early = self.keyed(early_secret.as_ref());
            let empty_hash = digest::digest(self.algorithm.digest_algorithm(), &[]);
            let derived_info = hkdf_label(len, b"derived", empty_hash.as_ref());
            let mut derived = vec![0u8; len];
            expand(&early, &[&derived_info], &mut derived);
            let derived_key = self.keyed(&derived);
            NoPsk {
                early,
                derived_info,
                derived,
                derived_key,
            }
        })
    }

    /// HKDF-Extract, then the expander keyed with the result.
    fn extract(&self, salt: &[u8], secret: &[u8]) -> Box<dyn HkdfExpander> {
        let no_psk = self.no_psk();
        // The salt is secret when a PSK is in play: compare in constant time.
        let prk = if constant_time::verify_slices_are_equal(salt, &no_psk.derived).is_ok() {
            hmac::sign(&no_psk.derived_key, secret)
        } else {
            hmac::sign(&self.keyed(salt), secret)
        };
        Box::new(Expander {
            key: self.keyed(prk.as_ref()),
            known: None,
        })
    }
}

impl Hkdf for HmacHkdf {
    fn extract_from_zero_ikm(&self, salt: Option<&[u8]>) -> Box<dyn HkdfExpander> {
        match salt {
            None => {
                let no_psk = self.no_psk();
                Box::new(Expander {
                    key: no_psk.early.clone(),
                    known: Some(no_psk),
                })
            }
            Some(salt) => {
                let zeros = [0u8; MAX_HASH_LEN];
                self.extract(salt, &zeros[..self.hash_len()])
            }
        }
    }

    fn extract_from_secret(&self, salt: Option<&[u8]>, secret: &[u8]) -> Box<dyn HkdfExpander> {
        let zeros = [0u8; MAX_HASH_LEN];
        self.extract(salt.unwrap_or(&zeros[..self.hash_len()]), secret)
    }

    fn expander_for_okm(&self, okm: &OkmBlock) -> Box<dyn HkdfExpander> {
        Box::new(Expander {
            key: self.keyed(okm.as_ref()),
            known: None,
        })
    }

    fn hmac_sign(&self, key: &OkmBlock, message: &[u8]) -> rustls::crypto::hmac::Tag {
        let tag = hmac::sign(&self.keyed(key.as_ref()), message);
        rustls::crypto::hmac::Tag::new(tag.as_ref())
    }

    fn fips(&self) -> bool {
        // The same answer as the provider's own primitives give.
        aws_lc_rs::try_fips_mode().is_ok()
    }
}

/// HKDF-Expand from a keyed pseudorandom key.
struct Expander {
    key: hmac::Key,
    /// Set when the key is the no-PSK Early Secret, whose "derived" output is known.
    known: Option<&'static NoPsk>,
}

impl HkdfExpander for Expander {
    fn expand_slice(&self, info: &[&[u8]], output: &mut [u8]) -> Result<(), OutputLengthError> {
        if output.len() > 255 * self.hash_len() {
            return Err(OutputLengthError);
        }
        match self.known {
            Some(no_psk)
                if output.len() == no_psk.derived.len()
                    && concat_eq(info, &no_psk.derived_info) =>
            {
                output.copy_from_slice(&no_psk.derived);
            }
            _ => expand(&self.key, info, output),
        }
        Ok(())
    }

    fn expand_block(&self, info: &[&[u8]]) -> OkmBlock {
        let mut block = [0u8; MAX_HASH_LEN];
        let output = &mut block[..self.hash_len()];
        match self.known {
            Some(no_psk) if concat_eq(info, &no_psk.derived_info) => {
                output.copy_from_slice(&no_psk.derived);
            }
            _ => expand(&self.key, info, output),
        }
        OkmBlock::new(output)
    }

    fn hash_len(&self) -> usize {
        self.key.algorithm().digest_algorithm().output_len()
    }
}

/// RFC 5869 HKDF-Expand: `T(i) = HMAC(PRK, T(i-1) | info | i)`. `output` is at most 255 blocks
/// long (checked by the caller).
fn expand(key: &hmac::Key, info: &[&[u8]], output: &mut [u8]) {
    let block_len = key.algorithm().digest_algorithm().output_len();
    let mut previous: Option<hmac::Tag> = None;
    for (counter, chunk) in (1..=u8::MAX).zip(output.chunks_mut(block_len)) {
        let mut ctx = hmac::Context::with_key(key);
        if let Some(previous) = &previous {
            ctx.update(previous.as_ref());
        }
        for part in info {
            ctx.update(part);
        }
        ctx.update(&[counter]);
        let tag = ctx.sign();
        chunk.copy_from_slice(&tag.as_ref()[..chunk.len()]);
        previous = Some(tag);
    }
}

/// RFC 8446's HkdfLabel for an output of `len` bytes: length, "tls13 " + label, context.
fn hkdf_label(len: usize, label: &[u8], context: &[u8]) -> Vec<u8> {
    const PREFIX: &[u8] = b"tls13 ";
    let mut info = Vec::with_capacity(4 + PREFIX.len() + label.len() + context.len());
    // Lengths of hashes and fixed labels, all far below the field limits.
    info.extend_from_slice(&(len as u16).to_be_bytes());
    info.push((PREFIX.len() + label.len()) as u8);
    info.extend_from_slice(PREFIX);
    info.extend_from_slice(label);
    info.push(context.len() as u8);
    info.extend_from_slice(context);
    info
}

/// Whether the concatenation of `parts` is `whole` (without concatenating).
fn concat_eq(parts: &[&[u8]], whole: &[u8]) -> bool {
    let mut rest = whole;
    for part in parts {
        match rest.strip_prefix(*part) {
            Some(after) => rest = after,
            None => return false,
        }
    }
    rest.is_empty()
}

/// The provider's TLS 1.3 suites, rebuilt once with the HMAC-based HKDF.
fn rebuilt() -> &'static [Tls13CipherSuite] {
    static SUITES: OnceLock<Vec<Tls13CipherSuite>> = OnceLock::new();
    SUITES.get_or_init(|| {
        rustls::crypto::aws_lc_rs::ALL_CIPHER_SUITES
            .iter()
            .filter_map(|suite| suite.tls13())
            .filter_map(|theirs| {
                let hkdf = match theirs.common.hash_provider.algorithm() {
                    HashAlgorithm::SHA256 => &HKDF_SHA256,
                    HashAlgorithm::SHA384 => &HKDF_SHA384,
                    _ => return None,
                };
                Some(Tls13CipherSuite {
                    common: CipherSuiteCommon {
                        suite: theirs.common.suite,
                        hash_provider: theirs.common.hash_provider,
                        confidentiality_limit: theirs.common.confidentiality_limit,
                    },
                    hkdf_provider: hkdf,
                    aead_alg: theirs.aead_alg,
                    quic: theirs.quic,
                })
            })
            .collect()
    })
}

/// The aws-lc-rs provider's TLS 1.3 suite of the same name as `suite`, with the HMAC-based
/// HKDF; a TLS 1.2 suite is returned unchanged.
///
/// Suites are matched by name (rustls' own equality for suites): the provider's statics are
/// not guaranteed one address each, so pointer identity cannot tell whose a suite is. tern
/// builds every configuration on aws-lc-rs, so a TLS 1.3 suite passed here is one of them.
/// [`provider()`](crate::provider()) applies this to every suite it offers; a crate that builds
/// its own provider from the aws-lc-rs suites (`tern bench`) maps its suites through it too.
pub fn with_hmac_hkdf(suite: SupportedCipherSuite) -> SupportedCipherSuite {
    match suite {
        SupportedCipherSuite::Tls13(theirs) => rebuilt()
            .iter()
            .find(|ours| ours.common.suite == theirs.common.suite)
            .map_or(suite, SupportedCipherSuite::Tls13),
        other => other,
    }
}

#[cfg(test)]
mod tests;
