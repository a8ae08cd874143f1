//! Play / pause / step / speed, the modelled timeline as a clickable bar,
//! and the current step in words.

use super::describe;
use super::format;
use crate::engine::plan::Plan;
use std::rc::Rc;
use yew::prelude::*;

/// Speeds offered (× the base pace of 1.4 s per step).
pub const SPEEDS: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];

/// Props of [`Playback`].
#[derive(Properties, PartialEq)]
pub struct PlaybackProps {
    /// The plan played.
    pub plan: Rc<Plan>,
    /// Current step, 1-based (0 = initial state).
    pub step: usize,
    /// Progress of the current step, 0..=1.
    pub t: f64,
    /// Playing?
    pub playing: bool,
    /// Speed factor.
    pub speed: f64,
    /// Go to a step (0 = initial state).
    pub on_goto: Callback<usize>,
    /// Play.
    pub on_play: Callback<()>,
    /// Pause.
    pub on_pause: Callback<()>,
    /// One step forward (animated).
    pub on_forward: Callback<()>,
    /// One step back.
    pub on_back: Callback<()>,
    /// New speed.
    pub on_speed: Callback<f64>,
}

/// Modelled time at `step` with progress `t` of that step, µs.
pub fn model_time(plan: &Plan, step: usize, t: f64) -> f64 {
    if step == 0 {
        return 0.0;
    }
    let s = &plan.estimate.timeline.steps[step - 1];
    s.start_us + (s.end_us - s.start_us) * t.clamp(0.0, 1.0)
}

/// The playback bar and the step description.
#[function_component(Playback)]
pub fn playback(p: &PlaybackProps) -> Html {
    let plan = &p.plan;
    let total = plan.steps();
    let now = model_time(plan, p.step, p.t);
    // The steps cover one buffer loop (HCCL_BUFFSIZE); the bar is that loop.
    let end = plan.loop_us();
    let loops = plan.loops();
    let text = describe::step_text(plan, p.step);
    let emit = |cb: &Callback<()>| {
        let cb = cb.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let goto = |k: usize| {
        let cb = p.on_goto.clone();
        Callback::from(move |_: MouseEvent| cb.emit(k))
    };
    let on_speed = {
        let cb = p.on_speed.clone();
        Callback::from(move |e: Event| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlSelectElement>()
                .value();
            cb.emit(v.parse().unwrap_or(1.0));
        })
    };
    let segments = plan.estimate.timeline.steps.iter().enumerate().map(|(i, s)| {
        let w = if end > 0.0 { (s.end_us - s.start_us) / end * 100.0 } else { 100.0 / total.max(1) as f64 };
        let k = i + 1;
        let class = classes!(
            "seg",
            (k == p.step).then_some("current"),
            (k < p.step).then_some("done"),
            plan.drawn_schedule().steps[i].phase.to_ascii_lowercase()
        );
        html! {
            <button class={class} style={format!("flex:{w:.4} 1 0")} onclick={goto(k)}
                title={format!("Step {k}: {} · {}–{} µs", plan.drawn_schedule().steps[i].phase, format::us(s.start_us), format::us(s.end_us))}
                aria-label={format!("Go to step {k}")}>
            </button>
        }
    });
    let status = if p.step == 0 {
        "Initial state".to_string()
    } else {
        format!("Step {} of {total}", p.step)
    };
    html! {
        <div class="playback">
            <div class="player-bar">
                <div class="buttons" title="Keys: Space play/pause · ←/→ one step · Home/End">
                    <button id="btn-first" class="icon" onclick={goto(0)} title="Back to the initial state" aria-label="Back to the initial state" disabled={p.step == 0}>{"⇤"}</button>
                    <button id="btn-back" class="icon" onclick={emit(&p.on_back)} title="One step back" aria-label="One step back" disabled={p.step == 0}>{"◀ Step"}</button>
                    if p.playing {
                        <button id="btn-play" class="icon primary" onclick={emit(&p.on_pause)} title="Pause" aria-label="Pause" data-playing="true">{"❚❚ Pause"}</button>
                    } else {
                        <button id="btn-play" class="icon primary" onclick={emit(&p.on_play)} title="Play" aria-label="Play" data-playing="false">{"▶ Play"}</button>
                    }
                    <button id="btn-forward" class="icon" onclick={emit(&p.on_forward)} title="One step forward" aria-label="One step forward" disabled={p.step >= total}>{"Step ▶"}</button>
                    <button id="btn-last" class="icon" onclick={goto(total)} title="Jump to the end" aria-label="Jump to the end" disabled={p.step >= total}>{"⇥"}</button>
                </div>
                <label class="speed">{"Speed "}
                    <select id="speed" onchange={on_speed}>
                        { for SPEEDS.iter().map(|s| html! {
                            <option value={s.to_string()} selected={(*s - p.speed).abs() < 1e-9}>{format!("{s}×")}</option>
                        }) }
                    </select>
                </label>
                <div class="clock" id="step-clock" data-step={p.step.to_string()} data-steps={total.to_string()}>
                    <span class="step-count">{status}</span>
                    <span class="t">{format!("t = {} µs", format::us(now))}</span>
                    if loops > 1 {
                        <span class="muted loop-note" id="loop-note" data-loops={loops.to_string()}
                            title={format!("Messages above HCCL_BUFFSIZE run in {loops} back-to-back loops of {}; the steps shown are one loop", crate::engine::units::format_bytes(plan.estimate.timeline.loop_bytes))}>
                            {format!("of {} µs · loop 1 of {loops} shown · all {loops} loops: {} µs", format::us(end), format::us(plan.estimate.time_us))}
                        </span>
                    } else {
                        <span class="muted">{format!("of {} µs modelled", format::us(end))}</span>
                    }
                </div>
            </div>
            <div class="timeline-bar" aria-label="Modelled timeline: one segment per step, width = modelled duration">
                { for segments }
            </div>
            <div id="step-description" class="step-description" aria-live="polite">
                <p class="heading">{text.heading}</p>
                <ul>{ for text.sentences.into_iter().map(|s| html! { <li>{s}</li> }) }</ul>
            </div>
        </div>
    }
}
