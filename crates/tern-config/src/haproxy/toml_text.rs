//! Writing TOML values as text: strings, keys, arrays, inline tables.
//!
//! The converter builds TOML text rather than a document tree so that it controls the layout:
//! one `.cfg` keyword becomes one TOML line, which is what lets errors of the TOML stage be
//! mapped back to the `.cfg` line (see `emit.rs`).

/// A TOML basic string.
pub(crate) fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A key: bare when TOML allows it, quoted otherwise.
pub(crate) fn key(k: &str) -> String {
    let bare = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        k.to_owned()
    } else {
        string(k)
    }
}

/// An array of already formatted values.
pub(crate) fn array<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("[{}]", items.join(", "))
}

/// An array of strings.
pub(crate) fn strings<S: AsRef<str>>(items: &[S]) -> String {
    let items: Vec<String> = items.iter().map(|s| string(s.as_ref())).collect();
    array(&items)
}

/// An inline table of (key, formatted value) pairs.
pub(crate) fn inline(pairs: &[(&str, String)]) -> String {
    if pairs.is_empty() {
        return "{}".to_owned();
    }
    let fields: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{} = {v}", key(k)))
        .collect();
    format!("{{ {} }}", fields.join(", "))
}

/// Builds an inline table field by field.
#[derive(Debug, Default)]
pub(crate) struct Inline(Vec<(&'static str, String)>);

impl Inline {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set(&mut self, key: &'static str, value: String) -> &mut Self {
        self.0.push((key, value));
        self
    }

    pub fn set_opt(&mut self, key: &'static str, value: Option<String>) -> &mut Self {
        if let Some(value) = value {
            self.0.push((key, value));
        }
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn text(&self) -> String {
        inline(&self.0)
    }
}

/// Quotes a word of a HAProxy condition or ACL expression when it must be, so that tern's
/// expression parser reads it back as the same word: words with spaces, quotes, backslashes or
/// control characters, and the empty word.
pub(crate) fn condition_word(word: &str) -> String {
    let plain = !word.is_empty()
        && !word
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '"' | '\'' | '\\'));
    if plain {
        return word.to_owned();
    }
    let mut out = String::from("\"");
    for c in word.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// HAProxy words joined back into one expression string.
pub(crate) fn condition(words: &[String]) -> String {
    let words: Vec<String> = words.iter().map(|w| condition_word(w)).collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_keys() {
        assert_eq!(string(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(string("x\ty\u{1}"), r#""x\ty\u0001""#);
        assert_eq!(key("is_api-2"), "is_api-2");
        assert_eq!(key("host.www"), "\"host.www\"");
        assert_eq!(strings(&["a", "b"]), r#"["a", "b"]"#);
        assert_eq!(
            inline(&[("name", string("s1")), ("weight", "2".into())]),
            r#"{ name = "s1", weight = 2 }"#
        );
        assert_eq!(inline(&[]), "{}");
    }

    #[test]
    fn condition_words_are_quoted_only_when_needed() {
        let words: Vec<String> = [
            "{",
            "path_reg",
            r"^/a\.b",
            "}",
            "||",
            "hdr(x)",
            "a b",
            "",
            "say \"hi\"",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        assert_eq!(
            condition(&words),
            r#"{ path_reg "^/a\\.b" } || hdr(x) "a b" "" "say \"hi\"""#
        );
    }
}
