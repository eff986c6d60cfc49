//! The hybrid engine (`hybrid-v2` to `hybrid-v4`) on md-pyromark-v1 blocks under the
//! `bytes-3` and `chars` tokenizers: `_token_aware.iter_elements`, then `_hybrid.Run`'s
//! split, merge and records, step for step (the Python modules are the reference; their
//! docstrings say why each step is so).
//!
//! Every Markdown block's text is the exact source slice of its one line span, so every
//! element is a `slice` anchor: the rules that only matter for structured or rendered
//! text (`cite_held_parts`, `merge_mixed_kinds`) change nothing here, and hybrid-v2 and
//! hybrid-v3 give the same chunks. A context trimmed to half the budget and a line
//! hybrid-v4 cuts are returned as [`Warning`]s for the caller to word as Python does; what
//! else the Python engine warns about (a character over budget, list items it cannot
//! locate) is declined, and the caller takes the Python path for that document.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

use regex::Regex;

use crate::ids::{chunk_id, Fx};
use crate::mdchunk::{
    line_break_ends, newline_style, write_row, BlockSlices, Decline, Parsed, Row, Settings, Shape,
    Sink, Span,
};
use crate::scan::{Sep, PROSE};
use crate::split::{split_levels, Levels, Measure};
use crate::text::{is_py_space, Text};

const CODE: [Sep; 3] = [Sep::ParagraphBreak, Sep::LineEnd, Sep::Whitespace];
const TABLE: [Sep; 2] = [Sep::LineEnd, Sep::Whitespace];

/// `_hybrid._LIST_LEAD` and `_MARKER_ONLY`, as full matches (`\d` is Unicode's Nd in both
/// regex engines).
static LIST_LEAD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A[ \t]*(?:[-*+\x{2022}]|\d{1,9}[.)])[ \t]+\z").unwrap());
static MARKER_ONLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A[ \t]*(?:[-*+\x{2022}]|\d{1,9}[.)])[ \t]*\z").unwrap());

#[derive(Clone, Copy, PartialEq)]
enum Style {
    Prose,
    Code,
    List,
    Table,
}

/// One element (`_token_aware.Element`): `text` is `block text[start..]` (code points).
struct Element<'a> {
    block: usize,
    start: usize,
    text: &'a str,
    heading_path: &'a [String],
    /// Which heading path: the index into `Parsed::paths`, and whether its last title is
    /// left out (a heading's own element).
    path: (usize, bool),
    captions: Vec<String>,
    is_slice: bool,
    cuts: Vec<usize>,
    table_header: Option<String>,
    style: Style,
}

/// Heading path and captions of a piece (whole, as recorded) and the lines its counted
/// text carries: the same lines, or fewer or shorter when trimmed (`_Context`).
struct Context {
    heading_path: Vec<String>,
    captions: Vec<String>,
    counted: Vec<String>,
    trimmed: bool,
    /// Units (bytes or code points) of `"\n".join(counted)`, None when that is empty.
    prefix: Option<usize>,
    /// The same for the whole lines (a trimmed context's record may fit them).
    full_prefix: Option<usize>,
}

/// What the Python engine warns about, in the order it warns; the caller words them.
pub enum Warning {
    /// A split element whose headings and captions cost more than half the budget: the
    /// lines its counted text keeps (`_hybrid.Run._trimmed`).
    Trimmed {
        block: usize,
        counted: Vec<String>,
        lines: Vec<String>,
    },
    /// A context line hybrid-v4 records cut (`_context.LineBound`, once per distinct line).
    Bound { line: String, kept: String },
}

#[derive(Clone)]
struct Draft<'a> {
    /// A piece's text borrows the source; a merged group's is its own.
    text: Cow<'a, str>,
    span: Span,
    block_ids: Vec<usize>,
    context: usize,
    is_slice: bool,
    tokens: i64,
    known: bool,
    element: usize,
    section: i64,
    slice_start: usize,
}

struct Run<'a, 'c> {
    src: &'a str,
    parsed: &'a Parsed,
    /// The heading paths as chunks record them (each line bounded under hybrid-v4).
    paths: &'a [Vec<String>],
    /// The lines cut so far (each is reported once).
    cut_lines: std::collections::HashSet<String>,
    set: &'a Settings<'a>,
    sink: Sink<'c>,
    style: Option<&'static str>,
    /// Section of each block (`_hybrid._sections`).
    sections: Vec<i64>,
    contexts: Vec<Context>,
    /// Context ids by a hash of their lines (`intern`).
    interned: HashMap<u64, Vec<usize>, BuildHasherDefault<Fx>>,
    warnings: Vec<Warning>,
    /// The context of each heading path without captions, once interned.
    by_path: Vec<[Option<usize>; 2]>,
    slices: BlockSlices,
    rows: usize,
    json: String,
    group: Option<Draft<'a>>,
    members: Vec<Draft<'a>>,
}

/// `_hybrid._line_start`: after the last line-break character before `offset`.
fn line_start(text: &Text, offset: usize) -> usize {
    let mut i = offset;
    while i > 0 && !matches!(text.char_at(i - 1), '\n' | '\r') {
        i -= 1;
    }
    i
}

/// `_hybrid._item_line_start`.
fn item_line_start(text: &Text, cut: usize) -> usize {
    let line = line_start(text, cut);
    if LIST_LEAD.is_match(text.slice(line, cut)) {
        line
    } else {
        cut
    }
}

/// `_hybrid._after_marker`.
fn after_marker(text: &Text, cut: usize) -> bool {
    MARKER_ONLY.is_match(text.slice(line_start(text, cut), cut))
}

fn is_space_only(s: &str) -> bool {
    s.chars().all(is_py_space)
}

/// `_slices._aligned_items` on one list's text, in bytes of `text`: None when an item is
/// not where the parser's cut puts it.
fn aligned_items(text: &str, items: &[&str]) -> Option<Vec<(usize, usize)>> {
    let bytes = text.as_bytes();
    let mut ranges = Vec::new();
    let mut cursor = 0;
    for item in items {
        if is_space_only(item) {
            continue;
        }
        let rest = &text[cursor..];
        let first = text.len() - rest.trim_start_matches(is_py_space).len();
        let line = bytes[cursor..first]
            .iter()
            .rposition(|&b| b == b'\n' || b == b'\r')
            .map_or(0, |p| cursor + p + 1);
        let start = cursor.max(line);
        if !text[start..].starts_with(item) {
            return None;
        }
        ranges.push((start, start + item.len()));
        cursor = start + item.len();
    }
    if ranges.is_empty() || !is_space_only(&text[cursor..]) {
        return None;
    }
    Some(ranges)
}

impl<'a> Run<'a, '_> {
    fn units(&self, s: &str) -> usize {
        if self.set.chars {
            s.chars().count()
        } else {
            s.len()
        }
    }

    fn tokens(&self, units: usize) -> i64 {
        if self.set.chars {
            units as i64
        } else {
            units.div_ceil(3) as i64
        }
    }

    fn block_text(&self, index: usize) -> &'a str {
        let (start, end) = self.parsed.blocks[index].bytes;
        &self.src[start..end]
    }

    /// `_hybrid._sections`: the last heading whose path is a content block's path is the
    /// heading on top of the parser's section stack, and the last one whose path is a
    /// heading's parent path is the stack entry below it (a later heading with that path
    /// would have replaced it there), so the stack of (level, block) answers both.
    fn sections(parsed: &Parsed) -> Vec<i64> {
        let mut stack: Vec<(u8, i64)> = Vec::new();
        let mut out = Vec::with_capacity(parsed.blocks.len());
        for (index, block) in parsed.blocks.iter().enumerate() {
            if block.kind == "heading" {
                while stack.last().is_some_and(|&(level, _)| level >= block.level) {
                    stack.pop();
                }
                out.push(stack.last().map_or(-1, |&(_, at)| at));
                stack.push((block.level, index as i64));
            } else {
                out.push(stack.last().map_or(-1, |&(_, at)| at));
            }
        }
        out
    }

    /// The interned context of an element's headings and `captions`: equal contexts are one
    /// id, as Python interns them by value (`_joiner` compares them).
    fn context(&mut self, el: &Element, captions: &[String]) -> usize {
        let (path, drop) = el.path;
        if captions.is_empty() {
            if let Some(id) = self.by_path[path][usize::from(drop)] {
                return id;
            }
        }
        let id = self.intern(el.heading_path, captions, None);
        if captions.is_empty() {
            self.by_path[path][usize::from(drop)] = Some(id);
        }
        id
    }

    /// The id of the context `(heading_path, captions, counted)`, made on first use;
    /// `counted` None: the heading path and captions themselves (not trimmed). Looked up
    /// by a hash of the lines and then compared, so a lookup copies nothing.
    fn intern(
        &mut self,
        heading_path: &[String],
        captions: &[String],
        counted: Option<Vec<String>>,
    ) -> usize {
        let lines = || heading_path.iter().chain(captions);
        let mut hasher = Fx::default();
        for line in lines() {
            hasher.write(line.as_bytes());
        }
        hasher.write_usize(heading_path.len());
        match &counted {
            Some(c) => c.iter().for_each(|line| hasher.write(line.as_bytes())),
            None => hasher.write_u8(0xff),
        }
        let key = hasher.finish();
        let same = |c: &Context| {
            c.heading_path == heading_path
                && c.captions == captions
                && match &counted {
                    Some(lines) => c.counted == *lines,
                    None => !c.trimmed,
                }
        };
        if let Some(found) = self.interned.get(&key) {
            if let Some(&id) = found.iter().find(|&&id| same(&self.contexts[id])) {
                return id;
            }
        }
        let counted = counted.unwrap_or_else(|| lines().cloned().collect());
        let units = |run: &Self, lines: &mut dyn Iterator<Item = &String>| {
            let (mut total, mut n) = (0, 0);
            for line in lines {
                total += run.units(line);
                n += 1;
            }
            let joined = total + usize::saturating_sub(n, 1);
            (joined > 0).then_some(joined)
        };
        let prefix = units(self, &mut counted.iter());
        let full_prefix = units(self, &mut lines());
        let trimmed = !counted.iter().eq(lines());
        let id = self.contexts.len();
        self.contexts.push(Context {
            heading_path: heading_path.to_vec(),
            captions: captions.to_vec(),
            counted,
            trimmed,
            prefix,
            full_prefix,
        });
        self.interned.entry(key).or_default().push(id);
        id
    }

    /// `Run._trimmed`: the context of a split element's pieces, whose counted lines cost at
    /// most half the budget (recorded for the warning when that shortens them).
    fn trimmed(&mut self, el: &Element, captions: &[String]) -> usize {
        let lines: Vec<String> = el.heading_path.iter().chain(captions).cloned().collect();
        let counted = self.trim_context(&lines, self.set.budget.div_euclid(2));
        if counted == lines {
            return self.intern(el.heading_path, captions, None);
        }
        self.warnings.push(Warning::Trimmed {
            block: el.block,
            counted: counted.clone(),
            lines,
        });
        self.intern(el.heading_path, captions, Some(counted))
    }

    /// `_hybrid.trim_context`: outer lines left out until the rest costs at most `limit`,
    /// else the innermost line's longest prefix that fits (none when no character does).
    fn trim_context(&self, lines: &[String], limit: i64) -> Vec<String> {
        for dropped in 0..lines.len() {
            let rest = &lines[dropped..];
            let units = rest.iter().map(|l| self.units(l)).sum::<usize>() + rest.len() - 1;
            if self.tokens(units) <= limit {
                return rest.to_vec();
            }
        }
        let Some(last) = lines.last() else {
            return Vec::new();
        };
        let prefix = self.fitting_prefix(last, limit);
        if prefix.is_empty() {
            Vec::new()
        } else {
            vec![prefix]
        }
    }

    /// `_context.fitting_prefix`: the longest prefix of `line` that costs at most `limit`,
    /// cut at a word end when one fits, else at a character, right-stripped.
    fn fitting_prefix(&self, line: &str, limit: i64) -> String {
        fitting_prefix(line, limit, usize::MAX, self.set.chars)
    }

    /// `Run._measure` of a text of `units` under context `id`.
    fn measure(&self, id: usize, units: usize) -> i64 {
        match self.contexts[id].prefix {
            None => self.tokens(units),
            Some(p) => self.tokens(p + 1 + units),
        }
    }

    /// `Run._prefix_cost`.
    fn prefix_cost(&self, id: usize) -> i64 {
        self.contexts[id].prefix.map_or(0, |p| self.tokens(p + 1))
    }

    /// Reports a context line hybrid-v4 cut, the first time it is cut.
    fn note_cut(&mut self, line: &str, kept: &str) {
        if kept != line && !self.cut_lines.contains(line) {
            self.cut_lines.insert(line.to_owned());
            self.warnings.push(Warning::Bound {
                line: line.to_owned(),
                kept: kept.to_owned(),
            });
        }
    }

    /// `Run._bound`: the element with its captions and table header line bounded (its
    /// heading path already is), each line cut reported in the order Python cuts them.
    fn bound(&mut self, el: &Element<'a>) -> Option<Element<'a>> {
        let (path, drop) = el.path;
        let original = &self.parsed.paths[path];
        let original = &original[..original.len() - usize::from(drop && !original.is_empty())];
        for (line, kept) in original.iter().zip(el.heading_path) {
            self.note_cut(line, kept);
        }
        let (budget, chars) = (self.set.budget, self.set.chars);
        let cut = |run: &mut Self, line: &String| {
            let kept = bound_line(line, budget, chars);
            run.note_cut(line, &kept);
            kept
        };
        let captions: Vec<String> = el.captions.iter().map(|c| cut(self, c)).collect();
        let header = el.table_header.as_ref().map(|h| cut(self, h));
        if captions == el.captions && header == el.table_header {
            return None;
        }
        Some(Element {
            block: el.block,
            start: el.start,
            text: el.text,
            heading_path: el.heading_path,
            path: el.path,
            captions,
            is_slice: el.is_slice,
            cuts: el.cuts.clone(),
            table_header: header,
            style: el.style,
        })
    }

    /// The span of `block text[a..b]` (`Anchor.locate` on an exact line span).
    fn span(&mut self, index: usize, a: usize, b: usize) -> Span {
        self.slices.span(self.src, self.parsed, index, a, b)
    }

    // -- the elements -----------------------------------------------------------------

    fn run(&mut self) -> Result<(), Decline> {
        let parsed = self.parsed;
        let mut pending: Option<usize> = None; // the last heading whose section is empty yet
        let mut index = 0;
        for (b, block) in parsed.blocks.iter().enumerate() {
            if block.kind == "heading" {
                if let Some(p) = pending {
                    if parsed.blocks[p].level >= block.level {
                        self.heading_element(p, &mut index)?;
                    }
                }
                pending = Some(b);
                continue;
            }
            if self.block_elements(b, &mut index)? {
                pending = None;
            }
        }
        if let Some(p) = pending {
            self.heading_element(p, &mut index)?;
        }
        self.finish()
    }

    fn heading_element(&mut self, b: usize, index: &mut usize) -> Result<(), Decline> {
        let index_of_path = self.parsed.blocks[b].path;
        let path = &self.paths[index_of_path];
        let el = Element {
            block: b,
            start: 0,
            text: self.block_text(b),
            heading_path: &path[..path.len().saturating_sub(1)],
            path: (index_of_path, true),
            captions: Vec::new(),
            is_slice: false,
            cuts: Vec::new(),
            table_header: None,
            style: Style::Prose,
        };
        self.element(&el, index)
    }

    /// The elements of one content block; false when it has none (blank).
    fn block_elements(&mut self, b: usize, index: &mut usize) -> Result<bool, Decline> {
        let parsed = self.parsed;
        let block = &parsed.blocks[b];
        let captions = block
            .media
            .as_ref()
            .map_or_else(Vec::new, |m| m.captions.clone());
        let text = self.block_text(b);
        if captions.is_empty() && is_space_only(text) {
            return Ok(false);
        }
        let mut el = Element {
            block: b,
            start: 0,
            text,
            heading_path: &self.paths[block.path],
            path: (block.path, false),
            captions,
            is_slice: false,
            cuts: Vec::new(),
            table_header: None,
            style: if block.kind == "code" {
                Style::Code
            } else {
                Style::Prose
            },
        };
        match &block.shape {
            Shape::List(items) if block.media.is_none() => {
                let t = Text::new(text);
                let ranges = self.item_ranges(b, items, &t)?;
                if self.set.merge_list_items {
                    el.cuts = ranges.iter().skip(1).map(|r| r.0).collect();
                    el.style = Style::List;
                    self.element(&el, index)?;
                } else {
                    for (start, end) in ranges {
                        let item = Element {
                            block: b,
                            start,
                            text: t.slice(start, end),
                            heading_path: el.heading_path,
                            path: el.path,
                            captions: Vec::new(),
                            is_slice: true,
                            cuts: Vec::new(),
                            table_header: None,
                            style: Style::Prose,
                        };
                        self.element(&item, index)?;
                    }
                }
            }
            Shape::Table(false, _) => return Err(Decline), // a Markdown table has a header
            Shape::Table(has_header, rows) if block.media.is_none() => {
                let t = Text::new(text);
                match table_row_starts(&t, *has_header, *rows) {
                    None => el.style = Style::Code,
                    Some((header_end, starts)) => {
                        let header = t.slice(0, header_end).trim_matches(is_py_space);
                        el.cuts = starts[1..].to_vec();
                        el.table_header = (!header.is_empty()).then(|| header.to_owned());
                        el.style = Style::Table;
                    }
                }
                self.element(&el, index)?;
            }
            _ => self.element(&el, index)?,
        }
        Ok(true)
    }

    /// `list_items_from_spans`, else `list_item_ranges`' aligned walk, in code points of
    /// the list's text; declined where Python would fall back to the markers' shape.
    fn item_ranges(
        &self,
        b: usize,
        items: &[(usize, usize)],
        t: &Text,
    ) -> Result<Vec<(usize, usize)>, Decline> {
        let (b0, b1) = self.parsed.blocks[b].bytes;
        let text = &self.src[b0..b1];
        // One span, one item: the item is the whole one-line list
        if items.len() == 1
            && items[0] == (b0, b1)
            && !text.contains(['\n', '\r'])
            && !text.is_empty()
        {
            return Ok(vec![(0, t.len())]);
        }
        let strs: Vec<&str> = items.iter().map(|&(s, e)| &self.src[s..e]).collect();
        let found = aligned_items(text, &strs).ok_or(Decline)?;
        Ok(found
            .into_iter()
            .map(|(s, e)| (char_of(t, s), char_of(t, e)))
            .collect())
    }

    // -- step 2: split ------------------------------------------------------------------

    fn element(&mut self, el: &Element<'a>, index: &mut usize) -> Result<(), Decline> {
        let at = *index;
        *index += 1;
        let bounded = if self.set.bound_lines {
            self.bound(el)
        } else {
            None
        };
        let el = bounded.as_ref().unwrap_or(el);
        let whole = self.context(el, &el.captions);
        let units = self.units(el.text);
        let tokens = self.measure(whole, units);
        if tokens <= self.set.budget {
            // one piece, the whole element: no code-point index needed
            let n = el.text.chars().count();
            return self.piece(el, el.text, at, (0, n), n, whole, tokens);
        }
        let t = Text::new(el.text);
        // _split: the counted context lines cost at most half the budget
        let first = self.trimmed(el, &el.captions);
        if is_space_only(el.text) {
            return Err(Decline); // a media reference with a huge caption: rare, left to Python
        }
        let rest = match &el.table_header {
            Some(header) => {
                let mut captions = el.captions.clone();
                captions.push(header.clone());
                self.trimmed(el, &captions)
            }
            None => first,
        };
        let start0 = t.skip_space(0);
        let text_tokens = std::cmp::max(1, tokens - self.prefix_cost(whole));
        let chars = self.set.chars;
        let tok = |u: usize| {
            if chars {
                u as i64
            } else {
                u.div_ceil(3) as i64
            }
        };
        let prefix_of = |id: usize| self.contexts[id].prefix.map_or(0, |p| p + 1);
        let mut measure = Piece {
            start0,
            first: prefix_of(first),
            rest: prefix_of(rest),
            chars,
        };
        let mut bare = |t: &Text, s: usize, e: usize| -> i64 {
            tok(if chars { e - s } else { t.utf8_len(s, e) })
        };
        let use_overlap = el.style != Style::Table && self.set.overlap > 0;
        let (structural, keep): (Vec<usize>, Option<&dyn Fn(usize) -> bool>);
        let after = |c: usize| !after_marker(&t, c);
        if el.style == Style::List && self.set.cut_list_markers {
            structural = el.cuts.iter().map(|&c| item_line_start(&t, c)).collect();
            keep = Some(&after);
        } else {
            structural = el.cuts.clone();
            keep = None;
        }
        let seps: &'static [Sep] = match el.style {
            Style::Prose | Style::List => &PROSE,
            Style::Code => &CODE,
            Style::Table => &TABLE,
        };
        let mut levels = Levels::with(&t, structural, None, seps, keep);
        let Ok(pieces) = split_levels(
            &t,
            &mut measure,
            if use_overlap { Some(&mut bare) } else { None },
            &mut levels,
            self.set.budget,
            if use_overlap { self.set.overlap } else { 0 },
            t.len() as f64 / text_tokens as f64,
        );
        for (start, end, piece_tokens) in pieces {
            if piece_tokens > self.set.budget {
                return Err(Decline); // one character over budget: Python warns
            }
            let context = if start == start0 { first } else { rest };
            self.piece(
                el,
                t.slice(start, end),
                at,
                (start, end),
                t.len(),
                context,
                piece_tokens,
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    /// `Run._piece`: `text` is the element's `[start, end)` of its `len` code points.
    fn piece(
        &mut self,
        el: &Element,
        text: &'a str,
        at: usize,
        (start, end): (usize, usize),
        len: usize,
        context: usize,
        tokens: i64,
    ) -> Result<(), Decline> {
        let whole = start == 0 && end == len;
        let span = self.span(el.block, el.start + start, el.start + end);
        let draft = Draft {
            text: Cow::Borrowed(text),
            span,
            block_ids: vec![el.block],
            context,
            is_slice: el.is_slice || !whole,
            tokens,
            known: true,
            element: at,
            section: self.sections[el.block],
            slice_start: el.start + start,
        };
        self.merge(draft)
    }

    // -- step 3: merge peers --------------------------------------------------------------

    /// `Run._joiner` for two slices: the gap their spans pin down.
    fn joiner(&self, a: &Draft, b: &Draft) -> Option<String> {
        if a.element == b.element || a.context != b.context || a.section != b.section {
            return None;
        }
        let (x, y) = (a.span, b.span);
        if y.char_start < x.char_end || y.line_start < x.line_end {
            return None;
        }
        let gap = y.char_start - x.char_end;
        let breaks = y.line_start - x.line_end;
        if breaks == 0 {
            return (gap == 0).then(String::new);
        }
        let style = self.style?;
        (gap == breaks * style.len()).then(|| style.repeat(breaks))
    }

    fn estimate(&self, a: &Draft, b: &Draft, gap: &str) -> i64 {
        a.tokens + b.tokens - self.prefix_cost(a.context) + self.tokens(self.units(gap))
    }

    /// `Run._join`: `a` extended by `gap` and `b` (in place: a group grows piece by piece).
    fn join(&self, mut a: Draft<'a>, b: &Draft, gap: &str) -> Draft<'a> {
        a.tokens = self.estimate(&a, b, gap);
        let text = a.text.to_mut();
        text.reserve(gap.len() + b.text.len());
        text.push_str(gap);
        text.push_str(&b.text);
        for &id in &b.block_ids {
            if !a.block_ids.contains(&id) {
                a.block_ids.push(id);
            }
        }
        a.span.line_end = b.span.line_end;
        a.span.char_end = b.span.char_end;
        a.is_slice |= b.is_slice;
        a.known = false;
        a.element = b.element;
        a
    }

    fn merge(&mut self, piece: Draft<'a>) -> Result<(), Decline> {
        if let Some(group) = self.group.take() {
            if self.set.merge_peers {
                if let Some(gap) = self.joiner(&group, &piece) {
                    if self.estimate(&group, &piece, &gap) <= self.set.budget {
                        if self.members.is_empty() {
                            self.members.push(group.clone());
                        }
                        let joined = self.join(group, &piece, &gap);
                        self.members.push(piece);
                        self.group = Some(joined);
                        return Ok(());
                    }
                }
            }
            self.verified(group)?;
        }
        self.members.clear();
        self.group = Some(piece);
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Decline> {
        if let Some(group) = self.group.take() {
            self.verified(group)?;
        }
        Ok(())
    }

    /// `Run._verified`: a merged group counted exactly, redone step by step when over.
    fn verified(&mut self, mut group: Draft<'a>) -> Result<(), Decline> {
        if group.known {
            return self.record(&group);
        }
        group.tokens = self.measure(group.context, self.units(&group.text));
        if group.tokens <= self.set.budget {
            return self.record(&group);
        }
        let members = std::mem::take(&mut self.members);
        let mut current = members[0].clone();
        for member in &members[1..] {
            let gap = self.joiner(&current, member).expect("members joined once");
            let units = self.units(&current.text) + self.units(&gap) + self.units(&member.text);
            let tokens = self.measure(current.context, units);
            if tokens <= self.set.budget {
                current = self.join(current, member, &gap);
                current.tokens = tokens;
                current.known = true;
            } else {
                self.record(&current)?;
                current = member.clone();
            }
        }
        self.record(&current)
    }

    // -- records ------------------------------------------------------------------------

    fn record(&mut self, piece: &Draft) -> Result<(), Decline> {
        let set = self.set;
        let blocks = &self.parsed.blocks;
        let chunk = chunk_id(
            &mut self.json,
            set.doc_id,
            set.label,
            piece.block_ids.iter().map(|&i| &blocks[i].id),
            set.policy_hash,
            piece.is_slice.then_some(piece.slice_start),
        );
        let context = &self.contexts[piece.context];
        let (mut tokens, mut embed_lines) = (piece.tokens, None);
        if context.trimmed {
            // counted with fewer context lines: the whole ones may fit this piece
            let units = self.units(&piece.text);
            let full = match context.full_prefix {
                None => self.tokens(units),
                Some(p) => self.tokens(p + 1 + units),
            };
            if full <= set.budget {
                tokens = full;
            } else {
                embed_lines = Some(context.counted.as_slice());
            }
        }
        let row = Row {
            position: self.rows,
            chunk_id: chunk.as_str(),
            text: &piece.text,
            heading_path: &context.heading_path,
            embed_headings: context.heading_path.len(),
            captions: &context.captions,
            block_ids: &piece.block_ids,
            spans: std::slice::from_ref(&piece.span),
            tokens,
            embed_lines,
        };
        write_row(&mut self.sink, self.parsed, &row, set)?;
        self.rows += 1;
        Ok(())
    }
}

/// The code-point offset of byte `b` of `t`.
fn char_of(t: &Text, b: usize) -> usize {
    if t.ascii().is_some() {
        return b;
    }
    let (mut lo, mut hi) = (0, t.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if t.byte(mid) < b {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// `_slices.table_row_starts`: `(end of the header lines, start of each row)`.
fn table_row_starts(t: &Text, has_header: bool, n_rows: usize) -> Option<(usize, Vec<usize>)> {
    let mut starts = vec![0];
    starts.extend(line_break_ends(t.s));
    let header_lines = starts.len() as i64 - n_rows as i64;
    let allowed: &[i64] = if has_header { &[1, 2] } else { &[0] };
    if n_rows == 0 || !allowed.contains(&header_lines) {
        return None;
    }
    let rows = starts[header_lines as usize..].to_vec();
    let header_end = if header_lines > 0 {
        t.trim_end(0, rows[0])
    } else {
        0
    };
    Some((header_end, rows))
}

/// A piece's count: its context's prefix (the first piece's or the later pieces') and
/// line break, then the slice (`Run._measure`).
struct Piece {
    start0: usize,
    first: usize,
    rest: usize,
    chars: bool,
}

impl Measure for Piece {
    type Error = std::convert::Infallible;
    fn count(&mut self, text: &Text, start: usize, end: usize) -> Result<i64, Self::Error> {
        let prefix = if start == self.start0 {
            self.first
        } else {
            self.rest
        };
        Ok(if self.chars {
            (prefix + end - start) as i64
        } else {
            (prefix + text.utf8_len(start, end)).div_ceil(3) as i64
        })
    }
}

/// Writes the hybrid engine's chunk rows of a parsed document to `sink`, in order, and
/// returns their count and the contexts trimmed on the way (one per warning Python gives);
/// on Decline the rows written so far are the caller's to take back.
pub fn chunk(
    src: &str,
    parsed: &Parsed,
    set: &Settings,
    sink: Sink,
) -> Result<(usize, Vec<Warning>), Decline> {
    let bounded: Option<Vec<Vec<String>>> = set.bound_lines.then(|| {
        let bound = |line: &String| bound_line(line, set.budget, set.chars);
        parsed
            .paths
            .iter()
            .map(|p| p.iter().map(bound).collect())
            .collect()
    });
    let mut run = Run {
        src,
        parsed,
        paths: bounded.as_deref().unwrap_or(&parsed.paths),
        cut_lines: std::collections::HashSet::new(),
        set,
        sink,
        style: newline_style(src, &parsed.blocks),
        sections: Run::sections(parsed),
        contexts: Vec::new(),
        interned: HashMap::default(),
        warnings: Vec::new(),
        by_path: vec![[None; 2]; parsed.paths.len()],
        slices: BlockSlices::new(parsed.blocks.len()),
        rows: 0,
        json: String::new(),
        group: None,
        members: Vec::new(),
    };
    run.run()?;
    Ok((run.rows, run.warnings))
}

/// `_context.fitting_prefix` under `chars` (else `bytes-3`) counting: the longest prefix
/// of `line` that costs at most `limit` and holds at most `max_chars` code points (the cap
/// of `bound_line`), cut at a word end when one fits, else at a character, right-stripped.
fn fitting_prefix(line: &str, limit: i64, max_chars: usize, chars: bool) -> String {
    let t = Text::new(line);
    let fits = |end: usize| {
        let tokens = if chars {
            end as i64
        } else {
            t.utf8_len(0, end).div_ceil(3) as i64
        };
        end <= max_chars && tokens <= limit
    };
    let mut ends = Vec::new();
    for i in 0..t.len() {
        if !is_py_space(t.char_at(i)) && (i + 1 == t.len() || is_py_space(t.char_at(i + 1))) {
            ends.push(i + 1);
        }
    }
    let mut best = last_fitting(&ends, &fits);
    if best.is_none() {
        let first = ends.first().copied().unwrap_or(t.len());
        let candidates: Vec<usize> = (1..first).collect();
        best = last_fitting(&candidates, &fits);
    }
    best.map_or_else(String::new, |b| {
        t.slice(0, b).trim_end_matches(is_py_space).to_owned()
    })
}

/// `_context.bound_line`: a context line as hybrid-v4 records it, at most half the budget
/// and `2 * budget` code points (the line itself when within both).
fn bound_line(line: &str, budget: i64, chars: bool) -> String {
    let (limit, cap) = (budget.div_euclid(2), (2 * budget).max(0) as usize);
    let n = line.chars().count();
    let tokens = if chars {
        n as i64
    } else {
        line.len().div_ceil(3) as i64
    };
    if n <= cap && tokens <= limit {
        return line.to_owned();
    }
    let head: String = line.chars().take(cap + 1).collect();
    let kept = fitting_prefix(&head, limit, cap, chars);
    if kept.is_empty() {
        line.chars().take(1).collect()
    } else {
        kept
    }
}

/// `_context._last_fitting`: the last candidate that fits, by bisection.
fn last_fitting(candidates: &[usize], fits: &dyn Fn(usize) -> bool) -> Option<usize> {
    let (mut lo, mut hi, mut best) = (0i64, candidates.len() as i64 - 1, None);
    while lo <= hi {
        let mid = (lo + hi).div_euclid(2);
        if fits(candidates[mid as usize]) {
            best = Some(candidates[mid as usize]);
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    best
}
