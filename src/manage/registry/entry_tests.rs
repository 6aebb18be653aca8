use serde_json::json;

use super::*;
use crate::manage::registry::inputs::{NoKeychainSink, StoredSecrets};

fn detail(v: serde_json::Value) -> ServerDetail {
    serde_json::from_value(v).unwrap()
}

fn values(pairs: &[(&str, &str)]) -> Values {
    Values {
        plain: pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        ..Values::default()
    }
}

/// A keychain that must not be written while mapping.
fn keychain() -> StoredSecrets<impl Fn(&str, &str) -> Result<(), String> + Send + Sync> {
    StoredSecrets::new(|name: &str, _: &str| panic!("{name} stored while mapping"))
}

fn map(d: &ServerDetail, vals: &[(&str, &str)]) -> Result<Built, RegistryError> {
    let choice = default_choice(d)?;
    build(d, choice, "s", &values(vals), &keychain(), false)
}

#[test]
fn npm_packages_run_with_npx_and_named_and_positional_arguments() {
    let d = detail(json!({
        "name": "io.github.x/fs", "version": "1.2.0",
        "packages": [{
            "registryType": "npm", "identifier": "@x/fs", "version": "1.2.0",
            "transport": {"type": "stdio"},
            "packageArguments": [
                {"type": "named", "name": "--mode", "choices": ["ro", "rw"], "default": "ro"},
                {"type": "named", "name": "--verbose", "format": "boolean"},
                {"type": "positional", "valueHint": "root", "isRequired": true}
            ],
            "environmentVariables": [{"name": "LOG_LEVEL", "default": "info"}]
        }]
    }));
    let b = map(&d, &[("root", "/data"), ("verbose", "true")]).unwrap();
    assert_eq!(
        b.entry,
        json!({"command": "npx",
               "args": ["-y", "@x/fs@1.2.0", "--mode", "ro", "--verbose", "/data"],
               "env": {"LOG_LEVEL": "info"}})
    );
    let keys: Vec<_> = b.fields.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["LOG_LEVEL", "mode", "verbose", "root"]);
    let err = map(&d, &[]).unwrap_err();
    assert!(err.to_string().contains("--set root=VALUE"), "{err}");
}

#[test]
fn pypi_packages_run_with_uvx_and_runtime_arguments_come_first() {
    let d = detail(json!({
        "name": "io.github.x/time", "version": "2026.10.19",
        "packages": [{
            "registryType": "pypi", "identifier": "mcp-server-time", "version": "2026.10.19",
            "runtimeHint": "uvx",
            "runtimeArguments": [{"type": "named", "name": "--python", "value": "3.11"}],
            "packageArguments": [{"type": "named", "name": "--local-timezone", "value": "{tz}",
                                  "variables": {"tz": {"default": "UTC"}}}]
        }]
    }));
    let b = map(&d, &[("tz", "Europe/Paris")]).unwrap();
    assert_eq!(
        b.entry["args"],
        json!([
            "--python",
            "3.11",
            "mcp-server-time==2026.10.19",
            "--local-timezone",
            "Europe/Paris"
        ])
    );
    assert_eq!(b.inputs.get("tz").map(String::as_str), Some("Europe/Paris"));
}

#[test]
fn oci_packages_run_with_docker_and_pass_each_environment_variable() {
    let d = detail(json!({
        "name": "io.github.x/db", "version": "3.1.0",
        "packages": [{
            "registryType": "oci", "identifier": "ghcr.io/x/db", "version": "3.1.0",
            "runtimeArguments": [{"type": "named", "name": "--network", "value": "host"}],
            "environmentVariables": [{"name": "DB_PASSWORD", "isSecret": true, "isRequired": true}]
        }]
    }));
    let b = map(&d, &[("DB_PASSWORD", "s3cret")]).unwrap();
    assert_eq!(
        b.entry,
        json!({"command": "docker",
               "args": ["run", "-i", "--rm", "--network", "host", "-e", "DB_PASSWORD", "ghcr.io/x/db:3.1.0"],
               "env": {"DB_PASSWORD": "${secret:s.DB_PASSWORD}"}})
    );
    assert!(!b.entry.to_string().contains("s3cret"));
    assert!(b.exports.is_empty());
    assert_eq!(b.secrets.len(), 1);
    assert_eq!(b.secrets[0].name, "s.DB_PASSWORD");
}

#[test]
fn remotes_map_to_url_and_headers_with_url_variables() {
    let d = detail(json!({
        "name": "com.example/hosted", "version": "1.0.0",
        "remotes": [{
            "type": "streamable-http", "url": "https://{tenant}.example.com/mcp",
            "variables": {"tenant": {"isRequired": true}},
            "headers": [{"name": "Authorization", "value": "Bearer {token}",
                         "variables": {"token": {"isSecret": true, "isRequired": true}}}]
        }, {"type": "sse", "url": "https://example.com/sse"}]
    }));
    let b = map(&d, &[("tenant", "acme"), ("token", "tok")]).unwrap();
    assert_eq!(
        b.entry,
        json!({"type": "streamableHttp", "url": "https://acme.example.com/mcp",
               "headers": {"Authorization": "Bearer ${secret:s.token}"}})
    );
    let sse = build(
        &d,
        Choice::Remote(1),
        "s",
        &values(&[]),
        &NoKeychainSink,
        false,
    )
    .unwrap();
    assert_eq!(
        sse.entry,
        json!({"type": "sse", "url": "https://example.com/sse"})
    );
}

#[test]
fn unsupported_types_and_hostile_values_are_refused_with_the_reason() {
    let d = detail(json!({"name": "a/b", "version": "1",
        "packages": [{"registryType": "nuget", "identifier": "X"}]}));
    let err = map(&d, &[]).unwrap_err().to_string();
    assert!(err.contains("\"nuget\" is not supported"), "{err}");

    for (field, value, want) in [
        ("identifier", json!("x; rm -rf ~"), "character ';'"),
        ("identifier", json!("--eval"), "must not start with '-'"),
        ("identifier", json!("$(id)"), "character '$'"),
        ("version", json!("1.0 && id"), "character ' '"),
        (
            "runtimeHint",
            json!("/bin/sh"),
            "runtimeHint \"/bin/sh\" is not supported",
        ),
    ] {
        let mut pkg = json!({"registryType": "npm", "identifier": "ok", "version": "1.0.0"});
        pkg[field] = value;
        let d = detail(json!({"name": "a/b", "version": "1", "packages": [pkg]}));
        let err = map(&d, &[]).unwrap_err().to_string();
        assert!(err.contains(want), "{field}: {err}");
    }
}

#[test]
fn user_values_are_literal_even_with_dollar_braces() {
    let d = detail(json!({"name": "a/b", "version": "1",
        "packages": [{"registryType": "npm", "identifier": "p", "version": "1",
            "environmentVariables": [{"name": "GREETING", "isRequired": true}]}]}));
    let b = map(&d, &[("GREETING", "hi ${HOME}")]).unwrap();
    assert_eq!(b.entry["env"]["GREETING"], "hi $${HOME}");
}
