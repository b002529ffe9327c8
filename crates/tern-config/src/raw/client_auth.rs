//! `tls.client_auth`, as written (checked in `validate/client_auth.rs`).

use serde::Deserialize;

/// `client_auth = { verify = "...", ca = "...", crl = [...] }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClientAuth {
    pub verify: Option<String>,
    pub ca: Option<String>,
    pub crl: Option<Vec<String>>,
}
