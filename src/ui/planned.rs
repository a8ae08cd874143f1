//! The cards' way to the planner worker ([`Planner`], a context the app
//! provides): [`use_planned`] asks a job when its key changes and gives the
//! answer for the current key, so the engine's slow answers (the chart's
//! sweep, the tuning text, the determinism comparison) never run in a
//! render on the main thread.

use crate::engine::config::Config;
use crate::runtime::browser::planner::Planner;
use crate::runtime::planner::{Answer, Job};
use std::rc::Rc;
use yew::prelude::*;

/// The planner worker's last answer to `ask` for `key`: `None` while it
/// is being made (the card says so), then the answer (or the job's error).
/// `ask` is asked when `key` changes (a newer job of the same lane
/// replaces an older one in the worker); `None` asks nothing. An answer
/// that comes for an older key is never shown.
#[hook]
pub fn use_planned<K>(key: K, ask: Option<(Config, Job)>) -> Option<Rc<Result<Answer, String>>>
where
    K: PartialEq + Clone + 'static,
{
    let planner = use_context::<Planner>();
    let answered = use_state(|| None::<(K, Rc<Result<Answer, String>>)>);
    {
        let answered = answered.clone();
        use_effect_with(key.clone(), move |key| {
            if let (Some(planner), Some((config, job))) = (planner, ask) {
                let k = key.clone();
                planner.ask(&config, job, move |r| {
                    if r.last {
                        answered.set(Some((k.clone(), Rc::new(r.answer))));
                    }
                });
            }
        });
    }
    answered
        .as_ref()
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| v.clone())
}
