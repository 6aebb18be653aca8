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
    let mut r = Resolver::new("s", &values, &NoKeychainSink, false);
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
    let mut r = Resolver::new("s", &values, &NoKeychainSink, false);
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
    let mut r = Resolver::new("s", &values, &NoKeychainSink, false);
    let e = r.input("mode", "argument --mode", &mode).unwrap_err();
    assert_eq!(e.to_string(), "input \"mode\": must be one of a, b");
    let e = r.input("port", "argument --port", &num).unwrap_err();
    assert_eq!(e.to_string(), "input \"port\": must be a number");
    let empty = Values::default();
    let mut r = Resolver::new("s", &empty, &NoKeychainSink, false);
    let e = r.input("mode", "argument --mode", &mode).unwrap_err();
    assert!(
        e.to_string()
            .contains("\"mode\" (argument --mode) is required"),
        "{e}"
    );
    assert_eq!(r.input("port", "argument --port", &num).unwrap(), None);
}

#[test]
fn secrets_with_a_keychain_are_referenced_by_name_and_stored_only_later() {
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
    assert!(
        stored.lock().unwrap().is_empty(),
        "nothing stored while resolving"
    );
    assert_eq!(r.pending.len(), 1);
    assert!(!format!("{:?}", r.pending).contains("hunter2"));
    r.pending[0].store(&sink).unwrap();
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
fn without_a_keychain_no_input_reads_the_environment_unless_the_person_names_the_variable() {
    // A registry naming its secret after one of the person's variables gets no `${THAT_VAR}`.
    let token = input(serde_json::json!({"isSecret": true, "isRequired": true}));
    let optional = input(serde_json::json!({"isSecret": true}));
    let empty = Values::default();
    let mut r = Resolver::new("s", &empty, &NoKeychainSink, false);
    assert!(matches!(
        r.input("AWS_SECRET_ACCESS_KEY", "header X", &token),
        Err(RegistryError::MissingInput { .. })
    ));
    assert_eq!(r.input("GITHUB_TOKEN", "env G", &optional).unwrap(), None);
    // A typed value is refused, never dropped for a reference.
    let values = Values {
        plain: BTreeMap::from([("api-key".to_owned(), "hunter2".to_owned())]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &NoKeychainSink, false);
    let e = r.input("api-key", "header X", &token).unwrap_err();
    assert!(
        matches!(&e, RegistryError::Secret { key, .. } if key == "api-key")
            && e.to_string().contains("--set-env"),
        "{e}"
    );
    assert!(r.chosen.is_empty() && r.pending.is_empty());
    // The variable the person names is the one read; a name that could read more is refused.
    let values = Values {
        env: BTreeMap::from([
            ("api-key".to_owned(), "MY_KEY".to_owned()),
            ("other".to_owned(), "secret:gh.TOKEN".to_owned()),
        ]),
        ..Values::default()
    };
    let mut r = Resolver::new("s", &values, &NoKeychainSink, false);
    assert_eq!(
        r.input("api-key", "header X", &token).unwrap().as_deref(),
        Some("${MY_KEY}")
    );
    assert_eq!(r.exports, ["MY_KEY"]);
    assert!(matches!(
        r.input("other", "env O", &token),
        Err(RegistryError::BadInput { .. })
    ));
}
