//! The strict exposition checker must itself refuse what it is meant to catch.

mod support;

use support::promcheck::check;

const GOOD: &str =
    "# HELP a_total A.\n# TYPE a_total counter\na_total{x=\"1\"} 1\na_total{x=\"2\"} 2\n";

#[test]
fn accepts_good_text() {
    let families = check(GOOD).expect("valid text");
    assert_eq!(families[0].samples.len(), 2);
    let h = "# HELP h H.\n# TYPE h histogram\n\
             h_bucket{le=\"0.1\"} 1\nh_bucket{le=\"+Inf\"} 3\nh_count 3\n";
    check(h).expect("a valid histogram");
}

#[test]
fn refuses_bad_text() {
    let bad = [
        ("no TYPE", "# HELP a_total A.\na_total 1\n"),
        ("no HELP", "# TYPE a_total counter\na_total 1\n"),
        ("undeclared", "b 1\n"),
        (
            "wrong family",
            "# HELP a_total A.\n# TYPE a_total counter\nb_total 1\n",
        ),
        (
            "duplicate series",
            "# HELP a_total A.\n# TYPE a_total counter\na_total 1\na_total 2\n",
        ),
        (
            "declared twice",
            "# HELP a A.\n# TYPE a gauge\na 1\n# HELP a A.\n# TYPE a gauge\n",
        ),
        ("counter suffix", "# HELP a A.\n# TYPE a counter\na 1\n"),
        (
            "bad escape",
            "# HELP a A.\n# TYPE a gauge\na{x=\"\\t\"} 1\n",
        ),
        (
            "bad label name",
            "# HELP a A.\n# TYPE a gauge\na{1x=\"y\"} 1\n",
        ),
        ("bad value", "# HELP a A.\n# TYPE a gauge\na one\n"),
        ("unquoted", "# HELP a A.\n# TYPE a gauge\na{x=y} 1\n"),
        (
            "not cumulative",
            "# HELP h H.\n# TYPE h histogram\n\
             h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 2\nh_count 2\n",
        ),
        (
            "count mismatch",
            "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 3\n",
        ),
        ("no newline", "# HELP a A.\n# TYPE a gauge\na 1"),
    ];
    for (what, text) in bad {
        assert!(check(text).is_err(), "{what} accepted");
    }
}
