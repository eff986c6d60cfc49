//! Decoded Markdown to chunk records in one pass, for the md-pyromark-v1 parser and the
//! md-heading engine (`md-heading-v2`, `md-heading-v3`) under the `bytes-3` and `chars`
//! tokenizers: `md_pyromark_v1._Builder` + `_assemble.Assembler`, then
//! `_md_heading._Run`, `base.make_chunk` and `embedding.with_embedding`, step for step
//! (the Python modules are the reference; their docstrings say why each step is so).
//!
//! Blocks and chunks never become Python objects. A document this path does not cover
//! exactly (a heading line md-heading-v3 would cut) is declined, and the caller takes
//! the Python path for it.

use crate::columns::Columns;
use crate::embed::{kept_headings, py_norm};
use crate::entries::{Entries, Names};
use crate::ids::{chunk_id, BlockIds, Id};
use crate::markdown;
use crate::media::{media_ref, Media};
use crate::split::{self, Bytes3, Chars};
use crate::text::{is_py_space, Text};

/// CommonMark's blank characters (`_source.BLANK_CHARS`): all ASCII.
fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\x0b')
}

#[derive(Clone, Copy)]
pub struct Span {
    pub line_start: usize,
    pub line_end: usize,
    pub char_start: usize,
    pub char_end: usize,
}

pub struct Block {
    pub kind: &'static str,
    pub span: Span,
    /// Where the block's text lies in the source, in bytes.
    pub bytes: (usize, usize),
    /// Index into `Parsed::paths`.
    pub path: usize,
    pub id: Id,
    /// An image or audio reference: its text and captions as a chunk of its own.
    pub media: Option<Media>,
    /// A heading's level (0 for other blocks).
    pub level: u8,
    /// What the hybrid engine reads of a list's items or a table's rows.
    pub shape: Shape,
}

/// The parts of a block the hybrid engine splits at.
pub enum Shape {
    Plain,
    /// Each top-level item's text (`md_pyromark_v1._Builder._items`) as byte ranges of the
    /// source.
    List(Vec<(usize, usize)>),
    /// Whether the table has a header row, and how many body rows.
    Table(bool, usize),
}

pub struct Parsed {
    pub blocks: Vec<Block>,
    /// Every heading path a block carries (a block holds the index of its own).
    pub paths: Vec<Vec<String>>,
    pub deepest: usize,
    pub over_limit: bool,
    /// The title of the first level-1 heading (the document title without front matter).
    pub first_h1: Option<String>,
}

/// 1-based line numbers of byte offsets of the newline view, counted incrementally.
struct Lines<'v> {
    view: &'v [u8],
    at: usize,
    line: usize,
}

impl Lines<'_> {
    fn line_of(&mut self, pos: usize) -> usize {
        if pos >= self.at {
            self.line += memchr::memchr_iter(b'\n', &self.view[self.at..pos]).count();
        } else {
            self.line -= memchr::memchr_iter(b'\n', &self.view[pos..self.at]).count();
        }
        self.at = pos;
        self.line
    }
}

/// Code-point offsets of byte offsets of one text, counted incrementally (queries come
/// almost in order, so a document costs about one pass; ASCII text needs none).
struct CharCounter<'s> {
    s: &'s str,
    ascii: bool,
    byte: usize,
    char: usize,
}

impl<'s> CharCounter<'s> {
    fn new(s: &'s str) -> Self {
        CharCounter {
            s,
            ascii: s.is_ascii(),
            byte: 0,
            char: 0,
        }
    }

    fn chars_at(&mut self, b: usize) -> usize {
        if self.ascii {
            return b;
        }
        if b >= self.byte {
            self.char += self.s[self.byte..b].chars().count();
        } else {
            self.char -= self.s[b..self.byte].chars().count();
        }
        self.byte = b;
        self.char
    }

    /// The byte offset of code point `c`.
    fn byte_of(&self, c: usize) -> usize {
        if self.ascii {
            return c;
        }
        self.s
            .char_indices()
            .nth(c)
            .map_or(self.s.len(), |(b, _)| b)
    }
}

/// `_source.newline_view` in bytes: CRLF as " \n", a lone CR as "\n" (same length).
fn newline_view(bytes: &[u8]) -> Vec<u8> {
    let mut view = bytes.to_vec();
    for i in 0..view.len() {
        if bytes[i] == b'\r' {
            if bytes.get(i + 1) == Some(&b'\n') {
                view[i] = b' ';
            } else {
                view[i] = b'\n';
            }
        }
    }
    view
}

/// The ATX opener `[ \t]*#{1,6}(?=[ \t\r\n]|$)` at the start of a heading's text: the
/// offset after it (all ASCII, so bytes and code points agree).
fn atx_content_start(text: &str) -> usize {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let mut k = 0;
    while i + k < b.len() && b[i + k] == b'#' {
        k += 1;
    }
    let after = i + k;
    if (1..=6).contains(&k)
        && (after == b.len() || matches!(b[after], b' ' | b'\t' | b'\r' | b'\n'))
    {
        after
    } else {
        0
    }
}

/// Python's `s[a:b]` on code points (`a`, `b` may be out of range or negative).
fn py_slice(t: &Text, a: i64, b: i64) -> String {
    let n = t.len() as i64;
    let fix = |x: i64| if x < 0 { (x + n).max(0) } else { x.min(n) };
    let (a, b) = (fix(a), fix(b));
    if b <= a {
        return String::new();
    }
    t.slice(a as usize, b as usize).to_owned()
}

/// `_Builder._items`: each top-level item's source from its line start to the next item's,
/// blanks stripped at its end, as byte ranges (`item_starts` are bytes into the body).
fn list_items(
    bytes: &[u8],
    view: &[u8],
    start: usize,
    end: usize,
    body_b0: usize,
    item_starts: &[usize],
) -> Vec<(usize, usize)> {
    if item_starts.is_empty() {
        return vec![(start, end)];
    }
    let mut starts = vec![start];
    for &item in &item_starts[1..] {
        let pos = body_b0 + item;
        let line_start = memchr::memrchr(b'\n', &view[..pos]).map_or(0, |i| i + 1);
        let indented = bytes[line_start..pos].iter().all(|&b| is_blank(b));
        starts.push(if indented { line_start } else { pos });
    }
    starts.push(end);
    starts
        .windows(2)
        .map(|pair| {
            let mut stop = pair[1];
            while stop > pair[0] && is_blank(bytes[stop - 1]) {
                stop -= 1;
            }
            (pair[0], stop)
        })
        .collect()
}

/// The blocks of `src` (decoded text) from code point `body_start` on.
pub fn parse(s: &str, body_start: usize, doc_id: &str, max_blocks: usize) -> Parsed {
    let bytes = s.as_bytes();
    // Text without a CR is its own newline view: no copy.
    let view: std::borrow::Cow<[u8]> = if memchr::memchr(b'\r', bytes).is_some() {
        std::borrow::Cow::Owned(newline_view(bytes))
    } else {
        std::borrow::Cow::Borrowed(bytes)
    };
    let mut chars = CharCounter::new(s);
    let body_b0 = chars.byte_of(body_start);
    let body = &s[body_b0..];
    let body_lf: std::borrow::Cow<str> = if body.contains('\r') {
        let mut owned = body.as_bytes().to_vec();
        for i in 0..owned.len() {
            if owned[i] == b'\r' && owned.get(i + 1) != Some(&b'\n') {
                owned[i] = b'\n';
            }
        }
        std::borrow::Cow::Owned(String::from_utf8(owned).expect("CR to LF keeps UTF-8 valid"))
    } else {
        std::borrow::Cow::Borrowed(body)
    };
    let scan = markdown::scan(&body_lf, max_blocks);
    let mut ids = BlockIds::new(doc_id, scan.records.len());
    let mut blocks = Vec::with_capacity(scan.records.len());
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    let mut sections: Vec<(u8, String)> = Vec::new();
    let mut first_h1: Option<String> = None;
    let mut lines = Lines {
        view: &view,
        at: 0,
        line: 1,
    };
    for record in scan.records {
        let pos = body_b0 + record.start;
        let line_start = memchr::memrchr(b'\n', &view[..pos]).map_or(0, |i| i + 1);
        let mut start = line_start;
        if line_start < pos && bytes[line_start..pos].iter().any(|&b| !is_blank(b)) {
            start = pos; // defensive: a block never starts mid-line at the top level
        }
        let mut end = body_b0 + record.end;
        while end > start && is_blank(bytes[end - 1]) {
            end -= 1;
        }
        if end <= start {
            continue;
        }
        let first_line = lines.line_of(start);
        let last_line = lines.line_of(end - 1);
        let span = Span {
            line_start: first_line,
            line_end: last_line,
            char_start: chars.chars_at(start),
            char_end: chars.chars_at(end),
        };
        let text = &s[start..end];
        let mut kind = record.kind;
        let mut media = None;
        let mut heading_level = 0;
        let mut shape = Shape::Plain;
        match &record.details {
            markdown::Details::List(_, item_starts) => {
                shape = Shape::List(list_items(bytes, &view, start, end, body_b0, item_starts));
            }
            markdown::Details::Table(header, rows) => {
                shape = Shape::Table(!header.is_empty(), rows.len());
            }
            markdown::Details::Heading(level, first, last) => {
                heading_level = *level;
                let title = if *first < 0 {
                    String::new()
                } else {
                    let block = Text::new(text);
                    let content_start = atx_content_start(text) as i64;
                    let stop =
                        chars.chars_at(body_b0 + *last as usize) as i64 - span.char_start as i64;
                    py_norm(&py_slice(&block, content_start, stop))
                };
                while sections.last().is_some_and(|(l, _)| *l >= *level) {
                    sections.pop();
                }
                if *level == 1 && first_h1.is_none() {
                    first_h1 = Some(title.clone());
                }
                sections.push((*level, title));
                paths.push(sections.iter().map(|(_, t)| t.clone()).collect());
            }
            markdown::Details::Paragraph(true) if text.contains("![") => {
                if let Some(found) = media_ref(text) {
                    kind = found.kind;
                    media = Some(found);
                }
            }
            _ => {}
        }
        let id = ids.next(kind, text);
        blocks.push(Block {
            kind,
            span,
            bytes: (start, end),
            path: paths.len() - 1,
            id,
            media,
            level: heading_level,
            shape,
        });
    }
    Parsed {
        blocks,
        paths,
        deepest: scan.deepest,
        over_limit: scan.over_limit,
        first_h1,
    }
}

/// The chunk settings of one label and policy.
pub struct Settings<'a> {
    pub label: &'a str,
    pub policy_hash: &'a str,
    pub doc_id: &'a str,
    pub budget: i64,
    pub overlap: i64,
    pub merge_peers: bool,
    /// `chars` counts code points; otherwise `bytes-3`.
    pub chars: bool,
    /// md-heading-v3's `bound_context_lines`.
    pub bound_lines: bool,
    /// The `"leading"` embed rule (md-heading-v3) rather than `"first-line"`.
    pub leading: bool,
    /// The hybrid engine's rule `cut_lists_before_markers`.
    pub cut_list_markers: bool,
    /// The policy's `merge_list_items` (the hybrid engine's).
    pub merge_list_items: bool,
}

/// One chunk as it is written: borrowed pieces, copied once into the column buffers.
pub struct Row<'r> {
    pub position: usize,
    pub chunk_id: &'r str,
    pub text: &'r str,
    pub heading_path: &'r [String],
    /// How many of `heading_path`'s lines `embed_text` names (the rest the text holds).
    pub embed_headings: usize,
    pub captions: &'r [String],
    pub block_ids: &'r [usize],
    pub spans: &'r [Span],
    pub tokens: i64,
    /// The context lines `embed_text` names when they are not the headings it keeps and
    /// the captions (a hybrid chunk whose full context does not fit the budget).
    pub embed_lines: Option<&'r [String]>,
}

impl<'r> Row<'r> {
    /// The lines `embed_text` puts before the text.
    pub fn embed_lines(&self) -> impl Iterator<Item = &'r String> {
        let (lines, captions): (&'r [String], &'r [String]) = match self.embed_lines {
            Some(lines) => (lines, &[]),
            None => (&self.heading_path[..self.embed_headings], self.captions),
        };
        lines.iter().chain(captions)
    }
}

/// Where one document's rows go: Arrow column buffers or spill entries.
pub enum Out<'c> {
    Columns(&'c mut Columns),
    Entries(&'c mut Entries),
}

/// Where one document's rows go and what every row of it names.
pub struct Sink<'c> {
    pub out: Out<'c>,
    pub doc_id: &'c str,
    pub source_uri: &'c str,
    pub content_hash: &'c str,
}

/// A document this path does not cover exactly; the caller takes the Python path.
pub struct Decline;

impl Settings<'_> {
    pub(crate) fn count(&self, text: &str) -> i64 {
        if self.chars {
            text.chars().count() as i64
        } else {
            text.len().div_ceil(3) as i64
        }
    }
}

struct Member {
    index: usize,
    offset: usize,
    len: usize,
}

struct Run<'a, 'c> {
    src: &'a str,
    parsed: &'a Parsed,
    set: &'a Settings<'a>,
    style: Option<&'static str>,
    sink: Sink<'c>,
    rows: usize,
    /// Scratch for the chunk id recipes.
    json: String,
    slices: BlockSlices,
}

/// `_separators.BlockSlices`: spans of slices of a document's blocks, each block's line
/// breaks found once (a block cut into n pieces would otherwise cost O(n²)).
pub(crate) struct BlockSlices {
    ends: Vec<Option<Vec<usize>>>,
}

impl BlockSlices {
    pub(crate) fn new(blocks: usize) -> Self {
        BlockSlices {
            ends: vec![None; blocks],
        }
    }

    /// The span of `text[a:b]` (code points) of block `index` of `parsed` (its own span when
    /// whole): `sub_line_span` on the block's exact line span.
    pub(crate) fn span(
        &mut self,
        src: &str,
        parsed: &Parsed,
        index: usize,
        a: usize,
        b: usize,
    ) -> Span {
        let block = &parsed.blocks[index];
        let span = block.span;
        if a == 0 && b == span.char_end - span.char_start {
            return span;
        }
        let ends = self.ends[index]
            .get_or_insert_with(|| line_break_ends(&src[block.bytes.0..block.bytes.1]));
        let before = |x: usize| ends.partition_point(|&e| e <= x);
        Span {
            line_start: span.line_start + before(a),
            line_end: span.line_start + before(a.max(b.saturating_sub(1))),
            char_start: span.char_start + a,
            char_end: span.char_start + b,
        }
    }
}

/// `_separators.line_break_ends`: the code-point offset just after each line break of `s`
/// (CRLF, LF and a lone CR are one break each).
pub(crate) fn line_break_ends(s: &str) -> Vec<usize> {
    let bytes = s.as_bytes();
    let ascii = s.is_ascii();
    let (mut ends, mut chars, mut counted) = (Vec::new(), 0, 0);
    let mut skip = usize::MAX; // the LF of a CRLF already counted
    for i in memchr::memchr2_iter(b'\r', b'\n', bytes) {
        if i == skip {
            continue;
        }
        let end = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
            skip = i + 1;
            i + 2
        } else {
            i + 1
        };
        if ascii {
            ends.push(end);
        } else {
            chars += s[counted..end].chars().count();
            counted = end;
            ends.push(chars);
        }
    }
    ends
}

/// `_separators.newline_style` over the blocks (every block here is an exact slice).
pub(crate) fn newline_style(src: &str, blocks: &[Block]) -> Option<&'static str> {
    let (mut lf, mut crlf, mut cr) = (false, false, false);
    for block in blocks {
        let text = &src[block.bytes.0..block.bytes.1];
        if !text.contains('\r') {
            lf |= text.contains('\n');
        } else {
            let pairs = text.matches("\r\n").count();
            crlf |= pairs > 0;
            lf |= text.matches('\n').count() > pairs;
            cr |= text.matches('\r').count() > pairs;
        }
        if usize::from(lf) + usize::from(crlf) + usize::from(cr) > 1 {
            return None;
        }
    }
    Some(if crlf {
        "\r\n"
    } else if cr {
        "\r"
    } else {
        "\n"
    })
}

impl Run<'_, '_> {
    fn block_text(&self, index: usize) -> &str {
        let (start, end) = self.parsed.blocks[index].bytes;
        &self.src[start..end]
    }

    /// `_separators.join_gap` of two consecutive blocks.
    fn gap(&self, prev: usize, index: usize) -> Option<String> {
        if index != prev + 1 {
            return None;
        }
        let a = self.parsed.blocks[prev].span;
        let b = self.parsed.blocks[index].span;
        if b.char_start < a.char_end {
            return None;
        }
        let gap = b.char_start - a.char_end;
        if b.line_start < a.line_end {
            return None;
        }
        let breaks = b.line_start - a.line_end;
        if breaks == 0 {
            return if gap == 0 { Some(String::new()) } else { None };
        }
        let style = self.style?;
        if gap == breaks * style.chars().count() {
            Some(style.repeat(breaks))
        } else {
            None
        }
    }

    fn run(&mut self) -> Result<(), Decline> {
        let blocks = &self.parsed.blocks;
        let mut group: Vec<usize> = Vec::new();
        for (index, block) in blocks.iter().enumerate() {
            let opaque = block.media.is_some();
            let new_section = block.kind == "heading"
                && group
                    .last()
                    .is_some_and(|&last| blocks[last].kind != "heading");
            let unknown_gap = group
                .last()
                .is_some_and(|&last| self.gap(last, index).is_none());
            if opaque || new_section || unknown_gap {
                self.flush(&mut group)?;
            }
            if opaque {
                let media = block.media.as_ref().expect("opaque blocks are media");
                self.emit(
                    &media.text,
                    &[index],
                    &[block.span],
                    block.path,
                    &media.captions,
                    None,
                    None,
                )?;
            } else {
                group.push(index);
            }
        }
        self.flush(&mut group)
    }

    fn flush(&mut self, group: &mut Vec<usize>) -> Result<(), Decline> {
        if group.is_empty() {
            return Ok(());
        }
        if self.set.merge_peers {
            self.pack(group)?;
        } else {
            let mut sub = Vec::new();
            for &index in group.iter() {
                sub.push(index);
                if self.parsed.blocks[index].kind != "heading" {
                    self.pack(&sub)?;
                    sub.clear();
                }
            }
            if !sub.is_empty() {
                self.pack(&sub)?;
            }
        }
        group.clear();
        Ok(())
    }

    fn pack(&mut self, group: &[usize]) -> Result<(), Decline> {
        let mut members: Vec<Member> = Vec::with_capacity(group.len());
        let mut joined = String::new();
        let mut length = 0usize;
        for &index in group {
            if let Some(last) = members.last() {
                let gap = self
                    .gap(last.index, index)
                    .expect("a run ends at an unknown gap");
                length += gap.chars().count();
                joined.push_str(&gap);
            }
            let text = self.block_text(index);
            let len = {
                let span = self.parsed.blocks[index].span;
                span.char_end - span.char_start
            };
            members.push(Member {
                index,
                offset: length,
                len,
            });
            joined.push_str(text);
            length += len;
        }
        if !joined.chars().any(|c| !is_py_space(c)) {
            for member in &members {
                let block = &self.parsed.blocks[member.index];
                let text = self.block_text(member.index).to_owned();
                self.emit(
                    &text,
                    &[member.index],
                    &[block.span],
                    block.path,
                    &[],
                    None,
                    None,
                )?;
            }
            return Ok(());
        }
        // A run that fits is one piece, the run without the whitespace around it (what
        // the cut search would take, found without it; `_Run._pieces`'s shortcut).
        let total = self.set.count(&joined);
        if total <= self.set.budget {
            let lead = joined.len() - joined.trim_start_matches(is_py_space).len();
            let tail = joined.trim_end_matches(is_py_space).len();
            let piece = &joined[lead..tail];
            let (start, end) = if joined.is_ascii() {
                (lead, tail)
            } else {
                let start = joined[..lead].chars().count();
                (start, start + piece.chars().count())
            };
            let tokens = if piece.len() == joined.len() {
                total
            } else {
                self.set.count(piece)
            };
            return self.emit_piece(piece, &members, start, end, tokens);
        }
        let text = Text::new(&joined);
        for (start, end, tokens) in self.pieces(&text, &members) {
            self.emit_piece(text.slice(start, end), &members, start, end, tokens)?;
        }
        Ok(())
    }

    fn pieces(&self, text: &Text, members: &[Member]) -> Vec<(usize, usize, i64)> {
        let n = text.len();
        let blocks = &self.parsed.blocks;
        let structural: Vec<usize> = members[1..].iter().map(|m| m.offset).collect();
        let lead = members
            .iter()
            .take_while(|m| blocks[m.index].kind == "heading")
            .count();
        let mut glue = None;
        if 0 < lead && lead < members.len() {
            let glue_end = members[lead].offset;
            let word_start = text.skip_space(glue_end);
            let mut word_end = glue_end;
            if word_start < n {
                word_end = word_start;
                while word_end < n && !is_py_space(text.char_at(word_end)) {
                    word_end += 1;
                }
            }
            if self.set.count(text.slice(0, word_end)) <= self.set.budget {
                glue = Some(glue_end);
            }
        }
        let (budget, overlap) = (self.set.budget, self.set.overlap);
        let found = if self.set.chars {
            split::split_pieces(text, &mut Chars, structural, glue, budget, overlap)
        } else {
            split::split_pieces(text, &mut Bytes3, structural, glue, budget, overlap)
        };
        match found {
            Ok(pieces) => pieces,
            Err(never) => match never {},
        }
    }

    /// `BlockSlices.span`: the span of `text[a:b]` of block `index`.
    fn slice_span(&mut self, index: usize, a: usize, b: usize) -> Span {
        self.slices.span(self.src, self.parsed, index, a, b)
    }

    fn emit_piece(
        &mut self,
        piece: &str,
        members: &[Member],
        start: usize,
        end: usize,
        tokens: i64,
    ) -> Result<(), Decline> {
        let mut block_ids = Vec::new();
        let mut spans = Vec::new();
        let mut first_path: Option<usize> = None;
        let mut local_start: Option<usize> = None;
        let mut is_slice = false;
        let mut last: Option<usize> = None;
        let first = members.partition_point(|m| m.offset + m.len < start);
        for member in &members[first..] {
            let (lo, hi) = (member.offset, member.offset + member.len);
            if lo >= end {
                break;
            }
            let empty_inside = lo == hi && start <= lo;
            if hi <= start && !empty_inside {
                continue;
            }
            let (a, b) = (start.max(lo) - lo, end.min(hi) - lo);
            local_start.get_or_insert(a);
            is_slice = is_slice || a != 0 || b != member.len;
            block_ids.push(member.index);
            spans.push(self.slice_span(member.index, a, b));
            let block = &self.parsed.blocks[member.index];
            if block.kind != "heading" && first_path.is_none() {
                first_path = Some(block.path);
            }
            last = Some(member.index);
        }
        let last = last.expect("a piece covers at least one block");
        let path = first_path.unwrap_or(self.parsed.blocks[last].path);
        let slice_start = if is_slice { local_start } else { None };
        self.emit(
            piece,
            &block_ids,
            &spans,
            path,
            &[],
            Some(tokens),
            slice_start,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn emit(
        &mut self,
        text: &str,
        block_ids: &[usize],
        spans: &[Span],
        path: usize,
        captions: &[String],
        tokens: Option<i64>,
        slice_start: Option<usize>,
    ) -> Result<(), Decline> {
        let set = self.set;
        let headings = &self.parsed.paths[path];
        if set.bound_lines {
            let (limit, cap) = (set.budget.div_euclid(2), 2 * set.budget);
            let over = |line: &String| line.chars().count() as i64 > cap || set.count(line) > limit;
            if headings.iter().any(over) {
                return Err(Decline); // the line would be cut, with a warning
            }
        }
        let blocks = &self.parsed.blocks;
        let chunk = chunk_id(
            &mut self.json,
            set.doc_id,
            set.label,
            block_ids.iter().map(|&i| &blocks[i].id),
            set.policy_hash,
            slice_start,
        );
        let row = Row {
            position: self.rows,
            chunk_id: chunk.as_str(),
            text,
            heading_path: headings,
            embed_headings: kept_headings(headings, text, set.leading),
            captions,
            block_ids,
            spans,
            tokens: tokens.unwrap_or_else(|| set.count(text)),
            embed_lines: None,
        };
        write_row(&mut self.sink, self.parsed, &row, set)?;
        self.rows += 1;
        Ok(())
    }
}

/// Writes one row to `sink` (Arrow columns or a spill entry); Decline when an entry cannot
/// be written as the Python path writes it.
pub fn write_row(
    sink: &mut Sink,
    parsed: &Parsed,
    row: &Row,
    set: &Settings,
) -> Result<(), Decline> {
    match &mut sink.out {
        Out::Columns(columns) => columns.push(
            parsed,
            row,
            sink.doc_id,
            sink.source_uri,
            sink.content_hash,
            set.chars,
        ),
        Out::Entries(entries) => {
            let names = Names {
                doc_id: sink.doc_id,
                source_uri: sink.source_uri,
                content_hash: sink.content_hash,
                label: set.label,
                policy_hash: set.policy_hash,
            };
            if !entries.push(parsed, row, &names, set.chars) {
                return Err(Decline);
            }
        }
    }
    Ok(())
}

/// Writes the chunk rows of a parsed document to `sink`, in order; on Decline the rows
/// written so far are the caller's to take back (`Columns::truncate`).
pub fn chunk(src: &str, parsed: &Parsed, set: &Settings, sink: Sink) -> Result<usize, Decline> {
    let mut run = Run {
        src,
        parsed,
        set,
        style: newline_style(src, &parsed.blocks),
        sink,
        rows: 0,
        json: String::new(),
        slices: BlockSlices::new(parsed.blocks.len()),
    };
    run.run()?;
    Ok(run.rows)
}
