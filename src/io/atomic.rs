//! [`write_atomic`]: the one way a file we own or edit is replaced — the companion's
//! `config.json` (`crate::config::save_atomic`) and another MCP client's config file
//! (`crate::manage::connect`).
//!
//! The problem: such a file may hold secrets and hand edits, a crash or a full disk must not
//! leave it torn, and its directory (a client's dot-directory) may be writable by tools we do
//! not control. Strategy, in order:
//!
//! 1. `path` a symlink (a dotfiles checkout): its target is replaced, so the link survives.
//! 2. The parent directory is created when missing (0700 on unix for [`Mode::Private`]).
//! 3. Temp files `.<name>.tmp-<pid>-<n>` left by killed writes are removed (unix). A write
//!    holds an exclusive `flock` on each of its temp files from creation until the rename, and
//!    the kernel drops it when the writer dies, so a temp whose lock can be taken is stale and
//!    one still being written elsewhere is never touched — without trusting the pid in the
//!    name, which the kernel may already have given to another process.
//! 4. The bytes go to a new temp file in the same directory (created exclusively, so nothing
//!    planted there is followed), with the final mode set on it, and are fsynced.
//! 5. The previous file, if any, becomes `<name>.bak` (unless [`Backup::None`]): copied to
//!    another exclusive, locked temp, which is renamed over `<name>.bak`. A rename replaces
//!    whatever is at `<name>.bak` — a symlink planted there is replaced, never written
//!    through. (A hard link would share the live file's inode, whose lock says nothing about
//!    the link, so the sweep of another write could not tell it from a stale one.)
//! 6. The temp file is renamed over the target, then the directory is fsynced (unix).
//!
//! A crash leaves the old file or the new one, never a mix, plus possibly a temp file the next
//! write removes. Rejected: `tempfile::NamedTempFile::persist` (random names the next write
//! cannot recognise as stale, and no directory fsync), and copying onto `<name>.bak` in place
//! (which follows a symlink planted there).

use std::ffi::OsStr;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The mode the written file gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// 0600 whatever the previous file had, and a missing directory is created 0700 (unix):
    /// the companion's own config, which may hold secrets.
    Private,
    /// The previous file's permissions; 0600 for a new file (unix). Another program's file,
    /// whose permissions are its user's choice.
    KeepTarget,
    /// 0755 (unix): a program we install for others to run, the stable copy of this binary
    /// that `connect` writes into client configs.
    Program,
}

/// Whether [`write_atomic`] keeps the previous file as `<name>.bak`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backup {
    /// A file a person edits: the previous bytes stay one step back.
    Keep,
    /// A file only we write and re-create at will (the endpoint record).
    None,
}

/// A step of [`write_atomic`] failed; the target is untouched then (a new `.bak` may exist).
#[derive(Debug, thiserror::Error)]
#[error("could not {step} {}: {source}", path.display())]
pub struct WriteError {
    /// The file or directory the step was working on.
    pub path: PathBuf,
    /// The step, as a verb phrase: "create temp file", "rename temp file onto", ….
    pub step: &'static str,
    /// What the OS said.
    #[source]
    pub source: io::Error,
}

fn failed<'a>(path: &'a Path, step: &'static str) -> impl FnOnce(io::Error) -> WriteError + 'a {
    move |source| WriteError {
        path: path.to_owned(),
        step,
        source,
    }
}

/// Replaces `path` with `bytes` atomically, with `mode`, keeping the previous file as
/// `<name>.bak` when `backup` says so (the module doc lists the steps and what a crash leaves).
///
/// # Errors
/// [`WriteError`] naming the failed step and its path. The target is then untouched and no
/// temp file of this call is left behind.
pub fn write_atomic(
    path: &Path,
    bytes: &[u8],
    mode: Mode,
    backup: Backup,
) -> Result<(), WriteError> {
    write_atomic_stamped(path, bytes, mode, backup, None)
}

/// [`write_atomic`], the new file's modification time set to `modified` before it gets its
/// name (so nobody sees it with another), when given.
///
/// # Errors
/// As [`write_atomic`].
pub fn write_atomic_stamped(
    path: &Path,
    bytes: &[u8],
    mode: Mode,
    backup: Backup,
    modified: Option<std::time::SystemTime>,
) -> Result<(), WriteError> {
    let path = &match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).map_err(failed(path, "resolve symlink"))?
        }
        _ => path.to_owned(),
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_dir(dir, mode)?;
    let previous = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(failed(path, "read")(e)),
    };
    sweep_stale_temps(dir, path);

    let temp = temp_path(dir, path);
    let written = write_temp(&temp, bytes, mode, previous.as_ref()).and_then(|file| {
        if let Some(time) = modified {
            file.set_modified(time)
                .map_err(failed(&temp, "set the time of"))?;
        }
        Ok(file)
    });
    let result = written.and_then(|_locked| {
        if previous.is_some() && backup == Backup::Keep {
            keep_backup(dir, path)?;
        }
        // `_locked` is still open here: the temp stays locked until it has its final name.
        fs::rename(&temp, path).map_err(failed(path, "rename temp file onto"))
    });
    if result.is_err() {
        // Best effort: the error already names the failed step.
        let _ = fs::remove_file(&temp);
    }
    result?;
    sync_dir(dir)
}

/// Takes the edit lock of `path`: an exclusive advisory lock (`flock` on unix, `LockFileEx`
/// on Windows) on the hidden `.<name>.lock` beside it (created 0600 when missing, with
/// `path`'s directory, 0700 for [`Mode::Private`]), held until the returned file is dropped. A
/// read-modify-write of `path` that holds it sees every earlier writer's change: `path`
/// itself cannot carry the lock, since [`write_atomic`] replaces it by a rename. Blocks while
/// another process or thread holds it. `path` a symlink: the lock is beside its target, as the
/// write is.
///
/// The lock file stays after the edit, empty. Removing it when done would break the lock: a
/// second editor that opened the file before the first removed it would lock the removed
/// inode, while a third creates a new file and locks that, and both would edit at once.
/// (Re-checking the inode after locking fixes that on unix, not on Windows, where a locked file
/// cannot be removed by another process.) So it is hidden instead, as the temp files are.
///
/// # Errors
/// [`WriteError`] when the directory or the lock file cannot be created or locked.
pub fn lock_beside(path: &Path, mode: Mode) -> Result<fs::File, WriteError> {
    let path = &match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).map_err(failed(path, "resolve symlink"))?
        }
        _ => path.to_owned(),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir, mode)?;
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let lock = path.with_file_name(format!(".{name}.lock"));
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(&lock)
        .map_err(failed(&lock, "open lock file"))?;
    file.lock().map_err(failed(&lock, "lock"))?;
    Ok(file)
}

fn create_dir(dir: &Path, mode: Mode) -> Result<(), WriteError> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if mode == Mode::Private {
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    }
    #[cfg(not(unix))]
    let _ = mode;
    builder.create(dir).map_err(failed(dir, "create directory"))
}

/// A fresh `.NAME.tmp-PID-N` in `dir`.
fn temp_path(dir: &Path, path: &Path) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let name = path
        .file_name()
        .unwrap_or(OsStr::new("file"))
        .to_string_lossy();
    dir.join(format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Creates `temp` exclusively and locked (0600 on unix), writes `bytes`, gives it its final
/// mode and fsyncs it. The returned file holds the lock: keep it open until `temp` is renamed.
fn write_temp(
    temp: &Path,
    bytes: &[u8],
    mode: Mode,
    previous: Option<&fs::Permissions>,
) -> Result<fs::File, WriteError> {
    let mut file = exclusive(temp)?;
    let kept = match (mode, previous) {
        (Mode::KeepTarget, Some(permissions)) => file.set_permissions(permissions.clone()),
        #[cfg(unix)]
        (Mode::Program, _) => {
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o755))
        }
        _ => Ok(()),
    };
    kept.and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all())
        .map_err(failed(temp, "write temp file"))?;
    Ok(file)
}

/// A new file at `path` (mode 0600 on unix) that must not exist yet, so nothing planted there
/// — a symlink included — is opened; on unix it is returned holding an exclusive `flock`,
/// which marks it as in use for [`sweep_stale_temps`].
fn exclusive(path: &Path) -> Result<fs::File, WriteError> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(path)
        .map_err(failed(path, "create temp file"))?;
    #[cfg(unix)]
    if let Err(e) = rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        // Nobody else can hold a lock on a file created a moment ago; a file system without
        // locks only loses the sweep's protection of this temp.
        tracing::debug!(path = %path.display(), error = %e, "could not lock a temp file");
    }
    Ok(file)
}

/// Makes the current `path` the new `<name>.bak`, through a temp file renamed over it.
fn keep_backup(dir: &Path, path: &Path) -> Result<(), WriteError> {
    let bak = backup_path(path);
    let temp = temp_path(dir, path);
    let copied = exclusive(&temp).and_then(|mut to| {
        let mut from = fs::File::open(path).map_err(failed(path, "read"))?;
        io::copy(&mut from, &mut to)
            .and_then(|_| to.set_permissions(from.metadata()?.permissions()))
            .map_err(failed(&bak, "write backup"))?;
        Ok(to)
    });
    // The copy stays open (locked) until it is renamed.
    let result =
        copied.and_then(|_locked| fs::rename(&temp, &bak).map_err(failed(&bak, "write backup")));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The backup path: `config.json` → `config.json.bak`.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or(OsStr::new("file")).to_owned();
    name.push(".bak");
    path.with_file_name(name)
}

/// Removes `.NAME.tmp-PID-N` files left by writes that were killed: those no write holds
/// locked ([`exclusive`]). Best effort.
fn sweep_stale_temps(dir: &Path, path: &Path) {
    let Some(name) = path.file_name() else { return };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let ours = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|rest| rest.split_once('-'))
            .is_some_and(|(pid, n)| pid.parse::<u32>().is_ok() && n.parse::<u32>().is_ok());
        if ours && abandoned(&entry.path()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Whether the temp file at `temp` is held by no write: its lock can be taken (and is let go
/// at once, when the file closes). A temp that cannot be opened is left alone.
#[cfg(unix)]
fn abandoned(temp: &Path) -> bool {
    let mut options = OpenOptions::new();
    options.read(true);
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        rustix::fs::OFlags::NOFOLLOW.bits() as i32,
    );
    options.open(temp).is_ok_and(|file| {
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
    })
}

#[cfg(not(unix))]
fn abandoned(_temp: &Path) -> bool {
    // No lock to ask without more Windows APIs: keep every temp file.
    false
}

#[cfg(unix)]
fn sync_dir(dir: &Path) -> Result<(), WriteError> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(failed(dir, "sync directory"))
}

#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> Result<(), WriteError> {
    // Windows cannot open a directory as a file; MoveFileEx with replace is durable enough.
    Ok(())
}

#[cfg(all(test, unix))]
mod tests;
