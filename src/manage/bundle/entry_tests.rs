use super::*;
use crate::manage::registry::{NoKeychainSink, StoredSecrets};
use std::sync::Mutex;

fn manifest(extra: serde_json::Value) -> Manifest {
    let mut doc = json!({
        "manifest_version": "0.3", "name": "hello", "version": "1.0.0",
        "description": "d", "author": {"name": "a"},
        "server": {"type": "node", "entry_point": "server/index.js",
                   "mcp_config": {"command": "node",
                                  "args": ["${__dirname}/server/index.js", "${user_config.dirs}"],
                                  "env": {"TOKEN": "${user_config.token}",
                                          "GREETING": "${user_config.greeting}${/}x",
                                          "LEAK": "${AWS_SECRET_ACCESS_KEY}",
                                          "OPTIONAL": "${user_config.optional}"}}},
        "user_config": {
            "token": {"type": "string", "title": "Token", "description": "t", "sensitive": true, "required": true},
            "greeting": {"type": "string", "title": "Greeting", "description": "g", "default": "${HOME}"},
            "dirs": {"type": "directory", "title": "Dirs", "description": "d", "multiple": true,
                     "default": ["${HOME}/a", "${DOCUMENTS}"]},
            "optional": {"type": "number", "title": "N", "description": "n", "min": 1, "max": 5}
        }
    });
    if let (Value::Object(d), Value::Object(e)) = (&mut doc, extra) {
        for (k, v) in e {
            d.insert(k, v);
        }
    }
    super::super::manifest::parse(doc.to_string().as_bytes()).unwrap()
}

fn ctx() -> Context {
    Context {
        dir: PathBuf::from("/data/bundles/hello-1"),
        home: Some(PathBuf::from("/home/me")),
        desktop: None,
        documents: Some(PathBuf::from("/home/me/Docs")),
        downloads: None,
        platform: "linux".into(),
    }
}

fn values(plain: &[(&str, &str)], env: &[(&str, &str)]) -> Values {
    Values {
        plain: plain
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        stored: BTreeMap::new(),
    }
}

#[test]
fn variables_are_substituted_and_nothing_reads_the_environment() {
    let stored = Mutex::new(Vec::new());
    let sink = StoredSecrets::new(|n: &str, v: &str| {
        stored.lock().unwrap().push((n.to_owned(), v.to_owned()));
        Ok(())
    });
    let m = manifest(json!({}));
    let built = build(
        &m,
        &ctx(),
        "hello",
        &values(&[("token", "t0k")], &[]),
        &sink,
        false,
    )
    .unwrap();
    assert_eq!(
        built.entry,
        json!({"type": "stdio", "command": "node",
               "args": ["/data/bundles/hello-1/server/index.js", "/home/me/a", "/home/me/Docs"],
               "cwd": "/data/bundles/hello-1",
               "env": {"TOKEN": "${secret:hello.token}", "GREETING": "/home/me/x",
                       "LEAK": "$${AWS_SECRET_ACCESS_KEY}"}})
    );
    assert_eq!(built.program.as_deref(), Some("node"));
    // Stored only when the install is saved.
    assert!(stored.lock().unwrap().is_empty());
    assert_eq!(built.secrets.len(), 1);
    assert_eq!(built.inputs["token"], "${secret:hello.token}");

    // Typed text is literal; --set-env is the one way to read a variable.
    let built = build(
        &m,
        &ctx(),
        "hello",
        &values(
            &[("greeting", "${HOME}"), ("dirs", "/x y")],
            &[("token", "MY_TOKEN")],
        ),
        &NoKeychainSink,
        false,
    )
    .unwrap();
    assert_eq!(built.entry["env"]["GREETING"], "$${HOME}/x");
    assert_eq!(built.entry["env"]["TOKEN"], "${MY_TOKEN}");
    assert_eq!(built.exports, ["MY_TOKEN"]);
    assert_eq!(built.entry["args"][1], "/x y");
}

/// Two references side by side in one argument or value are two references, each substituted.
#[test]
fn adjacent_references_in_one_string_each_substitute() {
    let m = manifest(json!({
        "server": {"type": "node", "entry_point": "server/index.js",
                   "mcp_config": {"command": "node",
                                  "args": ["${user_config.greeting}${user_config.name}"],
                                  "env": {"BOTH": "${user_config.greeting}${user_config.name}"}}},
        "user_config": {
            "greeting": {"type": "string", "title": "G", "description": "g"},
            "name": {"type": "string", "title": "N", "description": "n"}
        }
    }));
    let built = build(
        &m,
        &ctx(),
        "hello",
        &values(&[("greeting", "hi-"), ("name", "ann")], &[]),
        &NoKeychainSink,
        false,
    )
    .unwrap();
    assert_eq!(built.entry["args"], json!(["hi-ann"]));
    assert_eq!(built.entry["env"]["BOTH"], "hi-ann");
}

#[test]
fn required_secret_bounds_and_undeclared_options_are_refused() {
    let m = manifest(json!({}));
    let e = build(
        &m,
        &ctx(),
        "hello",
        &values(&[], &[]),
        &NoKeychainSink,
        false,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "input \"token\" (Token) is required: pass --set token=VALUE"
    );
    let e = build(
        &m,
        &ctx(),
        "hello",
        &values(&[("token", "x")], &[]),
        &NoKeychainSink,
        false,
    )
    .unwrap_err();
    assert!(e.to_string().contains("no OS keychain"), "{e}");
    let e = build(
        &m,
        &ctx(),
        "hello",
        &values(&[("optional", "9")], &[("token", "T")]),
        &NoKeychainSink,
        false,
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "input \"optional\": must be at most 5");
    let m = manifest(json!({"server": {"type": "binary", "entry_point": "bin/s",
        "mcp_config": {"command": "bin/s", "args": ["--k", "${user_config.nope}"]}}}));
    let e = build(
        &m,
        &ctx(),
        "hello",
        &values(&[], &[("token", "T")]),
        &NoKeychainSink,
        false,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("server.mcp_config.args[1] references ${user_config.nope}"),
        "{e}"
    );
}

#[test]
fn a_relative_binary_runs_from_the_bundle_and_overrides_apply() {
    let m = manifest(json!({"server": {"type": "binary", "entry_point": "bin/s",
        "mcp_config": {"command": "bin/s", "args": ["--config", "conf.json"],
                       "platform_overrides": {"win32": {"command": "bin/s.exe"},
                                              "linux": {"args": ["--linux"]}}}}}));
    let built = build(
        &m,
        &ctx(),
        "hello",
        &values(&[], &[("token", "T")]),
        &NoKeychainSink,
        false,
    )
    .unwrap();
    assert_eq!(built.entry["command"], "/data/bundles/hello-1/bin/s");
    assert_eq!(built.entry["args"], json!(["--linux"]));
    assert_eq!(built.program, None);
    let bad = manifest(json!({"server": {"type": "binary", "entry_point": "bin/s",
        "mcp_config": {"command": "../../bin/sh"}}}));
    assert!(
        build(
            &bad,
            &ctx(),
            "h",
            &values(&[], &[("token", "T")]),
            &NoKeychainSink,
            false
        )
        .is_err()
    );
}
