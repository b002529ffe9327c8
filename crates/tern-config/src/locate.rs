//! Key paths (`backend[0].servers[1].weight`) and the source line they point at.
//!
//! Serde and the validation stage both know *which* key is wrong but not *where* it is in the
//! file. This module answers "where": it re-parses the text with `toml_edit`, which keeps byte
//! spans for keys and values, walks the path segment by segment and converts the span of the
//! deepest segment found to a 1-based line. Walking to the deepest existing prefix matters for
//! missing keys: `frontend[1].name` absent points at the `[[frontend]]` header of that frontend.
//!
//! The second parse costs microseconds on a config file and keeps the raw structs free of
//! `Spanned<T>` wrappers, which would otherwise leak into every validation function.

use std::fmt;
use std::ops::Range;

use toml_edit::{Item, Table, TableLike, Value};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A path from the document root to a key or array element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyPath(Vec<Segment>);

impl KeyPath {
    /// The document root (renders as an empty string).
    pub fn root() -> Self {
        Self(Vec::new())
    }

    /// This path extended by a table key.
    pub fn key(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        Self(segments)
    }

    /// This path extended by an array index.
    pub fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    /// Converts the path serde_path_to_error tracked.
    pub fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment as S;
        let segments = path
            .iter()
            .filter_map(|segment| match segment {
                S::Seq { index } => Some(Segment::Index(*index)),
                S::Map { key } | S::Enum { variant: key } => Some(Segment::Key(key.clone())),
                S::Unknown => None,
            })
            .collect();
        Self(segments)
    }

    pub fn segments(&self) -> &[Segment] {
        &self.0
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::Key(key) if i == 0 => f.write_str(key)?,
                Segment::Key(key) => write!(f, ".{key}")?,
            }
        }
        Ok(())
    }
}

/// Finds source lines for key paths in one text.
#[derive(Debug)]
pub struct Locator<'t> {
    text: &'t str,
    doc: Option<toml_edit::Document<&'t str>>,
}

impl<'t> Locator<'t> {
    pub fn new(text: &'t str) -> Self {
        Self {
            text,
            doc: toml_edit::Document::parse(text).ok(),
        }
    }

    /// 1-based line of byte `offset` (clamped to the text).
    pub fn line_of_offset(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        let prefix = self.text.as_bytes().get(..end).unwrap_or_default();
        1 + prefix.iter().filter(|&&b| b == b'\n').count()
    }

    /// 1-based line of the deepest segment of `path` present in the document; line 1 when not
    /// even the first segment exists (or the text does not parse).
    pub fn line(&self, path: &KeyPath) -> usize {
        let span = self
            .doc
            .as_ref()
            .and_then(|doc| deepest_span(doc.as_item(), path.segments()));
        span.map_or(1, |span| self.line_of_offset(span.start))
    }
}

/// A node of the parsed document: tables hold items, arrays of tables hold tables, arrays of
/// values hold values.
#[derive(Clone, Copy)]
enum Node<'a> {
    Item(&'a Item),
    Table(&'a Table),
    Value(&'a Value),
}

impl<'a> Node<'a> {
    fn table_like(self) -> Option<&'a dyn TableLike> {
        match self {
            Node::Item(item) => item.as_table_like(),
            Node::Table(table) => Some(table as &dyn TableLike),
            Node::Value(value) => value.as_inline_table().map(|t| t as &dyn TableLike),
        }
    }

    /// Child `key` of a table or inline table, with the span of its key (else its value).
    fn child(self, key: &str) -> Option<(Node<'a>, Option<Range<usize>>)> {
        let (key, item) = self.table_like()?.get_key_value(key)?;
        Some((Node::Item(item), key.span().or_else(|| item.span())))
    }

    /// Element `index` of an array or array of tables, with its span.
    fn element(self, index: usize) -> Option<(Node<'a>, Option<Range<usize>>)> {
        let array = match self {
            Node::Item(Item::ArrayOfTables(tables)) => {
                let table = tables.get(index)?;
                return Some((Node::Table(table), table.span()));
            }
            Node::Item(item) => item.as_array()?,
            Node::Table(_) => return None,
            Node::Value(value) => value.as_array()?,
        };
        let value = array.get(index)?;
        Some((Node::Value(value), value.span()))
    }
}

/// Span of the deepest segment of `segments` that exists under `root`.
fn deepest_span(root: &Item, segments: &[Segment]) -> Option<Range<usize>> {
    let mut node = Node::Item(root);
    let mut best = None;
    for segment in segments {
        let step = match segment {
            Segment::Key(key) => node.child(key),
            Segment::Index(index) => node.element(*index),
        };
        let Some((next, span)) = step else { break };
        node = next;
        best = span.or(best);
    }
    best
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const TEXT: &str = r#"# comment
[global]
workers = 2

[[frontend]]
name = "web"
timeouts = { client = "30s",
  keep_alive = "10s" }
limits.max_headers = 10

[[frontend]]
name = "api"

[frontend.timeouts]
client = "1s"

[[backend]]
name = "app"
servers = [
  { name = "s1", address = "127.0.0.1:1" },
  { name = "s2",
    weight = 3 },
]
"#;

    fn line(path: &KeyPath) -> usize {
        Locator::new(TEXT).line(path)
    }

    #[test]
    fn displays_like_serde_path_to_error() {
        let path = KeyPath::root()
            .key("backend")
            .index(1)
            .key("servers")
            .index(0)
            .key("weight");
        assert_eq!(path.to_string(), "backend[1].servers[0].weight");
        assert_eq!(KeyPath::root().to_string(), "");
    }

    #[test]
    fn finds_plain_keys_and_tables() {
        assert_eq!(line(&KeyPath::root().key("global")), 2);
        assert_eq!(line(&KeyPath::root().key("global").key("workers")), 3);
        assert_eq!(line(&KeyPath::root().key("frontend").index(0)), 5);
        assert_eq!(
            line(&KeyPath::root().key("frontend").index(1).key("name")),
            12
        );
    }

    #[test]
    fn finds_keys_inside_inline_tables_and_dotted_keys() {
        let fe = KeyPath::root().key("frontend").index(0);
        assert_eq!(line(&fe.key("timeouts").key("client")), 7);
        assert_eq!(line(&fe.key("timeouts").key("keep_alive")), 8);
        assert_eq!(line(&fe.key("limits").key("max_headers")), 9);
        let fe1 = KeyPath::root().key("frontend").index(1);
        assert_eq!(line(&fe1.key("timeouts").key("client")), 15);
    }

    #[test]
    fn finds_array_elements_and_their_keys() {
        let servers = KeyPath::root().key("backend").index(0).key("servers");
        assert_eq!(line(&servers.index(0)), 20);
        assert_eq!(line(&servers.index(1)), 21);
        assert_eq!(line(&servers.index(1).key("weight")), 22);
    }

    #[test]
    fn missing_keys_fall_back_to_the_deepest_existing_prefix() {
        assert_eq!(
            line(&KeyPath::root().key("frontend").index(1).key("bind")),
            11
        );
        assert_eq!(
            line(
                &KeyPath::root()
                    .key("backend")
                    .index(0)
                    .key("servers")
                    .index(9)
            ),
            19
        );
        assert_eq!(line(&KeyPath::root().key("nothing")), 1);
        assert_eq!(Locator::new("a = [").line(&KeyPath::root().key("a")), 1);
    }

    #[test]
    fn offsets_to_lines() {
        let locator = Locator::new("a\nb\nc");
        assert_eq!(locator.line_of_offset(0), 1);
        assert_eq!(locator.line_of_offset(2), 2);
        assert_eq!(locator.line_of_offset(4), 3);
        assert_eq!(locator.line_of_offset(99), 3);
    }
}
