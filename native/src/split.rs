//! The md-heading engine's cut search: `_token_split.split_pieces` over the levels of
//! `_md_heading._LazyLevels`, step for step (the Python modules are the reference and
//! their docstrings say why each step is as it is).

use crate::scan::{self, Sep, PROSE};
use crate::text::Text;

/// How a piece is counted: natively for the tokenizers whose count is a function of the
/// slice's size, else by the caller (a Python counter).
pub trait Measure {
    type Error;
    fn count(&mut self, text: &Text, start: usize, end: usize) -> Result<i64, Self::Error>;
}

/// `bytes-3`: `ceil(utf8 bytes / 3)`.
pub struct Bytes3;

impl Measure for Bytes3 {
    type Error = std::convert::Infallible;
    fn count(&mut self, text: &Text, start: usize, end: usize) -> Result<i64, Self::Error> {
        Ok(text.utf8_len(start, end).div_ceil(3) as i64)
    }
}

/// `chars`: one token per code point.
pub struct Chars;

impl Measure for Chars {
    type Error = std::convert::Infallible;
    fn count(&mut self, _text: &Text, start: usize, end: usize) -> Result<i64, Self::Error> {
        Ok((end - start) as i64)
    }
}

/// The candidate cuts per level, each computed when first needed (`_LazyLevels`, and
/// `_token_split.cut_levels` with the hybrid engine's filter).
pub struct Levels<'t, 'a> {
    text: &'t Text<'a>,
    structural: Option<Vec<usize>>,
    glue_end: Option<usize>,
    /// The separators after the structural level (`TOKEN_LEVELS` of the element's style).
    seps: &'static [Sep],
    /// Which candidates a level keeps (hybrid: no cut right after a list marker).
    keep: Option<&'t dyn Fn(usize) -> bool>,
    merged: Vec<usize>,
    levels: Vec<Vec<usize>>,
}

impl<'t, 'a> Levels<'t, 'a> {
    pub fn new(text: &'t Text<'a>, structural: Vec<usize>, glue_end: Option<usize>) -> Self {
        Self::with(text, structural, glue_end, &PROSE, None)
    }

    /// Levels over `seps` after the structural cuts, keeping only the candidates `keep`
    /// accepts (every level's end of text included, as `_hybrid` filters them).
    pub fn with(
        text: &'t Text<'a>,
        structural: Vec<usize>,
        glue_end: Option<usize>,
        seps: &'static [Sep],
        keep: Option<&'t dyn Fn(usize) -> bool>,
    ) -> Self {
        let structural = if structural.is_empty() {
            None
        } else {
            Some(structural)
        };
        Levels {
            text,
            structural,
            glue_end,
            seps,
            keep,
            merged: Vec::new(),
            levels: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.seps.len() + usize::from(self.structural.is_some())
    }

    fn ensure(&mut self, index: usize) {
        let n = self.text.len();
        while self.levels.len() <= index {
            let i = self.levels.len();
            let cuts = match (&self.structural, i) {
                (Some(s), 0) => s.clone(),
                (Some(_), _) => scan::starts(self.seps[i - 1], self.text),
                (None, _) => scan::starts(self.seps[i], self.text),
            };
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c != 0 && c != n).collect();
            if !cuts.is_sorted() {
                cuts.sort_unstable();
            }
            let merged = merge_sorted(&self.merged, &cuts);
            let mut level = merged.clone();
            level.push(n);
            if let Some(glue) = self.glue_end {
                level.retain(|&c| c == 0 || c > glue);
            }
            if let Some(keep) = self.keep {
                level.retain(|&c| keep(c));
            }
            self.merged = merged;
            self.levels.push(level);
        }
    }

    pub fn get(&mut self, index: usize) -> &[usize] {
        self.ensure(index);
        &self.levels[index]
    }
}

/// The sorted union of two sorted lists, each value once.
fn merge_sorted(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                if x == y {
                    j += 1;
                }
                x
            }
            (Some(_), Some(&y)) | (None, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => unreachable!(),
        };
        if out.last() != Some(&next) {
            out.push(next);
        }
    }
    out
}

/// The candidate ends a search may pick from: a level's cuts, or every position.
enum Positions<'l> {
    Cuts(&'l [usize]),
    /// `start + 1 ..= n`
    Every {
        first: usize,
        last: usize,
    },
}

impl Positions<'_> {
    fn len(&self) -> usize {
        match self {
            Positions::Cuts(c) => c.len(),
            Positions::Every { first, last } => (last + 1).saturating_sub(*first),
        }
    }

    fn get(&self, k: usize) -> usize {
        match self {
            Positions::Cuts(c) => c[k],
            Positions::Every { first, .. } => first + k,
        }
    }

    /// Python's `bisect_right(positions, x, lo=lo)`.
    fn bisect_right(&self, x: usize, lo: usize) -> usize {
        match self {
            Positions::Cuts(c) => lo + c[lo..].partition_point(|&v| v <= x),
            Positions::Every { .. } => {
                let below = if x < self.get(0) {
                    0
                } else {
                    x - self.get(0) + 1
                };
                below.min(self.len()).max(lo)
            }
        }
    }
}

fn bisect_right(cuts: &[usize], x: usize) -> usize {
    cuts.partition_point(|&v| v <= x)
}

fn bisect_left(cuts: &[usize], x: usize) -> usize {
    cuts.partition_point(|&v| v < x)
}

/// Finds, for one start, the longest piece that fits at the cleanest level (`_Search`).
struct Search<'t, 'a, M: Measure> {
    text: &'t Text<'a>,
    measure: &'t mut M,
    budget: i64,
    cpt: f64,
    max_chars: usize,
    primed: Option<(usize, (usize, i64))>,
}

impl<M: Measure> Search<'_, '_, M> {
    fn piece(&mut self, levels: &mut Levels, start: usize) -> Result<(usize, i64), M::Error> {
        if let Some((at, found)) = self.primed {
            if at == start {
                self.primed = None;
                return Ok(found);
            }
        }
        let n = self.text.len();
        let guess = start + std::cmp::max(1, (self.budget as f64 * self.cpt) as usize);
        for index in 0..levels.len() {
            let cuts = levels.get(index);
            let positions = Positions::Cuts(cuts);
            let offset = bisect_right(cuts, start);
            if let Some(best) = self.best(start, &positions, offset, guess)? {
                return Ok(best);
            }
        }
        let every = Positions::Every {
            first: start + 1,
            last: n,
        };
        if let Some(best) = self.best(start, &every, 0, guess)? {
            return Ok(best);
        }
        let end = start + 1; // one character that alone is over budget
        Ok((end, self.measure.count(self.text, start, end)?))
    }

    fn fits(&mut self, start: usize, end: usize) -> Result<Option<i64>, M::Error> {
        if end <= start || end - start > self.max_chars {
            return Ok(None);
        }
        let tokens = self.measure.count(self.text, start, end)?;
        Ok(if tokens <= self.budget {
            Some(tokens)
        } else {
            None
        })
    }

    fn ok(
        &mut self,
        start: usize,
        positions: &Positions,
        k: usize,
    ) -> Result<Option<i64>, M::Error> {
        let end = self.text.trim_end(start, positions.get(k));
        self.fits(start, end)
    }

    fn best(
        &mut self,
        start: usize,
        positions: &Positions,
        offset: usize,
        guess: usize,
    ) -> Result<Option<(usize, i64)>, M::Error> {
        let total = positions.len();
        if total <= offset {
            return Ok(None);
        }
        let count = (total - offset) as i64;
        let at = |k: i64| offset + k as usize;
        let g = positions.bisect_right(guess, offset) as i64 - 1 - offset as i64;
        let g = g.max(0).min(count - 1);
        let (mut lo, mut hi);
        if self.ok(start, positions, at(g))?.is_some() {
            lo = g;
            hi = count;
            let mut step = 1;
            while lo + step < count {
                if self.ok(start, positions, at(lo + step))?.is_some() {
                    lo += step;
                    step *= 2;
                } else {
                    hi = lo + step;
                    break;
                }
            }
        } else {
            hi = g;
            lo = -1;
            let mut step = 1;
            while hi > 0 {
                let k = (hi - step).max(0);
                if self.ok(start, positions, at(k))?.is_some() {
                    lo = k;
                    break;
                }
                hi = k;
                step *= 2;
            }
            if lo < 0 {
                return Ok(None);
            }
        }
        while hi - lo > 1 {
            let mid = (lo + hi).div_euclid(2);
            if self.ok(start, positions, at(mid))?.is_some() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let end = self.text.trim_end(start, positions.get(at(lo)));
        let tokens = self
            .ok(start, positions, at(lo))?
            .expect("the chosen end was measured to fit");
        Ok(Some((end, tokens)))
    }
}

/// Start of the longest tail of `text[start:end]` that fits `tokens`, at the cleanest level.
fn overlap_start<M: Measure>(
    text: &Text,
    measure: &mut M,
    levels: &mut Levels,
    start: usize,
    end: usize,
    tokens: i64,
) -> Result<Option<usize>, M::Error> {
    for index in 0..levels.len() {
        let cuts = levels.get(index);
        let lo_i = bisect_right(cuts, start);
        let hi_i = bisect_left(cuts, end);
        let mut starts: Vec<usize> = Vec::new();
        if lo_i < hi_i {
            for &c in &cuts[lo_i..hi_i] {
                let s = text.skip_space(c);
                if starts.last() != Some(&s) {
                    starts.push(s);
                }
            }
        }
        starts.retain(|&s| start < s && s < end);
        if let Some(&last) = starts.last() {
            if measure.count(text, last, end)? <= tokens {
                return Ok(Some(
                    starts[first_fitting(text, measure, &starts, end, tokens)?],
                ));
            }
        }
    }
    Ok(None)
}

/// Smallest index whose tail fits, given that the last one does (gallop backwards).
fn first_fitting<M: Measure>(
    text: &Text,
    measure: &mut M,
    starts: &[usize],
    end: usize,
    tokens: i64,
) -> Result<usize, M::Error> {
    let mut hi = starts.len() as i64 - 1;
    let mut lo: i64 = -1;
    let mut step: i64 = 1;
    while hi - step >= 0 {
        let k = hi - step;
        if measure.count(text, starts[k as usize], end)? <= tokens {
            hi = k;
            step *= 2;
        } else {
            lo = k;
            break;
        }
    }
    while hi - lo > 1 {
        let mid = (lo + hi).div_euclid(2);
        if measure.count(text, starts[mid as usize], end)? <= tokens {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(hi as usize)
}

/// `(start, end, tokens)` pieces of one run's text (`_md_heading._Run._pieces` after its
/// whole-run shortcut): `structural` are the offsets where the run's later blocks start,
/// `glue_end` the end of the leading headings glued to the content below them.
pub fn split_pieces<M: Measure>(
    text: &Text,
    measure: &mut M,
    structural: Vec<usize>,
    glue_end: Option<usize>,
    budget: i64,
    overlap_tokens: i64,
) -> Result<Vec<(usize, usize, i64)>, M::Error> {
    let mut levels = Levels::new(text, structural, glue_end);
    let total = measure.count(text, 0, text.len())?;
    let chars_per_token = text.len() as f64 / std::cmp::max(1, total) as f64;
    split_levels(
        text,
        measure,
        None,
        &mut levels,
        budget,
        overlap_tokens,
        chars_per_token,
    )
}

/// A counter of bare slices for the overlap search, when it is not the pieces' measure.
pub type Bare<'b> = &'b mut dyn FnMut(&Text, usize, usize) -> i64;

/// `_token_split.split_pieces` over `levels`: `measure` counts a piece, `bare` (else
/// `measure`) an overlap tail, and `chars_per_token` is the caller's guess for the search.
pub fn split_levels<M: Measure>(
    text: &Text,
    measure: &mut M,
    mut bare: Option<Bare>,
    levels: &mut Levels,
    budget: i64,
    overlap_tokens: i64,
    chars_per_token: f64,
) -> Result<Vec<(usize, usize, i64)>, M::Error> {
    let n = text.len();
    let cpt = chars_per_token.max(0.25);
    let max_chars = std::cmp::max(64, (8.0 * budget as f64 * cpt) as usize);
    let mut search = Search {
        text,
        measure,
        budget,
        cpt,
        max_chars,
        primed: None,
    };
    let mut out = Vec::new();
    let mut start = text.skip_space(0);
    while start < n {
        let (end, tokens) = search.piece(levels, start)?;
        out.push((start, end, tokens));
        let mut nxt = text.skip_space(end);
        if nxt >= n {
            break;
        }
        if overlap_tokens > 0 {
            let back = match bare.as_mut() {
                Some(count) => {
                    let mut tails = Counted(&mut **count);
                    let Ok(back) =
                        overlap_start(text, &mut tails, levels, start, end, overlap_tokens);
                    back
                }
                None => overlap_start(text, search.measure, levels, start, end, overlap_tokens)?,
            };
            if let Some(back) = back {
                let candidate = search.piece(levels, back)?;
                if candidate.0 > end {
                    search.primed = Some((back, candidate));
                    nxt = back;
                }
            }
        }
        start = nxt;
    }
    Ok(out)
}

/// A closure as an infallible measure.
struct Counted<'b>(&'b mut dyn FnMut(&Text, usize, usize) -> i64);

impl Measure for Counted<'_> {
    type Error = std::convert::Infallible;
    fn count(&mut self, text: &Text, start: usize, end: usize) -> Result<i64, Self::Error> {
        Ok((self.0)(text, start, end))
    }
}
