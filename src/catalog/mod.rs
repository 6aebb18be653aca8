//! Catalog (DESIGN §4–6).
