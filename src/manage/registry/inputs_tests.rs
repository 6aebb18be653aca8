use super::*;

fn input(json: serde_json::Value) -> Input {
    serde_json::from_value(json).unwrap()
}

#[test]
fn templates_substitute_known_variables_and_escape_the_rest() {
    let values = Values {
        plain: BTreeMap::from([("db".to_owned(), "my${db}".to_owned())]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &EnvSecrets, false);
    let i = input(serde_json::json!({
        "value": "${HOME}/{db}/{other}",
        "variables": {"db": {"isRequired": true}}
    }));
    let got = r.input("x", "env X", &i).unwrap();
    assert_eq!(got.as_deref(), Some("$${HOME}/my$${db}/{other}"));
    assert_eq!(r.fields.len(), 1);
    assert_eq!(r.fields[0].key, "db");
    // A `$` before a variable whose value starts with `{` must not form a reference.
    let values = Values {
        plain: BTreeMap::from([("v".to_owned(), "{PATH}".to_owned())]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &EnvSecrets, false);
    let i = input(serde_json::json!({"value": "${v}", "variables": {"v": {}}}));
    let got = r.input("x", "env X", &i).unwrap().unwrap();
    assert_eq!(got, "$${PATH}");
    let doc = serde_json::json!({"mcpServers": {"s": {"command": "x", "args": [got]}}});
    let cfg = crate::config::parse(&doc.to_string(), std::path::Path::new("t")).unwrap();
    let entry = cfg.servers[0].entry.as_ref().unwrap();
    let expanded = entry
        .expand(
            &|_| Some("LEAK".into()),
            &crate::secret::NoKeychain {
                detail: "none".into(),
            },
        )
        .unwrap();
    match expanded.transport {
        crate::config::TransportConfig::Stdio(s) => assert_eq!(s.args, ["${PATH}"]),
        other => panic!("{other:?}"),
    }
}

#[test]
fn choices_formats_and_required_inputs_are_checked() {
    let mode = input(serde_json::json!({"choices": ["a", "b"], "isRequired": true}));
    let num = input(serde_json::json!({"format": "number"}));
    let values = Values {
        plain: BTreeMap::from([
            ("mode".to_owned(), "c".to_owned()),
            ("port".to_owned(), "eighty".to_owned()),
        ]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &EnvSecrets, false);
    let e = r.input("mode", "argument --mode", &mode).unwrap_err();
    assert_eq!(e.to_string(), "input \"mode\": must be one of a, b");
    let e = r.input("port", "argument --port", &num).unwrap_err();
    assert_eq!(e.to_string(), "input \"port\": must be a number");
    let empty = Values::default();
    let mut r = Resolver::new("s", &empty, &EnvSecrets, false);
    let e = r.input("mode", "argument --mode", &mode).unwrap_err();
    assert!(
        e.to_string()
            .contains("\"mode\" (argument --mode) is required"),
        "{e}"
    );
    assert_eq!(r.input("port", "argument --port", &num).unwrap(), None);
}

#[test]
fn secrets_with_a_keychain_are_stored_and_referenced_by_name() {
    let stored = std::sync::Mutex::new(Vec::new());
    let sink = StoredSecrets::new(|name: &str, value: &str| {
        stored
            .lock()
            .unwrap()
            .push((name.to_owned(), value.to_owned()));
        Ok(())
    });
    let token = input(serde_json::json!({"isSecret": true, "isRequired": true}));
    let values = Values {
        plain: BTreeMap::from([("API KEY".to_owned(), "hunter2".to_owned())]),
        ..Values::default()
    };
    let mut r = Resolver::new("my srv", &values, &sink, false);
    let got = r.input("API KEY", "env API_KEY", &token).unwrap();
    assert_eq!(got.as_deref(), Some("${secret:my_srv.API_KEY}"));
    assert_eq!(
        *stored.lock().unwrap(),
        [("my_srv.API_KEY".to_owned(), "hunter2".to_owned())]
    );
    assert!(r.exports.is_empty());
    let empty = Values::default();
    let mut r = Resolver::new("s", &empty, &sink, false);
    assert!(matches!(
        r.input("T", "env T", &token),
        Err(RegistryError::MissingInput { .. })
    ));
    assert_eq!(secret_name(".x", "k"), "_x.k");
}

#[test]
fn secrets_without_a_keychain_become_environment_references_never_plain_text() {
    let token = input(serde_json::json!({"isSecret": true, "isRequired": true}));
    let values = Values {
        plain: BTreeMap::from([("api-key".to_owned(), "hunter2".to_owned())]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &EnvSecrets, false);
    assert_eq!(
        r.input("api-key", "header X", &token).unwrap().as_deref(),
        Some("${API_KEY}")
    );
    assert_eq!(r.exports, ["API_KEY"]);
    assert!(!format!("{:?}", r.chosen).contains("hunter2"));
}
