//! kebab-chunk's optional compiled core.
//!
//! The Python implementation is the reference: every function here returns exactly what
//! the Python code it replaces returns, which the differential tests in
//! `tests/core/` check whenever the core is built. `kebab_chunk._core` decides at each
//! call whether this module is used (docs/guide/core.md).

#[cfg(not(target_endian = "little"))]
compile_error!("the core hands Arrow little-endian buffers; build it on a little-endian machine");

use mimalloc::MiMalloc;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use pyo3::IntoPyObjectExt;
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

mod columns;
mod embed;
mod entries;
mod hybrid;
mod ids;
mod markdown;
mod mdchunk;
mod media;
mod scan;
mod shard;
mod split;
mod text;

use split::{Bytes3, Chars, Measure};
use text::Text;

/// The core allocates per block and per row: small allocations come from mimalloc, which
/// made the core 6-18% faster than glibc's malloc on the bench corpora; large buffers
/// (columns, whole texts) from the system allocator, which reuses and grows them in place
/// where mimalloc maps fresh pages for each (docs/internals/decisions.md, "The core allocates
/// small objects with mimalloc").
#[global_allocator]
static ALLOCATOR: SizeSplit = SizeSplit;

/// Allocations of at least this many bytes go to the system allocator.
const LARGE: usize = 256 * 1024;

/// Routes each allocation by its size (a block is freed and resized with the layout it was
/// allocated with, so the size tells which allocator owns it).
struct SizeSplit;

// SAFETY: every block is allocated, resized and freed by the allocator its size selects;
// a resize that crosses `LARGE` moves the block (allocate, copy, free), as `realloc` may.
unsafe impl GlobalAlloc for SizeSplit {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            System.alloc(layout)
        } else {
            MiMalloc.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            System.alloc_zeroed(layout)
        } else {
            MiMalloc.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            System.dealloc(ptr, layout)
        } else {
            MiMalloc.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (layout.size() >= LARGE, new_size >= LARGE) {
            (true, true) => System.realloc(ptr, layout, new_size),
            (false, false) => MiMalloc.realloc(ptr, layout, new_size),
            _ => {
                let moved = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = self.alloc(moved);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            }
        }
    }
}

/// `mi_option_arena_reserve` (its index in mimalloc 3.3's option enum: libmimalloc-sys
/// names no constant for it) and the value set when the module loads: arenas of 64 MiB of
/// address space instead of 1 GiB, so the helper's memory guard (which caps the address
/// space) still sees the core's memory grow. tests/core/test_allocator.py checks it.
const ARENA_RESERVE_OPTION: libmimalloc_sys::mi_option_t = 23;
const ARENA_RESERVE_KIB: std::os::raw::c_long = 64 * 1024;

/// Set by `inject_fault` (the tests): every entry point then panics where its work starts.
static FAULT: AtomicBool = AtomicBool::new(false);
/// Set by `inject_fault` with `after_rows`: how many whole rows `chunk_markdown` writes
/// before it panics halfway through the next one (-1: never).
static ROWS_LEFT: AtomicI64 = AtomicI64::new(-1);

/// Panics when a fault is injected: how the tests reach the guards below.
fn fault_point() {
    if FAULT.load(Ordering::Relaxed) {
        panic!("a fault injected by kebab_chunk_core.inject_fault");
    }
}

/// Panics halfway through a row once `after_rows` rows are written (then disarms), so
/// the tests see columns a panic left at different lengths repaired.
pub(crate) fn row_fault_point() {
    if ROWS_LEFT.load(Ordering::Relaxed) >= 0 && ROWS_LEFT.fetch_sub(1, Ordering::Relaxed) == 0 {
        panic!("a fault injected by kebab_chunk_core.inject_fault(after_rows=...)");
    }
}

/// Runs `work`, turning a panic (a bug in the core) into None so the caller takes the
/// Python path, which gives the same records. The panic's message still reaches stderr
/// through Rust's panic hook.
fn guarded<T>(work: impl FnOnce() -> T) -> Option<T> {
    catch_unwind(AssertUnwindSafe(work)).ok()
}

/// A counter written in Python: `count(text[start:end])`.
struct PyMeasure<'py> {
    count: Bound<'py, PyAny>,
}

impl Measure for PyMeasure<'_> {
    type Error = PyErr;
    fn count(&mut self, text: &Text, start: usize, end: usize) -> PyResult<i64> {
        let py = self.count.py();
        self.count
            .call1((PyString::new(py, text.slice(start, end)),))?
            .extract()
    }
}

/// `_md_heading._Run._pieces` after its whole-run shortcut: `(start, end, tokens)` in
/// code-point offsets. `counter` is `"bytes-3"`, `"chars"` or a callable counting a
/// string. Returns None when `text` cannot be read as UTF-8 (a lone surrogate) or the
/// core panicked: the caller then takes the Python path.
#[pyfunction]
#[pyo3(signature = (text, structural, glue_end, budget, overlap_tokens, counter))]
fn split_run(
    text: &Bound<'_, PyString>,
    structural: Vec<usize>,
    glue_end: Option<usize>,
    budget: i64,
    overlap_tokens: i64,
    counter: &Bound<'_, PyAny>,
) -> PyResult<Option<Vec<(usize, usize, i64)>>> {
    let Ok(s) = text.to_str() else {
        return Ok(None);
    };
    let text = Text::new(s);
    if let Some(&bad) = structural.iter().find(|&&c| c > text.len()) {
        return Err(PyValueError::new_err(format!(
            "a structural cut ({bad}) lies past the end of the text ({} code points)",
            text.len()
        )));
    }
    let pieces = match counter.extract::<&str>() {
        Ok("bytes-3") => guarded(|| {
            fault_point();
            let Ok(pieces) =
                split::split_pieces(&text, &mut Bytes3, structural, glue_end, budget, overlap_tokens);
            pieces
        }),
        Ok("chars") => guarded(|| {
            fault_point();
            let Ok(pieces) =
                split::split_pieces(&text, &mut Chars, structural, glue_end, budget, overlap_tokens);
            pieces
        }),
        Ok(other) => {
            return Err(PyValueError::new_err(format!(
                "the core counts 'bytes-3' and 'chars' natively, not {other:?}; pass a callable instead"
            )))
        }
        Err(_) => {
            let mut measure = PyMeasure { count: counter.clone() };
            guarded(|| {
                fault_point();
                split::split_pieces(&text, &mut measure, structural, glue_end, budget, overlap_tokens)
            })
            .transpose()?
        }
    };
    Ok(pieces)
}

/// `(records, deepest, over_limit)` of one Markdown body.
type Scanned<'py> = (Vec<Bound<'py, PyAny>>, usize, bool);

/// `md_pyromark_v1._scan(body)`'s `(records, deepest)` plus whether the block count went
/// over `max_blocks` (the scan stops there; the caller raises the limit error). None when
/// `body` cannot be read as UTF-8 or the core panicked (the caller then takes the Python
/// path).
#[pyfunction]
fn scan_markdown<'py>(
    body: &Bound<'py, PyString>,
    max_blocks: usize,
) -> PyResult<Option<Scanned<'py>>> {
    let py = body.py();
    let Ok(s) = body.to_str() else {
        return Ok(None);
    };
    let Some(scan) = guarded(|| {
        fault_point();
        markdown::scan(s, max_blocks)
    }) else {
        return Ok(None);
    };
    let mut records = Vec::with_capacity(scan.records.len());
    for record in scan.records {
        let details = match record.details {
            markdown::Details::Paragraph(plain) => plain.into_bound_py_any(py)?,
            markdown::Details::Heading(level, first, last) => {
                (level, first, last).into_bound_py_any(py)?
            }
            markdown::Details::List(ordered, items) => (ordered, items).into_bound_py_any(py)?,
            markdown::Details::Code(info) => info.into_bound_py_any(py)?,
            markdown::Details::Table(header, rows) => (header, rows).into_bound_py_any(py)?,
        };
        records.push((record.kind, record.start, record.end, details).into_bound_py_any(py)?);
    }
    Ok(Some((records, scan.deepest, scan.over_limit)))
}

/// A warning of the hybrid engine, for Python to word: a trimmed context (its block's id,
/// the lines counted, the lines whole) or a cut context line (the line, what is kept).
enum CoreWarning {
    Trimmed(String, Vec<String>, Vec<String>),
    Bound(String, String),
}

impl<'py> IntoPyObject<'py> for CoreWarning {
    type Target = PyAny;
    type Output = Bound<'py, PyAny>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Self::Output> {
        match self {
            CoreWarning::Trimmed(id, counted, lines) => {
                ("trimmed", id, counted, lines).into_bound_py_any(py)
            }
            CoreWarning::Bound(line, kept) => ("bound", line, kept).into_bound_py_any(py),
        }
    }
}

/// One document for `chunk_markdown`: its raw bytes, where its body starts in the decoded
/// text (code points after any front matter) and its source URI.
type Document<'py> = (Bound<'py, PyBytes>, usize, String);

/// Decoded Markdown documents to chunk rows (md-pyromark-v1 blocks, then a label of the
/// `engine`, `"md-heading"` or `"hybrid"`, under `bytes-3` or `chars`), as Arrow buffers
/// per column (`columns.rs` says which) for all rows of all documents taken, in order.
/// `doc_rows` gives each document's row count, or -1 when it is declined (bytes that are
/// not UTF-8, over `max_blocks`, what the engine leaves to Python) and -2 when the core
/// panicked on it (a bug): the caller takes the Python path for it. `deepest`, `seconds`,
/// `blocks` and `first_h1` give each document's nesting depth, time, block count and the
/// title of its first level-1 heading (None: none); `warnings` the hybrid engine's
/// warnings per document, for the caller to word (`hybrid::Warning`). With `entries`, the
/// rows come instead as each document's spill entries (`entries.rs`), under `entries`, and
/// the columns are empty.
#[pyfunction]
#[pyo3(signature = (
    documents, label, policy_hash, budget, overlap, merge_peers, tokenizer, bound_lines,
    leading, max_blocks, entries=false, engine="md-heading", cut_list_markers=false,
    merge_list_items=true
))]
#[allow(clippy::too_many_arguments)]
fn chunk_markdown<'py>(
    py: Python<'py>,
    documents: Vec<Document<'py>>,
    label: &str,
    policy_hash: &str,
    budget: i64,
    overlap: i64,
    merge_peers: bool,
    tokenizer: &str,
    bound_lines: bool,
    leading: bool,
    max_blocks: usize,
    entries: bool,
    engine: &str,
    cut_list_markers: bool,
    merge_list_items: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let hybrid = match engine {
        "md-heading" => false,
        "hybrid" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "the core runs the 'md-heading' and 'hybrid' engines, not {other:?}"
            )))
        }
    };
    let chars = match tokenizer {
        "bytes-3" => false,
        "chars" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "the core counts 'bytes-3' and 'chars', not {other:?}"
            )))
        }
    };
    let mut cols = columns::Columns::default();
    if !entries {
        cols.reserve(documents.iter().map(|d| d.0.len().unwrap_or(0)).sum());
    }
    let mut doc_entries: Vec<Vec<Vec<u8>>> = Vec::new();
    let (mut doc_rows, mut deepest, mut seconds) = (Vec::new(), Vec::new(), Vec::new());
    let (mut blocks, mut first_h1) = (Vec::new(), Vec::<Option<String>>::new());
    let mut warned: Vec<Vec<CoreWarning>> = Vec::new();
    for (raw, body_start, source_uri) in &documents {
        let doc_id = ids::doc_id(source_uri);
        let doc_id = doc_id.as_str();
        let content_hash = ids::content_hash(raw.as_bytes());
        let content_hash = content_hash.as_str();
        let started = std::time::Instant::now();
        // `raw.decode("utf-8-sig")` when the bytes are valid UTF-8; else the Python path
        // decodes them (with replacement characters and a warning).
        let bytes = raw.as_bytes();
        let bytes = bytes
            .strip_prefix(b"\xEF\xBB\xBF".as_slice())
            .unwrap_or(bytes);
        let mut made = entries::Entries::default();
        let Ok(s) = std::str::from_utf8(bytes) else {
            warned.push(Vec::new());
            doc_entries.push(Vec::new());
            doc_rows.push(-1i64);
            deepest.push(0);
            seconds.push(0.0);
            blocks.push(0);
            first_h1.push(None);
            continue;
        };
        if *body_start > s.len() {
            return Err(PyValueError::new_err(
                "body_start lies past the end of the text",
            ));
        }
        let settings = mdchunk::Settings {
            label,
            policy_hash,
            doc_id,
            budget,
            overlap,
            merge_peers,
            chars,
            bound_lines,
            leading,
            cut_list_markers,
            merge_list_items,
        };
        let before = cols.rows();
        let work = guarded(|| {
            fault_point();
            let parsed = mdchunk::parse(s, *body_start, doc_id, max_blocks);
            let out = if entries {
                mdchunk::Out::Entries(&mut made)
            } else {
                mdchunk::Out::Columns(&mut cols)
            };
            let sink = mdchunk::Sink {
                out,
                doc_id,
                source_uri,
                content_hash,
            };
            let rows = if parsed.over_limit {
                Err(mdchunk::Decline)
            } else if hybrid {
                hybrid::chunk(s, &parsed, &settings, sink).map(|(rows, warnings)| {
                    let named = warnings
                        .into_iter()
                        .map(|w| match w {
                            hybrid::Warning::Trimmed {
                                block,
                                counted,
                                lines,
                            } => {
                                let id = parsed.blocks[block].id.as_str().to_owned();
                                CoreWarning::Trimmed(id, counted, lines)
                            }
                            hybrid::Warning::Bound { line, kept } => CoreWarning::Bound(line, kept),
                        })
                        .collect();
                    (rows, named)
                })
            } else {
                mdchunk::chunk(s, &parsed, &settings, sink).map(|rows| (rows, Vec::new()))
            };
            (rows, parsed.deepest, parsed.blocks.len(), parsed.first_h1)
        });
        let declined = !matches!(work, Some((Ok(_), ..)));
        doc_entries.push(if declined { Vec::new() } else { made.items });
        match work {
            Some((Ok((rows, warnings)), depth, count, title)) => {
                warned.push(warnings);
                doc_rows.push(rows as i64);
                deepest.push(depth);
                blocks.push(count);
                first_h1.push(title);
            }
            Some((Err(mdchunk::Decline), depth, _, _)) => {
                warned.push(Vec::new());
                cols.truncate(before);
                doc_rows.push(-1);
                deepest.push(depth);
                blocks.push(0);
                first_h1.push(None);
            }
            None => {
                warned.push(Vec::new());
                cols.truncate(before);
                doc_rows.push(-2);
                deepest.push(0);
                blocks.push(0);
                first_h1.push(None);
            }
        }
        seconds.push(started.elapsed().as_secs_f64());
    }
    let out = cols.into_dict(py)?;
    if entries {
        let lists = doc_entries
            .iter()
            .map(|items| {
                items
                    .iter()
                    .map(|e| PyBytes::new(py, e))
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>();
        out.set_item("entries", lists)?;
    }
    out.set_item("doc_rows", doc_rows)?;
    out.set_item("deepest", deepest)?;
    out.set_item("seconds", seconds)?;
    out.set_item("blocks", blocks)?;
    out.set_item("first_h1", first_h1)?;
    out.set_item("warnings", warned)?;
    Ok(out)
}

/// `chunkers.embedding.embed_text` of a chunk's parts under the `"leading"` or
/// `"first-line"` rule (for the differential tests).
#[pyfunction]
fn embed_text(headings: Vec<String>, captions: Vec<String>, text: &str, leading: bool) -> String {
    embed::embed_text(&headings, &captions, text, leading)
}

/// Makes every entry point panic where its work starts (`on=True`), or with `after_rows`
/// makes `chunk_markdown` panic halfway through the row after that many: the tests' way
/// to check that a bug in the core ends on the Python path, not in a crash. `on=False`
/// disarms both.
#[pyfunction]
#[pyo3(signature = (on, after_rows=None))]
fn inject_fault(on: bool, after_rows: Option<i64>) {
    let rows = after_rows.filter(|_| on);
    FAULT.store(on && rows.is_none(), Ordering::Relaxed);
    ROWS_LEFT.store(rows.unwrap_or(-1), Ordering::Relaxed);
}

/// `value` `count` times as an Arrow string column: `(offsets, data)`.
#[pyfunction]
fn repeat_string<'py>(
    py: Python<'py>,
    value: &str,
    count: usize,
) -> PyResult<(Bound<'py, columns::Buffer>, Bound<'py, columns::Buffer>)> {
    columns::repeated(py, value, count)
}

/// One shard's part-file rows from its sorted spill segments (`native/src/shard.rs`):
/// `{column: buffers, "counts": [(source_uri, rows, index lines)]}`, or None where the
/// Python path must write the shard.
#[pyfunction]
fn shard_rows<'py>(
    py: Python<'py>,
    chains: Vec<Vec<shard::Segment>>,
) -> PyResult<Option<Bound<'py, PyDict>>> {
    shard::shard_rows(py, chains)
}

/// Every code point the core reads as whitespace (for the test that it is Python's set).
#[pyfunction]
fn whitespace() -> Vec<u32> {
    (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| text::is_py_space(c))
        .map(u32::from)
        .collect()
}

/// Where each separator of the prose levels starts (for the differential tests).
#[pyfunction]
fn separator_starts(text: &str, name: &str) -> PyResult<Vec<usize>> {
    let sep = match name {
        "PARAGRAPH_BREAK" => scan::Sep::ParagraphBreak,
        "SENTENCE_STOP" => scan::Sep::SentenceStop,
        "LINE_END" => scan::Sep::LineEnd,
        "WHITESPACE" => scan::Sep::Whitespace,
        _ => {
            return Err(PyValueError::new_err(format!(
                "no separator named {name:?}"
            )))
        }
    };
    Ok(scan::starts(sep, &Text::new(text)))
}

#[pymodule]
fn kebab_chunk_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // SAFETY: sets a mimalloc option (a plain integer) before the core allocates.
    unsafe { libmimalloc_sys::mi_option_set(ARENA_RESERVE_OPTION, ARENA_RESERVE_KIB) };
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Raised with every change to a function's arguments or results; `kebab_chunk._core.API`
    // must match, so a stale build is left unused rather than called wrongly.
    m.add("API", 4)?;
    m.add_function(wrap_pyfunction!(split_run, m)?)?;
    m.add_function(wrap_pyfunction!(scan_markdown, m)?)?;
    m.add_function(wrap_pyfunction!(chunk_markdown, m)?)?;
    m.add_class::<columns::Buffer>()?;
    m.add_function(wrap_pyfunction!(whitespace, m)?)?;
    m.add_function(wrap_pyfunction!(embed_text, m)?)?;
    m.add_function(wrap_pyfunction!(repeat_string, m)?)?;
    m.add_function(wrap_pyfunction!(separator_starts, m)?)?;
    m.add_function(wrap_pyfunction!(inject_fault, m)?)?;
    m.add_function(wrap_pyfunction!(shard_rows, m)?)?;
    Ok(())
}
