//! Cursor pagination for tools/list, resources/list, resources/templates/list and
//! prompts/list.
//!
//! The cursor is the offset of the next item, as a decimal string. Clients must treat it as
//! opaque; the demo server uses the simplest encoding that lets tests craft a bad one.

use rmcp::ErrorData as McpError;
use rmcp::model::{Cursor, PaginatedRequestParams};

/// One page of items and the cursor of the next page, if any.
#[derive(Debug)]
pub struct Page<T> {
    pub items: Vec<T>,
    pub next_cursor: Option<Cursor>,
}

/// Cuts the page the request asks for out of `items`.
///
/// Without `page_size` the page is everything from the cursor on (so a cursor is still
/// checked). A cursor equal to `items.len()` is valid and yields an empty last page, which can
/// happen when the list shrinks between two requests.
///
/// # Errors
///
/// JSON-RPC `-32602` (invalid params) when the cursor is not a number or lies past the end.
pub fn paginate<T: Clone>(
    items: &[T],
    request: Option<&PaginatedRequestParams>,
    page_size: Option<usize>,
) -> Result<Page<T>, McpError> {
    let start = match request.and_then(|r| r.cursor.as_deref()) {
        None => 0,
        Some(cursor) => match cursor.parse::<usize>() {
            Ok(offset) if offset <= items.len() => offset,
            _ => {
                return Err(McpError::invalid_params(
                    format!("unknown cursor {cursor:?}"),
                    None,
                ));
            }
        },
    };
    let end = match page_size {
        Some(size) => start.saturating_add(size.max(1)).min(items.len()),
        None => items.len(),
    };
    let next_cursor = (end < items.len()).then(|| end.to_string());
    Ok(Page {
        items: items[start..end].to_vec(),
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;

    fn req(cursor: Option<&str>) -> PaginatedRequestParams {
        PaginatedRequestParams::default().with_cursor(cursor.map(str::to_owned))
    }

    /// (cursor, page size, expected items, expected next cursor)
    type Case<'a> = (Option<&'a str>, Option<usize>, &'a [i32], Option<&'a str>);

    #[test]
    fn pages_follow_cursors_to_the_end() {
        let items = [1, 2, 3, 4, 5];
        let cases: &[Case] = &[
            (None, None, &[1, 2, 3, 4, 5], None),
            (None, Some(2), &[1, 2], Some("2")),
            (Some("2"), Some(2), &[3, 4], Some("4")),
            (Some("4"), Some(2), &[5], None),
            (Some("5"), Some(2), &[], None),
            (Some("3"), None, &[4, 5], None),
            (None, Some(0), &[1], Some("1")),
            (None, Some(10), &[1, 2, 3, 4, 5], None),
        ];
        for (cursor, size, want, next) in cases {
            let page = paginate(&items, Some(&req(*cursor)), *size).unwrap();
            assert_eq!(page.items, *want, "cursor {cursor:?} size {size:?}");
            assert_eq!(page.next_cursor.as_deref(), *next, "cursor {cursor:?}");
        }
    }

    #[test]
    fn unknown_cursor_is_invalid_params() {
        for cursor in ["6", "-1", "abc", "", "1.5"] {
            let err = paginate(&[1, 2, 3, 4, 5], Some(&req(Some(cursor))), Some(2)).unwrap_err();
            assert_eq!(err.code, ErrorCode::INVALID_PARAMS, "cursor {cursor:?}");
        }
    }
}
