//! Catalog (DESIGN §4–6).

pub mod allowlist;
pub mod naming;
pub mod schema;
pub mod uri_template;
