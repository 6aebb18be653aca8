//! Whether the binary an entry would run sits somewhere that does not last: a cargo build
//! directory (rebuilt, cleaned, or moved with the checkout) or a temporary directory (cleared
//! at reboot). An agent whose entry points there loses its tools the day that file goes, so
//! `connect` and `start-at-login` name a stable copy instead ([`super::stable`]).

use std::path::{Path, PathBuf};

/// Where an entry's program lives, when that place does not last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fragile {
    /// Inside a cargo target directory (the one holding `CACHEDIR.TAG`).
    BuildDir(PathBuf),
    /// Inside a temporary directory.
    TempDir(PathBuf),
}

impl std::fmt::Display for Fragile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fragile::BuildDir(d) => write!(f, "inside the cargo build directory {}", d.display()),
            Fragile::TempDir(d) => write!(f, "inside the temporary directory {}", d.display()),
        }
    }
}

/// Whether `program` lies in a build directory or under one of `temp_dirs`.
///
/// A cargo target directory is recognised by the `CACHEDIR.TAG` file cargo writes at its top
/// (whatever it is named, `CARGO_TARGET_DIR` included), by a directory named `target` that
/// holds `debug` or `release`, or by a profile directory (`debug`, `release`, any name) that
/// holds cargo's `.fingerprint` and `deps` — a target directory made without the tag (copied,
/// or linked from a template) — whose parent is then named.
pub fn fragile(program: &Path, temp_dirs: &[PathBuf]) -> Option<Fragile> {
    for dir in program.ancestors().skip(1) {
        let tagged = dir.join("CACHEDIR.TAG").is_file();
        let cargo_like = dir.file_name().is_some_and(|n| n == "target")
            && (dir.join("debug").is_dir() || dir.join("release").is_dir());
        if tagged || cargo_like {
            return Some(Fragile::BuildDir(dir.to_path_buf()));
        }
        if dir.join(".fingerprint").is_dir() && dir.join("deps").is_dir() {
            let target = dir.parent().unwrap_or(dir);
            return Some(Fragile::BuildDir(target.to_path_buf()));
        }
    }
    temp_dirs
        .iter()
        .find(|t| program.starts_with(t))
        .map(|t| Fragile::TempDir(t.clone()))
}

/// The temporary directories of this machine: the OS's (`TMPDIR`, `%TEMP%`), and on Unix
/// `/tmp` and `/var/tmp`, each also as its canonical path.
pub fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![std::env::temp_dir()];
    #[cfg(unix)]
    dirs.extend([PathBuf::from("/tmp"), PathBuf::from("/var/tmp")]);
    let canonical: Vec<PathBuf> = dirs.iter().filter_map(|d| d.canonicalize().ok()).collect();
    dirs.extend(canonical);
    dirs.sort();
    dirs.dedup();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_and_temporary_directories_are_named_and_others_pass() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let tagged = r.join("targets/x");
        std::fs::create_dir_all(tagged.join("debug")).unwrap();
        std::fs::write(
            tagged.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55",
        )
        .unwrap();
        std::fs::create_dir_all(r.join("repo/target/release")).unwrap();
        std::fs::create_dir_all(r.join("home/.cargo/bin")).unwrap();
        // A target dir without its tag, not named `target`.
        std::fs::create_dir_all(r.join("builds/one/debug/.fingerprint")).unwrap();
        std::fs::create_dir_all(r.join("builds/one/debug/deps")).unwrap();
        let temps = [r.join("tmp")];
        let cases = [
            (
                tagged.join("debug/mcp-companion"),
                Some(Fragile::BuildDir(tagged.clone())),
            ),
            (
                r.join("repo/target/release/mcp-companion"),
                Some(Fragile::BuildDir(r.join("repo/target"))),
            ),
            (
                r.join("tmp/x/mcp-companion"),
                Some(Fragile::TempDir(r.join("tmp"))),
            ),
            (
                r.join("builds/one/debug/mcp-companion"),
                Some(Fragile::BuildDir(r.join("builds/one"))),
            ),
            (
                r.join("builds/one/debug/deps/mcp_companion-0123abcd"),
                Some(Fragile::BuildDir(r.join("builds/one"))),
            ),
            (r.join("home/.cargo/bin/mcp-companion"), None),
            (r.join("tmpfoo/mcp-companion"), None),
        ];
        for (program, want) in cases {
            assert_eq!(fragile(&program, &temps), want, "{}", program.display());
        }
    }
}
