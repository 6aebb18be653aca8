//! Paths inside a bundle, and where bundles are unpacked.
//!
//! A path from the archive (an entry's name, `server.entry_point`, a relative command) is
//! accepted only when it stays inside the bundle's directory on every OS: relative, `/` as
//! the only separator, no `..`, no drive letter or `\`, no NUL or other control character.

use std::path::{Path, PathBuf};

/// The components of `name` when it is a safe relative path (empty and `.` components are
/// dropped), else why not.
///
/// # Errors
/// A human-readable reason.
pub fn relative(name: &str) -> Result<Vec<&str>, String> {
    if name.is_empty() {
        return Err("the path is empty".into());
    }
    if name.starts_with('/') {
        return Err("an absolute path".into());
    }
    if name.contains('\\') {
        return Err("a '\\' in the path (Windows separators are refused)".into());
    }
    if name.chars().any(char::is_control) {
        return Err("a control character in the path".into());
    }
    if name.len() >= 2 && name.as_bytes()[1] == b':' {
        return Err("a drive letter".into());
    }
    let parts: Vec<&str> = name
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("a \"..\" component (it would leave the bundle's directory)".into());
    }
    if parts.is_empty() {
        return Err("the path names no file".into());
    }
    Ok(parts)
}

/// `dir` joined with the safe relative path `name`.
///
/// # Errors
/// As [`relative`].
pub fn inside(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let mut out = dir.to_path_buf();
    for part in relative(name)? {
        out.push(part);
    }
    Ok(out)
}

/// The directory bundles are unpacked into: `<OS data dir>/mcp-companion/bundles` (on Linux
/// `$XDG_DATA_HOME/mcp-companion/bundles`, else `~/.local/share/mcp-companion/bundles`).
pub fn bundles_root() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("mcp-companion").join("bundles"))
}

/// A directory name for server `server` installing a bundle whose SHA-256 starts with
/// `hash8`: `<server, letters digits - _ only>-<hash8>`, then `-2`, `-3`… while `root` already
/// has it.
pub fn fresh_dir(root: &Path, server: &str, hash8: &str) -> PathBuf {
    let clean: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    let base = format!("{clean}-{hash8}");
    let mut candidate = root.join(&base);
    let mut n = 2;
    while candidate.exists() {
        candidate = root.join(format!("{base}-{n}"));
        n += 1;
    }
    candidate
}

/// Whether `dir` is a directory directly inside `root` (both resolved): the only directories
/// `remove` deletes, whatever an edited `source.dir` says.
pub fn is_bundle_dir(root: &Path, dir: &Path) -> bool {
    match (std::fs::canonicalize(root), std::fs::canonicalize(dir)) {
        (Ok(root), Ok(dir)) => dir.parent() == Some(root.as_path()) && dir.is_dir(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_that_stay_inside_are_accepted() {
        assert_eq!(relative("server/index.js").unwrap(), ["server", "index.js"]);
        assert_eq!(relative("./a//b/").unwrap(), ["a", "b"]);
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a\\..\\x",
            "C:/x",
            "a\0b",
            ".",
            "a/\nb",
        ] {
            assert!(relative(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            inside(Path::new("/d"), "s/x.js").unwrap(),
            Path::new("/d/s/x.js")
        );
    }

    #[test]
    fn fresh_dirs_never_reuse_an_existing_one_and_only_children_count() {
        let root = tempfile::tempdir().unwrap();
        let a = fresh_dir(root.path(), "we ird/name", "0123abcd");
        assert_eq!(a.file_name().unwrap(), "we-ird-name-0123abcd");
        std::fs::create_dir(&a).unwrap();
        let b = fresh_dir(root.path(), "we ird/name", "0123abcd");
        assert_eq!(b.file_name().unwrap(), "we-ird-name-0123abcd-2");
        assert!(is_bundle_dir(root.path(), &a));
        assert!(!is_bundle_dir(root.path(), root.path()));
        assert!(!is_bundle_dir(root.path(), &a.join("..").join("..")));
        assert!(!is_bundle_dir(root.path(), Path::new("/tmp")));
    }
}
