//! Okapi BM25 over short documents (one per tool), in plain Rust.
//!
//! Why our own and not a crate: the index is a few hundred lines' worth of arithmetic over a
//! few thousand short documents, rebuilt with each catalog; the crates that fit (`bm25`,
//! `probly-search`, `tantivy`) bring their own tokenizers, embedders or an on-disk index we
//! would have to work around, and none is deterministic about ties by itself. Here ties go to
//! the earlier document, so the same catalog and query always rank the same.
//!
//! Tokens ([`tokens`]): runs of ASCII letters and digits (other letters kept as they are),
//! split at camelCase humps, lower-cased, English stop words dropped, and reduced to a light
//! stem (`stem`): a plural `s` cut (`files` → `file`, not `class`), then `-ing`/`-ed` and a
//! final `e` (`merging`, `merged`, `merge` → `merg`), so a query's verb form meets the
//! description's. Scoring: `k1` = 1.2, `b` = 0.75, IDF
//! `ln(1 + (N - n + 0.5) / (n + 0.5))` (never negative).

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "get", "how", "i",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "some", "that", "the", "this",
    "to", "use", "want", "what", "which", "with", "you", "your",
];

/// The tokens of `text` (module docs), in order, repeats kept.
pub fn tokens(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .filter(|w| !STOP_WORDS.contains(&w.as_str()))
        .map(stem)
        .collect()
}

/// The light stem of `word` (module docs): [`singular`], then `-ing` or `-ed` cut when at least
/// three letters stay (a doubled final consonant undone: `stopped` → `stop`), else a final `e`
/// cut from a word of five letters or more. A subset of Porter's steps 1a and 1b, without its
/// exceptions: enough to meet verb forms, never so much that two common words meet.
fn stem(word: String) -> String {
    let word = singular(word);
    for suffix in ["ing", "ed"] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            let mut base = base.to_owned();
            let b = base.as_bytes();
            let n = b.len();
            if n >= 3 && b[n - 1] == b[n - 2] && !matches!(b[n - 1], b'l' | b's' | b'z') {
                base.pop();
            }
            return base;
        }
    }
    if word.chars().count() > 4
        && let Some(base) = word.strip_suffix('e')
    {
        return base.to_owned();
    }
    word
}

/// `word` without a plural `s` (`files` → `file`, `directories` → `directory`).
fn singular(word: String) -> String {
    if word.len() > 4
        && let Some(stem) = word.strip_suffix("ies")
    {
        return format!("{stem}y");
    }
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        let mut w = word;
        w.pop();
        return w;
    }
    word
}

/// One document: its term counts and length in tokens.
#[derive(Debug, Default)]
struct Doc {
    counts: HashMap<String, u32>,
    len: u32,
}

/// A BM25 index of documents numbered in the order they were given.
#[derive(Debug, Default)]
pub struct Index {
    docs: Vec<Doc>,
    /// Term → the number of documents that hold it.
    frequency: HashMap<String, u32>,
    average_len: f64,
}

impl Index {
    /// Indexes `documents` (each the text of one tool), numbered from 0.
    pub fn build<I, S>(documents: I) -> Index
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut index = Index::default();
        let mut total = 0u64;
        for text in documents {
            let mut doc = Doc::default();
            for token in tokens(text.as_ref()) {
                *doc.counts.entry(token).or_default() += 1;
                doc.len += 1;
            }
            for term in doc.counts.keys() {
                *index.frequency.entry(term.clone()).or_default() += 1;
            }
            total += u64::from(doc.len);
            index.docs.push(doc);
        }
        if !index.docs.is_empty() {
            index.average_len = total as f64 / index.docs.len() as f64;
        }
        index
    }

    /// The number of documents.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether no document was indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Up to `limit` documents that share a term with `query`, best first, as (number,
    /// score); equal scores in document order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<(usize, f64)> {
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let n = self.docs.len() as f64;
        let weights: Vec<(&str, f64)> = terms
            .iter()
            .filter_map(|t| {
                let df = f64::from(*self.frequency.get(t)?);
                Some((t.as_str(), (1.0 + (n - df + 0.5) / (df + 0.5)).ln()))
            })
            .collect();
        let mut scored: Vec<(usize, f64)> = self
            .docs
            .iter()
            .enumerate()
            .filter_map(|(i, doc)| {
                let norm = K1 * (1.0 - B + B * f64::from(doc.len) / self.average_len.max(1.0));
                let score: f64 = weights
                    .iter()
                    .filter_map(|(t, idf)| {
                        let tf = f64::from(*doc.counts.get(*t)?);
                        Some(idf * tf * (K1 + 1.0) / (tf + norm))
                    })
                    .sum();
                (score > 0.0).then_some((i, score))
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
    }
}

#[cfg(test)]
mod tests {
    use super::{Index, tokens};

    #[test]
    fn names_split_on_underscores_dashes_and_humps() {
        assert_eq!(
            tokens("mcp_git_diff-staged listDirectoryWithSizes HTTPServer2"),
            [
                "mcp",
                "git",
                "diff",
                "stag",
                "list",
                "directory",
                "size",
                "httpserver2"
            ]
        );
        assert_eq!(
            tokens("Read the files in directories"),
            ["read", "file", "directory"]
        );
    }

    #[test]
    fn verb_forms_meet_their_stem_and_short_words_stay() {
        for (a, b) in [
            ("merging", "merge"),
            ("merged", "merges"),
            ("stored", "store"),
            ("stopped", "stop"),
            ("created", "create"),
            ("images", "image"),
        ] {
            assert_eq!(tokens(a), tokens(b), "{a} / {b}");
        }
        assert_eq!(
            tokens("thing file time size fill"),
            ["thing", "file", "time", "size", "fill"]
        );
        assert_ne!(tokens("need"), tokens("ne"));
    }

    #[test]
    fn the_rarer_matching_term_wins_and_ties_keep_document_order() {
        let index = Index::build([
            "read a file",
            "write a file",
            "list a directory",
            "read a file",
        ]);
        let hits = index.search("read file", 10);
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), [0, 3, 1]);
        assert_eq!(hits[0].1, hits[1].1);
        assert!(index.search("nothing matches", 10).is_empty());
        assert_eq!(index.search("file", 1).len(), 1);
    }
}
