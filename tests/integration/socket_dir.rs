//! Proves that `serve` refuses a socket directory that is a symbolic link before changing
//! anything (no chmod of the target, no lock created there), and never deletes a file that is
//! not a socket at the socket path.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use crate::common::BIN;

/// Runs `serve` with `XDG_RUNTIME_DIR=xdg` (or an explicit `--socket`) and an empty config; it
/// must exit on its own.
fn serve(home: &Path, xdg: Option<&Path>, socket: Option<&Path>) -> Output {
    let config = home.join("config.json");
    std::fs::write(&config, r#"{"mcpServers": {}}"#).expect("config");
    let mut cmd = Command::new(BIN);
    cmd.arg("serve").arg("--config").arg(&config);
    if let Some(socket) = socket {
        cmd.arg("--socket").arg(socket);
    }
    cmd.env("HOME", home)
        .env_remove("MCP_COMPANION_SOCKET")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("RUST_LOG");
    match xdg {
        Some(dir) => cmd.env("XDG_RUNTIME_DIR", dir),
        None => cmd.env_remove("XDG_RUNTIME_DIR"),
    };
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("serve kept running with a refused socket directory");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).expect("stat").permissions().mode() & 0o7777
}

#[test]
fn a_symlinked_runtime_directory_is_refused_before_anything_is_changed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("home");
    // Someone else's directory (mode 0755) and a shared sticky directory (mode 1777).
    let other = tmp.path().join("other-user");
    std::fs::create_dir(&other).expect("mkdir");
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let sticky = tmp.path().join("shared-tmp");
    std::fs::create_dir(&sticky).expect("mkdir");
    std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).expect("chmod");

    for (target, was) in [(&other, 0o755), (&sticky, 0o1777)] {
        let xdg = tmp.path().join("xdg");
        let _ = std::fs::remove_dir_all(&xdg);
        std::fs::create_dir(&xdg).expect("xdg");
        symlink(target, xdg.join("mcp-companion")).expect("symlink");
        let out = serve(&home, Some(&xdg), None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "serve accepted a symlink: {stderr}");
        assert!(stderr.contains("symbolic link"), "{stderr}");
        assert_eq!(mode(target), was, "the link target was chmod-ed");
        let left: Vec<_> = std::fs::read_dir(target)
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert!(left.is_empty(), "created in the link target: {left:?}");
    }
}

#[test]
fn a_regular_file_at_the_socket_path_is_never_deleted() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("home");
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).expect("run");
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let socket = run.join("mcp.sock");
    std::fs::write(&socket, "not a socket").expect("write");
    let out = serve(&home, None, Some(&socket));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("is not a socket"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&socket).expect("the file is still there"),
        "not a socket"
    );
}

/// `--socket` in a directory the person owns (a home directory, mode 0755) serves there and
/// leaves the directory's mode alone, the sockets themselves private; a directory others can
/// write to (0777) is refused, and left alone too.
#[test]
fn a_chosen_socket_directory_is_used_as_it_is_never_chmod_ed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path().join("home");
    std::fs::create_dir(&home).expect("home");
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let config = home.join("config.json");
    std::fs::write(&config, r#"{"mcpServers": {}}"#).expect("config");
    let socket = home.join("mcp.sock");
    let mut child = Command::new(BIN)
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(&socket)
        .env("HOME", &home)
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::os::unix::net::UnixStream::connect(&socket).is_err() {
        assert!(
            child.try_wait().expect("wait").is_none(),
            "serve exited: {:?}",
            child.wait_with_output().map(|o| o.stderr)
        );
        assert!(std::time::Instant::now() < deadline, "never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(mode(&home), 0o755, "the chosen directory was chmod-ed");
    assert_eq!(mode(&socket), 0o600);
    assert_eq!(mode(&home.join("control.sock")), 0o600);
    let _ = child.kill();
    let _ = child.wait();

    let open = tmp.path().join("open");
    std::fs::create_dir(&open).expect("mkdir");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let out = serve(&home, None, Some(&open.join("mcp.sock")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("mode 0777") && stderr.contains("lets other users replace"),
        "{stderr}"
    );
    assert_eq!(mode(&open), 0o777, "the refused directory was chmod-ed");
    assert_eq!(std::fs::read_dir(&open).expect("ls").count(), 0);
}
