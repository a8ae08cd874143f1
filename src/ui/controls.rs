//! The configuration form. Every control is named after its URL key
//! (`#op`, `#algo`, `#root` (rooted primitives only), `#bytes`, `#dtype`,
//! `#redop`, `#ranks`, `#seed`, `#slices`; the size slider is
//! `#bytes-slider`). The
//! algorithm list shows only the algorithms that implement the primitive on
//! the chosen rank count (plus the current one, if a link asked for another).

use super::format;
use super::lang::use_lang;
use super::term::Term;
use crate::engine::algorithm::Algorithm;
use crate::engine::collective::Primitive;
use crate::engine::config::{AlgoChoice, Config, MAX_BYTES, MEASURED, MIN_BYTES};
use crate::engine::cost::Slices;
use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::plan::Plan;
use crate::t;
use std::rc::Rc;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Props of [`Controls`].
#[derive(Properties, PartialEq)]
pub struct ControlsProps {
    /// The configuration shown.
    pub config: Config,
    /// Its plan (for what auto chose), if it could be made.
    pub plan: Option<Rc<Plan>>,
    /// What `auto` would run instead of a fixed algorithm where the plan
    /// does not say (a drawn plan on a machine whose library has no rule:
    /// the model's fastest comes with the planner's ranking,
    /// `Ranked::decision`).
    #[prop_or_default]
    pub ranked_auto: Option<Algorithm>,
    /// The typed size, as typed.
    pub bytes_text: AttrValue,
    /// Why the typed size was refused.
    pub bytes_error: Option<AttrValue>,
    /// Why the typed seed was refused.
    pub seed_error: Option<AttrValue>,
    /// A new configuration.
    pub on_change: Callback<Config>,
    /// The typed size changed (not applied yet).
    pub on_bytes_text: Callback<String>,
    /// Apply the typed size (Enter or leaving the field).
    pub on_bytes_commit: Callback<()>,
    /// Apply a typed seed.
    pub on_seed: Callback<String>,
}

fn select_value(e: &Event) -> String {
    e.target_unchecked_into::<HtmlSelectElement>().value()
}

/// Makes every `<select>` under `root` show the option its render marked
/// `selected`. The `selected` attribute only picks an option until the
/// user has picked one: from then on the browser keeps the user's pick
/// whatever the attributes say, so after Back, a link or a lesson stop
/// the list showed an old value while another ran, and picking the value
/// it showed fired no change. Setting the select's `value` property is
/// what the browser always obeys.
pub fn sync_selects(root: &web_sys::Element) {
    let Ok(selects) = root.query_selector_all("select") else {
        return;
    };
    for i in 0..selects.length() {
        let Some(select) = selects
            .get(i)
            .and_then(|n| wasm_bindgen::JsCast::dyn_into::<HtmlSelectElement>(n).ok())
        else {
            continue;
        };
        let Ok(Some(option)) = select.query_selector("option[selected]") else {
            continue;
        };
        let want = option.get_attribute("value").unwrap_or_default();
        if select.value() != want {
            select.set_value(&want);
        }
    }
}

/// A ref for a component's root element whose `<select>`s are kept
/// showing what was rendered ([`sync_selects`]) after every render.
#[hook]
pub fn use_synced_selects() -> NodeRef {
    let root = use_node_ref();
    {
        let root = root.clone();
        use_effect(move || {
            if let Some(el) = root.cast::<web_sys::Element>() {
                sync_selects(&el);
            }
        });
    }
    root
}

/// What a field's handler needs to change the configuration: the App's
/// configuration of the moment (a handler may fire before the controls see
/// the last change, [`super::latest`]) and where the changed one goes.
struct Setter {
    latest: super::latest::Latest,
    on_change: Callback<Config>,
}

impl Setter {
    /// A `<select>`'s change handler: `f` applies the picked value to the
    /// configuration of the moment, and the result is the new configuration.
    fn select(&self, f: fn(&mut Config, &str)) -> Callback<Event> {
        let (c, cb) = (self.latest.clone(), self.on_change.clone());
        Callback::from(move |e: Event| {
            let mut next = c.get();
            f(&mut next, &select_value(&e));
            cb.emit(next);
        })
    }
}

/// The configuration form. The body holds the hooks (the nodes field's
/// refusal is its state) and the order of the fields; each field, with
/// its handler, is made by its own function.
#[function_component(Controls)]
pub fn controls(p: &ControlsProps) -> Html {
    let _lang = use_lang();
    let c = &p.config;
    let latest = super::latest::use_latest(c);
    let root = use_synced_selects();
    let set = Setter {
        latest,
        on_change: p.on_change.clone(),
    };
    let devices = c.devices().unwrap_or(8);
    let per_node = gpus_per_node(c);
    let nodes_error = use_state(|| None::<String>);
    html! {
        <section class="card controls" id="controls" ref={root} aria-label={t!("controls-label")}>
            <div class="bar">
            { primitive_field(c, &set) }
            { algo_field(c, &set) }
            if c.primitive.rooted() {
                { root_field(c, &set) }
            }
            { size_field(p, &set) }
            { dtype_field(c, &set) }
            { redop_field(c, &set) }
            { ranks_field(c, devices, &set) }
            if let Some(g) = per_node {
                { nodes_field(c, g, devices, &nodes_error, &set) }
            }
            { seed_field(p) }
            { topology_field(c, &set) }
            { slices_field(c, &set) }
            </div>
            { bar_notes(p, &nodes_error, per_node) }
        </section>
    }
}

/// The measured machine's GPUs per node: sizing a cluster is asked in
/// nodes, and its rank counts (540 nodes × 4) are not in the ranks list.
fn gpus_per_node(c: &Config) -> Option<usize> {
    (c.topo == MEASURED)
        .then(|| c.profile.as_ref()?.physical.as_ref())
        .flatten()
        .map(|cal| cal.hardware.gpus_per_node.max(1))
}

/// The primitive list. A fixed algorithm that does not implement the new
/// primitive falls back to auto, so the configuration stays one that runs.
fn primitive_field(c: &Config, set: &Setter) -> Html {
    let on_op = set.select(|c, v| {
        if let Some(x) = Primitive::from_name(v) {
            c.primitive = x;
            if let AlgoChoice::Fixed(a) = c.algo {
                if !a.supports(x, c.ranks) {
                    c.algo = AlgoChoice::Auto;
                }
            }
        }
    });
    html! {
        <div class="field">
            <label for="op">{t!("f-primitive")}</label>
            <select id="op" onchange={on_op}>
                { for Primitive::ALL.iter().map(|x| html! {
                    <option value={x.name()} selected={*x == c.primitive}>{x.title()}</option>
                }) }
            </select>
        </div>
    }
}

/// The algorithm list: auto, the algorithms that implement the primitive
/// on this rank count, and the current one if a link asked for another.
fn algo_field(c: &Config, set: &Setter) -> Html {
    let on_algo = set.select(|c, v| {
        if let Some(x) = AlgoChoice::from_name(v) {
            c.algo = x
        }
    });
    html! {
        <div class="field">
            <label for="algo">{t!("f-algorithm")}</label>
            <select id="algo" onchange={on_algo}>
                <option value="auto" selected={c.algo == AlgoChoice::Auto}>{"auto"}</option>
                { for Algorithm::ALL.iter().filter(|a| a.supports(c.primitive, c.ranks) || c.algo == AlgoChoice::Fixed(**a)).map(|a| html! {
                    <option value={a.name()} selected={c.algo == AlgoChoice::Fixed(*a)}>{a.name()}</option>
                }) }
            </select>
        </div>
    }
}

/// A rooted primitive's root: one of the ranks, so a pick past the last
/// rank is ignored.
fn root_field(c: &Config, set: &Setter) -> Html {
    let on_root = set.select(|c, v| {
        if let Ok(x) = v.parse::<usize>() {
            if x < c.ranks {
                c.root = x
            }
        }
    });
    html! {
        <div class="field">
            <label for="root">{t!("f-root")}</label>
            <select id="root" onchange={on_root}>
                { for (0..c.ranks).map(|r| html! {
                    <option value={r.to_string()} selected={r == c.root}>{r}</option>
                }) }
            </select>
        </div>
    }
}

/// The size: a slider over the powers of two and a field for any size.
/// The field's text is the App's until it is applied (Enter or leaving
/// it), so a half-typed size is not run.
fn size_field(p: &ControlsProps, set: &Setter) -> Html {
    let c = &p.config;
    let slider_pos = (c.bytes.max(1) as f64).log2().round().clamp(10.0, 34.0);
    let on_bytes_input = {
        let cb = p.on_bytes_text.clone();
        Callback::from(move |e: InputEvent| {
            cb.emit(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    let on_bytes_change = {
        let cb = p.on_bytes_commit.clone();
        Callback::from(move |_: Event| cb.emit(()))
    };
    let on_bytes_key = {
        let cb = p.on_bytes_commit.clone();
        Callback::from(move |e: KeyboardEvent| {
            if e.key() == "Enter" {
                e.prevent_default();
                cb.emit(());
            }
        })
    };
    html! {
        <div class="field size">
            <label for="bytes">{t!("f-size")}{" "}<span class="muted">{t!("f-size-per-rank")}</span></label>
            <div class="size-inputs">
                <input id="bytes-slider" type="range" min="10" max="34" step="1"
                    value={slider_pos.to_string()} oninput={size_slider_handler(set)}
                    title="1 KiB … 16 GiB (log scale)"
                    aria-label={t!("f-size-slider")}
                    aria-valuetext={crate::engine::units::format_bytes(c.bytes)} />
                <input id="bytes" type="text" value={p.bytes_text.clone()} oninput={on_bytes_input}
                    onchange={on_bytes_change} onkeydown={on_bytes_key} spellcheck="false"
                    title={t!("f-size-typed")} aria-label={t!("f-size-typed")}
                    class={classes!(p.bytes_error.is_some().then_some("invalid"))}
                    aria-invalid={p.bytes_error.is_some().to_string()} aria-describedby="bytes-error" />
            </div>
        </div>
    }
}

/// The size slider's handler: its position is a power of two, kept within
/// the sizes a plan can be made for.
fn size_slider_handler(set: &Setter) -> Callback<InputEvent> {
    let (c, cb) = (set.latest.clone(), set.on_change.clone());
    Callback::from(move |e: InputEvent| {
        let v: f64 = e
            .target_unchecked_into::<HtmlInputElement>()
            .value()
            .parse()
            .unwrap_or(24.0);
        let mut next = c.get();
        next.bytes = (2f64.powf(v.round()) as u64).clamp(MIN_BYTES, MAX_BYTES);
        cb.emit(next);
    })
}

/// The data type. The size is cut to a whole number of elements, as a
/// buffer holds no part of one.
fn dtype_field(c: &Config, set: &Setter) -> Html {
    let on_dtype = set.select(|c, v| {
        if let Some(x) = DType::from_name(v) {
            c.dtype = x;
            let es = x.size_bytes() as u64;
            c.bytes -= c.bytes % es;
        }
    });
    html! {
        <div class="field">
            <label for="dtype">{t!("f-dtype")}</label>
            <select id="dtype" onchange={on_dtype}>
                { for DType::ALL.iter().map(|d| html! {
                    <option value={d.name()} selected={*d == c.dtype}>{d.name()}</option>
                }) }
            </select>
        </div>
    }
}

/// The reduction operator: shown but disabled, with a badge saying why,
/// for a primitive that does not reduce, so the form keeps its shape.
fn redop_field(c: &Config, set: &Setter) -> Html {
    let reduces = c.primitive.reduces();
    let on_redop = set.select(|c, v| {
        if let Some(x) = ReduceOp::from_name(v) {
            c.redop = x
        }
    });
    html! {
        <div class={classes!("field", (!reduces).then_some("na"))}>
            <label for="redop">{t!("f-redop")}{ if reduces { html!{} } else { html!{<span class="badge">{t!("f-na")}</span>} } }</label>
            <select id="redop" onchange={on_redop} disabled={!reduces}
                title={if reduces { String::new() } else { t!("f-redop-na", op = c.primitive.title()) }}>
                { for ReduceOp::ALL.iter().map(|o| html! {
                    <option value={o.name()} selected={*o == c.redop}>{
                        if *o == ReduceOp::Avg { t!("redop-avg-option") } else { o.name().to_string() }
                    }</option>
                }) }
            </select>
        </div>
    }
}

/// The rank count, among those the topology's `devices` offer. The root
/// is moved onto the last rank when fewer ranks leave it out.
fn ranks_field(c: &Config, devices: usize, set: &Setter) -> Html {
    let on_ranks = set.select(|c, v| {
        if let Ok(x) = v.parse::<usize>() {
            c.ranks = x;
            c.root = c.root.min(x.saturating_sub(1));
        }
    });
    html! {
        <div class="field">
            <label for="ranks">{t!("f-ranks")}</label>
            <select id="ranks" onchange={on_ranks}>
                { for super::topologies::rank_choices(devices, c.ranks).into_iter().map(|n| html! {
                    <option value={n.to_string()} selected={n == c.ranks}>{n}</option>
                }) }
            </select>
        </div>
    }
}

/// The measured machine's node count (`g` GPUs a node, `devices` in all):
/// typed, as its rank counts are not in the ranks list, and refused with a
/// reason kept in `nodes_error` until a count in range is typed.
fn nodes_field(
    c: &Config,
    g: usize,
    devices: usize,
    nodes_error: &UseStateHandle<Option<String>>,
    set: &Setter,
) -> Html {
    html! {
        <div class="field nodes">
            <label for="nodes">{t!("f-nodes", g = g)}</label>
            <input id="nodes" type="number" inputmode="numeric" min={if g == 1 { "2" } else { "1" }}
                max={(devices / g).to_string()} step="1"
                value={if c.ranks % g == 0 { (c.ranks / g).to_string() } else { String::new() }}
                onchange={nodes_handler(g, nodes_error, set)} title={t!("f-nodes-title", g = g)}
                class={classes!(nodes_error.is_some().then_some("invalid"))}
                aria-invalid={nodes_error.is_some().to_string()} aria-describedby="nodes-error" />
        </div>
    }
}

/// The node count's handler: a count from the least a run needs (two
/// ranks) to the machine's nodes sets the ranks; anything else is refused
/// with the range, and the configuration is left as it was.
fn nodes_handler(
    g: usize,
    nodes_error: &UseStateHandle<Option<String>>,
    set: &Setter,
) -> Callback<Event> {
    let (c, cb, err) = (
        set.latest.clone(),
        set.on_change.clone(),
        nodes_error.clone(),
    );
    Callback::from(move |e: Event| {
        let text = e.target_unchecked_into::<HtmlInputElement>().value();
        let mut next = c.get();
        let most = next.devices().unwrap_or(g) / g;
        let least = if g == 1 { 2 } else { 1 };
        match text.trim().parse::<usize>() {
            Ok(n) if (least..=most).contains(&n) => {
                err.set(None);
                next.ranks = n * g;
                next.root = next.root.min(next.ranks - 1);
                cb.emit(next);
            }
            _ => err.set(Some(t!(
                "nodes-bad",
                text = text.chars().take(40).collect::<String>(),
                least = least,
                most = most,
                g = g
            ))),
        }
    })
}

/// The seed, typed; the App checks and applies it ([`ControlsProps::on_seed`]).
fn seed_field(p: &ControlsProps) -> Html {
    let c = &p.config;
    let on_seed = {
        let cb = p.on_seed.clone();
        Callback::from(move |e: Event| {
            cb.emit(e.target_unchecked_into::<HtmlInputElement>().value())
        })
    };
    html! {
        <div class="field">
            <label for="seed" class="sr-only">{t!("f-seed")}</label>
            <Term tip={t!("f-seed-title")}><span class="label">{t!("f-seed")}</span></Term>
            <input id="seed" type="text" inputmode="numeric" value={c.seed.to_string()} onchange={on_seed}
                class={classes!("seed", p.seed_error.is_some().then_some("invalid"))} />
        </div>
    }
}

/// The topology list: the offered topologies, the measured machine and a
/// pasted custom topology when the configuration has them, and a link to
/// the card where one's own is written.
fn topology_field(c: &Config, set: &Setter) -> Html {
    let on_topo = {
        let (c, cb) = (set.latest.clone(), set.on_change.clone());
        Callback::from(move |e: Event| {
            cb.emit(super::topologies::with_topology(
                &c.get(),
                &select_value(&e),
            ))
        })
    };
    html! {
        <div class="field">
            <div class="field-head"><label for="topo">{t!("f-topology")}</label><a class="field-link" href="#custom-topology" title={t!("f-your-own-title")}>{t!("f-your-own")}</a></div>
            <select id="topo" onchange={on_topo} title="rank r runs on device r">
                { for super::topologies::offered(&c.topo).into_iter().map(|(name, text)| html! {
                    <option selected={name == c.topo} value={name.clone()}>{text}</option>
                }) }
                if let (true, Some(prof)) = (c.topo == MEASURED, &c.profile) {
                    <option value={MEASURED} selected={true}>{measured_option(prof)}</option>
                }
                if let Some(t) = &c.custom {
                    <option value="custom" selected={c.topo == "custom"}>
                        {format!("custom — {}: {}", t.name.clone().unwrap_or_else(|| "pasted JSON".into()), t.summary())}
                    </option>
                }
            </select>
        </div>
    }
}

/// The slice count: auto, the powers of two up to MAX_SLICES, and a
/// linked other value, so a link's count is shown rather than lost.
fn slices_field(c: &Config, set: &Setter) -> Html {
    let on_slices = set.select(|c, v| {
        if let Ok(x) = Slices::parse(v) {
            c.slices = x
        }
    });
    let mut slice_choices: Vec<Slices> = std::iter::once(Slices::Auto)
        .chain((0..=8).map(|i| Slices::Fixed(1 << i)))
        .collect();
    if !slice_choices.contains(&c.slices) {
        slice_choices.push(c.slices);
    }
    html! {
        <div class="field">
            <label for="slices" class="sr-only">{t!("f-slices")}</label>
            <Term tip={t!("f-slices-title")}><span class="label">{t!("f-slices")}</span></Term>
            <select id="slices" onchange={on_slices}>
                { for slice_choices.into_iter().map(|x| html! {
                    <option value={x.name()} selected={x == c.slices}>{x.name()}</option>
                }) }
            </select>
        </div>
    }
}

/// The notes under the fields: a refused size, node count or seed in
/// their place (the size's place otherwise says the size in words), what
/// auto chose, the library's missing operator, HCCL's note on the
/// primitive and what the algorithm does.
fn bar_notes(p: &ControlsProps, nodes_error: &Option<String>, per_node: Option<usize>) -> Html {
    let c = &p.config;
    let summary = p
        .plan
        .as_ref()
        .map(|pl| algo_summary(pl))
        .unwrap_or_default();
    html! {
        <div class="bar-notes">
            if let Some(err) = &p.bytes_error {
                <p class="inline-error" id="bytes-error" role="alert">{err.clone()}</p>
            } else {
                <p class="hint" id="bytes-error">{t!("size-is", bytes = format::bytes_long(c.bytes))}{" "}
                    { c.model_only().map(|m| t!("model-only-why", why = format::model_only(m))).unwrap_or_default() }
                </p>
            }
            if let (Some(err), Some(_)) = (nodes_error, per_node) {
                <p class="inline-error" id="nodes-error" role="alert">{err.clone()}</p>
            }
            if let Some(err) = &p.seed_error {
                <p class="inline-error" id="seed-error" role="alert">{err.clone()}</p>
            }
            {auto_note(p)}
            {redop_note(p)}
            if let Some(note) = c.primitive.hccl_note() {
                <p class="hint" id="hccl-note" lang="en">{note}</p>
            }
            <p class="hint algo-summary">{summary}</p>
        </div>
    }
}

/// What auto runs and why (the library's rule, a measured table or the
/// model), or, for a fixed algorithm, what auto would run instead, so a
/// fixed pick can be weighed against it.
fn auto_note(p: &ControlsProps) -> Html {
    let c = &p.config;
    match (&p.plan, c.algo) {
        (Some(plan), AlgoChoice::Auto) => html! {
            <p class="hint" id="auto-choice">
                {t!("auto-is")}{" "}<strong>{auto_name(plan)}</strong>{" "}
                {t!("auto-at", why = match plan.decision {
                    crate::engine::plan::Decision::Library { .. } => t!("auto-library", lib = plan.library.title()),
                    crate::engine::plan::Decision::Measured { .. } => t!("auto-measured", lib = plan.library.title()),
                    _ => t!("auto-model"),
                }, bytes = crate::engine::units::format_bytes(c.bytes), ranks = c.ranks, device = plan.library.device_word())}
            </p>
        },
        (Some(plan), AlgoChoice::Fixed(a)) => match plan.auto_algorithm().or(p.ranked_auto) {
            Some(x) if x != a => html! {
                <p class="hint" id="auto-choice">{t!("auto-would", algo = x.name())}</p>
            },
            _ => html! {},
        },
        _ => html! {},
    }
}

/// The library's own op list (engine::library::Library::has_redop): HCCL
/// and MPI have no avg, so the page says whose arithmetic it runs.
fn redop_note(p: &ControlsProps) -> Html {
    let c = &p.config;
    match &p.plan {
        Some(plan) if c.primitive.reduces() && !plan.library.has_redop(c.redop) => html! {
            <p class="hint notice" id="redop-note">{t!("redop-lacks", lib = plan.library.title(), op = c.redop.name())}</p>
        },
        _ => html! {},
    }
}

/// The measured machine in the topology list: what the log ran on.
fn measured_option(p: &crate::engine::calibrate::Profile) -> String {
    match &p.physical {
        Some(cal) => {
            let hw = &cal.hardware;
            t!(
                "topo-measured",
                nodes = cal.measured_nodes(),
                g = hw.gpus_per_node,
                accelerator = hw.accelerator.clone(),
                ranks = p.ranks
            )
        }
        None => t!(
            "topo-measured-links",
            ranks = p.ranks,
            tool = p.tool.to_string()
        ),
    }
}

/// The algorithm `auto` runs, in the library's words: NCCL's
/// (algorithm/protocol) and the schedule that draws it where our name
/// differs (`NVLS/Simple, drawn as mesh`), else our algorithm's name.
fn auto_name(plan: &Plan) -> String {
    match nccl_run(plan) {
        Some(runs) => t!(
            "auto-nccl",
            runs = runs.to_string(),
            algo = plan.algorithm.name()
        ),
        None => plan.algorithm.name().to_string(),
    }
}

/// The line under the algorithm control: what the algorithm does. Where
/// NCCL runs NVLS, whose reduction happens in the switch, the drawn mesh's
/// HCCL description would mislead; NCCL's own is given instead.
fn algo_summary(plan: &Plan) -> String {
    use crate::engine::library::nccl::NcclAlgo;
    let algo = plan.prediction.as_ref().and_then(|a| a.algo);
    match (nccl_run(plan), algo) {
        (Some(runs), Some(NcclAlgo::Nvls)) => t!("algo-nvls", runs = runs.to_string()),
        _ => crate::i18n::tr(&format!("algo-{}", plan.algorithm.name())),
    }
}

/// NCCL's (algorithm/protocol) of an `auto` plan on an NCCL machine.
fn nccl_run(plan: &Plan) -> Option<&str> {
    match (plan.config.algo, &plan.prediction) {
        (AlgoChoice::Auto, Some(a)) if a.algo.is_some() => Some(a.runs.as_str()),
        _ => None,
    }
}
