//! Unix seconds as RFC 3339 text and whole days, without a date library: certificate dates are
//! whole seconds in UTC, so the civil-date conversion (proleptic Gregorian calendar, Howard
//! Hinnant's `civil_from_days`) is all it takes.

use std::time::SystemTime;

use crate::tickets::unix_seconds;

const DAY: i64 = 86_400;

/// The current time in Unix seconds.
pub fn unix_now() -> i64 {
    unix_seconds(SystemTime::now())
}

/// Whole days from `now` to `then` (both Unix seconds), rounded down: `-1` from a second to a
/// day after `then`, `0` during the last day before it.
pub fn days_until(then: i64, now: i64) -> i64 {
    then.saturating_sub(now).div_euclid(DAY)
}

/// `secs` (Unix seconds) as RFC 3339 in UTC, e.g. `2026-01-31T12:00:00Z`.
pub fn rfc3339(secs: i64) -> String {
    let (year, month, day) = civil_from_days(secs.div_euclid(DAY));
    let second = secs.rem_euclid(DAY);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        second / 3600,
        second % 3600 / 60,
        second % 60
    )
}

/// The year, month (1-12) and day (1-31) of `days` since 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11], from March
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}
