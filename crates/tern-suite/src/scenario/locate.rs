//! Key paths (`workload[2].tls.suite`) and the source line they point at.
//!
//! The same approach as tern's configuration loader (crates/tern-config/src/locate.rs): serde
//! and the validation stage know *which* key is wrong, `toml_edit` knows *where* it is. The text
//! is parsed a second time with `toml_edit`, the path is walked as deep as it exists, and the
//! span found there becomes a 1-based line. A missing key points at the table that lacks it.

use std::fmt;
use std::ops::Range;

use toml_edit::{Item, Table, TableLike, Value};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

/// A path from the document root to a key or array element.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KeyPath(Vec<Segment>);

impl KeyPath {
    pub(crate) fn root() -> Self {
        Self(Vec::new())
    }

    /// This path extended by a table key.
    pub(crate) fn key(&self, key: &str) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Key(key.to_owned()));
        Self(segments)
    }

    /// This path extended by an array index.
    pub(crate) fn index(&self, index: usize) -> Self {
        let mut segments = self.0.clone();
        segments.push(Segment::Index(index));
        Self(segments)
    }

    /// Converts the path serde_path_to_error tracked.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> Self {
        use serde_path_to_error::Segment as S;
        Self(
            path.iter()
                .filter_map(|segment| match segment {
                    S::Seq { index } => Some(Segment::Index(*index)),
                    S::Map { key } | S::Enum { variant: key } => Some(Segment::Key(key.clone())),
                    S::Unknown => None,
                })
                .collect(),
        )
    }

    pub(crate) fn segments(&self) -> &[Segment] {
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
pub(crate) struct Locator<'t> {
    text: &'t str,
    doc: Option<toml_edit::Document<&'t str>>,
}

impl<'t> Locator<'t> {
    pub(crate) fn new(text: &'t str) -> Self {
        Self {
            text,
            doc: toml_edit::Document::parse(text).ok(),
        }
    }

    /// 1-based line of byte `offset` (clamped to the text).
    pub(crate) fn line_of_offset(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        let prefix = self.text.as_bytes().get(..end).unwrap_or_default();
        1 + prefix.iter().filter(|&&b| b == b'\n').count()
    }

    /// 1-based line of the deepest segment of `path` present in the document (line 1 when none).
    pub(crate) fn line(&self, path: &KeyPath) -> usize {
        let span = self
            .doc
            .as_ref()
            .and_then(|doc| deepest_span(doc.as_item(), path.segments()));
        span.map_or(1, |span| self.line_of_offset(span.start))
    }
}

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

    fn child(self, key: &str) -> Option<(Node<'a>, Option<Range<usize>>)> {
        let (key, item) = self.table_like()?.get_key_value(key)?;
        Some((Node::Item(item), key.span().or_else(|| item.span())))
    }

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

fn deepest_span(root: &Item, segments: &[Segment]) -> Option<Range<usize>> {
    let mut node = Node::Item(root);
    let mut best = None;
    for segment in segments {
        let step = match segment {
            Segment::Key(key) => node.child(key),
            Segment::Index(index) => node.element(*index),
        };
        let Some((next, span)) = step else { break };
        if span.is_some() {
            best = span;
        }
        node = next;
    }
    best
}
