//! Typed access to the fields of one server entry: `null` counts as absent, a wrong JSON type is
//! a [`ConfigError::Field`] naming server and field (with `[i]` or `.KEY` for nested values) and
//! the JSON type found, never the value.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::{Map, Value};

use super::ConfigError;
use super::error::json_type;
use super::expand::check_references;

/// Typed access to the fields of one entry, with errors naming server and field.
pub(crate) struct Fields<'a> {
    pub(crate) name: &'a str,
    pub(crate) obj: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }

    fn wrong_type(&self, field: &str, expected: &str, found: &Value) -> ConfigError {
        ConfigError::field(
            self.name,
            field,
            format!("expected {expected}, found {}", json_type(found)),
        )
    }

    pub(crate) fn string(&self, key: &str) -> Result<Option<&'a str>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    pub(crate) fn boolean(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(self.wrong_type(key, "true or false", other)),
        }
    }

    pub(crate) fn string_list(&self, key: &str) -> Result<Option<Vec<String>>, ConfigError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let items = value
            .as_array()
            .ok_or_else(|| self.wrong_type(key, "an array of strings", value))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(self.wrong_type(&format!("{key}[{i}]"), "a string", other)),
            })
            .collect::<Result<_, _>>()
            .map(Some)
    }

    pub(crate) fn string_map(&self, key: &str) -> Result<BTreeMap<String, String>, ConfigError> {
        let Some(value) = self.get(key) else {
            return Ok(BTreeMap::new());
        };
        let map = value
            .as_object()
            .ok_or_else(|| self.wrong_type(key, "an object of strings", value))?;
        map.iter()
            .map(|(k, v)| {
                let field = format!("{key}.{k}");
                match v {
                    Value::String(s) => {
                        check_references(self.name, &field, s)?;
                        Ok((k.clone(), s.clone()))
                    }
                    other => Err(self.wrong_type(&field, "a string", other)),
                }
            })
            .collect()
    }

    pub(crate) fn seconds(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        let Some(value) = self.get(key) else {
            return Ok(None);
        };
        let secs = value
            .as_f64()
            .ok_or_else(|| self.wrong_type(key, "a number of seconds", value))?;
        if secs.is_nan() || secs <= 0.0 {
            return Err(ConfigError::field(
                self.name,
                key,
                format!("must be a positive number of seconds, found {value}"),
            ));
        }
        Duration::try_from_secs_f64(secs)
            .map(Some)
            .map_err(|_| ConfigError::field(self.name, key, format!("{value} seconds is too long")))
    }
}
