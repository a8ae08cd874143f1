//! The playback clock's frames: `requestAnimationFrame` ([`Frames`]) and
//! the one value that changes every frame, the current step's progress
//! ([`Clock`], a yew context).
//!
//! The App owns the playback state (step, playing, speed) and advances it
//! once per frame, but re-renders only when something step-dependent
//! changes (the step, the step reaching its end state, play / pause). The
//! progress itself goes into the [`Clock`]: only the components that move
//! read it with [`use_progress`] (the topology's tokens, the Gantt
//! cursor, the step clock's model time), and a frame re-renders only
//! them.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// The App's `requestAnimationFrame` loop: one callback, made once and
/// kept for the page's life (a closure freed from inside its own call
/// would be a use after free), asked for one frame at a time.
pub struct Frames {
    /// The id of the frame asked for, until it runs.
    pending: Rc<Cell<Option<i32>>>,
    closure: Closure<dyn FnMut(f64)>,
}

impl Frames {
    /// `on_frame` is called with each frame's timestamp (ms, the
    /// `performance.now()` clock) asked for with [`Frames::request`].
    pub fn new(mut on_frame: impl FnMut(f64) + 'static) -> Frames {
        let pending = Rc::new(Cell::new(None));
        let ran = pending.clone();
        let closure = Closure::<dyn FnMut(f64)>::new(move |ts: f64| {
            ran.set(None);
            on_frame(ts)
        });
        Frames { pending, closure }
    }

    /// Asks for the next frame (once, however often it is asked).
    pub fn request(&self) {
        if self.pending.get().is_some() {
            return;
        }
        let id = web_sys::window().and_then(|w| {
            w.request_animation_frame(self.closure.as_ref().unchecked_ref())
                .ok()
        });
        self.pending.set(id);
    }

    /// Cancels the frame asked for, if any.
    pub fn cancel(&self) {
        if let (Some(id), Some(w)) = (self.pending.take(), web_sys::window()) {
            let _ = w.cancel_animation_frame(id);
        }
    }

    /// A frame is asked for.
    pub fn running(&self) -> bool {
        self.pending.get().is_some()
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// `performance.now()`, ms (the clock of a [`Frame`]'s timestamp).
pub fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or_else(js_sys::Date::now, |p| p.now())
}

#[derive(Default)]
struct Inner {
    /// Progress of the current step, 0..=1.
    t: Cell<f64>,
    subscribers: RefCell<Vec<(u64, Callback<()>)>>,
    next_id: Cell<u64>,
}

/// The current step's progress (0..=1), shared by the App (which sets it
/// every frame) and the moving components (which [`use_progress`]). The
/// handle never changes, so providing it never re-renders anything; a
/// [`Clock::set`] to a new value re-renders the subscribers only.
#[derive(Clone, Default)]
pub struct Clock(Rc<Inner>);

impl PartialEq for Clock {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

impl Clock {
    /// A clock at progress `t`.
    pub fn new(t: f64) -> Clock {
        let c = Clock::default();
        c.0.t.set(t);
        c
    }

    /// The current progress, 0..=1.
    pub fn get(&self) -> f64 {
        self.0.t.get()
    }

    /// Sets the progress; re-renders the subscribers if it changed.
    pub fn set(&self, t: f64) {
        if self.0.t.get() == t {
            return;
        }
        self.0.t.set(t);
        // A subscriber's re-render may (un)subscribe: emit from a copy.
        let subs: Vec<Callback<()>> = self
            .0
            .subscribers
            .borrow()
            .iter()
            .map(|(_, c)| c.clone())
            .collect();
        for c in subs {
            c.emit(());
        }
    }

    fn subscribe(&self, cb: Callback<()>) -> u64 {
        let id = self.0.next_id.get();
        self.0.next_id.set(id + 1);
        self.0.subscribers.borrow_mut().push((id, cb));
        id
    }

    fn unsubscribe(&self, id: u64) {
        self.0.subscribers.borrow_mut().retain(|(i, _)| *i != id);
    }
}

/// The current step's progress (0..=1) from the [`Clock`] context; the
/// calling component re-renders whenever it changes (every animation
/// frame while a step moves). Without a clock: 1 (the step's end state).
#[hook]
pub fn use_progress() -> f64 {
    let clock = use_context::<Clock>();
    let update = use_force_update();
    {
        let clock = clock.clone();
        use_effect_with((), move |_| {
            let id = clock
                .as_ref()
                .map(|c| c.subscribe(Callback::from(move |_| update.force_update())));
            move || {
                if let (Some(c), Some(id)) = (clock, id) {
                    c.unsubscribe(id)
                }
            }
        });
    }
    clock.map_or(1.0, |c| c.get())
}
