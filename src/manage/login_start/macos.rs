//! macOS: a LaunchAgent plist that launchd reads at the next login (module doc of
//! `login_start`).

use super::{ENTRY, LoginStart, LoginStartError, ours_or_absent, plist_text};
use crate::io::atomic::{Backup, Mode, write_atomic};
use std::path::PathBuf;

fn path() -> Result<PathBuf, LoginStartError> {
    dirs::home_dir()
        .map(|h| {
            h.join("Library")
                .join("LaunchAgents")
                .join(format!("io.github.{ENTRY}.serve.plist"))
        })
        .ok_or(LoginStartError::NoHome)
}

pub(super) fn enable(
    exe: &std::path::Path,
    args: &[String],
) -> Result<LoginStart, LoginStartError> {
    let path = path()?;
    ours_or_absent(&path)?;
    write_atomic(
        &path,
        plist_text(exe, args).as_bytes(),
        Mode::Private,
        Backup::None,
    )?;
    let mut on = state()?;
    on.note = Some("launchd starts it at your next login".to_owned());
    Ok(on)
}

pub(super) fn disable() -> Result<LoginStart, LoginStartError> {
    let path = path()?;
    ours_or_absent(&path)?;
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(LoginStartError::File {
            what: "remove",
            path,
            source: e,
        }),
        _ => state(),
    }
}

pub(super) fn state() -> Result<LoginStart, LoginStartError> {
    let path = path()?;
    let enabled = path.exists() && ours_or_absent(&path).is_ok();
    Ok(LoginStart {
        enabled,
        location: path.display().to_string(),
        command: None,
        note: None,
    })
}
