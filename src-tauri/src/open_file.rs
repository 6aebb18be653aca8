//! Opening the app on a bundle file: the desktop file association starts it with the file's
//! path (`Exec=… %F`), and a second launch hands its arguments to the running one (the
//! single-instance plugin). The path waits in [`Desktop`](crate::state::Desktop) until the
//! window takes it; a running window is told with the `bundle-opened` event.

use std::path::{Path, PathBuf};

use tauri::{Emitter, Runtime};

use crate::state::DesktopExt;

/// The event telling the window a bundle file waits (payload: its path).
pub const BUNDLE_OPENED: &str = "bundle-opened";

/// The first argument of `args` (program name excluded) that names a `.mcpb` file, as an
/// absolute path (relative to `cwd`, the launching process's directory); a `file://` URI is
/// taken as its path.
pub fn bundle_arg(args: &[String], cwd: &Path) -> Option<PathBuf> {
    args.iter().find_map(|a| {
        let path = a
            .strip_prefix("file://")
            .map_or_else(|| a.clone(), unescape);
        let p = Path::new(&path);
        let is_bundle = p
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("mcpb"));
        is_bundle.then(|| cwd.join(p))
    })
}

/// `%XX` escapes of a `file://` URI's path decoded (bytes that do not decode stay as they are).
fn unescape(path: &str) -> String {
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Keeps `path` for the window, tells a window already loaded, and shows it.
pub fn open<R: Runtime>(app: &tauri::AppHandle<R>, path: &Path) {
    let path = path.display().to_string();
    tracing::info!(bundle = %path, "asked to open a bundle");
    app.desktop().set_opened_bundle(path.clone());
    if let Err(e) = app.emit(BUNDLE_OPENED, path) {
        tracing::warn!(error = %e, "cannot tell the window about the bundle");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_mcpb_argument_is_the_bundle() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let cwd = Path::new("/home/me");
        assert_eq!(bundle_arg(&args(&[]), cwd), None);
        assert_eq!(bundle_arg(&args(&["--flag", "notes.txt"]), cwd), None);
        assert_eq!(
            bundle_arg(&args(&["Downloads/a.MCPB", "/b.mcpb"]), cwd),
            Some(PathBuf::from("/home/me/Downloads/a.MCPB"))
        );
        assert_eq!(
            bundle_arg(&args(&["/tmp/x.mcpb"]), cwd),
            Some(PathBuf::from("/tmp/x.mcpb"))
        );
        assert_eq!(
            bundle_arg(&args(&["file:///tmp/my%20bundle.mcpb"]), cwd),
            Some(PathBuf::from("/tmp/my bundle.mcpb"))
        );
    }
}
