use ccl_playground::engine::{
    algorithm::*, collective::Primitive, cost::*, dtype::DType, topology::Topology,
};
fn main() {
    let topo = Topology::h100_8();
    let s = build(Algorithm::Rhd, Primitive::AllReduce, 5).unwrap();
    for b in [5373952u64, 5767168] {
        let e = estimate_sliced(&s, &topo, b, DType::Fp32, Slices::Auto).unwrap();
        println!("{b}: {:.2} {:?}", e.time_us, e.slicing.slice_elems);
        for (i, st) in e.timeline.steps.iter().enumerate() {
            println!(
                "  step {i}: {:.2}..{:.2} share {}",
                st.start_us, st.end_us, st.max_link_sharing
            );
        }
    }
}
