//! Wrapped names of upstream capabilities (DESIGN §4, nanobot §2).
//!
//! Owns the pure string rules: the sanitiser, the 64-character limit, the base name of a tool,
//! resource, resource template or prompt, and the collision suffix. Deciding *when* a suffix is
//! needed (which names collide) belongs to the catalog table in `mod.rs`; this file only says
//! what the suffixed name is, so that every rule here is a pure function of its inputs and
//! therefore stable across restarts and listing order.
//!
//! ```text
//! tool               mcp_<server>_<name>
//! resource           mcp_<server>_resource_<name>
//! resource template  mcp_<server>_resource_<name>
//! prompt             mcp_<server>_prompt_<name>
//! ```
//!
//! The whole string, server included, is sanitised and then limited to 64 characters.

use sha1::{Digest, Sha1};

/// Longest wrapped name served to agents.
pub const MAX_NAME_LEN: usize = 64;

/// Characters kept from the start of a name that is too long (the rest is `_` + 8 hex).
const KEPT_PREFIX_LEN: usize = 55;

/// Which kind of upstream capability a wrapped tool stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapabilityKind {
    /// An upstream tool, called with `tools/call`.
    Tool,
    /// A concrete resource, read with `resources/read`.
    Resource,
    /// A resource template, expanded then read with `resources/read`.
    ResourceTemplate,
    /// A prompt, fetched with `prompts/get`.
    Prompt,
}

impl CapabilityKind {
    /// The stable lower-case word used in collision hashes and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            CapabilityKind::Tool => "tool",
            CapabilityKind::Resource => "resource",
            CapabilityKind::ResourceTemplate => "resource_template",
            CapabilityKind::Prompt => "prompt",
        }
    }

    /// The infix between the server and the raw name: empty for tools.
    fn infix(self) -> &'static str {
        match self {
            CapabilityKind::Tool => "",
            CapabilityKind::Resource | CapabilityKind::ResourceTemplate => "resource_",
            CapabilityKind::Prompt => "prompt_",
        }
    }
}

impl std::fmt::Display for CapabilityKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Replaces every char outside `[A-Za-z0-9_-]` with `_`, then collapses runs of `_` into one.
///
/// Works per Unicode code point, so every non-ASCII char becomes `_`. No trimming (leading and
/// trailing `_` stay), no case change, and an empty input stays empty.
pub fn sanitize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    out
}

/// Shortens a name longer than 64 chars to exactly 64: its first 55 chars, `_`, then the first
/// 8 hex digits of SHA-1 of the whole (sanitised) name.
///
/// Names of 64 chars or fewer come back unchanged. The hash is taken over the UTF-8 bytes of
/// the name as given; callers pass sanitised (hence ASCII) names, so chars and bytes agree.
pub fn limit_length(name: String) -> String {
    if name.chars().count() <= MAX_NAME_LEN {
        return name;
    }
    let mut out: String = name.chars().take(KEPT_PREFIX_LEN).collect();
    out.push('_');
    out.push_str(&sha1_hex8(name.as_bytes()));
    out
}

/// [`limit_length`] with a smaller limit `max` (at least 16): a name longer than `max` chars
/// becomes its first `max - 9` chars, `_`, then the first 8 hex digits of SHA-1 of the whole
/// name; shorter names come back unchanged. With `max` = 64 it is [`limit_length`]. Used for
/// agents that put a prefix of their own before every tool name.
pub fn limit_length_to(name: &str, max: usize) -> std::borrow::Cow<'_, str> {
    let max = max.max(16);
    if name.chars().count() <= max {
        return std::borrow::Cow::Borrowed(name);
    }
    let mut out: String = name.chars().take(max - 9).collect();
    out.push('_');
    out.push_str(&sha1_hex8(name.as_bytes()));
    std::borrow::Cow::Owned(out)
}

/// The wrapped name before any collision handling: `limit_length(sanitize("mcp_<server>_…"))`.
///
/// This is the name `enabledTools` entries are matched against, and the served name whenever
/// it is unique.
pub fn base_name(server: &str, kind: CapabilityKind, raw: &str) -> String {
    limit_length(sanitize(&unlimited(server, kind, raw)))
}

/// The wrapped name with its collision suffix, used when the base name is not unique.
///
/// The suffix is `_` + the first 8 hex digits of SHA-1 of `<server>\0<kind>\0<raw>` (kind as
/// in [`CapabilityKind::as_str`]). It is appended to the sanitised, *not yet limited* name,
/// and only then is the 64-char rule applied (a name already ending in `_` gets no second `_`,
/// as the sanitiser would collapse it anyway). So a short name reads
/// `mcp_<server>_<raw>_<suffix>`; a long one is cut to 55 chars + `_` + SHA-1 of the suffixed
/// string, which still differs between capabilities because the suffix went into that hash.
pub fn suffixed_name(server: &str, kind: CapabilityKind, raw: &str) -> String {
    suffixed_with(server, kind, raw, None)
}

/// Like [`suffixed_name`] but with `\0<extra>` added to the hashed identity.
///
/// Used for the rare case of two resources (or templates) on one server with the same name and
/// different URIs: their plain identities are equal, so the URI breaks the tie.
pub fn suffixed_name_with(server: &str, kind: CapabilityKind, raw: &str, extra: &str) -> String {
    suffixed_with(server, kind, raw, Some(extra))
}

/// Whether the raw part sanitises to nothing useful (empty or only `_`, e.g. `查询天气`).
///
/// Such a capability would be served as a bare `mcp_<server>_` and always collide in spirit, so
/// the catalog serves it under its [`suffixed_name`] even when nothing else shares the name.
pub fn is_blank(raw: &str) -> bool {
    sanitize(raw).chars().all(|c| c == '_')
}

fn suffixed_with(server: &str, kind: CapabilityKind, raw: &str, extra: Option<&str>) -> String {
    let mut identity = format!("{server}\0{}\0{raw}", kind.as_str());
    if let Some(extra) = extra {
        identity.push('\0');
        identity.push_str(extra);
    }
    let mut name = sanitize(&unlimited(server, kind, raw));
    if !name.ends_with('_') {
        name.push('_');
    }
    name.push_str(&sha1_hex8(identity.as_bytes()));
    limit_length(name)
}

fn unlimited(server: &str, kind: CapabilityKind, raw: &str) -> String {
    format!("mcp_{server}_{}{raw}", kind.infix())
}

/// First 8 lower-case hex digits of SHA-1 of `bytes`.
fn sha1_hex8(bytes: &[u8]) -> String {
    let digest = Sha1::digest(bytes);
    hex_prefix(&digest, 8)
}

/// The first `digits` lower-case hex digits of `bytes`.
pub(crate) fn hex_prefix(bytes: &[u8], digits: usize) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(digits + 1);
    for b in bytes {
        if out.len() >= digits {
            break;
        }
        // Writing into a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out.truncate(digits);
    out
}

#[cfg(test)]
mod tests {
    use super::CapabilityKind::{Prompt, Resource, ResourceTemplate, Tool};
    use super::*;

    #[test]
    fn sanitize_matches_nanobot_examples() {
        let cases = [
            (
                "PostgreSQL System Information",
                "PostgreSQL_System_Information",
            ),
            ("foo.bar@baz!", "foo_bar_baz_"),
            ("a   b", "a_b"),
            ("my-tool_v2", "my-tool_v2"),
            ("mcp_server_tool", "mcp_server_tool"),
            ("mcp_github__create_issue", "mcp_github_create_issue"),
            ("mcp_srv_查询天气", "mcp_srv_"),
            ("mcp_srv_ünïcode", "mcp_srv_n_code"),
            ("mcp_srv_a/b:c", "mcp_srv_a_b_c"),
            ("mcp_srv_ tool ", "mcp_srv_tool_"),
            ("mcp_fs_read.file", "mcp_fs_read_file"),
            ("", ""),
            ("__", "_"),
        ];
        for (input, want) in cases {
            assert_eq!(sanitize(input), want, "sanitize({input:?})");
        }
    }

    #[test]
    fn base_name_matches_nanobot_examples() {
        let long_server = "very-long-server-name-".repeat(4);
        let long_tool = format!("tool-{}", "very-long-name-".repeat(8));
        let cases: Vec<(&str, CapabilityKind, &str, &str)> = vec![
            ("srv", Tool, "My Tool", "mcp_srv_My_Tool"),
            (
                "srv",
                Resource,
                "PostgreSQL System Information",
                "mcp_srv_resource_PostgreSQL_System_Information",
            ),
            (
                "test",
                Resource,
                "PostgreSQL System Information",
                "mcp_test_resource_PostgreSQL_System_Information",
            ),
            (
                "my server",
                Prompt,
                "design-schema",
                "mcp_my_server_prompt_design-schema",
            ),
            ("myserver", Resource, "myres", "mcp_myserver_resource_myres"),
            (
                "myserver",
                Prompt,
                "myprompt",
                "mcp_myserver_prompt_myprompt",
            ),
            ("remote_", Tool, "quote", "mcp_remote_quote"),
            ("test", Tool, "tool_a", "mcp_test_tool_a"),
            ("test", Resource, "res_b", "mcp_test_resource_res_b"),
            ("test", Prompt, "prompt_c", "mcp_test_prompt_prompt_c"),
            (
                "test_server",
                Tool,
                "test_tool",
                "mcp_test_server_test_tool",
            ),
            (
                "test_server",
                Resource,
                "test_resource",
                "mcp_test_server_resource_test_resource",
            ),
            (
                "test_server",
                Prompt,
                "test_prompt",
                "mcp_test_server_prompt_test_prompt",
            ),
            ("test", ResourceTemplate, "files", "mcp_test_resource_files"),
            (
                "test",
                Tool,
                &long_tool,
                "mcp_test_tool-very-long-name-very-long-name-very-long-n_e782e956",
            ),
            (
                &long_server,
                Tool,
                "search",
                "mcp_very-long-server-name-very-long-server-name-very-lo_74acf91c",
            ),
            (
                "pg",
                Tool,
                "PostgreSQL System Information",
                "mcp_pg_PostgreSQL_System_Information",
            ),
            ("fs", Tool, "read.file", "mcp_fs_read_file"),
            ("srv", Tool, "查询天气", "mcp_srv_"),
        ];
        for (server, kind, raw, want) in cases {
            assert_eq!(base_name(server, kind, raw), want, "{server}/{kind}/{raw}");
        }
    }

    #[test]
    fn limit_length_cuts_long_names_to_exactly_64() {
        let long = format!("mcp_{}", "a".repeat(100));
        let want = format!("mcp_{}_158a4f31", "a".repeat(51));
        assert_eq!(limit_length(long), want);
        assert_eq!(want.len(), 64);

        let exact = "b".repeat(64);
        assert_eq!(limit_length(exact.clone()), exact);
        assert_eq!(limit_length(String::new()), "");
    }

    #[test]
    fn hundred_char_tool_name_gives_64_chars() {
        let name = base_name("srv", Tool, &"x".repeat(100));
        assert_eq!(name.len(), 64);
        assert!(name.starts_with("mcp_srv_xxx"));
        assert!(
            name.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
    }

    #[test]
    fn suffixed_names_differ_where_base_names_collide() {
        let pairs = [
            (("srv", Tool, "a b"), ("srv", Tool, "a.b")),
            (("a_b", Tool, "c"), ("a", Tool, "b_c")),
            (("fs", Tool, "read.file"), ("fs", Tool, "read_file")),
            (("s", Tool, "resource_x"), ("s", Resource, "x")),
            (("s", Resource, "x"), ("s", ResourceTemplate, "x")),
        ];
        for ((s1, k1, r1), (s2, k2, r2)) in pairs {
            assert_eq!(base_name(s1, k1, r1), base_name(s2, k2, r2));
            let (a, b) = (suffixed_name(s1, k1, r1), suffixed_name(s2, k2, r2));
            assert_ne!(a, b, "{s1}/{r1} vs {s2}/{r2}");
            assert!(a.starts_with(&base_name(s1, k1, r1)), "{a}");
            assert_eq!(a.len(), base_name(s1, k1, r1).len() + 9, "{a}");
        }
    }

    #[test]
    fn suffixed_name_has_exact_shape() {
        // sha1("srv\0tool\0a b")
        let a = suffixed_name("srv", Tool, "a b");
        assert_eq!(&a[..11], "mcp_srv_a_b");
        assert_eq!(a.len(), 20);
        let digest = Sha1::digest(b"srv\0tool\0a b");
        assert_eq!(a, format!("mcp_srv_a_b_{}", hex_prefix(&digest, 8)));

        // A blank raw part does not produce a double underscore.
        let blank = suffixed_name("srv", Tool, "查询天气");
        let digest = Sha1::digest("srv\0tool\0查询天气".as_bytes());
        assert_eq!(blank, format!("mcp_srv_{}", hex_prefix(&digest, 8)));
    }

    #[test]
    fn suffixed_long_names_stay_64_and_distinct() {
        let raw1 = format!("{}1", "y".repeat(80));
        let raw2 = format!("{} 1", "y".repeat(80));
        let a = suffixed_name("srv", Tool, &raw1);
        let b = suffixed_name("srv", Tool, &raw2);
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b);
        assert_eq!(
            suffixed_name_with("s", Resource, "f", "file:///a"),
            suffixed_name_with("s", Resource, "f", "file:///a")
        );
        assert_ne!(
            suffixed_name_with("s", Resource, "f", "file:///a"),
            suffixed_name_with("s", Resource, "f", "file:///b")
        );
    }

    #[test]
    fn blank_raw_parts_are_detected() {
        let cases = [
            ("查询天气", true),
            ("", true),
            ("___", true),
            ("..", true),
            ("a", false),
            ("-", false),
            ("天气a", false),
        ];
        for (raw, want) in cases {
            assert_eq!(is_blank(raw), want, "is_blank({raw:?})");
        }
    }

    #[test]
    fn hex_prefix_truncates() {
        assert_eq!(hex_prefix(&[0xab, 0xcd, 0xef], 5), "abcde");
        assert_eq!(hex_prefix(&[0x01], 8), "01");
    }
}
