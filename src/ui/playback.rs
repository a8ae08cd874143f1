//! Play / pause / step / speed, the modelled timeline as a clickable bar,
//! and the current step in words.

use super::describe;
use super::format;
use super::lang::use_lang;
use super::motion::use_progress;
use crate::engine::plan::Plan;
use crate::t;
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

/// Props of [`StepTime`].
#[derive(Properties, PartialEq)]
pub struct StepTimeProps {
    /// The plan played.
    pub plan: Rc<Plan>,
    /// Current step, 1-based (0 = initial state).
    pub step: usize,
}

/// The step clock's model time: the one part of the playback bar that
/// changes every frame ([`use_progress`]).
#[function_component(StepTime)]
pub fn step_time(p: &StepTimeProps) -> Html {
    let t = use_progress();
    let now = model_time(&p.plan, p.step, t);
    html! { <span class="t">{format!("t = {} µs", format::us(now))}</span> }
}

/// The playback bar and the step description.
#[function_component(Playback)]
pub fn playback(p: &PlaybackProps) -> Html {
    let _lang = use_lang();
    let plan = &p.plan;
    let total = plan.steps();
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
    // The scrubber: a native range input, so arrows, Page Up/Down, Home
    // and End work on it without a mouse.
    let on_scrub = {
        let cb = p.on_goto.clone();
        Callback::from(move |e: InputEvent| {
            let v = e
                .target_unchecked_into::<web_sys::HtmlInputElement>()
                .value();
            if let Ok(k) = v.parse::<usize>() {
                cb.emit(k);
            }
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
            <button class={class} style={format!("flex:{w:.4} 1 0")} onclick={goto(k)} tabindex="-1"
                title={t!("seg-title", k = k, phase = describe::phase_words(&plan.drawn_schedule().steps[i].phase), from = format::us(s.start_us), to = format::us(s.end_us))}
                aria-label={t!("seg-label", k = k)}>
            </button>
        }
    });
    let status = if p.step == 0 {
        t!("initial-state")
    } else {
        t!("step-of", step = p.step, total = total)
    };
    html! {
        <div class="playback">
            <div class="player-bar">
                <div class="buttons" title={t!("keys-hint")}>
                    <button id="btn-first" class="icon" onclick={goto(0)} title={t!("btn-first")} aria-label={t!("btn-first")} disabled={p.step == 0}>{"⇤"}</button>
                    <button id="btn-back" class="icon" onclick={emit(&p.on_back)} title={t!("btn-back")} disabled={p.step == 0}>{t!("btn-back-text")}</button>
                    if p.playing {
                        <button id="btn-play" class="icon primary" onclick={emit(&p.on_pause)} title={t!("btn-pause")} data-playing="true">{t!("btn-pause-text")}</button>
                    } else {
                        <button id="btn-play" class="icon primary" onclick={emit(&p.on_play)} title={t!("btn-play")} data-playing="false">{t!("btn-play-text")}</button>
                    }
                    <button id="btn-forward" class="icon" onclick={emit(&p.on_forward)} title={t!("btn-forward")} disabled={p.step >= total}>{t!("btn-forward-text")}</button>
                    <button id="btn-last" class="icon" onclick={goto(total)} title={t!("btn-last")} aria-label={t!("btn-last")} disabled={p.step >= total}>{"⇥"}</button>
                </div>
                <label class="speed">{t!("speed")}{" "}
                    <select id="speed" onchange={on_speed}>
                        { for SPEEDS.iter().map(|s| html! {
                            <option value={s.to_string()} selected={(*s - p.speed).abs() < 1e-9}>{format!("{s}×")}</option>
                        }) }
                    </select>
                </label>
                <label class="scrub">{t!("scrub")}{" "}
                    <input id="scrub" type="range" min="0" max={total.to_string()} step="1" value={p.step.to_string()}
                        oninput={on_scrub} aria-label={t!("scrub-label")}
                        aria-valuetext={status.clone()} />
                </label>
                <div class="clock" id="step-clock" data-step={p.step.to_string()} data-steps={total.to_string()}>
                    <span class="step-count">{status}</span>
                    <StepTime plan={plan.clone()} step={p.step} />
                    if loops > 1 {
                        <span class="muted loop-note" id="loop-note" data-loops={loops.to_string()}
                            title={t!("loops-title", loops = loops, bytes = crate::engine::units::format_bytes(plan.estimate.timeline.loop_bytes))}>
                            {t!("clock-loops", us = format::us(end), loops = loops, all = format::us(plan.estimate.time_us))}
                        </span>
                    } else {
                        <span class="muted">{t!("clock-modelled", us = format::us(end))}</span>
                    }
                </div>
            </div>
            <div class="timeline-bar" aria-hidden="true" title={t!("timeline-label")}>
                { for segments }
            </div>
            <div id="step-description" class="step-description" role="region" aria-live="polite" aria-label={t!("step-description")} tabindex="0">
                <p class="heading">{text.heading}</p>
                <ul>{ for text.sentences.into_iter().map(|s| html! { <li>{s}</li> }) }</ul>
                if !text.why.is_empty() {
                    <p class="why-step" id="step-why"><strong>{t!("why-label")}</strong>{" "}{text.why}</p>
                }
            </div>
        </div>
    }
}
