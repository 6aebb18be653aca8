//! Linux: a systemd user unit, enabled by the `default.target.wants/` link
//! `systemctl --user enable` would make (module doc of `login_start`).

use super::{ENTRY, LoginStart, LoginStartError, ours_or_absent, unit_text};
use crate::io::atomic::{Backup, Mode, write_atomic};
use std::path::PathBuf;

fn dir() -> Result<PathBuf, LoginStartError> {
    dirs::config_dir()
        .map(|d| d.join("systemd").join("user"))
        .ok_or(LoginStartError::NoHome)
}

fn paths() -> Result<(PathBuf, PathBuf), LoginStartError> {
    let dir = dir()?;
    let unit = dir.join(format!("{ENTRY}.service"));
    let link = dir
        .join("default.target.wants")
        .join(format!("{ENTRY}.service"));
    Ok((unit, link))
}

/// Asks a running user manager to re-read its units; a note when none answered.
fn reload_manager() -> Option<String> {
    let ran = std::process::Command::new("systemctl")
        .args(["--user", "daemon-reload"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output();
    match ran {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "systemd's user manager did not take it now ({}): it starts at your next login",
            crate::io::text::log_line(String::from_utf8_lossy(&out.stderr).trim())
        )),
        Err(_) => Some("systemctl was not found: the unit starts at your next login where systemd manages the session".to_owned()),
    }
}

pub(super) fn enable(
    exe: &std::path::Path,
    args: &[String],
) -> Result<LoginStart, LoginStartError> {
    let (unit, link) = paths()?;
    ours_or_absent(&unit)?;
    let text = unit_text(exe, args);
    write_atomic(&unit, text.as_bytes(), Mode::Private, Backup::None)?;
    let wants = link.parent().ok_or(LoginStartError::NoHome)?;
    std::fs::create_dir_all(wants).map_err(|source| LoginStartError::File {
        what: "create",
        path: wants.to_owned(),
        source,
    })?;
    match std::fs::remove_file(&link) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(LoginStartError::File {
                what: "replace",
                path: link,
                source: e,
            });
        }
        _ => {}
    }
    std::os::unix::fs::symlink(format!("../{ENTRY}.service"), &link).map_err(|source| {
        LoginStartError::File {
            what: "link",
            path: link.clone(),
            source,
        }
    })?;
    let mut on = state()?;
    on.note = reload_manager();
    Ok(on)
}

pub(super) fn disable() -> Result<LoginStart, LoginStartError> {
    let (unit, link) = paths()?;
    ours_or_absent(&unit)?;
    for path in [&link, &unit] {
        match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(LoginStartError::File {
                    what: "remove",
                    path: path.clone(),
                    source: e,
                });
            }
            _ => {}
        }
    }
    // Best effort: a user manager that is not running has nothing loaded to forget.
    let _ = reload_manager();
    state()
}

pub(super) fn state() -> Result<LoginStart, LoginStartError> {
    let (unit, link) = paths()?;
    let text = ours_or_absent(&unit)
        .ok()
        .and_then(|()| std::fs::read_to_string(&unit).ok());
    let command = text.as_deref().and_then(|t| {
        t.lines()
            .find_map(|l| l.strip_prefix("ExecStart="))
            .map(str::to_owned)
    });
    let linked = std::fs::symlink_metadata(&link).is_ok();
    Ok(LoginStart {
        enabled: command.is_some() && linked,
        location: unit.display().to_string(),
        command,
        note: None,
    })
}
