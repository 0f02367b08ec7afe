//! Named SSD presets, each calibrated against its datasheet (see `tests/ssd_model.rs`, which
//! checks the calibration and prints the measured figures).
//!
//! Every value is either a published figure (cited), a typical value for the NAND generation
//! (marked *typical*), or a value calibrated so the model reproduces a datasheet figure (marked
//! *calibrated*). A datasheet gives end-to-end figures only; how they split into controller,
//! flash and link time is our estimate.

use crate::device::params::ParamValues;

/// One named SSD preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// Stable name for the CLI and drive files.
    pub name: &'static str,
    /// One line for `raidlab drives`.
    pub description: &'static str,
    /// Interface label for reports.
    pub interface: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    /// Parameter values (every declared parameter, so a change of defaults cannot move a preset).
    pub values: &'static [(&'static str, f64)],
}

impl Preset {
    pub fn values(&self) -> ParamValues {
        self.values
            .iter()
            .map(|&(k, v)| (k.to_string(), v))
            .collect()
    }
}

/// Intel X25-E Extreme 64 GB, SLC, SATA 3 Gb/s (2008).
///
/// Datasheet figures (Intel X25-E SATA SSD product manual, order no. 319984): sequential read 250 MB/s and write
/// 170 MB/s (confirmed by The Tech Report's review, techreport.com/review/15931), 4 KiB random
/// 35,000 read / 3,300 write IOPS, latency 75 µs read / 85 µs write, NCQ 32, SATA 3 Gb/s.
/// Tom's Hardware (reviews/x25-e-ssd-performance,2365-2) describes the controller as ten-channel
/// with 50 nm SLC NAND.
///
/// * `channels` 10: published (Tom's Hardware). `dies_per_channel` 1: *calibrated* effective
///   interleave: with an SLC-typical tPROG it gives the datasheet's 170 MB/s sequential write.
/// * `read_us_page` 25, `program_us_page` ~200, `erase_ms_block` 1.5, 4 KiB pages, 64 pages per
///   block: *typical* SLC NAND of the period (the MSR SSD model of Agrawal et al. 2008 uses
///   25 µs / 200 µs / 1.5 ms, 4 KiB pages, 256 KiB blocks [from memory]). `program_us_spread`
///   20 (±10 %): *estimate*; SLC programs take nearly the same time page to page (Grupp et al.,
///   "Characterizing flash memory", MICRO 2009), the variation the program-and-verify loops give.
/// * `controller_us_per_command`: *calibrated* to the 35,000 read IOPS ceiling. The X25-M G2
///   (MLC, different NAND) carries the same 35K read rating (AnandTech, "Intel's 3rd generation
///   X25-M SSD specs revealed"), so the ceiling is the controller, not the flash.
/// * `channel_mb_s` 600: *calibrated* so QD1 4 KiB read latency is the datasheet's 75 µs:
///   controller 28.5 + tR 25 + SATA transfer 15.2 leave ~7 µs for the NAND bus, so no firmware
///   latency is left over (`overhead_us_read` 0). This is an effective rate: a 2008 ONFI 1.0 bus
///   (~40 MB/s) could not move 4 KiB that fast, so the real drive must overlap work that the
///   model serialises (or split pages across planes); the datasheet does not say how.
/// * `write_buffer_mib` 0.25: *estimate* (controller SRAM used to stage writes; Intel kept user
///   data out of the 16 MB DRAM). `overhead_us_write` *calibrated* to the 85 µs write latency.
/// * `over_provisioning_fraction`: *calibrated* so steady-state 4 KiB random writes reach the
///   datasheet's 3,300 IOPS (WA ≈ 12). It is an effective value, below the physical spare
///   (64 GiB of NAND would give 0.074, WA 7.5, ~5,200 IOPS in this model): the model has no
///   mapping-table writes or GC scheduling losses, so the spare absorbs them.
pub const X25E_SLC: Preset = Preset {
    name: "x25e-slc",
    description: "Intel X25-E 64 GB SLC SATA SSD (2008): 35K/3.3K 4K IOPS, 250/170 MB/s",
    interface: "SATA 3Gb/s",
    source: "Intel X25-E SATA SSD product manual 319984 (2008-09); Tom's Hardware; The Tech Report",
    values: &[
        ("capacity_bytes", 64e9),
        ("channels", 10.0),
        ("dies_per_channel", 1.0),
        ("page_kib", 4.0),
        ("pages_per_block", 64.0),
        ("read_us_page", 25.0),
        ("read_us_spread", 0.0),
        ("program_us_page", 210.0),
        ("program_us_spread", 20.0),
        ("erase_ms_block", 1.5),
        ("channel_mb_s", 600.0),
        ("interface_mb_s", 270.0),
        ("interface_full_duplex", 0.0),
        ("controller_us_per_command", 28.5),
        ("overhead_us_read", 0.0),
        ("overhead_us_write", 41.0),
        ("queue_depth", 32.0),
        ("write_buffer_mib", 0.25),
        ("over_provisioning_fraction", 0.045),
        ("pattern_window_mib", 16.0),
        ("initial_random_fraction", 1.0),
    ],
};

/// Samsung PM9A3 7.68 TB U.2, 128-layer V-NAND TLC (V6), NVMe PCIe 4.0 x4 (2020).
///
/// Published figures (heise.de/-4720224 from Samsung's datasheet via ServeTheHome, and
/// computerbase.de 2020-05 "Samsung PM9A3 E1.S"): sequential 6,500 MB/s read, 3,500 MB/s write;
/// random 4 KiB 900,000 read / 200,000 write IOPS (U.2 and E1.S 7.68 TB); four PCIe 4.0 lanes;
/// V6 128-layer TLC; 1.3 DWPD. QD1 4 KiB read latency ≈ 80 µs is an *estimate* (Samsung's
/// datacenter datasheets list ~70–90 µs for this class; not re-checked).
///
/// * 8 channels × 16 dies (128 dies of 512 Gb = 8 TiB raw for 7.68 TB): *estimate*.
/// * `over_provisioning_fraction` 0.145 = 8 TiB / 7.68 TB − 1: *estimate* from that raw size; with
///   it the model gives ≈ 200K steady random write IOPS, matching the datasheet.
/// * 16 KiB pages, tR 60 ± 10 µs (page types), tPROG 580 µs, 1,152 pages per block, tBERS
///   3.5 ms: *typical* V6-class TLC; tPROG *calibrated* to the 3,500 MB/s sequential write.
///   `program_us_spread` 200 (580 ± 200 µs): *estimate*; multi-level cells program their page
///   types at clearly different speeds (Grupp et al., MICRO 2009, measured MLC fast and slow
///   pages several times apart), so a die's programs do not keep one period.
/// * `channel_mb_s` 1,200: *typical* Toggle-mode NAND bus of the generation.
/// * `interface_mb_s` 7,000: PCIe 4.0 x4 is 7.88 GB/s after 128b/130b coding; less packet
///   overhead leaves about 7 GB/s (the model then reads sequentially at ~7 GB/s, 8% above the
///   datasheet's 6.5 GB/s).
/// * `controller_us_per_command` 1.11: *calibrated* to the 900K read IOPS ceiling.
///   `overhead_us_read` *calibrated* to ~80 µs QD1; `overhead_us_write` *estimate* (~20 µs
///   buffered write latency). `write_buffer_mib` 64: *estimate* (power-loss-protected DRAM).
/// * `queue_depth` 1,024: *estimate* of the outstanding commands one host keeps (NVMe allows up
///   to 64K per queue).
pub const NVME_TLC: Preset = Preset {
    name: "nvme-tlc",
    description: "Samsung PM9A3 7.68 TB TLC NVMe SSD (2020): 900K/200K 4K IOPS, 6.5/3.5 GB/s",
    interface: "NVMe PCIe 4.0 x4",
    source: "Samsung PM9A3 datasheet figures via heise.de/-4720224 and computerbase.de (2020-05)",
    values: &[
        ("capacity_bytes", 7.68e12),
        ("channels", 8.0),
        ("dies_per_channel", 16.0),
        ("page_kib", 16.0),
        ("pages_per_block", 1152.0),
        ("read_us_page", 60.0),
        ("read_us_spread", 10.0),
        ("program_us_page", 580.0),
        ("program_us_spread", 200.0),
        ("erase_ms_block", 3.5),
        ("channel_mb_s", 1200.0),
        ("interface_mb_s", 7000.0),
        ("interface_full_duplex", 1.0),
        ("controller_us_per_command", 1.11),
        ("overhead_us_read", 15.0),
        ("overhead_us_write", 18.0),
        ("queue_depth", 1024.0),
        ("write_buffer_mib", 64.0),
        ("over_provisioning_fraction", 0.145),
        ("pattern_window_mib", 64.0),
        ("initial_random_fraction", 1.0),
    ],
};

pub const PRESETS: &[Preset] = &[X25E_SLC, NVME_TLC];

/// Stable preset names, in listing order.
pub const PRESET_NAMES: &[&str] = &["x25e-slc", "nvme-tlc"];

/// Parameter values of a named preset.
pub fn preset(name: &str) -> Option<ParamValues> {
    preset_info(name).map(Preset::values)
}

/// Name, description, interface and source of a named preset.
pub fn preset_info(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::ssd::{SsdSpec, DECLARATIONS};

    #[test]
    fn presets_name_every_parameter_and_build() {
        assert_eq!(PRESETS.len(), PRESET_NAMES.len());
        for (p, name) in PRESETS.iter().zip(PRESET_NAMES) {
            assert_eq!(p.name, *name);
            assert_eq!(p.values.len(), DECLARATIONS.len(), "{name}");
            for decl in DECLARATIONS {
                assert!(
                    p.values.iter().any(|(k, _)| *k == decl.name),
                    "{name} lacks {}",
                    decl.name
                );
            }
            let spec = SsdSpec::from_preset(name).unwrap();
            assert_eq!(spec.interface, p.interface);
        }
    }
}
