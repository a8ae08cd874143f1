//! Each rank's buffer as a row of chunk cells. A cell's colour says which
//! ranks' contributions the chunk holds (the symbolic trace of
//! `engine::verify`); its label is the real value of the chunk's first
//! element as the workers computed it.

use super::colors;
use super::format;
use super::run::RunView;
use crate::engine::plan::Plan;
use crate::engine::schedule::TransferKind;
use std::rc::Rc;
use yew::prelude::*;

/// Props of [`Buffers`].
#[derive(Properties, PartialEq)]
pub struct BuffersProps {
    /// The plan.
    pub plan: Rc<Plan>,
    /// The run (for sampled values).
    pub run: Rc<RunView>,
    /// Which state to show: after this many steps (index into the trace).
    pub shown: usize,
    /// The step whose transfers are marked (1-based; 0 = none).
    pub step: usize,
}

/// The buffer view with its legend.
#[function_component(Buffers)]
pub fn buffers(p: &BuffersProps) -> Html {
    let plan = &p.plan;
    let n = plan.config.ranks;
    let chunks = plan.drawn_schedule().chunks;
    let shown = p.shown.min(plan.steps());
    let Some(state) = plan.verified.as_ref().and_then(|v| v.trace.get(shown)) else {
        return html! {};
    };
    let step =
        (p.step > 0 && p.step <= plan.steps()).then(|| &plan.drawn_schedule().steps[p.step - 1]);
    let have_samples = p.run.samples.iter().any(Option::is_some);

    let header = html! {
        <div class="buf-row buf-head">
            <div class="buf-label"></div>
            { for (0..chunks).map(|c| {
                let b = plan.drawn_schedule().block_of(c);
                let what = match plan.config.op {
                    crate::engine::collective::Primitive::AlltoAll if b >= n => format!("receive slot for the piece from rank {}", b - n),
                    crate::engine::collective::Primitive::AlltoAll => format!("send piece for rank {b}"),
                    crate::engine::collective::Primitive::AlltoAllV if b >= n * n => format!("receive slot for rank {} -> rank {}", (b - n * n) / n, (b - n * n) % n),
                    crate::engine::collective::Primitive::AlltoAllV => format!("send piece rank {} -> rank {}", b / n, b % n),
                    crate::engine::collective::Primitive::SendRecv => (if b == 0 { "send block" } else { "receive block" }).to_string(),
                    _ => format!("block of rank {b}"),
                };
                // Above 16 chunks the columns are too narrow for every label:
                // every 8th is labelled (all keep their tooltip).
                let label = if chunks <= 16 || c % 8 == 0 { format!("c{c}") } else { String::new() };
                html! { <div class="buf-col" title={format!("chunk {c} = {what}")}>{label}</div> }
            }) }
        </div>
    };
    let rows = (0..n).map(|r| {
        let cells = (0..chunks).map(|c| {
            let set = &state[r][c];
            let sample = p.run.samples.get(r).and_then(|s| s.as_ref()).and_then(|s| s.get(shown)).and_then(|row| row.get(c).copied());
            let label = match sample {
                Some(Some(v)) => format::sample(v),
                Some(None) => "–".to_string(),
                None => "…".to_string(),
            };
            let mut class = classes!("cell");
            let mut style = String::new();
            match colors::cell(set, n) {
                None => class.push("empty"),
                Some((bg, fg)) => {
                    style = format!("background:{bg};color:{fg};");
                    if set.len() == n && n > 1 {
                        class.push("complete");
                    }
                }
            }
            let mut role = String::new();
            if let Some(s) = step {
                for t in &s.transfers {
                    if t.dst == r && t.dst_chunks().contains(&c) {
                        class.push(match t.kind {
                            TransferKind::Copy => "recv-copy",
                            TransferKind::Reduce => "recv-reduce",
                        });
                        role = format!(" · receives from {} ({})", plan.topology.node_label(t.src), if t.kind == TransferKind::Copy { "copy" } else { "reduce" });
                    }
                    if t.src == r && t.chunks().contains(&c) {
                        class.push("send");
                    }
                }
            }
            let is_output = plan.drawn_schedule().expected_after(r, c).is_some();
            // Scratch blocks carry partial results mid-run; fade them only
            // once the collective is done.
            if !is_output && shown == plan.steps() {
                class.push("scratch");
            }
            let title = format!(
                "{} chunk {c}: holds {} {}{}{}",
                plan.topology.node_label(r),
                if set.len() == 1 { "rank" } else { "ranks" },
                format::ranks(set.iter()),
                match sample {
                    Some(Some(v)) => format!(" · first element = {v}"),
                    _ => String::new(),
                },
                role
            ) + if is_output { "" } else { " · not part of this rank's output" };
            // One pip per rank; above 16 ranks the colour alone says it
            // (64 × 64 cells × 64 pips would be 262 144 elements).
            let pips = (0..if n <= 16 { n } else { 0 }).map(|q| {
                let on = set.contains(q);
                html! { <span class={classes!("pip", on.then_some("on"))} title={format!("rank {q}")}></span> }
            });
            html! {
                <div class={class} style={style} title={title} data-ranks={format::ranks(set.iter())}>
                    <span class="val">{label}</span>
                    <span class="pips">{ for pips }</span>
                </div>
            }
        });
        html! {
            <div class="buf-row" data-rank={r.to_string()}>
                <div class="buf-label"><span class="swatch" style={format!("background:{}", colors::rank(r))}></span>{plan.topology.node_label(r).to_string()}</div>
                { for cells }
            </div>
        }
    });
    let ramp = (2..n).map(|k| {
        let mut s = crate::engine::verify::RankSet::empty();
        for q in 0..k {
            s.insert(q);
        }
        let (bg, fg) = colors::cell(&s, n).unwrap_or_default();
        html! { <span class="chip" style={format!("background:{bg};color:{fg}")} title={format!("{k} of {n} ranks")}>{k}</span> }
    });
    html! {
        <section class="buffers" id="buffers" aria-label="Rank buffers">
            <div class="card-head">
                <h2>{"Buffers"}</h2>
                <span class="muted">
                    { if shown == 0 { "before the first step".to_string() } else { format!("after step {shown} of {}", plan.steps()) } }
                    {" · "}{format!("{} chunks of ~{} each", chunks, crate::engine::units::format_bytes(plan.config.bytes / chunks.max(1) as u64))}
                </span>
            </div>
            <div class="buf-grid" style={format!("--chunks:{chunks}")}>
                {header}
                { for rows }
            </div>
            <div class="legend" aria-label="Legend">
                <span class="legend-item">{"one rank's contribution: "}
                    { for (0..n).map(|r| html! { <span class="chip" style={format!("background:{};color:#fff", colors::rank(r))}>{r}</span> }) }
                </span>
                if n > 2 {
                    <span class="legend-item">{"partly reduced (k ranks): "}{ for ramp }</span>
                }
                <span class="legend-item"><span class="chip" style={format!("background:{};color:#fff", colors::COMPLETE)}>{"all"}</span>{" fully reduced"}</span>
                <span class="legend-item"><span class="chip empty"></span>{" empty"}</span>
                <span class="legend-item"><span class="chip outline-reduce"></span>{" receives (reduce) "}<span class="chip outline-copy"></span>{" receives (copy) "}<span class="chip outline-send"></span>{" sends"}</span>
            </div>
            <p class="hint">
                { if have_samples {
                    "Cell value: the chunk's first element as the rank workers computed it (real data). Colour and dots: whose contributions it holds (symbolic trace)."
                } else {
                    "Cell value: “…” until the rank workers report real data. Colour and dots: whose contributions the chunk holds (symbolic trace)."
                } }
                { if (0..plan.config.ranks).any(|r| (0..plan.drawn_schedule().chunks).any(|c| plan.drawn_schedule().expected_after(r, c).is_none())) { " After the last step, faded cells are scratch: not part of that rank's output." } else { "" } }
                { if matches!(plan.config.op, crate::engine::collective::Primitive::AlltoAll | crate::engine::collective::Primitive::AlltoAllV) { " The left half of each row is the send area (the piece for rank j), the right half the receive area (the piece from rank j); a rank's own piece stays in its send area." } else { "" } }
            </p>
        </section>
    }
}
