//! Flash SSD model: a controller, channels × dies of NAND, a host link and a write buffer,
//! with garbage collection charged as analytic write amplification.
//!
//! The structure follows published SSD simulators, reduced to what shapes a DBA's latency and throughput: MQSim (Tavakkol et al., FAST 2018:
//! channels × chips × dies, NCQ/NVMe queues, DRAM write cache, GC from over-provisioning,
//! copyback) and the MSR SSD add-on to DiskSim (Agrawal et al., "Design tradeoffs for SSD
//! performance", USENIX ATC 2008: flash timing, interleaving, cleaning cost).
//!
//! # What a command goes through
//!
//! 1. **Controller.** Every command (read, write, flush) occupies the controller's command
//!    processor for `controller_us_per_command`, one command at a time (FIFO). This is the
//!    per-command ceiling on IOPS (`1 / controller_us_per_command`); then a pipelined firmware
//!    latency `overhead_us_read` / `overhead_us_write` follows, which adds latency but no
//!    serialisation.
//! 2. **Reads** are split into flash pages (`page_kib`) and striped over the dies by LBA: page
//!    `p` lives on die `p mod dies`, and die `d` hangs on channel `d mod channels`, so
//!    consecutive pages go to different channels first. A page read holds its die for `tR`
//!    (`read_us_page`, ± `read_us_spread` drawn from the drive's PRNG: TLC LSB/CSB/MSB pages
//!    differ), then moves the requested bytes over its channel (`channel_mb_s`, FIFO; the die
//!    stays busy until its page register is emptied), then over the host link
//!    (`interface_mb_s`, FIFO). The command completes when its last page reaches the host. At
//!    every die, queued reads go before background work: a running program is not suspended,
//!    but garbage collection yields to a read at the end of the current relocation.
//! 3. **Writes** need room in the write buffer (`write_buffer_mib`, DRAM or SLC cache). When there
//!    is room the data crosses the host link and the write completes at once ("buffered"); when
//!    there is not, writes wait in FIFO order for background programs to free space. A write
//!    larger than the whole buffer is admitted when the buffer is empty.
//! 4. **Background programs** take buffered data a full page at a time (a partial page only when
//!    a flush or a waiting write needs it, padded to a full page) and program it on any idle
//!    die, round robin: the page crosses the channel, then the die programs it for tPROG, which
//!    makes the data durable and frees its bytes from the buffer. The die then owes that page's
//!    share of garbage collection (below) and pays it before it takes another program, in
//!    relocation-sized chunks (tR + tPROG) between which queued reads go first.
//! 5. **Flush** completes when every write acknowledged before it has been programmed (garbage
//!    collection owed for those pages may still be running).
//!
//! # Garbage collection as write amplification
//!
//! There is no mapping table: GC is charged analytically. For uniformly random overwrites at
//! over-provisioning ρ the steady-state write amplification is WA(ρ) from [`gc`] (Xiang &
//! Kurkoski 2012; the often quoted (1+ρ)/(2ρ) is Agarwal & Marrow 2010, which is optimistic at low ρ).
//! Each programmed page then costs its die
//!
//! ```text
//! tPROG + (WA − 1) · (tR + tPROG) + WA · tBERS / pages_per_block
//! ```
//!
//! i.e. the page itself, WA − 1 relocated valid pages moved with on-die copyback (read + program,
//! no channel transfer, as MQSim's copyback option), and one block erase per `pages_per_block`
//! programs (every programmed page, host or relocated, uses 1/pages_per_block of an erased
//! block).
//!
//! Sequential overwrites invalidate whole blocks and need no relocation (WA = 1). The model keeps
//! a bounded estimate of the *fraction of recent writes that were random*: a write continuing one
//! of the last 8 write streams (it starts where a recent write ended) counts as sequential, any
//! other as random, and the fraction is an exponential moving average over the last
//! `pattern_window_mib` of data written (starting from `initial_random_fraction`, default 1: a
//! drive preconditioned with random writes, the datasheet condition for random-write IOPS). A
//! page's cost interpolates linearly between the sequential and random costs by that fraction.
//! Assumptions worth knowing: random writes are taken to cover the whole user space uniformly
//! (hot/cold separation and TRIM would lower WA), and the drive is in steady state from the
//! start (no fresh-out-of-box phase).
//!
//! # State and cost
//!
//! All state is integer nanoseconds, bytes and Q16 fractions; floats are used only in
//! [`SsdSpec::from_params`] / [`Ssd::new`] to derive integer costs, each rounded once. After
//! warm-up, `submit` and `advance` do not allocate: command slots, queues and the event heap keep
//! their capacity. Each event costs O(log events), plus O(dies/64) when looking for an idle die
//! and O(dies) per finished program while a flush is waiting. A GC run is one event unless a
//! read cuts it short.

pub mod gc;
pub mod presets;

pub use presets::{preset, preset_info, Preset, PRESETS, PRESET_NAMES};

use super::params::{self, get, ParamDecl, ParamValues};
use super::{Command, Completion, Drive, DriveInfo, Op};
use crate::error::{Error, Result};
use crate::{rng::Prng, time::Nanos};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const SECTOR: u64 = crate::SECTOR_BYTES;
/// Fixed point for fractions: 1.0 = 65536.
const Q16: u64 = 1 << 16;
/// Write streams tracked for sequential detection.
const STREAMS: usize = 8;

/// Every parameter the SSD model reads. Defaults describe the Intel X25-E 64 GB (see
/// [`presets`]), so a partial parameter file degrades to a known drive.
pub const DECLARATIONS: &[ParamDecl] = &[
    ParamDecl {
        name: "capacity_bytes",
        unit: "bytes",
        default: 64e9,
        min: 1e6,
        max: 1e15,
        doc: "User-visible capacity in bytes (rounded down to whole 512-byte sectors).",
    },
    ParamDecl {
        name: "channels",
        unit: "count",
        default: 10.0,
        min: 1.0,
        max: 64.0,
        doc: "Flash channels (independent NAND buses) on the controller.",
    },
    ParamDecl {
        name: "dies_per_channel",
        unit: "count",
        default: 1.0,
        min: 1.0,
        max: 64.0,
        doc: "Dies (ways) sharing each channel that can read or program independently.",
    },
    ParamDecl {
        name: "page_kib",
        unit: "KiB",
        default: 4.0,
        min: 0.5,
        max: 256.0,
        doc: "Flash page (program unit and read stripe unit) in KiB; a whole number of sectors.",
    },
    ParamDecl {
        name: "pages_per_block",
        unit: "count",
        default: 64.0,
        min: 1.0,
        max: 65536.0,
        doc: "Pages per erase block, to amortise the block erase over programmed pages.",
    },
    ParamDecl {
        name: "read_us_page",
        unit: "us",
        default: 25.0,
        min: 0.0,
        max: 100000.0,
        doc: "Page read (array to page register, tR) in microseconds.",
    },
    ParamDecl {
        name: "read_us_spread",
        unit: "us",
        default: 0.0,
        min: 0.0,
        max: 100000.0,
        doc: "Half-width of a uniform variation of tR (e.g. TLC LSB/CSB/MSB pages); at most read_us_page.",
    },
    ParamDecl {
        name: "program_us_page",
        unit: "us",
        default: 210.0,
        min: 0.0,
        max: 1e6,
        doc: "Page program (tPROG) in microseconds.",
    },
    ParamDecl {
        name: "program_us_spread",
        unit: "us",
        default: 0.0,
        min: 0.0,
        max: 1e6,
        doc: "Half-width of a uniform variation of tPROG (program-and-verify loops; MLC/TLC fast and slow pages); at most program_us_page.",
    },
    ParamDecl {
        name: "erase_ms_block",
        unit: "ms",
        default: 1.5,
        min: 0.0,
        max: 1000.0,
        doc: "Block erase (tBERS) in milliseconds, amortised over pages_per_block programs.",
    },
    ParamDecl {
        name: "channel_mb_s",
        unit: "MB/s",
        default: 600.0,
        min: 1.0,
        max: 1e6,
        doc: "Transfer rate of one flash channel in MB/s (10^6 bytes per second).",
    },
    ParamDecl {
        name: "interface_mb_s",
        unit: "MB/s",
        default: 270.0,
        min: 1.0,
        max: 1e6,
        doc: "Usable host link rate in MB/s (SATA 3 Gb/s about 270, PCIe 4.0 x4 about 7000).",
    },
    ParamDecl {
        name: "interface_full_duplex",
        unit: "bool",
        default: 0.0,
        min: 0.0,
        max: 1.0,
        doc: "1 if reads and writes cross the host link at once (PCIe), 0 if they share it (SATA).",
    },
    ParamDecl {
        name: "controller_us_per_command",
        unit: "us",
        default: 28.5,
        min: 0.0,
        max: 100000.0,
        doc: "Controller time each command holds the (single) command processor; caps IOPS.",
    },
    ParamDecl {
        name: "overhead_us_read",
        unit: "us",
        default: 0.0,
        min: 0.0,
        max: 100000.0,
        doc: "Pipelined firmware latency added to every read after the command processor.",
    },
    ParamDecl {
        name: "overhead_us_write",
        unit: "us",
        default: 41.0,
        min: 0.0,
        max: 100000.0,
        doc: "Pipelined firmware latency added to every write after the command processor.",
    },
    ParamDecl {
        name: "queue_depth",
        unit: "count",
        default: 32.0,
        min: 1.0,
        max: 65536.0,
        doc: "Commands the drive accepts at once (NCQ 32 on SATA, up to 64K per NVMe queue).",
    },
    ParamDecl {
        name: "write_buffer_mib",
        unit: "MiB",
        default: 0.25,
        min: 0.0,
        max: 1048576.0,
        doc: "Write buffer (DRAM or SLC cache) in MiB; at least one flash page.",
    },
    ParamDecl {
        name: "over_provisioning_fraction",
        unit: "fraction",
        default: 0.045,
        min: 0.001,
        max: 10.0,
        doc: "Spare flash over user capacity, (physical - user) / user; sets random-write GC cost.",
    },
    ParamDecl {
        name: "pattern_window_mib",
        unit: "MiB",
        default: 16.0,
        min: 0.001,
        max: 1e9,
        doc: "Data written over which the fraction of random writes is averaged, in MiB.",
    },
    ParamDecl {
        name: "initial_random_fraction",
        unit: "fraction",
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "Fraction of random writes assumed before any write is seen (1 = randomly preconditioned).",
    },
];

/// A validated SSD description with every quantity in integer units.
#[derive(Clone, Debug, PartialEq)]
pub struct SsdSpec {
    pub capacity_bytes: u64,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub page_bytes: u64,
    pub pages_per_block: u64,
    pub read_ns: Nanos,
    pub read_spread_ns: Nanos,
    pub program_ns: Nanos,
    /// Half-width of the uniform variation of tPROG around `program_ns`.
    pub program_spread_ns: Nanos,
    pub erase_ns: Nanos,
    /// Channel transfer cost in femtoseconds per byte (10^9 / MB/s), rounded once.
    pub channel_fs_per_byte: u64,
    /// Host link transfer cost in femtoseconds per byte.
    pub interface_fs_per_byte: u64,
    pub interface_full_duplex: bool,
    pub controller_ns: Nanos,
    pub overhead_read_ns: Nanos,
    pub overhead_write_ns: Nanos,
    pub queue_depth: u32,
    pub write_buffer_bytes: u64,
    pub over_provisioning: f64,
    /// Steady-state WA for uniformly random writes at `over_provisioning`.
    pub write_amplification_random: f64,
    pub pattern_window_bytes: u64,
    /// Initial fraction of random writes, Q16 (65536 = all random).
    pub initial_random_q16: u64,
    /// Interface label for reports, e.g. `SATA 3Gb/s`.
    pub interface: String,
}



/// A flash operation's time and the half-width of its variation, in ns; the spread may not
/// exceed the time.
fn time_and_spread(v: &ParamValues, time_key: &str, spread_key: &str) -> Result<(Nanos, Nanos)> {
    let (time, spread) = (nanos_us(v, time_key), nanos_us(v, spread_key));
    if spread > time {
        return Err(Error::device(format!(
            "{spread_key} = {} exceeds {time_key} = {}",
            get(v, spread_key),
            get(v, time_key)
        )));
    }
    Ok((time, spread))
}

fn nanos_us(values: &ParamValues, name: &str) -> Nanos {
    (get(values, name) * 1e3).round() as Nanos
}

fn femtos_per_byte(mb_s: f64) -> u64 {
    // 1 byte at 1 MB/s takes 1 µs = 10^9 fs.
    (1e9 / mb_s).round().max(1.0) as u64
}

impl SsdSpec {
    /// Builds a spec from parameter values (unknown names and out-of-range values are
    /// `InvalidDevice` errors naming the parameter; missing ones take their defaults).
    pub fn from_params(values: &ParamValues) -> Result<SsdSpec> {
        let v = params::resolve(DECLARATIONS, values, "ssd")?;
        let capacity_bytes = (get(&v, "capacity_bytes") as u64) / SECTOR * SECTOR;
        let page_sectors = get(&v, "page_kib") * 2.0;
        if page_sectors.fract() != 0.0 {
            return Err(Error::device(format!(
                "page_kib = {} must be a whole number of 512-byte sectors",
                get(&v, "page_kib")
            )));
        }
        let page_bytes = page_sectors as u64 * SECTOR;
        let write_buffer_bytes = (get(&v, "write_buffer_mib") * 1048576.0).round() as u64;
        if write_buffer_bytes < page_bytes {
            return Err(Error::device(format!(
                "write_buffer_mib = {} is smaller than one flash page (page_kib = {})",
                get(&v, "write_buffer_mib"),
                get(&v, "page_kib")
            )));
        }
        if capacity_bytes < page_bytes {
            return Err(Error::device(format!(
                "capacity_bytes = {capacity_bytes} is smaller than one flash page"
            )));
        }
        let (read_ns, read_spread_ns) = time_and_spread(&v, "read_us_page", "read_us_spread")?;
        let (program_ns, program_spread_ns) = time_and_spread(&v, "program_us_page", "program_us_spread")?;
        let over_provisioning = get(&v, "over_provisioning_fraction");
        let full_duplex = params::whole(&v, "interface_full_duplex")? == 1;
        let interface_mb_s = get(&v, "interface_mb_s");
        Ok(SsdSpec {
            capacity_bytes,
            channels: params::whole(&v, "channels")? as u32,
            dies_per_channel: params::whole(&v, "dies_per_channel")? as u32,
            page_bytes,
            pages_per_block: params::whole(&v, "pages_per_block")?,
            read_ns,
            read_spread_ns,
            program_ns,
            program_spread_ns,
            erase_ns: (get(&v, "erase_ms_block") * 1e6).round() as Nanos,
            channel_fs_per_byte: femtos_per_byte(get(&v, "channel_mb_s")),
            interface_fs_per_byte: femtos_per_byte(interface_mb_s),
            interface_full_duplex: full_duplex,
            controller_ns: nanos_us(&v, "controller_us_per_command"),
            overhead_read_ns: nanos_us(&v, "overhead_us_read"),
            overhead_write_ns: nanos_us(&v, "overhead_us_write"),
            queue_depth: params::whole(&v, "queue_depth")? as u32,
            write_buffer_bytes,
            over_provisioning,
            write_amplification_random: gc::write_amplification_uniform(over_provisioning),
            pattern_window_bytes: ((get(&v, "pattern_window_mib") * 1048576.0).round() as u64)
                .max(SECTOR),
            initial_random_q16: (get(&v, "initial_random_fraction") * Q16 as f64).round() as u64,
            interface: format!(
                "{} host link {} MB/s",
                if full_duplex {
                    "full-duplex"
                } else {
                    "half-duplex"
                },
                interface_mb_s
            ),
        })
    }

    /// The spec of a named preset, with the preset's interface label.
    pub fn from_preset(name: &str) -> Result<SsdSpec> {
        let info =
            preset_info(name).ok_or_else(|| Error::device(format!("unknown ssd preset '{name}'")))?;
        let mut spec = SsdSpec::from_params(&info.values())?;
        spec.interface = info.interface.to_string();
        Ok(spec)
    }

    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }

    /// Die time one programmed page costs with sequential (WA = 1) and uniformly random
    /// (WA = WA(ρ)) writes, excluding the channel transfer; see the module docs.
    pub fn program_costs_ns(&self) -> (Nanos, Nanos) {
        let erase_share = self.erase_ns as f64 / self.pages_per_block as f64;
        let seq = (self.program_ns as f64 + erase_share).round() as Nanos;
        let wa = self.write_amplification_random;
        let random = (self.program_ns as f64
            + (wa - 1.0) * (self.read_ns + self.program_ns) as f64
            + wa * erase_share)
            .round() as Nanos;
        (seq, random)
    }
}

fn transfer_ns(bytes: u64, fs_per_byte: u64) -> Nanos {
    ((bytes as u128 * fs_per_byte as u128).div_ceil(1_000_000)) as Nanos
}

/// Internal event kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// A command leaves the controller (arg: slot).
    Ready,
    /// A die finished sensing a page (arg: die).
    Sensed,
    /// A die's page data crossed the channel (arg: die).
    ReadOut,
    /// One read piece reached the host (arg: slot).
    PieceHome,
    /// A write's data reached the buffer (arg: slot).
    WriteIn,
    /// A die finished programming a page of buffered data (arg: die).
    ProgramDone,
    /// A die finished one chunk of garbage-collection work (arg: die).
    GcStep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: Nanos,
    seq: u64,
    kind: Kind,
    arg: u32,
    /// The die's generation for `GcStep` (a preempted run's event is stale), else 0.
    generation: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    live: bool,
    id: u64,
    op: Option<Op>,
    sector: u64,
    sectors: u32,
    submitted: Nanos,
    /// Read pieces not yet at the host.
    pending: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Piece {
    slot: u32,
    bytes: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DieState {
    Idle,
    Reading(Piece),
    /// Programming buffered data that starts at byte `start` of the acknowledged stream.
    Programming {
        start: u64,
        bytes: u64,
    },
    /// Paying garbage-collection debt from `since` to `until`, in relocation-sized chunks; a
    /// read arriving meanwhile preempts it at the next chunk boundary.
    Collecting {
        since: Nanos,
        until: Nanos,
    },
}

#[derive(Clone, Debug)]
struct Die {
    state: DieState,
    reads: VecDeque<Piece>,
    /// Garbage-collection work this die still owes for pages it programmed.
    gc_debt: Nanos,
    /// Bumped when a GC run is cut short, so its original `GcStep` event is ignored.
    generation: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Stream {
    next_sector: u64,
    last_use: u64,
}

/// A simulated flash SSD; see the module documentation.
pub struct Ssd {
    spec: SsdSpec,
    info: DriveInfo,
    prng: Prng,
    capacity_sectors: u64,
    page_sectors: u64,
    dies: u32,
    cost_seq_ns: Nanos,
    cost_random_ns: Nanos,
    /// Largest piece of garbage collection a die does without checking for reads: one
    /// copyback relocation (tR + tPROG).
    gc_chunk_ns: Nanos,
    page_channel_ns: Nanos,

    now: Nanos,
    seq: u64,
    events: BinaryHeap<Reverse<Event>>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    outstanding: u32,
    /// Completions produced while catching up inside `submit`, handed out by `advance`.
    carry: Vec<Completion>,

    controller_free: Nanos,
    channel_free: Vec<Nanos>,
    /// Host link free times: [device-to-host, host-to-device]; both use [0] when half duplex.
    link_free: [Nanos; 2],
    die: Vec<Die>,
    /// Bit per die: idle (and, by invariant, no queued reads).
    idle: Vec<u64>,
    idle_cursor: u32,
    /// Programs in flight (data not yet durable).
    programs_active: u32,
    /// Dies doing background work (programs or garbage collection), for busy time.
    background: u32,

    // Write buffer, in bytes. Stream offsets count acknowledged bytes since the start.
    buffer_used: u64,
    acked_total: u64,
    taken_total: u64,
    waiting_writes: VecDeque<u32>,
    flushes: VecDeque<(u32, u64)>,

    // Access-pattern estimate.
    streams: [Stream; STREAMS],
    stream_clock: u64,
    random_q16: u64,

    busy_ns: Nanos,
    busy_mark: Nanos,
}

impl Ssd {
    pub fn new(spec: SsdSpec, prng: Prng) -> Ssd {
        assert!(spec.channels > 0 && spec.dies_per_channel > 0 && spec.queue_depth > 0);
        assert!(spec.page_bytes.is_multiple_of(SECTOR) && spec.page_bytes > 0);
        assert!(spec.write_buffer_bytes >= spec.page_bytes);
        assert!(spec.read_spread_ns <= spec.read_ns);
        assert!(spec.program_spread_ns <= spec.program_ns);
        let dies = spec.dies();
        let (cost_seq_ns, cost_random_ns) = spec.program_costs_ns();
        assert!(cost_random_ns >= cost_seq_ns && cost_seq_ns >= spec.program_ns);
        let qd = spec.queue_depth as usize;
        let info = DriveInfo {
            kind: "ssd",
            capacity_bytes: spec.capacity_bytes,
            rpm: 0,
            interface: spec.interface.clone(),
            rotational: false,
        };
        let page_channel_ns = transfer_ns(spec.page_bytes, spec.channel_fs_per_byte);
        Ssd {
            capacity_sectors: spec.capacity_bytes / SECTOR,
            page_sectors: spec.page_bytes / SECTOR,
            dies,
            cost_seq_ns,
            cost_random_ns,
            gc_chunk_ns: (spec.read_ns + spec.program_ns).max(1),
            page_channel_ns,
            now: 0,
            seq: 0,
            events: BinaryHeap::with_capacity(qd * 2 + dies as usize * 2 + 16),
            slots: vec![Slot::default(); qd],
            free_slots: (0..qd as u32).rev().collect(),
            outstanding: 0,
            carry: Vec::with_capacity(qd),
            controller_free: 0,
            channel_free: vec![0; spec.channels as usize],
            link_free: [0; 2],
            die: (0..dies)
                .map(|_| Die {
                    state: DieState::Idle,
                    reads: VecDeque::with_capacity(4),
                    gc_debt: 0,
                    generation: 0,
                })
                .collect(),
            idle: {
                let mut bits = vec![0u64; (dies as usize).div_ceil(64)];
                for d in 0..dies as usize {
                    bits[d / 64] |= 1 << (d % 64);
                }
                bits
            },
            idle_cursor: 0,
            programs_active: 0,
            background: 0,
            buffer_used: 0,
            acked_total: 0,
            taken_total: 0,
            waiting_writes: VecDeque::with_capacity(qd),
            flushes: VecDeque::with_capacity(qd),
            streams: [Stream::default(); STREAMS],
            stream_clock: 0,
            random_q16: spec.initial_random_q16,
            busy_ns: 0,
            busy_mark: 0,
            info,
            prng,
            spec,
        }
    }

    pub fn spec(&self) -> &SsdSpec {
        &self.spec
    }

    /// Current estimate of the fraction of recent writes that were random (0..=1).
    pub fn random_write_fraction(&self) -> f64 {
        self.random_q16 as f64 / Q16 as f64
    }

    /// Bytes held in the write buffer (admitted and not yet programmed).
    pub fn buffered_bytes(&self) -> u64 {
        self.buffer_used
    }

    fn push(&mut self, time: Nanos, kind: Kind, arg: u32) {
        self.push_gen(time, kind, arg, 0);
    }

    fn push_gen(&mut self, time: Nanos, kind: Kind, arg: u32, generation: u32) {
        debug_assert!(time >= self.now);
        self.seq += 1;
        self.events.push(Reverse(Event {
            time,
            seq: self.seq,
            kind,
            arg,
            generation,
        }));
    }

    /// Accounts busy time up to `t` with the state that held since the last mark.
    fn mark(&mut self, t: Nanos) {
        assert!(
            t >= self.busy_mark,
            "time went backwards: {t} < {}",
            self.busy_mark
        );
        if self.outstanding > 0 || self.background > 0 {
            self.busy_ns += t - self.busy_mark;
        }
        self.busy_mark = t;
        self.now = t;
    }

    fn link_index(&self, to_device: bool) -> usize {
        if self.spec.interface_full_duplex && to_device {
            1
        } else {
            0
        }
    }

    fn link_transfer(&mut self, now: Nanos, bytes: u64, to_device: bool) -> Nanos {
        let i = self.link_index(to_device);
        let start = self.link_free[i].max(now);
        self.link_free[i] = start + transfer_ns(bytes, self.spec.interface_fs_per_byte);
        self.link_free[i]
    }

    fn set_idle(&mut self, d: u32, idle: bool) {
        let (w, b) = ((d / 64) as usize, d % 64);
        if idle {
            self.idle[w] |= 1 << b;
        } else {
            self.idle[w] &= !(1 << b);
        }
    }

    /// Finds an idle die, scanning round robin from the cursor.
    fn find_idle(&mut self) -> Option<u32> {
        let words = self.idle.len() as u32;
        let start = self.idle_cursor;
        for step in 0..=words {
            let w = ((start / 64) + step) % words;
            let mut bits = self.idle[w as usize];
            if step == 0 {
                bits &= !0u64 << (start % 64);
            }
            if bits != 0 {
                let d = w * 64 + bits.trailing_zeros();
                debug_assert!(d < self.dies);
                self.idle_cursor = (d + 1) % self.dies;
                return Some(d);
            }
        }
        None
    }

    fn dirty(&self) -> u64 {
        self.acked_total - self.taken_total
    }

    /// Whether buffered data should be programmed now, and how much.
    fn destage_bytes(&self) -> u64 {
        let dirty = self.dirty();
        if dirty >= self.spec.page_bytes {
            return self.spec.page_bytes;
        }
        let flush_needs = self
            .flushes
            .back()
            .is_some_and(|&(_, target)| target > self.taken_total);
        if dirty > 0 && (flush_needs || !self.waiting_writes.is_empty()) {
            return dirty;
        }
        0
    }

    /// Garbage-collection die time owed per programmed page at the current random fraction.
    fn gc_cost(&self) -> Nanos {
        self.cost_seq_ns + (self.cost_random_ns - self.cost_seq_ns) * self.random_q16 / Q16
            - self.spec.program_ns
    }

    /// `base` ± up to `spread`, uniformly, from the drive's PRNG (no draw without a spread).
    fn vary(&mut self, base: Nanos, spread: Nanos) -> Nanos {
        if spread == 0 {
            return base;
        }
        base - spread + self.prng.below(2 * spread + 1)
    }

    fn start_program(&mut self, d: u32, now: Nanos, bytes: u64) {
        assert!(bytes > 0 && bytes <= self.spec.page_bytes && bytes <= self.dirty());
        let gc = self.gc_cost();
        let die = &mut self.die[d as usize];
        assert!(die.state == DieState::Idle && die.reads.is_empty() && die.gc_debt == 0);
        die.state = DieState::Programming {
            start: self.taken_total,
            bytes,
        };
        die.gc_debt = gc;
        self.taken_total += bytes;
        self.programs_active += 1;
        self.background += 1;
        self.set_idle(d, false);
        let ch = (d % self.spec.channels) as usize;
        let start = self.channel_free[ch].max(now);
        // A partial page is padded: the whole page crosses the channel and is programmed.
        self.channel_free[ch] = start + self.page_channel_ns;
        // tPROG varies page to page (program-and-verify loops; fast and slow pages of MLC/TLC):
        // without it every die, started together when the buffer first fills, stays in step
        // and frees its page at the same instant, so writes waiting for room all wait alike.
        let t_prog = self.vary(self.spec.program_ns, self.spec.program_spread_ns);
        let done = self.channel_free[ch] + t_prog;
        self.push(done, Kind::ProgramDone, d);
    }

    /// Gives work to die `d` if it is idle: a queued read first, then garbage collection it
    /// owes (one relocation at a time, so reads wait at most one chunk), then a new program.
    fn dispatch(&mut self, d: u32, now: Nanos) {
        if self.die[d as usize].state != DieState::Idle {
            return;
        }
        if let Some(piece) = self.die[d as usize].reads.pop_front() {
            self.die[d as usize].state = DieState::Reading(piece);
            self.set_idle(d, false);
            let t_r = self.vary(self.spec.read_ns, self.spec.read_spread_ns);
            self.push(now + t_r, Kind::Sensed, d);
            return;
        }
        if self.die[d as usize].gc_debt > 0 {
            // Runs the whole debt as one event; `preempt_gc` cuts it at a chunk boundary if a
            // read arrives, so reads wait at most one relocation.
            let die = &mut self.die[d as usize];
            let until = now + die.gc_debt;
            die.gc_debt = 0;
            die.state = DieState::Collecting { since: now, until };
            let generation = die.generation;
            self.background += 1;
            self.set_idle(d, false);
            self.push_gen(until, Kind::GcStep, d, generation);
            return;
        }
        let bytes = self.destage_bytes();
        if bytes > 0 {
            self.start_program(d, now, bytes);
        } else {
            self.set_idle(d, true);
        }
    }

    /// A read has queued at die `d`: if the die is collecting garbage, stop at the end of the
    /// current relocation and hand the rest back as debt.
    fn preempt_gc(&mut self, d: u32, now: Nanos) {
        let chunk = self.gc_chunk_ns;
        let die = &mut self.die[d as usize];
        let DieState::Collecting { since, until } = die.state else {
            return;
        };
        let boundary = since + (now - since).div_ceil(chunk).max(1) * chunk;
        if boundary >= until {
            return;
        }
        die.gc_debt += until - boundary;
        die.state = DieState::Collecting {
            since,
            until: boundary,
        };
        die.generation = die.generation.wrapping_add(1);
        let generation = die.generation;
        self.push_gen(boundary, Kind::GcStep, d, generation);
    }

    /// Starts programs on idle dies while there is data to program.
    fn destage(&mut self, now: Nanos) {
        loop {
            let bytes = self.destage_bytes();
            if bytes == 0 {
                return;
            }
            match self.find_idle() {
                Some(d) => self.start_program(d, now, bytes),
                None => return,
            }
        }
    }

    /// Lowest acknowledged byte offset not yet durable.
    fn durable_prefix(&self) -> u64 {
        let mut prefix = self.taken_total;
        if self.programs_active > 0 {
            for die in &self.die {
                if let DieState::Programming { start, .. } = die.state {
                    prefix = prefix.min(start);
                }
            }
        }
        prefix
    }

    fn complete(&mut self, slot: u32, time: Nanos, out: &mut Vec<Completion>) {
        let s = &mut self.slots[slot as usize];
        assert!(s.live, "completing a free slot {slot}");
        assert!(
            time >= s.submitted,
            "completion at {time} before submit at {}",
            s.submitted
        );
        out.push(Completion { id: s.id, time });
        *s = Slot::default();
        self.free_slots.push(slot);
        assert!(self.outstanding > 0);
        self.outstanding -= 1;
    }

    fn complete_flushes(&mut self, now: Nanos, out: &mut Vec<Completion>) {
        if self.flushes.is_empty() {
            return;
        }
        let prefix = self.durable_prefix();
        while let Some(&(slot, target)) = self.flushes.front() {
            if target > prefix {
                break;
            }
            self.flushes.pop_front();
            self.complete(slot, now, out);
        }
    }

    /// Admits waiting writes in FIFO order while they fit.
    fn admit_writes(&mut self, now: Nanos) {
        while let Some(&slot) = self.waiting_writes.front() {
            if !self.try_admit(slot, now) {
                break;
            }
            self.waiting_writes.pop_front();
        }
    }

    fn try_admit(&mut self, slot: u32, now: Nanos) -> bool {
        let bytes = self.slots[slot as usize].sectors as u64 * SECTOR;
        let fits = self.buffer_used + bytes <= self.spec.write_buffer_bytes;
        if !fits && self.buffer_used > 0 {
            return false;
        }
        self.buffer_used += bytes;
        let arrive = self.link_transfer(now, bytes, true);
        self.push(arrive, Kind::WriteIn, slot);
        true
    }

    /// Classifies a write as sequential (continues a recent stream) or random and updates the
    /// moving fraction of random writes, weighted by bytes.
    fn observe_write(&mut self, sector: u64, sectors: u32) {
        self.stream_clock += 1;
        let end = sector + sectors as u64;
        let hit = self
            .streams
            .iter()
            .position(|s| s.last_use > 0 && s.next_sector == sector);
        let random = hit.is_none();
        let i = hit.unwrap_or_else(|| {
            (0..STREAMS)
                .min_by_key(|&i| self.streams[i].last_use)
                .expect("streams")
        });
        self.streams[i] = Stream {
            next_sector: end,
            last_use: self.stream_clock,
        };
        let w = sectors as u64 * SECTOR;
        let window = self.spec.pattern_window_bytes;
        let x = if random { Q16 } else { 0 };
        self.random_q16 = ((self.random_q16 as u128 * window as u128 + x as u128 * w as u128)
            / (window as u128 + w as u128)) as u64;
        debug_assert!(self.random_q16 <= Q16);
    }

    fn on_ready(&mut self, slot: u32, now: Nanos, out: &mut Vec<Completion>) {
        let s = self.slots[slot as usize];
        match s.op.expect("live slot") {
            Op::Read => {
                let first_page = s.sector / self.page_sectors;
                let last_page = (s.sector + s.sectors as u64 - 1) / self.page_sectors;
                let mut pending = 0u32;
                for page in first_page..=last_page {
                    let lo = s.sector.max(page * self.page_sectors);
                    let hi = (s.sector + s.sectors as u64).min((page + 1) * self.page_sectors);
                    let d = (page % self.dies as u64) as u32;
                    let piece = Piece {
                        slot,
                        bytes: ((hi - lo) * SECTOR) as u32,
                    };
                    self.die[d as usize].reads.push_back(piece);
                    pending += 1;
                    self.dispatch(d, now);
                    self.preempt_gc(d, now);
                }
                self.slots[slot as usize].pending = pending;
            }
            Op::Write => {
                if self.waiting_writes.is_empty() && self.try_admit(slot, now) {
                    return;
                }
                self.waiting_writes.push_back(slot);
                // Partial pages may now be programmed to make room.
                self.destage(now);
            }
            Op::Flush => {
                let target = self.acked_total;
                if self.durable_prefix() >= target {
                    self.complete(slot, now, out);
                } else {
                    self.flushes.push_back((slot, target));
                    self.destage(now);
                }
            }
        }
    }

    fn handle(&mut self, ev: Event, out: &mut Vec<Completion>) {
        let now = ev.time;
        match ev.kind {
            Kind::Ready => self.on_ready(ev.arg, now, out),
            Kind::Sensed => {
                let d = ev.arg;
                let DieState::Reading(piece) = self.die[d as usize].state else {
                    panic!("die {d} sensed without a read");
                };
                let ch = (d % self.spec.channels) as usize;
                let start = self.channel_free[ch].max(now);
                self.channel_free[ch] =
                    start + transfer_ns(piece.bytes as u64, self.spec.channel_fs_per_byte);
                let t = self.channel_free[ch];
                self.push(t, Kind::ReadOut, d);
            }
            Kind::ReadOut => {
                let d = ev.arg;
                let DieState::Reading(piece) = self.die[d as usize].state else {
                    panic!("die {d} transferred without a read");
                };
                self.die[d as usize].state = DieState::Idle;
                let home = self.link_transfer(now, piece.bytes as u64, false);
                self.push(home, Kind::PieceHome, piece.slot);
                self.dispatch(d, now);
            }
            Kind::PieceHome => {
                let slot = ev.arg;
                let s = &mut self.slots[slot as usize];
                assert!(s.live && s.pending > 0, "stray read piece for slot {slot}");
                s.pending -= 1;
                if s.pending == 0 {
                    self.complete(slot, now, out);
                }
            }
            Kind::WriteIn => {
                let slot = ev.arg;
                self.acked_total += self.slots[slot as usize].sectors as u64 * SECTOR;
                self.complete(slot, now, out);
                self.destage(now);
            }
            Kind::ProgramDone => {
                let d = ev.arg;
                let DieState::Programming { bytes, .. } = self.die[d as usize].state else {
                    panic!("die {d} finished a program it did not start");
                };
                self.die[d as usize].state = DieState::Idle;
                self.programs_active -= 1;
                self.background -= 1;
                assert!(
                    self.buffer_used >= bytes,
                    "write buffer accounting went negative"
                );
                self.buffer_used -= bytes;
                self.complete_flushes(now, out);
                self.admit_writes(now);
                self.dispatch(d, now);
                self.destage(now);
            }
            Kind::GcStep => {
                let d = ev.arg;
                if ev.generation != self.die[d as usize].generation {
                    return; // A run that a read cut short; its new end has its own event.
                }
                let DieState::Collecting { until, .. } = self.die[d as usize].state else {
                    panic!("die {d} finished garbage collection it did not start");
                };
                assert_eq!(until, now, "die {d} GC run ends at {until}, event at {now}");
                self.die[d as usize].state = DieState::Idle;
                self.background -= 1;
                self.dispatch(d, now);
            }
        }
    }

    fn run_until(&mut self, now: Nanos, inclusive: bool, out: &mut Vec<Completion>) {
        while let Some(&Reverse(ev)) = self.events.peek() {
            if ev.time > now || (!inclusive && ev.time == now) {
                break;
            }
            self.events.pop();
            self.mark(ev.time);
            self.handle(ev, out);
        }
    }
}

impl Drive for Ssd {
    fn info(&self) -> &DriveInfo {
        &self.info
    }

    fn queue_depth(&self) -> u32 {
        self.spec.queue_depth
    }

    fn submit(&mut self, now: Nanos, command: Command) {
        assert!(
            now >= self.now,
            "submit at {now} before drive time {}",
            self.now
        );
        // Catch up on internal work strictly before `now` (the engine normally has already).
        let mut carry = std::mem::take(&mut self.carry);
        self.run_until(now, false, &mut carry);
        self.carry = carry;
        assert!(
            self.outstanding < self.spec.queue_depth,
            "submit beyond queue depth {}",
            self.spec.queue_depth
        );
        match command.op {
            Op::Flush => assert_eq!(command.sectors, 0, "flush with a length"),
            Op::Read | Op::Write => {
                assert!(command.sectors > 0, "zero-length {:?}", command.op);
                assert!(
                    command.sector + command.sectors as u64 <= self.capacity_sectors,
                    "command beyond capacity: {command:?}"
                );
            }
        }
        self.mark(now);
        let slot = self
            .free_slots
            .pop()
            .expect("a free slot below queue depth");
        self.slots[slot as usize] = Slot {
            live: true,
            id: command.id,
            op: Some(command.op),
            sector: command.sector,
            sectors: command.sectors,
            submitted: now,
            pending: 0,
        };
        self.outstanding += 1;
        let overhead = match command.op {
            Op::Read => self.spec.overhead_read_ns,
            Op::Write => {
                self.observe_write(command.sector, command.sectors);
                self.spec.overhead_write_ns
            }
            Op::Flush => 0,
        };
        let start = self.controller_free.max(now);
        self.controller_free = start + self.spec.controller_ns;
        let ready = self.controller_free + overhead;
        self.push(ready, Kind::Ready, slot);
    }

    fn next_event(&self) -> Option<Nanos> {
        if !self.carry.is_empty() {
            return Some(self.now);
        }
        self.events.peek().map(|Reverse(ev)| ev.time)
    }

    fn advance(&mut self, now: Nanos, completed: &mut Vec<Completion>) {
        assert!(
            now >= self.now,
            "advance to {now} before drive time {}",
            self.now
        );
        completed.append(&mut self.carry);
        self.run_until(now, true, completed);
        self.mark(now);
    }

    fn busy_nanos(&self) -> Nanos {
        self.busy_ns
    }
}
