//! Which program the Connect page tells agents to spawn with `bridge`.
//!
//! The snippets must name a stable, installed path. The packages put the `mcp-companion` CLI
//! beside the app (`/usr/bin/mcp-companion` next to `/usr/bin/mcp-companion-desktop` from the
//! .deb/.rpm); a build folder has it beside the app too. An AppImage runs from a temporary mount
//! (`/tmp/.mount_…`) that is gone once the app quits, so there the `.AppImage` file itself
//! (`$APPIMAGE`) is named: it starts the desktop binary, which answers `bridge` as well
//! ([`crate::subcommand`]). Without any of these, the desktop binary itself is named. A CLI
//! beside the app in a build directory is then named by its stable copy (the Connect command
//! does that, as `mcp-companion connect` does).

use std::path::{Path, PathBuf};

/// The program for `<program> bridge`, for this process.
pub fn bridge_program() -> PathBuf {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("mcp-companion-desktop"));
    let appimage = std::env::var_os("APPIMAGE").map(PathBuf::from);
    choose(&exe, appimage, |p| p.is_file())
}

/// The rule of the module docs: `exe` is this binary, `appimage` the `APPIMAGE` variable,
/// `is_file` the file system.
pub fn choose(exe: &Path, appimage: Option<PathBuf>, is_file: impl Fn(&Path) -> bool) -> PathBuf {
    if let Some(image) = appimage.filter(|p| p.is_absolute() && is_file(p)) {
        return image;
    }
    let cli = exe.with_file_name(format!("mcp-companion{}", std::env::consts::EXE_SUFFIX));
    if is_file(&cli) {
        cli
    } else {
        exe.to_path_buf()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &'static [&'static str]) -> impl Fn(&Path) -> bool {
        move |p| list.iter().any(|f| Path::new(f) == p)
    }

    #[test]
    fn the_packaged_cli_beside_the_app_is_named() {
        let cli = format!("/usr/bin/mcp-companion{}", std::env::consts::EXE_SUFFIX);
        let exe = Path::new("/usr/bin/mcp-companion-desktop");
        let present = move |p: &Path| p == Path::new(&cli) || p == exe;
        assert_eq!(
            choose(exe, None, present),
            PathBuf::from(format!(
                "/usr/bin/mcp-companion{}",
                std::env::consts::EXE_SUFFIX
            ))
        );
    }

    #[test]
    fn an_appimage_names_its_own_file_not_the_temporary_mount() {
        let exe = Path::new("/tmp/.mount_MCPabc/usr/bin/mcp-companion-desktop");
        let image = PathBuf::from("/home/u/Apps/MCP_Companion.AppImage");
        let found = choose(
            exe,
            Some(image.clone()),
            files(&["/home/u/Apps/MCP_Companion.AppImage"]),
        );
        assert_eq!(found, image);
        // A stale or relative APPIMAGE is ignored.
        let relative = choose(exe, Some("x.AppImage".into()), |_| true);
        assert_ne!(relative, PathBuf::from("x.AppImage"));
        assert_eq!(choose(exe, Some(image), files(&[])), exe);
    }

    #[test]
    fn without_a_cli_the_app_itself_answers_bridge() {
        let exe = Path::new("/opt/mcp/mcp-companion-desktop");
        assert_eq!(choose(exe, None, files(&[])), exe);
    }
}
