//! What a replaced file, its backup and its directory look like after [`write_atomic`], and
//! that nothing planted next to the file is written through.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;

fn mode(p: &Path) -> u32 {
    fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_symlink_planted_at_the_backup_path_is_replaced_not_written_through() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("mcp.json");
    let victim = tmp.path().join("victim");
    fs::write(&victim, "precious").unwrap();
    fs::write(&file, "old").unwrap();
    std::os::unix::fs::symlink(&victim, backup_path(&file)).unwrap();
    for mode in [Mode::KeepTarget, Mode::Private] {
        write_atomic(&file, b"new", mode, Backup::Keep).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            !fs::symlink_metadata(backup_path(&file))
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
    assert_eq!(fs::read_to_string(backup_path(&file)).unwrap(), "new");
    assert_eq!(fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(names(tmp.path()), ["mcp.json", "mcp.json.bak", "victim"]);
}

#[test]
fn the_target_keeps_its_mode_or_becomes_private_as_asked() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    fs::write(&file, "old").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o644)).unwrap();
    write_atomic(&file, b"kept", Mode::KeepTarget, Backup::Keep).unwrap();
    assert_eq!(mode(&file), 0o644);
    assert_eq!(mode(&backup_path(&file)), 0o644);
    write_atomic(&file, b"private", Mode::Private, Backup::Keep).unwrap();
    assert_eq!(mode(&file), 0o600);
    assert_eq!(fs::read_to_string(backup_path(&file)).unwrap(), "kept");

    let fresh = tmp.path().join("new").join("deeper").join("config.json");
    write_atomic(&fresh, b"{}", Mode::Private, Backup::Keep).unwrap();
    assert_eq!(mode(&fresh), 0o600);
    assert_eq!(mode(fresh.parent().unwrap()), 0o700);
    assert!(!backup_path(&fresh).exists(), "nothing to back up");
}

#[test]
fn a_symlinked_target_is_replaced_and_the_link_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real.json");
    let link = tmp.path().join("link.json");
    fs::write(&real, "old").unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    write_atomic(&link, b"new", Mode::KeepTarget, Backup::Keep).unwrap();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&real).unwrap(), "new");
    assert_eq!(fs::read_to_string(backup_path(&real)).unwrap(), "old");
}

#[test]
fn a_failed_write_names_its_step_and_leaves_no_temp_file() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("a-directory");
    fs::create_dir(&target).unwrap();
    let err = write_atomic(&target, b"x", Mode::KeepTarget, Backup::Keep).unwrap_err();
    assert!(err.to_string().starts_with("could not "), "{err}");
    assert_eq!(names(tmp.path()), ["a-directory"]);
}

#[test]
fn temp_files_of_dead_writers_are_swept_and_live_ones_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("config.json");
    // Named after a process that is alive (init, and this one), as a killed writer's pid is
    // once the kernel reuses it: only the lock tells a live write from an abandoned one.
    let dead_init = tmp.path().join(".config.json.tmp-1-0");
    let dead_own = tmp
        .path()
        .join(format!(".config.json.tmp-{}-998", std::process::id()));
    let live = tmp
        .path()
        .join(format!(".config.json.tmp-{}-999", std::process::id()));
    let unrelated = tmp.path().join(".config.json.tmp-notes");
    fs::write(&dead_init, "").unwrap();
    fs::write(&dead_own, "").unwrap();
    fs::write(&unrelated, "").unwrap();
    let _writing = exclusive(&live).unwrap();
    write_atomic(&file, b"{}", Mode::Private, Backup::Keep).unwrap();
    assert!(
        !dead_init.exists() && !dead_own.exists(),
        "{:?}",
        names(tmp.path())
    );
    assert!(live.exists(), "a temp another write holds is not swept");
    assert!(unrelated.exists(), "only our own temp names are swept");
}

#[test]
fn the_edit_lock_is_a_hidden_file_beside_the_target_and_excludes_a_second_taker() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("config.json");
    let held = lock_beside(&file, Mode::Private).unwrap();
    write_atomic(&file, b"{}", Mode::Private, Backup::None).unwrap();
    assert_eq!(names(tmp.path()), [".config.json.lock", "config.json"]);
    assert_eq!(mode(&tmp.path().join(".config.json.lock")), 0o600);
    let again = fs::File::open(tmp.path().join(".config.json.lock")).unwrap();
    assert!(
        matches!(again.try_lock(), Err(fs::TryLockError::WouldBlock)),
        "held by the first taker"
    );
    drop(held);
    again.try_lock().expect("free once dropped");
}

#[test]
fn without_a_backup_only_the_file_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("endpoint.json");
    write_atomic(&file, b"1", Mode::Private, Backup::None).unwrap();
    write_atomic(&file, b"2", Mode::Private, Backup::None).unwrap();
    assert_eq!(fs::read_to_string(&file).unwrap(), "2");
    assert_eq!(names(tmp.path()), ["endpoint.json"]);
}
