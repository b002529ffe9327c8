#![allow(clippy::unwrap_used)]

use super::*;

#[test]
fn median_and_cv() {
    assert_eq!(median(&[]), 0.0);
    assert_eq!(median(&[5, 1, 3]), 3.0);
    assert_eq!(median(&[4, 1, 3, 2]), 2.5);
    assert_eq!(coefficient_of_variation(&[7, 7, 7]), 0.0);
    // Mean 10, population standard deviation 2.
    let cv = coefficient_of_variation(&[8, 12, 8, 12]);
    assert!((cv - 0.2).abs() < 1e-12, "{cv}");
    assert_eq!(coefficient_of_variation(&[0, 0]), 0.0);
}

#[test]
fn flat_series_pass() {
    assert_eq!(flatness("r", &[1000, 1010, 990, 1005, 995]), Flatness::Flat);
    // 15% off the median once is within ±20%, and the CV stays under 10%.
    assert_eq!(
        flatness("r", &[1000, 1000, 1150, 1000, 1000, 1000]),
        Flatness::Flat
    );
}

#[test]
fn one_stalled_second_is_not_flat() {
    let Flatness::NotFlat(why) = flatness("requests/s", &[1000, 1000, 700, 1000, 1000]) else {
        panic!("a 30% dip must fail");
    };
    assert!(why.contains("second 2 had 700"), "{why}");
    assert!(why.contains("-30%"), "{why}");
    assert!(matches!(
        flatness("r", &[1000, 1000, 1000, 1250]),
        Flatness::NotFlat(_)
    ));
}

#[test]
fn a_wobbling_series_fails_on_the_cv() {
    // Every second within ±18% of the median, but a CV of about 15%.
    let values = [850, 1150, 850, 1150, 850, 1150, 1000];
    let Flatness::NotFlat(why) = flatness("r", &values) else {
        panic!("CV above 10% must fail");
    };
    assert!(why.contains("coefficient of variation"), "{why}");
}

#[test]
fn short_or_empty_series() {
    assert_eq!(flatness("r", &[1, 1000]), Flatness::TooShort);
    assert!(matches!(flatness("r", &[0, 0, 0]), Flatness::NotFlat(_)));
}

#[test]
fn merge_and_truncate() {
    let mut a = Series::new(3);
    a.requests = vec![1, 2, 3];
    a.errors[6] = vec![0, 1, 0];
    let mut b = Series::new(3);
    b.requests = vec![10, 20, 30];
    b.errors[0] = vec![1, 0, 0];
    a.merge(&b);
    assert_eq!(a.requests, vec![11, 22, 33]);
    assert_eq!(a.errors_total(), vec![1, 1, 0]);
    a.truncate(2);
    assert_eq!(a.seconds(), 2);
    assert_eq!(a.errors[6], vec![0, 1]);
}
