//! The sections read by a pass of their own (`userlist`, `resolvers`, `peers`, `http-errors`):
//! found in the whole file, their header checked, their lines handed over.
//!
//! They are read apart from the proxies because a proxy may name one written after it. Each
//! kind then only says what its lines mean; where a section starts and ends, and what its
//! header must look like, is the same for all of them and lives here.

use super::diag::Diag;
use super::lexer;
use super::sections::is_section_keyword;

/// One `KEYWORD NAME` section: its name, header line, and the words of each line in it.
#[derive(Debug)]
pub(crate) struct Named {
    pub name: String,
    /// The header's line number.
    pub no: usize,
    /// `KEYWORD NAME`, the context of the section's diagnostics.
    pub context: String,
    /// Each line of the section that has words: its number and its words.
    pub lines: Vec<(usize, Vec<String>)>,
}

/// Every `keyword NAME` section of `text`, in file order. A header without a name is an
/// error and its section is skipped; words after the name are an error and ignored. Lines the
/// lexer refuses are skipped (the main pass reports them).
pub(crate) fn named_sections(
    text: &str,
    keyword: &str,
    env: &dyn Fn(&str) -> Option<String>,
    diag: &mut Diag,
) -> Vec<Named> {
    let mut sections: Vec<Named> = Vec::new();
    // Whether the lines being read belong to the last section of `sections`.
    let mut inside = false;
    for (i, raw) in text.lines().enumerate() {
        let no = i + 1;
        let Ok(words) = lexer::split(raw, env) else {
            continue;
        };
        let Some(first) = words.first() else {
            continue;
        };
        if is_section_keyword(first) {
            inside = first == keyword;
            if inside {
                match header(&words, keyword, no, diag) {
                    Some(section) => sections.push(section),
                    None => inside = false,
                }
            }
            continue;
        }
        if let Some(section) = sections.last_mut().filter(|_| inside) {
            section.lines.push((no, words));
        }
    }
    sections
}

fn header(words: &[String], keyword: &str, no: usize, diag: &mut Diag) -> Option<Named> {
    let Some(name) = words.get(1) else {
        diag.error(no, "", format!("'{keyword}' needs a name"));
        return None;
    };
    let context = format!("{keyword} {name}");
    if words.len() > 2 {
        diag.error(
            no,
            &context,
            format!("a {keyword} section takes only a name"),
        );
    }
    Some(Named {
        name: name.clone(),
        no,
        context,
        lines: Vec::new(),
    })
}

/// The words of each line of the `global` section(s) whose first word is `keyword` (for
/// settings of `global` that a section read apart needs, such as `localpeer`).
pub(crate) fn global_lines(
    text: &str,
    keyword: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<(usize, Vec<String>)> {
    let mut in_global = false;
    let mut found = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let Ok(words) = lexer::split(raw, env) else {
            continue;
        };
        let Some(first) = words.first() else {
            continue;
        };
        if is_section_keyword(first) {
            in_global = first == "global";
        } else if in_global && first == keyword {
            found.push((i + 1, words));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    const TEXT: &str = "\
global
    localpeer lb1
userlist
    user nobody
userlist admins extra
    user alice insecure-password a
frontend web
    bind :80
userlist ops
    group g

    user bob insecure-password b
global
    localpeer lb2
";

    fn read(keyword: &str) -> (Vec<Named>, Vec<String>) {
        let mut diag = Diag::new(Path::new("h.cfg"));
        let found = named_sections(TEXT, keyword, &|_| None, &mut diag);
        let errors = diag
            .errors
            .iter()
            .map(|e| format!("{}: {}: {}", e.line.unwrap_or(0), e.key_path, e.message))
            .collect();
        (found, errors)
    }

    #[test]
    fn sections_end_at_the_next_section_and_keep_their_own_lines() {
        let (found, errors) = read("userlist");
        let names: Vec<_> = found.iter().map(|n| (n.name.as_str(), n.no)).collect();
        assert_eq!(names, [("admins", 5), ("ops", 9)]);
        let lines: Vec<Vec<usize>> = found
            .iter()
            .map(|n| n.lines.iter().map(|(no, _)| *no).collect())
            .collect();
        // The nameless section's line is nobody's; `bind :80` belongs to the frontend.
        assert_eq!(lines, [vec![6], vec![10, 12]]);
        assert_eq!(found[1].context, "userlist ops");
        assert_eq!(
            errors,
            [
                "3: : 'userlist' needs a name",
                "5: userlist admins: a userlist section takes only a name"
            ]
        );
    }

    #[test]
    fn global_lines_are_found_in_every_global_section() {
        let found = global_lines(TEXT, "localpeer", &|_| None);
        let found: Vec<_> = found.iter().map(|(no, w)| (*no, w[1].as_str())).collect();
        assert_eq!(found, [(2, "lb1"), (14, "lb2")]);
    }
}
