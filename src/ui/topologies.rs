//! The topologies the page offers (`#topo`) and the rank counts offered
//! for each (`#ranks`).

use crate::engine::config::Config;
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
            let d = Topology::preset_devices(&n).unwrap_or(0);
            let what = match n.as_str() {
                "910b-8" => "8× Ascend 910B, HCCS mesh".to_string(),
                "910a-8" => "8× Ascend 910, 2 HCCS groups + PCIe".to_string(),
                "h100-8" => "8× H100, NVSwitch".to_string(),
                _ => format!("{} servers × 8 910B, RoCE", d / 8),
            };
            let text = format!("{n} — {what}");
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
pub fn with_topology(c: &Config, name: &str) -> Config {
    let mut next = c.clone();
    let old = c.devices().unwrap_or(8);
    if let Some(n) = Topology::preset_devices(name) {
        next.topo = name.to_string();
        next.custom = None;
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
    next.topo = CUSTOM.into();
    next.custom = Some(t);
    next.ranks = if c.ranks == old { n } else { c.ranks.min(n) };
    next.root = next.root.min(next.ranks - 1);
    next
}
