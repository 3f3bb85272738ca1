//! The one clock helper of Tickloop: now as RFC 3339 UTC text, as every
//! record, status, ledger and log line carries it.

/// Now, RFC 3339 UTC, with the sub-second digits the clock gives
/// (nanoseconds on Linux).
pub fn now_rfc3339() -> String {
    format_rfc3339(time::OffsetDateTime::now_utc())
}

/// `at`, RFC 3339 UTC, in the form of [`now_rfc3339`].
pub fn rfc3339_at(at: std::time::SystemTime) -> String {
    format_rfc3339(time::OffsetDateTime::from(at))
}

/// Now, RFC 3339 UTC, to the millisecond, always three digits (the Loop's
/// audit ledger, the activity record).
pub fn now_rfc3339_millis() -> String {
    millis_text(time::OffsetDateTime::now_utc())
}

/// An RFC 3339 time as milliseconds since the epoch; `None` when `text`
/// is no such time.
pub fn unix_millis(text: &str) -> Option<i128> {
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(at.unix_timestamp_nanos() / 1_000_000)
}

/// Milliseconds since the epoch as RFC 3339 UTC to the millisecond (the
/// form of [`now_rfc3339_millis`]); `None` out of the calendar's range.
pub fn rfc3339_millis_at(millis: i128) -> Option<String> {
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(millis * 1_000_000).ok()?;
    Some(millis_text(at))
}

fn millis_text(at: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

/// When `--since WHEN` begins, in ms since the epoch: `WHEN` is a
/// duration back from `now_millis` (`90s`, `10m`, `2h`, `1d`, `1h30m`), an
/// RFC 3339 time, a date (`2026-12-02`: its local midnight) or a local
/// time of day (`14:05`, `14:05:30`: the latest one not after now).
/// `offset_seconds` is the local time's offset from UTC. The error says
/// what it takes.
pub fn since(text: &str, now_millis: i128, offset_seconds: i32) -> Result<i128, String> {
    let text = text.trim();
    let takes = "give a duration back from now (90s, 10m, 2h, 1d, 1h30m), a time (2026-12-02T07:00:00Z, 14:05, 14:05:30) or a date (2026-12-02)";
    if let Some(ms) = duration_millis(text) {
        return Ok(now_millis - ms);
    }
    if let Some(at) = unix_millis(text) {
        return Ok(at);
    }
    let offset =
        time::UtcOffset::from_whole_seconds(offset_seconds).unwrap_or(time::UtcOffset::UTC);
    let now = time::OffsetDateTime::from_unix_timestamp_nanos(now_millis * 1_000_000)
        .map_err(|e| format!("the clock is out of range: {e}"))?
        .to_offset(offset);
    if let Some(date) = date(text) {
        let midnight = date.midnight().assume_offset(offset);
        return Ok(midnight.unix_timestamp_nanos() / 1_000_000);
    }
    let clock = text
        .split(':')
        .map(|part| part.parse::<u8>().ok().filter(|_| part.len() == 2))
        .collect::<Option<Vec<u8>>>();
    let time_of_day = match clock.as_deref() {
        Some([h, m]) => time::Time::from_hms(*h, *m, 0).ok(),
        Some([h, m, s]) => time::Time::from_hms(*h, *m, *s).ok(),
        _ => None,
    };
    let Some(time_of_day) = time_of_day else {
        return Err(format!(
            "--since {text:?} is neither a duration nor a time: {takes}"
        ));
    };
    let mut at = now.replace_time(time_of_day);
    if at > now {
        at -= time::Duration::DAY;
    }
    Ok(at.unix_timestamp_nanos() / 1_000_000)
}

/// `2026-12-02` as a date; `None` for anything else.
fn date(text: &str) -> Option<time::Date> {
    let parts: Vec<&str> = text.split('-').collect();
    let [year, month, day] = parts.as_slice() else {
        return None;
    };
    if year.len() != 4 || month.len() != 2 || day.len() != 2 {
        return None;
    }
    let month = time::Month::try_from(month.parse::<u8>().ok()?).ok()?;
    time::Date::from_calendar_date(year.parse().ok()?, month, day.parse().ok()?).ok()
}

/// `90s`, `10m`, `2h`, `1d`, `1h30m` in ms; `None` for anything else.
fn duration_millis(text: &str) -> Option<i128> {
    let mut total: i128 = 0;
    let mut digits = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: i128 = match c {
            's' => 1_000,
            'm' => 60_000,
            'h' => 3_600_000,
            'd' => 86_400_000,
            _ => return None,
        };
        let n: i128 = digits.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        digits.clear();
    }
    (digits.is_empty() && !text.is_empty()).then_some(total)
}

fn format_rfc3339(at: time::OffsetDateTime) -> String {
    at.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_forms_parse_back() {
        for text in [now_rfc3339(), now_rfc3339_millis()] {
            let parsed =
                time::OffsetDateTime::parse(&text, &time::format_description::well_known::Rfc3339);
            assert!(parsed.is_ok(), "{text}");
        }
        let millis = now_rfc3339_millis();
        let fraction = millis.split('.').nth(1).unwrap_or("");
        assert_eq!(fraction.trim_end_matches('Z').len(), 3, "{millis}");
        let back = unix_millis(&millis).and_then(rfc3339_millis_at);
        assert_eq!(back.as_deref(), Some(millis.as_str()));
        assert_eq!(
            unix_millis("2026-12-02T08:00:00+01:00"),
            unix_millis("2026-12-02T07:00:00Z")
        );
        assert_eq!(unix_millis("yesterday"), None);
    }

    #[test]
    fn since_takes_a_duration_a_time_a_date_or_a_time_of_day() {
        // 2026-12-02T10:30:00Z, in a place one hour ahead of UTC.
        let now = unix_millis("2026-12-02T10:30:00Z").unwrap();
        let hour = 3_600;
        assert_eq!(since("10m", now, hour), Ok(now - 600_000));
        assert_eq!(since("1h30m", now, hour), Ok(now - 5_400_000));
        assert_eq!(since("1d", now, hour), Ok(now - 86_400_000));
        assert_eq!(
            since("2026-12-01T23:00:00Z", now, hour),
            unix_millis("2026-12-01T23:00:00Z").ok_or_else(String::new)
        );
        // Local 11:00 is 10:00 UTC; local 12:00 is still to come today, so
        // it is yesterday's.
        assert_eq!(
            since("11:00", now, hour),
            unix_millis("2026-12-02T10:00:00Z").ok_or_else(String::new)
        );
        assert_eq!(
            since("12:00:30", now, hour),
            unix_millis("2026-12-01T11:00:30Z").ok_or_else(String::new)
        );
        assert_eq!(
            since("2026-12-02", now, hour),
            unix_millis("2026-12-01T23:00:00Z").ok_or_else(String::new)
        );
        for wrong in ["", "10", "ten minutes", "25:00", "1h30", "m", "7:5"] {
            let error = since(wrong, now, hour).unwrap_err();
            assert!(
                error.contains("10m") && error.contains("14:05"),
                "{wrong}: {error}"
            );
        }
    }
}
