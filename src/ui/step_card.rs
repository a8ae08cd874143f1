//! The "Training step" card: a model preset on a DP × TP × PP × CP (EP, ZeRO)
//! layout on the page's machine, through [`crate::engine::step::step`]
//! (what `cclsim step` prints): every collective the step issues, each
//! timed the way the headline times it, the compute, the exposed
//! communication, the step time and tokens/s, and a two-lane drawing
//! (compute, communication; the exposed part marked).
//!
//! The step times one headline plan per kind of call (tens of ms each,
//! more at scale), so it is made in the planner worker ([`Job::Step`]),
//! asked again only when the card's inputs or the machine change. Each
//! collective's row links to the playground configured for that call.
//! The card's inputs are the page's (`step*` link keys,
//! [`crate::engine::step::link`]): a shared link opens the same step.

use super::format;
use super::planned::use_planned;
use crate::engine::collective::Primitive;
use crate::engine::config::Config;
use crate::engine::quantization::Scheme;
use crate::engine::step::{model, Change, Pinned, StepCollective, StepInput, StepReport};
use crate::engine::units::format_bytes;
use crate::runtime::planner::{Answer, Job};
use crate::t;
use web_sys::{HtmlInputElement, HtmlSelectElement, HtmlTextAreaElement};
use yew::prelude::*;

/// Props of [`StepCard`].
#[derive(Properties, PartialEq)]
pub struct StepCardProps {
    /// The page's configuration: its machine (topology, profile, ranks,
    /// degradations) is the step's.
    pub config: Config,
    /// The inputs the user or the link set; `None`: the machine's default
    /// step ([`first_step`]).
    pub step: Option<StepInput>,
    /// A changed input.
    pub on_change: Callback<StepInput>,
    /// The pinned step compared beside this one, as its whole query
    /// ([`crate::engine::step::link::full_query`]); `None`: nothing pinned.
    pub vs: Option<String>,
    /// Pins (`Some`: the query of the step to keep) or unpins (`None`).
    pub on_pin: Callback<Option<String>>,
}

/// The project's worked case (README): Llama-3 70B with DDP on one 8-NPU
/// 910B server, one sequence per rank, and a 300 TFLOPS peak the user is
/// told is assumed (no 910B datasheet figure is cited here).
fn worked_case_link() -> String {
    let machine = Config {
        topo: "910b-8".into(),
        ranks: 8,
        ..Config::default()
    };
    let step = StepInput {
        model: "llama3-70b".into(),
        dp: 8,
        batch: 8,
        peak_tflops: Some(300.0),
        ..StepInput::default()
    };
    format!(
        "?{}&{}",
        machine.to_query(),
        crate::engine::step::link::to_query(&step)
    )
}

/// The model's name once a `config.json` was pasted.
const PASTED: &str = "config.json";

/// The step a machine of `ranks` ranks starts from: data parallel over
/// every rank, one sequence per rank at least, so that a large machine's
/// first step is a valid one.
fn first_step(ranks: usize) -> StepInput {
    let d = StepInput::default();
    StepInput {
        dp: ranks,
        batch: d.batch.max(ranks as u64),
        ..d
    }
}

/// The parts of a configuration the step reads (its machine).
type Machine = (
    String,
    usize,
    Option<crate::engine::custom_topology::CustomTopology>,
    Option<crate::engine::calibrate::Profile>,
    crate::engine::degrade::Degradation,
    crate::engine::cost::Slices,
);

fn machine_of(c: &Config) -> Machine {
    (
        c.topo.clone(),
        c.ranks,
        c.custom.clone(),
        c.profile.clone(),
        c.faults.clone(),
        c.slices,
    )
}

/// The playground's link for one of the step's calls: its primitive,
/// size and group on the same machine.
fn drill_link(machine: &Config, input: &StepInput, row: &StepCollective) -> Option<String> {
    let primitive = Primitive::from_name(&row.primitive)?;
    let c = Config {
        primitive,
        topo: machine.topo.clone(),
        custom: machine.custom.clone(),
        profile: machine.profile.clone(),
        bytes: row.bytes,
        ranks: row.group_ranks,
        dtype: input.param_dtype,
        ..Config::default()
    };
    Some(format!("?{}", c.to_query()))
}

/// A time in µs, or in ms above 10 ms.
fn time(us: f64) -> String {
    if us.abs() >= 10_000.0 {
        format!("{} ms", format::us(us / 1000.0))
    } else {
        format!("{} µs", format::us(us))
    }
}

/// A big count with thin groups (`123 456`).
fn count(v: f64) -> String {
    format::us(v.round())
}

/// The two lanes: compute (the bubble after it) and communication, the
/// part the compute hides under the compute's end, the exposed part
/// after it.
fn lanes(r: &StepReport) -> Html {
    let compute_end = r.compute_us + r.bubble_us;
    let hidden = (r.comm_us - r.exposed_comm_us).max(0.0);
    let span = r.step_time_us.max(r.comm_us).max(f64::MIN_POSITIVE);
    let x = |us: f64| format!("{:.2}", us / span * 1000.0);
    let hidden_start = (r.compute_us - hidden).max(0.0);
    let exposed_w = if r.exposed_comm_us > 0.0 {
        format!("{:.2}", (r.exposed_comm_us / span * 1000.0).max(4.0))
    } else {
        "0".to_string()
    };
    let row = |label: String, value: String, bar: Html| {
        html! {
            <div class="step-lane">
                <span class="step-lane-label">{label}</span>
                <svg viewBox="0 0 1000 18" preserveAspectRatio="none" aria-hidden="true">
                    <rect class="step-lane-bg" x="0" y="0" width="1000" height="18" />
                    {bar}
                </svg>
                <span class="step-lane-value">{value}</span>
            </div>
        }
    };
    let compute_bar = html! {
        <>
            <rect class="step-compute" x="0" y="0" width={x(r.compute_us)} height="18" />
            <rect class="step-bubble" x={x(r.compute_us)} y="0" width={x(r.bubble_us)} height="18" />
        </>
    };
    let comm_bar = html! {
        <>
            <rect class="step-hidden" x={x(hidden_start)} y="0" width={x(hidden.min(r.compute_us))} height="18" />
            // At least a sliver when anything is exposed: its figure is beside it.
            <rect class="step-exposed" x={x(compute_end)} y="0" width={exposed_w} height="18" />
        </>
    };
    html! {
        <div class="step-lanes" id="step-lanes" role="img"
            aria-label={t!("st-lanes-label", compute = time(r.compute_us), comm = time(r.comm_us), exposed = time(r.exposed_comm_us))}>
            {row(t!("st-lane-compute"), time(compute_end), compute_bar)}
            {row(t!("st-lane-comm"), t!("st-lane-comm-value", comm = time(r.comm_us), exposed = time(r.exposed_comm_us)), comm_bar)}
            <p class="step-legend">
                <span class="sw step-compute"></span>{t!("st-legend-compute")}
                if r.bubble_us > 0.0 { <span class="sw step-bubble"></span>{t!("st-legend-bubble")} }
                <span class="sw step-hidden"></span>{t!("st-legend-hidden")}
                <span class="sw step-exposed"></span>{t!("st-legend-exposed")}
            </p>
        </div>
    }
}

/// The table and the figures of a report.
fn report(r: &StepReport, machine: &Config, input: &StepInput) -> Html {
    html! {
        <>
            <dl class="facts step-facts" id="step-facts">
                <dt>{t!("st-compute")}</dt><dd id="step-compute">{time(r.compute_us)}
                    <span class="muted">{format!(" · {:.0} TFLOPS × MFU {:.2}", r.peak_tflops, r.mfu)}</span></dd>
                if r.bubble_us > 0.0 {
                    <dt>{t!("st-bubble")}</dt><dd id="step-bubble">{time(r.bubble_us)}</dd>
                }
                <dt>{t!("st-comm")}</dt><dd id="step-comm">{time(r.comm_us)}</dd>
                <dt>{t!("st-exposed")}</dt><dd id="step-exposed">{time(r.exposed_comm_us)}
                    <span class="muted">{format!(" · {}", t!("st-share", share = format!("{:.1}", r.comm_share * 100.0)))}</span></dd>
                <dt>{t!("st-step-time")}</dt><dd id="step-time" data-us={format!("{}", r.step_time_us)}><b>{time(r.step_time_us)}</b></dd>
                <dt>{t!("st-tokens")}</dt><dd id="step-tokens" data-v={format!("{}", r.tokens_per_s)}>{count(r.tokens_per_s)}</dd>
            </dl>
            {lanes(r)}
            <div class="step-table-wrap">
            <table class="step-table" id="step-table">
                <thead><tr>
                    <th>{t!("st-col-purpose")}</th>
                    <th>{t!("st-col-primitive")}</th>
                    <th class="num">{t!("st-col-bytes")}</th>
                    <th class="num">{t!("st-col-group")}</th>
                    <th class="num">{t!("st-col-calls")}</th>
                    <th class="num">{t!("st-col-per-call")}</th>
                    <th class="num">{t!("st-col-total")}</th>
                    <th>{t!("st-col-overlap")}</th>
                </tr></thead>
                <tbody>
                { for r.collectives.iter().enumerate().map(|(i, c)| {
                    let link = drill_link(machine, input, c);
                    let range = c.range_us.map(|(lo, hi)| format!("{}–{} µs (80 %)", format::us(lo), format::us(hi))).unwrap_or_default();
                    html! {
                        <tr class="step-row" data-bytes={c.bytes.to_string()}>
                            <td lang="en">{c.purpose.clone()}</td>
                            <td>
                                if let Some(href) = link {
                                    <a class="step-drill" id={format!("step-drill-{i}")} href={href}
                                        title={t!("st-drill", primitive = c.primitive.clone(), bytes = format_bytes(c.bytes), ranks = c.group_ranks)}>{c.primitive.clone()}</a>
                                } else {
                                    {c.primitive.clone()}
                                }
                                <span class="muted step-algo">{format!(" {}", c.algorithm)}</span>
                                if !c.compression.is_empty() {
                                    <span class="step-compressed" lang="en">{format!(" · {}", c.compression)}</span>
                                }
                            </td>
                            <td class="num" title={format!("{} B", c.bytes)}>{format_bytes(c.bytes)}</td>
                            <td class="num">{c.group_ranks}</td>
                            <td class="num">{c.calls}</td>
                            <td class="num" title={range}>{time(c.time_us)}</td>
                            <td class="num">{time(c.total_us)}</td>
                            <td lang="en">{c.overlap.clone()}</td>
                        </tr>
                    }
                }) }
                </tbody>
            </table>
            </div>
            <p class="hint sources">{t!("st-source", peak = r.peak_source.clone())}</p>
        </>
    }
}

/// A figure of the comparison in its unit.
fn figure_value(figure: &str, v: f64) -> String {
    match figure {
        "comm_share" => format!("{:.1} %", v * 100.0),
        "tokens_per_s" => count(v),
        _ => time(v),
    }
}

/// The label of a comparison figure (the report's own labels).
fn figure_label(figure: &str) -> String {
    match figure {
        "step_time_us" => t!("st-step-time"),
        "compute_us" => t!("st-compute"),
        "bubble_us" => t!("st-bubble"),
        "comm_us" => t!("st-comm"),
        "exposed_comm_us" => t!("st-exposed"),
        "comm_share" => t!("st-vs-share"),
        "tokens_per_s" => t!("st-tokens"),
        other => other.to_string(),
    }
}

/// The change of one figure, as `×1.23` (a lower step time or exposed
/// share is better; higher tokens/s).
fn ratio_cell(c: &Change) -> Html {
    let r = c.ratio();
    let text = if !r.is_finite() {
        "—".to_string()
    } else if (r - 1.0).abs() < 5e-4 {
        "=".to_string()
    } else {
        format!("×{r:.3}")
    };
    let better_up = c.figure == "tokens_per_s";
    let class = match (r > 1.0 + 5e-4, r < 1.0 - 5e-4) {
        (true, _) if better_up => "better",
        (_, true) if !better_up => "better",
        (true, _) | (_, true) => "worse",
        _ => "same",
    };
    html! { <td class={classes!("num", "step-ratio", class)}>{text}</td> }
}

/// The pin button, or the pinned step beside this one.
fn compare_section(
    pinned: Option<&Result<Pinned, String>>,
    on_pin: &Callback<Option<String>>,
    machine: &Config,
    input: &StepInput,
) -> Html {
    let pin = {
        let (on_pin, q) = (
            on_pin.clone(),
            crate::engine::step::link::full_query(machine, input),
        );
        Callback::from(move |_: MouseEvent| on_pin.emit(Some(q.clone())))
    };
    let unpin = {
        let on_pin = on_pin.clone();
        Callback::from(move |_: MouseEvent| on_pin.emit(None))
    };
    let Some(pinned) = pinned else {
        return html! {
            <p class="hint step-pin-line">
                <button id="step-pin" onclick={pin}>{t!("st-pin")}</button>{" "}{t!("st-pin-hint")}
            </p>
        };
    };
    let buttons = html! {
        <>
            <button id="step-repin" onclick={pin}>{t!("st-repin")}</button>{" "}
            <button id="step-unpin" onclick={unpin}>{t!("st-unpin")}</button>
        </>
    };
    let p = match pinned {
        Err(e) => {
            return html! {
                <div class="step-compare" id="step-compare">
                    <p class="inline-error" id="step-vs-error" role="alert">{t!("st-vs-bad", error = e.clone())}</p>
                    <p>{buttons}</p>
                </div>
            }
        }
        Ok(p) => p,
    };
    let differs = if p.differs.is_empty() {
        t!("st-vs-same")
    } else {
        p.differs
            .iter()
            .map(|(k, a, b)| {
                let show = |v: &str| {
                    if v.is_empty() {
                        t!("st-vs-default")
                    } else {
                        v.to_string()
                    }
                };
                format!("{k}: {} → {}", show(a), show(b))
            })
            .collect::<Vec<_>>()
            .join(" · ")
    };
    html! {
        <div class="step-compare" id="step-compare">
            <h3>{t!("st-vs-title")}</h3>
            <p class="hint" id="step-vs-differs">{differs}</p>
            <div class="step-table-wrap">
            <table class="step-table step-vs-table" id="step-vs-table">
                <thead><tr>
                    <th>{t!("st-vs-figure")}</th>
                    <th class="num">{t!("st-vs-a")}</th>
                    <th class="num">{t!("st-vs-b")}</th>
                    <th class="num">{t!("st-vs-ratio")}</th>
                </tr></thead>
                <tbody>
                { for p.changes.iter().map(|c| html! {
                    <tr data-figure={c.figure.clone()} data-a={c.a.to_string()} data-b={c.b.to_string()}>
                        <td>{figure_label(&c.figure)}</td>
                        <td class="num">{figure_value(&c.figure, c.a)}</td>
                        <td class="num">{figure_value(&c.figure, c.b)}</td>
                        {ratio_cell(c)}
                    </tr>
                }) }
                </tbody>
            </table>
            </div>
            <p>{buttons}</p>
        </div>
    }
}

/// Which input a form field sets.
#[derive(Clone, Copy)]
enum Field {
    Dp,
    Tp,
    Pp,
    Ep,
    Cp,
    SequenceParallel,
    AttentionFlops,
    Zero,
    Microbatches,
    Seq,
    Batch,
    Mfu,
    Peak,
    Compress,
}

/// `input` with field `f` set to `v`, or the field's name and what is
/// allowed.
fn set(input: &StepInput, f: Field, v: &str) -> Result<StepInput, String> {
    let v = v.trim();
    let mut next = input.clone();
    let whole = |name: &str| {
        v.parse::<u64>().map_err(|_| {
            t!(
                "st-bad-whole",
                field = name.to_string(),
                value = v.to_string()
            )
        })
    };
    match f {
        Field::Dp => next.dp = whole("dp")? as usize,
        Field::Tp => next.tp = whole("tp")? as usize,
        Field::Pp => next.pp = whole("pp")? as usize,
        Field::Ep => next.ep = whole("ep")? as usize,
        Field::Cp => next.cp = whole("cp")? as usize,
        Field::SequenceParallel => next.sequence_parallel = v == "1",
        Field::AttentionFlops => next.attention_flops = v == "1",
        Field::Zero => next.zero = whole("zero")?.min(255) as u8,
        Field::Microbatches => next.microbatches = whole("microbatches")? as usize,
        Field::Seq => next.seq = whole("seq")?,
        Field::Batch => next.batch = whole("batch")?,
        Field::Compress => {
            next.compress =
                Scheme::from_name(v).ok_or_else(|| t!("st-bad-compress", value = v.to_string()))?
        }
        Field::Mfu => {
            next.mfu = v.parse::<f64>().map_err(|_| {
                t!(
                    "st-bad-number",
                    field = "mfu".to_string(),
                    value = v.to_string()
                )
            })?
        }
        Field::Peak => {
            next.peak_tflops = if v.is_empty() {
                None
            } else {
                Some(v.parse::<f64>().map_err(|_| {
                    t!(
                        "st-bad-number",
                        field = "peak_tflops".to_string(),
                        value = v.to_string()
                    )
                })?)
            }
        }
    }
    Ok(next)
}

/// The training-step card. Its hooks stay here in a fixed order; the
/// callbacks, the form and the answer are made by the functions below, so
/// the card reads as its layout.
#[function_component(StepCard)]
pub fn step_card(p: &StepCardProps) -> Html {
    let _lang = super::lang::use_lang();
    let input = p.step.clone().unwrap_or_else(|| first_step(p.config.ranks));
    let form_error = use_state(|| None::<String>);
    // Until the user (or their link) sets the card, what the engine asks
    // for (a peak where none is cited) is guidance, not an error of theirs.
    let touched = p.step.is_some();
    let key = (machine_of(&p.config), input.clone());
    let ask = Some((
        p.config.clone(),
        Job::Step {
            input: input.clone(),
            vs: p.vs.clone(),
        },
    ));
    let answer = use_planned((key, p.vs.clone()), ask);
    let on_model = on_model_change(input.clone(), p.on_change.clone());
    let config_text = use_state(String::new);
    let on_config_text = {
        let config_text = config_text.clone();
        Callback::from(move |e: InputEvent| {
            config_text.set(e.target_unchecked_into::<HtmlTextAreaElement>().value())
        })
    };
    let on_config_use = on_config_apply(
        input.clone(),
        form_error.clone(),
        p.on_change.clone(),
        config_text.clone(),
    );
    let fields = FieldSink {
        input: input.clone(),
        err: form_error.clone(),
        on_change: p.on_change.clone(),
    };
    let i = &input;
    let body = step_body(form_error.as_ref(), answer.as_deref(), touched, p, i);
    html! {
        <section class="card step-card" id="step" aria-label={t!("st-title")}>
            <div class="card-head">
                <h2>{t!("st-title")}</h2>
                <span class="muted">{t!("st-sub", topo = p.config.topo.clone(), ranks = p.config.ranks)}</span>
            </div>
            {step_controls(i, &fields, on_model)}
            {config_details(&config_text, on_config_text, on_config_use)}
            <p class="hint" id="step-worked-case">{t!("st-worked-intro")}{" "}
                <a id="step-worked" href={worked_case_link()}>{t!("st-worked")}</a></p>
            {body}
        </section>
    }
}

/// The model picker's change: a preset replaces the model; picking the
/// pasted entry again keeps the pasted shape, since a pasted model stays
/// until a preset is picked.
fn on_model_change(input: StepInput, on_change: Callback<StepInput>) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let mut next = input.clone();
        let v = e.target_unchecked_into::<HtmlSelectElement>().value();
        // The pasted model stays until a preset is picked.
        if v != PASTED {
            next.model = v;
            next.shape = None;
        }
        on_change.emit(next);
    })
}

/// "Use this config": a pasted `config.json` becomes the step's model, or
/// the card says which field is wrong and what is allowed, instead of
/// timing a model the user did not mean.
fn on_config_apply(
    input: StepInput,
    err: UseStateHandle<Option<String>>,
    on_change: Callback<StepInput>,
    text: UseStateHandle<String>,
) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| match model::from_config_json(&text) {
        Ok(shape) => {
            err.set(None);
            on_change.emit(StepInput {
                model: PASTED.to_string(),
                shape: Some(shape),
                ..input.clone()
            });
        }
        Err((field, value, allowed)) => err.set(Some(t!(
            "st-config-bad",
            field = field,
            value = value,
            allowed = allowed
        ))),
    })
}

/// What every form field's change needs: the inputs it changes, where a
/// bad value is reported, and where a good one goes.
struct FieldSink {
    input: StepInput,
    err: UseStateHandle<Option<String>>,
    on_change: Callback<StepInput>,
}

impl FieldSink {
    /// The change handler of field `f`: reads the element the way the
    /// field is drawn (a select, a checkbox or a text box) and either
    /// passes the new inputs on or keeps them and shows why not, so a bad
    /// value never reaches the engine.
    fn on(&self, f: Field) -> Callback<Event> {
        let (input, err, on_change) =
            (self.input.clone(), self.err.clone(), self.on_change.clone());
        Callback::from(move |e: Event| {
            let v = match f {
                Field::Zero | Field::Compress => {
                    e.target_unchecked_into::<HtmlSelectElement>().value()
                }
                Field::SequenceParallel | Field::AttentionFlops => {
                    let on = e.target_unchecked_into::<HtmlInputElement>().checked();
                    (if on { "1" } else { "0" }).to_string()
                }
                _ => e.target_unchecked_into::<HtmlInputElement>().value(),
            };
            match set(&input, f, &v) {
                Ok(next) => {
                    err.set(None);
                    on_change.emit(next);
                }
                Err(m) => err.set(Some(m)),
            }
        })
    }
}

/// A labelled number box for field `f`; most of the form is these, so
/// they share one shape.
fn num_field(
    fields: &FieldSink,
    id: &'static str,
    label: String,
    value: String,
    f: Field,
    step: &'static str,
) -> Html {
    html! {
        <div class="field"><label for={id}>{label}</label>
            <input id={id} type="number" min="0" step={step} class="step-num" value={value} onchange={fields.on(f)} /></div>
    }
}

/// The form: the model, the parallel layout, the batch, the compute
/// figures and the compression, each field showing the current inputs.
fn step_controls(i: &StepInput, fields: &FieldSink, on_model: Callback<Event>) -> Html {
    let num = |id, label, value, f, step| num_field(fields, id, label, value, f, step);
    let peak = i.peak_tflops.map(|v| v.to_string()).unwrap_or_default();
    html! {
        <div class="what-if-controls step-controls">
            <div class="field"><label for="step-model">{t!("st-model")}</label>
                <select id="step-model" onchange={on_model}>
                    { for model::PRESETS.iter().map(|m| html! { <option value={*m} selected={i.shape.is_none() && i.model == *m}>{*m}</option> }) }
                    if i.shape.is_some() {
                        <option value={PASTED} selected=true>{t!("st-model-pasted")}</option>
                    }
                </select></div>
            {num("step-dp", "dp".to_string(), i.dp.to_string(), Field::Dp, "1")}
            {num("step-tp", "tp".to_string(), i.tp.to_string(), Field::Tp, "1")}
            {num("step-pp", "pp".to_string(), i.pp.to_string(), Field::Pp, "1")}
            {num("step-ep", "ep".to_string(), i.ep.to_string(), Field::Ep, "1")}
            <div class="field"><label for="step-cp" title={t!("st-cp-title")}>{"cp"}</label>
                <input id="step-cp" type="number" min="0" step="1" class="step-num" value={i.cp.to_string()} onchange={fields.on(Field::Cp)} /></div>
            <div class="field"><label for="step-zero">{"ZeRO"}</label>
                <select id="step-zero" onchange={fields.on(Field::Zero)}>
                    { for (0..=3u8).map(|z| html! { <option value={z.to_string()} selected={i.zero == z}>{z}</option> }) }
                </select></div>
            {num("step-microbatches", t!("st-f-microbatches"), i.microbatches.to_string(), Field::Microbatches, "1")}
            {num("step-seq", t!("st-f-seq"), i.seq.to_string(), Field::Seq, "1")}
            {num("step-batch", t!("st-f-batch"), i.batch.to_string(), Field::Batch, "1")}
            {num("step-mfu", t!("st-f-mfu"), i.mfu.to_string(), Field::Mfu, "0.01")}
            <div class="field"><label for="step-compress" title={t!("st-compress-title")}>{t!("st-compress")}</label>
                <select id="step-compress" onchange={fields.on(Field::Compress)}>
                    { for Scheme::ALL.iter().map(|z| html! { <option value={z.name()} selected={i.compress == *z}>{z.name()}</option> }) }
                </select></div>
            <div class="field"><label for="step-sp" title={t!("st-sp-title")}>
                <input id="step-sp" type="checkbox" checked={i.sequence_parallel} onchange={fields.on(Field::SequenceParallel)} />{" "}{t!("st-sp")}</label></div>
            <div class="field"><label for="step-attn" title={t!("st-attn-title")}>
                <input id="step-attn" type="checkbox" checked={i.attention_flops} onchange={fields.on(Field::AttentionFlops)} />{" "}{t!("st-attn")}</label></div>
            <div class="field"><label for="step-peak">{t!("st-peak")}</label>
                <input id="step-peak" type="number" min="0" step="any" class="step-num wide" placeholder={t!("st-peak-placeholder")}
                    value={peak} onchange={fields.on(Field::Peak)} /></div>
        </div>
    }
}

/// The folded box for pasting a model's `config.json`, for a model that is
/// not among the presets.
fn config_details(
    config_text: &str,
    on_config_text: Callback<InputEvent>,
    on_config_use: Callback<MouseEvent>,
) -> Html {
    html! {
        <details class="step-config" id="step-config">
            <summary>{t!("st-config-summary")}</summary>
            <p class="hint">{t!("st-config-hint")}</p>
            <textarea id="step-config-json" rows="6" spellcheck="false" lang="en"
                placeholder="{ \"hidden_size\": 4096, \"intermediate_size\": 14336, ... }"
                value={config_text.to_string()} oninput={on_config_text} />
            <button id="step-config-use" onclick={on_config_use}>{t!("st-config-use")}</button>
        </details>
    }
}

/// Under the form: a bad input's reason first (the last answer would not
/// match the form), else the step being timed, the engine's refusal (a
/// hint while the card is untouched, since the defaults are not the
/// user's mistake), or the report with its comparison.
fn step_body(
    form_error: Option<&String>,
    answer: Option<&Result<Answer, String>>,
    touched: bool,
    p: &StepCardProps,
    i: &StepInput,
) -> Html {
    match (form_error, answer) {
        (Some(e), _) => {
            html! { <p class="inline-error" id="step-error" role="alert">{e.clone()}</p> }
        }
        (None, None) => {
            html! { <p class="hint" id="step-pending" role="status">{t!("st-pending")}</p> }
        }
        (None, Some(Err(e))) if !touched => {
            html! { <p class="hint" id="step-error" role="status" lang="en">{e.clone()}</p> }
        }
        (None, Some(Err(e))) => {
            html! { <p class="inline-error" id="step-error" role="alert" lang="en">{e.clone()}</p> }
        }
        (None, Some(Ok(Answer::Step(r, pinned)))) => html! {
            <>
                {compare_section(pinned.as_deref(), &p.on_pin, &p.config, i)}
                {report(r, &p.config, i)}
            </>
        },
        (None, Some(Ok(_))) => html! {},
    }
}
