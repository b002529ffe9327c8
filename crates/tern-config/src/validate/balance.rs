//! `balance` and its companions (`hash_type`, `hash_balance_factor`, `ewma_decay`).
//!
//! The algorithm is written the way HAProxy operators know it (`leastconn`, `hdr(Host)`,
//! `url_param(user)`, `random(3)`, `uri whole`), so it is parsed from one string rather than
//! spread over tables. Companion keys that the chosen algorithm would ignore are errors, not
//! silently dropped settings: `hash_type` on `leastconn` means the operator expected hashing.

use std::time::Duration;

use super::{is_token_byte, Checker};
use crate::locate::KeyPath;
use crate::model::{Balance, BalanceHashType, BalanceKey};
use crate::raw::RawBackend;

/// Values accepted by `balance`, for error messages.
const BALANCE_NAMES: &str = "`roundrobin`, `static-rr`, `leastconn`, `first`, `source`, `uri`, \
     `uri whole`, `hdr(NAME)`, `url_param(NAME)`, `random`, `random(N)`, `ewma`";

/// Most draws `random(N)` may take.
const MAX_DRAWS: u32 = 64;

/// What `balance` names, before the companion keys are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Algorithm {
    Plain(Balance),
    Hash(BalanceKey),
    Random(u32),
    Ewma,
}

impl Checker<'_> {
    pub(super) fn balance(&mut self, raw: &RawBackend, path: &KeyPath) -> Balance {
        let algorithm = match raw.balance.as_deref().map(parse_algorithm) {
            None => Algorithm::Plain(Balance::RoundRobin),
            Some(Ok(algorithm)) => algorithm,
            Some(Err(message)) => {
                self.issue(&path.key("balance"), message);
                Algorithm::Plain(Balance::RoundRobin)
            }
        };
        let hash_type = self.hash_type(raw, path, &algorithm);
        let decay_path = path.key("ewma_decay");
        match algorithm {
            Algorithm::Plain(balance) => {
                self.not_for(raw.ewma_decay.is_some(), &decay_path, "ewma");
                balance
            }
            Algorithm::Hash(key) => {
                self.not_for(raw.ewma_decay.is_some(), &decay_path, "ewma");
                Balance::Hash { key, hash_type }
            }
            Algorithm::Random(draws) => {
                self.not_for(raw.ewma_decay.is_some(), &decay_path, "ewma");
                Balance::Random { draws }
            }
            Algorithm::Ewma => {
                // Durations are checked to be above zero by `duration`.
                let decay = self.duration(
                    &decay_path,
                    raw.ewma_decay.as_ref(),
                    Duration::from_secs(10),
                );
                Balance::Ewma { decay }
            }
        }
    }

    /// `hash_type` and `hash_balance_factor`, which only a hashing algorithm accepts.
    fn hash_type(
        &mut self,
        raw: &RawBackend,
        path: &KeyPath,
        algorithm: &Algorithm,
    ) -> BalanceHashType {
        let hashing = matches!(algorithm, Algorithm::Hash(_));
        let type_path = path.key("hash_type");
        let factor_path = path.key("hash_balance_factor");
        if !hashing {
            self.not_for(raw.hash_type.is_some(), &type_path, "a hashing `balance`");
            self.not_for(
                raw.hash_balance_factor.is_some(),
                &factor_path,
                "a hashing `balance`",
            );
            return BalanceHashType::MapBased;
        }
        let consistent = match raw.hash_type.as_deref() {
            None | Some("map-based") => false,
            Some("consistent") => true,
            Some(other) => {
                self.issue(
                    &type_path,
                    format!("unknown hash type `{other}`; supported: `map-based`, `consistent`"),
                );
                false
            }
        };
        let balance_factor = match raw.hash_balance_factor {
            None | Some(0) => 0,
            Some(_) if !consistent => {
                self.issue(&factor_path, "only applies with hash_type = \"consistent\"");
                0
            }
            Some(f @ 101..=10_000) => f as u32,
            Some(f) => {
                self.issue(
                    &factor_path,
                    format!("{f} is out of range: 0 (no bound) or a percentage from 101 to 10000"),
                );
                0
            }
        };
        if consistent {
            BalanceHashType::Consistent { balance_factor }
        } else {
            BalanceHashType::MapBased
        }
    }

    /// Records an issue when a key is set for an algorithm that would ignore it.
    fn not_for(&mut self, present: bool, path: &KeyPath, needs: &str) {
        if present {
            self.issue(
                path,
                format!("only applies with {needs}; remove it or change `balance`"),
            );
        }
    }
}

/// Parses the `balance` string.
pub(super) fn parse_algorithm(text: &str) -> Result<Algorithm, String> {
    let t = text.trim();
    let plain = match t {
        "roundrobin" => Some(Balance::RoundRobin),
        "static-rr" => Some(Balance::StaticRoundRobin),
        "leastconn" => Some(Balance::LeastConn),
        "first" => Some(Balance::First),
        _ => None,
    };
    if let Some(balance) = plain {
        return Ok(Algorithm::Plain(balance));
    }
    match t {
        "source" => return Ok(Algorithm::Hash(BalanceKey::Source)),
        "uri" => return Ok(Algorithm::Hash(BalanceKey::Uri { whole: false })),
        "random" => return Ok(Algorithm::Random(2)),
        "ewma" => return Ok(Algorithm::Ewma),
        _ => {}
    }
    if let Some(rest) = t.strip_prefix("uri") {
        if rest.trim() == "whole" && rest.starts_with(char::is_whitespace) {
            return Ok(Algorithm::Hash(BalanceKey::Uri { whole: true }));
        }
    }
    if let Some(arg) = call_argument(t, "hdr") {
        return header_name(arg, text).map(|name| Algorithm::Hash(BalanceKey::Header(name)));
    }
    if let Some(arg) = call_argument(t, "url_param") {
        return param_name(arg, text).map(|name| Algorithm::Hash(BalanceKey::UrlParam(name)));
    }
    if let Some(arg) = call_argument(t, "random") {
        return match arg.trim().parse::<u32>() {
            Ok(n @ 1..=MAX_DRAWS) => Ok(Algorithm::Random(n)),
            _ => Err(format!(
                "`{text}`: random(N) takes a number of draws from 1 to {MAX_DRAWS}"
            )),
        };
    }
    Err(format!(
        "unknown algorithm `{text}`; supported: {BALANCE_NAMES}"
    ))
}

/// The text between `name(` and a final `)`.
fn call_argument<'t>(text: &'t str, name: &str) -> Option<&'t str> {
    text.strip_prefix(name)?
        .strip_prefix('(')?
        .strip_suffix(')')
}

/// A header name for `hdr(NAME)`: an HTTP token, kept in lower case.
fn header_name(arg: &str, text: &str) -> Result<String, String> {
    let name = arg.trim();
    if name.is_empty() {
        return Err(format!(
            "`{text}`: hdr() needs a header name, e.g. hdr(Host)"
        ));
    }
    if !name.bytes().all(is_token_byte) {
        return Err(format!("`{text}`: `{name}` is not a valid header name"));
    }
    Ok(name.to_ascii_lowercase())
}

/// A query parameter name for `url_param(NAME)`.
fn param_name(arg: &str, text: &str) -> Result<String, String> {
    let name = arg.trim();
    if name.is_empty() {
        return Err(format!(
            "`{text}`: url_param() needs a parameter name, e.g. url_param(user)"
        ));
    }
    if name
        .bytes()
        .any(|b| matches!(b, b'&' | b'=' | b'#' | b'?') || !b.is_ascii_graphic())
    {
        return Err(format!("`{text}`: `{name}` is not a valid parameter name"));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests;
