//! RSA private keys: parsed once from PKCS#1 or PKCS#8 DER into both aws-lc-rs's key (the
//! fallback) and the kernels' precomputed CRT halves.
//!
//! The batched path covers two-prime keys of 2048, 3072 and 4096 bits whose primes are each
//! exactly half the modulus's length (as aws-lc, OpenSSL and every common generator make them):
//! then each half fits the kernel's limbs with the headroom its bounds need (`p < 2^(52N-4)`)
//! and `q < 2p`, which the CRT recombination relies on. Any other key is still accepted and
//! signs through aws-lc-rs alone.

use aws_lc_rs::signature::RsaKeyPair;
use pkcs1::der::Decode;
use zeroize::Zeroize;

use crate::ifma::LIMB_BITS;
use crate::radix52;
use crate::MbError;

/// Limbs per CRT half for the covered modulus sizes.
fn half_limbs(modulus_bits: usize) -> Option<usize> {
    match modulus_bits {
        2048 => Some(20),
        3072 => Some(30),
        4096 => Some(40),
        _ => None,
    }
}

/// An RSA private key, ready for batched and single operations.
pub struct RsaKey {
    pub(crate) fallback: RsaKeyPair,
    /// Modulus length in bytes.
    pub(crate) len: usize,
    /// Modulus length in bits.
    pub(crate) bits: usize,
    pub(crate) crt: Option<Crt>,
}

impl std::fmt::Debug for RsaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaKey")
            .field("bits", &self.bits)
            .field("batched", &self.crt.is_some())
            .finish_non_exhaustive()
    }
}

/// The kernels' view of the key: both halves and Garner's coefficient.
pub(crate) struct Crt {
    /// Limbs per half (20, 30 or 40).
    pub(crate) limbs: usize,
    pub(crate) p: Half,
    pub(crate) q: Half,
    /// `qInv·R mod p`.
    pub(crate) qinv_r: Vec<u64>,
}

/// One prime's precomputed Montgomery constants and CRT exponent.
pub(crate) struct Half {
    pub(crate) m: Vec<u64>,
    pub(crate) k0: u64,
    pub(crate) r2: Vec<u64>,
    pub(crate) r3: Vec<u64>,
    /// `d mod (m-1)` as 64-bit words, least significant first.
    pub(crate) exponent: Vec<u64>,
}

impl Drop for Crt {
    fn drop(&mut self) {
        self.qinv_r.zeroize();
    }
}

impl Drop for Half {
    fn drop(&mut self) {
        self.m.zeroize();
        self.k0.zeroize();
        self.r2.zeroize();
        self.r3.zeroize();
        self.exponent.zeroize();
    }
}

impl RsaKey {
    /// A key from PKCS#8 (`PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`) DER.
    pub fn from_der(der: &[u8]) -> Result<Self, MbError> {
        match pkcs8::PrivateKeyInfoRef::from_der(der) {
            Ok(info) => {
                if info.algorithm.oid != pkcs1::ALGORITHM_OID {
                    return Err(MbError::Key("PKCS#8 key is not an RSA key".into()));
                }
                let fallback = RsaKeyPair::from_pkcs8(der)
                    .map_err(|e| MbError::Key(format!("aws-lc-rs: {e}")))?;
                Self::build(info.private_key.as_bytes(), fallback)
            }
            Err(_) => {
                let fallback = RsaKeyPair::from_der(der)
                    .map_err(|e| MbError::Key(format!("aws-lc-rs: {e}")))?;
                Self::build(der, fallback)
            }
        }
    }

    /// Modulus length in bytes (the signature length).
    pub fn modulus_len(&self) -> usize {
        self.len
    }

    /// Whether this key's private operations can be batched on a CPU with IFMA.
    pub fn batchable(&self) -> bool {
        self.crt.is_some()
    }

    fn build(pkcs1_der: &[u8], fallback: RsaKeyPair) -> Result<Self, MbError> {
        let key = pkcs1::RsaPrivateKeyRef::from_der(pkcs1_der)
            .map_err(|e| MbError::Key(format!("PKCS#1: {e}")))?;
        let bits = bit_len(key.modulus.as_bytes());
        let crt = match (half_limbs(bits), key.other_prime_infos.is_none()) {
            (Some(limbs), true) => Crt::new(&key, bits, limbs),
            _ => None,
        };
        Ok(Self {
            fallback,
            len: bits.div_ceil(8),
            bits,
            crt,
        })
    }
}

impl Crt {
    /// The halves, or `None` when the primes are not both `bits/2` long.
    fn new(key: &pkcs1::RsaPrivateKeyRef<'_>, bits: usize, limbs: usize) -> Option<Self> {
        let half_bits = bits / 2;
        // Public facts about the key's shape (the prime lengths follow from the modulus
        // length for keys of the covered shape); nothing here branches on secret values.
        let (p_bytes, q_bytes) = (key.prime1.as_bytes(), key.prime2.as_bytes());
        if bit_len(p_bytes) != half_bits || bit_len(q_bytes) != half_bits {
            return None;
        }
        debug_assert!(half_bits + 4 <= LIMB_BITS * limbs);
        let p = Half::new(p_bytes, key.exponent1.as_bytes(), limbs)?;
        let q = Half::new(q_bytes, key.exponent2.as_bytes(), limbs)?;
        let qinv = radix52::from_be_bytes(key.coefficient.as_bytes(), limbs)?;
        let qinv_r = radix52::shl_mod(&qinv, LIMB_BITS * limbs, &p.m);
        Some(Self {
            limbs,
            p,
            q,
            qinv_r,
        })
    }
}

impl Half {
    fn new(prime: &[u8], exponent: &[u8], limbs: usize) -> Option<Self> {
        let m = radix52::from_be_bytes(prime, limbs)?;
        let mut one = vec![0u64; limbs];
        one[0] = 1;
        let r = LIMB_BITS * limbs;
        Some(Self {
            k0: radix52::mont_k0(m[0]),
            r2: radix52::shl_mod(&one, 2 * r, &m),
            r3: radix52::shl_mod(&one, 3 * r, &m),
            exponent: radix52::words_from_be_bytes(exponent, r.div_ceil(64)),
            m,
        })
    }
}

/// Bit length of a big-endian integer without leading zero bytes (DER's minimal encoding):
/// depends only on the top byte, which the caller treats as public shape information.
fn bit_len(bytes: &[u8]) -> usize {
    match bytes.first() {
        Some(&top) => bytes.len() * 8 - top.leading_zeros() as usize,
        None => 0,
    }
}
