//! Chunk rows as the spill entries of `WriteChunks` (`kebab_chunk/output/spill_entry.py`):
//! `chunk_id`, NUL, the chunk index line, NUL, `M` and the row tuple in marshal format 2.
//!
//! The index line is `chunk_id \t content_digest \t record_digest`, each digest the first
//! 16 hex digits of blake3 over compact JSON with Python's string escapes (what
//! `chunk_index._json` writes for rows whose integers are all safe): of
//! `[text, heading_path, captions, token_estimate]` and of the whole row. marshal format 2
//! writes a tuple as `(` and a 4-byte count, a str as `u`, a 4-byte length and its UTF-8,
//! an int as `i` and 4 bytes when it fits 32 bits (else `l` and 15-bit digits), None as
//! `N`; all little-endian, with no back-references.

use crate::ids::push_json_str;
use crate::mdchunk::{Parsed, Row, Span};
use std::fmt::Write;

/// Integers JSON writes exactly (`chunk_index._SAFE_INT`); a row with another is declined.
const SAFE_INT: i64 = 1 << 53;
const PARSER: &str = "md-pyromark-v1";
const SPAN_KIND: &str = "lines";

/// What every row of one document names besides its own values.
pub struct Names<'n> {
    pub doc_id: &'n str,
    pub source_uri: &'n str,
    pub content_hash: &'n str,
    pub label: &'n str,
    pub policy_hash: &'n str,
}

impl<'n> Names<'n> {
    /// The row's first six fields: `chunk_id` to `parser_version`.
    fn leading(&self, row: &Row<'n>) -> [&'n str; 6] {
        [
            row.chunk_id,
            self.doc_id,
            self.source_uri,
            self.label,
            self.policy_hash,
            PARSER,
        ]
    }
}

/// The spill entries of the rows written so far, with scratch buffers reused per row.
#[derive(Default)]
pub struct Entries {
    pub items: Vec<Vec<u8>>,
    json: String,
    embed: String,
}

fn m_int(out: &mut Vec<u8>, v: i64) {
    if let Ok(small) = i32::try_from(v) {
        out.push(b'i');
        out.extend_from_slice(&small.to_le_bytes());
        return;
    }
    // TYPE_LONG: the signed count of 15-bit digits, then the digits, least significant first
    let mut rest = v.unsigned_abs();
    let mut digits = Vec::new();
    while rest != 0 {
        digits.push((rest & 0x7fff) as u16);
        rest >>= 15;
    }
    let count = digits.len() as i32;
    out.push(b'l');
    out.extend_from_slice(&(if v < 0 { -count } else { count }).to_le_bytes());
    for d in digits {
        out.extend_from_slice(&d.to_le_bytes());
    }
}

fn m_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'u');
    let len = u32::try_from(s.len()).expect("a string under 4 GiB");
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn m_tuple(out: &mut Vec<u8>, len: usize) {
    out.push(b'(');
    let len = u32::try_from(len).expect("a tuple under 2^32 items");
    out.extend_from_slice(&len.to_le_bytes());
}

fn m_strs<'s>(out: &mut Vec<u8>, items: impl ExactSizeIterator<Item = &'s str>) {
    m_tuple(out, items.len());
    for s in items {
        m_str(out, s);
    }
}

fn j_strs<'s>(out: &mut String, items: impl Iterator<Item = &'s str>) {
    out.push('[');
    for (i, s) in items.enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_json_str(out, s);
    }
    out.push(']');
}

fn digest16(json: &str, out: &mut Vec<u8>) {
    let mut hex = [0u8; 16];
    crate::ids::hex_prefix(blake3::hash(json.as_bytes()).as_bytes(), &mut hex);
    out.extend_from_slice(&hex);
}

/// Whether every integer of a row is one JSON writes exactly.
fn ints_safe(row: &Row, embed_tokens: i64) -> bool {
    let safe = |v: i64| -SAFE_INT < v && v < SAFE_INT;
    safe(row.position as i64)
        && safe(row.tokens)
        && safe(embed_tokens)
        && row.spans.iter().all(|s| {
            [s.line_start, s.line_end, s.char_start, s.char_end]
                .iter()
                .all(|&v| safe(v as i64))
        })
}

impl Entries {
    /// Adds the entry of `row`; false (nothing added) when one of its integers is outside
    /// what JSON writes exactly, where the Python path's digest takes another road.
    pub fn push(&mut self, parsed: &Parsed, row: &Row, names: &Names, count_chars: bool) -> bool {
        // embed_text: the heading lines it names and the captions, then the text
        let embed = &mut self.embed;
        embed.clear();
        for (i, line) in row.embed_lines().enumerate() {
            if i > 0 {
                embed.push('\n');
            }
            embed.push_str(line);
        }
        if !embed.is_empty() {
            embed.push('\n');
        }
        embed.push_str(row.text);
        let embed_tokens = if count_chars {
            embed.chars().count() as i64
        } else {
            embed.len().div_ceil(3) as i64
        };
        if !ints_safe(row, embed_tokens) {
            return false;
        }
        let block_ids = || row.block_ids.iter().map(|&i| parsed.blocks[i].id.as_str());
        let headings = || row.heading_path.iter().map(String::as_str);
        let captions = || row.captions.iter().map(String::as_str);

        let mut out = Vec::with_capacity(2 * (row.text.len() + embed.len()) + 256);
        out.extend_from_slice(row.chunk_id.as_bytes());
        out.push(0);
        out.extend_from_slice(row.chunk_id.as_bytes());
        out.push(b'\t');
        // content digest: [text, heading_path, captions, token_estimate]
        let json = &mut self.json;
        json.clear();
        json.push('[');
        push_json_str(json, row.text);
        json.push(',');
        j_strs(json, headings());
        json.push(',');
        j_strs(json, captions());
        let _ = write!(json, ",{}]", row.tokens);
        digest16(json, &mut out);
        out.push(b'\t');
        // record digest: the whole row
        json.clear();
        json.push('[');
        for s in names.leading(row) {
            push_json_str(json, s);
            json.push(',');
        }
        let _ = write!(json, "{},", row.position);
        push_json_str(json, row.text);
        json.push(',');
        j_strs(json, headings());
        json.push(',');
        j_strs(json, captions());
        json.push(',');
        j_strs(json, block_ids());
        json.push_str(",[");
        for (i, s) in row.spans.iter().enumerate() {
            if i > 0 {
                json.push(',');
            }
            let _ = write!(
                json,
                "[\"{SPAN_KIND}\",{},{},null,null,{},{}]",
                s.line_start, s.line_end, s.char_start, s.char_end
            );
        }
        let _ = write!(json, "],{},", row.tokens);
        push_json_str(json, names.content_hash);
        json.push(',');
        push_json_str(json, embed);
        let _ = write!(json, ",{embed_tokens}]");
        digest16(json, &mut out);
        out.push(0);
        // the row tuple, marshal format 2
        out.push(b'M');
        m_tuple(&mut out, 16);
        for s in names.leading(row) {
            m_str(&mut out, s);
        }
        m_int(&mut out, row.position as i64);
        m_str(&mut out, row.text);
        m_strs(&mut out, row.heading_path.iter().map(String::as_str));
        m_strs(&mut out, row.captions.iter().map(String::as_str));
        m_strs(
            &mut out,
            row.block_ids.iter().map(|&i| parsed.blocks[i].id.as_str()),
        );
        m_tuple(&mut out, row.spans.len());
        for s in row.spans {
            m_span(&mut out, s);
        }
        m_int(&mut out, row.tokens);
        m_str(&mut out, names.content_hash);
        m_str(&mut out, embed);
        m_int(&mut out, embed_tokens);
        self.items.push(out);
        true
    }
}

fn m_span(out: &mut Vec<u8>, s: &Span) {
    m_tuple(out, 7);
    m_str(out, SPAN_KIND);
    m_int(out, s.line_start as i64);
    m_int(out, s.line_end as i64);
    out.push(b'N');
    out.push(b'N');
    m_int(out, s.char_start as i64);
    m_int(out, s.char_end as i64);
}
