//! Located configuration errors.
//!
//! An error is only useful to an operator if it says where to look, so every error carries the
//! file, the line and the key path, and prints as `FILE:LINE: KEY_PATH: MESSAGE` — the shape
//! compilers use, which editors and CI logs turn into links.

use std::fmt;
use std::path::PathBuf;

/// One configuration error, located in the source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file the error is in, as given by the caller.
    pub file: PathBuf,
    /// 1-based line of the offending key or value, when known.
    pub line: Option<usize>,
    /// Dotted key path, e.g. `backend[0].servers[1].address`; empty for whole-file errors.
    pub key_path: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key_path.is_empty() {
            write!(f, ": {}", self.key_path)?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ConfigError {}

/// All errors found in one configuration file (never empty when returned by this crate).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl ConfigErrors {
    /// The errors, in file order for validation errors.
    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.0.iter()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// One line per error.
impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(line: Option<usize>, key_path: &str) -> ConfigError {
        ConfigError {
            file: PathBuf::from("tern.toml"),
            line,
            key_path: key_path.to_owned(),
            message: "bad".to_owned(),
        }
    }

    #[test]
    fn display_is_file_line_path_message() {
        assert_eq!(
            error(Some(3), "global.workers").to_string(),
            "tern.toml:3: global.workers: bad"
        );
        assert_eq!(error(Some(1), "").to_string(), "tern.toml:1: bad");
        assert_eq!(error(None, "").to_string(), "tern.toml: bad");
    }

    #[test]
    fn display_of_many_is_one_line_each() {
        let errors = ConfigErrors(vec![error(Some(1), "a"), error(Some(2), "b")]);
        assert_eq!(
            errors.to_string(),
            "tern.toml:1: a: bad\ntern.toml:2: b: bad"
        );
        assert_eq!(errors.len(), 2);
        assert_eq!(errors.iter().count(), 2);
    }
}
