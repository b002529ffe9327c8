//! Seed 002's table: AES-128-CBC with HMAC-SHA1 next to AES-128-GCM, bytes per second at 16 B …
//! 16 KiB, for the CBC suites tern's OpenSSL engine serves (`AES128-SHA`, `ECDHE-RSA-AES128-SHA`).
//!
//! Seed 002 (Intel, OpenSSL 1.0.1) measured `openssl speed -evp aes-128-cbc-hmac-sha1`: OpenSSL's
//! "stitched" cipher, which interleaves the AES-CBC and SHA-1 instructions in one pass. Its rows
//! are reproduced the same way, in process through the EVP interface: the cipher initialised
//! once, then one `EVP_EncryptUpdate` per record, the CBC chain and the SHA-1 state carried on
//! (what `openssl speed -evp` times). Where the library has no stitched cipher (it needs AES-NI
//! on x86-64) the rows are the composition instead, marked `composed`: AES-128-CBC then a whole
//! HMAC-SHA1 of each record, which does a little more (the HMAC's outer hash) than the stitched
//! figure counts.
//!
//! Beside them, AES-128-GCM sealed per record as TLS does (new nonce, 13 bytes of additional
//! data, tag): on OpenSSL through EVP (`openssl speed -aead`'s sequence, what the OpenSSL engine
//! and HAProxy do), and on aws-lc-rs as rustls seals records (`aead.rs`, what the rustls engine
//! does). Without the `openssl-engine` feature only the aws-lc-rs row is measured.

#[cfg(feature = "openssl-engine")]
mod evp;

use aws_lc_rs::aead;

use crate::aead::{sealer, SIZES};
use crate::catalog::{Algo, Section};
use crate::measure::{measure, Settings};
use crate::report::Row;
use crate::sig::progress;
use crate::SpeedError;

/// The library column of rows measured on OpenSSL.
pub const OPENSSL: &str = "openssl";
/// The library column of rows measured on aws-lc-rs.
pub const AWS_LC: &str = "aws-lc-rs";

/// Measures the table if [`Algo::Aes128CbcHmacSha1`] is selected.
pub fn run(algos: &[Algo], settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    if !algos.contains(&Algo::Aes128CbcHmacSha1) {
        return Ok(Vec::new());
    }
    let mut rows = openssl_rows(settings)?;
    for size in SIZES {
        progress(
            Algo::Aes128Gcm,
            &format!("seal {size} bytes (aws-lc-rs)"),
            settings,
        );
        let measured = measure(settings, || sealer(&aead::AES_128_GCM, size))?;
        rows.push(row("aes-128-gcm", "seal", AWS_LC, size, &measured));
    }
    Ok(rows)
}

#[cfg(feature = "openssl-engine")]
fn openssl_rows(settings: &Settings) -> Result<Vec<Row>, SpeedError> {
    evp::run(settings)
}

#[cfg(not(feature = "openssl-engine"))]
fn openssl_rows(_: &Settings) -> Result<Vec<Row>, SpeedError> {
    Ok(Vec::new())
}

/// A row of this table.
fn row(
    algorithm: &str,
    operation: &str,
    library: &str,
    size: usize,
    measured: &crate::Measured,
) -> Row {
    let mut row = Row::new(Section::CbcVsGcm, algorithm, operation, measured);
    row.library = Some(library.to_owned());
    row.set_bytes(size);
    row
}

/// The report's note: which CBC rows these are, or why there are none.
pub fn note(rows: &[Row]) -> String {
    let cbc = rows
        .iter()
        .find(|r| r.section == Section::CbcVsGcm && r.algorithm == "aes-128-cbc-hmac-sha1");
    match cbc.map(|r| r.operation.as_str()) {
        Some("stitched") => "seed 002: AES-128-CBC-HMAC-SHA1 is OpenSSL's stitched cipher, one \
            EVP update per record as openssl speed -evp times it; AES-128-GCM is sealed per \
            record as TLS does"
            .to_owned(),
        Some(_) => "seed 002: this OpenSSL has no stitched AES-128-CBC-HMAC-SHA1 here (it needs \
            AES-NI on x86-64): the CBC row is composed, AES-128-CBC then HMAC-SHA1 per record"
            .to_owned(),
        None => "seed 002: built without the openssl-engine feature: no OpenSSL rows, only \
            AES-128-GCM on aws-lc-rs"
            .to_owned(),
    }
}
