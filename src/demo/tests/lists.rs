//! Lists and reads: pagination, resources, the template, prompts and tools/list_changed.

use super::*;

#[tokio::test]
async fn pagination_follows_cursors_and_rejects_unknown_ones() {
    let opts = DemoOptions {
        test_tools: true,
        extra_tools: 5,
        page_size: Some(2),
        ..DemoOptions::default()
    };
    let s = connect(opts).await;
    let mut names = Vec::new();
    let mut cursor = None;
    loop {
        let page = s
            .client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .expect("page");
        assert!(page.tools.len() <= 2);
        names.extend(page.tools.into_iter().map(|t| t.name.into_owned()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let all: Vec<_> = s
        .client
        .list_all_tools()
        .await
        .expect("all")
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    assert_eq!(names, all);
    assert_eq!(all.len(), 4 + 14 + 5);
    assert_eq!(all.last().map(String::as_str), Some("gen_4"));
    assert_eq!(first_text(&call(&s, "gen_4", json!({})).await), "gen_4 ok");

    assert_eq!(
        s.client
            .list_all_resources()
            .await
            .expect("resources")
            .len(),
        2
    );
    assert_eq!(s.client.list_all_prompts().await.expect("prompts").len(), 2);
    assert_eq!(
        s.client
            .list_all_resource_templates()
            .await
            .expect("templates")
            .len(),
        1
    );

    let bad = PaginatedRequestParams::default().with_cursor(Some("bogus".to_owned()));
    let err = s
        .client
        .list_prompts(Some(bad))
        .await
        .expect_err("bad cursor");
    let ServiceError::McpError(e) = err else {
        panic!("expected a JSON-RPC error, got {err}");
    };
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
}

#[tokio::test]
async fn resources_and_template_read_and_unknown_uri_is_not_found() {
    let s = connect(DemoOptions::default()).await;
    let read = |uri: &str| s.client.read_resource(ReadResourceRequestParams::new(uri));
    let hello = read(resources::HELLO_URI).await.expect("hello");
    let ResourceContents::TextResourceContents { text, .. } = &hello.contents[0] else {
        panic!("hello is text");
    };
    assert_eq!(text, "Hello from the demo server");

    let pixel = read(resources::PIXEL_URI).await.expect("pixel");
    let ResourceContents::BlobResourceContents {
        blob, mime_type, ..
    } = &pixel.contents[0]
    else {
        panic!("pixel is a blob");
    };
    assert_eq!(mime_type.as_deref(), Some("image/png"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .expect("base64");
    assert_eq!(bytes[..8], png::PNG_SIGNATURE);

    let greeting = read("demo://greeting/Ada").await.expect("greeting");
    let ResourceContents::TextResourceContents { text, .. } = &greeting.contents[0] else {
        panic!("greeting is text");
    };
    assert_eq!(text, "Hello, Ada!");

    let err = read("demo://nowhere").await.expect_err("unknown uri");
    let ServiceError::McpError(e) = err else {
        panic!("expected a JSON-RPC error, got {err}");
    };
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
}

#[tokio::test]
async fn prompts_render_messages_and_require_arguments() {
    let s = connect(DemoOptions::default()).await;
    let get = |name: &str, arguments: serde_json::Value| {
        s.client
            .get_prompt(GetPromptRequestParams::new(name).with_arguments(args(arguments)))
    };
    let greet = get("greet", json!({"name": "Ada"})).await.expect("greet");
    assert_eq!(greet.messages.len(), 1);
    assert_eq!(greet.messages[0].role, Role::User);
    let text = greet.messages[0]
        .content
        .as_text()
        .expect("text")
        .text
        .clone();
    assert_eq!(text, "Please greet Ada in a friendly way.");
    let formal = get("greet", json!({"name": "Ada", "style": "formal"}))
        .await
        .expect("greet");
    let text = formal.messages[0]
        .content
        .as_text()
        .expect("text")
        .text
        .clone();
    assert_eq!(text, "Please greet Ada in a formal way.");

    let review = get("review_code", json!({"code": "fn main() {}"}))
        .await
        .expect("review");
    let roles: Vec<_> = review.messages.iter().map(|m| m.role.clone()).collect();
    assert_eq!(roles, [Role::User, Role::Assistant]);

    for (name, arguments) in [("greet", json!({})), ("nope", json!({}))] {
        let err = get(name, arguments).await.expect_err(name);
        let ServiceError::McpError(e) = err else {
            panic!("expected a JSON-RPC error, got {err}");
        };
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{name}");
    }
}

#[tokio::test]
async fn toggle_extra_notifies_list_changed_and_adds_then_removes_extra() {
    let s = connect(test_opts()).await;
    let has_extra = || async {
        let tools = s.client.list_all_tools().await.expect("list");
        tools.iter().any(|t| t.name == "extra")
    };
    assert!(!has_extra().await);

    for (added, answer) in [(true, "extra added"), (false, "extra removed")] {
        let changed = s.handler.tools_changed.notified();
        assert_eq!(
            first_text(&call(&s, "toggle_extra", json!({})).await),
            answer
        );
        tokio::time::timeout(Duration::from_secs(5), changed)
            .await
            .expect("notifications/tools/list_changed arrives");
        assert_eq!(has_extra().await, added);
        if added {
            assert_eq!(first_text(&call(&s, "extra", json!({})).await), "extra ok");
        }
    }
}
