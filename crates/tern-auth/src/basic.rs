//! The `Authorization: Basic` credentials of a request (RFC 7617): `base64(user:password)`.

use base64::alphabet::STANDARD;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// Longest field value read: credentials longer than this are not a user's (a bcrypt
/// password is cut at 72 bytes anyway), and decoding stays bounded.
const MAX_VALUE: usize = 1024;

/// RFC 7617's base64, padded or not (some clients leave the `=` out).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A user name and password, decoded.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    decoded: Vec<u8>,
    colon: usize,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credentials(<hidden>)")
    }
}

impl Credentials {
    /// The credentials of an `Authorization` field value, if it is `Basic` with
    /// `user:password` in valid base64; `None` for any other scheme or a malformed value.
    pub fn from_header(value: &[u8]) -> Option<Self> {
        if value.len() > MAX_VALUE {
            return None;
        }
        let value = value.trim_ascii();
        let (scheme, rest) = value.split_at(value.iter().position(|&b| b == b' ')?);
        if !scheme.eq_ignore_ascii_case(b"basic") {
            return None;
        }
        let decoded = BASE64.decode(rest.trim_ascii()).ok()?;
        let colon = decoded.iter().position(|&b| b == b':')?;
        Some(Self { decoded, colon })
    }

    pub fn user(&self) -> &[u8] {
        &self.decoded[..self.colon]
    }

    pub fn password(&self) -> &[u8] {
        &self.decoded[self.colon + 1..]
    }
}
