//! Where each separator of the prose levels starts: `_separators.separator_starts` for
//! PARAGRAPH_BREAK, SENTENCE_STOP, LINE_END and WHITESPACE, in code-point offsets.
//!
//! The three regex separators use their defining patterns (leading blanks included); the
//! `regex` crate's leftmost-first matches are the ones Python's backtracking `re` finds
//! for these patterns, and `\s` is spelled out as Python reads it (`text::is_py_space`).
//! SENTENCE_STOP needs look-behind, which `regex` lacks, so it is read directly.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::{is_py_space, Text};

static PARAGRAPH_BREAK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[ \t]*(?:(?:\r\n|\r|\n)(?:[ \t]*(?:\r\n|\r|\n))+[ \t]*)").expect("valid pattern")
});
static LINE_END: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[ \t]*(?:\r\n|\r|\n)").expect("valid pattern"));
static WHITESPACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[\s\x1C-\x1F]+").expect("valid pattern"));

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
    let regex = match sep {
        Sep::ParagraphBreak => &*PARAGRAPH_BREAK,
        Sep::LineEnd => &*LINE_END,
        Sep::Whitespace => &*WHITESPACE,
        Sep::SentenceStop => return sentence_stops(text),
    };
    regex
        .find_iter(text.s)
        .map(|m| text.index_of_byte(m.start()))
        .collect()
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
