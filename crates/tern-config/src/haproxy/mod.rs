//! HAProxy configuration files (`haproxy.cfg`) as a second front end to the same model.
//!
//! One model, two parsers: a `.cfg` is translated into tern TOML text ([`convert`]), and that
//! text goes through the TOML pipeline ([`crate::parse`]). `tern convert` prints the text, `tern
//! run -c haproxy.cfg` runs it, and both are the same by construction; every validation rule of
//! the TOML stage (addresses, certificates, names, ...) applies to both.
//!
//! The translation has three stages:
//!
//! 1. `lexer` and `sections` split the file into sections of words, as HAProxy does (quotes,
//!    escapes, `#` comments, `"${ENV}"` in double quotes);
//! 2. each section's lines are applied to its settings (`global` to `global::GlobalCfg`, the
//!    others to `settings::ProxyCfg`, starting from a copy of their defaults section's), by
//!    one file per group of keywords (`bind`, `server`, `options`, `timeouts`, `rules`, ...);
//! 3. `build` turns the settings into tern's tables and `emit` writes them, one TOML line per
//!    `.cfg` keyword, with a map from TOML lines back to `.cfg` lines.
//!
//! Nothing is silently ignored: a keyword is translated, or it is an error naming file, line
//! and keyword ("unknown keyword", "not supported yet"), or a [`Warning`] (no effect in tern,
//! or approximated). Errors of the TOML stage are mapped back to the `.cfg` line and section,
//! so users never see a TOML line they did not write. docs/haproxy-migration.md lists every
//! keyword and what it becomes.

mod address;
mod balance;
mod bind;
mod build;
mod build_backend;
mod build_global;
mod build_server;
mod build_tcp;
mod check;
mod compression;
mod counters;
mod cpu_map;
mod crt;
mod diag;
mod emit;
mod error_pages;
mod global;
mod lexer;
mod logging;
mod named;
mod options;
mod peers;
mod persist;
mod proxy;
mod resolvers;
mod rewrite;
mod rules;
mod sections;
mod server;
mod settings;
mod stats;
mod tcp_request;
mod timeouts;
mod tls;
mod toml_text;
mod units;
mod userlist;

#[cfg(test)]
mod tests;

use std::path::Path;

pub use diag::{format_warnings, Warning, WarningKind};

use crate::error::{ConfigError, ConfigErrors};
use crate::model::Config;
use build::Proxy;
use diag::Diag;
use emit::Emitted;
use global::GlobalCfg;
use proxy::Cx;
use sections::{Kind, Line};
use settings::ProxyCfg;

/// A HAProxy configuration translated to tern TOML.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The TOML text, with comments where a keyword was approximated or dropped.
    pub toml: String,
    /// Keywords with no effect in tern, or mapped approximately.
    pub warnings: Vec<Warning>,
    emitted: Emitted,
}

impl Converted {
    /// Runs the TOML stage on the converted text (`file` is the `.cfg`: relative paths are
    /// resolved next to it), with its errors located in the `.cfg`.
    pub fn validate(&self, file: &Path) -> Result<Config, ConfigErrors> {
        crate::parse(&self.toml, file).map_err(|errors| {
            let mut located: Vec<ConfigError> =
                errors.0.into_iter().map(|e| self.locate(e)).collect();
            located.sort_by_key(|e| e.line);
            ConfigErrors(located)
        })
    }

    /// An error of the TOML stage, located in the `.cfg` instead: its line, and its section
    /// (`backend app: servers[1].weight`) instead of the TOML key path (`backend[0].servers[1].weight`).
    fn locate(&self, mut error: ConfigError) -> ConfigError {
        error.line = error
            .line
            .and_then(|l| self.emitted.lines.get(l.checked_sub(1)?).copied())
            .filter(|&l| l > 0);
        error.key_path = self.section_path(&error.key_path);
        error.message = error
            .message
            .replace("[[frontend]]", "frontend (or listen) section")
            .replace("[[backend]]", "backend (or listen) section");
        error
    }

    fn section_path(&self, key_path: &str) -> String {
        for (prefix, context) in &self.emitted.contexts {
            if let Some(rest) = key_path.strip_prefix(prefix.as_str()) {
                if rest.is_empty() {
                    return context.clone();
                }
                if let Some(rest) = rest.strip_prefix('.') {
                    return format!("{context}: {rest}");
                }
            }
        }
        key_path.to_owned()
    }
}

/// Translates the HAProxy configuration `text`, read from `file` (relative paths, crt
/// directories and crt-lists are looked up next to it). Environment variables in double quotes
/// are expanded from the process environment.
pub fn convert(text: &str, file: &Path) -> Result<Converted, ConfigErrors> {
    convert_with_env(text, file, &|name| std::env::var(name).ok())
}

/// [`convert`], then the TOML stage: the validated configuration and the warnings.
pub fn parse(text: &str, file: &Path) -> Result<(Config, Vec<Warning>), ConfigErrors> {
    let converted = convert(text, file)?;
    let config = converted.validate(file)?;
    Ok((config, converted.warnings))
}

/// Whether `file` holds a HAProxy configuration: by its extension (`.cfg`; `.toml` is TOML),
/// else by its first line that is not blank or a comment starting with a section keyword
/// (`global`, `defaults`, `frontend`, ...).
pub fn is_haproxy(file: &Path, text: &str) -> bool {
    match file.extension().and_then(|e| e.to_str()) {
        Some("cfg") => return true,
        Some("toml") => return false,
        _ => {}
    }
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .and_then(|l| l.split_whitespace().next())
        .is_some_and(sections::is_section_keyword)
}

pub(crate) fn convert_with_env(
    text: &str,
    file: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Converted, ConfigErrors> {
    let mut diag = Diag::new(file);
    let sections = sections::split(text, env, &mut diag);
    let parents = sections::defaults_of(&sections, &mut diag);
    let base_dir = file.parent().unwrap_or_else(|| Path::new(""));
    let mut global = GlobalCfg {
        http_errors: error_pages::http_errors_sections(text, env, &mut diag),
        ..GlobalCfg::default()
    };
    for section in sections.iter().filter(|s| s.kind == Kind::Global) {
        if global.line == 0 {
            global.line = section.line;
        }
        for line in &section.lines {
            global::apply(line, &mut global, &mut diag);
        }
    }
    let mut defaults: Vec<Option<ProxyCfg>> = vec![None; sections.len()];
    let mut proxies = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        if section.kind == Kind::Global {
            continue;
        }
        let mut cfg = parents[i]
            .and_then(|j| defaults[j].clone())
            .unwrap_or_default();
        let mut cx = Cx {
            kind: section.kind,
            context: section.context(),
            global: &global,
            diag: &mut diag,
            base_dir,
        };
        if let Some(address) = &section.listen_address {
            let bind = Line {
                no: section.line,
                words: vec!["bind".to_owned(), address.clone()],
            };
            proxy::apply(&bind, &mut cfg, &mut cx);
        }
        for line in &section.lines {
            proxy::apply(line, &mut cfg, &mut cx);
        }
        if section.kind == Kind::Defaults {
            defaults[i] = Some(cfg);
        } else {
            proxies.push(Proxy {
                section: section.clone(),
                cfg,
            });
        }
    }
    let mut tables = build::build(&global, &proxies, &mut diag);
    tables.extend(userlist::userlist_sections(text, env, &mut diag));
    tables.extend(resolvers::resolvers_sections(text, env, &mut diag));
    tables.extend(peers::peers_sections(text, env, &mut diag));
    if !diag.errors.is_empty() {
        let mut errors = diag.errors;
        errors.sort_by_key(|e| e.line);
        return Err(ConfigErrors(errors));
    }
    let source = file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let emitted = emit::emit(&tables, &source, &diag.warnings);
    Ok(Converted {
        toml: emitted.toml.clone(),
        warnings: diag.warnings,
        emitted,
    })
}
