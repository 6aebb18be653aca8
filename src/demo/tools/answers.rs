//! The tools whose answer depends only on their arguments and the process (`add`, `image`,
//! `big`, `append`, `argv`, `get_env`), and the text and error results every tool answers with.

use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock};

use super::{MAX_BIG_BYTES, MAX_IMAGE_SIDE, MAX_SLEEP_SECONDS};
use crate::demo::png;
use crate::demo::tool_args::{AddArgs, AppendArgs, BigArgs, GetEnvArgs, ImageArgs};

pub(super) fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s)])
}

pub(super) fn error(s: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(s)])
}

pub(super) fn add(AddArgs { a, b }: AddArgs) -> CallToolResult {
    let sum = a + b;
    let mut result = text(sum.to_string());
    result.structured_content = Some(serde_json::json!({ "sum": sum }));
    result
}

pub(super) fn image(ImageArgs { width, height }: ImageArgs) -> CallToolResult {
    let valid = 1..=MAX_IMAGE_SIDE;
    if !valid.contains(&width) || !valid.contains(&height) {
        return error(format!(
            "width and height must be between 1 and {MAX_IMAGE_SIDE}"
        ));
    }
    let bytes = png::gradient_rgba(width, height);
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    CallToolResult::success(vec![
        ContentBlock::image(data, "image/png"),
        ContentBlock::text(format!(
            "PNG image, {width}x{height} pixels, RGBA gradient, {} bytes",
            bytes.len()
        )),
    ])
}

pub(super) fn big(BigArgs { bytes }: BigArgs) -> CallToolResult {
    if bytes > MAX_BIG_BYTES {
        return error(format!("bytes must be at most {MAX_BIG_BYTES}"));
    }
    // bytes <= MAX_BIG_BYTES, which fits in usize on every supported target.
    let len = usize::try_from(bytes).unwrap_or(0);
    let body: String = (0..len)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    text(body)
}

/// The process's arguments after the program, exactly as the OS split them (a launch-quoting
/// test compares them byte for byte); an argument that is not Unicode is shown lossily.
pub(super) async fn append(
    AppendArgs {
        path,
        line,
        seconds,
    }: AppendArgs,
) -> CallToolResult {
    use tokio::io::AsyncWriteExt as _;
    let written = async {
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await?;
        file.write_all(format!("{line}\n").as_bytes()).await?;
        file.sync_all().await
    };
    if let Err(e) = written.await {
        return error(format!("cannot append to {path}: {e}"));
    }
    tokio::time::sleep(Duration::from_secs_f64(
        seconds.clamp(0.0, MAX_SLEEP_SECONDS),
    ))
    .await;
    text(format!("appended to {path}"))
}

pub(super) fn argv() -> CallToolResult {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    text(serde_json::Value::from(args).to_string())
}

pub(super) fn get_env(GetEnvArgs { name }: GetEnvArgs) -> CallToolResult {
    match std::env::var(&name) {
        Ok(value) => text(value),
        Err(std::env::VarError::NotPresent) => {
            error(format!("environment variable {name} is not set"))
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            error(format!("environment variable {name} is not valid unicode"))
        }
    }
}
