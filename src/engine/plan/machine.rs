//! Stage 1, the machine: the preset, the user's custom topology or the
//! measured machine of a fitted profile, with its faults applied.

use super::PlanError;
use crate::engine::config::Config;
use crate::engine::config::MEASURED;
use crate::engine::topology::Topology;

/// The machine of `config` at its message size: the preset, the custom
/// topology or the measured machine (`topo=measured`, a star of the
/// profile's rank count), with the profile's link figures if a profile is
/// in use ([`Profile::apply_at`] / [`Profile::topology_at`]); its library is
/// the profile's when there is one.
///
/// With slow ranks or failed links ([`Config::faults`]) the machine is the
/// degraded one ([`super::degrade::Degradation::apply`]): everything the
/// plan estimates and ranks, it estimates on that machine.
///
/// Errors: [`PlanError::Machine`] (also a `down` link that does not exist,
/// or a rank with no route left).
pub fn machine(config: &Config) -> Result<Topology, PlanError> {
    let t = healthy_machine(config)?;
    config
        .faults
        .apply(&t, config.ranks)
        .map_err(PlanError::Machine)
}

/// Do `a` and `b` make the same [`machine`]? Its inputs: the preset or
/// custom topology, the fitted profile (whose link figures depend on the
/// message size), the degradation and the rank count. The page keeps the
/// machine of its previous plan when the next one is the same
/// ([`crate::runtime::planner::Carried::arrive`]): at 1024 ranks making
/// it again was 4.5 ms of the task that shows a new estimate.
pub fn same_machine(a: &Config, b: &Config) -> bool {
    a.topo == b.topo
        && a.custom == b.custom
        && a.profile == b.profile
        && a.faults == b.faults
        && a.ranks == b.ranks
        && (a.profile.is_none() || a.bytes == b.bytes)
}

/// [`machine`] without the degradation.
pub(super) fn healthy_machine(config: &Config) -> Result<Topology, PlanError> {
    let m = |e: String| PlanError::Machine(e);
    let mut t = if config.topo == MEASURED {
        let p = config
            .profile
            .as_ref()
            .ok_or_else(|| m("topo=measured needs a fitted profile (profile=...)".into()))?;
        let most = crate::engine::config::MAX_PROFILE_RANKS;
        if config.ranks > most || p.ranks > most {
            return Err(m(format!(
                "the measured machine is modelled up to {most} ranks ({} asked, the profile measured {})",
                config.ranks, p.ranks
            )));
        }
        let mut q = p.clone();
        q.ranks = q.ranks.max(config.ranks);
        let mut t = q.topology_at(config.bytes);
        if let Some(cal) = &p.physical {
            // The measured machine's nodes, so that the library's rule and
            // the drawing see them.
            let g = cal.hardware.gpus_per_node.max(1);
            for (r, d) in t.devices.iter_mut().enumerate() {
                d.server = r / g;
            }
            t.hardware = Some(cal.hardware.clone());
        }
        // The link figures of the measured rank count.
        let (lat, bw) = p.link_params_at(config.bytes);
        for l in &mut t.links {
            l.bandwidth_gbps = bw;
            l.latency_us = lat / 2.0;
        }
        t
    } else {
        let base = config.topology().map_err(m)?;
        match &config.profile {
            Some(p) => {
                let mut t = p
                    .apply_at(&base, config.bytes)
                    .map_err(|e| m(e.to_string()))?;
                t.library = p.library();
                t
            }
            None => base,
        }
    };
    if let Some(p) = &config.profile {
        t.library = p.library();
    }
    t.check_ranks(config.ranks).map_err(|e| m(e.to_string()))?;
    Ok(t)
}
