//! Chunk rows as Arrow buffers: Python wraps them with `pyarrow.Array.from_buffers`, so no
//! Python object is made per chunk. Offsets are little-endian `int32`, values `int64`
//! (the machine is little-endian; `lib.rs` refuses to build elsewhere).

use std::ffi::{c_int, c_void};

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::mdchunk::{Parsed, Row};

/// Bytes the core made, lent to Python through the buffer protocol (read-only), so
/// `pyarrow.py_buffer` wraps them without a copy; they live as long as a view of them.
#[pyclass(frozen)]
pub struct Buffer {
    data: Vec<u8>,
}

#[pymethods]
impl Buffer {
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        let data = &slf.get().data;
        // SAFETY: `view` is the caller's; the data is owned by `slf`, which the view keeps
        // alive (PyBuffer_FillInfo takes a reference to it) and which never changes.
        let filled = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                data.as_ptr() as *mut c_void,
                data.len() as ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if filled == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}

    fn __len__(&self) -> usize {
        self.data.len()
    }
}

pub(crate) fn buffer(py: Python<'_>, data: Vec<u8>) -> PyResult<Bound<'_, Buffer>> {
    Bound::new(py, Buffer { data })
}

/// `value` `count` times as a string column's `(offsets, data)` buffers.
pub fn repeated<'py>(
    py: Python<'py>,
    value: &str,
    count: usize,
) -> PyResult<(Bound<'py, Buffer>, Bound<'py, Buffer>)> {
    let width = i32::try_from(value.len()).expect("a short value");
    let offsets: Vec<i32> = (0..=count as i32).map(|i| i * width).collect();
    Ok((
        buffer(py, le_i32(&offsets))?,
        buffer(py, value.repeat(count).into_bytes())?,
    ))
}

/// A `string` column: offsets and UTF-8 data.
pub(crate) struct Strings {
    pub(crate) offsets: Vec<i32>,
    pub(crate) data: Vec<u8>,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            offsets: vec![0],
            data: Vec::new(),
        }
    }
}

impl Strings {
    fn truncate(&mut self, items: usize) {
        self.data.truncate(self.offsets[items] as usize);
        self.offsets.truncate(items + 1);
    }

    pub(crate) fn push(&mut self, s: &str) {
        self.data.extend_from_slice(s.as_bytes());
        self.offsets
            .push(i32::try_from(self.data.len()).expect("a column under 2 GiB"));
    }
}

/// A `list<string>` column: list offsets over a string column.
pub(crate) struct StringLists {
    pub(crate) offsets: Vec<i32>,
    pub(crate) items: Strings,
}

impl Default for StringLists {
    fn default() -> Self {
        StringLists {
            offsets: vec![0],
            items: Strings::default(),
        }
    }
}

impl StringLists {
    fn truncate(&mut self, lists: usize) {
        self.items.truncate(self.offsets[lists] as usize);
        self.offsets.truncate(lists + 1);
    }

    pub(crate) fn push<'s>(&mut self, items: impl IntoIterator<Item = &'s str>) {
        for item in items {
            self.items.push(item);
        }
        let count = self.items.offsets.len() - 1;
        self.offsets
            .push(i32::try_from(count).expect("under 2^31 items"));
    }
}

#[derive(Default)]
pub struct Columns {
    chunk_id: Strings,
    doc_id: Strings,
    source_uri: Strings,
    content_hash: Strings,
    text: Strings,
    embed_text: Strings,
    heading_path: StringLists,
    captions: StringLists,
    block_ids: StringLists,
    span_offsets: Vec<i32>,
    line_start: Vec<i64>,
    line_end: Vec<i64>,
    char_start: Vec<i64>,
    char_end: Vec<i64>,
    token_estimate: Vec<i64>,
    embed_tokens: Vec<i64>,
    position: Vec<i64>,
}

pub(crate) fn le_i32(values: &[i32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 4);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

pub(crate) fn le_i64(values: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 8);
    for v in values {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

impl Columns {
    #[allow(clippy::too_many_arguments)]
    pub fn push(
        &mut self,
        parsed: &Parsed,
        row: &Row,
        doc_id: &str,
        source_uri: &str,
        content_hash: &str,
        count_chars: bool,
    ) {
        if self.span_offsets.is_empty() {
            self.span_offsets.push(0);
        }
        self.chunk_id.push(row.chunk_id);
        self.doc_id.push(doc_id);
        self.source_uri.push(source_uri);
        self.content_hash.push(content_hash);
        self.text.push(row.text);
        crate::row_fault_point();
        // embed_text: the heading lines it names and the captions, then the text
        let lines = row.embed_lines();
        let start = self.embed_text.data.len();
        for (i, line) in lines.enumerate() {
            if i > 0 {
                self.embed_text.data.push(b'\n');
            }
            self.embed_text.data.extend_from_slice(line.as_bytes());
        }
        if self.embed_text.data.len() > start {
            self.embed_text.data.push(b'\n');
        }
        self.embed_text.push(row.text);
        let embed = &self.embed_text.data[start..];
        self.embed_tokens.push(if count_chars {
            embed.iter().filter(|&&b| b & 0xC0 != 0x80).count() as i64
        } else {
            embed.len().div_ceil(3) as i64
        });
        self.heading_path
            .push(row.heading_path.iter().map(String::as_str));
        self.captions.push(row.captions.iter().map(String::as_str));
        self.block_ids
            .push(row.block_ids.iter().map(|&i| parsed.blocks[i].id.as_str()));
        for span in row.spans {
            self.line_start.push(span.line_start as i64);
            self.line_end.push(span.line_end as i64);
            self.char_start.push(span.char_start as i64);
            self.char_end.push(span.char_end as i64);
        }
        self.span_offsets
            .push(i32::try_from(self.line_start.len()).expect("under 2^31 spans"));
        self.token_estimate.push(row.tokens);
        self.position.push(row.position as i64);
    }

    /// Room for the rows of `bytes` bytes of documents (texts plus overlap, embed texts
    /// plus headings), so the buffers are not copied as they grow.
    pub fn reserve(&mut self, bytes: usize) {
        self.text.data.reserve(bytes + bytes / 4);
        self.embed_text.data.reserve(bytes + bytes / 2);
    }

    /// How many rows the columns hold.
    pub fn rows(&self) -> usize {
        self.position.len()
    }

    /// Takes back every row after the first `rows` (a declined document's).
    /// Also repairs columns a panic left at different lengths: it cuts every column to
    /// `rows`, whatever each holds now.
    pub fn truncate(&mut self, rows: usize) {
        for strings in [
            &mut self.chunk_id,
            &mut self.doc_id,
            &mut self.source_uri,
            &mut self.content_hash,
            &mut self.text,
            &mut self.embed_text,
        ] {
            strings.truncate(rows);
        }
        for lists in [
            &mut self.heading_path,
            &mut self.captions,
            &mut self.block_ids,
        ] {
            lists.truncate(rows);
        }
        let spans = self.span_offsets.get(rows).map_or(0, |&s| s as usize);
        self.span_offsets.truncate(rows + 1);
        for values in [
            &mut self.line_start,
            &mut self.line_end,
            &mut self.char_start,
            &mut self.char_end,
        ] {
            values.truncate(spans);
        }
        for values in [
            &mut self.token_estimate,
            &mut self.embed_tokens,
            &mut self.position,
        ] {
            values.truncate(rows);
        }
    }

    /// `{name: bytes or tuple of bytes}`: a string column is `(offsets, data)`, a list of
    /// strings `(list_offsets, offsets, data)`, an int column its values.
    pub fn into_dict(mut self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        if self.span_offsets.is_empty() {
            self.span_offsets.push(0);
        }
        let i32s = |v: &[i32]| buffer(py, le_i32(v));
        let i64s = |v: &[i64]| buffer(py, le_i64(v));
        let strings = |s: Strings| -> PyResult<_> { Ok((i32s(&s.offsets)?, buffer(py, s.data)?)) };
        let lists = |l: StringLists| -> PyResult<_> {
            Ok((
                i32s(&l.offsets)?,
                i32s(&l.items.offsets)?,
                buffer(py, l.items.data)?,
            ))
        };
        let out = PyDict::new(py);
        out.set_item("rows", self.token_estimate.len())?;
        out.set_item("chunk_id", strings(std::mem::take(&mut self.chunk_id))?)?;
        out.set_item("doc_id", strings(std::mem::take(&mut self.doc_id))?)?;
        out.set_item("source_uri", strings(std::mem::take(&mut self.source_uri))?)?;
        out.set_item(
            "content_hash",
            strings(std::mem::take(&mut self.content_hash))?,
        )?;
        out.set_item("position", i64s(&self.position)?)?;
        out.set_item("text", strings(std::mem::take(&mut self.text))?)?;
        out.set_item("embed_text", strings(std::mem::take(&mut self.embed_text))?)?;
        out.set_item(
            "heading_path",
            lists(std::mem::take(&mut self.heading_path))?,
        )?;
        out.set_item("captions", lists(std::mem::take(&mut self.captions))?)?;
        out.set_item("block_ids", lists(std::mem::take(&mut self.block_ids))?)?;
        out.set_item("span_offsets", i32s(&self.span_offsets)?)?;
        out.set_item("line_start", i64s(&self.line_start)?)?;
        out.set_item("line_end", i64s(&self.line_end)?)?;
        out.set_item("char_start", i64s(&self.char_start)?)?;
        out.set_item("char_end", i64s(&self.char_end)?)?;
        out.set_item("token_estimate", i64s(&self.token_estimate)?)?;
        out.set_item("embed_tokens", i64s(&self.embed_tokens)?)?;
        Ok(out)
    }
}
