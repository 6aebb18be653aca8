//! Which names a secret may have.

use super::SecretError;

/// Longest accepted name, in bytes.
pub const MAX_NAME_LEN: usize = 200;

/// Checks that `name` can name a secret: 1 to 200 (`MAX_NAME_LEN`) printable ASCII characters,
/// none of them a space, `$`, `{`, `}`, a quote or a backslash (so it fits inside
/// `${secret:NAME}` and a shell argument as is), not starting with `.` (reserved for our own
/// bookkeeping entries, such as the name index).
///
/// # Errors
/// [`SecretError::InvalidName`] saying what is wrong.
pub fn validate_name(name: &str) -> Result<(), SecretError> {
    let reason = if name.is_empty() {
        Some("is empty")
    } else if name.len() > MAX_NAME_LEN {
        Some("is longer than 200 characters")
    } else if name.starts_with('.') {
        Some("must not start with `.`")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_graphic() && !b"${}\"'`\\".contains(&b))
    {
        Some("may use only printable ASCII without spaces, `$`, `{`, `}`, quotes or backslashes")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(SecretError::InvalidName {
            name: name.to_owned(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Longest name [`for_entry`] makes, in bytes: room below the 200-byte limit for a `-N` suffix
/// when the name is taken.
pub const MAX_ENTRY_NAME_LEN: usize = 180;

/// The keychain name for the value of `key` (an env variable, header or registry input) of
/// server `server`: `server.key`, every character a name cannot have (space, `$`, `{`, `}`,
/// quotes, backslash, non-ASCII) replaced by `_`, a leading `.` replaced by `_`, cut to
/// [`MAX_ENTRY_NAME_LEN`] bytes. Always passes [`validate_name`] unless empty.
pub fn for_entry(server: &str, key: &str) -> String {
    let mut name: String = format!("{server}.{key}")
        .chars()
        .map(|c| {
            if c.is_ascii_graphic() && !"${}\"'`\\".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.starts_with('.') {
        name.replace_range(..1, "_");
    }
    // Every character is ASCII now, so any byte index is a character boundary.
    name.truncate(MAX_ENTRY_NAME_LEN);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_are_valid_names() {
        assert_eq!(for_entry("linear", "Authorization"), "linear.Authorization");
        assert_eq!(for_entry(".x", "k"), "_x.k");
        assert_eq!(for_entry("a b", "${é}"), "a_b.____");
        let long = for_entry(&"s".repeat(300), "k");
        assert_eq!(long.len(), MAX_ENTRY_NAME_LEN);
        for name in [
            for_entry("linear", "Authorization"),
            for_entry(".x", "k"),
            for_entry("a b", "${é}"),
            long,
        ] {
            assert_eq!(validate_name(&name), Ok(()), "{name}");
        }
    }

    #[test]
    fn names_follow_the_documented_rules() {
        for ok in [
            "GITHUB_TOKEN",
            "a",
            "linear.Authorization",
            "oauth:docs/https://x.y/mcp?a=b",
        ] {
            assert_eq!(validate_name(ok), Ok(()), "{ok}");
        }
        let long = "x".repeat(MAX_NAME_LEN + 1);
        for bad in [
            "", ".index", "a b", "a$b", "a{b", "a}b", "a\"b", "a'b", "a\\b", "é", "a\nb", &long,
        ] {
            assert!(
                matches!(validate_name(bad), Err(SecretError::InvalidName { .. })),
                "{bad:?}"
            );
        }
    }
}
