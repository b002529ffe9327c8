//! `compression` on frontends and backends (see `model/compression.rs` for the semantics).
//!
//! Every problem is reported with its key: an unknown coding (the list names those tern has),
//! a coding listed twice, a content type that is not `type/subtype`-like, a level outside its
//! coding's range. `deflate` and `raw-deflate` answer the same token, so listing both is
//! refused, as HAProxy's manual asks.

use super::Checker;
use crate::locate::KeyPath;
use crate::model::compression::{
    DEFAULT_BR_LEVEL, DEFAULT_GZIP_LEVEL, DEFAULT_MIN_SIZE, DEFAULT_ZSTD_LEVEL,
};
use crate::model::{Coding, Compression};
use crate::raw::RawCompression;

/// The largest `min_size`: anything larger is better said by not compressing at all.
const MAX_MIN_SIZE: u64 = 1 << 30;

impl Checker<'_> {
    pub(super) fn compression(
        &mut self,
        raw: Option<&RawCompression>,
        path: &KeyPath,
    ) -> Option<Compression> {
        let raw = raw?;
        Some(Compression {
            algos: self.codings(raw.algos.as_deref(), &path.key("algos")),
            types: self.content_types(raw.types.as_deref(), &path.key("types")),
            offload: raw.offload.unwrap_or(false),
            min_size: self.size_in(
                &path.key("min_size"),
                raw.min_size.as_ref(),
                0..=MAX_MIN_SIZE,
                DEFAULT_MIN_SIZE,
            ),
            gzip_level: self.int_in(
                &path.key("gzip_level"),
                raw.gzip_level,
                1..=9,
                i64::from(DEFAULT_GZIP_LEVEL),
            ) as u32,
            br_level: self.int_in(
                &path.key("br_level"),
                raw.br_level,
                0..=11,
                i64::from(DEFAULT_BR_LEVEL),
            ) as u32,
            zstd_level: self.int_in(
                &path.key("zstd_level"),
                raw.zstd_level,
                1..=19,
                i64::from(DEFAULT_ZSTD_LEVEL),
            ) as i32,
        })
    }

    fn codings(&mut self, raw: Option<&[String]>, path: &KeyPath) -> Vec<Coding> {
        let names = || {
            Coding::ALL
                .iter()
                .map(|(n, _)| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(raw) = raw.filter(|r| !r.is_empty()) else {
            self.issue(
                path,
                format!(
                    "list at least one coding, e.g. algos = [\"gzip\"] (codings: {})",
                    names()
                ),
            );
            return Vec::new();
        };
        let mut algos: Vec<Coding> = Vec::new();
        for (i, name) in raw.iter().enumerate() {
            let at = path.index(i);
            match Coding::from_name(name) {
                None => self.issue(&at, format!("unknown coding `{name}`: expected one of {}", names())),
                Some(c) if algos.iter().any(|a| a.token() == c.token()) => self.issue(
                    &at,
                    format!(
                        "`{name}` answers the token `{}` that an earlier coding already answers: list one of them",
                        c.token()
                    ),
                ),
                Some(c) => algos.push(c),
            }
        }
        algos
    }

    fn content_types(&mut self, raw: Option<&[String]>, path: &KeyPath) -> Vec<String> {
        let mut types = Vec::new();
        for (i, t) in raw.unwrap_or_default().iter().enumerate() {
            let valid = !t.is_empty()
                && t.bytes()
                    .all(|b| b.is_ascii_graphic() && b != b';' && b != b',');
            if valid {
                types.push(t.to_ascii_lowercase());
            } else {
                self.issue(
                    &path.index(i),
                    format!("`{t}` is not a content type (e.g. \"text/html\"; parameters are not matched)"),
                );
            }
        }
        types
    }
}

#[cfg(test)]
mod tests;
