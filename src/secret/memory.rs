//! Stores that are not the OS keychain: [`MemoryStore`] for tests and previews, [`NoKeychain`]
//! for the "no keychain on this machine" case.

use std::collections::BTreeMap;
use std::sync::Mutex;

use super::{SecretError, SecretStore, validate_name};

/// Secrets in process memory, lost on exit. For tests, and for dry runs that must not touch
/// the real keychain.
#[derive(Debug, Default)]
pub struct MemoryStore {
    values: Mutex<BTreeMap<String, String>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// A store holding `pairs` of (name, value).
    pub fn with(pairs: &[(&str, &str)]) -> MemoryStore {
        let store = MemoryStore::new();
        if let Ok(mut values) = store.values.lock() {
            for (k, v) in pairs {
                values.insert((*k).to_owned(), (*v).to_owned());
            }
        }
        store
    }

    fn values(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, String>> {
        // A panic while holding the lock cannot leave the map half-updated.
        self.values.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SecretStore for MemoryStore {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        validate_name(name)?;
        Ok(self.values().get(name).cloned())
    }

    fn set(&self, name: &str, value: &str) -> Result<(), SecretError> {
        validate_name(name)?;
        self.values().insert(name.to_owned(), value.to_owned());
        Ok(())
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        validate_name(name)?;
        Ok(self.values().remove(name).is_some())
    }

    fn names(&self) -> Result<Vec<String>, SecretError> {
        Ok(self.values().keys().cloned().collect())
    }
}

/// A store for which no keychain is available: every call fails with
/// [`SecretError::Unavailable`] (after the name check). Tests use it for the error path.
#[derive(Debug, Clone)]
pub struct NoKeychain {
    /// The reason given in the errors.
    pub detail: String,
}

impl NoKeychain {
    fn fail<T>(&self) -> Result<T, SecretError> {
        Err(SecretError::Unavailable {
            detail: self.detail.clone(),
        })
    }
}

impl SecretStore for NoKeychain {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        validate_name(name)?;
        self.fail()
    }

    fn set(&self, name: &str, _value: &str) -> Result<(), SecretError> {
        validate_name(name)?;
        self.fail()
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        validate_name(name)?;
        self.fail()
    }

    fn names(&self) -> Result<Vec<String>, SecretError> {
        self.fail()
    }
}

/// A view of another store whose values are replaced by the placeholder `<secret:NAME>`: it
/// checks that each secret exists (a missing one is still `None`) without letting a value reach
/// output. `doctor` expands entries through it. Writes are refused.
pub struct Masked<'a> {
    inner: &'a dyn SecretStore,
}

impl<'a> Masked<'a> {
    /// Masks the values of `inner`.
    pub fn new(inner: &'a dyn SecretStore) -> Masked<'a> {
        Masked { inner }
    }
}

impl SecretStore for Masked<'_> {
    fn get(&self, name: &str) -> Result<Option<String>, SecretError> {
        Ok(self.inner.get(name)?.map(|_| format!("<secret:{name}>")))
    }

    fn set(&self, name: &str, _value: &str) -> Result<(), SecretError> {
        Err(SecretError::Keychain {
            name: name.to_owned(),
            message: "this view is read-only".into(),
        })
    }

    fn delete(&self, name: &str) -> Result<bool, SecretError> {
        self.set(name, "").map(|_| false)
    }

    fn names(&self) -> Result<Vec<String>, SecretError> {
        self.inner.names()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_store_round_trips_and_lists_sorted_names() {
        let s = MemoryStore::new();
        assert_eq!(s.get("B"), Ok(None));
        s.set("B", "two").unwrap();
        s.set("A", "one").unwrap();
        s.set("B", "deux").unwrap();
        assert_eq!(s.get("B"), Ok(Some("deux".into())));
        assert_eq!(s.names(), Ok(vec!["A".into(), "B".into()]));
        assert_eq!(s.delete("A"), Ok(true));
        assert_eq!(s.delete("A"), Ok(false));
        assert_eq!(s.names(), Ok(vec!["B".into()]));
        assert!(matches!(
            s.set("a b", "x"),
            Err(SecretError::InvalidName { .. })
        ));
    }

    #[test]
    fn masked_view_hides_values_but_not_absence() {
        let inner = MemoryStore::with(&[("T", "v4lue")]);
        let m = Masked::new(&inner);
        assert_eq!(m.get("T"), Ok(Some("<secret:T>".into())));
        assert_eq!(m.get("U"), Ok(None));
        assert!(m.set("T", "x").is_err());
        assert_eq!(inner.get("T"), Ok(Some("v4lue".into())));
    }

    #[test]
    fn no_keychain_says_so_and_points_to_variables() {
        let s = NoKeychain {
            detail: "no D-Bus session bus".into(),
        };
        let err = s.get("TOKEN").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("no OS keychain is available ("), "{text}");
        assert!(text.contains("no D-Bus session bus"), "{text}");
        assert!(text.contains("${VAR}"), "{text}");
        assert!(text.contains("never stored in plain text"), "{text}");
        assert!(s.set("TOKEN", "v").is_err());
        assert!(s.names().is_err());
    }
}
