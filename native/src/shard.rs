//! One shard's part-file rows from its sorted spill segments: what `_WritePartFn` of
//! `kebab_chunk/beam/write.py` does with `merged_segments`, `_unique_rows` and
//! `rows_table`, as Arrow buffers.
//!
//! A segment is `(path, offset, length)` of a local run file: entries, each preceded by
//! its length (4 bytes, little-endian), in bytes order (`kebab_chunk/beam/spill.py`). The
//! chains (each a list of segments whose concatenation is sorted) are merged in bytes
//! order; entries with one `chunk_id` collapse when they are identical. An entry is
//! `chunk_id`, NUL, the chunk index line, NUL, `M` and the row in marshal format 2
//! (`kebab_chunk/output/spill_entry.py`).
//!
//! Whatever this does not read exactly as the Python path would is declined (None), and
//! the Python path writes the shard: two different records under one id (error rows), a
//! row in another encoding or shape, text that is not UTF-8, a truncated or unreadable
//! file (its error message is the Python path's), a column over 2 GiB.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::columns::{buffer, le_i32, le_i64, StringLists, Strings};

pub type Segment = (String, u64, u64);

/// Why the Python path must write the shard (the reasons only matter to the tests, which
/// call the Python path for them too).
#[derive(Debug)]
pub struct Decline;

impl From<std::io::Error> for Decline {
    fn from(_: std::io::Error) -> Self {
        Decline
    }
}

/// The entries of one chain of segments, as a stream.
struct Chain {
    segments: std::vec::IntoIter<Segment>,
    reader: Option<BufReader<File>>,
    left: u64,
}

impl Chain {
    fn new(segments: Vec<Segment>) -> Self {
        Chain {
            segments: segments.into_iter(),
            reader: None,
            left: 0,
        }
    }

    fn next_entry(&mut self) -> Result<Option<Vec<u8>>, Decline> {
        loop {
            if let Some(reader) = self.reader.as_mut() {
                if self.left > 0 {
                    let mut header = [0u8; 4];
                    reader.read_exact(&mut header)?;
                    let size = u64::from(u32::from_le_bytes(header));
                    if size + 4 > self.left {
                        return Err(Decline);
                    }
                    let mut entry = vec![0u8; size as usize];
                    reader.read_exact(&mut entry)?;
                    self.left -= size + 4;
                    return Ok(Some(entry));
                }
            }
            let Some((path, offset, length)) = self.segments.next() else {
                self.reader = None;
                return Ok(None);
            };
            let mut file = File::open(path)?;
            file.seek(SeekFrom::Start(offset))?;
            self.reader = Some(BufReader::with_capacity(1 << 16, file));
            self.left = length;
        }
    }
}

/// Marshal format 2 as `row_entry` writes it (`marshal.dumps(row, 2)`): tuples (or lists)
/// with a 4-byte count, strings as `u` (or `t`, interned) with a 4-byte length and UTF-8,
/// ints as `i` (4 bytes) or `l` (15-bit digits), None as `N`.
struct Marshal<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Marshal<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Decline> {
        let end = self.at.checked_add(n).ok_or(Decline)?;
        let part = self.data.get(self.at..end).ok_or(Decline)?;
        self.at = end;
        Ok(part)
    }

    fn tag(&mut self) -> Result<u8, Decline> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, Decline> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn none_next(&mut self) -> bool {
        if self.data.get(self.at) == Some(&b'N') {
            self.at += 1;
            return true;
        }
        false
    }

    fn str(&mut self) -> Result<&'a str, Decline> {
        match self.tag()? {
            b'u' | b't' => {
                let len = self.u32()? as usize;
                std::str::from_utf8(self.take(len)?).map_err(|_| Decline)
            }
            _ => Err(Decline),
        }
    }

    fn opt_str(&mut self) -> Result<Option<&'a str>, Decline> {
        if self.none_next() {
            return Ok(None);
        }
        self.str().map(Some)
    }

    fn int(&mut self) -> Result<i64, Decline> {
        match self.tag()? {
            b'i' => Ok(i64::from(self.u32()? as i32)),
            b'l' => {
                let count = self.u32()? as i32;
                let digits = count.unsigned_abs() as usize;
                if digits > 5 {
                    return Err(Decline); // beyond 75 bits: not an int64
                }
                let mut value: i128 = 0;
                for i in 0..digits {
                    let b = self.take(2)?;
                    let digit = i128::from(u16::from_le_bytes([b[0], b[1]]));
                    if digit >= 1 << 15 {
                        return Err(Decline);
                    }
                    value |= digit << (15 * i);
                }
                let value = if count < 0 { -value } else { value };
                i64::try_from(value).map_err(|_| Decline)
            }
            _ => Err(Decline),
        }
    }

    fn opt_int(&mut self) -> Result<Option<i64>, Decline> {
        if self.none_next() {
            return Ok(None);
        }
        self.int().map(Some)
    }

    fn seq(&mut self) -> Result<usize, Decline> {
        match self.tag()? {
            b'(' | b'[' => Ok(self.u32()? as usize),
            _ => Err(Decline),
        }
    }
}

/// An `int64` column with nulls.
#[derive(Default)]
struct OptInts {
    values: Vec<i64>,
    valid: Vec<bool>,
    nulls: usize,
}

impl OptInts {
    fn push(&mut self, value: Option<i64>) {
        self.values.push(value.unwrap_or(0));
        self.valid.push(value.is_some());
        self.nulls += usize::from(value.is_none());
    }
}

/// A `string` column with nulls.
#[derive(Default)]
struct OptStrings {
    strings: Strings,
    valid: Vec<bool>,
    nulls: usize,
}

impl OptStrings {
    fn push(&mut self, value: Option<&str>) {
        self.strings.push(value.unwrap_or(""));
        self.valid.push(value.is_some());
        self.nulls += usize::from(value.is_none());
    }
}

/// Arrow's validity bitmap (least significant bit first), or None without nulls.
fn bitmap(valid: &[bool], nulls: usize) -> Option<Vec<u8>> {
    (nulls > 0).then(|| {
        let mut bits = vec![0u8; valid.len().div_ceil(8)];
        for (i, _) in valid.iter().enumerate().filter(|(_, &v)| v) {
            bits[i / 8] |= 1 << (i % 8);
        }
        bits
    })
}

/// The columns of a part file (CHUNK_FILE_SCHEMA: every row field but `chunker_version`).
#[derive(Default)]
struct FileColumns {
    chunk_id: Strings,
    doc_id: Strings,
    source_uri: Strings,
    policy_hash: Strings,
    parser_version: Strings,
    position: Vec<i64>,
    text: Strings,
    heading_path: StringLists,
    captions: StringLists,
    block_ids: StringLists,
    span_offsets: Vec<i32>,
    kind: Strings,
    line_start: OptInts,
    line_end: OptInts,
    page: OptInts,
    reference: OptStrings,
    char_start: Vec<i64>,
    char_end: Vec<i64>,
    token_estimate: Vec<i64>,
    content_hash: Strings,
    embed_text: Strings,
    embed_tokens: Vec<i64>,
}

fn strings_of<'a>(m: &mut Marshal<'a>) -> Result<Vec<&'a str>, Decline> {
    (0..m.seq()?).map(|_| m.str()).collect()
}

impl FileColumns {
    /// Decodes one row (marshal bytes after the `M` flag) into the columns; returns its
    /// `source_uri`. Nothing is pushed when the row is declined.
    fn push<'a>(&mut self, data: &'a [u8]) -> Result<&'a str, Decline> {
        let m = &mut Marshal { data, at: 0 };
        if m.seq()? != 16 {
            return Err(Decline);
        }
        let leading = [m.str()?, m.str()?, m.str()?, m.str()?, m.str()?, m.str()?];
        let position = m.int()?;
        let text = m.str()?;
        let heading_path = strings_of(m)?;
        let captions = strings_of(m)?;
        let block_ids = strings_of(m)?;
        let mut spans = Vec::new();
        for _ in 0..m.seq()? {
            if m.seq()? != 7 {
                return Err(Decline);
            }
            let span = (
                m.str()?,
                m.opt_int()?,
                m.opt_int()?,
                m.opt_int()?,
                m.opt_str()?,
                m.int()?,
                m.int()?,
            );
            spans.push(span);
        }
        let token_estimate = m.int()?;
        let content_hash = m.str()?;
        let embed_text = m.str()?;
        let embed_tokens = m.int()?;
        if m.at != data.len() {
            return Err(Decline);
        }
        let [chunk_id, doc_id, source_uri, _label, policy_hash, parser_version] = leading;
        self.chunk_id.push(chunk_id);
        self.doc_id.push(doc_id);
        self.source_uri.push(source_uri);
        self.policy_hash.push(policy_hash);
        self.parser_version.push(parser_version);
        self.position.push(position);
        self.text.push(text);
        self.heading_path.push(heading_path);
        self.captions.push(captions);
        self.block_ids.push(block_ids);
        if self.span_offsets.is_empty() {
            self.span_offsets.push(0);
        }
        for (kind, line_start, line_end, page, reference, char_start, char_end) in spans {
            self.kind.push(kind);
            self.line_start.push(line_start);
            self.line_end.push(line_end);
            self.page.push(page);
            self.reference.push(reference);
            self.char_start.push(char_start);
            self.char_end.push(char_end);
        }
        let spans = i32::try_from(self.char_start.len()).map_err(|_| Decline)?;
        self.span_offsets.push(spans);
        self.token_estimate.push(token_estimate);
        self.content_hash.push(content_hash);
        self.embed_text.push(embed_text);
        self.embed_tokens.push(embed_tokens);
        Ok(source_uri)
    }

    fn into_dict(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        if self.span_offsets.is_empty() {
            self.span_offsets.push(0);
        }
        let out = PyDict::new(py);
        let strings = |s: Strings| -> PyResult<_> {
            Ok((buffer(py, le_i32(&s.offsets))?, buffer(py, s.data)?))
        };
        let lists = |l: StringLists| -> PyResult<_> {
            Ok((
                buffer(py, le_i32(&l.offsets))?,
                buffer(py, le_i32(&l.items.offsets))?,
                buffer(py, l.items.data)?,
            ))
        };
        let ints = |v: &[i64]| buffer(py, le_i64(v));
        let opt_ints = |v: OptInts| -> PyResult<_> {
            let bits = bitmap(&v.valid, v.nulls)
                .map(|b| buffer(py, b))
                .transpose()?;
            Ok((bits, buffer(py, le_i64(&v.values))?, v.nulls))
        };
        out.set_item("rows", self.position.len())?;
        out.set_item("spans", self.char_start.len())?;
        for (name, column) in [
            ("chunk_id", std::mem::take(&mut self.chunk_id)),
            ("doc_id", std::mem::take(&mut self.doc_id)),
            ("source_uri", std::mem::take(&mut self.source_uri)),
            ("policy_hash", std::mem::take(&mut self.policy_hash)),
            ("parser_version", std::mem::take(&mut self.parser_version)),
            ("text", std::mem::take(&mut self.text)),
            ("content_hash", std::mem::take(&mut self.content_hash)),
            ("embed_text", std::mem::take(&mut self.embed_text)),
            ("kind", std::mem::take(&mut self.kind)),
        ] {
            out.set_item(name, strings(column)?)?;
        }
        for (name, column) in [
            ("heading_path", std::mem::take(&mut self.heading_path)),
            ("captions", std::mem::take(&mut self.captions)),
            ("block_ids", std::mem::take(&mut self.block_ids)),
        ] {
            out.set_item(name, lists(column)?)?;
        }
        for (name, column) in [
            ("position", &self.position),
            ("char_start", &self.char_start),
            ("char_end", &self.char_end),
            ("token_estimate", &self.token_estimate),
            ("embed_tokens", &self.embed_tokens),
        ] {
            out.set_item(name, ints(column)?)?;
        }
        for (name, column) in [
            ("line_start", std::mem::take(&mut self.line_start)),
            ("line_end", std::mem::take(&mut self.line_end)),
            ("page", std::mem::take(&mut self.page)),
        ] {
            out.set_item(name, opt_ints(column)?)?;
        }
        let reference = std::mem::take(&mut self.reference);
        let bits = bitmap(&reference.valid, reference.nulls)
            .map(|b| buffer(py, b))
            .transpose()?;
        out.set_item("ref", (bits, strings(reference.strings)?, reference.nulls))?;
        out.set_item("span_offsets", buffer(py, le_i32(&self.span_offsets))?)?;
        Ok(out)
    }

    /// Whether every string column fits Arrow's 32-bit offsets (pushes saturate otherwise).
    fn fits(&self) -> bool {
        let strings = [
            &self.chunk_id,
            &self.doc_id,
            &self.source_uri,
            &self.policy_hash,
            &self.parser_version,
            &self.text,
            &self.content_hash,
            &self.embed_text,
            &self.kind,
            &self.reference.strings,
            &self.heading_path.items,
            &self.captions.items,
            &self.block_ids.items,
        ];
        strings.iter().all(|s| s.data.len() <= i32::MAX as usize)
    }
}

/// Per source: how many rows, and their chunk index lines joined by `\n` (in row order).
type Counts = BTreeMap<String, (usize, String)>;

/// The merged, collapsed and decoded rows of `chains`.
fn merge(chains: Vec<Vec<Segment>>) -> Result<(FileColumns, Counts), Decline> {
    let mut streams: Vec<Chain> = chains.into_iter().map(Chain::new).collect();
    let mut heap = BinaryHeap::new();
    for (i, stream) in streams.iter_mut().enumerate() {
        if let Some(entry) = stream.next_entry()? {
            heap.push(Reverse((entry, i)));
        }
    }
    let mut columns = FileColumns::default();
    let mut counts = Counts::new();
    let mut current: Option<Vec<u8>> = None; // the entry whose id is being collapsed
    let mut flush = |entry: &[u8], columns: &mut FileColumns| -> Result<(), Decline> {
        let mut parts = entry.splitn(3, |&b| b == 0);
        let (_, line, data) = (parts.next(), parts.next(), parts.next());
        let (Some(line), Some(data)) = (line, data) else {
            return Err(Decline);
        };
        let line = std::str::from_utf8(line).map_err(|_| Decline)?;
        let Some(row) = data.strip_prefix(b"M") else {
            return Err(Decline);
        };
        let source = columns.push(row)?;
        let (count, lines) = counts.entry(source.to_owned()).or_default();
        if *count > 0 {
            lines.push('\n');
        }
        lines.push_str(line);
        *count += 1;
        Ok(())
    };
    while let Some(Reverse((entry, i))) = heap.pop() {
        if let Some(next) = streams[i].next_entry()? {
            heap.push(Reverse((next, i)));
        }
        let id_end = entry.iter().position(|&b| b == 0).ok_or(Decline)?;
        match current.as_ref() {
            Some(held) if held[..] == entry[..] => continue, // an identical duplicate
            Some(held) if held.get(..=id_end) == entry.get(..=id_end) => return Err(Decline),
            _ => {}
        }
        if let Some(held) = current.replace(entry) {
            flush(&held, &mut columns)?;
        }
    }
    if let Some(held) = current {
        flush(&held, &mut columns)?;
    }
    if !columns.fits() {
        return Err(Decline);
    }
    Ok((columns, counts))
}

/// The shard's rows as `{column: buffers}` plus `counts`: `[(source_uri, rows, lines)]`
/// sorted by `source_uri`; None when declined.
pub fn shard_rows(
    py: Python<'_>,
    chains: Vec<Vec<Segment>>,
) -> PyResult<Option<Bound<'_, PyDict>>> {
    let merged = py.detach(|| {
        crate::guarded(|| {
            crate::fault_point();
            merge(chains)
        })
    });
    let Some(Ok((columns, counts))) = merged else {
        return Ok(None); // declined, or a panic (its message is on stderr)
    };
    let out = columns.into_dict(py)?;
    let listed = PyList::empty(py);
    for (uri, (count, lines)) in counts {
        listed.append((uri, count, lines))?;
    }
    out.set_item("counts", listed)?;
    Ok(Some(out))
}
