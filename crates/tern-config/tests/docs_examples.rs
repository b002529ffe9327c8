//! Every ```toml block in docs/configuration.md must be a complete, valid configuration, so the
//! reference can never drift from what the parser accepts.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

fn doc_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/configuration.md")
}

/// The ```toml blocks of `markdown`, each with the 1-based line of its opening fence.
fn toml_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match current.as_mut() {
            None if line.trim_end() == "```toml" => current = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(current.is_none(), "unterminated ```toml block");
    blocks
}

#[test]
fn every_toml_example_in_the_configuration_reference_parses() {
    let path = doc_path();
    let markdown = std::fs::read_to_string(&path).unwrap();
    let blocks = toml_blocks(&markdown);
    assert!(!blocks.is_empty(), "no ```toml block in {}", path.display());
    // Pretend each example lives next to the doc, so relative certificate paths resolve.
    let file = path.with_file_name("example.toml");
    for (line, text) in &blocks {
        if let Err(errors) = tern_config::parse(text, &file) {
            panic!("the ```toml block at configuration.md:{line} is invalid:\n{errors}");
        }
    }
}

#[test]
fn the_annotated_example_summarises_as_documented() {
    let markdown = std::fs::read_to_string(doc_path()).unwrap();
    let (_, first) = &toml_blocks(&markdown)[0];
    let config = tern_config::parse(first, Path::new("tern.toml")).unwrap();
    assert_eq!(
        config.summary(),
        "ok: 1 frontend (2 binds, 1 with TLS), 1 backend, 3 servers, workers=2, maxconn=10000"
    );
}

#[test]
fn block_extraction_finds_only_toml_fences() {
    let markdown = "```sh\nx\n```\ntext\n```toml\na = 1\n```\n```toml\nb = 2\n```\n";
    assert_eq!(
        toml_blocks(markdown),
        [(5, "a = 1\n".to_owned()), (8, "b = 2\n".to_owned())]
    );
}
