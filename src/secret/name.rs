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

#[cfg(test)]
mod tests {
    use super::*;

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
