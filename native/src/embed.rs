//! `chunkers.embedding.embed_text`: the heading path lines a chunk's text lacks, its
//! captions, then its text. Python's string semantics are kept where they matter:
//! `str.splitlines`, `str.split()`/`strip()` on Python's whitespace, and `re.match`
//! of the ATX and setext patterns (read by hand: both are anchored and simple).

use crate::text::is_py_space;

/// `re.match(r"^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$", line)` on a line without
/// "\n": the level and group 2 (the title). The title is the shortest text after the
/// blanks that leaves only blanks, or blanks, a run of `#` and blanks.
fn atx(line: &str) -> Option<(usize, &str)> {
    let b = line.as_bytes();
    let spaces = b.iter().take(4).take_while(|&&c| c == b' ').count();
    if spaces > 3 {
        return None;
    }
    let hashes = b[spaces..].iter().take_while(|&&c| c == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let at = spaces + hashes;
    let blanks = b[at..]
        .iter()
        .take_while(|&&c| c == b' ' || c == b'\t')
        .count();
    if blanks == 0 {
        return None;
    }
    let rest = &line[at + blanks..];
    let is_blank = |c: char| c == ' ' || c == '\t';
    let trimmed = rest.trim_end_matches(is_blank);
    let before_hashes = trimmed.trim_end_matches('#');
    let title = if before_hashes.len() < trimmed.len() && before_hashes.ends_with(is_blank) {
        before_hashes.trim_end_matches(is_blank)
    } else {
        trimmed
    };
    Some((hashes, title))
}

/// `re.match(r"^ {0,3}(=+|-+)[ \t]*$", line)`: the underline's character.
fn setext(line: &str) -> Option<u8> {
    let b = line.as_bytes();
    let spaces = b.iter().take(4).take_while(|&&c| c == b' ').count();
    if spaces > 3 {
        return None;
    }
    let mark = *b.get(spaces).filter(|&&c| c == b'=' || c == b'-')?;
    let run = b[spaces..].iter().take_while(|&&c| c == mark).count();
    b[spaces + run..]
        .iter()
        .all(|&c| c == b' ' || c == b'\t')
        .then_some(mark)
}

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

/// The first line boundary of `s` (`str.splitlines`'): where it is and what it is. ASCII
/// bytes are tested directly; only the lead bytes of U+0085, U+2028 and U+2029 decode.
fn boundary(s: &str) -> Option<(usize, char)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' | b'\r' | 0x0b | 0x0c | 0x1c..=0x1e => return Some((i, b[i] as char)),
            0xc2 | 0xe2 => {
                let c = s[i..].chars().next().expect("a char starts here");
                if is_line_boundary(c) {
                    return Some((i, c));
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
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
            match boundary(rest) {
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

/// `_first_title`: the title of the text's first line (an ATX heading's, else the line).
fn first_title(text: &str) -> &str {
    let first = text.trim_start_matches('\u{feff}');
    let first = first
        .split('\n')
        .next()
        .unwrap_or("")
        .trim_end_matches('\r');
    py_strip(atx(first).map_or(first, |(_, title)| title))
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
        if let Some((level, title)) = atx(line) {
            found.push((level, py_norm(title)));
            i += 1;
            continue;
        }
        let mut end = i;
        while let Some(next) = lines.get(end) {
            if py_strip(next).is_empty() || setext(next).is_some() {
                break;
            }
            end += 1;
        }
        let underline = if i < end {
            lines.get(end).and_then(setext)
        } else {
            None
        };
        let Some(mark) = underline else {
            break; // a paragraph (or a lone underline): the headings end here
        };
        let level = if mark == b'=' { 1 } else { 2 };
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

/// `embed_text(chunk, rule)`: the heading lines the text lacks, the captions, then the text
/// (the column writer builds the same string in place; this form is for the tests).
pub fn embed_text(headings: &[String], captions: &[String], text: &str, leading: bool) -> String {
    let keep = kept_headings(headings, text, leading);
    let prefix: Vec<&str> = headings[..keep]
        .iter()
        .chain(captions)
        .map(String::as_str)
        .collect();
    let prefix = prefix.join("\n");
    if prefix.is_empty() {
        text.to_owned()
    } else {
        format!("{prefix}\n{text}")
    }
}
