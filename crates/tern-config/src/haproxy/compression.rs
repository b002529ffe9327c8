//! `compression algo|algo-res|type|type-res|offload|direction` in proxies, with the global
//! `tune.comp.maxlevel`, into a frontend's or backend's `compression` table.
//!
//! Lines add to what the section inherited from its defaults (HAProxy appends each line's
//! algorithms and types to the proxy's lists). `identity` is HAProxy's debugging coding, which
//! changes nothing: it is dropped with a warning. `br` and `zstd` are accepted beyond HAProxy.
//! The table is written with `min_size = 0`, since HAProxy compresses responses of any size,
//! and `gzip_level` from `tune.comp.maxlevel` (HAProxy's default, 1, is tern's too).
//! Compressing requests (`algo-req`, `type-req`, `direction request|both`) is not supported.

use super::diag::Diag;
use super::emit::Table;
use super::global::GlobalCfg;
use super::proxy::Cx;
use super::sections::{Kind, Line};
use super::settings::{ProxyCfg, Src};
use super::toml_text::{strings, Inline};

/// What a section's `compression` lines say.
#[derive(Debug, Clone, Default)]
pub(crate) struct CompressionCfg {
    /// tern's names of the codings, at the line of the first `algo`.
    pub algos: Option<Src<Vec<String>>>,
    pub types: Option<Src<Vec<String>>>,
    pub offload: Option<Src<bool>>,
}

impl CompressionCfg {
    /// The first line of any `compression` setting (for warnings about the whole).
    pub fn first_line(&self) -> Option<usize> {
        [
            self.algos.as_ref().map(|s| s.line),
            self.types.as_ref().map(|s| s.line),
            self.offload.as_ref().map(|s| s.line),
        ]
        .into_iter()
        .flatten()
        .min()
    }
}

/// Applies one `compression ...` line.
pub(crate) fn compression(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let c = &mut p.compression;
    let words = line.words.get(2..).unwrap_or_default();
    match line.word(1) {
        Some("algo" | "algo-res") => {
            if words.is_empty() {
                return cx.error(line.no, "'compression algo' needs at least one algorithm");
            }
            let list = &mut c
                .algos
                .get_or_insert_with(|| Src::new(Vec::new(), line.no))
                .v;
            for word in words {
                match word.as_str() {
                    "gzip" | "deflate" | "raw-deflate" | "br" | "zstd" => {
                        if !list.contains(word) {
                            list.push(word.clone());
                        }
                    }
                    "identity" => cx.no_effect(
                        line.no,
                        "compression algo identity",
                        "identity compresses nothing (HAProxy's debugging algorithm)",
                    ),
                    other => cx.error(
                        line.no,
                        format!("unknown compression algorithm '{other}' (gzip, deflate, raw-deflate, br, zstd)"),
                    ),
                }
            }
        }
        Some("type" | "type-res") => {
            if words.is_empty() {
                return cx.error(line.no, "'compression type' needs at least one MIME type");
            }
            let list = &mut c
                .types
                .get_or_insert_with(|| Src::new(Vec::new(), line.no))
                .v;
            list.extend(words.iter().cloned());
        }
        Some("offload") if cx.kind == Kind::Defaults => cx.no_effect(
            line.no,
            "compression offload",
            "HAProxy ignores it in a defaults section (and warns)",
        ),
        Some("offload") => c.offload = Some(Src::new(true, line.no)),
        Some("direction") if line.word(2) == Some("response") => {}
        Some(what @ ("algo-req" | "type-req" | "direction")) => cx.unsupported_because(
            line.no,
            &format!("compression {what}"),
            "tern compresses responses only",
        ),
        Some(other) => cx.error(
            line.no,
            format!("unknown 'compression' option '{other}' (algo, type, offload)"),
        ),
        None => cx.error(line.no, "'compression' needs algo, type or offload"),
    }
}

/// Writes `compression = { ... }` at the line of the first `algo`, or warns that the lines
/// without one do nothing (as in HAProxy, nothing is compressed without an algorithm).
pub(crate) fn emit(
    c: &ProxyCfg,
    global: &GlobalCfg,
    context: &str,
    t: &mut Table,
    diag: &mut Diag,
) {
    let comp = &c.compression;
    let Some(algos) = comp.algos.as_ref().filter(|a| !a.v.is_empty()) else {
        if let Some(line) = comp.first_line() {
            diag.no_effect(
                line,
                context,
                "compression",
                "no 'compression algo' names an algorithm",
            );
        }
        return;
    };
    let mut table = Inline::new();
    table.set("algos", strings(&algos.v));
    table.set_opt("types", comp.types.as_ref().map(|t| strings(&t.v)));
    table.set_opt("offload", comp.offload.as_ref().map(|o| o.v.to_string()));
    table.set("min_size", "0".into());
    table.set_opt(
        "gzip_level",
        global.comp_maxlevel.as_ref().map(|l| l.v.to_string()),
    );
    t.set("compression", table.text(), algos.line);
}
