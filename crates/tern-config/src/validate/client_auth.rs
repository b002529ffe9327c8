//! `tls.client_auth`: client certificates on a bind (mTLS).
//!
//! A `client_auth` table exists to authenticate clients, so `verify` defaults to `"required"`
//! there: forgetting the key fails closed. Asking for certificates without a CA bundle to check
//! them against is an error, and so is a `ca` or `crl` with `verify = "none"`, where they would
//! be silently ignored.

use super::Checker;
use crate::locate::KeyPath;
use crate::model::{ClientAuth, ClientVerify};
use crate::raw::RawClientAuth;

const VERIFY_NAMES: &str = "\"none\", \"optional\", \"required\"";

impl Checker<'_> {
    pub(super) fn client_auth(&mut self, raw: &RawClientAuth, path: &KeyPath) -> ClientAuth {
        let verify = match raw.verify.as_deref() {
            None => ClientVerify::Required,
            Some(name) => match name.to_ascii_lowercase().as_str() {
                "none" => ClientVerify::None,
                "optional" => ClientVerify::Optional,
                "required" => ClientVerify::Required,
                _ => {
                    self.issue(
                        &path.key("verify"),
                        format!("unknown mode `{name}`: expected one of {VERIFY_NAMES}"),
                    );
                    ClientVerify::Required
                }
            },
        };
        let ca = raw
            .ca
            .as_deref()
            .map(|file| self.file_path(file, &path.key("ca")));
        let crl_path = path.key("crl");
        let crl: Vec<_> = raw
            .crl
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, file)| self.file_path(file, &crl_path.index(i)))
            .collect();
        match verify {
            ClientVerify::None => {
                for (key, given) in [("ca", ca.is_some()), ("crl", raw.crl.is_some())] {
                    if given {
                        self.issue(
                            &path.key(key),
                            "has no effect with verify = \"none\" (no certificate is asked for)",
                        );
                    }
                }
            }
            ClientVerify::Optional | ClientVerify::Required if ca.is_none() => {
                self.issue(
                    &path.key("ca"),
                    "missing key `ca`: a PEM bundle of the CAs client certificates must chain to",
                );
            }
            _ => {}
        }
        ClientAuth { verify, ca, crl }
    }
}
