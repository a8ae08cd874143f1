//! Drawing heavy parts of the page over several event-loop tasks, so that
//! the first render of a many-rank page is several tasks (the page's
//! bound: no main-thread task over 100 ms) rather than one: a part that comes a few
//! tasks later ([`Deferred`]) and a list drawn a slice per task
//! ([`use_drawn_in_tasks`]; [`Sliced`] and [`use_drawn_pieces`] for lists
//! of groups cut into pieces: the Gantt chart's and the step log's steps,
//! the topology's collapsed servers), and words made when an item is hovered rather than drawn with
//! it ([`hovered`]: the step log's chip titles, the Gantt bars' tooltips).
//! Work that would compete with the drawing for the CPU waits until the
//! page is idle ([`when_idle`]: a run's workers).

use yew::prelude::*;

/// How many of `total` items to draw: `per_task` when `key` is new, then
/// `per_task` more in each later event-loop task (a `setTimeout(0)` after
/// the render) until all `total` are drawn, and all of them from then on
/// until `key` changes. `per_task >= total` draws everything at once.
///
/// Key the drawn items (`key={i}`). Yew reconciles an unkeyed list from
/// its end (`BList::apply_unkeyed` zips the old children, stored last
/// first, with the new ones reversed), so with `s` items added at the
/// end, drawn item `j` took item `j + s`'s props: each slice re-rendered
/// and re-patched all the items before it. At 64 ranks that made the
/// Gantt chart's and the step log's last slices tasks of 80–120 ms (a
/// trace counted 256–960 `x`/`width`/`fill` patches per slice); keyed, a
/// slice only adds its own items.
#[hook]
pub fn use_drawn_in_tasks<K>(key: K, total: usize, per_task: usize) -> usize
where
    K: PartialEq + Clone + 'static,
{
    let per_task = per_task.max(1);
    let drawn = use_state(|| None::<(K, usize)>);
    let limit = match &*drawn {
        Some((k, d)) if *k == key => *d,
        _ => per_task,
    }
    .min(total);
    {
        let drawn = drawn.clone();
        use_effect_with((key, limit, total, per_task), move |deps| {
            let (key, limit, total, per_task) = deps.clone();
            let more = (limit < total).then(|| {
                gloo_timers::callback::Timeout::new(0, move || {
                    drawn.set(Some((key, (limit + per_task).min(total))))
                })
            });
            move || drop(more)
        });
    }
    limit
}

/// A piece of a list drawn over tasks ([`Sliced`]): items `items` of
/// group `group` (a range of the Gantt chart's bars of one step, of the
/// step log's transfer chips of one step).
#[derive(Clone, Debug, PartialEq)]
pub struct Piece {
    /// The group (a step).
    pub group: usize,
    /// Its items in this piece, indices into the group's items.
    pub items: std::ops::Range<usize>,
}

/// A list of groups of items (steps of bars, steps of chips) cut for
/// drawing a task at a time ([`use_drawn_in_tasks`]): each group into
/// pieces of at most `budget` items, the pieces packed in order into tasks
/// of at most `budget` items (a piece never splits across tasks; an empty
/// group is one empty piece, so a step without transfers keeps its place).
///
/// Groups had been the unit: at 64 ranks a mesh step has 4 032
/// transfers, and drawing it (4 032 bars, 4 032 chips) in one task took
/// 300–600 ms.
#[derive(Debug, PartialEq)]
pub struct Sliced {
    /// The pieces, in group order.
    pub pieces: Vec<Piece>,
    /// After task `t`, the first `ends[t]` pieces are drawn (`ends` is
    /// increasing; its last is `pieces.len()`; empty for no pieces).
    pub ends: Vec<usize>,
}

impl Sliced {
    /// Cuts groups of `sizes` items each (a `budget` of 0 counts as 1).
    pub fn of(sizes: impl IntoIterator<Item = usize>, budget: usize) -> Sliced {
        let budget = budget.max(1);
        let mut pieces = Vec::new();
        for (group, size) in sizes.into_iter().enumerate() {
            let mut from = 0;
            loop {
                let to = (from + budget).min(size);
                pieces.push(Piece {
                    group,
                    items: from..to,
                });
                from = to;
                if from >= size {
                    break;
                }
            }
        }
        let mut ends = Vec::new();
        let mut in_task = 0;
        for (i, piece) in pieces.iter().enumerate() {
            let len = piece.items.len();
            if i > 0 && in_task + len > budget {
                ends.push(i);
                in_task = 0;
            }
            in_task += len;
        }
        if !pieces.is_empty() {
            ends.push(pieces.len());
        }
        Sliced { pieces, ends }
    }

    /// How many pieces are drawn after `tasks` tasks (all after as many
    /// tasks as [`Sliced::ends`] has).
    pub fn drawn(&self, tasks: usize) -> usize {
        match tasks.checked_sub(1) {
            None => 0,
            Some(t) => self.ends.get(t).or(self.ends.last()).copied().unwrap_or(0),
        }
    }
}

/// Draws `sliced`'s pieces a task at a time ([`use_drawn_in_tasks`]: the
/// first task's pieces at once, one more task's in each later event-loop
/// task, all of them from then on until `key` changes): the pieces to draw
/// now.
#[hook]
pub fn use_drawn_pieces<K>(key: K, sliced: &Sliced) -> &[Piece]
where
    K: PartialEq + Clone + 'static,
{
    let tasks = use_drawn_in_tasks(key, sliced.ends.len(), 1);
    &sliced.pieces[..sliced.drawn(tasks)]
}

/// Props of [`Deferred`].
#[derive(Properties, PartialEq)]
pub struct DeferredProps {
    /// Tasks to wait before drawing the part the first time (0: at once).
    pub tasks: u32,
    /// The part.
    pub children: Html,
    /// Called once after the part is first drawn (the App marks a lesson's
    /// highlighted card, which may be inside it).
    #[prop_or_default]
    pub on_drawn: Option<Callback<()>>,
}

/// Renders nothing for its first `tasks` event-loop tasks, then its
/// children, and from then on always its children: a later plan is drawn
/// in place, so the part's own state (the Gantt chart's view, the step
/// log's scroll) is kept. Until then the page below it sits higher, for
/// as long as the tasks before take (at 64 ranks a few hundred ms).
#[function_component(Deferred)]
pub fn deferred(p: &DeferredProps) -> Html {
    // One "item" per task waited, plus the part itself.
    let total = p.tasks as usize + 1;
    // Once drawn, always drawn: a later, larger `tasks` (the topology's
    // wait above 16 ranks, after a page of 8) must not hide the part again.
    let was_drawn = use_mut_ref(|| false);
    let waited = use_drawn_in_tasks((), total, 1) >= total;
    let drawn = waited || *was_drawn.borrow();
    *was_drawn.borrow_mut() = drawn;
    {
        let on_drawn = p.on_drawn.clone();
        use_effect_with(drawn, move |drawn| {
            if let (true, Some(cb)) = (*drawn, on_drawn) {
                cb.emit(());
            }
        });
    }
    if drawn {
        p.children.clone()
    } else {
        html! {}
    }
}

/// The element `e` happened on, if `is` accepts it, and its place among
/// its element siblings (0 for the first): the item a tooltip made on
/// hover is for, where an item's place in its list is its index.
pub fn hovered(
    e: &MouseEvent,
    is: impl Fn(&web_sys::Element) -> bool,
) -> Option<(web_sys::Element, usize)> {
    use wasm_bindgen::JsCast;
    let el = e
        .target()?
        .dyn_into::<web_sys::Element>()
        .ok()
        .filter(|el| is(el))?;
    let mut k = 0;
    let mut prev = el.previous_element_sibling();
    while let Some(p) = prev {
        k += 1;
        prev = p.previous_element_sibling();
    }
    Some((el, k))
}

/// Calls `f` once the page is idle (`requestIdleCallback`: the browser has
/// no task queued before its next frame), and after `timeout_ms` at the
/// latest; where the browser has no `requestIdleCallback`, after a
/// `setTimeout(0)`. Not cancellable: `f` checks whether it is still
/// wanted.
///
/// Why: a run's workers are threads that compute flat out. On a 2-core
/// machine, 4 workers started while a 64-rank page was still drawing its
/// slices left the page's main thread 8–42 ms of CPU in tasks of
/// 60–107 ms of wall time (traces, each task's thread time against its
/// duration): the tasks the `longtask` bound counts were long because
/// the main thread waited for a core.
pub fn when_idle(timeout_ms: u32, f: impl FnOnce() + 'static) {
    use wasm_bindgen::JsCast;
    let callback = wasm_bindgen::closure::Closure::once_into_js(f);
    let callback: &js_sys::Function = callback.unchecked_ref();
    let Some(window) = web_sys::window() else {
        return;
    };
    let options = web_sys::IdleRequestOptions::new();
    options.set_timeout(timeout_ms);
    // Where the browser has none, the call throws, caught as an `Err`.
    let idle = window.request_idle_callback_with_options(callback, &options);
    if idle.is_err() {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(callback, 0);
    }
}
