//! The few bytes of a message the fast path reads: the envelope of an agent's `tools/call` or
//! `notifications/cancelled`, and the envelope of the server's answer. Members are borrowed
//! from the line ([`RawValue`]); a `result` is never decoded into a tree.

mod answer;
mod incoming;
mod reply;
#[cfg(test)]
mod tests;

use std::ops::Range;

use serde_json::value::RawValue;

pub use answer::{Answer, RpcError, is_plain_result, may_name_a_uri};
pub use incoming::{
    CallParams, CancelledParams, Incoming, ListParams, id_key, is_task_augmented, list_start,
    needs_slow_path, plain_id,
};
pub use reply::Reply;

/// Where `inner` (borrowed from `line`) lies in `line`.
pub fn range_in(line: &[u8], inner: &RawValue) -> Option<Range<usize>> {
    let start = (inner.get().as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = start + inner.get().len();
    (end <= line.len()).then_some(start..end)
}

/// The upstream `tools/call` line: `{"jsonrpc":"2.0","id":<id>,"method":"tools/call","params":{"name":<name>[,"arguments":<args>]}}`,
/// `args` the JSON text to send (the call's `Forward::raw_arguments` decides it).
pub fn request_frame(
    id_json: &str,
    raw_name: &str,
    arguments: Option<&str>,
    meta: Option<&str>,
) -> Vec<u8> {
    let name = serde_json::Value::String(raw_name.to_owned()).to_string();
    let args = arguments;
    let mut frame =
        Vec::with_capacity(90 + name.len() + args.map_or(0, str::len) + meta.map_or(0, str::len));
    frame.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    frame.extend_from_slice(id_json.as_bytes());
    frame.extend_from_slice(b",\"method\":\"tools/call\",\"params\":{\"name\":");
    frame.extend_from_slice(name.as_bytes());
    if let Some(args) = args {
        frame.extend_from_slice(b",\"arguments\":");
        frame.extend_from_slice(args.as_bytes());
    }
    if let Some(meta) = meta {
        frame.extend_from_slice(b",\"_meta\":");
        frame.extend_from_slice(meta.as_bytes());
    }
    frame.extend_from_slice(b"}}\n");
    frame
}
