//! Windows: the `MCP Companion` value under the user's `Run` key, written and read through
//! `reg.exe` (module doc of `login_start`).

use super::{LoginStart, LoginStartError, windows_command};

const KEY: &str = r"HKCU\Software\Microsoft\Windows\CurrentVersion\Run";
const VALUE: &str = "MCP Companion";

fn reg(action: &'static str, args: &[&str]) -> Result<String, LoginStartError> {
    let out = std::process::Command::new("reg.exe")
        .arg(action)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| LoginStartError::Registry {
            action,
            said: e.to_string(),
        })?;
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.success() {
        Ok(said)
    } else {
        Err(LoginStartError::Registry {
            action,
            said: crate::io::text::log_line(
                format!("{said}{}", String::from_utf8_lossy(&out.stderr)).trim(),
            )
            .into_owned(),
        })
    }
}

pub(super) fn enable(
    exe: &std::path::Path,
    args: &[String],
) -> Result<LoginStart, LoginStartError> {
    let line = windows_command(exe, args);
    reg(
        "add",
        &[KEY, "/v", VALUE, "/t", "REG_SZ", "/d", &line, "/f"],
    )?;
    state()
}

pub(super) fn disable() -> Result<LoginStart, LoginStartError> {
    if state()?.enabled {
        reg("delete", &[KEY, "/v", VALUE, "/f"])?;
    }
    state()
}

pub(super) fn state() -> Result<LoginStart, LoginStartError> {
    let command = reg("query", &[KEY, "/v", VALUE]).ok().and_then(|out| {
        out.lines()
            .find_map(|l| l.split_once("REG_SZ").map(|(_, v)| v.trim().to_owned()))
    });
    Ok(LoginStart {
        enabled: command.is_some(),
        location: format!(r"{KEY}\{VALUE}"),
        command,
        note: None,
    })
}
