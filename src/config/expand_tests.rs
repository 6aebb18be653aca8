//! Tests of `${VAR}` and `${secret:NAME}` expansion.

use super::*;
use crate::secret::{MemoryStore, NoKeychain};
use std::time::Duration;

fn lookup(name: &str) -> Option<String> {
    match name {
        "A" => Some("alpha".into()),
        "EMPTY" => Some(String::new()),
        "REF" => Some("${A}".into()),
        "HOST" => Some("example.com".into()),
        "SECRET" => Some("s3cr3t-value".into()),
        _ => None,
    }
}

fn secrets() -> MemoryStore {
    MemoryStore::with(&[("TOKEN", "tok-s3cr3t"), ("B", "bee")])
}

fn src<'a>(secrets: &'a dyn SecretStore) -> Sources<'a> {
    Sources {
        lookup: &lookup,
        secrets,
    }
}

#[test]
fn values_of_secret_variables_and_url_passwords_are_masked_once_expanded() {
    let lookup = |name: &str| match name {
        "GITHUB_PAT" => Some("ghp-pat-canary-91".to_owned()),
        "DB_PASS" => Some("dbpass-canary-92".to_owned()),
        "DATABASE_URL" => Some("postgres://u:dburl-canary-93@h/d".to_owned()),
        "PATH_ALIKE" => Some("not-a-secret-94".to_owned()),
        _ => None,
    };
    let cfg = stdio(
        "sh",
        &["${GITHUB_PAT} ${DB_PASS} ${DATABASE_URL} ${PATH_ALIKE}"],
        &[],
        None,
    );
    cfg.expand(&lookup, &secrets()).unwrap();
    // What a server that echoes its arguments on stderr would put in `status` and errors.
    let echoed = "argv ghp-pat-canary-91 dbpass-canary-92 postgres://u:dburl-canary-93@h/d \
                  not-a-secret-94";
    let shown = crate::net::scrub_known(echoed);
    for canary in ["ghp-pat-canary-91", "dbpass-canary-92", "dburl-canary-93"] {
        assert!(!shown.contains(canary), "{canary} in {shown}");
    }
    assert!(shown.contains("not-a-secret-94"), "{shown}");
}

#[test]
fn expand_text_follows_the_documented_syntax() {
    let cases = [
        ("plain", "plain"),
        ("${A}", "alpha"),
        ("x${A}y${A}", "xalphayalpha"),
        ("${EMPTY}", ""),
        ("$HOME", "$HOME"),
        ("$$", "$$"),
        ("cost $5", "cost $5"),
        ("trailing $", "trailing $"),
        ("$${A}", "${A}"),
        ("$$${A}", "$${A}"),
        ("${REF}", "${A}"),
        ("é${A}ü", "éalphaü"),
    ];
    for (input, want) in cases {
        assert_eq!(
            expand_text("s", "f", input, &src(&secrets())).as_ref(),
            Ok(&want.to_owned()),
            "input {input:?}"
        );
    }
}

#[test]
fn malformed_references_are_field_errors() {
    for input in ["${A", "x${", "${}", "${A B}", "${a${A}}"] {
        let err = expand_text("srv", "args[0]", input, &src(&secrets())).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Field { server, field, .. } if server == "srv" && field == "args[0]"),
            "input {input:?}: {err:?}"
        );
        assert!(
            check_references("srv", "args[0]", input).is_err(),
            "{input:?}"
        );
    }
    assert!(check_references("srv", "url", "${UNSET_ANYTHING}").is_ok());
}

fn stdio(command: &str, args: &[&str], env: &[(&str, &str)], cwd: Option<&str>) -> ServerConfig {
    ServerConfig {
        name: "files".into(),
        transport: TransportConfig::Stdio(StdioConfig {
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            cwd: cwd.map(PathBuf::from),
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
}

fn http(url: &str, headers: &[(&str, &str)], sse: bool) -> ServerConfig {
    let h = HttpConfig {
        url: url.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        oauth: Default::default(),
    };
    ServerConfig {
        name: "docs".into(),
        transport: if sse {
            TransportConfig::Sse(h)
        } else {
            TransportConfig::StreamableHttp(h)
        },
        ..stdio("x", &[], &[], None)
    }
}

#[test]
fn every_expandable_stdio_field_is_expanded() {
    let cfg = stdio(
        "${A}/bin",
        &["-x", "${A}"],
        &[("K", "v-${A}")],
        Some("/home/${A}"),
    );
    let got = cfg.expand(&lookup, &secrets()).unwrap();
    assert_eq!(
        got,
        stdio(
            "alpha/bin",
            &["-x", "alpha"],
            &[("K", "v-alpha")],
            Some("/home/alpha")
        )
    );
    // The original keeps its references.
    assert_eq!(
        cfg,
        stdio(
            "${A}/bin",
            &["-x", "${A}"],
            &[("K", "v-${A}")],
            Some("/home/${A}")
        )
    );
}

#[test]
fn every_expandable_http_field_is_expanded() {
    for sse in [false, true] {
        let cfg = http(
            "https://${HOST}/mcp",
            &[("Authorization", "Bearer ${SECRET}")],
            sse,
        );
        let got = cfg.expand(&lookup, &secrets()).unwrap();
        assert_eq!(
            got,
            http(
                "https://example.com/mcp",
                &[("Authorization", "Bearer s3cr3t-value")],
                sse
            )
        );
    }
}

#[test]
fn cwd_expanding_to_empty_means_none() {
    let got = stdio("c", &[], &[], Some("${EMPTY}"))
        .expand(&lookup, &secrets())
        .unwrap();
    assert_eq!(got, stdio("c", &[], &[], None));
}

#[test]
fn missing_variable_names_server_field_and_variable_but_no_value() {
    let cases: [(ServerConfig, &str, &str); 6] = [
        (stdio("${NOPE}", &[], &[], None), "command", "files"),
        (stdio("c", &["a", "${NOPE}"], &[], None), "args[1]", "files"),
        (
            stdio("c", &[], &[("API_KEY", "${SECRET}${NOPE}")], None),
            "env.API_KEY",
            "files",
        ),
        (stdio("c", &[], &[], Some("${NOPE}")), "cwd", "files"),
        (http("https://h/${NOPE}", &[], false), "url", "docs"),
        (
            http("https://h/", &[("X-Key", "${SECRET}-${NOPE}")], true),
            "headers.X-Key",
            "docs",
        ),
    ];
    for (cfg, want_field, want_server) in cases {
        let err = cfg.expand(&lookup, &secrets()).unwrap_err();
        assert_eq!(
            err,
            ConfigError::MissingVariable {
                server: want_server.into(),
                field: want_field.into(),
                variable: "NOPE".into(),
            }
        );
        let text = err.to_string();
        assert_eq!(
            text,
            format!(
                "server \"{want_server}\": field \"{want_field}\": variable \"NOPE\" is not set"
            )
        );
        assert!(!text.contains("s3cr3t"), "{text}");
    }
}

#[test]
fn expanded_url_is_validated_again_without_showing_it() {
    let err = http("${SECRET}", &[], false)
        .expand(&lookup, &secrets())
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::Field { field, .. } if field == "url"),
        "{err:?}"
    );
    assert!(!err.to_string().contains("s3cr3t"), "{err}");
}

#[test]
fn command_expanding_to_empty_is_an_error() {
    let err = stdio("${EMPTY}", &[], &[], None)
        .expand(&lookup, &secrets())
        .unwrap_err();
    assert!(
        matches!(&err, ConfigError::Field { field, .. } if field == "command"),
        "{err:?}"
    );
}

#[test]
fn builtin_exe_variable_is_the_current_executable_and_wins_over_env() {
    let exe = std::env::current_exe().unwrap();
    let exe = exe.to_str().unwrap();
    assert_eq!(builtin_variable(BUILTIN_EXE_VARIABLE).as_deref(), Some(exe));
    assert_eq!(default_lookup(BUILTIN_EXE_VARIABLE).as_deref(), Some(exe));
    assert_eq!(builtin_variable("PATH"), None);
    let got = stdio("${MCP_COMPANION_EXE}", &["demo-server"], &[], None)
        .expand_from_env()
        .unwrap();
    assert_eq!(got, stdio(exe, &["demo-server"], &[], None));
}

#[test]
fn default_lookup_falls_back_to_the_process_environment() {
    // PATH is set in any test environment; read-only, so parallel tests are unaffected.
    assert_eq!(default_lookup("PATH"), std::env::var("PATH").ok());
}

#[test]
fn secret_references_expand_in_every_field_from_the_store() {
    let cfg = stdio(
        "c",
        &["--token=${secret:TOKEN}"],
        &[("API_KEY", "${secret:TOKEN}"), ("K", "${A}-${secret:B}")],
        None,
    );
    let got = cfg.expand(&lookup, &secrets()).unwrap();
    assert_eq!(
        got,
        stdio(
            "c",
            &["--token=tok-s3cr3t"],
            &[("API_KEY", "tok-s3cr3t"), ("K", "alpha-bee")],
            None
        )
    );
    let h = http(
        "https://h/${secret:B}",
        &[("Authorization", "Bearer ${secret:TOKEN}")],
        false,
    );
    assert_eq!(
        h.expand(&lookup, &secrets()).unwrap(),
        http(
            "https://h/bee",
            &[("Authorization", "Bearer tok-s3cr3t")],
            false
        )
    );
    // `$${secret:X}` stays literal and is not looked up.
    assert_eq!(
        expand_text("s", "f", "$${secret:NOPE}", &src(&secrets())),
        Ok("${secret:NOPE}".into())
    );
}

#[test]
fn missing_secret_names_the_secret_and_the_command_that_sets_it() {
    let cfg = http(
        "https://h/",
        &[("Authorization", "Bearer ${secret:TOKEN} ${secret:GONE}")],
        false,
    );
    let err = cfg.expand(&lookup, &secrets()).unwrap_err();
    assert_eq!(
        err,
        ConfigError::MissingSecret {
            server: "docs".into(),
            field: "headers.Authorization".into(),
            secret: "GONE".into(),
        }
    );
    assert_eq!(
        err.to_string(),
        "server \"docs\": field \"headers.Authorization\": secret \"GONE\" is not in the keychain; store it with `mcp-companion secret set GONE`"
    );
    assert!(!err.to_string().contains("s3cr3t"));
}

#[test]
fn no_keychain_fails_the_server_with_the_keychain_error_and_no_value() {
    let store = NoKeychain {
        detail: "no session bus".into(),
    };
    let cfg = stdio("c", &[], &[("API_KEY", "${secret:TOKEN}")], None);
    let err = cfg.expand(&lookup, &store).unwrap_err();
    assert!(
        matches!(&err, ConfigError::Secret { server, field, secret, .. }
            if server == "files" && field == "env.API_KEY" && secret == "TOKEN"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("no OS keychain is available"), "{text}");
    assert!(text.contains("${VAR}"), "{text}");
    // An entry without secret references never touches the store.
    assert!(
        stdio("c", &["${A}"], &[], None)
            .expand(&lookup, &store)
            .is_ok()
    );
}

#[test]
fn invalid_secret_names_fail_at_load_time() {
    for bad in ["${secret:}", "${secret:.index}", "${secret:a\"b}"] {
        let err = check_references("srv", "env.K", bad).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Field { field, message, .. } if field == "env.K" && message.contains("invalid secret name")),
            "{bad}: {err:?}"
        );
    }
    assert!(check_references("srv", "env.K", "${secret:GH_TOKEN}").is_ok());
}

#[test]
fn secret_references_are_listed_by_field() {
    let cfg = stdio(
        "${secret:CMD}",
        &["x", "${secret:ARG}"],
        &[("K", "${secret:E1}${secret:E2}"), ("L", "${PLAIN}")],
        None,
    );
    assert_eq!(
        cfg.secret_references(),
        vec![
            ("command".to_owned(), "CMD".to_owned()),
            ("args[1]".into(), "ARG".into()),
            ("env.K".into(), "E1".into()),
            ("env.K".into(), "E2".into()),
        ]
    );
    assert_eq!(
        secret_names_in("a ${secret:X} $${secret:Y} ${Z}"),
        vec!["X"]
    );
    assert!(
        http("https://h/", &[], false)
            .secret_references()
            .is_empty()
    );
}
