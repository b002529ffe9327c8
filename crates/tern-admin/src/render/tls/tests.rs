use super::*;
use tern_proxy::stats::KindSnapshot;

/// A snapshot whose every table is longer than the proxy's names, so `lines()` names every
/// counter; values count up so each one is distinct.
fn every_counter() -> TlsSnapshot {
    let mut next = 0;
    let mut seq = || {
        (0..64)
            .map(|_| {
                next += 1;
                next
            })
            .collect::<Vec<u64>>()
    };
    TlsSnapshot {
        full: KindSnapshot {
            versions: seq(),
            suites: seq(),
            groups: seq(),
        },
        resumed: KindSnapshot {
            versions: seq(),
            suites: seq(),
            groups: seq(),
        },
        certs: seq(),
        failures: seq(),
        latency: seq(),
        admission: seq(),
    }
}

fn names(counts: &[Count], kind: Option<&str>) -> Vec<String> {
    counts
        .iter()
        .filter(|c| c.kind == kind)
        .map(|c| c.name.clone())
        .collect()
}

#[test]
fn every_name_lands_in_its_group() {
    let snap = every_counter();
    let b = TlsBreakdown::of(&snap);
    let versions = names(&b.versions, Some("full"));
    assert!(versions.contains(&"tls12".to_owned()), "{versions:?}");
    assert!(versions.contains(&"tls13".to_owned()), "{versions:?}");
    assert_eq!(versions, names(&b.versions, Some("resumed")));
    let groups = names(&b.groups, Some("full"));
    for g in ["x25519", "p256", "x25519mlkem768", "none", "other"] {
        assert!(groups.contains(&g.to_owned()), "{g} not in {groups:?}");
    }
    assert_eq!(groups, names(&b.groups, Some("resumed")));
    assert!(names(&b.certificates, None).contains(&"rsa".to_owned()));
    let failures = names(&b.failures, None);
    for f in ["timeout", "protocol", "unknown_sni", "client_no_cert"] {
        assert!(failures.contains(&f.to_owned()), "{f} not in {failures:?}");
    }
    let admission = names(&b.admission, None);
    for a in ["rate_delayed", "source_refused", "resume_offers"] {
        assert!(
            admission.contains(&a.to_owned()),
            "{a} not in {admission:?}"
        );
    }
    let suites = names(&b.suites, Some("full"));
    assert!(suites.iter().any(|s| s.starts_with("TLS13_")), "{suites:?}");
    assert_eq!(suites, names(&b.suites, Some("resumed")));
}

#[test]
fn nothing_is_dropped_or_counted_twice() {
    let snap = every_counter();
    let b = TlsBreakdown::of(&snap);
    let [tls, suites, latency] = snap.lines();
    let sorted = b.versions.len()
        + b.groups.len()
        + b.certificates.len()
        + b.failures.len()
        + b.admission.len();
    assert_eq!(sorted, tls.1.len());
    assert_eq!(b.suites.len(), suites.1.len());
    assert_eq!(b.latency.len(), latency.1.len());
    let values: Vec<u64> = tls.1.iter().map(|f| f.1).collect();
    let mut seen: Vec<u64> = [&b.versions, &b.groups, &b.certificates, &b.failures]
        .into_iter()
        .chain([&b.admission])
        .flat_map(|g| g.iter().map(|c| c.value))
        .collect();
    seen.sort_unstable();
    let mut expected = values.clone();
    expected.sort_unstable();
    assert_eq!(seen, expected);
}

#[test]
fn latency_bounds_read_as_seconds() {
    let b = TlsBreakdown::of(&every_counter());
    let bounds: Vec<Option<f64>> = b.latency.iter().map(|b| b.le_seconds).collect();
    assert_eq!(bounds.first(), Some(&Some(0.0001)));
    assert!(bounds.contains(&Some(0.001)));
    assert!(bounds.contains(&Some(1.0)));
    assert_eq!(bounds.last(), Some(&None));
    let finite: Vec<f64> = bounds.iter().flatten().copied().collect();
    assert!(finite.windows(2).all(|w| w[0] < w[1]), "{finite:?}");
    assert_eq!(finite.len() + 1, bounds.len());
}

#[test]
fn unreadable_bounds_give_no_histogram() {
    assert_eq!(seconds("100us"), Some(0.0001));
    assert_eq!(seconds("2ms"), Some(0.002));
    assert_eq!(seconds("5s"), Some(5.0));
    assert_eq!(seconds("5m"), None);
    assert_eq!(seconds("xs"), None);
    let fields = vec![("le_1ms".to_owned(), 1), ("le_soon".to_owned(), 2)];
    assert_eq!(buckets(&fields), None);
}

#[test]
fn an_empty_snapshot_is_empty() {
    assert_eq!(
        TlsBreakdown::of(&TlsSnapshot::default()),
        TlsBreakdown::default()
    );
}
