//! `md_pyromark_v1._scan`: one walk over pulldown-cmark's events (the version `pyromark`
//! wraps, with GFM tables on) that keeps the top-level blocks and what each needs.
//!
//! pyromark hands Python one dict per event; here the events never leave Rust, and Python
//! gets one tuple per top-level block. The records are those `_scan` builds, field for
//! field (byte offsets into the body, as pulldown-cmark reports them).

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag};

use crate::text::is_py_space;

/// What a top-level block needs from the events inside it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Heading,
    List,
    Table,
}

type Cell = (usize, usize);

/// A block's details, as `_scan` records them.
pub enum Details {
    /// Paragraph-like: whether it is a real paragraph (not a block quote or HTML block).
    Paragraph(bool),
    /// `(level, title_start, title_end)`, -1 when the heading has no content events.
    Heading(u8, i64, i64),
    /// `(ordered, item_starts)`
    List(bool, Vec<usize>),
    /// A code block's language: the first word of a fence's info string.
    Code(Option<String>),
    /// `(header_cells, rows)`
    Table(Vec<Cell>, Vec<Vec<Cell>>),
}

pub struct Record {
    pub kind: &'static str,
    pub start: usize,
    pub end: usize,
    pub details: Details,
}

pub struct Scan {
    pub records: Vec<Record>,
    pub deepest: usize,
    /// Set when the block count went over `max_blocks` (checked every 64 blocks, as
    /// `_scan` does): the scan stopped there.
    pub over_limit: bool,
}

fn level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

/// `_open`: the kind, mode and details of a top-level Start tag.
fn open(tag: &Tag) -> (&'static str, Mode, Details) {
    match tag {
        Tag::Heading { level: l, .. } => (
            "heading",
            Mode::Heading,
            Details::Heading(level(*l), -1, -1),
        ),
        Tag::List(first) => (
            "list",
            Mode::List,
            Details::List(first.is_some(), Vec::new()),
        ),
        Tag::CodeBlock(kind) => {
            let info = match kind {
                CodeBlockKind::Fenced(info) => info
                    .split(is_py_space)
                    .find(|word| !word.is_empty())
                    .map(str::to_owned),
                CodeBlockKind::Indented => None,
            };
            ("code", Mode::Plain, Details::Code(info))
        }
        Tag::Table(_) => ("table", Mode::Table, Details::Table(Vec::new(), Vec::new())),
        Tag::Paragraph => ("paragraph", Mode::Plain, Details::Paragraph(true)),
        _ => ("paragraph", Mode::Plain, Details::Paragraph(false)), // block quotes, HTML
    }
}

/// The top-level blocks of `body` and the deepest nesting of its events.
pub fn scan(body: &str, max_blocks: usize) -> Scan {
    let mut records: Vec<Record> = Vec::new();
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut mode = Mode::Plain;
    let mut kind = "";
    let mut start = 0usize;
    let mut details = Details::Paragraph(false);
    let (mut first, mut last) = (-1i64, -1i64); // a heading's title; a list's last item end
    let mut items: Vec<usize> = Vec::new();
    let mut header: Vec<Cell> = Vec::new();
    let mut rows: Vec<Vec<Cell>> = Vec::new();
    let over = |records: &Vec<Record>| records.len() & 63 == 0 && records.len() > max_blocks;
    for (event, range) in Parser::new_ext(body, Options::ENABLE_TABLES).into_offset_iter() {
        let unit = matches!(event, Event::SoftBreak | Event::HardBreak | Event::Rule);
        if depth > 0 && mode == Mode::Plain {
            match event {
                Event::Start(_) => {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                Event::End(_) => {
                    depth -= 1;
                    if depth == 0 {
                        let done = std::mem::replace(&mut details, Details::Paragraph(false));
                        records.push(Record {
                            kind,
                            start,
                            end: range.end,
                            details: done,
                        });
                        if over(&records) {
                            return Scan {
                                records,
                                deepest,
                                over_limit: true,
                            };
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        if unit {
            if mode == Mode::Heading {
                last = range.end as i64;
            }
            continue;
        }
        match event {
            Event::Start(tag) => {
                depth += 1;
                if depth == 1 {
                    start = range.start;
                    (kind, mode, details) = open(&tag);
                    match mode {
                        Mode::Heading => (first, last) = (-1, -1),
                        Mode::List => {
                            items.clear();
                            last = range.end as i64;
                        }
                        Mode::Table => {
                            header.clear();
                            rows.clear();
                        }
                        Mode::Plain => {}
                    }
                } else if mode == Mode::Heading {
                    if first < 0 {
                        first = range.start as i64;
                    }
                    last = range.end as i64;
                } else if mode == Mode::List {
                    if depth == 2 {
                        items.push(range.start);
                    }
                } else if mode == Mode::Table {
                    if depth == 3 {
                        rows.last_mut()
                            .unwrap_or(&mut header)
                            .push((range.start, range.end));
                    } else if depth == 2 && matches!(tag, Tag::TableRow) {
                        rows.push(Vec::new());
                    }
                }
                deepest = deepest.max(depth);
            }
            Event::End(_) => {
                depth -= 1;
                if depth > 0 {
                    if mode == Mode::Heading || (mode == Mode::List && depth == 1) {
                        last = range.end as i64;
                    }
                    continue;
                }
                let mut end = range.end;
                let done = match (
                    mode,
                    std::mem::replace(&mut details, Details::Paragraph(false)),
                ) {
                    (Mode::Heading, Details::Heading(l, _, _)) => Details::Heading(l, first, last),
                    (Mode::List, Details::List(ordered, _)) => {
                        // pulldown-cmark stretches a list over a link reference definition
                        // after it; the list's own source ends where its last item ends.
                        end = last as usize;
                        Details::List(ordered, std::mem::take(&mut items))
                    }
                    (Mode::Table, _) => {
                        Details::Table(std::mem::take(&mut header), std::mem::take(&mut rows))
                    }
                    (_, other) => other,
                };
                records.push(Record {
                    kind,
                    start,
                    end,
                    details: done,
                });
                mode = Mode::Plain;
                if over(&records) {
                    return Scan {
                        records,
                        deepest,
                        over_limit: true,
                    };
                }
            }
            _ => {
                if mode == Mode::Heading {
                    if first < 0 {
                        first = range.start as i64;
                    }
                    last = range.end as i64;
                }
            }
        }
    }
    Scan {
        records,
        deepest,
        over_limit: false,
    }
}
