//! The large buffer grid (above 16 ranks or [`super::buffers::MAX_DOM_CELLS`]
//! cells: [`super::buffers`]' compact mode) painted on one `<canvas>`: a
//! row of `chunks` cells per rank, each filled with [`colors::cell`] of
//! what it holds, the marked step's receives outlined in the copy / reduce
//! colour and its sends inset in white, as the DOM cells of a small grid
//! are.
//!
//! At 64 ranks × 64 chunks a DOM grid is 4 096 elements, made a slice of
//! rows per task and re-diffed at every animation step (tasks over the
//! page's bound of 100 ms); the canvas is one element, repainted in
//! about a millisecond. What a cell holds is in words below the grid for
//! the cell under the pointer or the keyboard cursor (the canvas takes
//! focus; arrow keys, Home and End move the cursor), and in the grid's
//! text summary for screen readers.

use super::buffers::{cell_words, step_marks};
use super::colors;
use super::lang::use_lang;
use super::run::RunView;
use crate::engine::plan::Plan;
use crate::t;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use yew::prelude::*;

/// Height of a cell row in CSS pixels (the 9 px of a compact DOM cell).
pub const CELL_H: f64 = 9.0;
/// Gap between cells and rows in CSS pixels.
pub const GAP: f64 = 1.0;

/// Props of [`BufferCanvas`].
#[derive(Properties, PartialEq)]
pub struct BufferCanvasProps {
    /// The plan (its verified trace gives what each cell holds).
    pub plan: Rc<Plan>,
    /// The run (sampled values for the words).
    pub run: Rc<RunView>,
    /// Which state to show: after this many steps.
    pub shown: usize,
    /// The step whose transfers are marked (1-based; 0 = none).
    pub step: usize,
    /// A lesson's highlighted cell `(rank, chunk)`.
    pub look_cell: Option<(usize, usize)>,
}

/// The horizontal pitch (cell width plus gap) and gap, CSS px, of
/// `chunks` cells across `width`: a 1 px gap while cells stay at least
/// 2 px wide, none below (128 chunks on a phone's 300 px).
pub fn pitch_and_gap(width: f64, chunks: usize) -> (f64, f64) {
    let chunks = chunks.max(1) as f64;
    let pitch = (width + GAP) / chunks;
    if pitch >= 3.0 {
        (pitch, GAP)
    } else {
        (width / chunks, 0.0)
    }
}

/// Which cell of an `n × chunks` grid of canvas width `width` (CSS px)
/// the point `(x, y)` (CSS px from the canvas' top left) is on (the gap
/// after a cell counts as the cell): `None` outside.
pub fn cell_at(x: f64, y: f64, width: f64, n: usize, chunks: usize) -> Option<(usize, usize)> {
    if chunks == 0 || x < 0.0 || y < 0.0 {
        return None;
    }
    let (pitch_x, _) = pitch_and_gap(width, chunks);
    let (c, r) = (
        (x / pitch_x).floor() as usize,
        (y / (CELL_H + GAP)).floor() as usize,
    );
    (r < n && c < chunks).then_some((r, c))
}

/// The cursor moved by a key of a keyboard event (`None`: not a key that
/// moves it). From no cursor, any moving key starts at `(0, 0)`.
pub fn moved(
    key: &str,
    at: Option<(usize, usize)>,
    n: usize,
    chunks: usize,
) -> Option<(usize, usize)> {
    let Some((r, c)) = at else {
        return matches!(
            key,
            "ArrowUp" | "ArrowDown" | "ArrowLeft" | "ArrowRight" | "Home" | "End"
        )
        .then_some((0, 0));
    };
    Some(match key {
        "ArrowUp" => (r.saturating_sub(1), c),
        "ArrowDown" => ((r + 1).min(n.saturating_sub(1)), c),
        "ArrowLeft" => (r, c.saturating_sub(1)),
        "ArrowRight" => (r, (c + 1).min(chunks.saturating_sub(1))),
        "Home" => (r, 0),
        "End" => (r, chunks.saturating_sub(1)),
        _ => return None,
    })
}

/// The grid: the ranks' labels, the canvas and the words for the cell
/// under the cursor.
#[function_component(BufferCanvas)]
pub fn buffer_canvas(p: &BufferCanvasProps) -> Html {
    // Re-rendered (the words) when the language changes.
    let _lang = use_lang();
    let plan = &p.plan;
    let n = plan.config.ranks;
    let chunks = plan.drawn_schedule().chunks;
    let canvas = use_node_ref();
    let cursor = use_state(|| None::<(usize, usize)>);
    // A new plan (other ranks or chunks) starts without a cursor.
    {
        let cursor = cursor.clone();
        use_effect_with(Rc::as_ptr(plan) as usize, move |_| cursor.set(None));
    }
    // The canvas' own width (a window resize, a scrollbar, the page's
    // columns changing): repaint at the new size.
    let width_seen = use_state_eq(|| 0_i32);
    {
        let (canvas, width_seen) = (canvas.clone(), width_seen.clone());
        use_effect_with((), move |_| {
            let observed = canvas.clone();
            let on_resize = wasm_bindgen::closure::Closure::<dyn Fn(js_sys::Array)>::new(
                move |_: js_sys::Array| {
                    if let Some(el) = observed.cast::<web_sys::HtmlCanvasElement>() {
                        width_seen.set(el.client_width());
                    }
                },
            );
            let observer = web_sys::ResizeObserver::new(on_resize.as_ref().unchecked_ref()).ok();
            if let (Some(o), Some(el)) = (&observer, canvas_el(&canvas)) {
                o.observe(&el);
            }
            move || {
                if let Some(o) = observer {
                    o.disconnect();
                }
                drop(on_resize);
            }
        });
    }
    {
        let canvas = canvas.clone();
        let deps = (
            Rc::as_ptr(plan) as usize,
            p.shown,
            p.step,
            p.look_cell,
            *cursor,
            *width_seen,
        );
        let plan = plan.clone();
        use_effect_with(deps, move |(_, shown, step, look, cursor, _)| {
            if let Some(el) = canvas.cast::<web_sys::HtmlCanvasElement>() {
                paint(&el, &plan, *shown, *step, *look, *cursor);
            }
        });
    }
    let words = cursor.and_then(|(r, c)| cell_words(plan, &p.run, p.shown, p.step, r, c));
    let onmousemove = {
        let cursor = cursor.clone();
        Callback::from(move |e: MouseEvent| {
            let Some(el) = e
                .target()
                .and_then(|t| t.dyn_into::<web_sys::HtmlElement>().ok())
            else {
                return;
            };
            let at = cell_at(
                e.offset_x() as f64,
                e.offset_y() as f64,
                el.client_width() as f64,
                n,
                chunks,
            );
            if at.is_some() && at != *cursor {
                cursor.set(at);
            }
        })
    };
    let onkeydown = {
        let cursor = cursor.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.ctrl_key() || e.meta_key() || e.alt_key() {
                return;
            }
            if let Some(at) = moved(&e.key(), *cursor, n, chunks) {
                // Taken: the page's playback keys (the same arrows, Home
                // and End) leave a prevented key alone.
                e.prevent_default();
                cursor.set(Some(at));
            }
        })
    };
    // Focus shows a cursor at once: the lesson's cell, else the first.
    let onfocus = {
        let (cursor, look) = (cursor.clone(), p.look_cell);
        Callback::from(move |_: FocusEvent| {
            if cursor.is_none() {
                cursor.set(Some(look.unwrap_or((0, 0))));
            }
        })
    };
    // The pointer leaving takes its cursor along, unless the keyboard
    // holds it (the canvas has focus).
    let onmouseleave = {
        let (cursor, canvas) = (cursor.clone(), canvas.clone());
        Callback::from(move |_: MouseEvent| {
            let focused = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element())
                .zip(canvas_el(&canvas))
                .is_some_and(|(a, c)| a == c);
            if !focused {
                cursor.set(None);
            }
        })
    };
    let look_here = p.look_cell.is_some_and(|(r, c)| r < n && c < chunks);
    let height = format!("height:{}px", n as f64 * (CELL_H + GAP) - GAP);
    let labels = (0..n).map(|r| {
        html! {
            <div class="buf-label">
                <span class="swatch" style={format!("background:{}", colors::rank(r))}></span>
                {plan.topology.node_label(r).to_string()}
            </div>
        }
    });
    html! {
        <>
            <div class="buf-body">
                <div class="buf-labels" aria-hidden="true">{ for labels }</div>
                // A lesson's cell is outlined on the canvas; the canvas
                // itself carries `lesson-look` for "show me" to find.
                <canvas ref={canvas} id="buf-canvas" class={classes!("buf-canvas", look_here.then_some("lesson-look"))} style={height}
                    tabindex="0" role="img" aria-label={t!("buf-canvas-label", n = n, chunks = chunks)}
                    aria-describedby="buf-summary"
                    {onmousemove} {onkeydown} {onfocus} {onmouseleave}></canvas>
            </div>
            <p id="buf-cursor" class="buf-cursor muted" aria-live="polite">
                { words.unwrap_or_else(|| t!("buf-cursor-hint")) }
            </p>
        </>
    }
}

/// Paints the grid on `el` at the device's pixel ratio: `shown` steps
/// done, step `step` (1-based, 0 none) marked, a lesson's cell and the
/// cursor outlined. A canvas not laid out (width 0) is left as it is.
fn paint(
    el: &web_sys::HtmlCanvasElement,
    plan: &Plan,
    shown: usize,
    step: usize,
    look: Option<(usize, usize)>,
    cursor: Option<(usize, usize)>,
) {
    let Some(state) = plan.verified.as_ref().and_then(|v| v.trace.get(shown)) else {
        return;
    };
    let schedule = plan.drawn_schedule();
    let (n, chunks) = (plan.config.ranks, schedule.chunks);
    let css_w = el.client_width() as f64;
    if css_w <= 0.0 || chunks == 0 {
        return;
    }
    let css_h = n as f64 * (CELL_H + GAP) - GAP;
    let dpr = web_sys::window()
        .map(|w| w.device_pixel_ratio())
        .unwrap_or(1.0)
        .max(1.0);
    el.set_width((css_w * dpr).round() as u32);
    el.set_height((css_h * dpr).round() as u32);
    let Some(ctx) = el
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return;
    };
    let _ = ctx.set_transform(dpr, 0.0, 0.0, dpr, 0.0, 0.0);
    ctx.clear_rect(0.0, 0.0, css_w, css_h);
    let (pitch, gap) = pitch_and_gap(css_w, chunks);
    let cell_w = pitch - gap;
    let xy = |r: usize, c: usize| (c as f64 * pitch, r as f64 * (CELL_H + GAP));
    let marks = step_marks(plan, step);
    let done = shown == plan.steps();
    for (r, row) in state.iter().enumerate().take(n) {
        for (c, set) in row.iter().enumerate().take(chunks) {
            let (x, y) = xy(r, c);
            // Scratch blocks are faded once the collective is done.
            let scratch = done && schedule.expected_after(r, c).is_none();
            ctx.set_global_alpha(if scratch { 0.42 } else { 1.0 });
            match colors::cell(set, n) {
                Some((bg, _)) => ctx.set_fill_style_str(&bg),
                None => ctx.set_fill_style_str(colors::EMPTY),
            }
            ctx.fill_rect(x, y, cell_w, CELL_H);
            // A send: a white ring inside a dark one, as `.cell.send`
            // (seen on the light end of the ramp and on yellow too).
            if marks[r * chunks + c].send && cell_w >= 5.0 {
                ctx.set_line_width(1.0);
                ctx.set_stroke_style_str("rgba(0,0,0,0.35)");
                ctx.stroke_rect(x + 0.5, y + 0.5, cell_w - 1.0, CELL_H - 1.0);
                ctx.set_stroke_style_str("rgba(255,255,255,0.9)");
                ctx.stroke_rect(x + 1.5, y + 1.5, cell_w - 3.0, CELL_H - 3.0);
            }
        }
    }
    ctx.set_global_alpha(1.0);
    // Outlines last, over the neighbours' edges; on the grid's edge they
    // are kept inside the canvas.
    let outline = |r: usize, c: usize, colour: &str, w: f64| {
        let (x, y) = xy(r, c);
        let (x0, y0) = ((x - w / 2.0).max(w / 2.0), (y - w / 2.0).max(w / 2.0));
        let x1 = (x + cell_w + w / 2.0).min(css_w - w / 2.0);
        let y1 = (y + CELL_H + w / 2.0).min(css_h - w / 2.0);
        ctx.set_stroke_style_str(colour);
        ctx.set_line_width(w);
        ctx.stroke_rect(x0, y0, x1 - x0, y1 - y0);
    };
    for r in 0..n {
        for c in 0..chunks {
            let m = &marks[r * chunks + c];
            // Faded with a scratch cell; a copy over a reduce, as the
            // DOM grid's CSS order has it.
            let scratch = done && schedule.expected_after(r, c).is_none();
            ctx.set_global_alpha(if scratch { 0.42 } else { 1.0 });
            if m.copy {
                outline(r, c, colors::COPY, 1.0);
            } else if m.reduce {
                outline(r, c, colors::REDUCE, 1.0);
            }
        }
    }
    ctx.set_global_alpha(1.0);
    if let Some((r, c)) = look.filter(|&(r, c)| r < n && c < chunks) {
        outline(r, c, colors::LESSON, 3.0);
    }
    if let Some((r, c)) = cursor.filter(|&(r, c)| r < n && c < chunks) {
        outline(r, c, colors::CURSOR, 2.0);
    }
}

/// The canvas element of `node`, as an `Element`.
fn canvas_el(node: &NodeRef) -> Option<web_sys::Element> {
    node.cast::<web_sys::Element>()
}
