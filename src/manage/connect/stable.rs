//! The program an agent's entry names: a path that lasts. An installed binary (`/usr/bin`,
//! `~/.cargo/bin`, Program Files) is named as it is. A binary in a cargo build directory or a
//! temporary directory ([`super::location::fragile`]) is copied to
//! `<data dir>/mcp-companion/bin/mcp-companion[.exe]` and the copy is named, so the entry
//! outlives `cargo clean`, a moved checkout and a cleared `/tmp`.
//!
//! A copy goes stale when the build it came from is rebuilt. So it carries its source's stamp:
//! the copy gets the source file's modification time, and a binary whose own stamp (size,
//! modification time) is newer than the copy's, or as new with another size, replaces it when
//! it runs `connect` or `serve` ([`refresh`]); an older one leaves it (an old build never
//! downgrades what agents start). Size and time, not a hash of the content: cargo writes a new
//! file (a new time) on every build that changes it, and reading two binaries of ~100 MB at
//! every `serve` costs more than it tells.
//!
//! Writing is [`crate::io::atomic::write_atomic_stamped`] (temp file + rename; 0755 on unix),
//! so an agent starting the copy meanwhile runs the old file or the new one, never a torn one.
//! Windows refuses to replace (or delete) a program that is running, and a companion the bridge
//! started from the copy may be: there the copy is first renamed aside
//! (`mcp-companion.old-<pid>-<n>.exe`, which Windows allows), then written anew; set-aside
//! files that no longer run are deleted at the next write.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::location::{self, Fragile};
use crate::io::atomic::{Backup, Mode, write_atomic_stamped};

/// The copy's file name: `mcp-companion`, `mcp-companion.exe` on Windows.
pub fn file_name() -> String {
    format!("mcp-companion{}", std::env::consts::EXE_SUFFIX)
}

/// Where the stable copy lives under the OS data dir `data_dir` (`~/.local/share`,
/// `~/Library/Application Support`, `%APPDATA%`): `<data_dir>/mcp-companion/bin/<file_name>`.
pub fn copy_path(data_dir: &Path) -> PathBuf {
    data_dir.join("mcp-companion").join("bin").join(file_name())
}

/// This machine's copy path (`None` without a data dir).
pub fn current_copy_path() -> Option<PathBuf> {
    dirs::data_dir().map(|d| copy_path(&d))
}

/// What an entry should run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Program {
    /// This path, as it is: it lasts (or there is nowhere to copy it, see `fragile`).
    AsIs {
        /// The program.
        path: PathBuf,
        /// Why it may not last, when it may not (no data dir to copy it into).
        fragile: Option<Fragile>,
    },
    /// The stable copy of `from` at `to`.
    Copy {
        /// The running binary.
        from: PathBuf,
        /// The copy the entry names.
        to: PathBuf,
        /// Where `from` lies that does not last.
        why: Fragile,
    },
}

impl Program {
    /// The path the entry names.
    pub fn path(&self) -> &Path {
        match self {
            Program::AsIs { path, .. } => path,
            Program::Copy { to, .. } => to,
        }
    }
}

/// The decision of the module docs for the binary `exe`: a copy at `copy` when `exe` lies in
/// a build or temporary directory (`temp_dirs`) and is not that copy; else `exe` as it is.
pub fn choose(exe: &Path, temp_dirs: &[PathBuf], copy: Option<&Path>) -> Program {
    let fragile = location::fragile(exe, temp_dirs);
    match (fragile, copy) {
        (Some(why), Some(to)) if exe != to => Program::Copy {
            from: exe.to_owned(),
            to: to.to_owned(),
            why,
        },
        (fragile, _) => Program::AsIs {
            path: exe.to_owned(),
            fragile,
        },
    }
}

/// What [`install`] did to the copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Installed {
    /// It was missing or older; it is now the source.
    Written,
    /// It already had the source's stamp.
    Fresh,
    /// It is newer than the source, which did not replace it.
    Newer,
}

/// Why the copy could not be written.
#[derive(Debug, thiserror::Error)]
#[error("could not install the stable copy {}: {reason}", to.display())]
pub struct InstallError {
    /// The copy.
    pub to: PathBuf,
    /// What failed, and what the OS said.
    pub reason: String,
}

/// A file's stamp: size in bytes and modification time.
fn stamp(path: &Path) -> std::io::Result<(u64, SystemTime)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.len(), meta.modified()?))
}

/// Makes `to` a copy of `from` unless it is as new or newer (module docs), carrying `from`'s
/// modification time. `rename_aside`: move the old copy out of the way first (Windows).
///
/// # Errors
/// [`InstallError`] when `from` cannot be read or `to` written; `to` is unchanged then.
pub fn install(from: &Path, to: &Path, rename_aside: bool) -> Result<Installed, InstallError> {
    let failed = |what: &str, e: &dyn std::fmt::Display| InstallError {
        to: to.to_owned(),
        reason: format!("{what}: {e}"),
    };
    let (size, modified) = stamp(from).map_err(|e| failed(&from.display().to_string(), &e))?;
    if let Ok((copy_size, copy_modified)) = stamp(to) {
        if copy_modified > modified {
            return Ok(Installed::Newer);
        }
        if copy_modified == modified && copy_size == size {
            return Ok(Installed::Fresh);
        }
    }
    let bytes = std::fs::read(from).map_err(|e| failed(&from.display().to_string(), &e))?;
    if rename_aside {
        set_aside(to).map_err(|e| failed("could not move the old copy aside", &e))?;
    }
    write_atomic_stamped(to, &bytes, Mode::Program, Backup::None, Some(modified))
        .map_err(|e| failed("write", &e))?;
    Ok(Installed::Written)
}

/// Renames `to` to `<stem>.old-<pid>-<n><ext>` beside it, after deleting the set-aside files
/// an earlier write left (those still running cannot be deleted and stay). Nothing to do
/// without `to`.
fn set_aside(to: &Path) -> std::io::Result<()> {
    let (Some(dir), Some(name)) = (to.parent(), to.file_name().and_then(|n| n.to_str())) else {
        return Ok(());
    };
    let (stem, ext) = match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => (stem, format!(".{ext}")),
        _ => (name, String::new()),
    };
    let prefix = format!("{stem}.old-");
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                // A set-aside copy that still runs cannot be deleted yet; the next write tries
                // again.
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    if !to.exists() {
        return Ok(());
    }
    for n in 0..100u32 {
        let aside = dir.join(format!("{prefix}{}-{n}{ext}", std::process::id()));
        if !aside.exists() {
            return std::fs::rename(to, aside);
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "every set-aside name is taken",
    ))
}

/// Installs or refreshes the copy for `program` ([`choose`]); nothing for [`Program::AsIs`].
///
/// # Errors
/// [`InstallError`].
pub fn ensure(program: &Program) -> Result<Option<Installed>, InstallError> {
    match program {
        Program::AsIs { .. } => Ok(None),
        Program::Copy { from, to, .. } => install(from, to, cfg!(windows)).map(Some),
    }
}

/// At `serve`: when a stable copy exists at `copy` and `exe` is another `mcp-companion`
/// binary newer than it, refreshes the copy (so agents that start it get this build). Never
/// creates one (only `connect` does); `Ok(None)` when there was nothing to do.
///
/// # Errors
/// [`InstallError`].
pub fn refresh(exe: &Path, copy: &Path) -> Result<Option<Installed>, InstallError> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    let named_ours = exe
        .file_name()
        .is_some_and(|n| n == std::ffi::OsStr::new(&file_name()));
    if !copy.is_file() || !named_ours || same(exe, copy) {
        return Ok(None);
    }
    install(exe, copy, cfg!(windows)).map(Some)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn set_time(path: &Path, time: SystemTime) {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }

    #[test]
    fn a_fragile_binary_is_copied_and_an_installed_one_named_as_it_is() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        std::fs::create_dir_all(r.join("repo/target/debug")).unwrap();
        let copy = copy_path(&r.join("data"));
        let temps = [r.join("tmp")];
        let built = r.join("repo/target/debug/mcp-companion");
        match choose(&built, &temps, Some(&copy)) {
            Program::Copy { from, to, why } => {
                assert_eq!((from, to.clone()), (built.clone(), copy.clone()));
                assert_eq!(why, Fragile::BuildDir(r.join("repo/target")));
            }
            other => panic!("{other:?}"),
        }
        let in_tmp = r.join("tmp/x/mcp-companion");
        assert_eq!(choose(&in_tmp, &temps, Some(&copy)).path(), copy);
        let installed = r.join("home/.cargo/bin/mcp-companion");
        assert_eq!(
            choose(&installed, &temps, Some(&copy)),
            Program::AsIs {
                path: installed.clone(),
                fragile: None
            }
        );
        // No data dir: the fragile path as it is, and why.
        assert!(matches!(
            choose(&built, &temps, None),
            Program::AsIs {
                fragile: Some(Fragile::BuildDir(_)),
                ..
            }
        ));
        // The copy itself lies under a temporary dir here: it is still named as it is.
        let copy_in_tmp = copy_path(&r.join("tmp/data"));
        assert!(matches!(
            choose(&copy_in_tmp, &temps, Some(&copy_in_tmp)),
            Program::AsIs { .. }
        ));
        assert!(copy.ends_with(Path::new("mcp-companion/bin").join(file_name())));
    }

    #[test]
    fn the_copy_follows_newer_builds_and_never_older_ones() {
        let root = tempfile::tempdir().unwrap();
        let from = root.path().join("target/debug/mcp-companion");
        std::fs::create_dir_all(from.parent().unwrap()).unwrap();
        let to = copy_path(&root.path().join("data"));
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        std::fs::write(&from, b"build one").unwrap();
        set_time(&from, t0);

        assert_eq!(install(&from, &to, false).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&to).unwrap(), b"build one");
        assert_eq!(stamp(&to).unwrap(), stamp(&from).unwrap());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&to).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        assert_eq!(install(&from, &to, false).unwrap(), Installed::Fresh);

        // A rebuild: newer time.
        std::fs::write(&from, b"build two, longer").unwrap();
        set_time(&from, t0 + Duration::from_secs(60));
        assert_eq!(install(&from, &to, false).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&to).unwrap(), b"build two, longer");

        // Same time, another size: replaced too.
        std::fs::write(&from, b"build two").unwrap();
        set_time(&from, t0 + Duration::from_secs(60));
        assert_eq!(install(&from, &to, false).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&to).unwrap(), b"build two");

        // An older build leaves the copy as it is.
        std::fs::write(&from, b"old build").unwrap();
        set_time(&from, t0);
        assert_eq!(install(&from, &to, false).unwrap(), Installed::Newer);
        assert_eq!(std::fs::read(&to).unwrap(), b"build two");
    }

    #[test]
    fn set_aside_moves_the_running_copy_away_and_sweeps_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("mcp-companion.exe");
        let earlier = dir.path().join("mcp-companion.old-1-0.exe");
        std::fs::write(&earlier, b"older").unwrap();
        std::fs::write(&to, b"running").unwrap();
        let from = dir.path().join("src/mcp-companion.exe");
        std::fs::create_dir_all(from.parent().unwrap()).unwrap();
        std::fs::write(&from, b"new").unwrap();
        set_time(&from, SystemTime::now() + Duration::from_secs(5));
        assert_eq!(install(&from, &to, true).unwrap(), Installed::Written);
        assert_eq!(std::fs::read(&to).unwrap(), b"new");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".old-"))
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].ends_with(".exe") && names[0] != "mcp-companion.old-1-0.exe");
        assert_eq!(
            std::fs::read(dir.path().join(&names[0])).unwrap(),
            b"running"
        );
    }

    #[test]
    fn serve_refreshes_only_an_existing_copy_from_another_binary_of_ours() {
        let root = tempfile::tempdir().unwrap();
        let exe = root.path().join("build").join(file_name());
        std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
        std::fs::write(&exe, b"new build").unwrap();
        let to = copy_path(&root.path().join("data"));
        assert_eq!(refresh(&exe, &to).unwrap(), None, "no copy: none made");
        assert!(!to.exists());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(&to, b"old").unwrap();
        set_time(&to, SystemTime::now() - Duration::from_secs(3600));
        let desktop = root.path().join("build/mcp-companion-desktop");
        std::fs::write(&desktop, b"desktop").unwrap();
        assert_eq!(refresh(&desktop, &to).unwrap(), None, "not the CLI");
        assert_eq!(refresh(&to, &to).unwrap(), None, "the copy itself");
        assert_eq!(refresh(&exe, &to).unwrap(), Some(Installed::Written));
        assert_eq!(std::fs::read(&to).unwrap(), b"new build");
    }
}
