//! The guided lessons, as data: one JSON file per lesson in `lessons/`
//! (its stops: a configuration as a link query, the animation step to show,
//! what to look at), its words in `locales/<lang>/lessons.ftl` under
//! `lesson-<id>-…` ids. Pure Rust: the page renders them (`ui::learn`),
//! `tests/lessons.rs` checks every stop's link decodes without a notice,
//! plans, and its highlight exists in that plan.
//!
//! Message ids of a lesson `id` with stops `1..=n`:
//! `lesson-<id>-title`, `lesson-<id>-intro`, and per stop `k`:
//! `lesson-<id>-<k>-say` (the narration), `-look` (what to look at, in
//! words), `-ask` (the question), `-answer`.

use serde::Deserialize;
use std::sync::OnceLock;

/// One lesson: an ordered list of stops.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    /// The `lesson=` link value and the message-id prefix (`ring`).
    pub id: String,
    /// 3..=6 stops.
    pub stops: Vec<Stop>,
}

/// One stop of a lesson.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stop {
    /// The configuration, as a link query (`op=allreduce&algo=ring&…`),
    /// decoded by [`crate::engine::config::Config::from_query`].
    pub query: String,
    /// The animation step shown (0 = before the first step; clamped to the
    /// schedule's steps).
    #[serde(default)]
    pub step: usize,
    /// What the page highlights.
    pub look: Look,
}

/// What a stop highlights.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Look {
    /// A chunk cell of the buffer grid (`#buffers`): `rank`'s chunk `chunk`.
    Cell {
        /// The rank (row).
        rank: usize,
        /// The chunk (column).
        chunk: usize,
    },
    /// A row of the estimate's ranking: the algorithm's URL name.
    Ranking(String),
    /// A point of the busbw chart: an algorithm's curve at a size (bytes,
    /// a power of two 1 KiB..=1 GiB).
    Chart {
        /// The algorithm's URL name.
        algorithm: String,
        /// The message size of the point.
        bytes: u64,
    },
    /// A link of the drawn topology, between two ranks (either direction).
    Link(usize, usize),
    /// A whole card of the page, by its element id (one of [`PANELS`]).
    Panel(String),
}

/// The element ids a [`Look::Panel`] may name.
pub const PANELS: [&str; 9] = [
    "claim",
    "buffers",
    "step-description",
    "estimate",
    "busbw-chart",
    "compression",
    "fusion",
    "gantt",
    "topology",
];

/// The lesson files, in the order the page lists them.
const FILES: [&str; 8] = [
    include_str!("../lessons/collective.json"),
    include_str!("../lessons/ring.json"),
    include_str!("../lessons/rhd.json"),
    include_str!("../lessons/mesh.json"),
    include_str!("../lessons/hier.json"),
    include_str!("../lessons/alltoall.json"),
    include_str!("../lessons/int8.json"),
    include_str!("../lessons/fusion.json"),
];

/// Every lesson that parses (a file that does not is left out here and
/// reported by `tests/lessons.rs`).
pub fn all() -> &'static [Lesson] {
    static ALL: OnceLock<Vec<Lesson>> = OnceLock::new();
    ALL.get_or_init(|| {
        FILES
            .iter()
            .filter_map(|f| serde_json::from_str(f).ok())
            .collect()
    })
}

/// The parse result of every lesson file (for the tests).
pub fn parse_all() -> Vec<Result<Lesson, String>> {
    FILES
        .iter()
        .map(|f| serde_json::from_str(f).map_err(|e| e.to_string()))
        .collect()
}

/// The lesson `id`, if there is one.
pub fn find(id: &str) -> Option<&'static Lesson> {
    all().iter().find(|l| l.id == id)
}

impl Lesson {
    /// The message ids this lesson's words use.
    pub fn message_ids(&self) -> Vec<String> {
        let mut v = vec![
            format!("lesson-{}-title", self.id),
            format!("lesson-{}-intro", self.id),
        ];
        for k in 1..=self.stops.len() {
            for part in ["say", "look", "ask", "answer"] {
                v.push(self.stop_id(k, part));
            }
        }
        v
    }

    /// The message id of stop `k`'s (1-based) `part` (`say`, `look`, `ask`,
    /// `answer`).
    pub fn stop_id(&self, k: usize, part: &str) -> String {
        format!("lesson-{}-{k}-{part}", self.id)
    }
}
