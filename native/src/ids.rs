//! The id recipes of `kebab_chunk.model.ids` for the shapes the core makes: a block id
//! `h(["block", doc_id, kind, text, occurrence])[:32]` and a chunk id
//! `h(["chunk", doc_id, label, block_ids, id_policy])[:32]`, where `h` is the blake3 hex
//! digest of the recipe's RFC 8785 JSON. For lists of strings and small integers that JSON
//! is compact JSON with Python's `json.encoder.encode_basestring` escapes (what
//! `ids._flat_json` writes), so it is written here directly.

use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{BuildHasherDefault, Hasher};

/// `json.encoder.encode_basestring(s)`: quotes, `\"`, `\\`, the short escapes of
/// `\b \f \n \r \t`, `\u00xx` (lowercase hex) for other control characters; the rest raw.
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut run = 0; // start of the bytes not yet copied
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[run..i]);
        if escape.is_empty() {
            let _ = write!(out, "\\u{b:04x}");
        } else {
            out.push_str(escape);
        }
        run = i + 1;
    }
    out.push_str(&s[run..]);
    out.push('"');
}

fn digest32(json: &str) -> String {
    let hex = blake3::hash(json.as_bytes()).to_hex();
    hex.as_str()[..32].to_owned()
}

/// Block ids of one document, with the per-(kind, text) occurrence counter of
/// `parsers.base.BlockIds`.
pub struct BlockIds<'t> {
    prefix: String,
    seen: HashMap<(&'static str, &'t str), u64, BuildHasherDefault<Fnv>>,
}

/// FNV-1a: the counter's keys are the document's own text, so no hash-flooding defence is
/// needed, and SipHash was a visible share of parsing.
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

impl<'t> BlockIds<'t> {
    pub fn new(doc_id: &str) -> Self {
        let mut prefix = String::from("[\"block\",");
        push_json_str(&mut prefix, doc_id);
        prefix.push(',');
        BlockIds {
            prefix,
            seen: HashMap::default(),
        }
    }

    pub fn next(&mut self, kind: &'static str, text: &'t str) -> String {
        let slot = self.seen.entry((kind, text)).or_insert(0);
        let occurrence = *slot;
        *slot += 1;
        let mut json = String::with_capacity(self.prefix.len() + text.len() + 32);
        json.push_str(&self.prefix);
        push_json_str(&mut json, kind);
        json.push(',');
        push_json_str(&mut json, text);
        let _ = write!(json, ",{occurrence}]");
        digest32(&json)
    }
}

/// `ids.chunk_id(doc_id, label, block_ids, id_policy)`.
pub fn chunk_id(doc_id: &str, label: &str, block_ids: &[&str], id_policy: &str) -> String {
    let mut json = String::from("[\"chunk\",");
    push_json_str(&mut json, doc_id);
    json.push(',');
    push_json_str(&mut json, label);
    json.push_str(",[");
    for (i, id) in block_ids.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        push_json_str(&mut json, id);
    }
    json.push_str("],");
    push_json_str(&mut json, id_policy);
    json.push(']');
    digest32(&json)
}
