//! The topologies the page offers (`#topo`) and the rank counts offered
//! for each (`#ranks`).

use crate::engine::config::Config;
use crate::engine::topology::Topology;

/// Multi-server presets offered besides [`Topology::PRESETS`].
pub const CLUSTERS: [&str; 4] = ["910b-2x8", "910b-4x8", "910b-16x8", "910b-128x8"];

/// Every offered topology: `(URL name, short description)`.
pub fn offered() -> Vec<(&'static str, String)> {
    Topology::PRESETS
        .iter()
        .chain(CLUSTERS.iter())
        .map(|n| {
            let d = Topology::preset(n).map(|t| t.devices.len()).unwrap_or(0);
            let what = match *n {
                "910b-8" => "8× Ascend 910B, HCCS mesh".to_string(),
                "910a-8" => "8× Ascend 910, 2 HCCS groups + PCIe".to_string(),
                "h100-8" => "8× H100, NVSwitch".to_string(),
                _ => format!("{} servers × 8 910B, RoCE", d / 8),
            };
            (*n, format!("{n} — {what}"))
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
pub fn with_topology(c: &Config, name: &str) -> Config {
    let mut next = c.clone();
    let old = Topology::preset(&c.topo)
        .map(|t| t.devices.len())
        .unwrap_or(8);
    if let Ok(t) = Topology::preset(name) {
        let n = t.devices.len();
        next.topo = name.to_string();
        next.ranks = if c.ranks == old { n } else { c.ranks.min(n) };
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices() {
        assert_eq!(rank_choices(8, 8), (2..=8).collect::<Vec<_>>());
        let big = rank_choices(1024, 1024);
        assert!(big.contains(&16) && big.contains(&64) && big.contains(&1024));
        assert!(!big.contains(&17) && big.contains(&128));
        assert!(rank_choices(1024, 100).contains(&100));
    }
}
