//! Values larger than one keychain entry holds, stored across numbered entries.
//!
//! The Windows Credential Manager keeps at most 2 560 bytes per credential (1 280 UTF-16
//! units, `CRED_MAX_CREDENTIAL_BLOB_SIZE`), and an OAuth token bundle (access, refresh and ID
//! tokens, each a JWT) is often 4–8 KB. Such a value is split:
//!
//! - the entry under the secret's own name holds a head, `mcp-companion-parts:1:<N>:<GEN>`;
//! - entries `.part<i>.<name>` (i = 1..=N; a leading `.` is a name no secret can have, see
//!   [`super::validate_name`]) hold `<GEN>:<text>`, the texts joined in order being the value.
//!
//! `GEN` is a fresh 16-hex-digit generation per write. Parts are written before the head and
//! carry its generation, so a reader that meets a head whose parts belong to another write (a
//! second process storing the same name at that instant) sees the mismatch and reads again
//! instead of returning a mix of two values.
//!
//! Why parts rather than an encrypted file whose key sits in the Credential Manager: everything
//! stays inside the keychain (no file of secrets on disk, nothing to encrypt, no second place to
//! clean up), and the parts roam or stay with the head, which a file beside a roaming key
//! would not.
//!
//! A value that fits one entry and does not begin like a head is stored as is, so values written
//! before parts existed read unchanged; only the platforms with a limit ([`PART_LIMIT`]) split.

use std::sync::atomic::{AtomicU64, Ordering};

use super::SecretError;

/// The most UTF-16 units one entry holds on this platform, or `None` when entries have no
/// small limit (the macOS Keychain, the Secret Service).
pub const PART_LIMIT: Option<usize> = if cfg!(windows) { Some(1280) } else { None };

/// Most parts one value may have: with the Windows limit about 120 000 characters.
pub const MAX_PARTS: usize = 100;

/// What every head begins with.
const HEAD_PREFIX: &str = "mcp-companion-parts:1:";

/// How often a read starts again when a head's parts belong to another write.
const READ_TRIES: usize = 3;

/// The raw entries of one keychain service: one value per account, no size handling.
pub(super) trait Entries {
    /// The text under `account`, `None` when there is none.
    fn read(&self, account: &str) -> Result<Option<String>, SecretError>;
    /// Stores `value` under `account`, replacing what was there.
    fn write(&self, account: &str, value: &str) -> Result<(), SecretError>;
    /// Removes `account`; `true` when there was an entry.
    fn remove(&self, account: &str) -> Result<bool, SecretError>;
}

/// The account of part `index` (1-based) of the value named `name`.
pub fn part_account(name: &str, index: usize) -> String {
    format!(".part{index}.{name}")
}

/// How a value is laid out in entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// What goes under the value's own name: the value itself, or a head.
    pub head: String,
    /// What goes under [`part_account`] 1, 2, …; empty when `head` is the value.
    pub parts: Vec<String>,
}

/// Lays `value` out for entries of at most `limit` UTF-16 units (`None`: no limit), with
/// generation `generation` (16 hex digits).
///
/// # Errors
/// [`SecretError::TooLong`] (naming `name`) when it would take more than [`MAX_PARTS`] parts.
pub fn layout(
    name: &str,
    value: &str,
    limit: Option<usize>,
    generation: &str,
) -> Result<Layout, SecretError> {
    let units = value.encode_utf16().count();
    if !value.starts_with(HEAD_PREFIX) && limit.is_none_or(|l| units <= l) {
        return Ok(Layout {
            head: value.to_owned(),
            parts: Vec::new(),
        });
    }
    let room = limit.map_or(usize::MAX, |l| {
        l.saturating_sub(generation.len() + 1).max(2)
    });
    let mut parts = Vec::new();
    let mut current = format!("{generation}:");
    let mut used = 0;
    for c in value.chars() {
        if used + c.len_utf16() > room {
            parts.push(std::mem::replace(&mut current, format!("{generation}:")));
            used = 0;
        }
        current.push(c);
        used += c.len_utf16();
    }
    parts.push(current);
    if parts.len() > MAX_PARTS {
        return Err(SecretError::TooLong {
            name: name.to_owned(),
            max: u32::try_from(room.saturating_mul(MAX_PARTS)).unwrap_or(u32::MAX),
        });
    }
    Ok(Layout {
        head: format!("{HEAD_PREFIX}{}:{generation}", parts.len()),
        parts,
    })
}

/// A head: how many parts and of which generation; `None` when `text` is a value, not a head.
fn parse_head(text: &str) -> Option<(usize, &str)> {
    let rest = text.strip_prefix(HEAD_PREFIX)?;
    let (count, generation) = rest.split_once(':')?;
    let count: usize = count.parse().ok()?;
    (1..=MAX_PARTS)
        .contains(&count)
        .then_some((count, generation))
}

/// Joins the stored parts of a head of `generation`; `None` when one is missing or belongs to
/// another generation (a write in progress).
pub fn join(generation: &str, parts: &[Option<String>]) -> Option<String> {
    let mut value = String::new();
    for part in parts {
        let text = part
            .as_deref()?
            .strip_prefix(generation)?
            .strip_prefix(':')?;
        value.push_str(text);
    }
    Some(value)
}

/// A new generation: 16 hex digits, different for every call in this process and, through the
/// clock and the process id, from other processes' too.
pub fn new_generation() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mixed = nanos
        ^ (u64::from(std::process::id()) << 40)
        ^ COUNTER
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!("{mixed:016x}")
}

/// The value named `name`, joined from its parts when it has a head.
///
/// # Errors
/// What `entries` returns; [`SecretError::Keychain`] when the parts kept belonging to another
/// write over [`READ_TRIES`] reads, or a part is gone.
pub(super) fn get(entries: &dyn Entries, name: &str) -> Result<Option<String>, SecretError> {
    for _ in 0..READ_TRIES {
        let Some(head) = entries.read(name)? else {
            return Ok(None);
        };
        let Some((count, generation)) = parse_head(&head) else {
            return Ok(Some(head));
        };
        let parts = (1..=count)
            .map(|i| entries.read(&part_account(name, i)))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(value) = join(generation, &parts) {
            return Ok(Some(value));
        }
    }
    Err(SecretError::Keychain {
        name: name.to_owned(),
        message: "its stored parts do not match its head (a part was removed, or another process keeps rewriting it); store it again".into(),
    })
}

/// Stores `value` under `name` in entries of at most `limit` UTF-16 units, then removes the
/// parts of the previous value that the new one no longer uses.
///
/// # Errors
/// What `entries` returns; [`SecretError::TooLong`] as [`layout`].
pub(super) fn set(
    entries: &dyn Entries,
    name: &str,
    value: &str,
    limit: Option<usize>,
) -> Result<(), SecretError> {
    let before = stored_parts(entries, name)?;
    let layout = layout(name, value, limit, &new_generation())?;
    for (i, part) in layout.parts.iter().enumerate() {
        entries.write(&part_account(name, i + 1), part)?;
    }
    entries.write(name, &layout.head)?;
    for i in layout.parts.len() + 1..=before {
        entries.remove(&part_account(name, i))?;
    }
    Ok(())
}

/// Removes `name` and its parts; `true` when there was a value.
///
/// # Errors
/// What `entries` returns.
pub(super) fn delete(entries: &dyn Entries, name: &str) -> Result<bool, SecretError> {
    let before = stored_parts(entries, name)?;
    let existed = entries.remove(name)?;
    for i in 1..=before {
        entries.remove(&part_account(name, i))?;
    }
    Ok(existed)
}

/// How many parts the value now stored under `name` has (0: none, or stored whole).
fn stored_parts(entries: &dyn Entries, name: &str) -> Result<usize, SecretError> {
    Ok(entries
        .read(name)?
        .as_deref()
        .and_then(parse_head)
        .map_or(0, |(count, _)| count))
}

#[cfg(test)]
#[path = "parts_tests.rs"]
pub(super) mod tests;
