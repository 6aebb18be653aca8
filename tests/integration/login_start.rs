//! `start-at-login`: the systemd user unit it writes starts this binary's `serve` (its stable
//! copy, as this one lies in a build dir) with the config given, passes `systemd-analyze verify`, is enabled the way `systemctl --user enable`
//! would, and `off` removes all of it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::common::BIN;

fn run(home: &Path, args: &[&str]) -> Output {
    run_with(home, args, &[])
}

/// [`run`] with `env` set too.
fn run_with(home: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("cfg"))
        .env_remove("XDG_DATA_HOME")
        .env_remove("MCP_COMPANION_CONFIG")
        .env_remove("MCP_COMPANION_SOCKET");
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().expect("run start-at-login")
}

/// The unit starts the companion the person runs now: the socket and config from the
/// environment (`MCP_COMPANION_SOCKET`, `MCP_COMPANION_CONFIG`), or, without them, the default
/// config path as resolved now.
#[test]
fn start_at_login_starts_the_companion_of_the_socket_and_config_in_use() {
    let home = tempfile::tempdir().expect("home");
    let socket = home.path().join("run/mcp.sock");
    let config = home.path().join("mine.json");
    let on = run_with(
        home.path(),
        &["start-at-login", "on"],
        &[
            ("MCP_COMPANION_SOCKET", &socket),
            ("MCP_COMPANION_CONFIG", &config),
        ],
    );
    assert!(on.status.success(), "{on:?}");
    let unit = home.path().join("cfg/systemd/user/mcp-companion.service");
    let text = std::fs::read_to_string(&unit).expect("the unit");
    // The binary under test lies in a cargo build dir: the unit runs its stable copy.
    let bin = home
        .path()
        .join(".local/share/mcp-companion/bin/mcp-companion");
    let exec = format!(
        "ExecStart={} serve --config {} --socket {}\n",
        bin.display(),
        config.display(),
        socket.display()
    );
    assert!(text.contains(&exec), "{text}");
    let on = run(home.path(), &["start-at-login", "on"]);
    assert!(on.status.success(), "{on:?}");
    let text = std::fs::read_to_string(&unit).expect("the unit");
    let default = home.path().join("cfg/mcp-companion/config.json");
    let exec = format!(
        "ExecStart={} serve --config {}\n",
        bin.display(),
        default.display()
    );
    assert!(text.contains(&exec), "{text}");
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
    // The binary under test lies in a cargo build dir: the unit runs its stable copy.
    let bin = home
        .path()
        .join(".local/share/mcp-companion/bin/mcp-companion");
    assert_eq!(
        std::fs::metadata(&bin).expect("the copy").len(),
        std::fs::metadata(BIN).expect("bin").len()
    );
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

/// A config path holding a newline is refused (it would add a line to the unit), and a unit
/// at the same place that `start-at-login` did not write — a person's own, or a symlink — is
/// neither overwritten by `on` nor removed by `off`.
#[test]
fn start_at_login_writes_nothing_it_cannot_own() {
    let home = tempfile::tempdir().expect("home");
    let units = home.path().join("cfg/systemd/user");
    let unit = units.join("mcp-companion.service");
    let injected = home
        .path()
        .join("nl\nExecStartPre=/bin/touch /tmp/pwned\n#/config.json");
    let out = run(
        home.path(),
        &[
            "--config",
            injected.to_str().expect("utf-8"),
            "start-at-login",
            "on",
        ],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("control character"), "{err}");
    assert!(!unit.exists());

    std::fs::create_dir_all(&units).expect("units dir");
    let own = "[Service]\nExecStart=/usr/bin/my-own-thing\n";
    std::fs::write(&unit, own).expect("a person's unit");
    for args in [&["start-at-login", "on"][..], &["start-at-login", "off"]] {
        let out = run(home.path(), args);
        assert!(!out.status.success(), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("was not written by `mcp-companion start-at-login`"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&unit).expect("kept"), own);
    }
    let shown = run(home.path(), &["start-at-login"]);
    assert!(String::from_utf8_lossy(&shown.stdout).starts_with("off:"));

    std::fs::remove_file(&unit).expect("rm");
    let precious = home.path().join("precious.txt");
    std::fs::write(&precious, "mine").expect("write");
    std::os::unix::fs::symlink(&precious, &unit).expect("symlink");
    let out = run(home.path(), &["start-at-login", "on"]);
    assert!(!out.status.success(), "{out:?}");
    assert_eq!(std::fs::read_to_string(&precious).expect("kept"), "mine");
}
