//! `[[userlist]]`, as written (checked in `validate/userlist.rs`).

use serde::Deserialize;

/// One `[[userlist]]`: `name`, `users = [{ name, password | insecure_password, groups }]`,
/// `groups = [{ name, users }]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUserlist {
    pub name: Option<String>,
    pub users: Option<Vec<RawUser>>,
    pub groups: Option<Vec<RawGroup>>,
}

/// One user of a userlist.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUser {
    pub name: Option<String>,
    pub password: Option<String>,
    pub insecure_password: Option<String>,
    pub groups: Option<Vec<String>>,
}

/// One group of a userlist.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawGroup {
    pub name: Option<String>,
    pub users: Option<Vec<String>>,
}
