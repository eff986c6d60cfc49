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
    push_json_str_inner(out, s);
    out.push('"');
}

/// The escaped characters of `s`, without the quotes.
fn push_json_str_inner(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut run = 0; // start of the bytes not yet copied
    let mut at = 0;
    while let Some(i) = next_escape(bytes, at) {
        out.push_str(&s[run..i]);
        let b = bytes[i];
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x08 => out.push_str("\\b"),
            0x0c => out.push_str("\\f"),
            _ => {
                let _ = write!(out, "\\u{b:04x}");
            }
        }
        run = i + 1;
        at = i + 1;
    }
    out.push_str(&s[run..]);
}

/// The first byte at or after `from` that JSON escapes (`"`, `\\`, a control character),
/// eight bytes at a time.
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let mut i = from;
    while i + 8 <= bytes.len() {
        let x = u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        // a byte below 0x20 (bytes >= 0x80 are not: their high bit is masked out by !x)
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGHS;
        if control
            | has_zero(x ^ (ONES * u64::from(b'"')))
            | has_zero(x ^ (ONES * u64::from(b'\\')))
            != 0
        {
            break;
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| b < 0x20 || b == b'"' || b == b'\\')
        .map(|k| i + k)
}

/// An id: the first 32 hex digits of a blake3 digest, kept inline (no allocation).
#[derive(Clone, Copy)]
pub struct Id([u8; 32]);

impl Id {
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("hex digits are ASCII")
    }
}

fn digest32(json: &str) -> Id {
    let mut id = [0u8; 32];
    hex_prefix(blake3::hash(json.as_bytes()).as_bytes(), &mut id);
    Id(id)
}

/// The first `out.len()` lowercase hex digits of `digest` (`hexdigest()[:n]`, n even),
/// without formatting the whole digest.
pub fn hex_prefix(digest: &[u8], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (pair, byte) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
}

/// Block ids of one document, with the per-(kind, text) occurrence counter of
/// `parsers.base.BlockIds`.
pub struct BlockIds<'t> {
    prefix: String,
    json: String,
    seen: HashMap<(&'static str, &'t str), u64, BuildHasherDefault<Fx>>,
}

/// A multiply-rotate hasher over 8-byte words (FxHash's): the counter's keys are the
/// document's own text, so no hash-flooding defence is needed, and SipHash (then a
/// byte-at-a-time FNV) was a visible share of parsing.
#[derive(Default)]
pub struct Fx(u64);

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Fx {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for Fx {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ rest.len() as u64);
    }
}

impl<'t> BlockIds<'t> {
    pub fn new(doc_id: &str, blocks: usize) -> Self {
        let mut prefix = String::from("[\"block\",");
        push_json_str(&mut prefix, doc_id);
        prefix.push(',');
        BlockIds {
            prefix,
            json: String::new(),
            seen: HashMap::with_capacity_and_hasher(blocks, Default::default()),
        }
    }

    pub fn next(&mut self, kind: &'static str, text: &'t str) -> Id {
        let slot = self.seen.entry((kind, text)).or_insert(0);
        let occurrence = *slot;
        *slot += 1;
        let json = &mut self.json;
        json.clear();
        json.push_str(&self.prefix);
        push_json_str(json, kind);
        json.push(',');
        push_json_str(json, text);
        let _ = write!(json, ",{occurrence}]");
        digest32(json)
    }
}

/// `ids.chunk_id(doc_id, label, block_ids, id_policy)`, written in `json` (a scratch
/// buffer); `id_policy` is the policy hash, with `#c<slice_start>` for a slice.
pub fn chunk_id<'i>(
    json: &mut String,
    doc_id: &str,
    label: &str,
    block_ids: impl Iterator<Item = &'i Id>,
    policy_hash: &str,
    slice_start: Option<usize>,
) -> Id {
    json.clear();
    json.push_str("[\"chunk\",");
    push_json_str(json, doc_id);
    json.push(',');
    push_json_str(json, label);
    json.push_str(",[");
    for (i, id) in block_ids.enumerate() {
        if i > 0 {
            json.push(',');
        }
        json.push('"');
        json.push_str(id.as_str()); // hex digits: nothing to escape
        json.push('"');
    }
    json.push_str("],\"");
    push_json_str_inner(json, policy_hash);
    if let Some(at) = slice_start {
        let _ = write!(json, "#c{at}");
    }
    json.push_str("\"]");
    digest32(json)
}

/// `ids.doc_id(source_uri)`: `h(["doc", source_uri])[:32]`.
pub fn doc_id(source_uri: &str) -> Id {
    let mut json = String::from("[\"doc\",");
    push_json_str(&mut json, source_uri);
    json.push(']');
    digest32(&json)
}

/// `ids.content_hash(raw)`: the blake3 hex digest of the raw bytes.
pub fn content_hash(raw: &[u8]) -> String {
    blake3::hash(raw).to_hex().as_str().to_owned()
}
