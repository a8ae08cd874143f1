//! The plan in words: the verdict (who chose what, why, and the time) and
//! the ranking's details.

use super::Decision;
use super::Method;
use super::Plan;
use super::Scope;
use super::BUILD_BUDGET_TRANSFERS;
use super::SIM_BUDGET_STEP_TRANSFERS;
use super::SIM_BUDGET_TRANSFERS;
use crate::engine::collective::Primitive;
use crate::engine::library::Library;
use crate::engine::quantization::Scheme;
use crate::engine::units::format_bytes;

/// "latency-bound: 62% of its time is per-message latency" or
/// "bandwidth-bound: 80% of its time is moving data", for the share of a
/// predicted time spent in per-message latency (0..=1).
pub fn bound_phrase(latency_share: f64) -> String {
    if latency_share >= 0.5 {
        format!(
            "latency-bound: {:.0}% of its time is per-message latency",
            latency_share * 100.0
        )
    } else {
        format!(
            "bandwidth-bound: {:.0}% of its time is moving data",
            (1.0 - latency_share) * 100.0
        )
    }
}

impl Plan {
    /// The plan with its words: the verdict (and under faults the
    /// slowdown and the model's fastest there), and for a detailed scope
    /// the ranking's details.
    pub(super) fn worded(mut self, scope: Scope) -> Plan {
        self.verdict = self.make_verdict();
        if let Some(f) = self.fault_words() {
            self.verdict.push_str(&f);
        }
        if scope.detailed() {
            self.details = self.make_details();
        }
        self
    }

    /// Under faults: the time against the healthy machine's, and the
    /// model's fastest when it is another algorithm.
    fn fault_words(&self) -> Option<String> {
        let (h, x) = (self.healthy.as_ref()?, self.slowdown()?);
        let mut s = format!(
            " With {}: {:.2} µs against {:.2} µs on the healthy machine (×{x:.2}).",
            self.config.faults.describe(),
            self.estimate.time_us,
            h.time_us
        );
        if let Some(best) = self
            .ranking
            .first()
            .filter(|b| b.algorithm != self.algorithm)
        {
            s.push_str(&format!(
                " Under the fault the model's fastest is {} ({:.2} µs).",
                best.algorithm,
                best.time_us()
            ));
        }
        Some(s)
    }

    /// The verdict: who chose what and why, and the predicted time.
    pub(super) fn make_verdict(&self) -> String {
        let c = &self.config;
        let share = if self.estimate.time_us > 0.0 {
            (self.latency_us / self.estimate.time_us).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let size = if c.primitive == Primitive::Barrier {
            String::new()
        } else {
            format!(" of {}", format_bytes(c.bytes))
        };
        let time = format!(
            "{:.2} µs for {}{size} on {} ranks",
            self.estimate.time_us,
            c.primitive.title(),
            c.ranks
        );
        match &self.decision {
            Decision::Library { why } => {
                let range = self.prediction.as_ref().map_or(String::new(), |a| {
                    format!(
                        ", 80 % range {:.2}–{:.2} µs{}",
                        a.low_us,
                        a.high_us,
                        a.library_us.map_or(String::new(), |own| format!(
                            "; NCCL's own model says {own:.2} µs"
                        ))
                    )
                });
                format!(
                    "{} runs {} here: {why}. Predicted {time} ({}{range}).",
                    self.library.title(),
                    self.algorithm,
                    bound_phrase(share)
                )
            }
            Decision::Measured { segment, drawn_why } => {
                let seg = self
                    .config
                    .profile
                    .as_ref()
                    .and_then(|p| p.segments.get(*segment));
                format!(
                    "{} as measured: the fitted curve{} gives {time}. The steps drawn are {}'s: {drawn_why}.",
                    self.library.title(),
                    seg.map_or(String::new(), |s| format!(
                        " (segment {} of the fit, {}–{}: α {:.2} µs, {:.2} GB/s)",
                        segment + 1,
                        format_bytes(s.first_bytes),
                        format_bytes(s.last_bytes),
                        s.alpha_us,
                        s.algbw_gbps
                    )),
                    self.algorithm
                )
            }
            Decision::Model { why } => format!(
                "{} is the model's fastest here ({why}). Predicted {time} ({}).",
                self.algorithm,
                bound_phrase(share)
            ),
            Decision::Fixed { auto_would } => {
                let runs = self.library.runs(self.algorithm, c.primitive);
                let not_lib = if runs || self.library == Library::Model {
                    String::new()
                } else {
                    format!(
                        " {} is not what {} runs for {}.",
                        self.algorithm,
                        self.library.title(),
                        c.primitive.title()
                    )
                };
                let would = match auto_would {
                    Some((a, _)) if *a != self.algorithm => format!(
                        " auto would run {a}{}.",
                        self.ranking
                            .iter()
                            .find(|r| r.algorithm == *a)
                            .and_then(|r| r.estimate.as_ref())
                            .map_or(String::new(), |e| format!(" ({:.2} µs)", e.time_us))
                    ),
                    Some(_) => " It is also auto's choice.".to_string(),
                    None => String::new(),
                };
                let derived = if self.config.profile.is_some() {
                    " Derived from the profile's link figures, not measured."
                } else {
                    ""
                };
                format!(
                    "Your choice: {}. Predicted {time} ({}).{derived}{not_lib}{would}",
                    self.algorithm,
                    bound_phrase(share)
                )
            }
        }
    }

    /// The ranking in words, one line per row, and how the headline was made.
    pub(super) fn make_details(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(n) = self
            .library
            .redop_note(self.config.primitive, self.config.redop)
        {
            out.push(format!("{n}."));
        }
        match self.method {
            Method::Bound => out.push(format!(
                "The schedule has more than {SIM_BUDGET_TRANSFERS} transfers to simulate (or {SIM_BUDGET_STEP_TRANSFERS} in one step), more than this model simulates link by link, so its time is the per-step bottleneck bound (largest latency + busiest link's bytes / bandwidth), here and in cclsim alike."
            )),
            Method::Measured { .. } => out.push(
                "The time is the fitted curve (cclsim fit), the library's own choice as measured; the animation follows the drawn schedule's modelled steps.".into(),
            ),
            Method::Predicted => {
                if let Some(a) = &self.prediction {
                    out.push(format!(
                        "The time is NCCL's tuning model calibrated to the machine ({} runs; {}): {}",
                        a.runs,
                        self.config
                            .profile
                            .as_ref()
                            .and_then(|p| p.physical.as_ref())
                            .map_or_else(|| "preset figures".to_string(), |c| c.basis.clone()),
                        a.note
                    ));
                }
            }
            _ => {}
        }
        if self.compressed.is_some() {
            out.push(
                "The headline includes compression; the ranking below is uncompressed.".into(),
            );
        } else if self.config.compress.scheme != Scheme::None {
            out.push(format!(
                "This message ({}) is below compress_min ({}): sent uncompressed.",
                crate::engine::units::format_bytes(self.config.bytes),
                crate::engine::units::format_bytes(self.config.compress_min)
            ));
        }
        for r in &self.ranking {
            let lib = if r.runs_in_library || self.library == Library::Model {
                String::new()
            } else {
                format!(" — not what {} runs", self.library.title())
            };
            let line = match &r.estimate {
                Some(e) => format!(
                    "{}: {} steps, {:.1} µs of latency → {:.2} µs, busbw {:.2} GB/s{}{lib}",
                    r.algorithm,
                    r.steps,
                    r.latency_us,
                    e.time_us,
                    e.busbw_gbps,
                    if r.method == Method::Bound { " (bound)" } else { "" }
                ),
                None => format!(
                    "{}: not estimated here (its schedule would exceed {BUILD_BUDGET_TRANSFERS} transfers){lib}",
                    r.algorithm
                ),
            };
            out.push(line);
        }
        out
    }
}
