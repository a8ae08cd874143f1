//! Everything the page derives from a [`Config`] without running workers:
//! topology preset -> algorithm (auto = [`select::select`]) -> schedule ->
//! symbolic verification -> cost estimate. Cheap (microseconds to a few
//! milliseconds), so it is recomputed on every control change.

use crate::engine::algorithm::{self, Algorithm};
use crate::engine::config::{AlgoChoice, Config};
use crate::engine::cost::{self, Estimate};
use crate::engine::schedule::Schedule;
use crate::engine::select::{self, Selection};
use crate::engine::topology::Topology;
use crate::engine::verify::{self, Verified};

/// Most ranks the page plans, draws and animates (the symbolic trace holds
/// steps × ranks × chunks sets).
pub const MAX_DRAWN_RANKS: usize = 64;

/// The model's view of one configuration.
#[derive(Debug)]
pub struct Plan {
    /// The configuration it was made from.
    pub config: Config,
    /// The topology preset.
    pub topology: Topology,
    /// Every applicable algorithm ranked by predicted time, with the reason.
    pub selection: Selection,
    /// The concrete algorithm run (the user's choice, or auto's).
    pub algorithm: Algorithm,
    /// The schedule of `algorithm`.
    pub schedule: Schedule,
    /// Its symbolic trace (`trace[s][rank][chunk]`).
    pub verified: Verified,
    /// The cost model's prediction for `schedule`.
    pub estimate: Estimate,
}

/// Two plans of the same configuration are the same plan.
impl PartialEq for Plan {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config
    }
}

impl Plan {
    /// Builds the plan of `config`.
    ///
    /// Errors: a sentence naming what failed (unknown topology, rank count,
    /// an algorithm that does not apply, a schedule that fails verification).
    pub fn new(config: &Config) -> Result<Plan, String> {
        let topology = Topology::preset(&config.topo).map_err(|e| e.to_string())?;
        if config.ranks > MAX_DRAWN_RANKS {
            return Err(format!(
                "{} ranks: the page draws and animates up to {MAX_DRAWN_RANKS} ranks; use `cclsim predict` for larger runs",
                config.ranks
            ));
        }
        let selection = select::select(
            config.op,
            &topology,
            config.ranks,
            config.bytes,
            config.dtype,
        )
        .map_err(|e| e.to_string())?;
        let algorithm = match config.algo {
            AlgoChoice::Auto => selection.chosen(),
            AlgoChoice::Fixed(a) => a,
        };
        let schedule =
            algorithm::build(algorithm, config.op, config.ranks).map_err(|e| e.to_string())?;
        let verified = verify::verify(&schedule)
            .map_err(|e| format!("the {algorithm} schedule failed symbolic verification: {e}"))?;
        let estimate = cost::estimate(&schedule, &topology, config.bytes, config.dtype)
            .map_err(|e| e.to_string())?;
        Ok(Plan {
            config: config.clone(),
            topology,
            selection,
            algorithm,
            schedule,
            verified,
            estimate,
        })
    }

    /// Number of steps.
    pub fn steps(&self) -> usize {
        self.schedule.steps.len()
    }

    /// Was the algorithm chosen by "auto"?
    pub fn auto(&self) -> bool {
        self.config.algo == AlgoChoice::Auto
    }
}
