//! `firstListHold`: per agent, whether its first listing waits for the servers still starting.

use std::collections::BTreeMap;

use serde_json::Value;

use super::error::json_type;

/// Parses `firstListHold` (`{"<clientInfo.name>": true|false}`) into lower-cased names; a
/// value that is not an object, or a member that is not a boolean, is left out with a warning.
pub fn parse_first_list_hold(
    value: Option<&Value>,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    match value {
        None | Some(Value::Null) => {}
        Some(Value::Object(members)) => {
            for (name, v) in members {
                match v {
                    Value::Bool(b) => {
                        out.insert(name.to_lowercase(), *b);
                    }
                    other => warnings.push(format!(
                        "\"firstListHold\".\"{name}\" must be true or false, found {}; ignored",
                        json_type(other)
                    )),
                }
            }
        }
        Some(other) => warnings.push(format!(
            "\"firstListHold\" must be an object of agent names and true or false, found {}; ignored",
            json_type(other)
        )),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_lower_cased_and_bad_values_warned_about() {
        let mut warnings = Vec::new();
        let v = serde_json::json!({"Claude-Code": true, "x": 1, "nanobot": false});
        let got = parse_first_list_hold(Some(&v), &mut warnings);
        assert_eq!(
            got.into_iter().collect::<Vec<_>>(),
            [
                ("claude-code".to_owned(), true),
                ("nanobot".to_owned(), false)
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let got = parse_first_list_hold(Some(&serde_json::json!([1])), &mut warnings);
        assert!(got.is_empty());
        assert_eq!(warnings.len(), 2);
    }
}
