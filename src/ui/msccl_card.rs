//! The "MSCCL" card: paste or load an MSCCL algorithm XML file or an
//! MSCCL++ execution plan ([`crate::engine::formats::msccl`], which tells
//! them apart by content), see it verified and estimated with its protocol
//! on the page's machine (h100-8 or a 910B cluster if it has too few
//! devices),
//! run it on the rank workers with every rank checked bit for bit; and
//! download the page's current schedule as MSCCL XML.
//!
//! Self-contained: its own state; the app passes only the current plan.

use crate::engine::check::Checker;
use crate::engine::cost::Slices;
use crate::engine::dtype::{DType, ReduceOp};
use crate::engine::formats::msccl::{self, Imported};
use crate::engine::plan::{self, Plan};
use crate::engine::topology::Topology;
use crate::engine::units::format_bytes;
use crate::engine::verify::{verify, Verified};
use crate::runtime::browser::codec::DoneBytes;
use crate::runtime::{self, RankOutput, RunRequest};
use std::cell::RefCell;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`MscclCard`].
#[derive(Properties, PartialEq)]
pub struct MscclCardProps {
    /// The page's current plan (its machine estimates the import; its
    /// schedule is what "Export" writes).
    pub plan: Option<Rc<Plan>>,
}

/// Message size the card estimates at.
const ESTIMATE_BYTES: u64 = 1 << 20;
/// About this many elements per rank in a card run.
const RUN_ELEMS: usize = 1 << 14;

/// A successful import.
#[derive(Clone)]
struct Done {
    imported: Rc<Imported>,
    verified: Rc<Verified>,
    topo: String,
    time_us: f64,
    busbw: f64,
    auto: Option<(String, f64)>,
}

/// The card's state.
#[derive(Clone, Default)]
enum Status {
    #[default]
    Empty,
    Error(String),
    Ok(Done),
}

/// The state of a run of the imported schedule.
#[derive(Clone, Default, PartialEq)]
enum RunStatus {
    #[default]
    Idle,
    Running,
    Verified(usize, usize, f64),
    Mismatch(String),
    Error(String),
}

fn import_text(text: &str, plan: Option<&Plan>) -> Status {
    let imp = match msccl::import(text) {
        Ok(x) => x,
        Err(e) => return Status::Error(e.to_string()),
    };
    let verified = match verify(&imp.schedule) {
        Ok(v) => v,
        Err(e) => return Status::Error(imp.explain(&e)),
    };
    let n = imp.schedule.ranks;
    // The page's machine when it has enough devices, else a preset.
    let page = plan
        .map(|p| p.topology.clone())
        .filter(|t| t.check_ranks(n).is_ok());
    let (topo, name) = match page {
        Some(t) => {
            let name = t.name.clone();
            (t, name)
        }
        None => {
            let name = if n <= 8 {
                "h100-8".to_string()
            } else {
                format!("910b-{}x8", n.div_ceil(8).max(2))
            };
            match Topology::preset(&name) {
                Ok(t) => (t, name),
                Err(e) => return Status::Error(e.to_string()),
            }
        }
    };
    let (e, _, _) = match plan::estimate(
        &imp.schedule,
        &msccl::protocol_topology(&topo, imp.protocol),
        ESTIMATE_BYTES,
        DType::Fp32,
        Slices::Auto,
    ) {
        Ok(x) => x,
        Err(e) => return Status::Error(e.to_string()),
    };
    // The machine's own choice for the same collective, if the page shows it.
    let auto = plan
        .filter(|p| {
            p.config.primitive == imp.schedule.primitive
                && p.config.ranks == n
                && p.config.bytes == ESTIMATE_BYTES
        })
        .map(|p| (p.algorithm.name().to_string(), p.estimate.time_us));
    Status::Ok(Done {
        verified: Rc::new(verified),
        imported: Rc::new(imp),
        topo: name,
        time_us: e.time_us,
        busbw: e.busbw_gbps,
        auto,
    })
}

/// The "MSCCL" card.
///
/// Only the hooks and the page layout live here; each callback and each
/// state's view is built by its own function so it can be read alone.
#[function_component(MscclCard)]
pub fn msccl_card(p: &MscclCardProps) -> Html {
    let text = use_state(String::new);
    let status = use_state(Status::default);
    let run = use_state(RunStatus::default);
    let export_error = use_state(|| None::<String>);

    let do_import = importer(status.clone(), run.clone(), p.plan.clone());
    let on_input = super::text_box::text_into(text.clone());
    let on_import = {
        let (text, f) = (text.clone(), do_import.clone());
        Callback::from(move |_: MouseEvent| f(&text))
    };
    let on_file = file_callback(text.clone(), do_import);
    let on_run = run_callback(status.clone(), run.clone());
    let on_export = export_callback(p.plan.clone(), export_error.clone());

    let (state, body) = status_view(&status);
    let run_line = run_view(&run);
    let can_run = matches!(&*status, Status::Ok(_)) && *run != RunStatus::Running;
    html! {
        <section class="card msccl" id="msccl" aria-label="MSCCL XML and MSCCL++ plans: import; MSCCL XML: export" data-state={state}>
            <div class="card-head">
                <h2>{"MSCCL"}</h2>
                <span class="muted">{"algorithm XML in and out"}</span>
            </div>
            <label class="sr-only" for="msccl-input">{"MSCCL XML or MSCCL++ plan"}</label>
            <textarea id="msccl-input" class="log-input" rows="6" spellcheck="false" value={(*text).clone()} oninput={on_input}
                placeholder={"<algo name=… proto=\"Simple\" nchannels=… nchunksperloop=… ngpus=… coll=\"allreduce\" inplace=\"1\">\n  <gpu id=\"0\" …><tb id=\"0\" send=… recv=… chan=…><step s=\"0\" type=\"s\" …/>"} />
            {body}
            {run_line}
            <div class="fit-actions">
                <button id="msccl-import" class="primary" onclick={on_import} title="Import, verify and estimate the pasted XML or JSON">{"Import & verify"}</button>
                <input id="msccl-file" class="sr-only" type="file" accept=".xml,.json,application/xml,text/xml,application/json" onchange={on_file} />
                <label class="secondary-button" for="msccl-file" title="Read an .xml or .json file and import it">{"Load file…"}</label>
                <button id="msccl-run" class="secondary-button" onclick={on_run} disabled={!can_run} title="Run the imported schedule on the rank workers and check every rank">{"Run on workers"}</button>
                <button id="msccl-export" class="secondary-button" onclick={on_export} disabled={p.plan.is_none()} title="Download the page's current schedule as MSCCL XML (re-imports to the same schedule)">{"Export current as MSCCL XML"}</button>
            </div>
            { if let Some(e) = &*export_error { html! { <p class="inline-error" id="msccl-export-error">{e.clone()}</p> } } else { html! {} } }
        </section>
    }
}

/// Imports a text into the card's state. Shared by the button and the file
/// picker so both clear a stale run result the same way before importing.
fn importer(
    status: UseStateHandle<Status>,
    run: UseStateHandle<RunStatus>,
    plan: Option<Rc<Plan>>,
) -> impl Fn(&str) + Clone + 'static {
    move |t: &str| {
        run.set(RunStatus::Idle);
        status.set(import_text(t, plan.as_deref()));
    }
}

/// Reads the chosen file, imports it and shows its text.
fn file_callback(
    text: UseStateHandle<String>,
    f: impl Fn(&str) + Clone + 'static,
) -> Callback<Event> {
    Callback::from(move |e: Event| {
        let Some(file) = super::text_box::chosen_file(&e) else {
            return;
        };
        let (text, f) = (text.clone(), f.clone());
        let promise = file.text();
        wasm_bindgen_futures::spawn_local(async move {
            if let Ok(v) = wasm_bindgen_futures::JsFuture::from(promise).await {
                let s = v.as_string().unwrap_or_default();
                f(&s);
                text.set(s);
            }
        });
    })
}

/// Starts a run of the imported schedule; does nothing until an import
/// succeeded, since there is nothing to run.
fn run_callback(
    status: UseStateHandle<Status>,
    run: UseStateHandle<RunStatus>,
) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        let Status::Ok(done) = (*status).clone() else {
            return;
        };
        let run = run.clone();
        run.set(RunStatus::Running);
        yew::platform::spawn_local(async move {
            let result = run_on_workers(done).await;
            run.set(result);
        });
    })
}

/// Runs the imported schedule on the rank workers and checks what every
/// rank wrote against the reference, so the card can claim bit-exactness.
async fn run_on_workers(done: Done) -> RunStatus {
    let s = done.imported.schedule.clone();
    let g = s.granule();
    let elems = (RUN_ELEMS / g).max(1) * g;
    let (dtype, op, seed) = (DType::Fp32, ReduceOp::Sum, 1u64);
    let req = RunRequest {
        schedule: s.clone(),
        dtype,
        op,
        seed,
        elems,
        timeout_ms: 30_000,
        compressed: None,
    };
    let outs: Rc<RefCell<Vec<(RankOutput, DoneBytes)>>> = Rc::default();
    let sink = outs.clone();
    let r = runtime::run(req, move |o, b| sink.borrow_mut().push((o, b))).await;
    match r {
        Err(e) => RunStatus::Error(e.to_string()),
        Ok(summary) => {
            let mut checker = Checker::new(&s, &done.verified, dtype, op, seed, elems);
            let outs = outs.borrow();
            let bad: Vec<String> = outs
                .iter()
                .map(|(o, b)| checker.check_rank(o.rank, b))
                .filter(|r| !r.ok())
                .map(|r| format!("rank {}: {} elements differ", r.rank, r.mismatched_elements))
                .collect();
            if outs.len() < s.ranks {
                RunStatus::Error(format!("only {} of {} ranks reported", outs.len(), s.ranks))
            } else if bad.is_empty() {
                RunStatus::Verified(outs.len(), elems, summary.wall_ms)
            } else {
                RunStatus::Mismatch(bad.join("; "))
            }
        }
    }
}

/// Downloads the page's schedule as MSCCL XML and shows why when it cannot.
fn export_callback(
    plan: Option<Rc<Plan>>,
    export_error: UseStateHandle<Option<String>>,
) -> Callback<MouseEvent> {
    Callback::from(move |_: MouseEvent| {
        let Some(plan) = plan.as_ref() else {
            return;
        };
        export_error.set(export_plan(plan).err());
    })
}

/// Writes the plan's schedule as an MSCCL XML download named after the
/// collective, algorithm and rank count, so several exports do not clash.
fn export_plan(plan: &Plan) -> Result<(), String> {
    // A model-only plan's schedule is streamed, not held.
    let Some(s) = plan.schedule.as_ref() else {
        return Err(format!(
            "{} ranks: MSCCL export takes 1..=64 (the schedule of {} on {} ranks is streamed through the estimate, not held)",
            plan.config.ranks, plan.algorithm, plan.config.ranks
        ));
    };
    msccl::export(s).map_err(|e| e.to_string()).and_then(|xml| {
        let name = format!(
            "{}_{}_{}gpu.xml",
            s.primitive.name(),
            s.algorithm.replace([':', '/', '\\'], "_"),
            s.ranks
        );
        super::download::download(&name, "application/xml", &xml)
    })
}

/// The card's `data-state` and the body under the text area for an import
/// state: a hint before any import, the error, or the import's summary.
fn status_view(status: &Status) -> (&'static str, Html) {
    match status {
        Status::Empty => (
            "idle",
            html! { <p class="hint">{"Paste an MSCCL algorithm file (<algo> <gpu> <tb> <step>, as msccl-tools writes and the MSCCL runtime reads) or an MSCCL++ execution plan (JSON, as the MSCCL++ DSL writes), or load one; up to 64 GPUs. Read: allreduce, reducescatter, allgather, broadcast, reduce, scatter, gather, alltoall."}</p> },
        ),
        Status::Error(e) => (
            "error",
            html! { <p class="inline-error" id="msccl-error" role="alert">{e.clone()}</p> },
        ),
        Status::Ok(d) => ("verified", summary_view(d)),
    }
}

/// What a successful import holds: the file's header, what verification
/// proved, the model's estimate (beside the machine's own choice when the
/// page shows the same collective) and the importer's notes.
fn summary_view(d: &Done) -> Html {
    let imp = &d.imported;
    let s = &imp.schedule;
    let net = s.network_transfer_count();
    let local = s.transfer_count() - net;
    let pr = &imp.program;
    html! {
        <div class="msccl-summary">
            <p><strong>{if pr.name.is_empty() { "(unnamed)".to_string() } else { pr.name.clone() }}</strong>
                {format!(" — {}{} on {} GPUs, proto {}, {} channel(s), {} thread blocks, {} {}", if imp.format == msccl::Format::MscclppPlan { "MSCCL++ plan, " } else { "" }, pr.coll, pr.ngpus, pr.proto, pr.nchannels, imp.thread_blocks, imp.xml_steps, if imp.format == msccl::Format::MscclppPlan { "ops in the plan" } else { "steps in the file" })}</p>
            <p id="msccl-verified">{format!("✓ verified: every output chunk holds what {} requires ({} IR steps, {} transfers, {} local copies/reduces, {} chunks + {} scratch)", s.primitive.title(), s.steps.len(), net, local, s.chunks, s.scratch)}</p>
            <p id="msccl-estimate">{format!("Model on {}: {} in {:.2} µs, busbw {:.1} GB/s", d.topo, format_bytes(ESTIMATE_BYTES), d.time_us, d.busbw)}
                { if let Some((a, t)) = &d.auto { format!(" · the machine's own choice ({a}): {t:.2} µs") } else { String::new() } }</p>
            { for imp.notes.iter().map(|n| html! { <p class="hint">{format!("Note: {n}")}</p> }) }
        </div>
    }
}

/// The result line of a run on the workers; nothing before the first run.
fn run_view(run: &RunStatus) -> Html {
    match run {
        RunStatus::Idle => html! {},
        RunStatus::Running => {
            html! { <p id="msccl-run-result" data-state="running">{"Running on the workers…"}</p> }
        }
        RunStatus::Verified(n, elems, ms) => html! {
            <p id="msccl-run-result" data-state="verified">{format!("✓ {n} ranks ran it on the workers ({elems} fp32 elements per message, {ms:.0} ms); every output equals the reference bit for bit")}</p>
        },
        RunStatus::Mismatch(m) => {
            html! { <p id="msccl-run-result" class="inline-error" data-state="mismatch">{m.clone()}</p> }
        }
        RunStatus::Error(m) => {
            html! { <p id="msccl-run-result" class="inline-error" data-state="error">{m.clone()}</p> }
        }
    }
}
