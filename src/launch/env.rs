//! The child's environment (DESIGN §7).
//!
//! The problem: a child that inherits the companion's whole environment sees every secret the
//! companion was started with (cloud keys, tokens exported in a shell profile), and on Windows
//! environment names are case-insensitive, so `Path` and `PATH` are the same variable.
//!
//! The strategy: the child gets only a fixed set of variables copied from the companion
//! ([`base_vars`], per target OS), the network settings it needs to reach the internet through
//! the user's CA and proxy ([`NETWORK_VARS`]: without them `uvx`/`npx` fail with "invalid peer
//! certificate: UnknownIssuer" behind a corporate CA), plus its entry's `env`, which wins. On
//! Windows a key from the entry replaces a base key that differs only in case.

use std::collections::BTreeMap;

use super::TargetOs;

/// Variables copied into every child on macOS and Linux, when set.
pub const UNIX_BASE: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG"];

/// Variables copied into every child on Windows, when set: what programs expect of a normal
/// session (profile dirs, temp dirs, the system root, `PATHEXT` for lookups).
pub const WINDOWS_BASE: &[&str] = &[
    "APPDATA",
    "COMSPEC",
    "HOMEDRIVE",
    "HOMEPATH",
    "LOCALAPPDATA",
    "PATH",
    "PATHEXT",
    "PROCESSOR_ARCHITECTURE",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "SystemDrive",
    "SystemRoot",
    "TEMP",
    "TMP",
    "USERNAME",
    "USERPROFILE",
    "windir",
];

/// Certificate and proxy variables copied into every child on every OS, when set.
/// Both cases on unix, where `https_proxy` and `HTTPS_PROXY` are different variables
/// and tools disagree on which they read; on Windows names ignore case, so one of each counts.
pub const NETWORK_VARS: &[&str] = &[
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// Every variable name a child may inherit from the companion on `os`: [`base_vars`], then
/// [`NETWORK_VARS`].
pub fn passthrough(os: TargetOs) -> impl Iterator<Item = &'static str> {
    base_vars(os).iter().chain(NETWORK_VARS).copied()
}

/// The variables copied from the companion into every child on `os`.
pub fn base_vars(os: TargetOs) -> &'static [&'static str] {
    match os {
        TargetOs::Windows => WINDOWS_BASE,
        TargetOs::Linux | TargetOs::Macos => UNIX_BASE,
    }
}

/// The child's complete environment: the [`passthrough`] variables found by `parent`, then
/// `entry`.
pub fn minimal(
    os: TargetOs,
    parent: &dyn Fn(&str) -> Option<String>,
    entry: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    for k in passthrough(os) {
        if let Some(v) = parent(k)
            && get(&env, os, k).is_none()
        {
            env.insert(k.to_owned(), v);
        }
    }
    for (k, v) in entry {
        set(&mut env, os, k, v.clone());
    }
    env
}

/// The value of `key` in `env`, ignoring ASCII case on Windows.
pub fn get<'a>(env: &'a BTreeMap<String, String>, os: TargetOs, key: &str) -> Option<&'a str> {
    match os {
        TargetOs::Windows => env
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v.as_str()),
        TargetOs::Linux | TargetOs::Macos => env.get(key).map(String::as_str),
    }
}

/// Sets `key`; on Windows first removes any key equal to it ignoring ASCII case.
pub fn set(env: &mut BTreeMap<String, String>, os: TargetOs, key: &str, value: String) {
    if os == TargetOs::Windows {
        env.retain(|k, _| !k.eq_ignore_ascii_case(key));
    }
    env.insert(key.to_owned(), value);
}

/// Splits a PATH-style list with `os`'s separator, dropping empty items.
pub fn split_path(os: TargetOs, list: &str) -> Vec<String> {
    list.split(os.path_separator())
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Joins `parts` in order with `os`'s separator, keeping the first of any duplicates.
pub fn join_path(os: TargetOs, parts: impl IntoIterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for p in parts {
        if !p.is_empty() && !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen.join(&os.path_separator().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(k: &str) -> Option<String> {
        match k {
            "PATH" => Some("/usr/bin".into()),
            "HOME" => Some("/home/u".into()),
            "AWS_SECRET_ACCESS_KEY" => Some("s3cr3t".into()),
            "COMSPEC" => Some(r"C:\Windows\System32\cmd.exe".into()),
            "SSL_CERT_FILE" => Some("/etc/corp-ca.pem".into()),
            "https_proxy" => Some("http://proxy:3128".into()),
            _ => None,
        }
    }

    #[test]
    fn only_base_variables_and_entry_env_reach_the_child() {
        let entry = BTreeMap::from([("FOO".to_owned(), "bar".to_owned())]);
        for os in [TargetOs::Linux, TargetOs::Macos, TargetOs::Windows] {
            let env = minimal(os, &parent, &entry);
            assert!(!env.contains_key("AWS_SECRET_ACCESS_KEY"), "{os:?}");
            assert_eq!(env.get("FOO").map(String::as_str), Some("bar"), "{os:?}");
            assert_eq!(
                env.get("PATH").map(String::as_str),
                Some("/usr/bin"),
                "{os:?}"
            );
        }
        assert!(minimal(TargetOs::Linux, &parent, &entry).contains_key("HOME"));
        assert!(!minimal(TargetOs::Windows, &parent, &entry).contains_key("HOME"));
        assert!(minimal(TargetOs::Windows, &parent, &entry).contains_key("COMSPEC"));
    }

    #[test]
    fn certificate_and_proxy_settings_reach_the_child_on_every_os() {
        for os in [TargetOs::Linux, TargetOs::Macos, TargetOs::Windows] {
            let env = minimal(os, &parent, &BTreeMap::new());
            assert_eq!(
                get(&env, os, "SSL_CERT_FILE"),
                Some("/etc/corp-ca.pem"),
                "{os:?}"
            );
            assert_eq!(
                get(&env, os, "https_proxy"),
                Some("http://proxy:3128"),
                "{os:?}"
            );
        }
        // On Windows the upper-case lookup finds the lower-case variable, once.
        let win = minimal(
            TargetOs::Windows,
            &|k| (k == "https_proxy" || k == "HTTPS_PROXY").then(|| format!("v-{k}")),
            &BTreeMap::new(),
        );
        assert_eq!(win.len(), 1, "{win:?}");
        // The entry still wins.
        let entry = BTreeMap::from([("SSL_CERT_FILE".to_owned(), "/mine.pem".to_owned())]);
        let env = minimal(TargetOs::Linux, &parent, &entry);
        assert_eq!(env["SSL_CERT_FILE"], "/mine.pem");
    }

    #[test]
    fn windows_keys_differing_in_case_are_one_variable() {
        let entry = BTreeMap::from([("Path".to_owned(), r"C:\Tools".to_owned())]);
        let env = minimal(TargetOs::Windows, &parent, &entry);
        assert_eq!(get(&env, TargetOs::Windows, "PATH"), Some(r"C:\Tools"));
        assert!(!env.contains_key("PATH"));
        let unix = minimal(TargetOs::Linux, &parent, &entry);
        assert_eq!(get(&unix, TargetOs::Linux, "PATH"), Some("/usr/bin"));
    }

    #[test]
    fn path_lists_split_and_join_per_os() {
        let cases = [
            (
                TargetOs::Linux,
                "/a::/b:/a",
                vec!["/a", "/b", "/a"],
                "/a:/b",
            ),
            (TargetOs::Macos, "/a", vec!["/a"], "/a"),
            (
                TargetOs::Windows,
                r"C:\a;;C:\b",
                vec![r"C:\a", r"C:\b"],
                r"C:\a;C:\b",
            ),
        ];
        for (os, list, parts, joined) in cases {
            let split = split_path(os, list);
            assert_eq!(split, parts, "{os:?}");
            assert_eq!(join_path(os, split), joined, "{os:?}");
        }
    }
}
