//! Terminal tables shaped like `openssl speed`'s: sign/s and verify/s per key, op/s for key
//! agreement, one row of 1000s of bytes per second per cipher with a column per block size,
//! and handshakes/s per certificate and version. RSA keys add batched sign/s (tern-mb) and its
//! ratio to aws-lc's single-operation sign/s. openssl's figure and the ratio tern ÷ openssl
//! sit beside tern's wherever there is one; `-` marks a figure that is missing. Seed 002's table
//! has a row per cipher and library, like the paper's "Bulk Stitched" figure, and the ratio of
//! the CBC row to OpenSSL's GCM row.

use std::fmt::Write;

use crate::aead::SIZES;
use crate::catalog::Section;
use crate::report::Row;

/// The table of one section.
pub fn render(section: Section, rows: &[Row]) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|row| row.section == section).collect();
    if rows.is_empty() {
        return String::new();
    }
    match section {
        Section::Signature => signatures(&rows),
        Section::KeyAgreement => key_agreement(&rows),
        Section::Cipher => ciphers(&rows),
        Section::Handshake => handshakes(&rows),
        Section::CbcVsGcm => cbc_vs_gcm(&rows),
    }
}

fn num(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"))
}

fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

fn signatures(rows: &[&Row]) -> String {
    let mut out = format!(
        "{:<12} {:>11} {:>11} {:>15} {:>15} {:>11} {:>11} {:>11} {:>7}\n",
        "signatures",
        "sign/s",
        "verify/s",
        "openssl sign/s",
        "openssl verif/s",
        "ratio sign",
        "ratio verif",
        "batched/s",
        "×sign"
    );
    let mut names: Vec<&str> = rows.iter().map(|row| row.algorithm.as_str()).collect();
    names.dedup();
    for name in names {
        let find = |op: &str| {
            rows.iter()
                .find(|row| row.algorithm == name && row.operation == op)
        };
        let (sign, verify) = (find("sign"), find("verify"));
        let batched = find(crate::batched::OPERATION);
        let speedup = batched
            .zip(sign)
            .map(|(b, s)| b.ops_per_sec / s.ops_per_sec);
        let _ = writeln!(
            out,
            "{:<12} {:>11} {:>11} {:>15} {:>15} {:>11} {:>11} {:>11} {:>7}",
            name,
            num(sign.map(|r| r.ops_per_sec)),
            num(verify.map(|r| r.ops_per_sec)),
            num(sign.and_then(|r| r.openssl)),
            num(verify.and_then(|r| r.openssl)),
            ratio(sign.and_then(|r| r.ratio)),
            ratio(verify.and_then(|r| r.ratio)),
            num(batched.map(|r| r.ops_per_sec)),
            ratio(speedup),
        );
    }
    out
}

fn key_agreement(rows: &[&Row]) -> String {
    let mut out = format!(
        "{:<15} {:<17} {:>11} {:>13} {:>7} {:>11} {:>11} {:>8}\n",
        "key agreement",
        "operation",
        "op/s",
        "openssl op/s",
        "ratio",
        "client/s",
        "server/s",
        "server%"
    );
    for row in rows {
        let split = row.split.as_ref();
        let _ = writeln!(
            out,
            "{:<15} {:<17} {:>11} {:>13} {:>7} {:>11} {:>11} {:>8}",
            row.algorithm,
            row.operation,
            num(Some(row.ops_per_sec)),
            num(row.openssl),
            ratio(row.ratio),
            num(split.map(|s| s.client_ops_per_sec)),
            num(split.map(|s| s.server_ops_per_sec)),
            split.map_or_else(
                || "-".to_owned(),
                |s| format!("{:.1}%", s.server_share * 100.0)
            ),
        );
    }
    out
}

fn kilo(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.2}k", v / 1000.0))
}

/// Renders one cell of a cipher row.
type Cell = fn(&Row) -> String;

fn ciphers(rows: &[&Row]) -> String {
    let mut out = String::from("The 'numbers' are in 1000s of bytes per second processed.\n");
    let _ = write!(out, "{:<26}", "type");
    for size in SIZES {
        let _ = write!(out, " {:>13}", format!("{size} bytes"));
    }
    out.push('\n');
    let mut names: Vec<&str> = rows.iter().map(|row| row.algorithm.as_str()).collect();
    names.dedup();
    for name in names {
        let at = |size: usize| {
            rows.iter()
                .find(|row| row.algorithm == name && row.bytes == Some(size))
        };
        let label = name
            .to_ascii_uppercase()
            .replace("CHACHA20-POLY1305", "ChaCha20-Poly1305");
        let lines: [(String, Cell); 3] = [
            (format!("{label} tern"), |row| kilo(row.bytes_per_sec)),
            (format!("{label} openssl"), |row| kilo(row.openssl)),
            ("  tern/openssl".to_owned(), |row| ratio(row.ratio)),
        ];
        for (title, cell) in &lines {
            let _ = write!(out, "{title:<26}");
            for size in SIZES {
                let text = at(size).map_or_else(|| "-".to_owned(), |row| cell(row));
                let _ = write!(out, " {text:>13}");
            }
            out.push('\n');
        }
    }
    out
}

fn handshakes(rows: &[&Row]) -> String {
    let mut out = format!(
        "{:<10} {:<8} {:<15} {:>12} {:>8} {:>14} {:>14}  {}\n",
        "handshake",
        "version",
        "group",
        "handshakes/s",
        "server%",
        "server-only/s",
        "client-only/s",
        "negotiated"
    );
    for row in rows {
        let split = row.split.as_ref();
        let detail = row.handshake.as_ref();
        let _ = writeln!(
            out,
            "{:<10} {:<8} {:<15} {:>12} {:>8} {:>14} {:>14}  {}",
            row.algorithm,
            detail.map_or("-", |d| d.version.as_str()),
            detail.map_or("-", |d| d.group.as_str()),
            num(Some(row.ops_per_sec)),
            split.map_or_else(
                || "-".to_owned(),
                |s| format!("{:.1}%", s.server_share * 100.0)
            ),
            num(split.map(|s| s.server_ops_per_sec)),
            num(split.map(|s| s.client_ops_per_sec)),
            detail.map_or("-", |d| d.negotiated.as_str()),
        );
    }
    out
}

fn cbc_vs_gcm(rows: &[&Row]) -> String {
    let mut out = String::from(
        "seed 002: AES-128-CBC + HMAC-SHA1 next to AES-128-GCM, \
         in 1000s of bytes per second processed.\n",
    );
    let _ = write!(out, "{:<40}", "type");
    for size in SIZES {
        let _ = write!(out, " {:>13}", format!("{size} bytes"));
    }
    out.push('\n');
    let mut kinds: Vec<(&str, &str, Option<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r.algorithm.as_str(),
                r.operation.as_str(),
                r.library.as_deref(),
            )
        })
        .collect();
    kinds.dedup();
    let at = |kind: (&str, &str, Option<&str>), size: usize| {
        rows.iter().find(|r| {
            (
                r.algorithm.as_str(),
                r.operation.as_str(),
                r.library.as_deref(),
            ) == kind
                && r.bytes == Some(size)
        })
    };
    for &kind in &kinds {
        let (algorithm, operation, library) = kind;
        let title = format!(
            "{} {} {}",
            algorithm.to_ascii_uppercase(),
            operation,
            library.unwrap_or("-")
        );
        let _ = write!(out, "{title:<40}");
        for size in SIZES {
            let _ = write!(
                out,
                " {:>13}",
                kilo(at(kind, size).and_then(|r| r.bytes_per_sec))
            );
        }
        out.push('\n');
    }
    let cbc = kinds.iter().find(|k| k.0 == "aes-128-cbc-hmac-sha1");
    let gcm = kinds
        .iter()
        .find(|k| k.0 == "aes-128-gcm" && k.2 == Some(crate::cbc::OPENSSL));
    if let (Some(&cbc), Some(&gcm)) = (cbc, gcm) {
        let _ = write!(out, "{:<40}", "  CBC-SHA1 / GCM (openssl)");
        for size in SIZES {
            let ratio_at = at(cbc, size)
                .zip(at(gcm, size))
                .map(|(c, g)| c.headline() / g.headline());
            let _ = write!(out, " {:>13}", ratio(ratio_at));
        }
        out.push('\n');
    }
    out
}
