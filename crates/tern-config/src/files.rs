//! Reading the files a configuration names (the configuration itself, certificates, keys, CA
//! bundles, ticket keys, OCSP responses, lists), with a bound.
//!
//! These paths come from an operator's file, and a typo or a hostile edit can name something
//! that is not a file: `/dev/zero` or `/dev/urandom` never end, a FIFO blocks forever. A plain
//! `fs::read` would then eat memory until the process dies, or hang `tern check` and a reload.
//! Every such read goes through [`read`]: only regular files, at most [`MAX_FILE_SIZE`] bytes,
//! each refusal an `io::Error` whose message says why (shown with the path and line by the
//! caller).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The largest file tern reads for its configuration: far above a configuration, a certificate
/// bundle or a CRL anyone uses, far below what would hurt the machine.
pub const MAX_FILE_SIZE: u64 = 64 * 1024 * 1024;

/// Reads the regular file at `path` whole, if it holds at most [`MAX_FILE_SIZE`] bytes.
pub fn read(path: &Path) -> io::Result<Vec<u8>> {
    // Judged before opening: opening a FIFO blocks until a writer comes.
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_SIZE) as usize);
    // The size may change under us: the bound holds whatever the metadata said.
    file.take(MAX_FILE_SIZE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_SIZE {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("larger than {} MiB", MAX_FILE_SIZE / (1024 * 1024)),
        ));
    }
    Ok(bytes)
}

fn not_regular() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "not a regular file (a device, a FIFO or a directory)",
    )
}

/// [`read`], as UTF-8 text.
pub fn read_to_string(path: &Path) -> io::Result<String> {
    String::from_utf8(read(path)?).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_at_once() {
        for path in ["/dev/zero", "/dev/urandom", "/"] {
            let e = read(Path::new(path)).unwrap_err();
            assert!(e.to_string().contains("not a regular file"), "{path}: {e}");
        }
    }

    #[test]
    fn a_regular_file_is_read_whole() {
        let path = std::env::temp_dir().join(format!("tern-files-{}", std::process::id()));
        std::fs::write(&path, "[global]\n").unwrap();
        assert_eq!(read_to_string(&path).unwrap(), "[global]\n");
        std::fs::remove_file(&path).unwrap();
    }
}
