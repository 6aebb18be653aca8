//! The database file: created private (0600 in a 0700 directory) and refused when it is no
//! SQLite database; opened read-only for the `activity` command.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::{BUSY_TIMEOUT, StoreError, sqlite_error};

/// Opens the database at `path` read-only (the `activity` command). Works whether or not a
/// companion is writing it.
///
/// # Errors
/// [`StoreError::Sqlite`] when it does not exist or is not a database.
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| sqlite_error(path, &e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| sqlite_error(path, &e))?;
    Ok(conn)
}

/// Creates the directory of `path` (0700 when new) and the file (0600) if missing; an
/// existing file's mode is set to 0600.
pub(super) fn create_private(path: &Path) -> Result<(), StoreError> {
    let err = |e: std::io::Error| StoreError::Create {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(err)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(path).map_err(err)?;
    // A file that is not a database (an `activity.path` naming someone's document) is left
    // as it was, its mode too.
    if file.metadata().map_err(err)?.len() > 0 && !is_sqlite(path) {
        return Err(StoreError::Create {
            path: path.to_owned(),
            reason: "the file is not an SQLite database; it was left as it is".to_owned(),
        });
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(err)?;
    }
    drop(file);
    Ok(())
}

/// Whether `path` starts with SQLite's file header ("SQLite format 3" and a NUL).
fn is_sqlite(path: &Path) -> bool {
    use std::io::Read;
    let mut header = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .is_ok_and(|()| &header == b"SQLite format 3\0")
}
