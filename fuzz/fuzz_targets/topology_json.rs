//! Topology JSON, both forms:
//! - the user schema (`engine::custom_topology::CustomTopology::parse`, the
//!   validating path the page and `topology=` links use): any text is either
//!   refused with an error naming a field, or accepted; an accepted topology
//!   re-encodes to compact JSON that parses back to the same value, builds a
//!   `Topology` that validates, and routes every device pair;
//! - the serde form of `engine::topology::Topology`: any bytes either fail to
//!   deserialise or validate, and a validated topology answers rank checks
//!   and routes with values or typed errors, never a panic.
#![no_main]
use ccl_playground::engine::custom_topology::CustomTopology;
use ccl_playground::engine::topology::Topology;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match CustomTopology::parse(&text) {
        Err(e) => {
            assert!(!e.field.is_empty() && !e.allowed.is_empty(), "{e:?}");
            assert!(e.value.chars().count() <= 61, "value not shortened: {e:?}");
        }
        Ok(spec) => {
            let again = CustomTopology::parse(&spec.to_json()).expect("compact form re-parses");
            assert_eq!(again, spec);
            let t = spec.topology().expect("an accepted topology builds");
            assert!(t.validate().is_ok());
            for a in 0..t.devices.len() {
                for b in 0..t.devices.len() {
                    if a != b {
                        t.route(a, b).expect("every device pair is routable");
                    }
                }
            }
        }
    }
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
