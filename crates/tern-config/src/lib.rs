//! tern's configuration: TOML text → raw structs → validated [`Config`].
//!
//! The pipeline has two stages so that every mistake gets a precise answer. The raw stage
//! (`raw`) mirrors the TOML shape with `deny_unknown_fields`, so a misspelt key is an error rather
//! than a silently ignored setting. The validation stage (`validate`) turns raw values into the
//! typed model in [`model`]: durations and sizes parsed, names cross-checked, addresses resolved,
//! paths made absolute. Every error, from either stage, names the file, the line and the key path
//! (`frontend[0].timeouts.client`), and all errors found are reported at once.
//!
//! The raw stage stops at its first error (serde cannot go on past a value of the wrong type),
//! which is why the raw structs accept loose types — integers as `i64`, most keys optional — and
//! leave range and presence checks to the validation stage, which does not stop.

#![forbid(unsafe_code)]

mod error;
pub mod files;
pub mod haproxy;
pub mod locate;
pub mod model;
mod raw;
mod summary;
mod units;
mod validate;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

pub use error::{ConfigError, ConfigErrors};
pub use haproxy::{format_warnings, Warning, WarningKind};
pub use model::*;

use std::path::Path;

use locate::{KeyPath, Locator, Segment};

/// Reads and validates the configuration file at `path` (TOML, or HAProxy syntax: see
/// [`load_with_warnings`]).
pub fn load(path: &Path) -> Result<Config, ConfigErrors> {
    load_with_warnings(path).map(|(config, _)| config)
}

/// Reads and validates the configuration file at `path`, TOML or HAProxy syntax (told apart
/// by [`haproxy::is_haproxy`]: the extension, else the content). The warnings are those of a
/// HAProxy file (keywords with no effect in tern, or mapped approximately); a TOML file has
/// none.
pub fn load_with_warnings(path: &Path) -> Result<(Config, Vec<Warning>), ConfigErrors> {
    let text = files::read_to_string(path).map_err(|e| {
        ConfigErrors(vec![ConfigError {
            file: path.to_path_buf(),
            line: None,
            key_path: String::new(),
            message: format!("cannot read the configuration file: {e}"),
        }])
    })?;
    if haproxy::is_haproxy(path, &text) {
        haproxy::parse(&text, path)
    } else {
        parse(&text, path).map(|config| (config, Vec::new()))
    }
}

/// Validates configuration `text` as if read from `file` (used for messages, and as the base
/// directory for relative paths).
pub fn parse(text: &str, file: &Path) -> Result<Config, ConfigErrors> {
    let locator = Locator::new(text);
    let located = |path: KeyPath, line: usize, message: String| ConfigError {
        file: file.to_path_buf(),
        line: Some(line),
        key_path: path.to_string(),
        message,
    };
    let raw = raw::from_str(text).map_err(|failure| {
        let path = complete_path(failure.path, &failure.message);
        let message = explain(&path, failure.message);
        let line = match (&failure.span, path.segments().is_empty()) {
            (Some(span), true) => locator.line_of_offset(span.start),
            _ => locator.line(&path),
        };
        ConfigErrors(vec![located(path, line, message)])
    })?;
    let base_dir = file.parent().unwrap_or_else(|| Path::new(""));
    validate::validate(raw, base_dir).map_err(|issues| {
        let mut errors: Vec<ConfigError> = issues
            .into_iter()
            .map(|issue| {
                let line = locator.line(&issue.path);
                located(issue.path, line, issue.message)
            })
            .collect();
        errors.sort_by_key(|e| e.line);
        ConfigErrors(errors)
    })
}

/// serde reports an unknown or missing key at the path of the table holding it; name the key
/// itself, so the path reads `frontend[0].timeouts.clientt` and the line is the key's.
fn complete_path(path: KeyPath, message: &str) -> KeyPath {
    let key = ["unknown field `", "missing field `"]
        .iter()
        .find_map(|prefix| message.strip_prefix(prefix))
        .and_then(|rest| rest.split_once('`'))
        .map(|(key, _)| key);
    match key {
        Some(key) if path.segments().last() != Some(&Segment::Key(key.to_owned())) => path.key(key),
        _ => path,
    }
}

/// Rewords the serde messages that confuse people most.
fn explain(path: &KeyPath, message: String) -> String {
    let message = message.replace(", expected i64", ", expected an integer");
    match path.segments() {
        [Segment::Key(section)] if message.contains("expected a sequence") => {
            format!("{message}: write [[{section}]] (double brackets), once per {section}")
        }
        _ => message,
    }
}
