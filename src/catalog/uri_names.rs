//! The rewritten form of a URI (or template) two servers claim, and the server label in it.
//!
//! ```text
//! ui://<rest>   →  ui://<label>/<rest>
//! any other u   →  mcp-companion://<label>/<u>
//! ```
//!
//! A server's label is its name sanitised as in tool names. It gets `-<8 hex>` (SHA-1 of the
//! server name as configured) when it would make a rewritten URI read like another: two
//! rewriting servers whose names sanitise alike (`x.y`, `x_y`), or a URI some server keeps
//! unrewritten that lies under `ui://<label>/` or `mcp-companion://<label>/` (its own or
//! another's). Should even that label be taken, `~2`, `~3`… follow, servers in config order.
//! So every rewritten URI differs from every other served URI: labels are distinct and hold no
//! `/`, and no kept URI lies under a label. Routing goes by the catalog's tables, never by
//! reading a label back.

use std::collections::{HashMap, HashSet};

use super::naming::{hex_prefix, sanitize};

/// The rewritten form of `uri` under server label `label` (module doc).
pub(super) fn namespaced(label: &str, uri: &str) -> String {
    match uri.strip_prefix("ui://") {
        Some(rest) => format!("ui://{label}/{rest}"),
        None => format!("mcp-companion://{label}/{uri}"),
    }
}

/// The label of each server in `rewriting` (names as configured, config order), given every
/// URI that is served unrewritten (`kept`): server name → label.
pub(super) fn labels<'a>(rewriting: &[&'a str], kept: &[&str]) -> HashMap<&'a str, String> {
    let under_kept = |label: &str| {
        let ui = namespaced(label, "ui://");
        let other = namespaced(label, "");
        kept.iter()
            .any(|uri| uri.starts_with(&ui) || uri.starts_with(&other))
    };
    let mut alike: HashMap<String, usize> = HashMap::new();
    for server in rewriting {
        *alike.entry(sanitize(server)).or_default() += 1;
    }
    let mut labels = HashMap::with_capacity(rewriting.len());
    let mut taken = HashSet::new();
    let mut hashed = Vec::new();
    for server in rewriting {
        let plain = sanitize(server);
        if alike.get(&plain).copied().unwrap_or(0) > 1 || under_kept(&plain) {
            hashed.push(*server);
        } else {
            taken.insert(plain.clone());
            labels.insert(*server, plain);
        }
    }
    for server in hashed {
        let digest = <sha1::Sha1 as sha1::Digest>::digest(server.as_bytes());
        let base = format!("{}-{}", sanitize(server), hex_prefix(&digest, 8));
        let mut label = base.clone();
        let mut n = 1;
        while taken.contains(&label) || under_kept(&label) {
            n += 1;
            label = format!("{base}~{n}");
        }
        taken.insert(label.clone());
        labels.insert(server, label);
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_label_unless_it_would_read_like_another() {
        let labels = labels(
            &["a", "x.y", "x_y", "ui1"],
            &["ui://ui1/app.html", "file:///a"],
        );
        assert_eq!(labels["a"], "a");
        for server in ["x.y", "x_y", "ui1"] {
            let digest = <sha1::Sha1 as sha1::Digest>::digest(server.as_bytes());
            let want = format!("{}-{}", sanitize(server), hex_prefix(&digest, 8));
            assert_eq!(labels[server], want);
        }
        assert_ne!(labels["x.y"], labels["x_y"]);
    }

    #[test]
    fn a_hashed_label_a_kept_uri_already_uses_gets_a_counter() {
        let digest = <sha1::Sha1 as sha1::Digest>::digest(b"x.y");
        let hashed = format!("x_y-{}", hex_prefix(&digest, 8));
        let kept = format!("mcp-companion://{hashed}/demo://a");
        let labels = labels(&["x.y", "x_y"], &[&kept]);
        assert_eq!(labels["x.y"], format!("{hashed}~2"));
    }
}
