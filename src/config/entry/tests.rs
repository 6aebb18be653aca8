//! Tests of one server entry's parsing: transports, fields, warnings.

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
            json!({"type": "streamable-http", "url": "https://h/mcp"}),
            "streamableHttp",
        ),
        (
            json!({"type": "streamable_http", "url": "https://h/mcp"}),
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
            auto_approve_changes: false,
            roots: vec![],
            tool_policy: Default::default(),
            approval_timeout: crate::config::DEFAULT_APPROVAL_TIMEOUT,
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
    let got =
        entry(json!({"url": "https://h/sse", "headers": {"Authorization": "Bearer x"}})).unwrap();
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
    // A top-level key put inside an entry is named, with where it belongs.
    let mut warnings = Vec::new();
    let url = json!({"url": "http://127.0.0.1:1/mcp", "ssrfWhitelist": ["127.0.0.1/32"]});
    assert!(parse_entry("srv", &url, &mut warnings).is_ok());
    assert_eq!(
        warnings,
        [
            "server \"srv\": unknown key \"ssrfWhitelist\" is ignored (kept in the file); it belongs at the top level of the file, beside \"mcpServers\""
        ]
    );
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

#[test]
fn userinfo_beside_an_authorization_header_is_warned_about() {
    let with_header = json!({"url": "https://u:p@h/mcp", "headers": {"authorization": "Bearer t"}});
    let mut warnings = Vec::new();
    parse_entry("r", &with_header, &mut warnings).expect("valid");
    assert_eq!(
        warnings,
        [
            "server \"r\": the user and password in \"url\" are not sent: the \"Authorization\" header is"
        ]
    );
    for quiet in [
        json!({"url": "https://u:p@h/mcp"}),
        json!({"url": "https://h/mcp", "headers": {"Authorization": "Bearer t"}}),
    ] {
        let mut warnings = Vec::new();
        parse_entry("r", &quiet, &mut warnings).expect("valid");
        assert!(warnings.is_empty(), "{quiet}: {warnings:?}");
    }
}
