//! Certificates of an `ssl` bind: `crt FILE`, `crt DIR`, `crt-list FILE` → `tls.certs` and
//! `tls.cert_dir`.
//!
//! HAProxy loads the private key from the certificate file, or from `<file>.key` when the file
//! has none; tern's `certs` item is then `{ cert, key }`. A `crt` directory becomes `cert_dir`
//! (tern loads its `*.pem` files; HAProxy loads every file but `.key`, `.ocsp`, `.issuer` and
//! `.sctl`). A crt-list line is `CERT [options] [sni filters]`: filters become `names`;
//! per-certificate options and negative filters are not supported yet. Relative paths get
//! `crt-base` in front, as in HAProxy, and are then relative to the configuration's directory.

use std::path::Path;

use super::lexer;
use super::proxy::Cx;
use super::toml_text::{string, strings, Inline};

/// What the `crt` and `crt-list` options of one bind add up to.
#[derive(Debug, Default)]
pub(crate) struct Certs {
    /// TOML items of `tls.certs`.
    pub items: Vec<String>,
    pub dir: Option<String>,
}

/// `base/path` unless `path` is absolute or there is no base.
pub(crate) fn with_base(base: Option<&str>, path: &str) -> String {
    match base {
        Some(base) if !path.starts_with('/') && !base.is_empty() => {
            format!("{}/{path}", base.trim_end_matches('/'))
        }
        _ => path.to_owned(),
    }
}

impl Certs {
    /// `crt PATH`.
    pub fn crt(&mut self, path: &str, line: usize, cx: &mut Cx<'_>) {
        let path = with_base(cx.global.crt_base.as_deref(), path);
        if cx.base_dir.join(&path).is_dir() {
            if self.dir.is_some() {
                cx.unsupported_because(
                    line,
                    "crt",
                    "tern loads one certificate directory per bind",
                );
                return;
            }
            let skipped = not_pem(&cx.base_dir.join(&path));
            if !skipped.is_empty() {
                let what = format!(
                    "tern loads the directory's *.pem files only, so not {} (HAProxy loads every file but .key, .ocsp, .issuer and .sctl ones)",
                    skipped.join(", ")
                );
                cx.approx(line, "crt", &what);
            }
            self.dir = Some(path);
            return;
        }
        self.items.push(cert_item(&path, None, cx.base_dir));
    }

    /// `crt-list PATH`.
    pub fn crt_list(&mut self, list: &str, line: usize, cx: &mut Cx<'_>) {
        let text = match crate::files::read_to_string(&cx.base_dir.join(list)) {
            Ok(text) => text,
            Err(e) => {
                cx.error(line, format!("cannot read crt-list '{list}': {e}"));
                return;
            }
        };
        let mut filtered = false;
        for (i, raw) in text.lines().enumerate() {
            let at = format!("crt-list {list}:{}", i + 1);
            let words = match lexer::split(raw, &|_| None) {
                Ok(words) if words.is_empty() => continue,
                Ok(words) => words,
                Err(e) => {
                    cx.error(line, format!("{at}: {e}"));
                    continue;
                }
            };
            let path = with_base(cx.global.crt_base.as_deref(), &words[0]);
            let (options, filters) = split_options(&words[1..]);
            if !options.is_empty() {
                let what = format!("{at}: [{}]", options.join(" "));
                cx.unsupported_because(line, &what, "per-certificate SSL options");
                continue;
            }
            if let Some(negative) = filters.iter().find(|f| f.starts_with('!')) {
                let what = format!("{at}: {negative}");
                cx.unsupported_because(line, &what, "negative SNI filters");
                continue;
            }
            filtered |= !filters.is_empty();
            self.items
                .push(cert_item(&path, Some(&filters), cx.base_dir));
        }
        if filtered {
            cx.approx(
                line,
                "crt-list",
                "SNI filters become the certificate's `names`: tern also serves it for the names of its own SAN",
            );
        }
    }
}

/// The files of a crt directory HAProxy would load as certificates and tern, which loads
/// `*.pem` files, would not.
fn not_pem(dir: &Path) -> Vec<String> {
    const SIDE_FILES: [&str; 4] = [".key", ".ocsp", ".issuer", ".sctl"];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            !n.starts_with('.')
                && !n.ends_with(".pem")
                && !SIDE_FILES.iter().any(|s| n.ends_with(s))
        })
        .collect();
    names.sort();
    names
}

/// `[opt opt] filter filter` → (options, filters).
fn split_options(words: &[String]) -> (Vec<String>, Vec<String>) {
    let mut options = Vec::new();
    let mut rest = words;
    if words.first().is_some_and(|w| w.starts_with('[')) {
        let end = words
            .iter()
            .position(|w| w.ends_with(']'))
            .unwrap_or(words.len() - 1);
        options = words[..=end]
            .iter()
            .map(|w| w.trim_start_matches('[').trim_end_matches(']').to_owned())
            .filter(|w| !w.is_empty())
            .collect();
        rest = &words[end + 1..];
    }
    (options, rest.to_vec())
}

/// A `certs` item: the path alone when the key is in the file (or the file cannot be read: the
/// TLS stage reports it), `{ cert, key }` when the key is in `<file>.key`.
fn cert_item(path: &str, names: Option<&[String]>, base_dir: &Path) -> String {
    let full = base_dir.join(path);
    let has_key = crate::files::read(&full)
        .map(|bytes| bytes.windows(11).any(|w| w == b"PRIVATE KEY"))
        .unwrap_or(true);
    let key = format!("{path}.key");
    let separate_key = !has_key && base_dir.join(&key).is_file();
    let names = names.filter(|n| !n.is_empty());
    if !separate_key && names.is_none() {
        return string(path);
    }
    let mut table = Inline::new();
    table.set("cert", string(path));
    if separate_key {
        table.set("key", string(&key));
    }
    table.set_opt("names", names.map(strings));
    table.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_apply_to_relative_paths() {
        assert_eq!(
            with_base(Some("/etc/haproxy/crt/"), "ecc/site.pem"),
            "/etc/haproxy/crt/ecc/site.pem"
        );
        assert_eq!(with_base(Some("/etc/ssl"), "/abs.pem"), "/abs.pem");
        assert_eq!(with_base(None, "rel.pem"), "rel.pem");
    }

    #[test]
    fn crt_list_options_and_filters() {
        let words: Vec<String> = ["[alpn", "h2]", "www.example.com", "*.example.org"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let (options, filters) = split_options(&words);
        assert_eq!(options, ["alpn", "h2"]);
        assert_eq!(filters, ["www.example.com", "*.example.org"]);
        let (options, filters) = split_options(&words[2..]);
        assert!(options.is_empty());
        assert_eq!(filters.len(), 2);
    }
}
