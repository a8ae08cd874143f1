//! Colours: one per rank, and the colour of a chunk cell from the set of
//! ranks whose contributions it holds.

use crate::engine::verify::RankSet;

/// One colour per rank (Tableau 10, muted and colour-blind friendlier than
/// a rainbow); rank `r` uses `RANK[r % 8]`.
pub const RANK: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#c9a227", "#9c755f",
];

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
        return Some((rank(r).to_string(), "#ffffff"));
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
    let text = if f > 0.45 { "#ffffff" } else { "#1d1b2e" };
    Some((format!("#{r:02x}{g:02x}{b:02x}"), text))
}
