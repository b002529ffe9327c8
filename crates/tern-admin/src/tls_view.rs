//! `show tls` as JSON: one object per TLS bind, from [`tern_proxy::ProxyHandle::tls_info`].
//!
//! Keys follow the other JSON views (`render/json.rs`): a time is RFC 3339 text under its name
//! and Unix seconds under `<name>_unix_seconds`, durations are `<name>_seconds`, and a value not
//! known or not applicable is `null` rather than absent, so a client reads every key of every
//! object. Per bind:
//!
//! - `frontend`, `address` (as configured), `strict_sni`, `taken_at` (when the ages were
//!   counted);
//! - `certificates`, in configuration order: `file`, `default`, `subject_cn`, `issuer_cn`,
//!   `dns_names` and `ip_addresses` (the SAN), `sni_names` (the names it is selected for: SAN DNS
//!   names, else subject CNs, plus the configured `names`), `key_type` (`RSA-2048`,
//!   `ECDSA P-256`, `Ed25519`, ...), `not_before`, `not_after`, `days_until_expiry` (whole days,
//!   negative once expired), `expired`, `chain_length`, `ocsp` (`stapled`, `bytes`);
//! - `resumption`: `tickets` (on/off), `ticket_keys` (`null` when off: `source` `rotating`,
//!   `file` or `openssl` (OpenSSL's own key on an OpenSSL bind, of unknown age), `key_file`,
//!   `keys` that decrypt, `lifetime_seconds`, `rotation_seconds`, `current_key_created` and
//!   `current_key_age_seconds` (for a key file: its modification time), `next_rotation`,
//!   `loaded_at`), `cache_size` (the stateful cache, 0: off).

use serde_json::{json, Map, Value};
use tern_proxy::tls::info::rfc3339;
use tern_proxy::{BindTlsInfo, CertificateInfo, TicketState};

/// `show tls`: every TLS bind (see the module docs for the keys).
pub fn to_json(binds: &[BindTlsInfo]) -> Value {
    Value::Array(binds.iter().map(bind).collect())
}

fn bind(b: &BindTlsInfo) -> Value {
    let mut object = json!({
        "frontend": b.frontend,
        "address": b.address.to_string(),
        "strict_sni": b.strict_sni,
        "certificates": b.certificates.iter().map(certificate).collect::<Vec<_>>(),
        "resumption": {
            "tickets": b.tickets.is_some(),
            "ticket_keys": b.tickets.as_ref().map_or(Value::Null, tickets),
            "cache_size": b.cache_size,
        },
    });
    insert_time(&mut object, "taken_at", Some(b.taken_at));
    object
}

fn certificate(c: &CertificateInfo) -> Value {
    let l = &c.loaded;
    json!({
        "file": l.file.as_ref().map(|p| p.display().to_string()),
        "default": l.default,
        "subject_cn": l.subject_cn,
        "issuer_cn": l.issuer_cn,
        "dns_names": l.dns_names,
        "ip_addresses": l.ip_addresses.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "sni_names": l.sni_names,
        "key_type": l.key_type,
        "not_before": l.not_before_text,
        "not_before_unix_seconds": l.not_before,
        "not_after": l.not_after_text,
        "not_after_unix_seconds": l.not_after,
        "days_until_expiry": c.days_until_expiry,
        "expired": c.days_until_expiry < 0,
        "chain_length": l.chain_len,
        "ocsp": { "stapled": l.ocsp_len.is_some(), "bytes": l.ocsp_len },
    })
}

/// Where the keys come from: a key file, tern's rotating keys, or OpenSSL's own key (an
/// OpenSSL bind: neither a file nor a rotation).
fn source(t: &TicketState) -> &'static str {
    match (&t.key_file, t.rotation_secs) {
        (Some(_), _) => "file",
        (None, Some(_)) => "rotating",
        (None, None) => "openssl",
    }
}

fn tickets(t: &TicketState) -> Value {
    let mut object = json!({
        "source": source(t),
        "key_file": t.key_file.as_ref().map(|p| p.display().to_string()),
        "keys": t.keys,
        "lifetime_seconds": t.lifetime_secs,
        "rotation_seconds": t.rotation_secs,
        "current_key_age_seconds": t.key_age_secs,
    });
    insert_time(&mut object, "current_key_created", t.key_since);
    insert_time(&mut object, "next_rotation", t.next_rotation);
    insert_time(&mut object, "loaded_at", t.loaded_at);
    object
}

/// Adds `name` (RFC 3339) and `name_unix_seconds` to `object`; both `null` for `None`.
fn insert_time(object: &mut Value, name: &str, secs: Option<i64>) {
    let Value::Object(map) = object else {
        return;
    };
    insert(map, name, secs.map_or(Value::Null, |s| rfc3339(s).into()));
    insert(
        map,
        &format!("{name}_unix_seconds"),
        secs.map_or(Value::Null, Value::from),
    );
}

fn insert(map: &mut Map<String, Value>, key: &str, value: Value) {
    map.insert(key.to_owned(), value);
}

#[cfg(test)]
mod tests;
