//! Learn mode: the lesson list, and one lesson's stop — its narration, what
//! to look at (the page highlights it; "show me" scrolls there and moves
//! the focus), a question whose answer is one click away, and the way to
//! the previous and next stop. The lessons are data (`crate::lessons`,
//! `lessons/*.json`); their words are in `locales/<lang>/lessons.ftl`.

use super::lang::use_lang;
use crate::i18n::tr;
use crate::lessons::{self, Lesson};
use crate::t;
use yew::prelude::*;

/// Props of [`Learn`].
#[derive(Properties, PartialEq)]
pub struct LearnProps {
    /// The open lesson and stop (1-based), or `None` for the list.
    pub at: Option<(&'static Lesson, usize)>,
    /// The user changed a setting since the stop was shown.
    pub off_stop: bool,
    /// The answer is shown.
    pub answer: bool,
    /// Go to a lesson's stop.
    pub on_stop: Callback<(&'static str, usize)>,
    /// Show / hide the answer.
    pub on_answer: Callback<bool>,
    /// Scroll to and focus what to look at.
    pub on_show_me: Callback<()>,
    /// Close learn mode.
    pub on_close: Callback<()>,
    /// Back to the list of lessons.
    pub on_list: Callback<()>,
}

/// The learn panel.
#[function_component(Learn)]
pub fn learn(p: &LearnProps) -> Html {
    let _lang = use_lang();
    let close = {
        let cb = p.on_close.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let Some((lesson, k)) = p.at else {
        let items = lessons::all().iter().enumerate().map(|(i, l)| {
            let cb = p.on_stop.clone();
            let id = l.id.as_str();
            html! {
                <li>
                    <button class="lesson-pick" data-lesson={id} onclick={Callback::from(move |_: MouseEvent| cb.emit((id, 1)))}>
                        <span class="lesson-n">{i + 1}</span>
                        <span class="lesson-title">{tr(&format!("lesson-{id}-title"))}</span>
                        <span class="lesson-intro">{tr(&format!("lesson-{id}-intro"))}</span>
                        <span class="muted">{t!("learn-stops", n = l.stops.len())}</span>
                    </button>
                </li>
            }
        });
        return html! {
            <section class="card learn" id="learn" aria-labelledby="learn-head">
                <div class="card-head">
                    <h2 id="learn-head">{t!("learn-title")}</h2>
                    <button class="link-button" id="learn-close" onclick={close}>{t!("learn-close")}</button>
                </div>
                <p class="hint">{t!("learn-list-hint")}</p>
                <ol class="lesson-list">{ for items }</ol>
            </section>
        };
    };
    let n = lesson.stops.len();
    let id = lesson.id.as_str();
    let go = |to: usize| {
        let cb = p.on_stop.clone();
        Callback::from(move |_: MouseEvent| cb.emit((id, to)))
    };
    let answer_open = p.answer;
    let toggle = {
        let cb = p.on_answer.clone();
        Callback::from(move |_: MouseEvent| cb.emit(!answer_open))
    };
    let show_me = {
        let cb = p.on_show_me.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let list = {
        let cb = p.on_list.clone();
        Callback::from(move |_: MouseEvent| cb.emit(()))
    };
    let dots = (1..=n).map(|j| {
        let current = j == k;
        html! {
            <li>
                <button class={classes!("stop-dot", current.then_some("current"))} onclick={go(j)}
                    aria-current={current.then_some("step")} aria-label={t!("learn-stop-of", stop = j, total = n)}>
                    {j}
                </button>
            </li>
        }
    });
    html! {
        <section class="card learn" id="learn" aria-labelledby="learn-head" data-lesson={id} data-stop={k.to_string()}>
            <div class="card-head">
                <h2 id="learn-head">
                    <span class="muted">{t!("learn-lesson")}{" · "}</span>
                    {tr(&format!("lesson-{id}-title"))}
                </h2>
                <div class="learn-nav-top">
                    <button class="link-button" id="learn-list" onclick={list.clone()}>{t!("learn-all")}</button>
                    <button class="link-button" id="learn-close" onclick={close}>{t!("learn-close")}</button>
                </div>
            </div>
            <nav class="stops" aria-label={t!("learn-stops-label")}>
                <ol>{ for dots }</ol>
                <span class="muted stop-count">{t!("learn-stop-of", stop = k, total = n)}</span>
            </nav>
            if p.off_stop {
                <p class="off-stop" role="status">
                    {t!("learn-off-stop")}{" "}
                    <button class="link-button" id="learn-restore" onclick={go(k)}>{t!("learn-restore")}</button>
                </p>
            }
            <div class="narration" id="learn-say" aria-live="polite">
                <p>{tr(&lesson.stop_id(k, "say"))}</p>
            </div>
            <p class="look" id="learn-look">
                <span class="look-mark" aria-hidden="true">{"◎"}</span>
                <strong>{t!("learn-look")}</strong>{" "}{tr(&lesson.stop_id(k, "look"))}{" "}
                <button class="link-button" id="learn-show-me" onclick={show_me}>{t!("learn-show-me")}</button>
            </p>
            <div class="question">
                <p id="learn-ask"><strong>{t!("learn-question")}</strong>{" "}{tr(&lesson.stop_id(k, "ask"))}</p>
                <button id="learn-answer-toggle" aria-expanded={answer_open.to_string()} aria-controls="learn-answer" onclick={toggle}>
                    { if answer_open { t!("learn-hide-answer") } else { t!("learn-show-answer") } }
                </button>
                <p id="learn-answer" class="answer" hidden={!answer_open}>{tr(&lesson.stop_id(k, "answer"))}</p>
            </div>
            <div class="learn-nav">
                <button id="learn-prev" onclick={go(k.saturating_sub(1).max(1))} disabled={k <= 1}>{t!("learn-prev")}</button>
                if k < n {
                    <button id="learn-next" class="primary" onclick={go(k + 1)}>{t!("learn-next")}</button>
                } else {
                    <button id="learn-next" class="primary" onclick={list.clone()}>{t!("learn-done")}</button>
                }
            </div>
        </section>
    }
}
