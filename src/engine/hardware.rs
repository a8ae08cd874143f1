//! The machine as link classes: what a library's tuning model and the
//! calibrated prediction need to know about the hardware, independent of
//! how a [`super::topology::Topology`] draws it.
//!
//! A machine is nodes of `gpus_per_node` accelerators joined inside the
//! node by one fabric (NVLink through NVSwitch, direct NVLink, HCCS full
//! mesh, PCIe) and between nodes by `nics_per_node` network ports. NCCL's
//! own topology search (`src/graph/search.cc`) sees the same classes: the
//! GPU's total NVLink bandwidth, the bandwidth between a pair of GPUs,
//! whether an NVSwitch is present (NVLS), and each NIC's speed.
//!
//! The per-accelerator facts come from the table in [`Accelerator::of_name`]
//! (NCCL's per-link constants, `src/graph/topo.h`, times the NVLink count
//! of each part); the network from the preset, the user, or the fit.

use serde::{Deserialize, Serialize};

/// GPU generation, as NCCL indexes its tuning tables (`compCapIndex`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Arch {
    /// SM70 (V100).
    Volta,
    /// SM80 (A100).
    Ampere,
    /// SM90 (H100, H200).
    Hopper,
    /// SM100 (B200, GB200).
    Blackwell,
}

impl Arch {
    /// NCCL's `compCapIndex` (0..=3).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The CUDA compute capability NCCL compares against (70, 80, 90, 100).
    pub fn compute_capability(self) -> u32 {
        match self {
            Arch::Volta => 70,
            Arch::Ampere => 80,
            Arch::Hopper => 90,
            Arch::Blackwell => 100,
        }
    }

    /// Name in text.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Volta => "Volta",
            Arch::Ampere => "Ampere",
            Arch::Hopper => "Hopper",
            Arch::Blackwell => "Blackwell",
        }
    }
}

/// What joins the accelerators of one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fabric {
    /// NVLink (or an NVLink-class fabric: AMD xGMI, Huawei HCCS): NCCL's
    /// `LINK_NVL` latencies.
    Nvlink,
    /// PCIe only: NCCL's PCI latencies, no LL128.
    Pcie,
}

/// The CPU vendor (NCCL's network overhead and `llMaxBws` row differ).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cpu {
    /// Intel x86 (NCCL: 1 µs network overhead).
    #[default]
    Intel,
    /// AMD x86 (NCCL: 2 µs network overhead).
    Amd,
}

/// The PCIe path from an accelerator to its nearest network port, as
/// NCCL classifies it (`PATH_*`, `src/include/graph.h`). NCCL runs LL128
/// across nodes only where an algorithm's graph reaches the network by a
/// path of at most `PATH_PXB` (`graphs[a]->typeInter`, `ncclTopoTuneModel`,
/// 2.18 and 2.30.7 alike; Hopper and later also through a peer GPU's NIC,
/// PXN, when `NCCL_LL128_C2C` is on, its default; counted here as
/// [`NicPath::Switch`]):
/// a NIC reached through the CPU's host bridge loses LL128, and with it
/// the mid-size protocol of every multi-node collective.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum NicPath {
    /// Through PCIe switches only (`PIX`/`PXB`): DGX/HGX boards, where
    /// each GPU shares a switch with its NIC.
    #[default]
    Switch,
    /// Through the CPU's host bridge or between sockets (`PHB`/`SYS`):
    /// e.g. ALCF Polaris, whose `nvidia-smi topo -m` shows every GPU–NIC
    /// pair PHB or SYS (docs.alcf.anl.gov/polaris/hardware-overview/machine-overview).
    HostBridge,
}

/// The link classes of one machine.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// The accelerator, as the log or preset names it (`NVIDIA H100 80GB
    /// HBM3`).
    pub accelerator: String,
    /// Its generation.
    pub arch: Arch,
    /// Accelerators per node.
    pub gpus_per_node: usize,
    /// The in-node fabric.
    pub fabric: Fabric,
    /// Total in-node bandwidth of one accelerator, GB/s per direction
    /// (NVLink: links × per-link; NCCL's `totalBw`).
    pub gpu_gbps: f64,
    /// Bandwidth between one pair of accelerators, GB/s (through an
    /// NVSwitch: all of [`Hardware::gpu_gbps`]; NCCL's `maxBw`).
    pub pair_gbps: f64,
    /// An NVSwitch joins the node (NVLS needs it, and Hopper or later).
    pub nvswitch: bool,
    /// Network ports per node.
    pub nics_per_node: usize,
    /// Speed of one port, GB/s (1e9 bytes/s; 200 Gb/s = 25).
    pub nic_gbps: f64,
    /// The CPU vendor.
    #[serde(default)]
    pub cpu: Cpu,
    /// How an accelerator reaches its NIC.
    #[serde(default)]
    pub nic_path: NicPath,
    /// Where the figures come from.
    #[serde(default)]
    pub sources: Vec<String>,
}

/// One accelerator part: its generation and in-node fabric.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Accelerator {
    /// Generation.
    pub arch: Arch,
    /// Fabric.
    pub fabric: Fabric,
    /// NVLink links per GPU (0 for PCIe parts).
    pub nvlinks: usize,
    /// NCCL's per-link NVLink bandwidth for the part, GB/s
    /// (`SM70_NVLINK_BW` 20, `SM80` 20, `SM90` 20.6, `SM100` 40.1;
    /// nccl `src/graph/topo.h`).
    pub link_gbps: f64,
    /// How its nodes join it: `Some(true)` always through a switch
    /// (Blackwell NVL domains, GB200's 4-GPU trays included), `Some(false)`
    /// never (AMD's xGMI is a direct mesh), `None`: an NVSwitch with 8 per
    /// node (HGX/DGX), direct pairs below.
    pub switched: Option<bool>,
}

/// NCCL's `PCI_BW` (PCIe Gen3 x16), GB/s (nccl `src/graph/topo.h`); a
/// Gen4 x16 slot carries twice that.
pub const PCI_GEN4_GBPS: f64 = 24.0;

impl Accelerator {
    /// The part a device name denotes (`NVIDIA A100-SXM4-40GB`, `NVIDIA H100
    /// 80GB HBM3`, `Tesla V100-SXM2-32GB`, `AMD Instinct MI300X`), `None`
    /// for a name this table lacks. NVLink counts: V100 SXM2 6, A100 SXM4
    /// 12, H100/H200 SXM 18, B200 18 (NVIDIA's data sheets); PCIe parts
    /// (names with `PCIE`, GeForce / RTX) use PCIe. MI300X: 7 xGMI links
    /// of 64 GB/s (AMD's data sheet), modelled as an NVLink-class fabric.
    pub fn of_name(name: &str) -> Option<Accelerator> {
        let n = name.to_ascii_uppercase();
        let pcie = n.contains("PCIE") || n.contains("GEFORCE") || n.contains("RTX");
        let nv = |arch, nvlinks, link_gbps| Accelerator {
            arch,
            fabric: Fabric::Nvlink,
            nvlinks,
            link_gbps,
            switched: if arch == Arch::Blackwell {
                Some(true)
            } else {
                None
            },
        };
        let pci = |arch| Accelerator {
            arch,
            fabric: Fabric::Pcie,
            nvlinks: 0,
            link_gbps: 0.0,
            switched: Some(false),
        };
        let part = if n.contains("MI300") || n.contains("MI325") {
            Accelerator {
                switched: Some(false),
                ..nv(Arch::Hopper, 7, 64.0)
            }
        } else if n.contains("B200") || n.contains("GB200") || n.contains("B300") {
            nv(Arch::Blackwell, 18, 40.1)
        } else if n.contains("H100") || n.contains("H200") || n.contains("H800") {
            if pcie {
                pci(Arch::Hopper)
            } else {
                nv(Arch::Hopper, 18, 20.6)
            }
        } else if n.contains("A100") || n.contains("A800") {
            if pcie {
                pci(Arch::Ampere)
            } else {
                nv(Arch::Ampere, 12, 20.0)
            }
        } else if n.contains("V100") {
            if pcie {
                pci(Arch::Volta)
            } else {
                nv(Arch::Volta, 6, 20.0)
            }
        } else if pcie || n.contains("2080") || n.contains("3090") || n.contains("4090") {
            pci(Arch::Volta)
        } else if n.contains("L40") || n.contains("A10") || n.contains("T4") {
            pci(Arch::Ampere)
        } else {
            return None;
        };
        Some(part)
    }
}

impl Hardware {
    /// A node of `gpus_per_node` accelerators named `name` (unknown names:
    /// an Ampere NVLink part, said in [`Hardware::sources`]) with
    /// `nics_per_node` ports of `nic_gbps`. NVLink parts with 8 GPUs per
    /// node sit on an NVSwitch (HGX/DGX); with fewer, every pair is wired
    /// directly (HGX 4-GPU: 4 links a pair), so a pair gets the links
    /// divided among the peers.
    pub fn of_accelerator(
        name: &str,
        gpus_per_node: usize,
        nics_per_node: usize,
        nic_gbps: f64,
    ) -> Hardware {
        let mut sources = Vec::new();
        let part = Accelerator::of_name(name).unwrap_or_else(|| {
            sources.push(format!(
                "accelerator {name:?} is not in the table: modelled as an A100-class NVLink part"
            ));
            Accelerator {
                arch: Arch::Ampere,
                fabric: Fabric::Nvlink,
                nvlinks: 12,
                link_gbps: 20.0,
                switched: None,
            }
        });
        let g = gpus_per_node.max(1);
        let (gpu_gbps, pair_gbps, nvswitch) = match part.fabric {
            Fabric::Pcie => (PCI_GEN4_GBPS, PCI_GEN4_GBPS, false),
            Fabric::Nvlink => {
                let total = part.nvlinks as f64 * part.link_gbps;
                if part.switched.unwrap_or(g >= 8) {
                    (total, total, true)
                } else if part.switched == Some(false) {
                    // A direct mesh: one link bundle to each peer.
                    (total, part.link_gbps, false)
                } else {
                    let peers = (g - 1).max(1) as f64;
                    (total, (total / peers).max(part.link_gbps), false)
                }
            }
        };
        sources.push(format!(
            "{name}: {} {}, {} GB/s per GPU in the node ({} NVLink × {} GB/s, NCCL's per-link constant, nccl src/graph/topo.h){}",
            part.arch.name(),
            match part.fabric {
                Fabric::Nvlink => "NVLink",
                Fabric::Pcie => "PCIe",
            },
            gpu_gbps,
            part.nvlinks,
            part.link_gbps,
            if nvswitch { ", NVSwitch" } else { "" }
        ));
        Hardware {
            accelerator: name.to_string(),
            arch: part.arch,
            gpus_per_node: g,
            fabric: part.fabric,
            gpu_gbps,
            pair_gbps,
            nvswitch,
            nics_per_node: nics_per_node.max(1),
            nic_gbps,
            cpu: Cpu::Intel,
            nic_path: NicPath::Switch,
            sources,
        }
    }

    /// One HGX/DGX H100 node: 8 GPUs, NVSwitch, 18 NVLink4 × 20.6 GB/s
    /// (370.8 GB/s, NCCL's `SM90_NVLINK_BW`), 8 NDR 400 Gb/s NICs of which
    /// 46–48 GB/s are achievable (a maintainer in github.com/NVIDIA/nccl-tests/issues/290): 48.
    pub fn h100_node() -> Hardware {
        let mut h = Hardware::of_accelerator("NVIDIA H100 80GB HBM3", 8, 8, 48.0);
        h.sources.push(
            "8 × NDR 400 Gb/s NICs per node at 48 GB/s each (46–48 achievable: nccl-tests issue 290, maintainer)".into(),
        );
        h
    }

    /// Nodes among `ranks` ranks placed node by node.
    pub fn nodes_for(&self, ranks: usize) -> usize {
        ranks.div_ceil(self.gpus_per_node.max(1)).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_read_from_device_names() {
        let a = Accelerator::of_name("NVIDIA A100-SXM4-40GB").unwrap();
        assert_eq!(
            (a.arch, a.fabric, a.nvlinks),
            (Arch::Ampere, Fabric::Nvlink, 12)
        );
        let h = Accelerator::of_name("NVIDIA H100 80GB HBM3").unwrap();
        assert_eq!((h.arch, h.nvlinks), (Arch::Hopper, 18));
        let g = Accelerator::of_name("NVIDIA GeForce RTX 2080 Ti").unwrap();
        assert_eq!(g.fabric, Fabric::Pcie);
        assert!(Accelerator::of_name("something else").is_none());
    }

    #[test]
    fn four_a100_per_node_are_wired_in_pairs_eight_h100_through_a_switch() {
        // Polaris-like: 4 A100 with 12 links, 4 to each of 3 peers = 80 GB/s a pair.
        let p = Hardware::of_accelerator("NVIDIA A100-SXM4-40GB", 4, 2, 25.0);
        assert_eq!((p.gpu_gbps, p.pair_gbps, p.nvswitch), (240.0, 80.0, false));
        let h = Hardware::h100_node();
        assert!((h.gpu_gbps - 370.8).abs() < 1e-9 && h.nvswitch);
        assert_eq!(h.nodes_for(20), 3);
    }
}
