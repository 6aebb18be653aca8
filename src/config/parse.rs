//! The document level of `config.json`: JSON syntax, top-level shape, unknown top-level keys;
//! each server entry is handed to `entry.rs` and the whitelist to `whitelist.rs`.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use super::entry::parse_entry;
use super::error::json_type;
use super::{Config, ConfigError, DEFAULT_FIRST_LIST_TIMEOUT, ServerSpec, SsrfWhitelist};

const KNOWN_KEYS: &[&str] = &[
    "mcpServers",
    "ssrfWhitelist",
    "firstListTimeout",
    "registries",
    "wrapResources",
    "activity",
    "telemetry",
    "profiles",
    "bridgeAutostart",
    "firstListHold",
    "toolSearch",
    "alwaysList",
];

/// The UTF-8 byte order mark some Windows editors put at the start of a file.
pub(crate) const BOM: &str = "\u{feff}";

/// Parses and validates the text of a config file; `origin` is only used in errors.
///
/// A missing `mcpServers` means no servers. Each server entry is validated on its own
/// ([`ServerSpec::entry`]), so one bad entry never hides the others; whitelist problems land
/// in [`SsrfWhitelist::errors`]. Every warning (one per unknown key, top level or per server)
/// is returned in [`Config::warnings`] and logged with `tracing::warn`. A UTF-8 byte order mark
/// at the start (Windows editors write one) is skipped.
///
/// # Errors
/// Only file-level problems: [`ConfigError::Syntax`] (with 1-based line and column) when the
/// text is not JSON, [`ConfigError::Shape`] when the top level or `mcpServers` is not an object.
pub fn parse(text: &str, origin: &Path) -> Result<Config, ConfigError> {
    // Notepad and PowerShell's `Out-File` start UTF-8 files with a byte order mark.
    let text = text.strip_prefix(BOM).unwrap_or(text);
    let raw: Value = serde_json::from_str(text).map_err(|e| syntax_error(&e, origin))?;
    let top = raw.as_object().ok_or_else(|| ConfigError::Shape {
        path: origin.to_owned(),
        what: "the top level",
        expected: "a JSON object",
        found: json_type(&raw),
    })?;

    let mut warnings: Vec<String> = top
        .keys()
        .filter(|k| !KNOWN_KEYS.contains(&k.as_str()))
        .map(|k| format!("unknown top-level key \"{k}\" is ignored (kept in the file)"))
        .collect();

    // `null` is refused like any other non-object: read as "no servers", a slip would stop
    // every running server on reload.
    let servers = match top.get("mcpServers") {
        None => Vec::new(),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(name, value)| ServerSpec {
                name: name.clone(),
                entry: parse_entry(name, value, &mut warnings),
            })
            .collect(),
        Some(other) => {
            return Err(ConfigError::Shape {
                path: origin.to_owned(),
                what: "`mcpServers`",
                expected: "a JSON object",
                found: json_type(other),
            });
        }
    };
    let ssrf_whitelist = SsrfWhitelist::from_value(top.get("ssrfWhitelist"));
    let first_list_timeout = match top.get("firstListTimeout") {
        None | Some(Value::Null) => DEFAULT_FIRST_LIST_TIMEOUT,
        Some(v) => match v
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 3600.0)
        {
            Some(secs) => Duration::from_secs_f64(secs),
            None => {
                warnings.push(format!(
                    "\"firstListTimeout\" must be a number of seconds from 0 to 3600, found {}; using {} s",
                    json_type(v),
                    DEFAULT_FIRST_LIST_TIMEOUT.as_secs()
                ));
                DEFAULT_FIRST_LIST_TIMEOUT
            }
        },
    };
    let wrap_resources = match top.get("wrapResources") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            warnings.push(format!(
                "\"wrapResources\" must be true or false, found {}; using true",
                json_type(v)
            ));
            true
        }
    };
    let first_list_hold =
        super::first_list::parse_first_list_hold(top.get("firstListHold"), &mut warnings);
    let bridge_autostart = match top.get("bridgeAutostart") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(v) => {
            warnings.push(format!(
                "\"bridgeAutostart\" must be true or false, found {}; using true",
                json_type(v)
            ));
            true
        }
    };
    let activity = super::activity::parse_activity(top.get("activity"), &mut warnings);
    let telemetry = super::telemetry::parse_telemetry(top.get("telemetry"), &mut warnings);
    let tool_search = super::tool_search::parse_top(top, &mut warnings);
    let profiles =
        super::profiles::parse_profiles(top.get("profiles"), &servers, &tool_search, &mut warnings);
    warnings.extend(
        super::duplicates::duplicate_keys(text)
            .iter()
            .map(super::duplicates::warning),
    );

    for w in &warnings {
        tracing::warn!(path = %origin.display(), "{w}");
    }
    Ok(Config {
        servers,
        ssrf_whitelist,
        first_list_timeout,
        first_list_hold,
        wrap_resources,
        bridge_autostart,
        activity,
        telemetry,
        profiles,
        tool_search,
        warnings,
        raw,
    })
}

/// Turns a serde_json error into [`ConfigError::Syntax`], moving its position into fields.
pub(crate) fn syntax_error(e: &serde_json::Error, path: &Path) -> ConfigError {
    let (line, column) = (e.line(), e.column());
    let full = e.to_string();
    let message = full
        .strip_suffix(&format!(" at line {line} column {column}"))
        .unwrap_or(&full)
        .to_owned();
    ConfigError::Syntax {
        path: path.to_owned(),
        line,
        column,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_byte_order_mark_is_skipped_and_one_elsewhere_is_a_syntax_error() {
        let text = "\u{feff}{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}";
        let cfg = parse(text, Path::new("c.json")).expect("a BOM is fine");
        assert_eq!(cfg.servers.len(), 1);
        assert!(cfg.warnings.is_empty());
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("config.json");
        std::fs::write(&path, text).expect("write");
        // Saving over it: the file with its BOM counts as valid.
        crate::config::save_text_atomic(&path, "{}", crate::config::Overwrite::IfValid)
            .expect("replaced");
        assert!(parse("{}\u{feff}", Path::new("c.json")).is_err());
    }

    #[test]
    fn first_list_timeout_defaults_and_rejects_bad_values() {
        let cases = [
            ("{}", 10.0, false),
            (r#"{"firstListTimeout": 2.5}"#, 2.5, false),
            (r#"{"firstListTimeout": 0}"#, 0.0, false),
            (r#"{"firstListTimeout": -1}"#, 10.0, true),
            (r#"{"firstListTimeout": "5"}"#, 10.0, true),
        ];
        for (text, secs, warned) in cases {
            let cfg = parse(text, Path::new("c.json")).unwrap();
            assert_eq!(cfg.first_list_timeout.as_secs_f64(), secs, "{text}");
            assert_eq!(
                !cfg.warnings.is_empty(),
                warned,
                "{text}: {:?}",
                cfg.warnings
            );
        }
    }

    fn load(text: &str) -> Config {
        parse(text, Path::new("config.json")).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn duplicate_server_names_are_warned_about() {
        let cfg = load(
            r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}, "a": {"command": "z"}}}"#,
        );
        assert_eq!(cfg.servers.len(), 2);
        let dup: Vec<_> = cfg
            .warnings
            .iter()
            .filter(|w| w.contains("more than once"))
            .collect();
        assert_eq!(
            dup,
            vec!["server \"a\" appears more than once in mcpServers; only the last entry is used"]
        );
        assert!(
            load(r#"{"mcpServers": {"a": {"command": "x"}}}"#)
                .warnings
                .is_empty()
        );
    }

    #[test]
    fn the_design_example_loads() {
        let cfg = load(
            r#"{
              "mcpServers": {
                "files": {"type": "stdio", "command": "npx", "args": ["-y", "pkg", "/home/me/notes"],
                          "env": {"NODE_ENV": "production"}, "cwd": "", "toolTimeout": 30, "enabledTools": ["*"]},
                "docs":  {"type": "streamableHttp", "url": "https://mcp.example.com/mcp",
                          "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
              },
              "ssrfWhitelist": ["127.0.0.1/32"]
            }"#,
        );
        let names: Vec<_> = cfg.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["files", "docs"]);
        assert_eq!(cfg.valid_servers().count(), 2);
        assert_eq!(
            cfg.server("docs")
                .unwrap()
                .entry
                .as_ref()
                .unwrap()
                .transport_name(),
            "streamableHttp"
        );
        assert_eq!(cfg.ssrf_whitelist.nets.len(), 1);
        assert!(cfg.warnings.is_empty());
    }

    #[test]
    fn each_bad_entry_fails_alone_and_the_good_one_loads() {
        let bad = [
            ("wrongType", json!({"command": ["npx"]}), "command"),
            ("nothing", json!({"args": []}), "command"),
            (
                "stdioNoCommand",
                json!({"type": "stdio", "url": "https://h/"}),
                "command",
            ),
            ("badUrl", json!({"url": "ftp://h/"}), "url"),
            (
                "zeroTimeout",
                json!({"command": "c", "toolTimeout": 0}),
                "toolTimeout",
            ),
            (
                "unknownType",
                json!({"type": "grpc", "command": "c"}),
                "type",
            ),
        ];
        for (name, value, field) in bad {
            let doc = json!({
                "mcpServers": {"good1": {"command": "ok"}, name: value, "good2": {"url": "http://h/sse"}},
                "ssrfWhitelist": ["not-a-cidr"]
            });
            let cfg = load(&doc.to_string());
            assert_eq!(cfg.servers.len(), 3);
            assert!(cfg.servers[0].entry.is_ok(), "{name}");
            assert!(cfg.servers[2].entry.is_ok(), "{name}");
            match &cfg.servers[1].entry {
                Err(ConfigError::Field {
                    server, field: f, ..
                }) => {
                    assert_eq!((server.as_str(), f.as_str()), (name, field));
                }
                other => panic!("{name}: {other:?}"),
            }
            assert_eq!(
                cfg.ssrf_whitelist.errors.len(),
                1,
                "whitelist errors are kept aside"
            );
        }
    }

    #[test]
    fn unknown_keys_are_warned_about_and_kept_in_raw() {
        let cfg = load(
            r#"{"theme": "dark", "mcpServers": {"a": {"command": "c", "autoApprove": ["x"]}}}"#,
        );
        assert_eq!(
            cfg.warnings,
            [
                "unknown top-level key \"theme\" is ignored (kept in the file)",
                "server \"a\": unknown key \"autoApprove\" is ignored (kept in the file)",
            ]
        );
        assert_eq!(cfg.raw["theme"], "dark");
        assert_eq!(cfg.raw["mcpServers"]["a"]["autoApprove"], json!(["x"]));
    }

    #[test]
    fn missing_sections_mean_empty_and_a_null_whitelist_too() {
        for text in ["{}", r#"{"ssrfWhitelist": null}"#, r#"{"mcpServers": {}}"#] {
            let cfg = load(text);
            assert!(cfg.servers.is_empty(), "{text}");
            assert_eq!(cfg.ssrf_whitelist, SsrfWhitelist::default());
        }
    }

    #[test]
    fn file_level_problems_fail_the_whole_load() {
        let cases = [
            ("[1]", "the top level", "array"),
            ("\"x\"", "the top level", "string"),
            (r#"{"mcpServers": []}"#, "`mcpServers`", "array"),
            (r#"{"mcpServers": null}"#, "`mcpServers`", "null"),
            (r#"{"mcpServers": "files"}"#, "`mcpServers`", "string"),
        ];
        for (text, want_what, want_found) in cases {
            match parse(text, Path::new("/c/config.json")) {
                Err(ConfigError::Shape {
                    path, what, found, ..
                }) => {
                    assert_eq!((what, found), (want_what, want_found), "{text}");
                    assert_eq!(path, Path::new("/c/config.json"));
                }
                other => panic!("{text}: {other:?}"),
            }
        }
    }

    #[test]
    fn syntax_errors_report_line_and_column() {
        let cases = [
            (
                "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"c\",}\n  }\n}",
                3,
                26,
            ),
            ("{\"a\": 1", 1, 7),
            ("", 1, 0),
            ("{} x", 1, 4),
        ];
        for (text, want_line, want_column) in cases {
            match parse(text, Path::new("config.json")) {
                Err(ConfigError::Syntax {
                    line,
                    column,
                    message,
                    ..
                }) => {
                    assert_eq!(
                        (line, column),
                        (want_line, want_column),
                        "{text:?}: {message}"
                    );
                    assert!(!message.contains(" at line "), "{message}");
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
        let err = parse("{,}", Path::new("c.json")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "config file c.json is not valid JSON at line 1, column 2: key must be a string"
        );
    }
}
