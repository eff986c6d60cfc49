//! `chunkers.embedding.embed_text`: the heading path lines a chunk's text lacks, its
//! captions, then its text. Python's string semantics are kept where they matter:
//! `str.splitlines`, `str.split()`/`strip()` on Python's whitespace, and `re.match`
//! of the ATX and setext patterns.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::is_py_space;

static ATX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\A {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*\z").expect("valid pattern")
});
static SETEXT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\A {0,3}(=+|-+)[ \t]*\z").expect("valid pattern"));

/// Python's `str.strip()`.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_space)
}

/// Python's `" ".join(s.split())`.
pub fn py_norm(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for word in s.split(is_py_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn is_line_boundary(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\u{b}'
            | '\u{c}'
            | '\u{1c}'
            | '\u{1d}'
            | '\u{1e}'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python's `str.splitlines()`, read only as far as it is asked for (a chunk's leading
/// headings are a few lines of a text that may be long).
struct Lines<'a> {
    rest: &'a str,
    lines: Vec<&'a str>,
}

impl<'a> Lines<'a> {
    fn new(s: &'a str) -> Self {
        Lines {
            rest: s,
            lines: Vec::new(),
        }
    }

    /// Line `i`, or None past the last line.
    fn get(&mut self, i: usize) -> Option<&'a str> {
        while self.lines.len() <= i && !self.rest.is_empty() {
            let rest = self.rest;
            match rest.char_indices().find(|&(_, c)| is_line_boundary(c)) {
                Some((at, c)) => {
                    self.lines.push(&rest[..at]);
                    let mut next = at + c.len_utf8();
                    if c == '\r' && rest[next..].starts_with('\n') {
                        next += 1;
                    }
                    self.rest = &rest[next..];
                }
                None => {
                    self.lines.push(rest);
                    self.rest = "";
                }
            }
        }
        self.lines.get(i).copied()
    }
}

/// Whether `line` may match ATX (a `#` after at most three spaces): the regex runs only
/// when it may.
fn may_be_atx(line: &str) -> bool {
    line.trim_start_matches(' ').starts_with('#')
}

/// Whether `line` may match SETEXT (`=` or `-` after at most three spaces).
fn may_be_setext(line: &str) -> bool {
    matches!(
        line.trim_start_matches(' ').as_bytes().first(),
        Some(b'=' | b'-')
    )
}

/// `_first_title`: the title of the text's first line (an ATX heading's, else the line).
fn first_title(text: &str) -> &str {
    let first = text.trim_start_matches('\u{feff}');
    let first = first
        .split('\n')
        .next()
        .unwrap_or("")
        .trim_end_matches('\r');
    let caps = if may_be_atx(first) {
        ATX.captures(first)
    } else {
        None
    };
    let title = match caps {
        Some(caps) => caps.get(2).map_or("", |m| m.as_str()),
        None => first,
    };
    py_strip(title)
}

/// `_leading_headings`: `(level, title)` of each heading line the text opens with.
fn leading_headings(text: &str) -> Vec<(usize, String)> {
    let mut lines = Lines::new(text.trim_start_matches('\u{feff}'));
    let mut found = Vec::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        if py_strip(line).is_empty() {
            i += 1;
            continue;
        }
        if let Some(caps) = may_be_atx(line).then(|| ATX.captures(line)).flatten() {
            let level = caps.get(1).map_or(0, |m| m.as_str().len());
            found.push((level, py_norm(caps.get(2).map_or("", |m| m.as_str()))));
            i += 1;
            continue;
        }
        let mut end = i;
        while let Some(next) = lines.get(end) {
            if py_strip(next).is_empty() || (may_be_setext(next) && SETEXT.is_match(next)) {
                break;
            }
            end += 1;
        }
        let underline = if i < end {
            lines.get(end).and_then(|l| SETEXT.captures(l))
        } else {
            None
        };
        let Some(underline) = underline else {
            break; // a paragraph (or a lone underline): the headings end here
        };
        let level = if underline
            .get(1)
            .is_some_and(|m| m.as_str().starts_with('='))
        {
            1
        } else {
            2
        };
        let joined = (i..end)
            .filter_map(|k| lines.get(k))
            .collect::<Vec<_>>()
            .join(" ");
        found.push((level, py_norm(&joined)));
        i = end + 1;
    }
    found
}

/// `open_headings`: titles of the leading headings still open after the last of them.
fn open_headings(text: &str) -> Vec<String> {
    let mut stack: Vec<(usize, String)> = Vec::new();
    for (level, title) in leading_headings(text) {
        while stack.last().is_some_and(|(l, _)| *l >= level) {
            stack.pop();
        }
        stack.push((level, title));
    }
    stack.into_iter().map(|(_, t)| t).collect()
}

fn names(title: &str, line: &str) -> bool {
    title == line || (!line.is_empty() && title.starts_with(line))
}

/// `_unrepeated`: how many of `headings` (outermost first) the text does not already hold.
pub fn kept_headings(headings: &[String], text: &str, leading: bool) -> usize {
    let mut opened = if leading {
        open_headings(text)
    } else {
        Vec::new()
    };
    if opened.is_empty() {
        if let Some(last) = headings.last() {
            if first_title(text) == py_strip(last) {
                return headings.len() - 1;
            }
        }
        return headings.len();
    }
    let mut keep = headings.len();
    while keep > 0 {
        let Some(top) = opened.last() else { break };
        if !names(top, &py_norm(&headings[keep - 1])) {
            break;
        }
        keep -= 1;
        opened.pop();
    }
    keep
}
