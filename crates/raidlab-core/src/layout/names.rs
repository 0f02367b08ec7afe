//! md's level and layout names, and their numbers.
//!
//! Names are the ones `mdadm --layout` accepts (mdadm `maps.c` r5layout/r6layout,
//! `util.c:parse_layout_10`); numbers are md's superblock layout words
//! (kernel `drivers/md/raid5.h`, `raid10.c:setup_geo`, `raid0.h`).

use crate::error::{Error, Result};

/// RAID level, as md numbers it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    Raid0,
    Raid1,
    Raid4,
    Raid5,
    Raid6,
    Raid10,
}

impl Level {
    /// Parses `0`, `raid0`, `stripe`, `1`, `mirror`, ... as mdadm does (`maps.c` pers).
    pub fn parse(text: &str) -> Result<Level> {
        let lower = text.trim().to_ascii_lowercase();
        let level = match lower.as_str() {
            "0" | "raid0" | "stripe" => Level::Raid0,
            "1" | "raid1" | "mirror" => Level::Raid1,
            "4" | "raid4" => Level::Raid4,
            "5" | "raid5" => Level::Raid5,
            "6" | "raid6" => Level::Raid6,
            "10" | "raid10" => Level::Raid10,
            _ => {
                return Err(Error::array(format!(
                    "unknown RAID level '{text}': expected one of 0, 1, 4, 5, 6, 10"
                )))
            }
        };
        Ok(level)
    }

    /// md's level number.
    pub fn number(self) -> u32 {
        match self {
            Level::Raid0 => 0,
            Level::Raid1 => 1,
            Level::Raid4 => 4,
            Level::Raid5 => 5,
            Level::Raid6 => 6,
            Level::Raid10 => 10,
        }
    }

    /// How many members may fail in the worst case without losing data (for raid1 and raid10
    /// this is the guaranteed minimum; some larger sets also survive).
    pub fn parity_count(self) -> u32 {
        match self {
            Level::Raid4 | Level::Raid5 => 1,
            Level::Raid6 => 2,
            _ => 0,
        }
    }
}

/// md's RAID4/5/6 parity placement algorithms (`ALGORITHM_*` in raid5.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParityAlgorithm {
    LeftAsymmetric,
    RightAsymmetric,
    LeftSymmetric,
    RightSymmetric,
    Parity0,
    ParityN,
    RotatingZeroRestart,
    RotatingNRestart,
    RotatingNContinue,
    LeftAsymmetric6,
    RightAsymmetric6,
    LeftSymmetric6,
    RightSymmetric6,
    Parity06,
}

impl ParityAlgorithm {
    pub const ALL: [ParityAlgorithm; 14] = [
        ParityAlgorithm::LeftAsymmetric,
        ParityAlgorithm::RightAsymmetric,
        ParityAlgorithm::LeftSymmetric,
        ParityAlgorithm::RightSymmetric,
        ParityAlgorithm::Parity0,
        ParityAlgorithm::ParityN,
        ParityAlgorithm::RotatingZeroRestart,
        ParityAlgorithm::RotatingNRestart,
        ParityAlgorithm::RotatingNContinue,
        ParityAlgorithm::LeftAsymmetric6,
        ParityAlgorithm::RightAsymmetric6,
        ParityAlgorithm::LeftSymmetric6,
        ParityAlgorithm::RightSymmetric6,
        ParityAlgorithm::Parity06,
    ];

    /// md's algorithm number (raid5.h).
    pub fn number(self) -> u32 {
        use ParityAlgorithm::*;
        match self {
            LeftAsymmetric => 0,
            RightAsymmetric => 1,
            LeftSymmetric => 2,
            RightSymmetric => 3,
            Parity0 => 4,
            ParityN => 5,
            RotatingZeroRestart => 8,
            RotatingNRestart => 9,
            RotatingNContinue => 10,
            LeftAsymmetric6 => 16,
            RightAsymmetric6 => 17,
            LeftSymmetric6 => 18,
            RightSymmetric6 => 19,
            Parity06 => 20,
        }
    }

    /// The name mdadm prints and accepts.
    pub fn name(self) -> &'static str {
        use ParityAlgorithm::*;
        match self {
            LeftAsymmetric => "left-asymmetric",
            RightAsymmetric => "right-asymmetric",
            LeftSymmetric => "left-symmetric",
            RightSymmetric => "right-symmetric",
            Parity0 => "parity-first",
            ParityN => "parity-last",
            RotatingZeroRestart => "ddf-zero-restart",
            RotatingNRestart => "ddf-N-restart",
            RotatingNContinue => "ddf-N-continue",
            LeftAsymmetric6 => "left-asymmetric-6",
            RightAsymmetric6 => "right-asymmetric-6",
            LeftSymmetric6 => "left-symmetric-6",
            RightSymmetric6 => "right-symmetric-6",
            Parity06 => "parity-first-6",
        }
    }

    /// True for the three DDF layouts, whose Q slot order follows raw disk numbers.
    pub fn is_ddf(self) -> bool {
        use ParityAlgorithm::*;
        matches!(self, RotatingZeroRestart | RotatingNRestart | RotatingNContinue)
    }

    /// True for the layouts valid on RAID5 (`algorithm_valid_raid5`: 0..=5).
    pub fn valid_for_raid5(self) -> bool {
        self.number() <= 5
    }

    fn parse(text: &str) -> Option<ParityAlgorithm> {
        let short = match text {
            "la" => Some(ParityAlgorithm::LeftAsymmetric),
            "ra" => Some(ParityAlgorithm::RightAsymmetric),
            "ls" => Some(ParityAlgorithm::LeftSymmetric),
            "rs" => Some(ParityAlgorithm::RightSymmetric),
            _ => None,
        };
        short.or_else(|| {
            ParityAlgorithm::ALL.into_iter().find(|a| a.name().eq_ignore_ascii_case(text))
        })
    }
}

/// md raid10 geometry word: near copies, far copies, offset flag and far-set mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Raid10Layout {
    pub near_copies: u32,
    pub far_copies: u32,
    pub offset: bool,
    /// Bits 17-18 of the layout word: 0 original, 1 the "buggy" far sets, 2 fixed far sets.
    pub far_set_mode: u32,
}

impl Raid10Layout {
    /// The total number of copies of each chunk.
    pub fn copies(self) -> u32 {
        self.near_copies * self.far_copies
    }

    /// md's layout word (raid10.c `setup_geo`).
    pub fn number(self) -> u32 {
        self.near_copies | (self.far_copies << 8) | ((self.offset as u32) << 16)
            | (self.far_set_mode << 17)
    }

    /// The mdadm spelling: `n2`, `f2`, `o2`, or the raw word for combinations mdadm cannot name.
    pub fn name(self) -> String {
        if self.far_set_mode != 0 || (self.near_copies > 1 && self.far_copies > 1) {
            return format!("0x{:x}", self.number());
        }
        if self.far_copies == 1 {
            format!("n{}", self.near_copies)
        } else if self.offset {
            format!("o{}", self.far_copies)
        } else {
            format!("f{}", self.far_copies)
        }
    }

    /// How `mdadm --detail` names it (`near=2`, `far=2`, `offset=2`).
    pub fn long_name(self) -> String {
        if self.far_copies == 1 {
            format!("near={}", self.near_copies)
        } else if self.offset {
            format!("offset={}", self.far_copies)
        } else {
            format!("far={}", self.far_copies)
        }
    }

    /// Decodes md's layout word, rejecting what `setup_geo` rejects.
    pub fn from_number(word: u32) -> Result<Raid10Layout> {
        let near_copies = word & 0xff;
        let far_copies = (word >> 8) & 0xff;
        let offset = (word >> 16) & 1 == 1;
        let far_set_mode = word >> 17;
        if far_set_mode > 2 || near_copies == 0 || far_copies == 0 {
            return Err(Error::layout(format!("invalid raid10 layout word 0x{word:x}")));
        }
        Ok(Raid10Layout { near_copies, far_copies, offset, far_set_mode })
    }

    fn parse(text: &str) -> Option<Raid10Layout> {
        let (kind, count) = text.split_at(text.find(|c: char| c.is_ascii_digit())?);
        let count: u32 = count.parse().ok()?;
        if !(1..=255).contains(&count) {
            return None;
        }
        let layout = |near_copies, far_copies, offset| Raid10Layout {
            near_copies,
            far_copies,
            offset,
            far_set_mode: 0,
        };
        match kind {
            "n" | "near=" => Some(layout(count, 1, false)),
            "f" | "far=" => Some(layout(1, count, false)),
            "o" | "offset=" => Some(layout(1, count, true)),
            _ => None,
        }
    }
}

/// md raid0's multi-zone layouts (kernel raid0.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Raid0Layout {
    /// `RAID0_ORIG_LAYOUT`: the pre-3.14 mapping, and mdadm's default.
    Original,
    /// `RAID0_ALT_MULTIZONE_LAYOUT`: the 3.14..5.3 mapping.
    Alternate,
}

/// A layout for any level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// raid1 has no layout.
    Mirror,
    Raid0(Raid0Layout),
    Parity(ParityAlgorithm),
    Raid10(Raid10Layout),
}

impl Layout {
    /// mdadm's default layout for a level (`Create.c:default_layout`).
    pub fn default_for(level: Level) -> Layout {
        match level {
            Level::Raid0 => Layout::Raid0(Raid0Layout::Original),
            Level::Raid1 => Layout::Mirror,
            Level::Raid4 => Layout::Parity(ParityAlgorithm::ParityN),
            Level::Raid5 | Level::Raid6 => Layout::Parity(ParityAlgorithm::LeftSymmetric),
            Level::Raid10 => Layout::Raid10(Raid10Layout {
                near_copies: 2,
                far_copies: 1,
                offset: false,
                far_set_mode: 0,
            }),
        }
    }

    /// Parses a layout name for a level; errors name the level and list valid choices.
    pub fn parse(level: Level, text: &str) -> Result<Layout> {
        let trimmed = text.trim();
        let parsed = match level {
            Level::Raid0 => match trimmed.to_ascii_lowercase().as_str() {
                "original" | "orig" | "1" => Some(Layout::Raid0(Raid0Layout::Original)),
                "alternate" | "alt" | "2" => Some(Layout::Raid0(Raid0Layout::Alternate)),
                _ => None,
            },
            Level::Raid1 => None,
            Level::Raid4 => match trimmed {
                "parity-last" => Some(Layout::Parity(ParityAlgorithm::ParityN)),
                _ => None,
            },
            Level::Raid5 => ParityAlgorithm::parse(trimmed)
                .filter(|a| a.valid_for_raid5())
                .map(Layout::Parity),
            Level::Raid6 => ParityAlgorithm::parse(trimmed).map(Layout::Parity),
            Level::Raid10 => Raid10Layout::parse(&trimmed.to_ascii_lowercase()).map(Layout::Raid10),
        };
        parsed.ok_or_else(|| {
            Error::layout(format!(
                "unknown layout '{text}' for raid{}: expected {}",
                level.number(),
                Layout::choices(level)
            ))
        })
    }

    /// A one-line list of the layout names valid for a level.
    pub fn choices(level: Level) -> String {
        match level {
            Level::Raid0 => "original or alternate".to_string(),
            Level::Raid1 => "no layout (raid1 has none)".to_string(),
            Level::Raid4 => "parity-last".to_string(),
            Level::Raid5 => ParityAlgorithm::ALL
                .iter()
                .filter(|a| a.valid_for_raid5())
                .map(|a| a.name())
                .collect::<Vec<_>>()
                .join(", "),
            Level::Raid6 => {
                ParityAlgorithm::ALL.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ")
            }
            Level::Raid10 => "nN, fN or oN (near, far, offset copies), e.g. n2, f2, o3".to_string(),
        }
    }

    /// The name to show users (mdadm's spelling).
    pub fn name(self) -> String {
        match self {
            Layout::Mirror => "none".to_string(),
            Layout::Raid0(Raid0Layout::Original) => "original".to_string(),
            Layout::Raid0(Raid0Layout::Alternate) => "alternate".to_string(),
            Layout::Parity(a) => a.name().to_string(),
            Layout::Raid10(r) => r.name(),
        }
    }

    /// md's superblock layout word.
    pub fn number(self) -> u32 {
        match self {
            Layout::Mirror => 0,
            Layout::Raid0(Raid0Layout::Original) => 1,
            Layout::Raid0(Raid0Layout::Alternate) => 2,
            Layout::Parity(a) => a.number(),
            Layout::Raid10(r) => r.number(),
        }
    }
}
