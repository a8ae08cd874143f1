//! The page (yew, wasm only).
//!
//! One run of the page: the URL (or the controls) give an
//! [`engine::config::Config`](crate::engine::config::Config); the engine's
//! planning pipeline ([`crate::engine::plan`], the same one `cclsim` calls)
//! turns it into a machine, an algorithm, a verified schedule and a cost
//! estimate (no workers); [`app`] then runs the schedule on the rank
//! workers ([`crate::runtime::run`]) and checks every rank's output.
//!
//! | file | what it draws or does |
//! |---|---|
//! | [`app`] | the root component: state, messages, runs, playback clock |
//! | [`deferred`] | drawing a heavy part (the Gantt chart, the step log of a many-rank page) a few event-loop tasks later |
//! | [`motion`] | the playback clock's animation frames and the progress context only moving parts read |
//! | [`run`] | the state of one worker run (reports, samples, errors) |
//! | [`url`] | reading and writing the query string, the share link |
//! | [`controls`] | the configuration form |
//! | [`latest`] | the configuration as of now, which the controls' callbacks start from (`use_latest`) |
//! | [`topology_view`] | the SVG of devices, links and moving chunk tokens |
//! | [`playback`] | play / pause / step / speed and the step described in words |
//! | [`describe`] | step descriptions in words |
//! | [`buffers`] | each rank's buffer as coloured chunk cells |
//! | [`buffer_canvas`] | above 16 ranks, the buffer grid on one canvas, its cursor in words |
//! | [`step_log`] | every transfer of every step, clickable |
//! | [`estimate_panel`] | the cost model's prediction, ranking and sources |
//! | [`prediction`] | on an NCCL machine: the 80 % range, what NCCL runs and believes, measured at / predicted for |
//! | [`result_panel`] | the run's outcome (`#run-result`, the tooling hook) |
//! | [`topology_layout`] | where nodes go: circle, HCCS groups, server boxes, collapsed servers |
//! | [`topologies`] | the topologies and rank counts the controls offer |
//! | [`gantt`] | the modelled run as a Gantt chart (links or ranks × time), its Perfetto trace download |
//! | [`download`] | saving text the page made as a file |
//! | [`determinism_card`] | two reduction orders of the same inputs compared: differing elements, ulps, an element's two orders |
//! | [`chart`] | busbw vs size for every algorithm (plotters SVG), the calibrated prediction's band, measured overlay |
//! | [`planned`] | the cards' hook onto the planner worker (`use_planned`) |
//! | [`log_import`] | paste / drop a log, fit a profile, switch the model to it |
//! | [`step_card`] | one training step of a model on a parallel layout: its collectives, compute, exposed communication, step time, a link per call |
//! | [`tuner_card`] | paste / drop a tuner file, what it makes the library run at each size beside the model |
//! | [`custom_topology`] | paste / load a topology as JSON, validate it, use it |
//! | [`learn`] | learn mode: the lesson list, a stop's narration, look, question |
//! | [`lang`] | the page's language as a context (`use_lang`) |
//! | [`colors`] | rank colours and chunk-cell colours |
//! | [`format`] | number and size formatting |
//! | [`term`] | a term of the field explained on hover and on focus |

pub mod app;
pub mod buffer_canvas;
pub mod buffers;
pub mod chart;
pub mod colors;
pub mod controls;
pub mod custom_topology;
pub mod deferred;
pub mod describe;
pub mod determinism_card;
pub mod download;
pub mod estimate_panel;
pub mod faults_card;
pub mod format;
pub mod gantt;
pub mod lang;
pub mod latest;
pub mod learn;
pub mod log_import;
pub mod motion;
pub mod msccl_card;
pub mod planned;
pub mod playback;
pub mod prediction;
pub mod result_panel;
pub mod run;
pub mod step_card;
pub mod step_log;
pub mod term;
pub mod text_box;
pub mod topologies;
pub mod topology_layout;
pub mod topology_view;
pub mod tune_card;
pub mod tuner_card;
pub mod url;
pub mod what_if;

/// Mounts the page on `<body>`, in the event-loop task after this one.
/// This one also holds the end of the module's streaming compilation:
/// in a trace of the default page, 32 ms of `v8.wasm.compileConsume` and
/// 73 ms of first render (lazy compilation of 419 functions included)
/// made one 111 ms task, over the page's bound of 100 ms a task.
pub fn start() {
    console_error_panic_hook::set_once();
    gloo_timers::callback::Timeout::new(0, || {
        yew::Renderer::<app::App>::new().render();
    })
    .forget();
}
