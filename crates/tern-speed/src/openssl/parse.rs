//! Reading the summary that `openssl speed` prints on stdout.
//!
//! The human-readable summary is parsed (not `-mr`), because it is the same with and without
//! `-multi` and is what an operator compares by eye. Lines this parser does not recognise are
//! skipped: a figure that cannot be read is reported as missing, never guessed. Recognised:
//!
//! ```text
//! rsa 2048 bits 0.000356s 0.000019s   2805.1  53299.0
//!  256 bits ecdsa (nistp256)   0.0000s   0.0001s  42655.6  13124.7
//!  253 bits EdDSA (Ed25519)   0.0000s   0.0001s  24218.6   8707.0
//!  253 bits ecdh (X25519)   0.0000s  27949.5
//! type             16 bytes     64 bytes
//! AES-128-GCM      36001.66k   139921.02k
//! ```
//!
//! With `-multi`, OpenSSL 3.0 leaves out the `type` header of cipher rows, so the caller must
//! say which block sizes it asked for ([`parse_with_sizes`]).
//!
//! Newer OpenSSL versions add columns to the RSA line (encrypt/decrypt); the first two rates
//! are still sign/s and verify/s, and times (ending in `s`) are told apart from rates.

use std::collections::BTreeMap;

/// The figures found in one `openssl speed` output, keyed by tern's openssl names
/// (`rsa2048`, `ecdsap256`, `ed25519`, `ecdhx25519`, lowercase cipher names).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// sign/s and verify/s.
    pub sign_verify: BTreeMap<String, (f64, f64)>,
    /// Key agreement operations per second.
    pub ops: BTreeMap<String, f64>,
    /// Bytes per second, by cipher and block size.
    pub bytes: BTreeMap<(String, usize), f64>,
}

/// Parses the summary of an `openssl speed` run.
pub fn parse(text: &str) -> Figures {
    parse_with_sizes(text, &[])
}

/// Parses a summary whose cipher rows may come without their `type` header: with `-multi`,
/// OpenSSL 3.0 prints only `AES-128-GCM  608410.02k`, so the caller says which block sizes
/// it asked for (a header, when present, takes precedence).
pub fn parse_with_sizes(text: &str, sizes: &[usize]) -> Figures {
    let mut figures = Figures::default();
    let mut sizes: Vec<usize> = sizes.to_vec();
    for line in text.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        match tokens.as_slice() {
            ["type", rest @ ..] => sizes = block_sizes(rest),
            ["rsa", bits, "bits", rest @ ..] => {
                if let Some(pair) = first_two(rest) {
                    figures.sign_verify.insert(format!("rsa{bits}"), pair);
                }
            }
            [_, "bits", kind, curve, rest @ ..] => public_key_line(&mut figures, kind, curve, rest),
            _ => cipher_line(&mut figures, &tokens, &sizes),
        }
    }
    figures
}

/// `16 bytes 64 bytes ...` → `[16, 64, ...]`.
fn block_sizes(tokens: &[&str]) -> Vec<usize> {
    tokens
        .chunks(2)
        .filter_map(|pair| match pair {
            [size, "bytes"] => size.parse().ok(),
            _ => None,
        })
        .collect()
}

/// The rates of a line (numbers not ending in `s`, which are times).
fn rates(tokens: &[&str]) -> Vec<f64> {
    tokens
        .iter()
        .filter(|token| !token.ends_with('s'))
        .filter_map(|token| token.parse::<f64>().ok())
        .collect()
}

fn first_two(tokens: &[&str]) -> Option<(f64, f64)> {
    match rates(tokens).as_slice() {
        [sign, verify, ..] => Some((*sign, *verify)),
        _ => None,
    }
}

/// `ecdsa (nistp256)`, `EdDSA (Ed25519)`, `ecdh (X25519)` lines.
fn public_key_line(figures: &mut Figures, kind: &str, curve: &str, rest: &[&str]) {
    let curve = curve
        .trim_start_matches('(')
        .trim_end_matches(')')
        .to_ascii_lowercase();
    let curve = curve.strip_prefix("nist").unwrap_or(&curve);
    match kind.to_ascii_lowercase().as_str() {
        "ecdsa" => {
            if let Some(pair) = first_two(rest) {
                figures.sign_verify.insert(format!("ecdsa{curve}"), pair);
            }
        }
        "eddsa" => {
            if let Some(pair) = first_two(rest) {
                figures.sign_verify.insert(curve.to_owned(), pair);
            }
        }
        "ecdh" => {
            if let Some(op) = rates(rest).first() {
                figures.ops.insert(format!("ecdh{curve}"), *op);
            }
        }
        _ => {}
    }
}

/// `AES-128-GCM  36001.66k  139921.02k`: one value (in 1000s of bytes/s) per block size of the
/// last `type` header.
fn cipher_line(figures: &mut Figures, tokens: &[&str], sizes: &[usize]) {
    if sizes.is_empty() || tokens.len() <= sizes.len() {
        return;
    }
    let (name, values) = tokens.split_at(tokens.len() - sizes.len());
    let values: Option<Vec<f64>> = values
        .iter()
        .map(|value| value.strip_suffix('k')?.parse::<f64>().ok())
        .collect();
    let Some(values) = values else { return };
    let name = name.join(" ").to_ascii_lowercase();
    for (size, value) in sizes.iter().zip(values) {
        figures.bytes.insert((name.clone(), *size), value * 1000.0);
    }
}
