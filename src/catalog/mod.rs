//! Catalog (DESIGN §4–6).

pub mod naming;
pub mod schema;
