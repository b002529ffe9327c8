//! The password checks themselves: crypt(3) hashes through the crates, plain text in
//! constant time.

use sha_crypt::{PasswordVerifier, ShaCrypt};
use tern_config::CryptScheme;

/// Whether `password` is the one `hash` (of `scheme`) was made from. Slow: run it off the
/// event loop.
pub(crate) fn crypt(scheme: CryptScheme, hash: &str, password: &[u8]) -> bool {
    match scheme {
        CryptScheme::Sha512 | CryptScheme::Sha256 => {
            ShaCrypt::default().verify_password(password, hash).is_ok()
        }
        // bcrypt reads only the first 72 bytes of a password, as crypt(3) does.
        CryptScheme::Bcrypt => bcrypt::verify(password, hash).unwrap_or(false),
    }
}

/// Whether two plain-text passwords are equal, in time that depends only on their lengths.
pub(crate) fn same(expected: &[u8], given: &[u8]) -> bool {
    aws_lc_rs::constant_time::verify_slices_are_equal(expected, given).is_ok()
}
