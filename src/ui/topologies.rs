//! The topologies the page offers (`#topo`) and the rank counts offered
//! for each (`#ranks`).

use crate::engine::calibrate::Profile;
use crate::engine::config::{Config, MEASURED};
use crate::engine::custom_topology::{CustomTopology, CUSTOM};
use crate::engine::topology::Topology;

/// Multi-server presets offered besides [`Topology::PRESETS`] (8x8: the
/// largest that runs for real, 64 ranks).
pub const CLUSTERS: [&str; 5] = [
    "910b-2x8",
    "910b-4x8",
    "910b-8x8",
    "910b-16x8",
    "910b-128x8",
];

/// Every offered topology: `(URL name, short description)`; `current`
/// (any valid preset name a link gave, e.g. `910b-32x8`) is listed too.
pub fn offered(current: &str) -> Vec<(String, String)> {
    let mut names: Vec<String> = Topology::PRESETS
        .iter()
        .chain(CLUSTERS.iter())
        .map(|n| n.to_string())
        .collect();
    if !names.iter().any(|n| n == current) && Topology::preset_devices(current).is_some() {
        names.push(current.to_string());
    }
    names
        .into_iter()
        .map(|n| {
            let text = format!("{n} — {}", super::format::topology_short(&n));
            (n, text)
        })
        .collect()
}

/// Rank counts offered on a topology of `devices` devices: every count up
/// to 16, then multiples of 8 up to 64, then powers of two (and
/// `devices`), plus `current` if it is none of these.
pub fn rank_choices(devices: usize, current: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (2..=devices.min(16)).collect();
    v.extend((24..=devices.min(64)).step_by(8));
    let mut p = 128;
    while p <= devices {
        v.push(p);
        p *= 2;
    }
    v.push(devices);
    if (2..=devices).contains(&current) {
        v.push(current);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// `c` on topology `name`: a run that used every device of the old
/// topology uses every device of the new one; otherwise the rank count is
/// kept (capped at the new device count).
/// `name` [`CUSTOM`] keeps the current custom topology (the list offers it
/// only while it is in use); a preset drops it. The root stays a rank.
///
/// Leaving the measured machine leaves its profile too: a fitted profile
/// belongs to the machine that was measured, not to another one's links.
pub fn with_topology(c: &Config, name: &str) -> Config {
    let mut next = c.clone();
    let old = c.devices().unwrap_or(8);
    if let Some(n) = Topology::preset_devices(name) {
        next.topo = name.to_string();
        next.custom = None;
        if c.topo == MEASURED {
            next.profile = None;
        }
        next.ranks = if c.ranks == old { n } else { c.ranks.min(n) };
        next.root = next.root.min(next.ranks - 1);
    }
    next
}

/// `c` on the user-defined topology `t` (`topo=custom`), rank count as in
/// [`with_topology`].
pub fn with_custom(c: &Config, t: CustomTopology) -> Config {
    let mut next = c.clone();
    let old = c.devices().unwrap_or(8);
    let n = t.devices.len();
    if c.topo == MEASURED {
        next.profile = None;
    }
    next.topo = CUSTOM.into();
    next.custom = Some(t);
    next.ranks = if c.ranks == old { n } else { c.ranks.min(n) };
    next.root = next.root.min(next.ranks - 1);
    next
}

/// `c` on the machine fitted profile `p` measured (`topo=measured`: its
/// nodes, its accelerators, its library), on the profile's rank count.
/// The link carries the profile without its rows (the model uses the
/// segments, knots and library fit only).
pub fn with_profile(c: &Config, p: &Profile) -> Config {
    let mut next = c.clone();
    next.topo = MEASURED.into();
    next.profile = Some(Profile {
        rows: Vec::new(),
        ..p.clone()
    });
    next.ranks = p.ranks;
    next.root = next.root.min(next.ranks - 1);
    next
}

/// `c` without its profile: back on `before`'s machine, rank count and
/// profile (the configuration from which [`with_profile`] was asked), or, for a
/// profile that came with a link, on the default topology with all its
/// devices. A profile applied to a preset's links (an older link's
/// `topo=910b-8&profile=`) is dropped from that preset.
pub fn without_profile(c: &Config, before: Option<&Config>) -> Config {
    let mut next = c.clone();
    next.profile = None;
    if c.topo != MEASURED {
        return next;
    }
    match before {
        Some(b) => {
            next.topo = b.topo.clone();
            next.custom = b.custom.clone();
            // The profile before, if any (another measured machine, or
            // an older link's profile on a preset).
            next.profile = b.profile.clone();
            next.ranks = b.ranks;
        }
        None => {
            let d = Config::default();
            next.topo = d.topo.clone();
            next.custom = None;
            next.ranks = d.default_ranks().unwrap_or(d.ranks);
        }
    }
    next.root = next.root.min(next.ranks - 1);
    next
}
