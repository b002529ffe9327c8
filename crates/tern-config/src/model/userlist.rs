//! Userlists (`[[userlist]]`, HAProxy's `userlist` section): users and their password hashes,
//! and groups, for HTTP basic authentication (`http_auth(L)`, `http_auth_group(L)`,
//! `http_request` `auth`, and the control API's HTTP listener).
//!
//! Passwords are crypt(3) hashes in the formats that resist guessing: SHA-512 crypt (`$6$`),
//! SHA-256 crypt (`$5$`) and bcrypt (`$2a$`, `$2b$`, `$2y$`). DES crypt and MD5 crypt (`$1$`)
//! are refused: HAProxy hands them to the C library, which still takes them, but a DES hash
//! keeps only 8 characters and both fall to a single GPU in hours. A plain-text
//! `insecure_password` is accepted, as in HAProxy, and `tern check` warns about it.
//! The checks themselves live in tern-auth; this crate only knows the hash's shape.

use std::fmt;

/// One `[[userlist]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Userlist {
    pub name: String,
    pub users: Vec<User>,
}

impl Userlist {
    /// The user named `name`.
    pub fn user(&self, name: &[u8]) -> Option<&User> {
        self.users.iter().find(|u| u.name.as_bytes() == name)
    }
}

/// A user: its name, password and the groups it belongs to (from both its own `groups` and
/// the groups' `users`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub password: Password,
    pub groups: Vec<String>,
}

/// A user's password as the configuration gives it.
#[derive(Clone, PartialEq, Eq)]
pub enum Password {
    /// A crypt(3) hash, in one of the [`CryptScheme`]s.
    Crypt { scheme: CryptScheme, hash: String },
    /// The password itself (`insecure_password`, HAProxy's `insecure-password`).
    Insecure(String),
}

impl fmt::Debug for Password {
    // Neither a password nor its hash (which can be attacked offline) reaches a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Password::Crypt { scheme, .. } => write!(f, "Crypt({scheme:?}, <hidden>)"),
            Password::Insecure(_) => f.write_str("Insecure(<hidden>)"),
        }
    }
}

/// The crypt(3) formats tern checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CryptScheme {
    /// `$6$[rounds=N$]SALT$HASH`.
    Sha512,
    /// `$5$[rounds=N$]SALT$HASH`.
    Sha256,
    /// `$2a$`, `$2b$` or `$2y$`, a cost of 04 to 31, 22 characters of salt, 31 of hash.
    Bcrypt,
}

/// The alphabet of crypt(3) salts and hashes.
fn is_crypt_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'/'
}

impl CryptScheme {
    /// The scheme of `hash`, checked for shape (not for the password it hides), or why it is
    /// refused.
    pub fn of(hash: &str) -> Result<CryptScheme, String> {
        if let Some(rest) = hash.strip_prefix("$6$") {
            sha_crypt_shape(rest, 86).map(|()| CryptScheme::Sha512)
        } else if let Some(rest) = hash.strip_prefix("$5$") {
            sha_crypt_shape(rest, 43).map(|()| CryptScheme::Sha256)
        } else if ["$2a$", "$2b$", "$2y$"].iter().any(|p| hash.starts_with(p)) {
            bcrypt_shape(&hash[4..]).map(|()| CryptScheme::Bcrypt)
        } else if hash.starts_with("$1$") {
            Err(
                "MD5 crypt (`$1$`) is refused: it is too fast to resist guessing; \
                 use SHA-512 crypt (`openssl passwd -6`) or bcrypt"
                    .into(),
            )
        } else if hash.len() == 13 && hash.bytes().all(is_crypt_char) {
            Err(
                "DES crypt is refused: it keeps only 8 characters of the password; \
                 use SHA-512 crypt (`openssl passwd -6`) or bcrypt"
                    .into(),
            )
        } else {
            Err(
                "not a password hash tern checks: use SHA-512 crypt (`$6$`, `openssl passwd -6`), \
                 SHA-256 crypt (`$5$`) or bcrypt (`$2b$`), or `insecure_password` for plain text"
                    .into(),
            )
        }
    }
}

/// `[rounds=N$]SALT$HASH` of a SHA crypt, with a hash of `len` characters.
fn sha_crypt_shape(rest: &str, len: usize) -> Result<(), String> {
    let mut rest = rest;
    if let Some(after) = rest.strip_prefix("rounds=") {
        let (n, tail) = after
            .split_once('$')
            .ok_or("`rounds=N` must be followed by `$`")?;
        let rounds: u32 = n
            .parse()
            .map_err(|_| format!("`rounds={n}` is not a number"))?;
        if !(1000..=999_999_999).contains(&rounds) {
            return Err(format!(
                "`rounds={rounds}` is out of range: must be between 1000 and 999999999"
            ));
        }
        rest = tail;
    }
    let (salt, hash) = rest
        .split_once('$')
        .ok_or("a SHA crypt hash reads `$6$SALT$HASH`")?;
    if salt.len() > 16 || !salt.bytes().all(is_crypt_char) {
        return Err("the salt must be at most 16 characters of `a-z A-Z 0-9 . /`".into());
    }
    if hash.len() != len || !hash.bytes().all(is_crypt_char) {
        return Err(format!(
            "the hash part must be {len} characters of `a-z A-Z 0-9 . /` (is the hash cut short?)"
        ));
    }
    Ok(())
}

/// `CC$` + 53 characters of a bcrypt hash.
fn bcrypt_shape(rest: &str) -> Result<(), String> {
    let (cost, tail) = rest
        .split_once('$')
        .ok_or("a bcrypt hash reads `$2b$CC$` and 53 characters")?;
    match cost.parse::<u8>() {
        Ok(4..=31) if cost.len() == 2 => {}
        _ => return Err(format!("bcrypt cost `{cost}` must be two digits, 04 to 31")),
    }
    if tail.len() != 53 || !tail.bytes().all(is_crypt_char) {
        return Err("a bcrypt hash has 53 characters of `a-z A-Z 0-9 . /` after its cost".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    // The "Hello world!" example of the SHA-crypt specification.
    const SHA512: &str = "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1";

    #[test]
    fn the_three_schemes_are_recognised() {
        assert_eq!(CryptScheme::of(SHA512), Ok(CryptScheme::Sha512));
        let sha256 = "$5$rounds=10000$saltstringsaltst$3xv.VbSHBb41AL9AvLeujZkZRBAwqFMz2.opqey6IcA";
        assert_eq!(CryptScheme::of(sha256), Ok(CryptScheme::Sha256));
        let bcrypt = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
        assert_eq!(CryptScheme::of(bcrypt), Ok(CryptScheme::Bcrypt));
    }

    #[test]
    fn weak_and_malformed_hashes_are_refused() {
        for (hash, says) in [
            ("$1$abc$def", "MD5"),
            ("abJnggxhB/yWI", "DES"),
            ("$y$j9T$abc$def", "not a password hash"),
            ("$6$salt$short", "cut short"),
            ("$6$rounds=10$salt$x", "out of range"),
            ("$2b$4$x", "two digits"),
            (
                "$2x$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW",
                "not a password",
            ),
        ] {
            let err = CryptScheme::of(hash).unwrap_err();
            assert!(err.contains(says), "{hash}: {err}");
        }
    }

    #[test]
    fn debug_hides_passwords() {
        let p = Password::Insecure("secret".into());
        assert!(!format!("{p:?}").contains("secret"));
    }
}
