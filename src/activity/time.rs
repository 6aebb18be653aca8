//! Time for the activity log: Unix milliseconds stored, UTC shown (`2026-12-04 17:05:01.234`),
//! and `--since` read as a duration back from now (`90s`, `15m`, `2h`, `7d`) or a UTC date
//! (`2026-12-04`, `2026-12-04T17:05:00Z`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Now, in Unix milliseconds.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis() as u64
}

/// `ms` (Unix milliseconds) as `YYYY-MM-DD HH:MM:SS.mmm` in UTC.
pub fn format_ms(ms: u64) -> String {
    let secs = ms / 1000;
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// The Unix ms `since` names, counted back from `now_ms` for a duration; `None` when it is
/// neither a duration nor a date.
pub fn parse_since(since: &str, now_ms: u64) -> Option<u64> {
    let since = since.trim();
    if let Some(unit) = since.chars().last().filter(|c| c.is_ascii_alphabetic())
        && let Ok(n) = since[..since.len() - 1].parse::<f64>()
        && n.is_finite()
        && n >= 0.0
        && since.len() > 1
        && !since.contains('-')
    {
        let secs = match unit {
            's' => n,
            'm' => n * 60.0,
            'h' => n * 3600.0,
            'd' => n * 86_400.0,
            _ => return None,
        };
        return Some(now_ms.saturating_sub((secs * 1000.0) as u64));
    }
    let (date, time) = match since.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t.trim_end_matches('Z'))),
        None => (since, None),
    };
    let mut parts = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (Some(Some(y)), Some(Some(m)), Some(Some(d))) = (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut secs = days_from_civil(y, m, d) * 86_400;
    if let Some(time) = time {
        let mut hms = time.splitn(3, ':').map(|p| p.parse::<i64>().ok());
        let h = hms.next().flatten()?;
        let min = hms.next().flatten().unwrap_or(0);
        let s = hms.next().flatten().unwrap_or(0);
        secs += h * 3600 + min * 60 + s;
    }
    u64::try_from(secs).ok().map(|s| s * 1000)
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// (year, month, day) → days since 1970-01-01.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_and_round_trip_through_since() {
        // 2026-12-04 17:05:01.234 UTC
        let ms = 1_796_403_901_234;
        assert_eq!(format_ms(ms), "2026-12-04 17:05:01.234");
        assert_eq!(parse_since("2026-12-04T17:05:01Z", 0), Some(ms - 234));
        assert_eq!(parse_since("2026-12-04", 0), Some(ms - 234 - 61_501_000));
        assert_eq!(format_ms(0), "1970-01-01 00:00:00.000");
        assert_eq!(format_ms(951_782_400_000), "2000-02-29 00:00:00.000");
    }

    #[test]
    fn since_takes_durations_back_from_now() {
        let now = 10_000_000;
        assert_eq!(parse_since("90s", now), Some(now - 90_000));
        assert_eq!(parse_since("15m", now), Some(now - 900_000));
        assert_eq!(parse_since("2h", now), Some(now - 7_200_000));
        assert_eq!(parse_since("7d", now), Some(0));
        for bad in ["", "h", "5y", "yesterday", "2026-13-01", "-5m"] {
            assert_eq!(parse_since(bad, now), None, "{bad}");
        }
    }
}
