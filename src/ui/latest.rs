//! The page's configuration as of now, for the controls' callbacks.
//!
//! A control builds the next configuration from the current one and one
//! changed field. The App does not always re-render at once after a
//! change: while a model-only plan is made in the planner worker it waits
//! up to [`STALE_MS`](super::app::STALE_MS) for the answer and renders once,
//! with it (a render in between would be a whole page of 1024 ranks to
//! diff and lay out, on the cores the planner needs). Until then the
//! controls' props are the configuration before the change, so a callback
//! that started from its props would undo a change made in that window
//! (the size slider, then `#algo`, 30 ms apart). [`Latest`] is the App's
//! configuration itself, shared through a context: a callback reads it
//! when it fires.

use crate::engine::config::Config;
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// The App's configuration of the moment (cheap to clone; equal to its
/// clones only, so it can be a yew context).
#[derive(Clone, Default)]
pub struct Latest(Rc<RefCell<Config>>);

impl PartialEq for Latest {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Latest {
    /// A handle holding `config`.
    pub fn new(config: Config) -> Latest {
        Latest(Rc::new(RefCell::new(config)))
    }

    /// The configuration now (a copy).
    pub fn get(&self) -> Config {
        self.0.borrow().clone()
    }

    /// Makes `config` the configuration now, when it differs.
    pub fn set(&self, config: &Config) {
        if *self.0.borrow() != *config {
            *self.0.borrow_mut() = config.clone();
        }
    }
}

/// The handle a control's callbacks start from: the App's [`Latest`]
/// context, or (a control drawn outside the App, in a test) a handle on
/// `drawn`, the configuration its props carry.
#[hook]
pub fn use_latest(drawn: &Config) -> Latest {
    let shared = use_context::<Latest>();
    let own = use_memo(drawn.clone(), |c| Latest::new(c.clone()));
    shared.unwrap_or_else(|| (*own).clone())
}
