use super::*;

#[test]
fn default_names_are_the_last_segment_cleaned() {
    assert_eq!(default_server_name("io.github.user/Weather"), "weather");
    assert_eq!(default_server_name("a/b c.d"), "b-c-d");
    assert_eq!(default_server_name("a/..."), "server");
}

#[tokio::test]
async fn a_refused_or_dry_run_install_writes_neither_the_config_nor_the_keychain() {
    let stored = std::sync::Mutex::new(Vec::<(String, String)>::new());
    let sink = super::super::StoredSecrets::new(|name: &str, value: &str| {
        stored
            .lock()
            .unwrap()
            .push((name.to_owned(), value.to_owned()));
        Ok(())
    });
    let detail: ServerDetail = serde_json::from_value(serde_json::json!({
        "name": "io.github.x/gh", "version": "1.0.0",
        "remotes": [{"type": "streamable-http", "url": "http://10.1.2.3/mcp",
            "headers": [{"name": "Authorization", "value": "Bearer {GITHUB_TOKEN}",
                "variables": {"GITHUB_TOKEN": {"isSecret": true, "isRequired": true}}}]}]
    }))
    .unwrap();
    let wl = SsrfWhitelist::from_value(Some(&serde_json::json!(["10.0.0.0/8"])));
    let values = Values {
        plain: [("GITHUB_TOKEN".to_owned(), "ghp-new-value".to_owned())].into(),
        ..Values::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let original = r#"{"mcpServers": {"gh": {"command": "gh-mcp"}}}"#;
    std::fs::write(&path, original).unwrap();
    // Planning is what a dry run does: nothing is stored.
    let planned = plan(
        "https://registry.example",
        &detail,
        Choice::Remote(0),
        "gh",
        &values,
        &sink,
        &wl,
        &|_| true,
    )
    .await
    .unwrap();
    assert!(
        stored.lock().unwrap().is_empty(),
        "planning stored a secret"
    );
    assert_eq!(
        planned.entry["headers"]["Authorization"],
        "Bearer ${secret:gh.GITHUB_TOKEN}"
    );
    // "a server named gh already exists": refused before the keychain is touched.
    let err = save(&path, &planned, false, &sink).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert!(
        stored.lock().unwrap().is_empty(),
        "a refused add stored a secret"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    // Accepted: stored, then written.
    save(&path, &planned, true, &sink).unwrap();
    assert_eq!(
        *stored.lock().unwrap(),
        [("gh.GITHUB_TOKEN".to_owned(), "ghp-new-value".to_owned())]
    );
    assert!(
        !std::fs::read_to_string(&path)
            .unwrap()
            .contains("ghp-new-value")
    );
}

#[tokio::test]
async fn remote_urls_to_private_addresses_are_refused_unless_whitelisted() {
    let wl = SsrfWhitelist::default();
    let err = check_remote_url("http://10.1.2.3/mcp", &wl)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("10.1.2.3/32"), "{err}");
    let err = check_remote_url("file:///etc/passwd", &wl)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("scheme"), "{err}");
    let allowed = SsrfWhitelist::from_value(Some(&serde_json::json!(["10.0.0.0/8"])));
    assert!(
        check_remote_url("http://10.1.2.3/mcp", &allowed)
            .await
            .unwrap()
            .is_empty()
    );
    let warnings = check_remote_url("https://${HOST}/mcp", &wl).await.unwrap();
    assert!(
        warnings[0].contains("checked when the server connects"),
        "{warnings:?}"
    );
}

#[tokio::test]
async fn a_reference_in_the_path_does_not_skip_the_address_check() {
    let wl = SsrfWhitelist::default();
    for url in [
        "http://169.254.169.254/latest/${X}",
        "http://10.1.2.3/mcp?key=$${K}",
        "http://127.0.0.1:9/${A}/${B}",
        "file:///${X}",
    ] {
        assert!(check_remote_url(url, &wl).await.is_err(), "{url} passed");
    }
    assert!(
        check_remote_url("https://93.184.215.14/mcp/${TENANT}", &wl)
            .await
            .unwrap()
            .is_empty()
    );
}
