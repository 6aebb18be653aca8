//! The `activity` object of `config.json`: whether the activity log records, what it keeps of
//! arguments and results, where its database lives and how much of it stays.
//!
//! ```text
//! "activity": {"enabled": true, "recordPayloads": false, "maxAgeDays": 30, "maxSizeMb": 100,
//!              "path": "/abs/activity.db"}
//! ```
//!
//! Every field is optional; a bad value is a warning and its default applies (the log is a
//! record, not a reason to refuse a config).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::error::json_type;

/// Default of `maxAgeDays`: entries older than this are deleted.
pub const DEFAULT_MAX_AGE_DAYS: f64 = 30.0;
/// Default of `maxSizeMb`: the database is trimmed (oldest entries first) above this.
pub const DEFAULT_MAX_SIZE_MB: f64 = 100.0;
/// The file name of the database in the data directory.
pub const DATABASE_FILE: &str = "activity.db";

/// The activity log's settings, read when the companion starts.
#[derive(Clone, Debug, PartialEq)]
pub struct ActivityConfig {
    /// `enabled` (default true): record calls, listings and server events.
    pub enabled: bool,
    /// `recordPayloads` (default false): keep arguments and results in full (known secrets
    /// still masked) instead of their shape and size.
    pub record_payloads: bool,
    /// `maxAgeDays` (default 30, > 0): older entries are deleted.
    pub max_age: Duration,
    /// `maxSizeMb` (default 100, ≥ 1): the database's size cap in bytes.
    pub max_size_bytes: u64,
    /// `path`: the database file; default [`default_database_path`].
    pub path: Option<PathBuf>,
}

impl Default for ActivityConfig {
    fn default() -> Self {
        ActivityConfig {
            enabled: true,
            record_payloads: false,
            max_age: days(DEFAULT_MAX_AGE_DAYS),
            max_size_bytes: megabytes(DEFAULT_MAX_SIZE_MB),
            path: None,
        }
    }
}

impl ActivityConfig {
    /// The database file: `path` when set, else [`default_database_path`].
    pub fn database_path(&self) -> Option<PathBuf> {
        self.path.clone().or_else(default_database_path)
    }
}

/// `activity.db` in the companion's data directory: `$XDG_DATA_HOME/mcp-companion` (else
/// `~/.local/share/mcp-companion`) on Linux, `~/Library/Application Support/mcp-companion` on
/// macOS, `%APPDATA%\mcp-companion` on Windows. `None` when the OS names no data directory.
pub fn default_database_path() -> Option<PathBuf> {
    Some(dirs::data_dir()?.join("mcp-companion").join(DATABASE_FILE))
}

fn days(d: f64) -> Duration {
    Duration::from_secs_f64(d * 86_400.0)
}

fn megabytes(mb: f64) -> u64 {
    (mb * 1024.0 * 1024.0) as u64
}

/// Reads the `activity` value of the document; problems are pushed onto `warnings`.
pub(super) fn parse_activity(value: Option<&Value>, warnings: &mut Vec<String>) -> ActivityConfig {
    let mut out = ActivityConfig::default();
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return out;
    };
    let Some(object) = value.as_object() else {
        warnings.push(format!(
            "\"activity\" must be an object, found {}; using the defaults",
            json_type(value)
        ));
        return out;
    };
    for (key, v) in object {
        let bad = |what: &str| {
            format!(
                "\"activity.{key}\" must be {what}, found {}; using the default",
                json_type(v)
            )
        };
        match key.as_str() {
            "enabled" => match v.as_bool() {
                Some(b) => out.enabled = b,
                None => warnings.push(bad("true or false")),
            },
            "recordPayloads" => match v.as_bool() {
                Some(b) => out.record_payloads = b,
                None => warnings.push(bad("true or false")),
            },
            "maxAgeDays" => match v.as_f64().filter(|d| d.is_finite() && *d > 0.0) {
                Some(d) => out.max_age = days(d.min(36_500.0)),
                None => warnings.push(bad("a number of days above 0")),
            },
            "maxSizeMb" => match v.as_f64().filter(|m| m.is_finite() && *m >= 1.0) {
                Some(m) => out.max_size_bytes = megabytes(m.min(1_048_576.0)),
                None => warnings.push(bad("a number of megabytes of at least 1")),
            },
            "path" => match v.as_str().map(PathBuf::from) {
                Some(p) if p.is_absolute() => out.path = Some(p),
                _ => warnings.push(bad("an absolute path")),
            },
            _ => warnings.push(format!(
                "unknown key \"activity.{key}\" is ignored (kept in the file)"
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_record_shapes_for_thirty_days_up_to_100_mb() {
        let mut warnings = Vec::new();
        let c = parse_activity(None, &mut warnings);
        assert_eq!(c, ActivityConfig::default());
        assert!(c.enabled && !c.record_payloads);
        assert_eq!(c.max_age, Duration::from_secs(30 * 86_400));
        assert_eq!(c.max_size_bytes, 100 * 1024 * 1024);
        assert!(warnings.is_empty());
    }

    #[test]
    fn every_field_is_read_and_bad_values_warn_and_keep_the_default() {
        let mut warnings = Vec::new();
        let c = parse_activity(
            Some(
                &json!({"enabled": false, "recordPayloads": true, "maxAgeDays": 0.5,
                         "maxSizeMb": 2, "path": "/tmp/a.db"}),
            ),
            &mut warnings,
        );
        assert!(!c.enabled && c.record_payloads);
        assert_eq!(c.max_age, Duration::from_secs(43_200));
        assert_eq!(c.max_size_bytes, 2 * 1024 * 1024);
        assert_eq!(c.path, Some(PathBuf::from("/tmp/a.db")));
        assert!(warnings.is_empty(), "{warnings:?}");

        let c = parse_activity(
            Some(
                &json!({"enabled": "yes", "maxAgeDays": -1, "maxSizeMb": 0.5,
                         "path": "rel.db", "colour": 1}),
            ),
            &mut warnings,
        );
        assert_eq!(c, ActivityConfig::default());
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        assert!(warnings.iter().any(|w| w.contains("activity.colour")));
    }
}
