//! Splitting an ACL expression or a condition into words, as HAProxy splits a config line.
//!
//! Words are separated by spaces or tabs. `"..."` quotes keep spaces and understand backslash
//! escapes; `'...'` quotes keep everything literally; a backslash outside quotes escapes the
//! next character. A word remembers whether any of it was quoted, so that a quoted `"{"` or
//! `"||"` is a pattern, not syntax.

/// One word of an expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub text: String,
    pub quoted: bool,
}

impl Word {
    /// Whether this is the unquoted syntax token `token`.
    pub fn is(&self, token: &str) -> bool {
        !self.quoted && self.text == token
    }
}

/// Splits `text` into words.
pub(crate) fn words(text: &str) -> Result<Vec<Word>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        while chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
        if chars.peek().is_none() {
            return Ok(out);
        }
        let mut word = Word {
            text: String::new(),
            quoted: false,
        };
        while let Some(c) = chars.next_if(|c| *c != ' ' && *c != '\t') {
            match c {
                '"' => {
                    word.quoted = true;
                    double_quoted(&mut chars, &mut word.text)?;
                }
                '\'' => {
                    word.quoted = true;
                    single_quoted(&mut chars, &mut word.text)?;
                }
                '\\' => {
                    let escaped = chars.next().ok_or("a `\\` at the end escapes nothing")?;
                    word.quoted = true;
                    word.text.push(escaped);
                }
                c if c.is_control() => return Err(format!("control character {c:?}")),
                c => word.text.push(c),
            }
        }
        out.push(word);
    }
}

fn double_quoted(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) -> Result<(), String> {
    loop {
        match chars.next() {
            None => return Err("a `\"` quote is not closed".into()),
            Some('"') => return Ok(()),
            Some('\\') => match chars.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('t') => out.push('\t'),
                Some(c) => out.push(c),
                None => return Err("a `\"` quote is not closed".into()),
            },
            Some(c) => out.push(c),
        }
    }
}

fn single_quoted(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
) -> Result<(), String> {
    loop {
        match chars.next() {
            None => return Err("a `'` quote is not closed".into()),
            Some('\'') => return Ok(()),
            Some(c) => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn texts(s: &str) -> Vec<String> {
        words(s).unwrap().into_iter().map(|w| w.text).collect()
    }

    #[test]
    fn splits_and_unquotes() {
        assert_eq!(
            texts("  path_beg -i /a\t/b "),
            ["path_beg", "-i", "/a", "/b"]
        );
        assert_eq!(
            texts(r#"hdr(x) "a b" 'c\d' e\ f"#),
            ["hdr(x)", "a b", r"c\d", "e f"]
        );
        assert_eq!(texts(r#""say \"hi\"""#), [r#"say "hi""#]);
        assert!(words("").unwrap().is_empty());
        let w = words(r#"{ "{" }"#).unwrap();
        assert!(w[0].is("{") && !w[1].is("{") && w[2].is("}"));
    }

    #[test]
    fn refuses_open_quotes() {
        assert!(words("\"abc").is_err());
        assert!(words("'abc").is_err());
        assert!(words("abc\\").is_err());
        assert!(words("a\u{7}b").is_err());
    }
}
