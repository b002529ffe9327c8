//! Writes the converted configuration as TOML text, with a map from each TOML line back to the
//! `.cfg` line it came from.
//!
//! Every setting is one TOML line: plain and dotted keys (`timeouts.client = "30s"`), and arrays
//! with one element per line (`bind`, `servers`, rules). The TOML stage reports errors at the
//! line of the key or element at fault, so the map turns them into `.cfg` lines; tables' key
//! paths (`backend[1]`) are turned back into section names (`backend app`) the same way.
//!
//! Approximations are written as a comment on the line they concern; keywords with no effect
//! (and approximations with no line of their own) are listed in the header comment, so the
//! converted file says everything the warnings said.

use std::collections::HashMap;

use super::diag::{Warning, WarningKind};
use super::settings::Src;

/// A TOML value: one line, or an array written one element per line.
#[derive(Debug, Clone)]
pub(crate) enum Value {
    Text(String),
    Items(Vec<Src<String>>),
}

#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// The key as written (may be dotted; parts already quoted where needed).
    pub key: String,
    pub value: Value,
    /// The `.cfg` line of the value (for arrays: of the key line).
    pub line: usize,
}

/// One `[global]`, `[[frontend]]`, `[[backend]]` or `[control]` table.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    /// `global`, `frontend`, `backend`, `control`.
    pub kind: &'static str,
    /// The `.cfg` line of the section it comes from.
    pub line: usize,
    /// How errors name it: `frontend web`, `listen px`, `global`.
    pub context: String,
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn new(kind: &'static str, line: usize, context: impl Into<String>) -> Self {
        Self {
            kind,
            line,
            context: context.into(),
            entries: Vec::new(),
        }
    }

    pub fn set(&mut self, key: impl Into<String>, value: String, line: usize) {
        self.entries.push(Entry {
            key: key.into(),
            value: Value::Text(value),
            line,
        });
    }

    /// An array, written only when it has elements.
    pub fn items(&mut self, key: &str, items: Vec<Src<String>>, line: usize) {
        if !items.is_empty() {
            self.entries.push(Entry {
                key: key.to_owned(),
                value: Value::Items(items),
                line,
            });
        }
    }

    fn is_array(&self) -> bool {
        matches!(
            self.kind,
            "frontend" | "backend" | "userlist" | "table" | "resolvers" | "peers"
        )
    }
}

/// The TOML text and how to map it back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Emitted {
    pub toml: String,
    /// `.cfg` line of each TOML line (index 0 = TOML line 1); 0 where none (comments).
    pub lines: Vec<usize>,
    /// Table key paths (`frontend[0]`, `global`) and the section each came from.
    pub contexts: Vec<(String, String)>,
}

struct Writer {
    out: Emitted,
    /// Approximation comments not yet written, by `.cfg` line.
    notes: HashMap<usize, Vec<String>>,
}

impl Writer {
    fn line(&mut self, text: &str, cfg_line: usize) {
        self.line_noted(text, cfg_line, true);
    }

    /// A line; `notes`: whether the approximations of its `.cfg` line may go on it (not on the
    /// brackets of an array, whose elements have their own lines).
    fn line_noted(&mut self, text: &str, cfg_line: usize, notes: bool) {
        self.out.toml.push_str(text);
        let found = if notes {
            self.notes.remove(&cfg_line)
        } else {
            None
        };
        if let Some(notes) = found {
            self.out.toml.push_str("  # approximated: ");
            push_comment(&mut self.out.toml, &notes.join("; "));
        }
        self.out.toml.push('\n');
        self.out.lines.push(cfg_line);
    }

    fn comment(&mut self, text: &str) {
        push_comment(&mut self.out.toml, text);
        self.out.toml.push('\n');
        self.out.lines.push(0);
    }
}

/// Appends comment text as TOML allows it: a control character other than tab (a NUL, or a
/// line break that a `\x00` or `\n` escape put in a `.cfg` word quoted by a warning) is written
/// as its escape, so a comment can neither make the file invalid nor end early and turn the
/// rest of its text into TOML lines.
fn push_comment(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_control() && c != '\t' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
}

/// Writes `tables`; `source` names the `.cfg` in the header comment.
pub(crate) fn emit(tables: &[Table], source: &str, warnings: &[Warning]) -> Emitted {
    let lines_written: std::collections::HashSet<usize> = tables
        .iter()
        .flat_map(|t| {
            t.entries.iter().flat_map(|e| {
                let items: Vec<usize> = match &e.value {
                    Value::Items(items) => items.iter().map(|i| i.line).collect(),
                    Value::Text(_) => Vec::new(),
                };
                std::iter::once(e.line).chain(items)
            })
        })
        .collect();
    let mut notes: HashMap<usize, Vec<String>> = HashMap::new();
    let mut header = Vec::new();
    let mut sorted: Vec<&Warning> = warnings.iter().collect();
    sorted.sort_by_key(|w| w.line);
    for w in sorted {
        if w.kind == WarningKind::Approximate && lines_written.contains(&w.line) {
            notes
                .entry(w.line)
                .or_default()
                .push(format!("{}: {}", w.keyword, w.message));
        } else {
            let what = match w.kind {
                WarningKind::NoEffect => "no effect",
                WarningKind::Approximate => "approximated",
            };
            header.push(format!(
                "#   line {}: '{}' ({what}): {}",
                w.line, w.keyword, w.message
            ));
        }
    }
    let mut writer = Writer {
        out: Emitted::default(),
        notes,
    };
    writer.comment(&format!("# Converted from {source} by `tern convert`."));
    if !header.is_empty() {
        writer.comment("# Not converted, or converted approximately:");
        for line in &header {
            writer.comment(line);
        }
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for table in tables {
        writer.comment("");
        let path = if table.is_array() {
            let n = counts.entry(table.kind).or_insert(0);
            let path = format!("{}[{n}]", table.kind);
            *n += 1;
            writer.line(&format!("[[{}]]", table.kind), table.line);
            path
        } else {
            writer.line(&format!("[{}]", table.kind), table.line);
            table.kind.to_owned()
        };
        writer.out.contexts.push((path, table.context.clone()));
        for entry in &table.entries {
            match &entry.value {
                Value::Text(text) => writer.line(&format!("{} = {text}", entry.key), entry.line),
                Value::Items(items) => {
                    writer.line_noted(&format!("{} = [", entry.key), entry.line, false);
                    for item in items {
                        writer.line(&format!("  {},", item.v), item.line);
                    }
                    writer.line_noted("]", entry.line, false);
                }
            }
        }
    }
    writer.out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn one_line_per_setting_with_its_source_line() {
        let mut fe = Table::new("frontend", 10, "frontend web");
        fe.set("name", "\"web\"".into(), 10);
        fe.items(
            "bind",
            vec![
                Src::new("\":80\"".into(), 11),
                Src::new("\":81\"".into(), 12),
            ],
            11,
        );
        fe.set("timeouts.client", "\"30s\"".into(), 5);
        let warnings = vec![
            Warning {
                file: PathBuf::from("h.cfg"),
                line: 12,
                context: "frontend web".into(),
                keyword: "alpn".into(),
                kind: WarningKind::Approximate,
                message: "no h2".into(),
            },
            Warning {
                file: PathBuf::from("h.cfg"),
                line: 2,
                context: "global".into(),
                keyword: "daemon".into(),
                kind: WarningKind::NoEffect,
                message: "foreground".into(),
            },
        ];
        let out = emit(&[fe], "h.cfg", &warnings);
        let expected = "# Converted from h.cfg by `tern convert`.\n\
                        # Not converted, or converted approximately:\n\
                        #   line 2: 'daemon' (no effect): foreground\n\
                        \n\
                        [[frontend]]\n\
                        name = \"web\"\n\
                        bind = [\n  \":80\",\n  \":81\",  # approximated: alpn: no h2\n]\n\
                        timeouts.client = \"30s\"\n";
        assert_eq!(out.toml, expected);
        assert_eq!(out.lines, [0, 0, 0, 0, 10, 10, 11, 11, 12, 11, 5]);
        assert_eq!(
            out.contexts,
            [("frontend[0]".to_owned(), "frontend web".to_owned())]
        );
    }

    #[test]
    fn control_characters_in_warnings_stay_inside_their_comment() {
        let mut fe = Table::new("frontend", 3, "frontend web");
        fe.set("name", "\"web\"".into(), 3);
        let warning = |line, kind, message: &str| Warning {
            file: PathBuf::from("h.cfg"),
            line,
            context: "frontend web".into(),
            keyword: "ciphers".into(),
            kind,
            message: message.into(),
        };
        let warnings = vec![
            warning(2, WarningKind::NoEffect, "A\0B\n[global]\nworkers = 1"),
            warning(3, WarningKind::Approximate, "C\r\nmaxconn = 2\tD"),
        ];
        let out = emit(&[fe], "h\n.cfg", &warnings);
        let parsed: toml::Table = out.toml.parse().expect("the translation is TOML");
        assert_eq!(
            parsed.keys().collect::<Vec<_>>(),
            ["frontend"],
            "{}",
            out.toml
        );
        assert!(out
            .toml
            .contains("#   line 2: 'ciphers' (no effect): A\\u{0}B\\n[global]\\nworkers = 1\n"));
        assert!(out
            .toml
            .contains("# approximated: ciphers: C\\r\\nmaxconn = 2\tD\n"));
        assert_eq!(out.toml.lines().count(), out.lines.len());
    }
}
