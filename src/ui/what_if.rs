//! The two what-ifs engineers reach for first, each a card with its
//! controls (named after their URL keys) and its figures:
//!
//! - **Compression** (`#compression`): `#compress`, `#block`, `#scale`,
//!   `#placement`, `#grad`; wire bytes, the modelled time with the codec
//!   work, the measured error of the real run against the uncompressed exact
//!   result, and a claim check. HCCL has no gradient compression: the card
//!   says so.
//! - **Fusion** (`#fusion`): `#fusion-preset`, `#fusion-spec`, `#bucket`;
//!   DDP's buckets, unfused vs fused time, per-bucket bars, the crossover,
//!   and which fused bucket the workers run.

use super::format;
use super::run::RunView;
use crate::engine::compressed::CompressedReport;
use crate::engine::compressed::{Placement, CODEC_GBPS};
use crate::engine::config::Config;
use crate::engine::config::MAX_BUCKET_BYTES;
use crate::engine::plan::{CompressedPlan, FusionView, Plan};
use crate::engine::quantization::{GradientShape, ScaleType, Scheme, BLOCK_RANGE};
use crate::engine::units::format_bytes;
use crate::engine::units::parse_bytes;
use crate::t;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Props of [`CompressionCard`] and [`FusionCard`].
#[derive(Properties, PartialEq)]
pub struct WhatIfProps {
    /// The configuration shown.
    pub config: Config,
    /// Its plan, if it could be made.
    pub plan: Option<Rc<Plan>>,
    /// The current run.
    pub run: Rc<RunView>,
    /// A new configuration.
    pub on_change: Callback<Config>,
}

fn select_value(e: &Event) -> String {
    e.target_unchecked_into::<HtmlSelectElement>().value()
}

fn input_value(e: &Event) -> String {
    e.target_unchecked_into::<HtmlInputElement>().value()
}

fn percent(x: f64) -> String {
    format!(
        "{}{:.1} %",
        if x >= 0.0 { "+" } else { "−" },
        (x * 100.0).abs()
    )
}

/// Parses a claimed time saving ("-73%", "73 %", "−73"; a number is
/// always a percentage): the relative change of time, negative = faster.
/// An unsigned number is read as a saving ("73 %" saved = −0.73); "+20 %"
/// claims 20 % slower.
///
/// Errors: what is allowed.
pub fn parse_claim(s: &str) -> Result<f64, String> {
    let t = s.trim().replace('−', "-").replace(' ', "");
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, t.strip_prefix('+').unwrap_or(&t).to_string()),
    };
    let (num, pct) = match body.strip_suffix('%') {
        Some(n) => (n.to_string(), true),
        None => (body.clone(), false),
    };
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "claim “{}”: allowed a percentage such as −73 % or 73 %",
            s.trim()
        )
    })?;
    let _ = pct;
    let frac = v / 100.0;
    if !(0.0..=1.0).contains(&frac) {
        return Err(format!(
            "claim “{}”: allowed a saving between 0 % and 100 %",
            s.trim()
        ));
    }
    // "−73 %" and "73 %" both claim 73 % less time; "+20 %" claims slower.
    Ok(if neg || !t.starts_with('+') {
        -frac
    } else {
        frac
    })
}

/// The compression what-if card.
///
/// Only the hooks and the card's frame live here; the controls, the
/// figures and the claim check are made by their own functions so each
/// can be read alone.
#[function_component(CompressionCard)]
pub fn compression_card(p: &WhatIfProps) -> Html {
    let _lang = super::lang::use_lang();
    let c = &p.config;
    let latest = super::latest::use_latest(c);
    let root = super::controls::use_synced_selects();
    let claim = use_state(String::new);
    let block_error = use_state(|| None::<String>);
    let min_error = use_state(|| None::<String>);
    let callbacks = CompressionCallbacks {
        on_scheme: config_select(&latest, &p.on_change, set_scheme),
        on_scale: config_select(&latest, &p.on_change, set_scale),
        on_placement: config_select(&latest, &p.on_change, set_placement),
        on_grad: config_select(&latest, &p.on_change, set_grad),
        on_block: block_callback(latest.clone(), p.on_change.clone(), block_error.clone()),
        on_min: compress_min_callback(latest, p.on_change.clone(), min_error.clone()),
    };
    let on_claim = claim_input_callback(claim.clone());
    let on = c.compress.scheme != Scheme::None;
    let cp = p.plan.as_ref().and_then(|pl| pl.compressed.clone());
    let report = p.run.compressed.as_ref();
    html! {
        <section class="card what-if" id="compression" ref={root} aria-label={t!("wi-c-title")}>
            <div class="card-head">
                <h2>{t!("wi-c-title")}</h2>
                <span class="badge what-if-badge">{t!("wi-not-hccl")}</span>
            </div>
            <p class="hint what-if-note">{t!("wi-c-note-a")}<code>{"include/hccl.h"}</code>{t!("wi-c-note-b")}</p>
            {compression_controls(c, callbacks)}
            if let Some(e) = &*block_error {
                <p class="inline-error">{e.clone()}</p>
            }
            if let Some(e) = &*min_error {
                <p class="inline-error" id="compress-min-error" role="alert">{e.clone()}</p>
            }
            if on && cp.is_none() && !c.compresses(c.bytes) {
                <p class="hint" id="below-compress-min">{t!("wi-below-min", bytes = format_bytes(c.bytes), min = format_bytes(c.compress_min))}</p>
            }
            {compression_figures(p, cp.as_deref(), report)}
            if on {
                <div class="field claim"><label for="claim">{t!("wi-claim")}</label>
                    <input id="claim" type="text" placeholder={t!("wi-claim-eg")} value={(*claim).clone()} oninput={on_claim} /></div>
                {claim_check(cp.as_deref(), &claim, report)}
            }
        </section>
    }
}

/// The compression card's control callbacks, each making the next
/// configuration from the latest one.
struct CompressionCallbacks {
    on_scheme: Callback<Event>,
    on_scale: Callback<Event>,
    on_placement: Callback<Event>,
    on_grad: Callback<Event>,
    on_block: Callback<Event>,
    on_min: Callback<Event>,
}

/// A select that sets one field of the configuration. It starts from the
/// latest configuration, not the drawn one, so quick changes of several
/// controls do not undo each other.
fn config_select(
    latest: &super::latest::Latest,
    on_change: &Callback<Config>,
    f: fn(&mut Config, &str),
) -> Callback<Event> {
    let (c, cb) = (latest.clone(), on_change.clone());
    Callback::from(move |e: Event| {
        let mut next = c.get();
        f(&mut next, &select_value(&e));
        cb.emit(next);
    })
}

/// `#compress`: an unknown name leaves the scheme as it is.
fn set_scheme(c: &mut Config, v: &str) {
    if let Some(x) = Scheme::from_name(v) {
        c.compress.scheme = x;
    }
}

/// `#scale`: fp32, else fp16.
fn set_scale(c: &mut Config, v: &str) {
    c.compress.scale = if v == "fp32" {
        ScaleType::Fp32
    } else {
        ScaleType::Fp16
    };
}

/// `#placement`: an unknown name leaves the placement as it is.
fn set_placement(c: &mut Config, v: &str) {
    if let Some(x) = Placement::from_name(v) {
        c.placement = x
    }
}

/// `#grad`: an unknown name leaves the input shape as it is.
fn set_grad(c: &mut Config, v: &str) {
    if let Some(x) = GradientShape::from_name(v) {
        c.grad = x
    }
}

/// `#block`: a block size in the codec's range, else the error says the
/// range and the configuration stays.
fn block_callback(
    c: super::latest::Latest,
    cb: Callback<Config>,
    err: UseStateHandle<Option<String>>,
) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let v = input_value(&e);
        match v.trim().parse::<usize>() {
            Ok(b) if BLOCK_RANGE.contains(&b) => {
                err.set(None);
                let mut next = c.get();
                next.compress.block = b;
                cb.emit(next);
            }
            _ => err.set(Some(t!(
                "wi-block-bad",
                value = v.trim().to_string(),
                min = *BLOCK_RANGE.start() as u64,
                max = *BLOCK_RANGE.end() as u64
            ))),
        }
    })
}

/// `#compress-min`: a size, else the error says what is allowed and the
/// configuration stays.
fn compress_min_callback(
    c: super::latest::Latest,
    cb: Callback<Config>,
    err: UseStateHandle<Option<String>>,
) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let v = input_value(&e);
        match crate::engine::config::parse_compress_min(&v) {
            Ok(b) => {
                err.set(None);
                let mut next = c.get();
                next.compress_min = b;
                cb.emit(next);
            }
            Err(allowed) => err.set(Some(format!("compress_min “{}”: {allowed}.", v.trim()))),
        }
    })
}

/// Keeps the claim box's text in state; the check is made as it is typed.
fn claim_input_callback(claim: UseStateHandle<String>) -> Callback<InputEvent> {
    Callback::from(move |e: InputEvent| {
        claim.set(e.target_unchecked_into::<HtmlInputElement>().value())
    })
}

/// The compression controls. Only a float type can be compressed, and the
/// codec's settings mean nothing until a scheme is on, so they are disabled
/// rather than hidden: the row does not jump.
fn compression_controls(c: &Config, cb: CompressionCallbacks) -> Html {
    let float = c.dtype.is_float();
    let on = c.compress.scheme != Scheme::None;
    html! {
        <div class="bar what-if-bar">
            <div class="field"><label for="compress">{t!("wi-compress")}</label>
                <select id="compress" onchange={cb.on_scheme} disabled={!float}>
                    { for Scheme::ALL.iter().map(|s| html! { <option value={s.name()} selected={*s == c.compress.scheme}>{s.name()}</option> }) }
                </select></div>
            <div class="field"><label for="block">{t!("wi-block")}</label>
                <input id="block" type="number" min={BLOCK_RANGE.start().to_string()} max={BLOCK_RANGE.end().to_string()} step="32"
                    value={c.compress.block.to_string()} onchange={cb.on_block} disabled={!on} class="narrow" /></div>
            <div class="field"><label for="scale">{t!("wi-scale")}</label>
                <select id="scale" onchange={cb.on_scale} disabled={!on}>
                    { for [ScaleType::Fp16, ScaleType::Fp32].iter().map(|s| html! { <option value={s.name()} selected={*s == c.compress.scale}>{format!("{} ({} B)", s.name(), s.bytes())}</option> }) }
                </select></div>
            <div class="field"><label for="placement">{t!("wi-placement")}</label>
                <select id="placement" onchange={cb.on_placement} disabled={!on}>
                    <option value="hop" selected={c.placement == Placement::Hop}>{t!("wi-hop")}</option>
                    <option value="once" selected={c.placement == Placement::Once} disabled={c.primitive != crate::engine::collective::Primitive::AllReduce}>{t!("wi-once")}</option>
                </select></div>
            <div class="field"><label for="compress-min">{t!("wi-compress-min")}</label>
                <input id="compress-min" type="text" class="narrow" title={t!("wi-compress-min-title")}
                    value={format_bytes(c.compress_min)} onchange={cb.on_min} disabled={!on} /></div>
            <div class="field"><label for="grad">{t!("wi-inputs")}</label>
                <select id="grad" onchange={cb.on_grad} disabled={!on}>
                    { for GradientShape::ALL.iter().map(|g| html! { <option value={g.name()} selected={*g == c.grad} title={g.describe()}>{g.describe()}</option> }) }
                </select></div>
        </div>
    }
}

/// The compression figures when there are some, else a hint saying why
/// not: a model-only plan is not drawn, and only a float type compresses.
fn compression_figures(
    p: &WhatIfProps,
    cp: Option<&CompressedPlan>,
    report: Option<&CompressedReport>,
) -> Html {
    let c = &p.config;
    let float = c.dtype.is_float();
    let on = c.compress.scheme != Scheme::None;
    match (cp, on) {
        (Some(cp), true) => compressed_facts(c, cp, report),
        _ if on && p.plan.as_ref().is_some_and(|pl| !pl.drawn()) => html! {
            <p class="hint">{t!("wi-model-only", n = crate::engine::plan::MAX_DRAWN_RANKS)}</p>
        },
        _ => html! {
            <p class="hint">{ if float { t!("wi-pick") } else { t!("wi-float-only") } }</p>
        },
    }
}

/// Wire bytes, modelled time, and, once a run has checked them, the
/// measured error and the values flushed to zero; each with the arithmetic
/// behind it so the figure can be checked by hand.
fn compressed_facts(c: &Config, cp: &CompressedPlan, report: Option<&CompressedReport>) -> Html {
    let e = &cp.estimate;
    let ratio = e.wire_bytes as f64 / e.uncompressed_bytes.max(1) as f64;
    html! {
        <dl class="facts what-if-facts">
            <dt>{t!("wi-wire")}</dt>
            <dd id="wire-bytes">{t!("wi-wire-line", wire = format_bytes(e.wire_bytes), raw = format_bytes(e.uncompressed_bytes), pct = format!("{:.1}", ratio * 100.0))}
                <span class="muted" lang="en">{wire_arithmetic(c, cp)}</span></dd>
            <dt>{t!("wi-time")}</dt>
            <dd id="compressed-time">{t!("wi-time-line", t = format::us(e.time_us), u = format::us(e.uncompressed_us), change = percent(e.time_change()))}
                <span class="muted" lang="en">{format!(" = transfers {} µs + quantise/dequantise{} {} µs (assumed {} GB/s kernels, not overlapped)",
                    format::us(e.transfer_us), if cp.setup.placement == Placement::Once { "/local reduce" } else { "" }, format::us(e.codec_us), CODEC_GBPS)}</span></dd>
            <dt>{t!("wi-error")}</dt>
            <dd id="compressed-error">{ match report {
                Some(r) => format!("relative L2 {:.3} %, RMSE {:.3e}, max |error| {:.3e}", r.stats.rel_l2_error * 100.0, r.stats.rmse, r.stats.max_abs_error),
                None => t!("wi-after-run"),
            } }
                <span class="muted" lang="en">{ report.map(|r| format!(" over {} elements of every rank's output", r.stats.elements)).unwrap_or_default() }</span></dd>
            <dt>{t!("wi-flushed")}</dt>
            <dd id="flushed">{ match report {
                Some(r) => t!("wi-flushed-line", pct = format!("{:.3}", r.stats.flushed_fraction * 100.0)),
                None => t!("wi-after-run"),
            } }
                if report.is_some_and(|r| r.stats.flushed_fraction > 0.001) && cp.setup.compression.scale == ScaleType::Fp16 {
                    <span class="muted" lang="en">{format!(" — an fp16 scale (max|x| / {}) rounds to 0 for blocks whose max|x| is below about {:.1e}: such blocks are flushed whole; scale=fp32 avoids that part",
                        cp.setup.compression.scheme.qmax(), 2f64.powi(-25) * cp.setup.compression.scheme.qmax() as f64)}</span>
                }</dd>
        </dl>
    }
}

/// How the wire bytes come about for the placement: per hop, the code
/// bytes plus a scale per block; once, every rank gathering every input.
fn wire_arithmetic(c: &Config, cp: &CompressedPlan) -> String {
    let expect = (1.0
        + cp.setup.compression.scale.bytes() as f64 / cp.setup.compression.block as f64)
        / c.dtype.size_bytes() as f64;
    match cp.setup.placement {
        Placement::Hop => format!(" — 1 byte per element + a {} {}-byte scale per {} elements: (1 + {}/{}) / {} = {:.2} % of {} per transfer",
            cp.setup.compression.scale.name(), cp.setup.compression.scale.bytes(), cp.setup.compression.block,
            cp.setup.compression.scale.bytes(), cp.setup.compression.block, c.dtype.size_bytes(), expect * 100.0, c.dtype),
        Placement::Once => format!(" — every rank receives all {} compressed inputs ({} AllGather, which the topology and buffers above animate, the cells showing code bytes), instead of reduced pieces", c.ranks, cp.gather_algorithm.map(|a| a.name()).unwrap_or("")),
    }
}

/// A claimed saving held against the model (and the run's measured error):
/// a claim is easy to make from wire bytes alone, which bound the time
/// saved but do not give it.
fn claim_check(
    cp: Option<&CompressedPlan>,
    claim: &str,
    report: Option<&CompressedReport>,
) -> Html {
    let Some(cp) = cp.filter(|_| !claim.trim().is_empty()) else {
        return html! {};
    };
    match parse_claim(claim) {
        Err(e) => html! { <p class="inline-error" id="claim-result">{e}</p> },
        Ok(x) => {
            let model = cp.estimate.time_change();
            let transfers_only =
                cp.estimate.transfer_us / cp.estimate.uncompressed_us.max(f64::MIN_POSITIVE) - 1.0;
            let wire =
                cp.estimate.wire_bytes as f64 / cp.estimate.uncompressed_bytes.max(1) as f64 - 1.0;
            let verdict = claim_verdict(x, model);
            html! {
                <p class="claim-result" id="claim-result" lang="en">
                    {format!("Claimed {}: {verdict}. For this case the model gives {} in time ({} from transfers alone; wire bytes {}), ", percent(x), percent(model), percent(transfers_only), percent(wire))}
                    { match report {
                        Some(r) => format!("at a measured relative L2 error of {:.3} % and {:.3} % of values flushed to zero.", r.stats.rel_l2_error * 100.0, r.stats.flushed_fraction * 100.0),
                        None => "the measured error follows the run.".into(),
                    } }
                    {" Savings on the wire bound savings in time: latency (α per step) and the codec's work do not shrink."}
                </p>
            }
        }
    }
}

/// How a claimed change of time compares with the model's: within five
/// points is consistent; a saving where the model says slower is wrong.
fn claim_verdict(claimed: f64, model: f64) -> &'static str {
    if model > 0.0 && claimed < 0.0 {
        "not what the model gives: here compression makes the collective slower"
    } else if (claimed - model).abs() <= 0.05 {
        "consistent with the model"
    } else if claimed < model {
        "more than the model gives"
    } else {
        "less than the model gives"
    }
}

/// The fusion what-if card.
///
/// Only the hooks and the card's frame live here; the callbacks, the
/// controls and each part of the figures are made by their own functions
/// so each can be read alone.
#[function_component(FusionCard)]
pub fn fusion_card(p: &WhatIfProps) -> Html {
    let _lang = super::lang::use_lang();
    let c = &p.config;
    let latest = super::latest::use_latest(c);
    let root = super::controls::use_synced_selects();
    let spec_error = use_state(|| None::<String>);
    let set_fusion = fusion_setter(latest.clone(), p.on_change.clone(), spec_error.clone());
    let callbacks = FusionCallbacks {
        on_preset: preset_callback(set_fusion.clone(), spec_error.clone()),
        on_spec: spec_callback(set_fusion.clone(), spec_error.clone(), c.dtype),
        on_bucket: bucket_callback(set_fusion, spec_error.clone(), latest.clone()),
    };
    let run_bucket = bucket_runner(latest, p.on_change.clone());
    let preset = match c.fusion.as_deref() {
        None => "none",
        Some(s @ ("llama3-8b" | "llama3-70b")) => s,
        Some(_) => "custom",
    };
    let fv = p.plan.as_ref().and_then(|pl| pl.fusion.clone());
    let body = match &fv {
        None => fusion_hint(p),
        Some(f) => fusion_view(c, f, &run_bucket),
    };
    html! {
        <section class="card what-if" id="fusion" ref={root} aria-label={t!("wi-f-title")}>
            <div class="card-head">
                <h2>{t!("wi-f-title")}</h2>
                <span class="muted">{t!("wi-f-sub")}</span>
            </div>
            {fusion_controls(c, preset, callbacks)}
            if let Some(e) = &*spec_error {
                <p class="inline-error">{e.clone()}</p>
            }
            {body}
            if preset.starts_with("llama") {
            <p class="hint sources" lang="en">{"Llama 3 shapes from Meta's config.json (hidden 4096 / 8192, intermediate 14336 / 28672, 32 / 80 layers, 8 KV heads, vocabulary 128256); 8 030 261 248 and 70 553 706 496 parameters. Bucketing as torch.nn.parallel.DistributedDataParallel (default bucket_cap_mb=25; a bucket closes once it reaches the cap, so one may exceed it)."}</p>
            }
        </section>
    }
}

/// Sets the tensors (`spec`) and, if given, the bucket cap. Every fusion
/// control ends here so that turning fusion on always makes the collective
/// an AllReduce of the bucket the workers run, and clears the last error.
///
/// `bucket`: `None` leaves the cap as it is; `Some(None)` is "not given"
/// (DDP's default); `Some(Some(b))` a given cap.
fn fusion_setter(
    c: super::latest::Latest,
    cb: Callback<Config>,
    err: UseStateHandle<Option<String>>,
) -> impl Fn(Option<String>, Option<Option<u64>>) + Clone + 'static {
    move |spec: Option<String>, bucket: Option<Option<u64>>| {
        let mut next = c.get();
        next.fusion = spec;
        if let Some(b) = bucket {
            next.bucket = b;
        }
        if next.fusion.is_some() {
            next.primitive = crate::engine::collective::Primitive::AllReduce;
            if let Some(b) = next.fusion_run_bytes() {
                next.bytes = b;
            }
        }
        err.set(None);
        cb.emit(next);
    }
}

/// The fusion card's control callbacks.
struct FusionCallbacks {
    on_preset: Callback<Event>,
    on_spec: Callback<Event>,
    on_bucket: Callback<Event>,
}

/// `#fusion-preset`: none, a model, or equal layers (starting from an
/// example the user can edit).
fn preset_callback(
    set: impl Fn(Option<String>, Option<Option<u64>>) + 'static,
    err: UseStateHandle<Option<String>>,
) -> Callback<Event> {
    Callback::from(move |e: Event| match select_value(&e).as_str() {
        "none" => set(None, None),
        "custom" => set(Some("30x4MiB".into()), None),
        v => {
            err.set(None);
            set(Some(v.to_string()), None)
        }
    })
}

/// `#fusion-spec`: equal layers as COUNTxSIZE, else the error says what is
/// allowed and the configuration stays.
fn spec_callback(
    set: impl Fn(Option<String>, Option<Option<u64>>) + 'static,
    err: UseStateHandle<Option<String>>,
    dtype: crate::engine::dtype::DType,
) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let v = input_value(&e);
        match crate::engine::fusion::parse_fusion(v.trim(), dtype) {
            Ok(_) => set(Some(v.trim().to_string()), None),
            Err(_) => err.set(Some(format!("fusion “{}” is not allowed: COUNTxSIZE with COUNT 1..=10000 and SIZE up to 1 GiB, e.g. 30x4MiB.", v.trim()))),
        }
    })
}

/// `#bucket`: DDP's bucket cap as a size; empty or "default" is not given.
/// The tensors are the latest ones, so a cap typed right after a preset
/// does not undo it.
fn bucket_callback(
    set: impl Fn(Option<String>, Option<Option<u64>>) + 'static,
    err: UseStateHandle<Option<String>>,
    latest: super::latest::Latest,
) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let v = input_value(&e);
        let t = v.trim();
        if t.is_empty() || t.eq_ignore_ascii_case("default") {
            set(latest.get().fusion, Some(None));
            return;
        }
        match parse_bytes(t) {
            Ok(b) if b <= MAX_BUCKET_BYTES => set(latest.get().fusion, Some(Some(b))),
            _ => err.set(Some(format!("bucket “{t}” is not allowed: a size from 0 (one AllReduce per tensor) to 1 GiB, e.g. 25MiB, or empty for DDP's default."))),
        }
    })
}

/// Makes the button callback that sets the message size to a bucket's,
/// so the workers run that fused bucket.
fn bucket_runner(
    c: super::latest::Latest,
    cb: Callback<Config>,
) -> impl Fn(u64) -> Callback<MouseEvent> {
    move |bytes: u64| {
        let (c, cb) = (c.clone(), cb.clone());
        Callback::from(move |_: MouseEvent| {
            let mut next = c.get();
            next.bytes = bytes;
            cb.emit(next);
        })
    }
}

/// The fusion controls: the tensors (a preset or equal layers) and DDP's
/// bucket cap, which means nothing until there are tensors.
fn fusion_controls(c: &Config, preset: &str, cb: FusionCallbacks) -> Html {
    html! {
        <div class="bar what-if-bar">
            <div class="field"><label for="fusion-preset">{t!("wi-tensors")}</label>
                <select id="fusion-preset" onchange={cb.on_preset}>
                    <option value="none" selected={preset == "none"}>{t!("wi-none")}</option>
                    <option value="llama3-8b" selected={preset == "llama3-8b"}>{"Llama-3-8B"}</option>
                    <option value="llama3-70b" selected={preset == "llama3-70b"}>{"Llama-3-70B"}</option>
                    <option value="custom" selected={preset == "custom"}>{t!("wi-equal-layers")}</option>
                </select></div>
            if preset == "custom" {
                <div class="field"><label for="fusion-spec">{t!("wi-layers")}</label>
                    <input id="fusion-spec" type="text" class="narrow" value={c.fusion.clone().unwrap_or_default()} onchange={cb.on_spec} /></div>
            }
            <div class="field"><label for="bucket">{t!("wi-bucket-cap")}</label>
                <input id="bucket" type="text" class="narrow" placeholder="default" title="DDP's bucket_cap_mb as a size; empty = not given (25 MiB with a 1 MiB first bucket)" value={c.bucket.map(format_bytes).unwrap_or_default()} onchange={cb.on_bucket} disabled={c.fusion.is_none()} /></div>
        </div>
    }
}

/// Why there are no fusion figures: no tensors picked, a collective other
/// than AllReduce, or a model-only plan (not drawn).
fn fusion_hint(p: &WhatIfProps) -> Html {
    let c = &p.config;
    html! {
        <p class="hint">{ if c.fusion.is_some() && p.plan.as_ref().is_some_and(|pl| !pl.drawn()) { t!("fusion-hint-drawn-only") } else if c.fusion.is_some() { t!("fusion-hint-allreduce") } else { t!("fusion-hint-pick") } }</p>
    }
}

/// The fusion figures: the facts, the unfused and fused bars, and which
/// bucket the workers run.
fn fusion_view(
    c: &Config,
    f: &FusionView,
    run_bucket: &dyn Fn(u64) -> Callback<MouseEvent>,
) -> Html {
    html! {
        <>
            {fusion_facts(c, f)}
            {fusion_bars(f)}
            <p class="hint">{t!("wi-blocks")}</p>
            {fusion_run_line(c, f, run_bucket)}
        </>
    }
}

/// Tensors, buckets (and how DDP's cap made them), unfused vs fused time,
/// the crossover and, with compression on, the large buckets compressed.
fn fusion_facts(c: &Config, f: &FusionView) -> Html {
    let fp = &f.plan;
    html! {
        <dl class="facts what-if-facts">
            <dt>{t!("wi-tensors")}</dt>
            <dd>{format!("{} tensors, {} of {} gradients", f.tensors.len(), format_bytes(fp.total_bytes), c.dtype)}</dd>
            <dt>{t!("wi-buckets")}</dt>
            <dd id="fusion-buckets" lang="en">{match c.bucket {
                None => format!("{} (bucket_cap_mb not given: DDP's default 25 MiB, with its small first bucket of 1 MiB; filled in reverse layer order)", fp.buckets.len()),
                Some(0) => format!("{} (cap 0: one AllReduce per tensor)", fp.buckets.len()),
                Some(b) => format!("{} (cap {} given: every bucket up to it, no small first bucket; filled in reverse layer order)", fp.buckets.len(), format_bytes(b)),
            }}</dd>
            <dt>{t!("predicted")}</dt>
            <dd id="fusion-times">{t!("wi-fusion-times", unfused = format::us(fp.unfused_us), fused = format::us(fp.fused_us), gain = {
                let gain = 1.0 - fp.fused_us / fp.unfused_us.max(f64::MIN_POSITIVE);
                if c.bucket == Some(0) { t!("wi-no-fusion") } else if gain < 0.05 { t!("wi-less-time", pct = format!("{:.1}", gain * 100.0)) } else { t!("wi-faster", x = format!("{:.2}", fp.unfused_us / fp.fused_us.max(f64::MIN_POSITIVE))) }
            })}
                <span class="muted">{" "}{t!("wi-back-to-back")}</span></dd>
            <dt>{t!("wi-crossover")}</dt>
            <dd>{t!("wi-crossover-line", bytes = format_bytes(fp.crossover_bytes))}</dd>
            if let Some(z) = &f.compression {
                <dt>{t!("wi-large-only")}</dt>
                <dd id="fusion-compression">{t!("wi-large-only-line",
                    k = z.compressed.iter().filter(|x| **x).count(),
                    n = z.compressed.len(),
                    min = format_bytes(z.min_bytes),
                    wire = format_bytes(z.wire_bytes),
                    raw = format_bytes(z.uncompressed_wire_bytes),
                    t = format::us(z.time_us),
                    fused = format::us(fp.fused_us),
                    err = format!("{:.2e}", z.rel_l2_error))}
                    <span class="muted" lang="en">{format!(" (codec {:.2e} × √{:.3} of the gradient bytes compressed; {} what-if, HCCL and NCCL have none)", z.codec_rel_l2, z.compressed_fraction, c.compress.scheme.name())}</span></dd>
            }
        </dl>
    }
}

/// Unfused time as one bar and fused time as one segment per bucket, both
/// on the same scale so the saving is seen; each bucket's latency part is
/// drawn over it, since latency is what fusion saves.
fn fusion_bars(f: &FusionView) -> Html {
    let fp = &f.plan;
    let max_us = fp.unfused_us.max(fp.fused_us).max(f64::MIN_POSITIVE);
    let w = 360.0;
    let bar = |us: f64| us / max_us * w;
    let mut x = 0.0;
    let segs: Vec<Html> = fp.buckets.iter().enumerate().map(|(i, (b, bc))| {
        let width = bar(bc.time_us).max(0.5);
        let lat = bar(bc.latency_us).min(width);
        let seg = html! {
            <g>
                <rect class={classes!("fuse-seg", (Some(i) == f.running).then_some("running"))} x={format!("{x:.2}")} y="35" width={format!("{width:.2}")} height="14">
                    <title>{format!("bucket {}: {} tensors, {} — {} µs ({} µs of it latency), {}", i, b.tensors.len(), format_bytes(b.bytes), format::us(bc.time_us), format::us(bc.latency_us), bc.algorithm)}</title>
                </rect>
                <rect class="fuse-lat" x={format!("{x:.2}")} y="35" width={format!("{lat:.2}")} height="14" />
            </g>
        };
        x += width;
        seg
    }).collect();
    html! {
        <svg class="fuse-bars" viewBox="0 0 400 52" role="img" aria-label={t!("wi-fuse-bars", unfused = format::us(fp.unfused_us), fused = format::us(fp.fused_us))}>
            <text x="0" y="9" class="fuse-k">{t!("wi-unfused-bar", n = f.tensors.len(), us = format::us(fp.unfused_us))}</text>
            <rect class="fuse-unfused" x="0" y="12" width={format!("{:.2}", bar(fp.unfused_us))} height="8" />
            <text x="0" y="32" class="fuse-k">{t!("wi-fused-bar", n = fp.buckets.len(), us = format::us(fp.fused_us))}</text>
            {for segs}
        </svg>
    }
}

/// Which fused bucket the workers run; when the message size is no
/// bucket's, a button to run the page's default bucket instead.
fn fusion_run_line(
    c: &Config,
    f: &FusionView,
    run_bucket: &dyn Fn(u64) -> Callback<MouseEvent>,
) -> Html {
    let fp = &f.plan;
    let running = f.running.map(|i| &fp.buckets[i].0);
    match (running, f.run_bucket) {
        (Some(b), _) => html! {
            <p class="fusion-run" id="fusion-run">{t!("fusion-run", bucket = f.running.unwrap_or(0) as u64, tensors = b.tensors.len() as u64, bytes = format_bytes(b.bytes), dtype = c.dtype.to_string())}</p>
        },
        (None, Some(k)) => html! {
            <p class="fusion-run">{t!("fusion-not-bucket", bytes = format_bytes(c.bytes))}{" "}
                <button id="run-bucket" onclick={run_bucket(fp.buckets[k].0.bytes)}>{t!("fusion-run-bucket", k = k as u64, tensors = fp.buckets[k].0.tensors.len() as u64, bytes = format_bytes(fp.buckets[k].0.bytes))}</button></p>
        },
        (None, None) => html! { <p class="hint">{t!("wi-no-bucket")}</p> },
    }
}
