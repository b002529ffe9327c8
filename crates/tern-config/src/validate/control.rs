//! `[control]`: the control API's socket, HTTP listener and token.
//!
//! The token guards state-changing commands over HTTP, so every way of getting it half right is
//! an error rather than a silent fallback: `token` and `token_file` together, an unreadable or
//! empty token file, a token too short to resist guessing, or a token with no HTTP listener to
//! use it. A socket path longer than a Unix socket address can hold (`sun_path`, 108 bytes) is
//! reported here rather than at start-up.

use std::path::Path;
use std::time::Duration;

use super::frontend::parse_bind_address;
use super::Checker;
use crate::locate::KeyPath;
use crate::model::{ControlAuth, ControlSettings, ControlToken, Userlist};
use crate::raw::{RawControl, RawMode, TextOrInt};

/// Longest socket path: `sun_path` holds 108 bytes including the terminating NUL.
const MAX_SOCKET_PATH: usize = 107;

impl Checker<'_> {
    pub(super) fn control(
        &mut self,
        raw: &RawControl,
        userlists: &[Userlist],
        path: &KeyPath,
    ) -> ControlSettings {
        let defaults = ControlSettings::default();
        let socket = raw
            .socket
            .as_deref()
            .map(|p| self.socket_path(p, &path.key("socket")));
        let socket_mode = match &raw.socket_mode {
            None => defaults.socket_mode,
            Some(mode) => {
                let mode_path = path.key("socket_mode");
                if socket.is_none() {
                    self.issue(&mode_path, "has no effect without `socket`");
                }
                parse_mode(mode)
                    .map_err(|message| self.issue(&mode_path, message))
                    .unwrap_or(defaults.socket_mode)
            }
        };
        let http = raw.http.as_deref().and_then(|text| {
            let http_path = path.key("http");
            match parse_bind_address(text) {
                Ok(address) => {
                    self.note_control_http(address, &http_path);
                    Some(address)
                }
                Err(message) => {
                    self.issue(&http_path, message.replace("bind address", "address"));
                    None
                }
            }
        });
        let token = self.token(raw, path, http.is_some());
        let stats_refresh = self.stats_refresh(raw, &path.key("stats_refresh"));
        let auth = self.control_auth(raw, userlists, path, http.is_some());
        ControlSettings {
            socket,
            socket_mode,
            http,
            token,
            stats_refresh,
            auth,
        }
    }

    /// `userlist` and `realm`: basic authentication on the HTTP listener.
    fn control_auth(
        &mut self,
        raw: &RawControl,
        userlists: &[Userlist],
        path: &KeyPath,
        http: bool,
    ) -> Option<ControlAuth> {
        let Some(name) = raw.userlist.as_deref() else {
            if raw.realm.is_some() {
                self.issue(&path.key("realm"), "has no effect without `userlist`");
            }
            return None;
        };
        let at = path.key("userlist");
        if !http {
            self.issue(
                &at,
                "has no effect without `http`: it guards the HTTP listener",
            );
        }
        let realm = raw.realm.clone().unwrap_or_else(|| "tern".to_owned());
        if !valid_realm(&realm) {
            self.issue(&path.key("realm"), REALM_CHARS);
        }
        match userlists.iter().find(|l| l.name == name) {
            Some(users) => Some(ControlAuth {
                users: users.clone(),
                realm,
            }),
            None => {
                self.issue(&at, super::userlist::no_userlist(name, userlists));
                None
            }
        }
    }

    /// The HTTP listener must not take a frontend's address.
    fn note_control_http(&mut self, address: std::net::SocketAddr, path: &KeyPath) {
        if address.port() == 0 {
            return;
        }
        if let Some(first) = self.binds_seen.get(&address) {
            let message = format!("address {address} is already used by {first}");
            self.issue(path, message);
        }
    }

    fn socket_path(&mut self, raw: &str, path: &KeyPath) -> std::path::PathBuf {
        let socket = self.file_path(raw, path);
        let len = socket.as_os_str().len();
        if len > MAX_SOCKET_PATH {
            self.issue(
                path,
                format!(
                    "`{}` is {len} bytes long; a Unix socket path may have at most \
                     {MAX_SOCKET_PATH}: choose a shorter one",
                    socket.display()
                ),
            );
        }
        socket
    }

    /// `token` or `token_file` (read now, so a bad file fails `tern check`).
    fn token(&mut self, raw: &RawControl, path: &KeyPath, http: bool) -> Option<ControlToken> {
        let (text, key) = match (&raw.token, &raw.token_file) {
            (None, None) => return None,
            (Some(_), Some(_)) => {
                self.issue(
                    &path.key("token_file"),
                    "set either `token` or `token_file`, not both",
                );
                return None;
            }
            (Some(token), None) => (token.trim().to_owned(), "token"),
            (None, Some(file)) => {
                let file_key = path.key("token_file");
                let file = self.file_path(file, &file_key);
                (self.read_token_file(&file, &file_key)?, "token_file")
            }
        };
        let key_path = path.key(key);
        if !http {
            self.issue(
                &key_path,
                "has no effect without `http`: the token only guards the HTTP listener",
            );
        }
        ControlToken::new(&text)
            .map_err(|message| self.issue(&key_path, message))
            .ok()
    }

    fn read_token_file(&mut self, file: &Path, path: &KeyPath) -> Option<String> {
        match crate::files::read_to_string(file) {
            Ok(text) if text.trim().is_empty() => {
                self.issue(path, format!("`{}` is empty", file.display()));
                None
            }
            Ok(text) => Some(text.trim().to_owned()),
            Err(e) => {
                self.issue(path, format!("cannot read `{}`: {e}", file.display()));
                None
            }
        }
    }

    fn stats_refresh(&mut self, raw: &RawControl, path: &KeyPath) -> Duration {
        let default = ControlSettings::default().stats_refresh;
        let Some(refresh) = self.opt_duration(path, raw.stats_refresh.as_ref()) else {
            return default;
        };
        if refresh.subsec_nanos() != 0 {
            self.issue(
                path,
                "must be a whole number of seconds (a page refresh counts in seconds)",
            );
            return default;
        }
        refresh
    }
}

/// What a realm may hold: it is written between double quotes in `WWW-Authenticate`.
pub(crate) const REALM_CHARS: &str =
    "a realm is printable text without double quotes or backslashes";

/// Whether `realm` can be written as a quoted string as it is.
pub(crate) fn valid_realm(realm: &str) -> bool {
    realm
        .chars()
        .all(|c| (c == ' ' || c.is_ascii_graphic()) && c != '"' && c != '\\')
}

/// An octal mode: `"0600"`, `"600"`, `"0o600"`, or a TOML integer such as `0o600`.
fn parse_mode(raw: &RawMode) -> Result<u32, String> {
    let hint = "write an octal string like \"0600\" (owner read and write)";
    let mode = match &raw.0 {
        TextOrInt::Int(v) => u32::try_from(*v).map_err(|_| format!("{v} is not a mode: {hint}"))?,
        TextOrInt::Text(text) => {
            let digits = text.trim().trim_start_matches("0o");
            if digits.is_empty() || !digits.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
                return Err(format!("`{text}` is not an octal mode: {hint}"));
            }
            u32::from_str_radix(digits, 8).map_err(|_| format!("`{text}` is too large: {hint}"))?
        }
    };
    if mode > 0o777 {
        return Err(format!(
            "mode {mode:#o} has bits beyond 0777 (a TOML integer is decimal unless written \
             0o600): {hint}"
        ));
    }
    if mode & 0o200 == 0 {
        return Err(format!(
            "mode {mode:04o} does not let the owner write, and connecting to a socket needs \
             write permission: {hint}"
        ));
    }
    Ok(mode)
}

#[cfg(test)]
mod tests;
