//! A small, strict reader of the Prometheus text exposition format (0.0.4), for tests.
//!
//! Stricter than Prometheus itself where tern promises more: every family has `# HELP` and
//! `# TYPE` before its samples, samples of a family are contiguous, no family is declared twice,
//! no series appears twice, counters end in `_total` and are finite and non-negative, and
//! histograms have increasing `le` bounds, cumulative counts, a `+Inf` bucket equal to `_count`.

#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};

#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub value: f64,
}

#[derive(Debug, Clone)]
pub struct Family {
    pub name: String,
    pub help: String,
    pub kind: String,
    pub samples: Vec<Sample>,
}

/// Parses and checks `text`; the error names the line.
pub fn check(text: &str) -> Result<Vec<Family>, String> {
    let mut families: Vec<Family> = Vec::new();
    let mut declared = HashSet::new();
    let mut series = HashSet::new();
    let mut pending_help: Option<(String, String)> = None;
    if !text.is_empty() && !text.ends_with('\n') {
        return Err("the text does not end with a newline".into());
    }
    for (i, line) in text.lines().enumerate() {
        let at = |e: String| format!("line {}: {e}: {line:?}", i + 1);
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest
                .split_once(' ')
                .ok_or_else(|| at("HELP without text".into()))?;
            check_name(name).map_err(at)?;
            if !declared.insert(name.to_owned()) {
                return Err(at(format!("family {name} declared twice")));
            }
            check_help(help).map_err(at)?;
            pending_help = Some((name.to_owned(), help.to_owned()));
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest
                .split_once(' ')
                .ok_or_else(|| at("TYPE without a type".into()))?;
            let (help_name, help) = pending_help
                .take()
                .ok_or_else(|| at("TYPE without HELP before it".into()))?;
            if help_name != name {
                return Err(at(format!("TYPE for {name} after HELP for {help_name}")));
            }
            if !["counter", "gauge", "histogram"].contains(&kind) {
                return Err(at(format!("unexpected type {kind}")));
            }
            if kind == "counter" && !name.ends_with("_total") {
                return Err(at("counter name without _total".into()));
            }
            families.push(Family {
                name: name.into(),
                help,
                kind: kind.into(),
                samples: Vec::new(),
            });
        } else if line.starts_with('#') || line.trim().is_empty() {
            return Err(at("unexpected comment or blank line".into()));
        } else {
            if pending_help.is_some() {
                return Err(at("sample between HELP and TYPE".into()));
            }
            let sample = parse_sample(line).map_err(at)?;
            let family = families
                .last_mut()
                .ok_or_else(|| at("sample before any family".into()))?;
            if !belongs(&family.name, &family.kind, &sample.name) {
                return Err(at(format!(
                    "sample does not belong to family {}",
                    family.name
                )));
            }
            let key = format!("{}{:?}", sample.name, sample.labels);
            if !series.insert(key) {
                return Err(at("duplicate series".into()));
            }
            if family.kind == "counter" && !(sample.value.is_finite() && sample.value >= 0.0) {
                return Err(at("counter value not finite and non-negative".into()));
            }
            family.samples.push(sample);
        }
    }
    if let Some((name, _)) = pending_help {
        return Err(format!("HELP for {name} without TYPE"));
    }
    for family in families.iter().filter(|f| f.kind == "histogram") {
        check_histogram(family)?;
    }
    Ok(families)
}

fn belongs(family: &str, kind: &str, sample: &str) -> bool {
    match kind {
        "histogram" => ["_bucket", "_count", "_sum"]
            .iter()
            .any(|suffix| sample.strip_suffix(suffix) == Some(family)),
        _ => sample == family,
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first = chars.next().ok_or("empty name")?;
    if !(first.is_ascii_alphabetic() || first == '_' || first == ':')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
    {
        return Err(format!("invalid metric name {name:?}"));
    }
    Ok(())
}

fn check_label_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let first = chars.next().ok_or("empty label name")?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        || name.starts_with("__")
    {
        return Err(format!("invalid label name {name:?}"));
    }
    Ok(())
}

/// HELP text may escape only `\\` and `\n`.
fn check_help(help: &str) -> Result<(), String> {
    let mut chars = help.chars();
    while let Some(c) = chars.next() {
        if c == '\\' && !matches!(chars.next(), Some('\\' | 'n')) {
            return Err("bad escape in HELP".into());
        }
    }
    Ok(())
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let name_end = line.find(['{', ' ']).ok_or("no value")?;
    let name = &line[..name_end];
    check_name(name)?;
    let mut rest = &line[name_end..];
    let mut labels = BTreeMap::new();
    if let Some(after) = rest.strip_prefix('{') {
        rest = parse_labels(after, &mut labels)?;
    }
    let rest = rest.strip_prefix(' ').ok_or("no space before the value")?;
    let mut parts = rest.split(' ');
    let value = parse_value(parts.next().ok_or("no value")?)?;
    if let Some(ts) = parts.next() {
        ts.parse::<i64>()
            .map_err(|_| format!("bad timestamp {ts:?}"))?;
    }
    if parts.next().is_some() {
        return Err("trailing text".into());
    }
    Ok(Sample {
        name: name.into(),
        labels,
        value,
    })
}

/// Reads `a="x",b="y"}` and returns what follows the brace.
fn parse_labels<'a>(
    mut s: &'a str,
    labels: &mut BTreeMap<String, String>,
) -> Result<&'a str, String> {
    loop {
        if let Some(rest) = s.strip_prefix('}') {
            return Ok(rest);
        }
        let eq = s.find('=').ok_or("label without =")?;
        let name = &s[..eq];
        check_label_name(name)?;
        let mut chars = s[eq + 1..]
            .strip_prefix('"')
            .ok_or("label value not quoted")?
            .char_indices();
        let mut value = String::new();
        let end = loop {
            match chars.next().ok_or("unterminated label value")? {
                (i, '"') => break i,
                (_, '\\') => match chars.next().ok_or("unterminated escape")?.1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    c => return Err(format!("bad escape \\{c}")),
                },
                (_, '\n') => return Err("newline in label value".into()),
                (_, c) => value.push(c),
            }
        };
        if labels.insert(name.to_owned(), value).is_some() {
            return Err(format!("label {name} twice"));
        }
        s = &s[eq + 2 + end + 1..];
        if let Some(rest) = s.strip_prefix(',') {
            s = rest;
        } else if !s.starts_with('}') {
            return Err("expected , or } after a label".into());
        }
    }
}

fn parse_value(v: &str) -> Result<f64, String> {
    match v {
        "+Inf" => Ok(f64::INFINITY),
        "-Inf" => Ok(f64::NEG_INFINITY),
        "NaN" => Ok(f64::NAN),
        _ if v.contains(['i', 'I', 'n', 'N']) => Err(format!("bad value {v:?}")),
        _ => v.parse().map_err(|_| format!("bad value {v:?}")),
    }
}

fn check_histogram(family: &Family) -> Result<(), String> {
    let mut groups: BTreeMap<String, Vec<&Sample>> = BTreeMap::new();
    for s in &family.samples {
        let mut labels = s.labels.clone();
        labels.remove("le");
        groups.entry(format!("{labels:?}")).or_default().push(s);
    }
    for (labels, samples) in groups {
        let what = format!("{}{labels}", family.name);
        let mut last_le = f64::NEG_INFINITY;
        let mut last_count = 0.0;
        let mut inf = None;
        let mut count = None;
        for s in samples {
            if s.name.ends_with("_bucket") {
                let le = s
                    .labels
                    .get("le")
                    .ok_or(format!("{what}: bucket without le"))?;
                let le = parse_value(le)?;
                if le <= last_le || s.value < last_count {
                    return Err(format!(
                        "{what}: buckets not increasing or not cumulative at le={le}"
                    ));
                }
                (last_le, last_count) = (le, s.value);
                if le == f64::INFINITY {
                    inf = Some(s.value);
                }
            } else if s.name.ends_with("_count") {
                count = Some(s.value);
            }
        }
        match (inf, count) {
            (Some(i), Some(c)) if i == c => {}
            (inf, count) => return Err(format!("{what}: +Inf bucket {inf:?} and count {count:?}")),
        }
    }
    Ok(())
}

/// The value of the one sample named `name` with exactly `labels`.
pub fn value(families: &[Family], name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let want: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    families
        .iter()
        .flat_map(|f| &f.samples)
        .find(|s| s.name == name && s.labels == want)
        .map(|s| s.value)
}
