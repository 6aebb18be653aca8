//! An entry's `roots` as MCP roots: one `file://` URI per directory (MCP "Roots": `uri` MUST be
//! a `file://` URI), named after its last path component; and [`EntryRoots`], the current list
//! of one server, which a reload may edit while the server runs.
#![expect(
    deprecated,
    reason = "roots are deprecated by SEP-2577 but 2025-era servers use them"
)]

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use rmcp::model::Root;

/// The `roots` of one server entry, shared by its supervisor (which edits them on reload) and
/// its sessions (which answer `roots/list` with them when no agent does). Cheap to clone.
#[derive(Clone, Debug, Default)]
pub struct EntryRoots {
    dirs: Arc<RwLock<Vec<PathBuf>>>,
}

impl EntryRoots {
    /// Roots holding `dirs`.
    pub fn new(dirs: &[PathBuf]) -> Self {
        EntryRoots {
            dirs: Arc::new(RwLock::new(dirs.to_vec())),
        }
    }

    /// The current list, as sent in `roots/list`.
    pub fn roots(&self) -> Vec<Root> {
        of_entry(&self.dirs.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the list; `true` when it changed (then servers should get
    /// `notifications/roots/list_changed`).
    pub fn replace(&self, dirs: &[PathBuf]) -> bool {
        let mut current = self.dirs.write().unwrap_or_else(PoisonError::into_inner);
        if current.as_slice() == dirs {
            return false;
        }
        *current = dirs.to_vec();
        true
    }
}

/// `dirs` (absolute paths, validated when the config was loaded) as roots, in order. A path
/// that cannot be written as a `file://` URL (not absolute) is left out with a warning.
pub fn of_entry(dirs: &[PathBuf]) -> Vec<Root> {
    dirs.iter()
        .filter_map(|dir| match reqwest::Url::from_directory_path(dir) {
            Ok(url) => {
                let mut root = Root::new(url.to_string());
                root.name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
                Some(root)
            }
            Err(()) => {
                tracing::warn!(path = %dir.display(), "a root that is not an absolute path is left out");
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn directories_become_file_urls_named_after_their_last_component() {
        let roots = of_entry(&[
            PathBuf::from("/home/ann/projects/web app"),
            PathBuf::from("/"),
        ]);
        let got: Vec<(&str, Option<&str>)> = roots
            .iter()
            .map(|r| (r.uri.as_str(), r.name.as_deref()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("file:///home/ann/projects/web%20app/", Some("web app")),
                ("file:///", None),
            ]
        );
    }

    #[test]
    fn relative_paths_are_left_out() {
        assert!(of_entry(&[PathBuf::from("relative/dir")]).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn replace_reports_whether_the_list_changed() {
        let roots = EntryRoots::new(&[PathBuf::from("/a")]);
        assert!(!roots.replace(&[PathBuf::from("/a")]));
        assert!(roots.replace(&[PathBuf::from("/b")]));
        assert_eq!(roots.roots()[0].uri, "file:///b/");
        assert!(roots.replace(&[]));
        assert!(roots.roots().is_empty());
    }
}
