//! Persistence: a cookie naming the server (`cookie`) and a table of client addresses
//! (`stick`).
//!
//! A cookie value identifies a server to clients, so values are checked here the way they will
//! travel: RFC 6265 cookie-octets, one per server, none shared — two servers with one value
//! would silently send a client to whichever comes first. A server without an entry in `values`
//! uses its name, which the name rule (letters, digits, `_`, `.`, `-`) already keeps within
//! cookie-octets.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use super::{is_token_byte, Checker};
use crate::locate::KeyPath;
use crate::model::{CookieMode, CookiePersistence, Server, Stickiness};
use crate::raw::{RawCookie, RawStick};

impl Checker<'_> {
    /// `cookie`, whose `values` refer to `servers` of the same backend.
    pub(super) fn cookie(
        &mut self,
        raw: Option<&RawCookie>,
        servers: &[Server],
        path: &KeyPath,
    ) -> Option<CookiePersistence> {
        let raw = raw?;
        let name_path = path.key("name");
        let name = match raw.name.as_deref() {
            None => {
                self.issue(&name_path, "missing key `name`, e.g. name = \"SERVERID\"");
                String::new()
            }
            Some(name) => {
                if name.is_empty() || !name.bytes().all(is_token_byte) {
                    self.issue(
                        &name_path,
                        format!(
                            "`{}` is not a valid cookie name: use letters, digits and \
                             !#$%&'*+-.^_`|~",
                            name.escape_debug()
                        ),
                    );
                }
                name.to_owned()
            }
        };
        let domain = raw.domain.as_ref().map(|domain| {
            if domain.is_empty()
                || domain
                    .bytes()
                    .any(|b| !b.is_ascii_graphic() || b == b';' || b == b',')
            {
                self.issue(
                    &path.key("domain"),
                    format!(
                        "`{}` is not a valid cookie domain (no spaces, `;` or `,`)",
                        domain.escape_debug()
                    ),
                );
            }
            domain.clone()
        });
        let mode = self.cookie_mode(raw, path);
        let empty = BTreeMap::new();
        let values = raw.values.as_ref().unwrap_or(&empty);
        if mode == CookieMode::Prefix {
            self.no_delimiter_in_values(values, &path.key("values"));
        }
        Some(CookiePersistence {
            name,
            mode,
            indirect: raw.indirect.unwrap_or(false),
            nocache: raw.nocache.unwrap_or(false),
            postonly: raw.postonly.unwrap_or(false),
            httponly: raw.httponly.unwrap_or(false),
            secure: raw.secure.unwrap_or(false),
            domain,
            max_age: self.opt_duration(&path.key("max_age"), raw.max_age.as_ref()),
            values: self.cookie_values(values, servers, &path.key("values")),
        })
    }

    /// `mode`, and the options that do not go with it: HAProxy refuses `indirect` with
    /// `rewrite`; the attribute options only act on a cookie tern inserts, so tern refuses
    /// them in the other modes rather than ignore them.
    fn cookie_mode(&mut self, raw: &RawCookie, path: &KeyPath) -> CookieMode {
        let mode = match raw.mode.as_deref() {
            None | Some("insert") => CookieMode::Insert,
            Some("rewrite") => CookieMode::Rewrite,
            Some("prefix") => CookieMode::Prefix,
            Some(other) => {
                self.issue(
                    &path.key("mode"),
                    format!(
                        "unknown value `{}`; supported: `insert`, `rewrite`, `prefix`",
                        other.escape_debug()
                    ),
                );
                return CookieMode::Insert;
            }
        };
        let word = match mode {
            CookieMode::Insert => return mode,
            CookieMode::Rewrite => "rewrite",
            CookieMode::Prefix => "prefix",
        };
        if mode == CookieMode::Rewrite && raw.indirect == Some(true) {
            self.issue(
                &path.key("indirect"),
                "`indirect` does not go with mode = \"rewrite\": the server sets the cookie and \
                 must see it (HAProxy refuses it too)",
            );
        }
        let set = [
            ("nocache", raw.nocache == Some(true)),
            ("postonly", raw.postonly == Some(true)),
            ("httponly", raw.httponly == Some(true)),
            ("secure", raw.secure == Some(true)),
            ("domain", raw.domain.is_some()),
            ("max_age", raw.max_age.is_some()),
        ];
        for (key, _) in set.iter().filter(|(_, on)| *on) {
            self.issue(
                &path.key(key),
                format!(
                    "`{key}` acts on the cookie tern inserts (mode = \"insert\"); in mode = \
                     \"{word}\" the server sets the cookie and its attributes"
                ),
            );
        }
        mode
    }

    /// In prefix mode a server's value ends at the first `~`, so no value may hold one.
    fn no_delimiter_in_values(&mut self, values: &BTreeMap<String, String>, path: &KeyPath) {
        for (server, value) in values.iter().filter(|(_, v)| v.contains('~')) {
            self.issue(
                &path.key(server),
                format!(
                    "cookie value `{}` holds `~`, which ends the server's part of the cookie \
                     in mode = \"prefix\"",
                    value.escape_debug()
                ),
            );
        }
    }

    /// The cookie value of each server, in server order.
    fn cookie_values(
        &mut self,
        values: &BTreeMap<String, String>,
        servers: &[Server],
        path: &KeyPath,
    ) -> Vec<String> {
        for (server, value) in values {
            let entry = path.key(server);
            if !servers.iter().any(|s| s.name == *server) {
                let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
                self.issue(
                    &entry,
                    format!(
                        "no server named `{server}` in this backend (servers: {})",
                        names.join(", ")
                    ),
                );
            }
            if let Some(message) = cookie_value_problem(value) {
                self.issue(&entry, message);
            }
        }
        let resolved: Vec<String> = servers
            .iter()
            .map(|s| values.get(&s.name).unwrap_or(&s.name).clone())
            .collect();
        let mut first: HashMap<&str, usize> = HashMap::new();
        for (i, value) in resolved.iter().enumerate() {
            if servers[i].name.is_empty() || value.is_empty() {
                continue; // already reported
            }
            let Some(&earlier) = first.get(value.as_str()) else {
                first.insert(value, i);
                continue;
            };
            // Server names are unique, so at least one of the two values comes from `values`.
            let (at, other) = if values.contains_key(&servers[i].name) {
                (i, earlier)
            } else {
                (earlier, i)
            };
            self.issue(
                &path.key(&servers[at].name),
                format!(
                    "cookie value `{value}` is also the value of server `{}`; each server needs \
                     its own",
                    servers[other].name
                ),
            );
        }
        resolved
    }

    /// `stick`.
    pub(super) fn stick(&mut self, raw: Option<&RawStick>, path: &KeyPath) -> Option<Stickiness> {
        let raw = raw?;
        let on_path = path.key("on");
        match raw.on.as_deref() {
            Some("source") => {}
            Some(other) => {
                self.issue(
                    &on_path,
                    format!("unknown value `{other}`; supported: `source`"),
                );
            }
            None => self.issue(
                &on_path,
                "missing key `on`: write on = \"source\" (the client's IP address)",
            ),
        }
        Some(Stickiness {
            size: self.int_in(&path.key("size"), raw.size, 1..=10_000_000, 100_000) as usize,
            expire: self.duration(
                &path.key("expire"),
                raw.expire.as_ref(),
                Duration::from_secs(30 * 60),
            ),
            peers: self.peers_ref(&path.key("peers"), raw.peers.as_deref()),
        })
    }
}

/// What is wrong with a cookie value, if anything: it must be RFC 6265 cookie-octets.
fn cookie_value_problem(value: &str) -> Option<String> {
    if value.is_empty() {
        return Some("a cookie value must not be empty".to_owned());
    }
    let bad = value
        .chars()
        .find(|&c| !c.is_ascii_graphic() || matches!(c, '"' | ',' | ';' | '\\'))?;
    Some(format!(
        "invalid character {bad:?} in cookie value `{}`: no spaces, quotes, `,`, `;` or `\\`",
        value.escape_debug()
    ))
}
