//! HAProxy's line tokenisation (doc/configuration.txt §2.2 and §2.3).
//!
//! A line is a keyword and arguments separated by spaces or tabs. Three kinds of quoting, as
//! HAProxy has them:
//!
//! - a backslash escapes the next character: `\ ` (a space inside a word), `\#`, `\\`, `\'`,
//!   `\"`, `\$`, and `\r`, `\n`, `\t`, `\xNN` stand for those bytes. Any other pair is kept as
//!   written (`\1`, `\.` in a regex), as HAProxy does;
//! - double quotes (weak) keep spaces and `#` and expand environment variables: `$NAME`,
//!   `${NAME}`, `${NAME-default}` (the default replaces an unset variable, not an empty one) and
//!   `${NAME[*]}` (one argument per space-separated word of the value);
//! - single quotes (strong) keep everything as written, backslashes included.
//!
//! Quoted and unquoted parts next to each other form one word (`a"b c"d` is `ab cd`); `""` is an
//! empty argument. `#` outside quotes starts a comment. There is no line continuation: a
//! trailing backslash is an error, as in HAProxy. Variables are not expanded outside double
//! quotes (HAProxy ignores them there too).

/// Splits `line` into words. `env` looks up environment variables (injected for tests).
pub(crate) fn split(
    line: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<String>, String> {
    let mut lexer = Lexer {
        chars: line.trim_end_matches(['\r', '\n']).chars().collect(),
        pos: 0,
        words: Vec::new(),
        word: Vec::new(),
        in_word: false,
    };
    lexer.run(env)?;
    Ok(lexer.words)
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    words: Vec<String>,
    /// Bytes of the word being built (`\xNN` may produce any byte).
    word: Vec<u8>,
    /// Whether a word has started (an empty `""` still makes one).
    in_word: bool,
}

impl Lexer {
    fn run(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                ' ' | '\t' => self.end_word()?,
                '#' => break,
                '\\' => self.escape(false)?,
                '\'' => self.single_quoted()?,
                '"' => self.double_quoted(env)?,
                c => self.push(c),
            }
        }
        self.end_word()
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn push(&mut self, c: char) {
        let mut buf = [0u8; 4];
        self.word
            .extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        self.in_word = true;
    }

    fn end_word(&mut self) -> Result<(), String> {
        if self.in_word {
            let bytes = std::mem::take(&mut self.word);
            let word = String::from_utf8(bytes)
                .map_err(|_| "an escape sequence makes a word that is not UTF-8".to_owned())?;
            self.words.push(word);
            self.in_word = false;
        }
        Ok(())
    }

    /// After a backslash. `in_dquote`: `\$` is an escape only inside double quotes.
    fn escape(&mut self, in_dquote: bool) -> Result<(), String> {
        let Some(c) = self.peek() else {
            return Err("a backslash ends the line (HAProxy has no line continuation)".to_owned());
        };
        self.pos += 1;
        match c {
            ' ' | '\\' | '#' | '\'' | '"' => self.push(c),
            '$' if in_dquote => self.push('$'),
            'r' => self.push('\r'),
            'n' => self.push('\n'),
            't' => self.push('\t'),
            'x' => {
                let hex: String = self.chars.iter().skip(self.pos).take(2).collect();
                let byte = (hex.len() == 2)
                    .then(|| u8::from_str_radix(&hex, 16).ok())
                    .flatten()
                    .ok_or_else(|| format!("invalid escape `\\x{hex}`: two hex digits expected"))?;
                self.pos += 2;
                self.word.push(byte);
                self.in_word = true;
            }
            other => {
                self.push('\\');
                self.push(other);
            }
        }
        Ok(())
    }

    fn single_quoted(&mut self) -> Result<(), String> {
        self.in_word = true;
        loop {
            match self.peek() {
                None => return Err("unmatched single quote".to_owned()),
                Some('\'') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(c) => {
                    self.pos += 1;
                    self.push(c);
                }
            }
        }
    }

    fn double_quoted(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        self.in_word = true;
        loop {
            let Some(c) = self.peek() else {
                return Err("unmatched double quote".to_owned());
            };
            self.pos += 1;
            match c {
                '"' => return Ok(()),
                '\\' => self.escape(true)?,
                '$' => self.variable(env)?,
                c => self.push(c),
            }
        }
    }

    /// After a `$` inside double quotes.
    fn variable(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        if self.peek() == Some('{') {
            self.pos += 1;
            let start = self.pos;
            let end = (start..self.chars.len())
                .find(|&i| self.chars[i] == '}')
                .ok_or_else(|| "`${` without its closing `}`".to_owned())?;
            let inner: String = self.chars[start..end].iter().collect();
            self.pos = end + 1;
            return self.braced(&inner, env);
        }
        let name = self.take_name();
        if name.is_empty() {
            // A lone `$` is literal.
            self.push('$');
            return Ok(());
        }
        let value = env(&name).unwrap_or_default();
        value.chars().for_each(|c| self.push(c));
        Ok(())
    }

    fn take_name(&mut self) -> String {
        let mut name = String::new();
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || c == '_' {
                name.push(c);
                self.pos += 1;
            } else {
                break;
            }
        }
        name
    }

    /// `${NAME}`, `${NAME-default}` or `${NAME[*]}`.
    fn braced(&mut self, inner: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<(), String> {
        if let Some(name) = inner.strip_suffix("[*]") {
            check_name(name)?;
            let value = env(name).unwrap_or_default();
            for (i, part) in value.split_whitespace().enumerate() {
                if i > 0 {
                    self.end_word()?;
                    self.in_word = true;
                }
                part.chars().for_each(|c| self.push(c));
            }
            return Ok(());
        }
        let (name, default) = match inner.split_once('-') {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        check_name(name)?;
        let value = match (env(name), default) {
            (Some(v), _) => v,
            (None, Some(d)) => d.to_owned(),
            (None, None) => String::new(),
        };
        value.chars().for_each(|c| self.push(c));
        Ok(())
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(format!("invalid environment variable name `{name}`"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/x".to_owned()),
            "EMPTY" => Some(String::new()),
            "LIST" => Some("a  b c".to_owned()),
            _ => None,
        }
    }

    fn words(line: &str) -> Vec<String> {
        split(line, &env).unwrap()
    }

    #[test]
    fn splits_on_spaces_and_tabs() {
        assert_eq!(words("  bind\t:443  ssl "), ["bind", ":443", "ssl"]);
        assert!(words("   ").is_empty());
        assert_eq!(
            words("server s1 10.0.0.1:80\r"),
            ["server", "s1", "10.0.0.1:80"]
        );
    }

    #[test]
    fn comments_end_the_line_outside_quotes() {
        assert_eq!(words("maxconn 10 # ten"), ["maxconn", "10"]);
        assert_eq!(words("maxconn 10#ten"), ["maxconn", "10"]);
        assert!(words("# only a comment").is_empty());
        assert_eq!(
            words("x \"a # b\" 'c # d' e\\#f"),
            ["x", "a # b", "c # d", "e#f"]
        );
    }

    #[test]
    fn backslash_escapes() {
        assert_eq!(
            words(r"stats realm Haproxy\ Statistics"),
            ["stats", "realm", "Haproxy Statistics"]
        );
        assert_eq!(words(r#"a\\b \'x\' \"y\""#), [r"a\b", "'x'", "\"y\""]);
        assert_eq!(words(r"a\tb\x41"), ["a\tbA"]);
        // Other pairs are kept as written (regexes).
        assert_eq!(words(r"path_reg ^/a\.b\d$"), ["path_reg", r"^/a\.b\d$"]);
        assert!(split(r"bad\x4", &env).unwrap_err().contains("hex"));
        assert!(split("trailing \\", &env)
            .unwrap_err()
            .contains("continuation"));
    }

    #[test]
    fn quotes_join_with_neighbours_and_may_be_empty() {
        assert_eq!(words(r#"a"b c"d 'e f'g"#), ["ab cd", "e fg"]);
        assert_eq!(words(r#"x "" ''"#), ["x", "", ""]);
        assert_eq!(words(r#"'\n' "\n""#), [r"\n", "\n"]);
        assert!(split("x \"open", &env)
            .unwrap_err()
            .contains("double quote"));
        assert!(split("x 'open", &env).unwrap_err().contains("single quote"));
    }

    #[test]
    fn variables_expand_in_double_quotes_only() {
        assert_eq!(
            words(r#"crt "${HOME}/a.pem" "$HOME/b" '$HOME' $HOME"#),
            ["crt", "/home/x/a.pem", "/home/x/b", "$HOME", "$HOME"]
        );
        assert_eq!(
            words(r#""${UNSET}" "${UNSET-127.0.0.1}:514" "${EMPTY-d}""#),
            ["", "127.0.0.1:514", ""]
        );
        assert_eq!(words(r#"x "${LIST[*]}" y"#), ["x", "a", "b", "c", "y"]);
        assert_eq!(words(r#""cost \$5" "a$""#), ["cost $5", "a$"]);
        assert!(split(r#""${1X}""#, &env)
            .unwrap_err()
            .contains("variable name"));
        assert!(split(r#""${OPEN""#, &env).is_err());
    }
}
