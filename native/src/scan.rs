//! Where each separator of the prose levels starts: `_separators.separator_starts` for
//! PARAGRAPH_BREAK, SENTENCE_STOP, LINE_END and WHITESPACE, in code-point offsets.
//!
//! Each is read by hand, as Python's backtracking `re` matches its defining pattern
//! (leading blanks included) left to right; `\s` is Python's whitespace
//! (`text::is_py_space`). The differential tests compare every scanner with the Python
//! patterns.

use memchr::{memchr2_iter, memchr3_iter};

use crate::text::{is_py_space, is_py_space_byte, Text};

/// The separators of the `prose` style, in `TOKEN_LEVELS` order.
#[derive(Clone, Copy, Debug)]
pub enum Sep {
    ParagraphBreak,
    SentenceStop,
    LineEnd,
    Whitespace,
}

pub const PROSE: [Sep; 4] = [
    Sep::ParagraphBreak,
    Sep::SentenceStop,
    Sep::LineEnd,
    Sep::Whitespace,
];

/// Start offsets (code points) of every occurrence of `sep` in `text`, in order.
pub fn starts(sep: Sep, text: &Text) -> Vec<usize> {
    match sep {
        Sep::ParagraphBreak => paragraph_breaks(text),
        Sep::SentenceStop => sentence_stops(text),
        Sep::LineEnd => line_ends(text),
        Sep::Whitespace => whitespace_runs(text),
    }
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// The length of the line break at `i` (`\r\n` before `\r` before `\n`), 0 for none.
fn line_break(text: &Text, i: usize) -> usize {
    match text.char_at(i) {
        '\r' if i + 1 < text.len() && text.char_at(i + 1) == '\n' => 2,
        '\r' | '\n' => 1,
        _ => 0,
    }
}

/// Where the run of blanks that ends at `q` starts, never before `floor`.
fn blanks_before(text: &Text, q: usize, floor: usize) -> usize {
    let mut p = q;
    while p > floor && is_blank(text.char_at(p - 1)) {
        p -= 1;
    }
    p
}

fn skip_blanks(text: &Text, mut i: usize) -> usize {
    while i < text.len() && is_blank(text.char_at(i)) {
        i += 1;
    }
    i
}

/// `[\s\x1C-\x1F]+`: where each maximal run of whitespace starts.
fn whitespace_runs(text: &Text) -> Vec<usize> {
    let mut out = Vec::new();
    if let Some(bytes) = text.ascii() {
        let mut in_run = false;
        for (i, &b) in bytes.iter().enumerate() {
            let space = is_py_space_byte(b);
            if space && !in_run {
                out.push(i);
            }
            in_run = space;
        }
        return out;
    }
    let mut in_run = false;
    for i in 0..text.len() {
        let space = is_py_space(text.char_at(i));
        if space && !in_run {
            out.push(i);
        }
        in_run = space;
    }
    out
}

/// `[ \t]*(?:\r\n|\r|\n)`: each line break with the blanks before it.
fn line_ends(text: &Text) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut i, mut floor) = (0, 0);
    if let Some(bytes) = text.ascii() {
        for q in memchr2_iter(b'\r', b'\n', bytes) {
            if q < i {
                continue; // the LF of a CRLF already taken
            }
            out.push(blanks_before(text, q, floor));
            i = q + line_break(text, q);
            floor = i;
        }
        return out;
    }
    while i < text.len() {
        let width = line_break(text, i);
        if width == 0 {
            i += 1;
            continue;
        }
        out.push(blanks_before(text, i, floor));
        i += width;
        floor = i;
    }
    out
}

/// `[ \t]*(?:NL(?:[ \t]*NL)+[ \t]*)`: blank lines with the blanks around them. A CRLF
/// alone matches too (CR, then LF as the second break), as the pattern does by
/// backtracking.
fn paragraph_breaks(text: &Text) -> Vec<usize> {
    let mut out = Vec::new();
    let (mut i, mut floor) = (0, 0);
    let ascii = text.ascii();
    while i < text.len() {
        if let Some(bytes) = ascii {
            match memchr::memchr2(b'\r', b'\n', &bytes[i..]) {
                Some(skip) => i += skip,
                None => break,
            }
        }
        let width = line_break(text, i);
        if width == 0 {
            i += 1;
            continue;
        }
        let mut end = i + width;
        let mut more = 0;
        loop {
            let next = skip_blanks(text, end);
            let w = if next < text.len() {
                line_break(text, next)
            } else {
                0
            };
            if w == 0 {
                break;
            }
            end = next + w;
            more += 1;
        }
        if more == 0 && width == 1 {
            i += 1; // a lone line break: no match starts here or in the blanks before it
            continue;
        }
        out.push(blanks_before(text, i, floor));
        i = skip_blanks(text, end);
        floor = i;
    }
    out
}

fn is_stop(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？')
}

fn is_cjk_stop(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

fn is_closer(c: char) -> bool {
    matches!(c, '"' | '\'' | '”' | '’' | '»' | ')' | ']')
}

/// `(?<=[.!?…。！？])["'”’»)\]]*(?=\s)|(?<=[。！？])(?=\S)`: positions just after a stop
/// where only closing quotes or brackets and then whitespace follow, or just after a CJK
/// stop followed by anything but whitespace. (No match can hide another: a position inside
/// or just after a run of closers is not preceded by a stop.)
fn sentence_stops(text: &Text) -> Vec<usize> {
    let n = text.len();
    let mut out = Vec::new();
    if let Some(bytes) = text.ascii() {
        for stop in memchr3_iter(b'.', b'!', b'?', bytes) {
            let p = stop + 1;
            let mut q = p;
            while q < n && is_closer(bytes[q] as char) {
                q += 1;
            }
            if q < n && is_py_space_byte(bytes[q]) {
                out.push(p);
            }
        }
        return out;
    }
    for p in 1..n {
        let prev = text.char_at(p - 1);
        if !is_stop(prev) {
            continue;
        }
        let mut q = p;
        while q < n && is_closer(text.char_at(q)) {
            q += 1;
        }
        let spaced = q < n && is_py_space(text.char_at(q));
        let cjk_glued = is_cjk_stop(prev) && !is_py_space(text.char_at(p));
        if spaced || cjk_glued {
            out.push(p);
        }
    }
    out
}
