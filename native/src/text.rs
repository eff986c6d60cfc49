//! A text indexed the way Python indexes a `str`: by code point.
//!
//! The Python path hands offsets around as code-point indices; the core keeps the same
//! indices so every position it returns is the one the Python path would compute. Byte
//! offsets are used only inside, for regex scans and byte counts.

/// Python's `str.isspace()` (and the `re` module's `\s` on `str`): Unicode `White_Space`
/// plus the four information separators U+001C..U+001F, which Python counts as space
/// (bidirectional class B or S) and Unicode's `White_Space` does not.
#[inline]
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's whitespace among ASCII bytes (`is_py_space` on an ASCII character).
#[inline]
pub fn is_py_space_byte(b: u8) -> bool {
    matches!(b, b'\t'..=b'\r' | 0x1c..=0x20)
}

/// A `&str` with code-point indexing. ASCII text (the common case) is indexed by its
/// bytes; other text keeps its code points and their byte offsets.
pub struct Text<'a> {
    pub s: &'a str,
    /// The code points, so `char_at` is O(1); empty when the text is ASCII.
    chars: Vec<char>,
    /// Byte offset of each code point and of the end (`len + 1` entries); empty when the
    /// text is ASCII, where the two offsets agree.
    bytes_at: Vec<usize>,
    len: usize,
}

impl<'a> Text<'a> {
    pub fn new(s: &'a str) -> Self {
        if s.is_ascii() {
            return Text {
                s,
                chars: Vec::new(),
                bytes_at: Vec::new(),
                len: s.len(),
            };
        }
        let chars: Vec<char> = s.chars().collect();
        let mut bytes_at: Vec<usize> = s.char_indices().map(|(b, _)| b).collect();
        bytes_at.push(s.len());
        let len = chars.len();
        Text {
            s,
            chars,
            bytes_at,
            len,
        }
    }

    /// The text's bytes when it is ASCII (then byte and code-point offsets agree).
    #[inline]
    pub fn ascii(&self) -> Option<&'a [u8]> {
        self.bytes_at.is_empty().then_some(self.s.as_bytes())
    }

    /// Number of code points (Python's `len`).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn char_at(&self, i: usize) -> char {
        if self.bytes_at.is_empty() {
            self.s.as_bytes()[i] as char
        } else {
            self.chars[i]
        }
    }

    /// Byte offset of code point `i` (`i == len()` gives the byte length).
    #[inline]
    pub fn byte(&self, i: usize) -> usize {
        if self.bytes_at.is_empty() {
            i
        } else {
            self.bytes_at[i]
        }
    }

    /// UTF-8 bytes of `text[start:end]`.
    #[inline]
    pub fn utf8_len(&self, start: usize, end: usize) -> usize {
        self.byte(end) - self.byte(start)
    }

    /// `text[start:end]` as a `&str`.
    #[inline]
    pub fn slice(&self, start: usize, end: usize) -> &'a str {
        &self.s[self.byte(start)..self.byte(end)]
    }

    /// `pos` moved past any whitespace (Python: `re.compile(r"\s+").match(text, pos)`).
    #[inline]
    pub fn skip_space(&self, mut pos: usize) -> usize {
        while pos < self.len && is_py_space(self.char_at(pos)) {
            pos += 1;
        }
        pos
    }

    /// `end` moved back over whitespace, never before `start`.
    #[inline]
    pub fn trim_end(&self, start: usize, mut end: usize) -> usize {
        while end > start && is_py_space(self.char_at(end - 1)) {
            end -= 1;
        }
        end
    }
}
