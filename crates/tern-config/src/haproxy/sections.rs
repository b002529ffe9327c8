//! The file's sections: `global`, `defaults`, `frontend`, `backend`, `listen`.
//!
//! A section starts at a line whose first word is a section keyword and runs to the next one;
//! indentation means nothing. Sections tern has no equivalent for
//! (`mailers`, `program`, ...) are one error at their header, and their lines are skipped rather than
//! reported one by one.
//!
//! Defaults follow HAProxy (doc/configuration.txt §4): a proxy takes its initial settings from
//! the defaults section named after `from`, else from the last defaults section before it, named
//! or not. A defaults section starts from HAProxy's built-in settings, or from the one named
//! after its own `from`.

use super::diag::Diag;
use super::lexer;

/// The kind of a section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Global,
    Defaults,
    Frontend,
    Backend,
    Listen,
}

impl Kind {
    fn from_keyword(word: &str) -> Option<Kind> {
        Some(match word {
            "global" => Kind::Global,
            "defaults" => Kind::Defaults,
            "frontend" => Kind::Frontend,
            "backend" => Kind::Backend,
            "listen" => Kind::Listen,
            _ => return None,
        })
    }

    pub fn keyword(self) -> &'static str {
        match self {
            Kind::Global => "global",
            Kind::Defaults => "defaults",
            Kind::Frontend => "frontend",
            Kind::Backend => "backend",
            Kind::Listen => "listen",
        }
    }

    /// Accepts client connections (has a frontend part).
    pub fn has_frontend(self) -> bool {
        matches!(self, Kind::Frontend | Kind::Listen | Kind::Defaults)
    }

    /// Connects to servers (has a backend part).
    pub fn has_backend(self) -> bool {
        matches!(self, Kind::Backend | Kind::Listen | Kind::Defaults)
    }
}

/// HAProxy sections tern has no equivalent for.
const UNSUPPORTED_SECTIONS: &[&str] = &[
    "mailers",
    "program",
    "ring",
    "cache",
    "fcgi-app",
    "log-forward",
    "crt-store",
    "traces",
    "acme",
    "dynamic-update",
];

/// Sections read by a pass of their own (found by `named.rs` for `error_pages.rs`,
/// `userlist.rs`, `resolvers.rs` and `peers.rs`), skipped here.
const READ_ELSEWHERE: &[&str] = &["http-errors", "userlist", "resolvers", "peers"];

/// Whether `word` starts a HAProxy section (used to recognise a HAProxy file by its content).
pub(crate) fn is_section_keyword(word: &str) -> bool {
    Kind::from_keyword(word).is_some()
        || UNSUPPORTED_SECTIONS.contains(&word)
        || READ_ELSEWHERE.contains(&word)
}

/// One non-empty line: its 1-based number and its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line {
    pub no: usize,
    pub words: Vec<String>,
}

impl Line {
    pub fn word(&self, i: usize) -> Option<&str> {
        self.words.get(i).map(String::as_str)
    }

    pub fn keyword(&self) -> &str {
        self.word(0).unwrap_or_default()
    }
}

/// One section with its lines.
#[derive(Debug, Clone)]
pub(crate) struct Section {
    pub kind: Kind,
    /// Empty for `global` and an unnamed `defaults`.
    pub name: String,
    /// The defaults section named after `from`.
    pub from: Option<String>,
    /// Line of the section keyword.
    pub line: usize,
    /// Address given on the header of a `listen` (the old `listen NAME ADDR:PORT` form).
    pub listen_address: Option<String>,
    pub lines: Vec<Line>,
}

impl Section {
    /// How messages name this section: `global`, `defaults`, `defaults web`, `frontend web`.
    pub fn context(&self) -> String {
        if self.name.is_empty() {
            self.kind.keyword().to_owned()
        } else {
            format!("{} {}", self.kind.keyword(), self.name)
        }
    }
}

/// Splits the text into sections, reporting lines outside any section, unsupported sections
/// and the conditional blocks (`.if`) tern does not evaluate.
pub(crate) fn split(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> Vec<Section> {
    let mut sections: Vec<Section> = Vec::new();
    // Inside a section tern does not support: its lines are skipped.
    let mut skipping = false;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let words = match lexer::split(raw, env) {
            Ok(words) if words.is_empty() => continue,
            Ok(words) => words,
            Err(message) => {
                diag.error(no, "", message);
                continue;
            }
        };
        let first = words[0].as_str();
        if let Some(kind) = Kind::from_keyword(first) {
            skipping = false;
            if let Some(section) = header(kind, &words, no, diag) {
                sections.push(section);
            }
        } else if READ_ELSEWHERE.contains(&first) {
            skipping = true;
        } else if UNSUPPORTED_SECTIONS.contains(&first) {
            skipping = true;
            diag.error(no, "", format!("section '{first}' is not supported yet"));
        } else if first.starts_with('.') {
            diag.error(
                no,
                "",
                format!("conditional block directive '{first}' is not supported yet"),
            );
        } else if skipping {
        } else if let Some(section) = sections.last_mut() {
            section.lines.push(Line { no, words });
        } else {
            diag.error(
                no,
                "",
                format!("keyword '{first}' is outside of any section"),
            );
        }
    }
    sections
}

/// Parses a section header: `KIND [NAME] [from DEFAULTS]` (and `listen NAME [ADDR]`).
fn header(kind: Kind, words: &[String], no: usize, diag: &mut Diag) -> Option<Section> {
    let mut section = Section {
        kind,
        name: String::new(),
        from: None,
        line: no,
        listen_address: None,
        lines: Vec::new(),
    };
    let mut rest = &words[1..];
    if kind == Kind::Global {
        if !rest.is_empty() {
            diag.error(no, "global", "the global section takes no arguments");
        }
        return Some(section);
    }
    if let Some(first) = rest.first().filter(|w| w.as_str() != "from") {
        section.name = first.clone();
        rest = &rest[1..];
    } else if kind != Kind::Defaults {
        diag.error(
            no,
            kind.keyword(),
            format!("'{}' needs a name", kind.keyword()),
        );
        return None;
    }
    if kind == Kind::Listen {
        if let Some(address) = rest.first().filter(|w| w.as_str() != "from") {
            section.listen_address = Some(address.clone());
            rest = &rest[1..];
        }
    }
    match rest {
        [] => {}
        [from, name] if from == "from" => section.from = Some(name.clone()),
        _ => diag.error(
            no,
            &section.context(),
            format!(
                "unexpected '{}' after the section name (expected 'from <defaults>')",
                rest.join(" ")
            ),
        ),
    }
    Some(section)
}

/// For each section, the index of the defaults section it starts from, if any.
pub(crate) fn defaults_of(sections: &[Section], diag: &mut Diag) -> Vec<Option<usize>> {
    let mut last: Option<usize> = None;
    let mut result = Vec::with_capacity(sections.len());
    for (i, section) in sections.iter().enumerate() {
        let parent = match (&section.from, section.kind) {
            (_, Kind::Global) => None,
            (Some(name), _) => {
                let found = sections[..i]
                    .iter()
                    .rposition(|s| s.kind == Kind::Defaults && &s.name == name);
                if found.is_none() {
                    diag.error(
                        section.line,
                        &section.context(),
                        format!("no defaults section named '{name}' before this section"),
                    );
                }
                found
            }
            (None, Kind::Defaults) => None,
            (None, _) => last,
        };
        result.push(parent);
        if section.kind == Kind::Defaults {
            last = Some(i);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::path::Path;

    use super::*;

    fn parse(text: &str) -> (Vec<Section>, Diag) {
        let mut diag = Diag::new(Path::new("h.cfg"));
        let sections = split(text, &|_| None, &mut diag);
        (sections, diag)
    }

    #[test]
    fn sections_collect_their_lines() {
        let (sections, diag) = parse(
            "# top\nglobal\n  maxconn 10\n\ndefaults web\n mode http\nfrontend fe from web\n  bind :80\n\
             backend be\nlisten px 127.0.0.1:81\n",
        );
        assert!(diag.errors.is_empty(), "{:?}", diag.errors);
        let kinds: Vec<Kind> = sections.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                Kind::Global,
                Kind::Defaults,
                Kind::Frontend,
                Kind::Backend,
                Kind::Listen
            ]
        );
        assert_eq!(
            sections[0].lines,
            [Line {
                no: 3,
                words: vec!["maxconn".into(), "10".into()]
            }]
        );
        assert_eq!(sections[1].name, "web");
        assert_eq!(sections[2].from.as_deref(), Some("web"));
        assert_eq!(sections[2].context(), "frontend fe");
        assert_eq!(sections[4].listen_address.as_deref(), Some("127.0.0.1:81"));
    }

    #[test]
    fn unsupported_sections_are_one_error_and_their_lines_skipped() {
        let (sections, diag) =
            parse("mailers mesh\n  mailer a 127.0.0.1:1024\nbackend be\n  retries 2\n");
        assert_eq!(diag.errors.len(), 1);
        assert_eq!(
            diag.errors[0].to_string(),
            "h.cfg:1: section 'mailers' is not supported yet"
        );
        assert_eq!(sections.len(), 1);
        assert_eq!(sections[0].lines.len(), 1);
    }

    #[test]
    fn lines_outside_sections_and_bad_headers_are_errors() {
        let (_, diag) = parse("maxconn 10\nfrontend\n.if defined(X)\nbackend b extra\n");
        let text: Vec<String> = diag.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "h.cfg:1: keyword 'maxconn' is outside of any section",
                "h.cfg:2: frontend: 'frontend' needs a name",
                "h.cfg:3: conditional block directive '.if' is not supported yet",
                "h.cfg:4: backend b: unexpected 'extra' after the section name (expected 'from <defaults>')",
            ]
        );
    }

    #[test]
    fn proxies_use_the_last_defaults_or_the_named_one() {
        let (sections, mut diag) = parse(
            "defaults a\ndefaults\nfrontend f1\ndefaults c from a\nbackend b1\nbackend b2 from a\n\
             backend b3 from nope\n",
        );
        let parents = defaults_of(&sections, &mut diag);
        assert_eq!(
            parents,
            [None, None, Some(1), Some(0), Some(3), Some(0), None]
        );
        assert_eq!(diag.errors.len(), 1);
        assert!(diag.errors[0]
            .to_string()
            .contains("no defaults section named 'nope'"));
    }
}
