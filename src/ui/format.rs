//! Number formatting for the page.

use crate::engine::config::parse_bytes;
use crate::engine::units::format_bytes;

/// A duration in µs with sensible precision (`3.40`, `142.7`, `12 345`).
pub fn us(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a < 10.0 {
        format!("{v:.2}")
    } else if a < 1000.0 {
        format!("{v:.1}")
    } else {
        group(format!("{v:.0}"))
    }
}

/// A bandwidth in GB/s (`72.4`, `146.40`).
pub fn gbps(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    if v.abs() < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.1}")
    }
}

/// An SVG coordinate or length with one decimal (`12.3`, `-0.5`, `0.0`):
/// `format!("{v:.1}")` up to ties (this rounds `10·v` half away from
/// zero; core's formatter rounds the exact binary value half to even) and
/// the sign of a value that rounds to zero, neither visible in a drawing.
/// Made by integer arithmetic: core's exact formatting of an `f64` to one
/// decimal (a bignum per number) was 6 ms of the 1024-rank drawing's 8 ms
/// in a CPU profile, and the chunk tokens are placed every frame.
/// Non-finite and huge values fall back to the formatter.
pub fn coord(v: f64) -> String {
    let t = (v * 10.0).round();
    if !(t.abs() < 1e15) {
        return format!("{v:.1}");
    }
    let t = t as i64;
    let a = t.unsigned_abs();
    format!("{}{}.{}", if t < 0 { "-" } else { "" }, a / 10, a % 10)
}

/// A wall time in ms.
pub fn ms(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.0}")
    }
}

/// A sampled element value, short enough for a chunk cell (`0.4375`,
/// `-12`, `3.1e5`, `1.2e-7`).
pub fn sample(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞".into() } else { "-∞".into() };
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if v.fract() == 0.0 && a < 1e5 {
        return format!("{v:.0}");
    }
    if !(1e-3..1e5).contains(&a) {
        return format!("{v:.1e}");
    }
    let s = if a >= 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// An error magnitude (`0`, `2.4e-7`).
pub fn error(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else {
        format!("{v:.2e}")
    }
}

/// Digit grouping with thin spaces (`12 345`).
fn group(s: String) -> String {
    let (sign, digits) = s.strip_prefix('-').map_or(("", s.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    format!("{sign}{out}")
}

/// A size for the typed field: binary units if they round-trip exactly
/// (`16 MiB`, `1.5 KiB`), else the integer (`1000`).
pub fn bytes_field(b: u64) -> String {
    let f = format_bytes(b);
    if parse_bytes(&f) == Ok(b) {
        f
    } else {
        b.to_string()
    }
}

/// A size with its exact byte count when that adds information
/// (`16 MiB (16 777 216 B)`).
pub fn bytes_long(b: u64) -> String {
    let f = format_bytes(b);
    if b < 1024 {
        f
    } else {
        format!("{f} ({} B)", group(b.to_string()))
    }
}

/// Ranks as compact runs in ascending order: `{0, 5..7}`, `{3}`, `{}`.
pub fn ranks<I: IntoIterator<Item = usize>>(it: I) -> String {
    let mut v: Vec<usize> = it.into_iter().collect();
    v.sort_unstable();
    runs(&v)
}

/// Ranks of a `n`-rank run in cyclic order starting at `start`, as compact
/// ascending runs: for a ring, starting after the receiver lists the
/// contributions in the order they were added (`{5..7,0}` at rank 0).
pub fn ranks_cyclic<I: IntoIterator<Item = usize>>(it: I, start: usize, n: usize) -> String {
    let mut v: Vec<usize> = it.into_iter().collect();
    let n = n.max(1);
    v.sort_by_key(|&r| (r + n - start % n) % n);
    runs(&v)
}

/// `v` in its order, consecutive values joined into runs (`a..b`, `a,b`).
fn runs(v: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(match j - i {
            0 => v[i].to_string(),
            1 => format!("{},{}", v[i], v[j]),
            _ => format!("{}..{}", v[i], v[j]),
        });
        i = j + 1;
    }
    format!("{{{}}}", parts.join(","))
}

/// Chunk label: `c3`, or `c2–c4` for a range.
pub fn chunks(first: usize, count: usize) -> String {
    if count <= 1 {
        format!("c{first}")
    } else {
        format!("c{first}–c{}", first + count - 1)
    }
}

/// Why a configuration is model-only, in the page's language.
pub fn model_only(m: crate::engine::config::ModelOnly) -> String {
    use crate::engine::config::ModelOnly;
    use crate::t;
    match m {
        ModelOnly::Bytes { max } => t!("model-only-bytes", max = format_bytes(max)),
        ModelOnly::Ranks { max } => t!("model-only-ranks", max = max as u64),
        ModelOnly::Buffers { cap, compressed } => {
            let cap = t!("model-only-buffers", cap = format_bytes(cap));
            match compressed {
                None => cap,
                Some(Some((ranks, per))) => format!(
                    "{cap} {}",
                    t!(
                        "model-only-once",
                        ranks = ranks as u64,
                        per = format_bytes(per)
                    )
                ),
                Some(None) => format!("{cap} {}", t!("model-only-compressed")),
            }
        }
    }
}

/// Why a prediction used its slice count, in the page's language (the
/// engine's `Display` is the English of the same data), as one sentence.
pub fn slice_why(w: &crate::engine::cost::SliceWhy) -> String {
    use crate::engine::cost::{SliceCap, SliceRule};
    use crate::t;
    let mut parts = vec![match w.rule {
        SliceRule::Unsliced => t!("slice-unsliced"),
        SliceRule::Set { slices } => t!("slice-set", n = slices as u64),
        SliceRule::AutoProfile => t!("slice-auto-profile"),
        SliceRule::AutoHccl { buffer_bytes } => {
            t!("slice-auto-hccl", buffer = format_bytes(buffer_bytes))
        }
        SliceRule::AutoNccl {
            slices,
            slice_bytes,
            largest_bytes,
        } => t!(
            "slice-auto-nccl",
            n = slices as u64,
            slice = format_bytes(slice_bytes),
            steps = slice_bytes / crate::engine::cost::NCCL_STEP_BYTES,
            largest = format_bytes(largest_bytes)
        ),
    }];
    parts.extend(w.caps.iter().map(|c| match *c {
        SliceCap::Transfers {
            slices,
            transfers,
            budget,
        } => t!(
            "slice-cap-transfers",
            n = slices as u64,
            transfers = transfers as u64,
            budget = budget as u64
        ),
        SliceCap::FlowUpdates { slices, budget } => {
            t!("slice-cap-flow", n = slices as u64, budget = budget as u64)
        }
    }));
    match w.window {
        Some(1) => parts.push(t!("slice-window-hccl")),
        Some(w) => parts.push(t!("slice-window-nccl", w = w as u64)),
        None => {}
    }
    format!("{}{}", parts.join(&t!("slice-join")), t!("slice-end"))
}

/// Servers of a preset (8 devices each).
fn servers(name: &str) -> u64 {
    (crate::engine::topology::Topology::preset_devices(name).unwrap_or(0) / 8) as u64
}

/// A preset's title in the page's language; the engine's English title
/// where it is not a preset's own (a custom topology's, a profile's), marked
/// as English.
pub fn topology_title(t: &crate::engine::topology::Topology) -> yew::Html {
    use crate::t;
    let preset = crate::engine::topology::Topology::preset_title(&t.name);
    if preset.as_deref() != Some(t.title.as_str()) {
        return yew::html! { <span class="muted" lang="en">{t.title.clone()}</span> };
    }
    let title = match t.name.as_str() {
        "910b-8" => t!("topo-title-910b-8"),
        "910a-8" => t!("topo-title-910a-8"),
        "h100-8" => t!("topo-title-h100-8"),
        name => t!("topo-title-cluster", servers = servers(name)),
    };
    yew::html! { <span class="muted">{title}</span> }
}

/// A preset's short description for the topology list, in the page's
/// language.
pub fn topology_short(name: &str) -> String {
    use crate::t;
    match name {
        "910b-8" => t!("topo-short-910b-8"),
        "910a-8" => t!("topo-short-910a-8"),
        "h100-8" => t!("topo-short-h100-8"),
        n => t!("topo-short-cluster", servers = servers(n)),
    }
}
