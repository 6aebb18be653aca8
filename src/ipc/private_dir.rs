//! The directory the Unix sockets and the lock live in, and the stale socket they replace
//! (DESIGN §10). Nothing here follows a symbolic link or deletes what is not a socket: when
//! `$XDG_RUNTIME_DIR/mcp-companion` is a link to another user's directory or to a shared sticky
//! one, it is refused before anything is chmod-ed, locked or bound.
//!
//! | directory | missing | exists |
//! |---|---|---|
//! | [`SocketDir::Own`] (the per-user default) | created 0700 | must be ours; group/other bits removed |
//! | [`SocketDir::Chosen`] (`--socket`) | created 0700 | never changed; refused when another user owns it (root's sticky `/tmp` excepted) or may replace files in it (group/other write without the sticky bit) |

use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt};
use std::path::Path;

use rustix::fs::OFlags;
use rustix::io::Errno;

use super::paths::SocketDir;
use super::socket::SocketError;

/// Removes a stale socket at `path`; anything else there is refused, never deleted.
pub(super) fn remove_stale_socket(path: &Path) -> Result<(), SocketError> {
    let bind_err = |source| SocketError::Bind {
        path: path.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(bind_err(source)),
        Ok(meta) if meta.file_type().is_socket() => match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(bind_err(e)),
            _ => Ok(()),
        },
        Ok(_) => Err(SocketError::NotASocket {
            path: path.to_path_buf(),
        }),
    }
}

/// Makes `dir` a private directory of ours, changing nothing when it cannot be one: the rules
/// of [`SocketDir::Own`], see [`prepare_socket_dir`].
///
/// # Errors
/// As [`prepare_socket_dir`].
pub fn prepare_private_dir(dir: &Path) -> Result<(), SocketError> {
    prepare_socket_dir(dir, SocketDir::Own)
}

/// Prepares `dir` to hold the sockets and the lock, by the rules of `kind` (the module table).
///
/// `dir` itself must not be a symbolic link (checked with `lstat`, then opened with
/// `O_NOFOLLOW | O_DIRECTORY`, so a link swapped in between fails too). A missing `dir` is
/// created with mode 0700 (its parents as needed, they may be links: `$XDG_RUNTIME_DIR`
/// often is). An existing [`SocketDir::Own`] must belong to us, and group/other bits are
/// removed with `fchmod` on the opened directory; an existing [`SocketDir::Chosen`] is only
/// checked.
///
/// # Errors
/// [`SocketError::Symlink`], [`SocketError::NotADirectory`], [`SocketError::NotPrivate`],
/// [`SocketError::SharedDirectory`], or [`SocketError::Directory`] with what the OS said.
pub fn prepare_socket_dir(dir: &Path, kind: SocketDir) -> Result<(), SocketError> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir_err = |source| SocketError::Directory {
        path: dir.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(SocketError::Symlink {
                path: dir.to_path_buf(),
            });
        }
        Ok(meta) if !meta.is_dir() => {
            return Err(SocketError::NotADirectory {
                path: dir.to_path_buf(),
            });
        }
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                std::fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(parent)
                    .map_err(dir_err)?;
            }
            match std::fs::DirBuilder::new().mode(0o700).create(dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(dir_err(e)),
                _ => {}
            }
        }
        Err(e) => return Err(dir_err(e)),
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags((OFlags::NOFOLLOW | OFlags::DIRECTORY).bits() as i32)
        .open(dir)
        .map_err(|e| match e.raw_os_error().map(Errno::from_raw_os_error) {
            // A link swapped in after the lstat above.
            Some(Errno::LOOP) => SocketError::Symlink {
                path: dir.to_path_buf(),
            },
            Some(Errno::NOTDIR) => SocketError::NotADirectory {
                path: dir.to_path_buf(),
            },
            _ => dir_err(e),
        })?;
    let meta = opened.metadata().map_err(dir_err)?;
    let me = rustix::process::geteuid().as_raw();
    let mode = meta.mode() & 0o7777;
    let sticky = mode & 0o1000 != 0;
    if kind == SocketDir::Chosen {
        // Root's sticky directories (`/tmp`): nobody else may delete or replace our files there.
        if meta.uid() != me && !(meta.uid() == 0 && sticky) {
            return Err(SocketError::NotPrivate {
                path: dir.to_path_buf(),
                owner: meta.uid(),
                mode,
            });
        }
        if mode & 0o022 != 0 && !sticky {
            return Err(SocketError::SharedDirectory {
                path: dir.to_path_buf(),
                mode,
            });
        }
        return Ok(());
    }
    if meta.uid() != me {
        return Err(SocketError::NotPrivate {
            path: dir.to_path_buf(),
            owner: meta.uid(),
            mode,
        });
    }
    if mode & 0o077 != 0 {
        opened
            .set_permissions(std::fs::Permissions::from_mode(0o700))
            .map_err(dir_err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").mode() & 0o7777
    }

    #[test]
    fn a_missing_directory_is_created_private_and_an_open_one_is_tightened() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join("a/b/mcp-companion");
        prepare_private_dir(&dir).expect("create");
        assert_eq!(mode(&dir), 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        prepare_private_dir(&dir).expect("tighten");
        assert_eq!(mode(&dir), 0o700);
    }

    #[test]
    fn a_chosen_directory_is_created_private_but_an_existing_one_is_never_changed() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let fresh = tmp.path().join("new/run");
        prepare_socket_dir(&fresh, SocketDir::Chosen).expect("create");
        assert_eq!(mode(&fresh), 0o700);
        // A home directory (0755), a shared sticky one (1777): used as they are.
        for want in [0o755, 0o711, 0o700, 0o1777, 0o1733] {
            let dir = tmp.path().join(format!("d{want:o}"));
            std::fs::create_dir(&dir).expect("mkdir");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(want)).expect("chmod");
            prepare_socket_dir(&dir, SocketDir::Chosen).expect("usable as it is");
            assert_eq!(mode(&dir), want, "chmod-ed");
        }
        // Others may replace files in it: refused, and still not changed.
        for want in [0o777, 0o775, 0o757] {
            let dir = tmp.path().join(format!("open{want:o}"));
            std::fs::create_dir(&dir).expect("mkdir");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(want)).expect("chmod");
            let err = prepare_socket_dir(&dir, SocketDir::Chosen).expect_err("open dir accepted");
            assert!(matches!(err, SocketError::SharedDirectory { .. }), "{err}");
            assert!(
                err.to_string().contains(&format!("mode {want:04o}")),
                "{err}"
            );
            assert_eq!(mode(&dir), want, "chmod-ed");
        }
        // Symbolic links are refused for chosen directories too.
        let link = tmp.path().join("link");
        symlink(&fresh, &link).expect("symlink");
        let err = prepare_socket_dir(&link, SocketDir::Chosen).expect_err("link accepted");
        assert!(matches!(err, SocketError::Symlink { .. }), "{err}");
    }

    #[test]
    fn a_symlinked_directory_is_refused_and_its_target_left_untouched() {
        let tmp = tempfile::tempdir().expect("tempdir");
        // Another directory (think: another user's), and a shared sticky one like /tmp.
        let other = tmp.path().join("other");
        std::fs::create_dir(&other).expect("mkdir");
        std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let sticky = tmp.path().join("sticky");
        std::fs::create_dir(&sticky).expect("mkdir");
        std::fs::set_permissions(&sticky, std::fs::Permissions::from_mode(0o1777)).expect("chmod");
        for (target, want_mode) in [(&other, 0o755), (&sticky, 0o1777)] {
            let link = tmp.path().join("link");
            let _ = std::fs::remove_file(&link);
            symlink(target, &link).expect("symlink");
            let err = prepare_private_dir(&link).expect_err("symlink accepted");
            assert!(matches!(err, SocketError::Symlink { .. }), "{err}");
            assert!(err.to_string().contains("symbolic link"), "{err}");
            assert_eq!(mode(target), want_mode, "target chmod-ed");
            assert_eq!(std::fs::read_dir(target).expect("ls").count(), 0);
        }
    }

    #[test]
    fn a_file_where_the_directory_should_be_is_refused() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let file = tmp.path().join("f");
        std::fs::write(&file, "keep").expect("write");
        let err = prepare_private_dir(&file).expect_err("file accepted");
        assert!(matches!(err, SocketError::NotADirectory { .. }), "{err}");
    }

    #[test]
    fn only_a_socket_is_removed_from_the_socket_path() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("mcp.sock");
        std::fs::write(&path, "precious").expect("write");
        let err = remove_stale_socket(&path).expect_err("regular file removed");
        assert!(matches!(err, SocketError::NotASocket { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("kept"), "precious");

        std::fs::remove_file(&path).expect("rm");
        let target = tmp.path().join("target");
        std::fs::write(&target, "precious").expect("write");
        symlink(&target, &path).expect("symlink");
        assert!(remove_stale_socket(&path).is_err(), "symlink removed");
        assert!(path.symlink_metadata().is_ok() && target.exists());

        std::fs::remove_file(&path).expect("rm");
        let stale = std::os::unix::net::UnixListener::bind(&path).expect("bind");
        drop(stale);
        remove_stale_socket(&path).expect("stale socket");
        assert!(path.symlink_metadata().is_err(), "stale socket kept");
        remove_stale_socket(&path).expect("nothing there");
    }
}
