//! Records the versions of the TLS stack this crate was built with (from the workspace's
//! Cargo.lock), so every report can say which rustls and aws-lc-rs produced its figures.

use std::path::Path;

const CRATES: [(&str, &str); 3] = [
    ("rustls", "TERN_BENCH_RUSTLS_VERSION"),
    ("aws-lc-rs", "TERN_BENCH_AWS_LC_RS_VERSION"),
    ("tokio", "TERN_BENCH_TOKIO_VERSION"),
];

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let lock = Path::new(&dir).join("../../Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    let text = std::fs::read_to_string(&lock).unwrap_or_default();
    for (name, var) in CRATES {
        let version = locked_version(&text, name).unwrap_or("unknown");
        println!("cargo:rustc-env={var}={version}");
    }
}

/// The version of the first `[[package]]` named `name` in a Cargo.lock.
fn locked_version<'a>(lock: &'a str, name: &str) -> Option<&'a str> {
    let header = format!("name = \"{name}\"\nversion = \"");
    let at = lock.find(&header)? + header.len();
    let rest = &lock[at..];
    Some(&rest[..rest.find('"')?])
}
