//! `errorfile CODE FILE`, `errorfiles NAME [CODE ...]` (the pages of an `http-errors NAME`
//! section) and `http-error status CODE [content-type T] [string S | file F | errorfile F]`,
//! in proxies and `defaults`, as tern's `error_pages.CODE = { ... }`.
//!
//! `http-errors` sections are read by a pass of their own before the proxies (a proxy may
//! name a section written after it).
//!
//! The files are read and checked by the TOML stage (so a malformed file is reported at the
//! `.cfg` line that names it). A later line for the same code replaces an earlier one, as in
//! HAProxy (a proxy's own lines replace those it took from `defaults`). Relative paths are
//! resolved against the configuration file's directory, as for certificates.

use std::collections::HashMap;

use super::diag::Diag;
use super::emit::Table;
use super::named::named_sections;
use super::proxy::Cx;
use super::sections::Line;
use super::settings::{ProxyCfg, Src};
use super::toml_text::{string, Inline};

pub(crate) fn error_page(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let page = match line.keyword() {
        "errorfile" => errorfile(line, cx),
        "errorfiles" => return errorfiles(line, p, cx),
        _ => http_error(line, cx),
    };
    if let Some((code, table)) = page {
        set(p, code, table, line.no);
    }
}

fn set(p: &mut ProxyCfg, code: u16, table: String, line: usize) {
    p.error_pages.retain(|e| e.v.0 != code);
    p.error_pages.push(Src::new((code, table), line));
}

/// `errorfiles NAME [CODE ...]`: the section's pages (only those codes when listed), at this
/// line.
fn errorfiles(line: &Line, p: &mut ProxyCfg, cx: &mut Cx<'_>) {
    let Some(name) = line.word(1) else {
        cx.error(
            line.no,
            "'errorfiles' needs the name of an http-errors section",
        );
        return;
    };
    let Some(pages) = cx.global.http_errors.get(name) else {
        cx.error(line.no, format!("no http-errors section named '{name}'"));
        return;
    };
    let mut codes = Vec::new();
    for w in &line.words[2..] {
        codes.push(match code(line, w, cx) {
            Some(c) => c,
            None => return,
        });
    }
    let pages: Vec<(u16, String)> = pages
        .iter()
        .filter(|page| codes.is_empty() || codes.contains(&page.v.0))
        .map(|page| page.v.clone())
        .collect();
    for (code, file) in pages {
        let mut t = Inline::new();
        t.set("errorfile", string(&file));
        set(p, code, t.text(), line.no);
    }
}

/// Reads every `http-errors NAME` section of `text`: its `errorfile CODE FILE` lines (a
/// name written twice gathers both sections' lines, the later page for a code winning).
pub(crate) fn http_errors_sections(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> HashMap<String, Vec<Src<(u16, String)>>> {
    let mut all: HashMap<String, Vec<Src<(u16, String)>>> = HashMap::new();
    for named in named_sections(text, "http-errors", env, diag) {
        let pages = all.entry(named.name).or_default();
        for (no, words) in &named.lines {
            errorfile_line(pages, words, *no, &named.context, diag);
        }
    }
    all
}

/// One line of an `http-errors` section.
fn errorfile_line(
    pages: &mut Vec<Src<(u16, String)>>,
    words: &[String],
    no: usize,
    context: &str,
    diag: &mut Diag,
) {
    match (words[0].as_str(), words.get(1), words.get(2), words.get(3)) {
        ("errorfile", Some(code), Some(file), None) => match code.parse::<u16>() {
            Ok(code) => {
                pages.retain(|p| p.v.0 != code);
                pages.push(Src::new((code, file.clone()), no));
            }
            Err(_) => diag.error(no, context, format!("invalid status code '{code}'")),
        },
        ("errorfile", ..) => {
            diag.error(no, context, "'errorfile' needs a status code and a file");
        }
        (other, ..) => diag.error(
            no,
            context,
            format!("unknown keyword '{other}' (an http-errors section has errorfile lines)"),
        ),
    }
}

fn code(line: &Line, text: &str, cx: &mut Cx<'_>) -> Option<u16> {
    match text.parse::<u16>() {
        Ok(c) => Some(c),
        Err(_) => {
            cx.error(line.no, format!("invalid status code '{text}'"));
            None
        }
    }
}

/// `errorfile CODE FILE`.
fn errorfile(line: &Line, cx: &mut Cx<'_>) -> Option<(u16, String)> {
    let (Some(c), Some(file), None) = (line.word(1), line.word(2), line.word(3)) else {
        cx.error(line.no, "'errorfile' needs a status code and a file");
        return None;
    };
    let code = code(line, c, cx)?;
    let mut t = Inline::new();
    t.set("errorfile", string(file));
    Some((code, t.text()))
}

/// `http-error status CODE [content-type T] [string S | file F | errorfile F]`.
fn http_error(line: &Line, cx: &mut Cx<'_>) -> Option<(u16, String)> {
    let words = &line.words;
    if line.word(1) != Some("status") || words.len() < 3 {
        cx.error(line.no, "'http-error' needs 'status' and a code");
        return None;
    }
    let code = code(line, &words[2], cx)?;
    let mut t = Inline::new();
    let mut i = 3;
    while let Some(option) = line.word(i) {
        let Some(value) = words.get(i + 1) else {
            cx.error(line.no, format!("'http-error ... {option}' needs a value"));
            return None;
        };
        let key = match option {
            "content-type" => "content_type",
            "string" => "body",
            "lf-string" if !value.contains('%') => "body",
            "file" => "file",
            "errorfile" => "errorfile",
            _ => {
                cx.unsupported(line.no, &format!("http-error ... {option}"));
                return None;
            }
        };
        t.set(key, string(value));
        i += 2;
    }
    if t.is_empty() {
        // HAProxy's `http-error status N` alone keeps its default page: so does tern.
        return None;
    }
    Some((code, t.text()))
}

/// Writes each page as `error_pages.CODE = { ... }` on the line that gave it.
pub(crate) fn emit(c: &ProxyCfg, t: &mut Table) {
    for page in &c.error_pages {
        let (code, table) = &page.v;
        t.set(format!("error_pages.{code}"), table.clone(), page.line);
    }
}
