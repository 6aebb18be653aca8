use super::*;
use crate::manage::bundle::archive::tests::zip_of;
use crate::manage::registry::NoKeychainSink;

fn manifest(server: serde_json::Value, compatibility: serde_json::Value) -> Vec<u8> {
    json!({"manifest_version": "0.4", "name": "Hello World", "version": "1.2.0",
           "description": "d", "author": {"name": "a"}, "server": server,
           "compatibility": compatibility})
    .to_string()
    .into_bytes()
}

fn setup(root: &Path) -> Setup<'static> {
    Setup {
        root: root.to_path_buf(),
        context: Context {
            dir: root.to_path_buf(),
            home: Some(PathBuf::from("/home/me")),
            desktop: None,
            documents: None,
            downloads: None,
            platform: "linux".into(),
        },
        on_path: &|p| p == "node",
        version_of: &|_| Some("v18.19.0".into()),
        limits: Limits::default(),
    }
}

fn node(compat: serde_json::Value) -> Vec<u8> {
    zip_of(&[
        (
            "manifest.json",
            &manifest(
                json!({"type": "node", "entry_point": "server/index.js",
                       "mcp_config": {"command": "node", "args": ["${__dirname}/server/index.js"]}}),
                compat,
            ),
        ),
        ("server/index.js", b"1"),
    ])
}

#[test]
fn plan_save_replace_and_remove_keep_one_directory_per_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("bundles");
    let file = tmp.path().join("hello.mcpb");
    std::fs::write(
        &file,
        node(json!({"platforms": ["linux"], "runtimes": {"node": ">=16"}})),
    )
    .unwrap();
    let cfg = tmp.path().join("config.json");
    std::fs::write(&cfg, r#"{"mcpServers": {}}"#).unwrap();
    let s = setup(&root);
    let p = plan(&file, None, &Values::default(), &NoKeychainSink, &s).unwrap();
    assert_eq!(p.planned.server, "hello-world");
    assert!(!root.exists(), "planning writes nothing");
    save(&cfg, &p, false, &NoKeychainSink, &root).unwrap();
    assert!(p.dir.join("server/index.js").is_file());
    let doc: Value = serde_json::from_slice(&std::fs::read(&cfg).unwrap()).unwrap();
    let source = BundleSource::of_entry(&doc["mcpServers"]["hello-world"]).unwrap();
    assert_eq!(source.dir, p.dir.display().to_string());
    assert_eq!(source.version, "1.2.0");

    // The same name again: refused without --replace, and no second directory appears.
    let again = plan(&file, None, &Values::default(), &NoKeychainSink, &s).unwrap();
    assert!(save(&cfg, &again, false, &NoKeychainSink, &root).is_err());
    assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
    let old = save(&cfg, &again, true, &NoKeychainSink, &root).unwrap();
    assert_eq!(old.as_deref(), Some(p.dir.as_path()));
    assert!(!p.dir.exists() && again.dir.is_dir());

    // An edited `source.dir` pointing elsewhere is never deleted.
    let outside = tmp.path().join("precious");
    std::fs::create_dir(&outside).unwrap();
    edit::update_file(&cfg, |d| {
        edit::set_path(
            d,
            &["mcpServers", "hello-world", "source", "dir"],
            json!(outside.display().to_string()),
        )
    })
    .unwrap();
    assert!(remove(&cfg, "hello-world", &root).unwrap().is_none());
    assert!(outside.is_dir());
}

#[test]
fn a_directory_another_entry_names_is_kept_by_remove_and_by_replace() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("bundles");
    let file = tmp.path().join("hello.mcpb");
    std::fs::write(&file, node(json!({}))).unwrap();
    let cfg = tmp.path().join("config.json");
    std::fs::write(&cfg, r#"{"mcpServers": {}}"#).unwrap();
    let s = setup(&root);
    let p = plan(&file, None, &Values::default(), &NoKeychainSink, &s).unwrap();
    save(&cfg, &p, false, &NoKeychainSink, &root).unwrap();
    // A second entry copied from the first by hand, `source` and all.
    let copy = |name: &str| {
        edit::update_file(&cfg, |d| {
            let entry = d["mcpServers"]["hello-world"].clone();
            edit::set_server(d, name, entry, false)
        })
        .unwrap();
    };
    copy("h2");
    match remove(&cfg, "h2", &root).unwrap() {
        Some(DirOutcome::InUse { dir, by }) => {
            assert_eq!(dir, p.dir);
            assert_eq!(by, "hello-world");
        }
        other => panic!("expected the directory kept, got {other:?}"),
    }
    assert!(p.dir.join("server/index.js").is_file());

    // Replacing the bundle of one entry keeps the directory the copy still runs from.
    copy("h3");
    let again = plan(&file, None, &Values::default(), &NoKeychainSink, &s).unwrap();
    assert_eq!(
        save(&cfg, &again, true, &NoKeychainSink, &root).unwrap(),
        None
    );
    assert!(p.dir.join("server/index.js").is_file());

    // The last entry naming it goes: now it is deleted.
    match remove(&cfg, "h3", &root).unwrap() {
        Some(DirOutcome::Deleted(dir)) => assert_eq!(dir, p.dir),
        other => panic!("expected the directory deleted, got {other:?}"),
    }
    assert!(!p.dir.exists());
}

#[test]
fn platform_runtime_and_entry_point_are_checked_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("bundles");
    let file = tmp.path().join("b.mcpb");
    let s = setup(&root);
    let cases = [
        (
            node(json!({"platforms": ["darwin", "win32"]})),
            "it runs on darwin, win32 and this is linux",
        ),
        (
            node(json!({"runtimes": {"node": ">=20.0.0"}})),
            "it needs node >=20.0.0 and node is v18.19.0",
        ),
        (
            zip_of(&[(
                "manifest.json",
                &manifest(
                    json!({"type": "node", "entry_point": "server/index.js",
                           "mcp_config": {"command": "node"}}),
                    json!({}),
                ),
            )]),
            "server.entry_point names \"server/index.js\", which the bundle does not hold",
        ),
        (
            zip_of(&[
                (
                    "manifest.json",
                    &manifest(
                        json!({"type": "binary", "entry_point": "bin/s",
                               "mcp_config": {"command": "${__dirname}/bin/other"}}),
                        json!({}),
                    ),
                ),
                ("bin/s", b"1"),
            ]),
            "runs \"bin/other\", which the bundle does not hold",
        ),
    ];
    for (bytes, want) in cases {
        std::fs::write(&file, bytes).unwrap();
        let e = plan(&file, None, &Values::default(), &NoKeychainSink, &s)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(e.contains(want), "want {want}, got {e}");
    }
    assert!(!root.exists());
}
