//! The demo server's resources: two static ones and one template (resources/list,
//! resources/templates/list, resources/read).

use base64::Engine as _;
use rmcp::ErrorData as McpError;
use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};

use super::png;

/// URI of the static text resource.
pub const HELLO_URI: &str = "demo://static/hello";
/// URI of the static 1×1 PNG resource.
pub const PIXEL_URI: &str = "demo://static/pixel";
/// Template of the greeting resource (RFC 6570 level 1).
pub const GREETING_TEMPLATE: &str = "demo://greeting/{name}";
/// Text of [`HELLO_URI`].
pub const HELLO_TEXT: &str = "Hello from the demo server";

const GREETING_PREFIX: &str = "demo://greeting/";

/// The static resources, in list order.
pub fn list() -> Vec<Resource> {
    vec![
        Resource::new(HELLO_URI, "hello")
            .with_description("A static greeting")
            .with_mime_type("text/plain"),
        Resource::new(PIXEL_URI, "pixel")
            .with_description("A 1x1 PNG image")
            .with_mime_type("image/png"),
    ]
}

/// The resource templates, in list order.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(GREETING_TEMPLATE, "greeting")
            .with_description("A greeting for `name`")
            .with_mime_type("text/plain"),
    ]
}

/// Reads one resource (resources/read).
///
/// `demo://greeting/<name>` answers for any non-empty `name`, taken verbatim (no
/// percent-decoding).
///
/// # Errors
///
/// JSON-RPC `-32002` (resource not found) for any other URI.
pub fn read(uri: &str) -> Result<ReadResourceResult, McpError> {
    let contents = match uri {
        HELLO_URI => ResourceContents::text(HELLO_TEXT, uri),
        PIXEL_URI => {
            let blob = base64::engine::general_purpose::STANDARD.encode(png::gradient_rgba(1, 1));
            ResourceContents::blob(blob, uri).with_mime_type("image/png")
        }
        _ => match uri.strip_prefix(GREETING_PREFIX) {
            Some(name) if !name.is_empty() => {
                ResourceContents::text(format!("Hello, {name}!"), uri)
            }
            _ => {
                return Err(McpError::resource_not_found(
                    format!("no resource at {uri}"),
                    Some(serde_json::json!({ "uri": uri })),
                ));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;

    #[test]
    fn read_answers_known_uris_and_rejects_others() {
        let cases: &[(&str, Option<&str>)] = &[
            (HELLO_URI, Some(HELLO_TEXT)),
            ("demo://greeting/Ada", Some("Hello, Ada!")),
            ("demo://greeting/a b", Some("Hello, a b!")),
            ("demo://greeting/", None),
            ("demo://static/nope", None),
            ("file:///etc/passwd", None),
        ];
        for (uri, want) in cases {
            match (read(uri), want) {
                (Ok(r), Some(text)) => match &r.contents[..] {
                    [ResourceContents::TextResourceContents { text: got, .. }] => {
                        assert_eq!(got, text, "{uri}")
                    }
                    other => panic!("{uri}: unexpected contents {other:?}"),
                },
                (Err(e), None) => assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{uri}"),
                (got, want) => panic!("{uri}: got {got:?}, want {want:?}"),
            }
        }
    }
}
