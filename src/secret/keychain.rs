//! [`Keychain`]: the OS keychain through the `keyring` crate, plus the index of our names.
//!
//! Keychains cannot list entries portably, so the names we store are kept in one more entry of
//! the same keychain: service as configured, account [`INDEX_ACCOUNT`] (a name no secret can
//! have, see [`super::validate_name`]), value a JSON array of names. Keeping it in the keychain
//! (rather than a file) means the index sits next to what it indexes, per user, whatever config
//! file is in use, and nothing about secrets lands on disk outside the keychain. Updates of the
//! index are serialised within a process; two processes storing secrets at the same instant can
//! lose one name from the index (never a value): `secret set` again re-adds it.
//!
//! Values (and the index) larger than one entry holds on this platform (the Windows Credential
//! Manager: 1 280 UTF-16 units) are stored across numbered entries, see [`super::parts`].

use std::sync::Mutex;

use super::parts::{self, Entries, PART_LIMIT};
use super::{SecretError, SecretStore, validate_name};

/// The account name of the index entry.
pub const INDEX_ACCOUNT: &str = ".index";

/// What the OS keychain is called on this platform, for messages.
#[cfg(target_os = "macos")]
pub const KEYCHAIN_KIND: &str = "the macOS Keychain";
/// What the OS keychain is called on this platform, for messages.
#[cfg(windows)]
pub const KEYCHAIN_KIND: &str = "the Windows Credential Manager";
/// What the OS keychain is called on this platform, for messages.
#[cfg(not(any(target_os = "macos", windows)))]
pub const KEYCHAIN_KIND: &str = "the Secret Service (GNOME Keyring, KWallet, KeePassXC…)";

/// Serialises read-modify-write of the index within this process.
static INDEX_LOCK: Mutex<()> = Mutex::new(());

/// The OS keychain, every entry under one service name.
///
/// Each call talks to the platform synchronously on a short-lived thread of its own (on Linux
/// the D-Bus client runs its own small runtime, which may not be started from inside another
/// async runtime), so it is safe to call from async code; it blocks the caller for the length
/// of one keychain round trip (milliseconds; longer if the keychain asks the user to unlock).
#[derive(Debug, Clone)]
pub struct Keychain {
    service: String,
    /// The most UTF-16 units one entry holds; larger values go into parts.
    part_limit: Option<usize>,
}

impl Keychain {
    /// The keychain entries under `service` (normally [`super::DEFAULT_SERVICE`]).
    pub fn new(service: impl Into<String>) -> Keychain {
        Keychain {
            service: service.into(),
            part_limit: PART_LIMIT,
        }
    }

    /// The same keychain, splitting values over `limit` UTF-16 units into parts (`None`: never),
    /// instead of this platform's own limit. Lets the split be tried on any OS's keychain.
    pub fn with_part_limit(mut self, limit: Option<usize>) -> Keychain {
        self.part_limit = limit;
        self
    }

    /// The service name entries are stored under.
    pub fn service(&self) -> &str {
        &self.service
    }
}

impl Entries for Keychain {
    fn read(&self, account: &str) -> Result<Option<String>, SecretError> {
        let service = self.service.clone();
        let account_owned = account.to_owned();
        let got = off_thread(move || {
            keyring::Entry::new(&service, &account_owned).and_then(|e| e.get_password())
        });
        match got {
            Ok(v) => Ok(Some(v)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(convert(account, e)),
        }
    }

    fn write(&self, account: &str, value: &str) -> Result<(), SecretError> {
        let service = self.service.clone();
        let account_owned = account.to_owned();
        let value = value.to_owned();
        off_thread(move || {
            keyring::Entry::new(&service, &account_owned).and_then(|e| e.set_password(&value))
        })
        .map_err(|e| convert(account, e))
    }

    fn remove(&self, account: &str) -> Result<bool, SecretError> {
        let service = self.service.clone();
        let account_owned = account.to_owned();
        let got = off_thread(move || {
            keyring::Entry::new(&service, &account_owned).and_then(|e| e.delete_credential())
        });
        match got {
            Ok(()) => Ok(true),
            Err(keyring::Error::NoEntry) => Ok(false),
            Err(e) => Err(convert(account, e)),
        }
    }
}

impl Keychain {
    fn read_index(&self) -> Result<Vec<String>, SecretError> {
        let Some(text) = parts::get(self, INDEX_ACCOUNT)? else {
            return Ok(Vec::new());
        };
        // A damaged index loses the listing, never a secret: start a new one.
        let mut names: Vec<String> = serde_json::from_str(&text).unwrap_or_default();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn update_index(&self, f: impl FnOnce(&mut Vec<String>)) -> Result<(), SecretError> {
        let _guard = INDEX_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let before = self.read_index()?;
        let mut names = before.clone();
        f(&mut names);
        names.sort();
        names.dedup();
        if names == before {
            return Ok(());
        }
        if names.is_empty() {
            parts::delete(self, INDEX_ACCOUNT).map(|_| ())
        } else {
            let text = serde_json::to_string(&names).unwrap_or_else(|_| "[]".into());
            parts::set(self, INDEX_ACCOUNT, &text, self.part_limit)
        }
    }
}

impl SecretStore for Keychain {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        validate_name(name)?;
        parts::get(self, name)
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        validate_name(name)?;
        parts::set(self, name, value, self.part_limit)?;
        self.update_index(|names| names.push(name.to_owned()))
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        validate_name(name)?;
        let existed = parts::delete(self, name)?;
        self.update_index(|names| names.retain(|n| n != name))?;
        Ok(existed)
    }

    fn names(&self) -> Result<Vec<String>, SecretError> {
        self.read_index()
    }
}

/// Runs `f` on a thread of its own and returns its result (a panic in `f` is re-raised here).
fn off_thread<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| match s.spawn(f).join() {
        Ok(v) => v,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

/// Maps a `keyring` error about `name` to ours, keeping the platform's words.
fn convert(name: &str, e: keyring::Error) -> SecretError {
    let name = name.to_owned();
    match e {
        keyring::Error::PlatformFailure(inner) | keyring::Error::NoStorageAccess(inner) => {
            SecretError::Unavailable {
                detail: inner.to_string(),
            }
        }
        keyring::Error::TooLong(_, max) => SecretError::TooLong { name, max },
        keyring::Error::BadEncoding(_) => SecretError::Keychain {
            name,
            message: "the stored value is not UTF-8 text".into(),
        },
        keyring::Error::Invalid(attr, reason) => SecretError::Keychain {
            name,
            message: format!("invalid {attr}: {reason}"),
        },
        keyring::Error::Ambiguous(found) => SecretError::Keychain {
            name,
            message: format!("{} entries match; remove the extra ones", found.len()),
        },
        keyring::Error::NoEntry => SecretError::Keychain {
            name,
            message: "no such entry".into(),
        },
        other => SecretError::Keychain {
            name,
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A keychain under a service of its own, or `None` (skipped) when none answers; with
    /// `MCP_REQUIRE_KEYCHAIN=1` (tests/keychain.sh) a missing keychain fails the test.
    fn real(test: &str) -> Option<Keychain> {
        let store = Keychain::new(format!("mcp-companion-unit-{}-{test}", std::process::id()));
        match store.get("probe") {
            Ok(_) => Some(store),
            Err(e @ SecretError::Unavailable { .. }) => {
                assert_ne!(
                    std::env::var("MCP_REQUIRE_KEYCHAIN").as_deref(),
                    Ok("1"),
                    "MCP_REQUIRE_KEYCHAIN=1 but no keychain answers: {e}"
                );
                eprintln!("SKIPPED {test}: no OS keychain here (run tests/keychain.sh): {e}");
                None
            }
            Err(e) => panic!("keychain probe failed: {e}"),
        }
    }

    #[test]
    fn secret_round_trip_and_name_index_on_the_real_keychain() {
        let Some(store) = real("roundtrip") else {
            return;
        };
        assert_eq!(store.names(), Ok(vec![]));
        store.set("B", "two").unwrap();
        store.set("A", "one ünïcode").unwrap();
        store.set("B", "deux").unwrap();
        assert_eq!(store.get("A"), Ok(Some("one ünïcode".into())));
        assert_eq!(store.get("B"), Ok(Some("deux".into())));
        assert_eq!(store.names(), Ok(vec!["A".into(), "B".into()]));
        assert_eq!(store.delete("A"), Ok(true));
        assert_eq!(store.delete("A"), Ok(false));
        assert_eq!(store.get("A"), Ok(None));
        assert_eq!(store.names(), Ok(vec!["B".into()]));
        assert_eq!(store.delete("B"), Ok(true));
        // The last delete removes the index entry too: nothing of ours is left behind.
        assert_eq!(store.read(INDEX_ACCOUNT), Ok(None));
        assert!(matches!(
            store.set(".index", "x"),
            Err(SecretError::InvalidName { .. })
        ));
    }

    #[test]
    fn secret_index_keeps_every_name_stored_from_parallel_threads() {
        let Some(store) = real("parallel") else {
            return;
        };
        std::thread::scope(|s| {
            for i in 0..6 {
                let store = &store;
                s.spawn(move || store.set(&format!("N{i}"), "v").unwrap());
            }
        });
        let names = store.names().unwrap();
        assert_eq!(names, (0..6).map(|i| format!("N{i}")).collect::<Vec<_>>());
        for n in names {
            store.delete(&n).unwrap();
        }
    }

    #[test]
    fn secret_a_token_bundle_over_the_part_limit_round_trips_and_leaves_no_part() {
        let Some(store) = real("parts") else { return };
        // The Windows limit, so the Secret Service stores what the Credential Manager would.
        let store = store.with_part_limit(Some(1280));
        let bundle = parts::tests::token_bundle();
        store.set("TOKENS", &bundle).unwrap();
        assert_eq!(store.get("TOKENS"), Ok(Some(bundle.clone())));
        assert!(
            store
                .read(&parts::part_account("TOKENS", 2))
                .unwrap()
                .is_some()
        );
        assert_eq!(store.names(), Ok(vec!["TOKENS".into()]));
        assert_eq!(store.delete("TOKENS"), Ok(true));
        for i in 1..=10 {
            assert_eq!(
                store.read(&parts::part_account("TOKENS", i)),
                Ok(None),
                "part {i}"
            );
        }
        assert_eq!(store.read("TOKENS"), Ok(None));
        assert_eq!(store.read(INDEX_ACCOUNT), Ok(None));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn secret_calls_work_from_inside_an_async_runtime() {
        let Some(store) = real("async") else { return };
        store.set("T", "v").unwrap();
        assert_eq!(store.get("T"), Ok(Some("v".into())));
        assert_eq!(store.delete("T"), Ok(true));
    }
}
