//! `start-at-login`: the systemd user unit it writes starts this binary's `serve` with the
//! config given, passes `systemd-analyze verify`, is enabled the way `systemctl --user enable`
//! would, and `off` removes all of it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::BIN;

fn run(home: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("cfg"))
        .output()
        .expect("run start-at-login")
}

#[test]
fn start_at_login_writes_an_enabled_user_unit_and_off_removes_it() {
    let home = tempfile::tempdir().expect("home");
    let config = home.path().join("my config.json");
    let config_arg = config.to_str().expect("utf-8");
    let on = run(
        home.path(),
        &["--config", config_arg, "start-at-login", "on", "--json"],
    );
    assert!(on.status.success(), "{on:?}");
    let shown: Value = serde_json::from_slice(&on.stdout).expect("json");
    assert_eq!(shown["enabled"], true, "{shown}");
    let units = home.path().join("cfg/systemd/user");
    let unit = units.join("mcp-companion.service");
    let text = std::fs::read_to_string(&unit).expect("the unit");
    let bin = std::fs::canonicalize(BIN).expect("bin");
    let exec = format!(
        "ExecStart={} serve --config \"{config_arg}\"\n",
        bin.display()
    );
    assert!(text.contains(&exec), "{text}");
    assert!(text.contains("WantedBy=default.target"), "{text}");
    let link = units.join("default.target.wants/mcp-companion.service");
    assert_eq!(
        std::fs::read_link(&link).expect("enabled"),
        Path::new("../mcp-companion.service")
    );
    if let Ok(verify) = Command::new("systemd-analyze")
        .args(["verify"])
        .arg(&unit)
        .output()
    {
        assert!(
            verify.status.success(),
            "{}",
            String::from_utf8_lossy(&verify.stderr)
        );
    }
    let state = run(home.path(), &["start-at-login"]);
    let said = String::from_utf8_lossy(&state.stdout);
    assert!(
        said.starts_with("on: the companion starts at login"),
        "{said}"
    );

    let off = run(home.path(), &["start-at-login", "off"]);
    assert!(off.status.success(), "{off:?}");
    assert!(String::from_utf8_lossy(&off.stdout).starts_with("off:"));
    assert!(!unit.exists() && std::fs::symlink_metadata(&link).is_err());
    let again = run(home.path(), &["start-at-login", "off"]);
    assert!(again.status.success(), "off twice is fine: {again:?}");
}
