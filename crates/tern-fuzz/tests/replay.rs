//! Replays every saved input of every fuzz target on stable Rust, through the same check the
//! fuzz target runs: the seeds (`fuzz/corpus/<target>/`) and every input that ever failed
//! (`fuzz/regressions/<target>/`, kept forever). A failing file is named in the panic; replay
//! it alone with `cargo test -p tern-fuzz -- --nocapture` or `scripts/fuzz` (see
//! docs/security.md).

#![allow(clippy::unwrap_used)]

use std::panic;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// The files of `dir`, sorted; none when it does not exist.
fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

/// Runs `target`'s check on every file under `fuzz/<kind>/<target>/`; returns how many ran.
fn replay(kind: &str) -> usize {
    let mut ran = 0;
    let mut failed = Vec::new();
    for (target, check) in tern_fuzz::TARGETS {
        for file in files(&fuzz_dir().join(kind).join(target)) {
            let data = std::fs::read(&file).unwrap();
            if panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(format!("{target}: {}", file.display()));
            }
            ran += 1;
        }
    }
    assert!(
        failed.is_empty(),
        "inputs that fail their check:\n{}",
        failed.join("\n")
    );
    ran
}

#[test]
fn every_seed_passes_its_check() {
    let ran = replay("corpus");
    assert!(ran >= tern_fuzz::TARGETS.len(), "only {ran} seeds");
}

#[test]
fn every_saved_failure_passes_its_check() {
    replay("regressions");
}

#[test]
fn every_target_has_a_fuzz_binary_and_seeds() {
    for (target, _) in tern_fuzz::TARGETS {
        let binary = fuzz_dir().join("fuzz_targets").join(format!("{target}.rs"));
        assert!(binary.is_file(), "no {}", binary.display());
        assert!(
            !files(&fuzz_dir().join("corpus").join(target)).is_empty(),
            "no seeds for {target}"
        );
        assert!(tern_fuzz::check_of(target).is_some());
    }
}
