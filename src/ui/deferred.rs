//! Drawing a heavy part of the page one event-loop task later, so that
//! the first render of a many-rank page is several tasks of the budget
//! (issue 13: no main-thread task over 100 ms) rather than one.

use yew::prelude::*;

/// Props of [`Deferred`].
#[derive(Properties, PartialEq)]
pub struct DeferredProps {
    /// What is drawn; a new `key_id` (a new plan) defers it again.
    pub key_id: usize,
    /// Tasks to wait before drawing (0: draw at once).
    pub tasks: u32,
    /// The part.
    pub children: Html,
}

/// Renders its children `tasks` event-loop tasks after `key_id` first
/// appears (each task a `setTimeout(0)`), and at once after that until
/// `key_id` changes. Before, nothing (the page below moves up meanwhile:
/// a few tens of ms).
#[function_component(Deferred)]
pub fn deferred(p: &DeferredProps) -> Html {
    // (key_id, tasks waited so far).
    let waited = use_state(|| (usize::MAX, 0u32));
    let so_far = if waited.0 == p.key_id { waited.1 } else { 0 };
    {
        let waited = waited.clone();
        use_effect_with((p.key_id, so_far, p.tasks), move |&(key, so_far, tasks)| {
            let next = (so_far < tasks).then(|| {
                gloo_timers::callback::Timeout::new(0, move || waited.set((key, so_far + 1)))
            });
            move || drop(next)
        });
    }
    if so_far >= p.tasks {
        p.children.clone()
    } else {
        html! {}
    }
}
