//! Regression suites: named lists of properties that `testbench regress` runs.
//!
//! What lives here:
//!
//! - `stdlib/`: suite `stdlib`, the standard blocks
//! - `dma/`: suite `dma`
//! - `nvme/`: suite `nvme`, the front end
//! - `qos/`: suite `qos`
//! - `nvme_tcp/`: suite `nvme-tcp`
//! - `rdma/`: suite `rdma`, the RoCEv2 engine and DCQCN
//! - `tcp/`: suites `tcp` and `tcp-nvme`, and `testbench tcp-linux`
//! - `eth/`: suite `eth`, the MAC and MDIO
//! - `chip/`: suite `chip`, the chip top, and the `Session` that fio, NBD and the chip bench run on

pub mod chip;
pub mod dma;
pub mod eth;
pub mod nvme;
pub mod nvme_tcp;
pub mod qos;
pub mod rdma;
pub mod stdlib;
pub mod tcp;

use crate::prop::{run_case, CaseResult, Property};
use crate::sim::XInit;
use std::path::Path;

/// One property of a suite, type-erased.
pub struct Entry {
    /// Property name.
    pub name: &'static str,
    /// Runs case `seed`: (seed, initial values, waves folder, regression file).
    pub run: fn(u64, XInit, Option<&Path>, Option<&Path>) -> CaseResult,
}

fn entry<P: Property>() -> Entry {
    Entry {
        name: P::NAME,
        run: run_case::<P>,
    }
}

/// A named suite.
pub struct Suite {
    /// Suite name, as given to `--suite`.
    pub name: &'static str,
    /// Its properties; case `i` runs property `i % len`.
    pub properties: Vec<Entry>,
}

/// Every suite.
pub fn all() -> Vec<Suite> {
    let mut suites = vec![Suite {
        name: "stdlib",
        properties: vec![
            entry::<stdlib::skid_buffer::SkidBufferProp>(),
            entry::<stdlib::interval_timer::IntervalTimerProp>(),
            entry::<stdlib::crc::Crc32Prop>(),
            entry::<stdlib::crc::Crc32cProp>(),
            entry::<stdlib::token_bucket::TokenBucketProp>(),
            entry::<stdlib::fifo::FifoProp>(),
            entry::<stdlib::fifo::FifoFwftProp>(),
            entry::<stdlib::fifo_ops::FifoOpsProp>(),
            entry::<stdlib::arbiter::RrArbiterProp>(),
            entry::<stdlib::arbiter::WrrArbiterProp>(),
            entry::<stdlib::axil_decoder::AxilDecoderProp>(),
            entry::<stdlib::axi_interconnect::AxiInterconnectProp>(),
            entry::<stdlib::axi_upsizer::AxiUpsizerProp>(),
            entry::<stdlib::async_fifo::AsyncFifoProp>(),
            entry::<stdlib::sync_2ff::Sync2ffProp>(),
            entry::<stdlib::reset_sync::ResetSyncProp>(),
        ],
    }];
    suites.push(Suite {
        name: "dma",
        properties: vec![
            entry::<dma::walker::DmaWalkerProp>(),
            entry::<dma::mover::DmaMoverProp>(),
            entry::<dma::engine::DmaEngineProp>(),
        ],
    });
    suites.push(Suite {
        name: "nvme-tcp",
        properties: vec![
            entry::<nvme_tcp::model::NvmeTcpModelProp>(),
            entry::<nvme_tcp::model::NvmeTcpModelHostileProp>(),
            entry::<nvme_tcp::rtl::NvmeTcpConnProp>(),
            entry::<nvme_tcp::rtl::NvmeTcpConnPaddingProp>(),
            entry::<nvme_tcp::rtl::NvmeTcpConnHostileProp>(),
            entry::<nvme_tcp::rtl::NvmeTcpConnDmaErrorProp>(),
            entry::<nvme_tcp::rtl::NvmeTcpEngineProp>(),
        ],
    });
    suites.push(Suite {
        name: "qos",
        properties: vec![
            entry::<qos::mix::QosMixProp>(),
            entry::<qos::flood::QosFloodProp>(),
            entry::<qos::flood::QosShareProp>(),
            entry::<qos::idle::QosIdleProp>(),
        ],
    });
    suites.push(Suite {
        name: "nvme",
        properties: vec![
            entry::<nvme::queues::NvmeQueuesProp>(),
            entry::<nvme::arbitration::NvmeArbitrationProp>(),
            entry::<nvme::coalescing::NvmeCoalescingProp>(),
        ],
    });
    suites.push(Suite {
        name: "rdma",
        properties: vec![
            entry::<rdma::engine::RdmaProp>(),
            entry::<rdma::cc::RdmaCcProp>(),
            entry::<rdma::dcqcn::DcqcnProp>(),
            entry::<rdma::dcqcn::DcqcnRecoveryProp>(),
            entry::<rdma::rnr::RdmaRnrProp>(),
        ],
    });
    // Its own suite, so CI sizes it apart (a case runs about 4.5 million cycles).
    suites.push(Suite {
        name: "rdma-long",
        properties: vec![entry::<rdma::rnr::RdmaRnrLongProp>()],
    });
    suites.push(Suite {
        name: "tcp",
        properties: vec![
            entry::<tcp::stream::TcpStreamProp>(),
            entry::<tcp::ping::TcpPingProp>(),
            entry::<tcp::rules::TcpRulesProp>(),
            entry::<tcp::reopen::TcpReopenProp>(),
        ],
    });
    // Its own suite, so CI sizes it apart from `tcp` (a case runs a few million cycles).
    suites.push(Suite {
        name: "tcp-nvme",
        properties: vec![entry::<tcp::nvme::TcpNvmeProp>()],
    });
    suites.push(Suite {
        name: "eth",
        properties: vec![
            entry::<eth::mac::EthMacRgmiiProp>(),
            entry::<eth::mdio::MdioMasterProp>(),
        ],
    });
    suites.push(Suite {
        name: "chip",
        properties: vec![
            entry::<chip::top::ChipProp>(),
            entry::<chip::frame_mux::FrameMuxProp>(),
        ],
    });
    suites
}
