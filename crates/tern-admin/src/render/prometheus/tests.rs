use std::collections::HashSet;

use tern_proxy::stats::{BackendSnapshot, FrontendSnapshot, ServerSnapshot};

use super::families::*;

/// Every field of `fields` is exported by exactly one of `families` or listed as not exported.
fn check_covered(fields: &[(&str, u64)], families: &[&[Family]], skipped: &[(&str, &str)]) {
    let mut seen = HashSet::new();
    for family in families.iter().flat_map(|f| f.iter()) {
        for (field, _) in family.fields {
            assert!(
                fields.iter().any(|f| f.0 == *field),
                "{}: no field {field}",
                family.name
            );
            assert!(seen.insert(*field), "{field} exported twice");
        }
    }
    for (field, covered_by) in skipped {
        assert!(seen.insert(*field), "{field} both exported and skipped");
        let families: Vec<&str> = families
            .iter()
            .flat_map(|f| f.iter())
            .map(|f| f.name)
            .collect();
        assert!(
            families.contains(covered_by) || covered_by.starts_with("tern_frontend_tls_"),
            "{field}: {covered_by} is not a family"
        );
    }
    for (field, _) in fields {
        assert!(
            seen.contains(field),
            "counter {field} is neither exported nor skipped"
        );
    }
}

#[test]
fn every_frontend_counter_is_exported() {
    check_covered(
        &FrontendSnapshot::default().fields(),
        &[FRONTEND, FRONTEND_TLS],
        FRONTEND_NOT_EXPORTED,
    );
}

#[test]
fn every_backend_counter_is_exported() {
    check_covered(
        &BackendSnapshot::default().fields(),
        &[BACKEND],
        BACKEND_NOT_EXPORTED,
    );
}

#[test]
fn every_server_counter_is_exported() {
    check_covered(
        &ServerSnapshot::default().fields(),
        &[SERVER],
        SERVER_NOT_EXPORTED,
    );
}

#[test]
fn labelled_families_label_every_field() {
    for family in FRONTEND
        .iter()
        .chain(FRONTEND_TLS)
        .chain(BACKEND)
        .chain(SERVER)
    {
        match family.label {
            None => assert_eq!(family.fields.len(), 1, "{}", family.name),
            Some(_) => assert!(
                family.fields.iter().all(|f| !f.1.is_empty()),
                "{}",
                family.name
            ),
        }
        assert!(family.name.ends_with("_total"), "{}", family.name);
    }
}
