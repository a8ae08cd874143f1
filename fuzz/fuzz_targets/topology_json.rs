//! Topology JSON (the serde form of `engine::topology::Topology`): any bytes
//! either fail to deserialise or validate, and a validated topology answers
//! rank checks and routes with values or typed errors, never a panic.
#![no_main]
use ccl_playground::engine::topology::Topology;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(t) = serde_json::from_slice::<Topology>(data) else {
        return;
    };
    if t.validate().is_err() || t.nodes() > 256 || t.links.len() > 4096 {
        return;
    }
    let n = t.devices.len().min(16);
    let _ = t.check_ranks(n);
    for a in 0..n {
        for b in 0..n {
            let _ = t.route(a, b);
        }
    }
});
