//! `_markdown.media_ref`: a paragraph that is exactly one image becomes an image
//! reference (an audio reference when its target is an audio file).

use std::sync::LazyLock;

use regex::Regex;

use crate::embed::py_strip;
use crate::text::is_py_space;

/// Python's whitespace as the items of a regex class: every code point `is_py_space`
/// accepts, so the pattern reads `\s` exactly as the checked function does.
fn py_space_items() -> String {
    (0..=0x10FFFFu32)
        .filter_map(char::from_u32)
        .filter(|&c| is_py_space(c))
        .map(|c| format!("\\x{{{:X}}}", c as u32))
        .collect()
}

/// `_markdown._IMAGE_ONLY`, with `\s` as Python reads it.
static IMAGE_ONLY: LazyLock<Regex> = LazyLock::new(|| {
    let items = py_space_items();
    let s = format!("[{items}]");
    let not_s = format!(r"[^{items}()\\]");
    Regex::new(&format!(
        r#"(?s)\A!\[(?P<alt>(?:[^\[\]\\]|\\.)*)\]\({s}*(?P<src><[^<>\n]*>|(?:{not_s}|\\.|\((?:{not_s}|\\.)*\))+)(?:{s}+(?P<title>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|\((?:[^()\\]|\\.)*\)))?{s}*\)\z"#
    ))
    .expect("valid pattern")
});

const AUDIO_EXTENSIONS: [&str; 5] = [".mp3", ".wav", ".ogg", ".m4a", ".flac"];

/// mistune's `unescape_char`: a backslash before ASCII punctuation is dropped.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&next) = chars.peek() {
                if next.is_ascii_punctuation() {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

/// What an image-only paragraph becomes: its kind and its chunk text and captions as a
/// chunk of its own (`_standalone.standalone_text`).
pub struct Media {
    pub kind: &'static str,
    pub text: String,
    pub captions: Vec<String>,
}

/// The media reference `text` is, or None when it is not exactly one image.
pub fn media_ref(text: &str) -> Option<Media> {
    if !text.trim_start_matches(is_py_space).starts_with("![") {
        return None;
    }
    let caps = IMAGE_ONLY.captures(py_strip(text))?;
    let alt = unescape(caps.name("alt").map_or("", |m| m.as_str()));
    let raw_src = caps.name("src").map_or("", |m| m.as_str());
    let src = match raw_src.strip_prefix('<') {
        // Python's `src[1:-1]`: the first and the last character dropped
        Some(rest) => {
            let mut inner = rest.chars();
            inner.next_back();
            unescape(inner.as_str())
        }
        None => unescape(raw_src),
    };
    let title = caps.name("title").map(|m| {
        let t = m.as_str();
        unescape(&t[1..t.len() - 1])
    });
    let bare = src
        .split('#')
        .next()
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    if AUDIO_EXTENSIONS.iter().any(|ext| bare.ends_with(ext)) {
        // caption = alt or title or None; text = caption or ""
        let caption = if !alt.is_empty() {
            Some(alt)
        } else {
            title.filter(|t| !t.is_empty())
        };
        return Some(Media {
            kind: "audio_ref",
            text: caption.clone().unwrap_or_default(),
            captions: caption.into_iter().collect(),
        });
    }
    let caption = title.filter(|t| !t.is_empty());
    let text = [Some(alt.as_str()), caption.as_deref()]
        .into_iter()
        .flatten()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    Some(Media {
        kind: "image_ref",
        text,
        captions: caption.into_iter().collect(),
    })
}
