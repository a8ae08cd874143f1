//! Drawing a heavy part of the page a few event-loop tasks after the page
//! first shows it, so that the first render of a many-rank page is
//! several tasks (issue 13: no main-thread task over 100 ms) rather than
//! one.

use yew::prelude::*;

/// Props of [`Deferred`].
#[derive(Properties, PartialEq)]
pub struct DeferredProps {
    /// Tasks to wait before drawing the part the first time (0: at once).
    pub tasks: u32,
    /// The part.
    pub children: Html,
}

/// Renders nothing for its first `tasks` event-loop tasks (each a
/// `setTimeout(0)` after the previous render), then its children, and
/// from then on always its children: a later plan is drawn in place, so
/// the part's own state (the Gantt chart's view, the step log's scroll)
/// is kept. Until then the page below it sits higher, for as long as the
/// tasks before take (at 64 ranks a few hundred ms).
#[function_component(Deferred)]
pub fn deferred(p: &DeferredProps) -> Html {
    let waited = use_state(|| 0u32);
    let so_far = *waited;
    {
        let waited = waited.clone();
        use_effect_with((so_far, p.tasks), move |&(so_far, tasks)| {
            let next = (so_far < tasks)
                .then(|| gloo_timers::callback::Timeout::new(0, move || waited.set(so_far + 1)));
            move || drop(next)
        });
    }
    if so_far >= p.tasks {
        p.children.clone()
    } else {
        html! {}
    }
}
