//! One server entry of `mcpServers`: validation and defaults (DESIGN §3).
//!
//! Per-entry rules: `null` counts as absent for every field; the first problem found fails the
//! entry with [`ConfigError::Field`] (or [`ConfigError::Entry`] when it is not an object);
//! unknown keys only produce a warning. URLs holding `${VAR}` are fully checked only after
//! expansion (see `expand.rs`), because the variable may supply the scheme or host.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::error::json_type;
use super::expand::check_references;
use super::fields::Fields;
use super::transport::{Kind, check_url, detect};
use super::{ConfigError, HttpConfig, ServerConfig, StdioConfig, TransportConfig};

/// `toolTimeout` when absent: 30 seconds.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(30);
/// `connectTimeout` when absent: 30 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// Every key a server entry may have.
pub(crate) const KNOWN_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "toolTimeout",
    "enabledTools",
    "disabled",
    "connectTimeout",
    "source",
    "oauth",
    "roots",
];

/// Validates the entry `value` of server `name`, pushing one warning per unknown key.
pub(crate) fn parse_entry(
    name: &str,
    value: &Value,
    warnings: &mut Vec<String>,
) -> Result<ServerConfig, ConfigError> {
    let obj = value.as_object().ok_or_else(|| ConfigError::Entry {
        server: name.to_owned(),
        found: json_type(value),
    })?;
    if name.trim().is_empty() {
        // An empty name would make tools look like they belong to a server named after them.
        return Err(ConfigError::field(name, "name", "the server name is empty"));
    }
    for key in obj.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        warnings.push(format!(
            "server \"{name}\": unknown key \"{key}\" is ignored (kept in the file)"
        ));
    }
    let f = Fields { name, obj };

    let explicit = match f.string("type")? {
        Some(t) => Some(Kind::from_type(t).ok_or_else(|| {
            ConfigError::field(
                name,
                "type",
                format!("unknown transport \"{t}\" (expected stdio, sse or streamableHttp)"),
            )
        })?),
        None => None,
    };
    let command = f.string("command")?;
    let url = f.string("url")?;
    let kind = explicit
        .or_else(|| detect(command.is_some(), url))
        .ok_or_else(|| {
            ConfigError::field(
                name,
                "command",
                "missing: set `command` (stdio) or `url` (sse, streamableHttp)",
            )
        })?;

    match (explicit, kind, command.is_some(), url.is_some()) {
        (None, _, true, true) => warnings.push(format!(
            "server \"{name}\": both \"command\" and \"url\" are set; \"command\" is run and \"url\" is ignored (set \"type\" to choose)"
        )),
        (Some(_), Kind::Stdio, _, true) => warnings.push(format!(
            "server \"{name}\": \"url\" is ignored for type stdio"
        )),
        (Some(_), Kind::Sse | Kind::StreamableHttp, true, _) => warnings.push(format!(
            "server \"{name}\": \"command\" is ignored for type {}",
            kind.name()
        )),
        _ => {}
    }
    let transport = match kind {
        Kind::Stdio => {
            let command = command
                .ok_or_else(|| ConfigError::field(name, "command", "is required for type stdio"))?;
            if command.is_empty() {
                return Err(ConfigError::field(name, "command", "must not be empty"));
            }
            check_references(name, "command", command)?;
            let args = f.string_list("args")?.unwrap_or_default();
            for (i, a) in args.iter().enumerate() {
                check_references(name, &format!("args[{i}]"), a)?;
            }
            let env = f.string_map("env")?;
            let cwd = f.string("cwd")?.filter(|c| !c.is_empty());
            if let Some(c) = cwd {
                check_references(name, "cwd", c)?;
            }
            TransportConfig::Stdio(StdioConfig {
                command: command.to_owned(),
                args,
                env,
                cwd: cwd.map(PathBuf::from),
            })
        }
        Kind::Sse | Kind::StreamableHttp => {
            let url = url.ok_or_else(|| {
                ConfigError::field(name, "url", format!("is required for type {}", kind.name()))
            })?;
            check_references(name, "url", url)?;
            if !url.contains("${") {
                check_url(name, url)?;
            }
            let http = HttpConfig {
                url: url.to_owned(),
                headers: f.string_map("headers")?,
                oauth: super::oauth::parse_oauth(name, obj.get("oauth"), warnings)?,
            };
            if kind == Kind::Sse {
                TransportConfig::Sse(http)
            } else {
                TransportConfig::StreamableHttp(http)
            }
        }
    };

    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        tool_timeout: f.seconds("toolTimeout")?.unwrap_or(DEFAULT_TOOL_TIMEOUT),
        connect_timeout: f
            .seconds("connectTimeout")?
            .unwrap_or(DEFAULT_CONNECT_TIMEOUT),
        enabled_tools: f
            .string_list("enabledTools")?
            .unwrap_or_else(|| vec!["*".to_owned()]),
        disabled: f.boolean("disabled")?.unwrap_or(false),
        roots: parse_roots(name, f.string_list("roots")?.unwrap_or_default())?,
    })
}

/// `roots`: absolute directory paths (a leading `~/` is the home directory), sent to the server
/// as `file://` URIs in `roots/list` when no calling agent answers it (MCP "Roots").
fn parse_roots(name: &str, roots: Vec<String>) -> Result<Vec<PathBuf>, ConfigError> {
    roots
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let field = format!("roots[{i}]");
            let path = match r.strip_prefix("~/") {
                Some(rest) => dirs::home_dir()
                    .ok_or_else(|| {
                        ConfigError::field(name, &field, "\"~/\" but there is no home directory")
                    })?
                    .join(rest),
                None => PathBuf::from(&r),
            };
            if !path.is_absolute() {
                return Err(ConfigError::field(
                    name,
                    &field,
                    format!("must be an absolute directory path (or start with ~/), found \"{r}\""),
                ));
            }
            Ok(path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn entry(value: Value) -> Result<ServerConfig, ConfigError> {
        parse_entry("srv", &value, &mut Vec::new())
    }

    #[test]
    fn command_and_url_without_a_type_run_the_command_and_say_so() {
        let mut warnings = Vec::new();
        let value = json!({"command": "npx", "url": "https://h/mcp"});
        let cfg = parse_entry("both", &value, &mut warnings).expect("valid");
        assert!(matches!(cfg.transport, TransportConfig::Stdio(_)));
        assert_eq!(
            warnings,
            [
                "server \"both\": both \"command\" and \"url\" are set; \"command\" is run and \"url\" is ignored (set \"type\" to choose)"
            ]
        );
        for (typed, want) in [
            (
                json!({"type": "stdio", "command": "npx", "url": "https://h/mcp"}),
                "server \"both\": \"url\" is ignored for type stdio",
            ),
            (
                json!({"type": "http", "command": "npx", "url": "https://h/mcp"}),
                "server \"both\": \"command\" is ignored for type streamableHttp",
            ),
        ] {
            let mut warnings = Vec::new();
            parse_entry("both", &typed, &mut warnings).expect("valid");
            assert_eq!(warnings, [want]);
        }
    }

    #[test]
    fn transport_is_detected_when_type_is_absent_and_explicit_type_wins() {
        let cases = [
            (json!({"command": "npx"}), "stdio"),
            (json!({"command": "npx", "url": "https://h/sse"}), "stdio"),
            (json!({"url": "https://h/sse"}), "sse"),
            (json!({"url": "https://h/sse/"}), "sse"),
            (json!({"url": "https://h/a/sse?x=1#f"}), "sse"),
            (json!({"url": "https://h/mcp"}), "streamableHttp"),
            (json!({"url": "https://h/"}), "streamableHttp"),
            (json!({"url": "https://sse"}), "streamableHttp"),
            (json!({"url": "https://h/ssex"}), "streamableHttp"),
            (json!({"url": "https://${HOST}/sse"}), "sse"),
            (
                json!({"type": "streamableHttp", "url": "https://h/sse"}),
                "streamableHttp",
            ),
            (json!({"type": "sse", "url": "https://h/mcp"}), "sse"),
            (
                json!({"type": "http", "url": "https://h/sse"}),
                "streamableHttp",
            ),
            (
                json!({"type": "sse", "command": "x", "url": "http://h/"}),
                "sse",
            ),
            (
                json!({"type": "stdio", "command": "x", "url": "http://h/"}),
                "stdio",
            ),
        ];
        for (value, want) in cases {
            let got = entry(value.clone()).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!(got.transport_name(), want, "{value}");
        }
    }

    #[test]
    fn an_empty_server_name_fails_that_entry() {
        let err = parse_entry(" ", &json!({"command": "c"}), &mut Vec::new()).expect_err("empty");
        assert!(
            err.to_string().contains("the server name is empty"),
            "{err}"
        );
    }

    #[test]
    fn absent_fields_take_their_defaults() {
        let got = entry(json!({"command": "c", "cwd": null})).unwrap();
        assert_eq!(
            got,
            ServerConfig {
                name: "srv".into(),
                transport: TransportConfig::Stdio(StdioConfig {
                    command: "c".into(),
                    args: vec![],
                    env: BTreeMap::new(),
                    cwd: None,
                }),
                tool_timeout: Duration::from_secs(30),
                connect_timeout: Duration::from_secs(30),
                enabled_tools: vec!["*".into()],
                disabled: false,
                roots: vec![],
            }
        );
        let got = entry(json!({"url": "http://h/mcp"})).unwrap();
        assert_eq!(
            got.transport,
            TransportConfig::StreamableHttp(HttpConfig {
                url: "http://h/mcp".into(),
                headers: BTreeMap::new(),
                oauth: Default::default(),
            })
        );
        assert_eq!(
            entry(json!({"command": "c", "cwd": ""})).unwrap(),
            entry(json!({"command": "c"})).unwrap()
        );
    }

    #[test]
    fn every_field_is_read() {
        let got = entry(json!({
            "command": "npx", "args": ["-y", "pkg"], "env": {"K": "v"}, "cwd": "/tmp",
            "toolTimeout": 2.5, "connectTimeout": 10, "enabledTools": ["read_*"], "disabled": true
        }))
        .unwrap();
        assert_eq!(got.tool_timeout, Duration::from_millis(2500));
        assert_eq!(got.connect_timeout, Duration::from_secs(10));
        assert_eq!(got.enabled_tools, vec!["read_*".to_owned()]);
        assert!(got.disabled);
        let TransportConfig::Stdio(s) = got.transport else {
            panic!("not stdio")
        };
        assert_eq!(s.args, vec!["-y".to_owned(), "pkg".to_owned()]);
        assert_eq!(s.env.get("K").map(String::as_str), Some("v"));
        assert_eq!(s.cwd, Some(PathBuf::from("/tmp")));
        let got = entry(json!({"url": "https://h/sse", "headers": {"Authorization": "Bearer x"}}))
            .unwrap();
        let TransportConfig::Sse(h) = got.transport else {
            panic!("not sse")
        };
        assert_eq!(
            h.headers.get("Authorization").map(String::as_str),
            Some("Bearer x")
        );
    }

    #[test]
    fn bad_entries_fail_with_server_and_field() {
        let cases = [
            (json!({}), "command"),
            (json!({"args": ["x"]}), "command"),
            (json!({"type": "stdio", "url": "http://h/"}), "command"),
            (json!({"command": ""}), "command"),
            (json!({"command": 5}), "command"),
            (json!({"command": "c", "args": "x"}), "args"),
            (json!({"command": "c", "args": ["x", 1]}), "args[1]"),
            (json!({"command": "c", "env": ["x"]}), "env"),
            (json!({"command": "c", "env": {"TOKEN": 1}}), "env.TOKEN"),
            (json!({"command": "c", "cwd": false}), "cwd"),
            (json!({"command": "c", "toolTimeout": 0}), "toolTimeout"),
            (json!({"command": "c", "toolTimeout": -1.5}), "toolTimeout"),
            (json!({"command": "c", "toolTimeout": "30"}), "toolTimeout"),
            (json!({"command": "c", "toolTimeout": 1e300}), "toolTimeout"),
            (
                json!({"command": "c", "connectTimeout": 0}),
                "connectTimeout",
            ),
            (json!({"command": "c", "enabledTools": "*"}), "enabledTools"),
            (json!({"command": "c", "disabled": "yes"}), "disabled"),
            (json!({"command": "c", "args": ["${"]}), "args[0]"),
            (json!({"type": "websocket", "url": "ws://h/"}), "type"),
            (json!({"type": 1, "command": "c"}), "type"),
            (json!({"type": "sse"}), "url"),
            (json!({"type": "streamableHttp", "command": "c"}), "url"),
            (json!({"url": "ftp://h/sse"}), "url"),
            (json!({"url": "not a url"}), "url"),
            (json!({"url": "/relative/mcp"}), "url"),
            (json!({"url": "http://"}), "url"),
            (json!({"url": 7}), "url"),
            (
                json!({"url": "https://h/", "headers": {"X-Key": true}}),
                "headers.X-Key",
            ),
            (json!({"url": "https://h/", "headers": "x"}), "headers"),
        ];
        for (value, want_field) in cases {
            match entry(value.clone()) {
                Err(ConfigError::Field {
                    server,
                    field,
                    message,
                }) => {
                    assert_eq!(
                        (server.as_str(), field.as_str()),
                        ("srv", want_field),
                        "{value}: {message}"
                    );
                    assert!(!message.ends_with('.'), "{message}");
                }
                other => panic!("{value}: expected a field error, got {other:?}"),
            }
        }
    }

    #[test]
    fn non_object_entry_is_an_entry_error() {
        let err = entry(json!(["npx"])).unwrap_err();
        assert_eq!(
            err,
            ConfigError::Entry {
                server: "srv".into(),
                found: "array"
            }
        );
        assert_eq!(
            err.to_string(),
            "server \"srv\": entry must be a JSON object, found array"
        );
    }

    #[test]
    fn wrong_type_errors_do_not_show_values() {
        let err = entry(json!({"command": "c", "env": {"TOKEN": 12345}})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"srv\": field \"env.TOKEN\": expected a string, found number"
        );
        let err = entry(json!({"url": "ftp://user:pw@h/"})).unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    #[test]
    fn unknown_keys_are_warned_about_even_in_bad_entries() {
        let mut warnings = Vec::new();
        let got = parse_entry(
            "srv",
            &json!({"command": "c", "autoApprove": []}),
            &mut warnings,
        );
        assert!(got.is_ok());
        assert_eq!(
            warnings,
            ["server \"srv\": unknown key \"autoApprove\" is ignored (kept in the file)"]
        );
        let mut warnings = Vec::new();
        assert!(parse_entry("srv", &json!({"extra": 1}), &mut warnings).is_err());
        assert_eq!(warnings.len(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn roots_are_absolute_directories_and_home_relative_ones_are_expanded() {
        let got = entry(json!({"command": "c", "roots": ["/srv/data", "~/projects"]})).unwrap();
        let home = dirs::home_dir().expect("home");
        assert_eq!(
            got.roots,
            vec![PathBuf::from("/srv/data"), home.join("projects")]
        );
        let err = entry(json!({"command": "c", "roots": ["/ok", "relative/dir"]})).unwrap_err();
        assert_eq!(
            err.to_string(),
            "server \"srv\": field \"roots[1]\": must be an absolute directory path (or start with ~/), found \"relative/dir\""
        );
        let err = entry(json!({"command": "c", "roots": "/one"})).unwrap_err();
        assert!(err.to_string().contains("field \"roots\""), "{err}");
    }
}
