//! Named HDD presets for `raidlab drives` and array configurations.
//!
//! Figures come from manufacturers' data sheets and product manuals, as recalled, not re-read
//! (re-check against the documents before quoting). Anything a data sheet does not state (geometry, zone count, head switch,
//! overheads, cache segmentation) is an engineering estimate and marked "est." below.
//! Media rates: sectors per track = sustained MB/s × 10^6 / (revolutions per second × 512).

use super::spec::HddSpec;
use crate::device::params::ParamValues;

/// One preset: stable name, what it models, and the figures behind it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    /// Interface as shown in reports.
    pub interface: &'static str,
    /// Where the figures come from.
    pub source: &'static str,
    pub params: &'static [(&'static str, f64)],
}

impl Preset {
    pub fn kind(&self) -> &'static str {
        "hdd"
    }
    fn value(&self, name: &str) -> f64 {
        self.params
            .iter()
            .find(|p| p.0 == name)
            .map(|p| p.1)
            .expect("preset sets every headline figure")
    }
    pub fn rpm(&self) -> u32 {
        self.value("rpm") as u32
    }
    pub fn capacity_bytes(&self) -> u64 {
        self.value("capacity_bytes") as u64
    }
    pub fn values(&self) -> ParamValues {
        self.params
            .iter()
            .map(|&(k, v)| (k.to_string(), v))
            .collect()
    }
    /// The full spec, with the interface named. Presets are tested to be valid.
    pub fn spec(&self) -> HddSpec {
        let mut spec = HddSpec::from_params(&self.values())
            .unwrap_or_else(|e| panic!("preset {}: {e}", self.name));
        spec.interface = self.interface.to_string();
        spec
    }
}

/// Seagate Cheetah 10K.7, ST3300007LC (300 GB, 80-pin SCA Ultra320 SCSI, 2004–05).
/// Product manual (Seagate, Cheetah 10K.7 SCSI, ST3300007LW/LC, ST3146707LW/LC, ST373207LW/LC):
/// 10,000 rpm (2.99 ms average latency); seek read/write average 4.7 / 5.3 ms, track-to-track
/// 0.2 / 0.5 ms, full stroke ≈ 9.5 ms (read); 8 MB buffer; sustained 39–80 MB/s; 585,937,500
/// user sectors; 4 discs / 8 heads.
const CHEETAH_10K7: &[(&str, f64)] = &[
    ("rpm", 10000.0),
    ("capacity_bytes", 300_000_000_000.0),
    ("surfaces", 8.0),
    ("sectors_per_track_outer", 938.0), // 80 MB/s at 166.7 rev/s
    ("sectors_per_track_inner", 457.0), // 39 MB/s
    ("zones", 24.0),                    // est.
    ("seek_ms_single_cylinder", 0.2),
    ("seek_ms_average", 4.7),
    ("seek_ms_full_stroke", 9.5),
    ("write_settle_ms", 0.6),        // write 5.3 − read 4.7 average seek
    ("head_switch_ms", 0.2),         // est.
    ("overhead_ms_read", 0.1),       // est.
    ("overhead_ms_write", 0.1),      // est.
    ("overhead_ms_cache_hit", 0.05), // est.
    ("interface_mb_s", 320.0),
    ("cache_kib", 8192.0),
    ("cache_segments", 8.0), // est. (adaptive segmentation in the manual)
    ("cache_segment_kib", 512.0), // est.
    ("read_ahead_kib", 512.0), // est.
    ("write_cache", 1.0),    // WCE set at the factory on Seagate SCSI drives [memory]
    ("queue_depth", 64.0),   // est. tagged queue depth in use
    ("queue_policy", 2.0),
];

/// Western Digital Raptor WD1500ADFD (150 GB, 10,000 rpm SATA 1.5 Gb/s, 2006).
/// WD specification sheet: 4.6 ms average read seek (5.2 write), track-to-track ≈ 0.6 / 0.8 ms,
/// full stroke ≈ 10.2 ms, 16 MB buffer, NCQ (32 tags), up to ≈ 84 MB/s sustained,
/// 293,046,768 user sectors (IDEMA capacity for 150 GB).
const RAPTOR_WD1500ADFD: &[(&str, f64)] = &[
    ("rpm", 10000.0),
    ("capacity_bytes", 150_039_945_216.0),
    ("surfaces", 4.0),                  // est. (2 platters)
    ("sectors_per_track_outer", 984.0), // 84 MB/s
    ("sectors_per_track_inner", 645.0), // est. 55 MB/s
    ("zones", 24.0),                    // est.
    ("seek_ms_single_cylinder", 0.6),
    ("seek_ms_average", 4.6),
    ("seek_ms_full_stroke", 10.2),
    ("write_settle_ms", 0.6), // write 5.2 − read 4.6 average seek
    ("head_switch_ms", 0.3),  // est.
    ("overhead_ms_read", 0.1),
    ("overhead_ms_write", 0.1),
    ("overhead_ms_cache_hit", 0.05), // overheads est.
    ("interface_mb_s", 150.0),
    ("cache_kib", 16384.0),
    ("cache_segments", 16.0),     // est.
    ("cache_segment_kib", 512.0), // est.
    ("read_ahead_kib", 512.0),    // est.
    ("write_cache", 1.0),         // ATA drives ship with the write cache on
    ("queue_depth", 32.0),
    ("queue_policy", 2.0),
];

/// A 5400-rpm-class "green" desktop SATA drive, after the WD Caviar Green WD10EADS (1 TB,
/// "IntelliPower" ≈ 5400 rpm, SATA 3 Gb/s, 32 MB cache, 2008–10). WD does not publish seek
/// times for this line; ≈ 8.9 ms average read seek is the usual measured figure [memory].
/// 1,953,525,168 user sectors (IDEMA 1 TB); ≈ 106 MB/s outer.
const GREEN_5400: &[(&str, f64)] = &[
    ("rpm", 5400.0),
    ("capacity_bytes", 1_000_204_886_016.0),
    ("surfaces", 4.0), // est. (2 × 500 GB platters in later revisions)
    ("sectors_per_track_outer", 2300.0), // 106 MB/s at 90 rev/s
    ("sectors_per_track_inner", 1194.0), // est. 55 MB/s
    ("zones", 24.0),   // est.
    ("seek_ms_single_cylinder", 1.0), // est.
    ("seek_ms_average", 8.9),
    ("seek_ms_full_stroke", 18.0), // est.
    ("write_settle_ms", 0.5),      // est.
    ("head_switch_ms", 0.5),       // est.
    ("overhead_ms_read", 0.15),
    ("overhead_ms_write", 0.15),
    ("overhead_ms_cache_hit", 0.05), // overheads est.
    ("interface_mb_s", 300.0),
    ("cache_kib", 32768.0),
    ("cache_segments", 16.0),      // est.
    ("cache_segment_kib", 1024.0), // est.
    ("read_ahead_kib", 1024.0),    // est.
    ("write_cache", 1.0),
    ("queue_depth", 32.0),
    ("queue_policy", 2.0),
    // Behaviour in arrays: WD's desktop (Green) drives have no TLER: "a desktop edition hard drive ...
    // will enter into a deep recovery cycle ... up to 2 minutes" (WD knowledge base answer
    // 1397). The head-park timer is left off here (as after `idle3ctl -d`, which RAID users
    // run on these drives); `green-5400-idle3` keeps the factory 8 s.
    ("erc_read_s", 0.0),
];

/// `green-5400` as it leaves the factory: heads unload after 8 s idle (WD's "IntelliPark",
/// the idle3 timer `idle3ctl -g` reads as 80 tenths of a second [memory]), no TLER.
const GREEN_5400_IDLE3: &[(&str, f64)] = &[
    ("rpm", 5400.0),
    ("capacity_bytes", 1_000_204_886_016.0),
    ("surfaces", 4.0),
    ("sectors_per_track_outer", 2300.0),
    ("sectors_per_track_inner", 1194.0),
    ("zones", 24.0),
    ("seek_ms_single_cylinder", 1.0),
    ("seek_ms_average", 8.9),
    ("seek_ms_full_stroke", 18.0),
    ("write_settle_ms", 0.5),
    ("head_switch_ms", 0.5),
    ("overhead_ms_read", 0.15),
    ("overhead_ms_write", 0.15),
    ("overhead_ms_cache_hit", 0.05),
    ("interface_mb_s", 300.0),
    ("cache_kib", 32768.0),
    ("cache_segments", 16.0),
    ("cache_segment_kib", 1024.0),
    ("read_ahead_kib", 1024.0),
    ("write_cache", 1.0),
    ("queue_depth", 32.0),
    ("queue_policy", 2.0),
    ("erc_read_s", 0.0),
    ("idle_park_s", 8.0),
    ("park_wake_ms", 500.0), // est.: Seagate PowerChoice Idle_B (heads unloaded) ≈ 0.5 s [memory]
];

/// A modern 7200-rpm nearline drive, after the Seagate Exos X16 ST16000NM001G (16 TB, SATA
/// 6 Gb/s, 256 MB cache, 4.16 ms average latency, 261 MB/s maximum sustained, 31,251,759,104
/// logical sectors, 9 discs / 18 heads; Exos X16 data sheet and product manual). Average read
/// seek ≈ 8.5 ms, as recalled from Seagate's Exos data sheets (not re-checked); the rest est.
const NEARLINE_7200: &[(&str, f64)] = &[
    ("rpm", 7200.0),
    ("capacity_bytes", 16_000_900_661_248.0),
    ("surfaces", 18.0),
    ("sectors_per_track_outer", 4248.0), // 261 MB/s at 120 rev/s
    ("sectors_per_track_inner", 2035.0), // est. 125 MB/s
    ("zones", 30.0),                     // est.
    ("seek_ms_single_cylinder", 0.5),    // est.
    ("seek_ms_average", 8.5),
    ("seek_ms_full_stroke", 16.0), // est.
    ("write_settle_ms", 0.5),      // est.
    ("head_switch_ms", 0.5),       // est.
    ("overhead_ms_read", 0.05),
    ("overhead_ms_write", 0.05),
    ("overhead_ms_cache_hit", 0.02), // overheads est.
    ("interface_mb_s", 600.0),
    ("cache_kib", 262144.0),
    ("cache_segments", 32.0),      // est.
    ("cache_segment_kib", 2048.0), // est.
    ("read_ahead_kib", 2048.0),    // est.
    ("write_cache", 1.0),
    ("queue_depth", 32.0),
    ("queue_policy", 2.0),
];

/// Every preset, in the order `raidlab drives` lists them.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "cheetah-10k7",
        description: "Seagate Cheetah 10K.7 300 GB, 10k rpm Ultra320 SCSI (2005)",
        interface: "Ultra320 SCSI",
        source: "Seagate Cheetah 10K.7 product manual (ST3300007LC); geometry and overheads estimated",
        params: CHEETAH_10K7,
    },
    Preset {
        name: "raptor-wd1500adfd",
        description: "WD Raptor WD1500ADFD 150 GB, 10k rpm SATA with NCQ (2006)",
        interface: "SATA 1.5Gb/s",
        source: "WD Raptor WD1500ADFD specification sheet; geometry and overheads estimated",
        params: RAPTOR_WD1500ADFD,
    },
    Preset {
        name: "green-5400",
        description: "5400-rpm-class green desktop SATA, 1 TB (WD Caviar Green WD10EADS class)",
        interface: "SATA 3Gb/s",
        source: "WD Caviar Green WD10EADS data sheet (capacity, cache, interface); seeks measured-typical, rest estimated",
        params: GREEN_5400,
    },
    Preset {
        name: "green-5400-idle3",
        description: "green-5400 as shipped: heads park after 8 s idle (WD idle3 timer), no TLER/ERC",
        interface: "SATA 3Gb/s",
        source: "as green-5400; idle3 8 s (idle3ctl); no TLER and up to 2 min deep recovery (WD answer 1397)",
        params: GREEN_5400_IDLE3,
    },
    Preset {
        name: "nearline-7200",
        description: "Modern 7200 rpm nearline SATA, 16 TB (Seagate Exos X16 class)",
        interface: "SATA 6Gb/s",
        source: "Seagate Exos X16 data sheet and product manual (ST16000NM001G); seeks and geometry estimated",
        params: NEARLINE_7200,
    },
];

/// Stable preset names.
pub const PRESET_NAMES: &[&str] = &[
    "cheetah-10k7",
    "raptor-wd1500adfd",
    "green-5400",
    "green-5400-idle3",
    "nearline-7200",
];

/// A preset's description and figures.
pub fn preset_info(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// A preset's scalar parameters, ready for [`HddSpec::from_params`] (callers may override).
pub fn preset(name: &str) -> Option<ParamValues> {
    preset_info(name).map(Preset::values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_presets_and_every_preset_builds() {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(names, PRESET_NAMES);
        for p in PRESETS {
            let spec = p.spec();
            assert_eq!(spec.capacity_sectors * 512, p.capacity_bytes());
            assert_eq!(spec.interface, p.interface);
        }
    }
}
