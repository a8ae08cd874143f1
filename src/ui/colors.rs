//! Colours: one per rank, and the colour of a chunk cell from the set of
//! ranks whose contributions it holds.

use crate::engine::verify::RankSet;

/// One colour per rank: Okabe & Ito's palette, chosen to stay apart under
/// protanopia, deuteranopia and tritanopia (the e2e test `a11y.test.mjs`
/// simulates all three: every pair ΔE76 ≥ 8; Tableau 10, used before,
/// put green and red 0.9 apart for deuteranopes). Rank `r` uses
/// `RANK[r % 8]`; the dots in each cell say the same without colour.
pub const RANK: [&str; 8] = [
    "#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#f0e442", "#000000",
];

/// Text colour on each [`RANK`] colour (contrast ≥ 4.5:1, WCAG AA).
const RANK_TEXT: [&str; 8] = [
    "#ffffff", "#000000", "#000000", "#000000", "#000000", "#000000", "#000000", "#ffffff",
];

/// The text colour on rank `r`'s colour.
pub fn rank_text(r: usize) -> &'static str {
    RANK_TEXT[r % RANK_TEXT.len()]
}

/// The colour of a fully reduced chunk (holds every rank's contribution).
pub const COMPLETE: &str = "#2b1d6e";
/// Lightest end of the partial-reduction ramp.
const PARTIAL_LIGHT: (f64, f64, f64) = (0xe4 as f64, 0xdf as f64, 0xf5 as f64);
/// Darkest end of the partial-reduction ramp (before `COMPLETE`).
const PARTIAL_DARK: (f64, f64, f64) = (0x6a as f64, 0x58 as f64, 0xb8 as f64);

/// Colour of a copy transfer (a chunk is stored).
pub const COPY: &str = "#1f77b4";
/// Colour of a reduce transfer (a chunk is combined).
pub const REDUCE: &str = "#d1495b";
/// An empty cell on the canvas grid (the DOM cell's hatching, averaged:
/// at 9 px the stripes would be noise).
pub const EMPTY: &str = "#e9ebf0";
/// A lesson's highlighted cell (`.lesson-look` in style.css).
pub const LESSON: &str = "#e6006e";
/// The canvas grid's cursor (the cell described below it).
pub const CURSOR: &str = "#111111";

/// Rank `r`'s colour.
pub fn rank(r: usize) -> &'static str {
    RANK[r % RANK.len()]
}

/// Fill and text colour of a chunk cell holding `set` on a run of `n` ranks:
/// empty -> `None` (hatched by CSS); one contribution -> that rank's colour;
/// all `n` -> [`COMPLETE`]; in between -> a lavender ramp darkening with the
/// number of contributions.
pub fn cell(set: &RankSet, n: usize) -> Option<(String, &'static str)> {
    let k = set.len();
    if k == 0 {
        return None;
    }
    if k == 1 {
        let r = set.iter().next().unwrap_or(0);
        return Some((rank(r).to_string(), rank_text(r)));
    }
    if k >= n {
        return Some((COMPLETE.to_string(), "#ffffff"));
    }
    // k in 2..n: position along the ramp.
    let f = if n > 3 {
        (k - 2) as f64 / (n - 3) as f64
    } else {
        0.5
    };
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    let (r, g, b) = (
        mix(PARTIAL_LIGHT.0, PARTIAL_DARK.0),
        mix(PARTIAL_LIGHT.1, PARTIAL_DARK.1),
        mix(PARTIAL_LIGHT.2, PARTIAL_DARK.2),
    );
    // The text colour with the better contrast (WCAG relative luminance).
    let lum = |c: u8| {
        let v = c as f64 / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    let l = 0.2126 * lum(r) + 0.7152 * lum(g) + 0.0722 * lum(b);
    // Against white (L = 1) and against black (L = 0): one of the two is
    // always at least 4.58:1, so every ramp chip passes WCAG AA.
    let text = if (1.05 / (l + 0.05)) >= ((l + 0.05) / 0.05) {
        "#ffffff"
    } else {
        "#000000"
    };
    Some((format!("#{r:02x}{g:02x}{b:02x}"), text))
}
