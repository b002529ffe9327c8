#![allow(clippy::unwrap_used)]

use crate::model::{Coding, Compression};
use crate::test_support::*;

#[test]
fn defaults_fill_what_is_not_written() {
    let config = parse_ok(&with_frontend_lines(
        r#"compression = { algos = ["br", "gzip"] }"#,
    ));
    let c = config.frontends[0].compression.as_ref().unwrap();
    assert_eq!(c.algos, [Coding::Brotli, Coding::Gzip]);
    assert!(c.types.is_empty() && !c.offload);
    assert_eq!(
        (c.min_size, c.gzip_level, c.br_level, c.zstd_level),
        (1024, 1, 4, 3)
    );
    assert!(config.backends[0].compression.is_none());
}

#[test]
fn every_key_is_read() {
    let text = with_backend_lines(
        r#"compression = { algos = ["zstd", "raw-deflate"], types = ["Text/HTML", "application/json"], offload = true, min_size = "2k", gzip_level = 6, br_level = 11, zstd_level = 19 }"#,
    );
    let config = parse_ok(&text);
    let c = config.backends[0].compression.as_ref().unwrap();
    assert_eq!(c.algos, [Coding::Zstd, Coding::RawDeflate]);
    assert_eq!(c.types, ["text/html", "application/json"]);
    assert!(c.offload);
    assert_eq!(
        (c.min_size, c.gzip_level, c.br_level, c.zstd_level),
        (2048, 6, 11, 19)
    );
}

#[test]
fn unknown_and_duplicate_codings_are_refused() {
    let text = with_frontend_lines(r#"compression = { algos = ["gzip", "lzma"] }"#);
    assert_error(
        &text,
        5,
        "frontend[0].compression.algos[1]",
        "unknown coding `lzma`",
    );
    let text = with_frontend_lines(r#"compression = { algos = ["deflate", "raw-deflate"] }"#);
    assert_error(
        &text,
        5,
        "frontend[0].compression.algos[1]",
        "token `deflate`",
    );
    let text = with_frontend_lines("compression = { algos = [] }");
    assert_error(
        &text,
        5,
        "frontend[0].compression.algos",
        "at least one coding",
    );
}

#[test]
fn levels_types_and_keys_are_checked() {
    let text = with_backend_lines(r#"compression = { algos = ["gzip"], gzip_level = 10 }"#);
    assert_error(
        &text,
        8,
        "backend[0].compression.gzip_level",
        "between 1 and 9",
    );
    let text = with_backend_lines(
        r#"compression = { algos = ["gzip"], types = ["text/html; charset=utf-8"] }"#,
    );
    assert_error(
        &text,
        8,
        "backend[0].compression.types[0]",
        "not a content type",
    );
    let text = with_backend_lines(r#"compression = { algos = ["gzip"], level = 3 }"#);
    assert_error(
        &text,
        8,
        "backend[0].compression.level",
        "unknown field `level`",
    );
}

#[test]
fn the_backend_table_wins_and_offload_comes_from_either() {
    let config = parse_ok(
        &with_frontend_lines(r#"compression = { algos = ["gzip"], offload = true }"#).replacen(
            "name = \"app\"\n",
            "name = \"app\"\ncompression = { algos = [\"br\"] }\n",
            1,
        ),
    );
    let (fe, be) = (
        config.frontends[0].compression.as_ref(),
        config.backends[0].compression.as_ref(),
    );
    let (table, offload) = Compression::effective(fe, be).unwrap();
    assert_eq!(table.algos, [Coding::Brotli]);
    assert!(offload);
    assert!(Compression::effective(None, None).is_none());
}
