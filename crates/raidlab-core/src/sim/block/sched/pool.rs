//! What every scheduler shares: a slab of queued requests, the merge index, chains of merged
//! request ids and intrusive FIFO lists. Nothing here allocates per request once the slab, the
//! id-link slab and the hash tables have grown to the queue's high-water mark.
//!
//! Merging follows the block layer's elevator merge (block/elevator.c `elv_merge`,
//! block/blk-merge.c `blk_rq_merge_ok`/`attempt_back_merge`/`attempt_front_merge`): a new request
//! is first tried as a back merge (a queued request ends where it starts, found through a hash
//! keyed by end sector, the kernel's `elv_rqhash`), then as a front merge (a queued request starts
//! where it ends; the kernel finds it in the elevator's sort tree, here a second hash). Both need
//! the same op, the same merge class (`qkey`: CFQ only merges within one cfq_queue, see
//! `cfq_allow_merge` in block/cfq-iosched.c) and a result no larger than `max_sectors`
//! (`blk_rq_get_max_sectors`). After a merge the grown request may now touch a neighbour; as
//! `elv_merged_request` → `attempt_back_merge`/`attempt_front_merge` do, the two are joined too.
//! Flushes never merge (REQ_NOMERGE_FLAGS include REQ_PREFLUSH).
//!
//! The newest node joins the merge index only when the index is next used (the next insert, or
//! the dispatch of another node): a request dispatched before anything else arrives, the usual
//! case behind a deep drive queue, is then never indexed at all. Deferring keeps every index
//! operation in its original order, so merges are exactly those of eager indexing.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use super::{BlockRequest, Dispatch};
use crate::device::Op;
use crate::time::Nanos;

/// "No slot": the end of a list or chain.
pub(crate) const NIL: u32 = u32::MAX;

/// A small, fast, deterministic hasher for integer keys (multiply-rotate, then the MurmurHash3
/// 64-bit finaliser so low-entropy keys such as 8-aligned sectors spread over the buckets).
/// Lookups only: no decision ever depends on a hash table's iteration order.
#[derive(Default, Clone, Copy)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
    fn write_usize(&mut self, v: usize) {
        self.write_u64(v as u64);
    }
    fn write_isize(&mut self, v: isize) {
        self.write_u64(v as u64);
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

pub(crate) type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;
type IntSet<K> = HashSet<K, BuildHasherDefault<IntHasher>>;

/// Ids below this live in a bitmap (the engine's ids are small slab indices); others in a hash set.
const DENSE_IDS: u64 = 1 << 22;

/// A set of request ids: a bitmap for small ids, a hash set for the rest.
#[derive(Default)]
struct IdSet {
    bits: Vec<u64>,
    sparse: IntSet<u64>,
    len: usize,
}

impl IdSet {
    /// Adds `id`; false if it was already present.
    fn insert(&mut self, id: u64) -> bool {
        let added = if id < DENSE_IDS {
            let word = (id / 64) as usize;
            if word >= self.bits.len() {
                self.bits.resize(word + 1, 0);
            }
            let bit = 1u64 << (id % 64);
            let added = self.bits[word] & bit == 0;
            self.bits[word] |= bit;
            added
        } else {
            self.sparse.insert(id)
        };
        self.len += added as usize;
        added
    }
    /// Removes `id`; false if it was absent.
    fn remove(&mut self, id: u64) -> bool {
        let removed = if id < DENSE_IDS {
            let (word, bit) = ((id / 64) as usize, 1u64 << (id % 64));
            match self.bits.get_mut(word) {
                Some(w) if *w & bit != 0 => {
                    *w &= !bit;
                    true
                }
                _ => false,
            }
        } else {
            self.sparse.remove(&id)
        };
        self.len -= removed as usize;
        removed
    }
    fn contains(&self, id: u64) -> bool {
        if id < DENSE_IDS {
            self.bits.get((id / 64) as usize).is_some_and(|w| w & (1 << (id % 64)) != 0)
        } else {
            self.sparse.contains(&id)
        }
    }
    fn len(&self) -> usize {
        self.len
    }
}

/// Entries a merge index keeps in a plain vector before it moves them to a hash table.
const SMALL_INDEX: usize = 16;

/// A map from merge key to slot. Queues are usually short, so it starts as a vector searched
/// linearly and becomes a hash table only while it holds more than [`SMALL_INDEX`] keys; either
/// way it is the same map (lookups only: nothing depends on its order).
#[derive(Default)]
struct MergeIndex {
    small: Vec<(MergeKey, u32)>,
    big: IntMap<MergeKey, u32>,
    spilled: bool,
}

impl MergeIndex {
    #[inline]
    fn get(&self, key: MergeKey) -> Option<u32> {
        if self.spilled {
            self.big.get(&key).copied()
        } else {
            self.small.iter().find(|(k, _)| *k == key).map(|&(_, slot)| slot)
        }
    }
    /// Maps `key` to `slot` unless the key is already mapped (the first holder stays).
    #[inline]
    fn insert_if_absent(&mut self, key: MergeKey, slot: u32) {
        if self.spilled {
            self.big.entry(key).or_insert(slot);
        } else if !self.small.iter().any(|(k, _)| *k == key) {
            if self.small.len() == SMALL_INDEX {
                self.big.extend(self.small.drain(..));
                self.big.insert(key, slot);
                self.spilled = true;
            } else {
                self.small.push((key, slot));
            }
        }
    }
    /// Unmaps `key` if it maps to `slot`.
    #[inline]
    fn remove_if(&mut self, key: MergeKey, slot: u32) {
        if self.spilled {
            use std::collections::hash_map::Entry;
            if let Entry::Occupied(e) = self.big.entry(key) {
                if *e.get() == slot {
                    e.remove();
                    if self.big.is_empty() {
                        self.spilled = false;
                    }
                }
            }
        } else if let Some(i) = self.small.iter().position(|&(k, s)| k == key && s == slot) {
            self.small.swap_remove(i);
        }
    }
    fn iter(&self) -> impl Iterator<Item = (&MergeKey, u32)> + '_ {
        let small = self.small.iter().map(|(k, s)| (k, *s));
        let big = self.big.iter().map(|(k, s)| (k, *s));
        small.chain(big)
    }
}

/// Queued nodes in `(start sector, seq)` order: the elevators' sort lists (the kernel's rb-tree
/// `sort_list`). A sorted vector: queues hold at most `nr_requests` nodes, and for such sizes a
/// binary search and a short move beat a B-tree's node walks and allocations.
#[derive(Clone, Debug, Default)]
pub(crate) struct SortList {
    items: Vec<(u64, u64, u32)>,
}

impl SortList {
    pub fn new() -> SortList {
        SortList::default()
    }
    pub fn len(&self) -> usize {
        self.items.len()
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    fn position(&self, key: (u64, u64)) -> Result<usize, usize> {
        self.items.binary_search_by(|&(sector, seq, _)| (sector, seq).cmp(&key))
    }
    /// Adds `slot` under `key`; returns the slot that already held the key, if any (then
    /// nothing changes).
    pub fn insert(&mut self, key: (u64, u64), slot: u32) -> Option<u32> {
        match self.position(key) {
            Ok(i) => Some(self.items[i].2),
            Err(i) => {
                self.items.insert(i, (key.0, key.1, slot));
                None
            }
        }
    }
    /// Removes the entry under `key`, returning its slot.
    pub fn remove(&mut self, key: &(u64, u64)) -> Option<u32> {
        let i = self.position(*key).ok()?;
        Some(self.items.remove(i).2)
    }
    /// The first entry at or after `key`.
    pub fn first_from(&self, key: (u64, u64)) -> Option<((u64, u64), u32)> {
        let i = self.position(key).unwrap_or_else(|i| i);
        self.items.get(i).map(|&(sector, seq, slot)| ((sector, seq), slot))
    }
    /// The lowest entry.
    pub fn first(&self) -> Option<((u64, u64), u32)> {
        self.items.first().map(|&(sector, seq, slot)| ((sector, seq), slot))
    }
    pub fn iter(&self) -> impl Iterator<Item = ((u64, u64), u32)> + '_ {
        self.items.iter().map(|&(sector, seq, slot)| ((sector, seq), slot))
    }
}

/// Where a read or write ends; panics on an empty request or one past the last sector.
pub(crate) fn data_end(request: &BlockRequest) -> u64 {
    assert!(request.sectors > 0, "request {} has zero length", request.id);
    request.sector.checked_add(request.sectors as u64).expect("request end overflows")
}

/// Index of a request direction in per-direction arrays (flushes have none).
pub(crate) fn dir_index(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Flush => panic!("a flush has no data direction"),
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct MergeKey {
    qkey: u32,
    write: bool,
    sector: u64,
}

/// One word per key, so a lookup hashes once; equality still compares every field, so keys that
/// happen to share a hash stay distinct.
impl std::hash::Hash for MergeKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.sector ^ ((self.qkey as u64) << 40) ^ ((self.write as u64) << 63));
    }
}

impl MergeKey {
    fn new(qkey: u32, op: Op, sector: u64) -> MergeKey {
        MergeKey { qkey, write: dir_index(op) == 1, sector }
    }
}

/// One queued scheduler request: one or more merged block requests, one future drive command.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub op: Op,
    pub sector: u64,
    pub sectors: u32,
    /// Merge class: only nodes with equal `qkey` merge (CFQ: the queue index; others: 0).
    pub qkey: u32,
    /// Creation order; ties in sector order break by it.
    pub seq: u64,
    /// mq-deadline's FIFO expiry time (unused by the others).
    pub deadline: Nanos,
    /// Block requests covered, in sector order.
    pub nids: u32,
    ids_head: u32,
    ids_tail: u32,
    prev: u32,
    next: u32,
    listed: bool,
    live: bool,
}

impl Node {
    pub fn end(&self) -> u64 {
        self.sector + self.sectors as u64
    }
}

#[derive(Clone, Copy, Debug)]
struct IdLink {
    id: u64,
    next: u32,
}

/// An intrusive doubly linked FIFO over pool slots; the pool holds the links.
#[derive(Clone, Copy, Debug)]
pub(crate) struct List {
    head: u32,
    tail: u32,
    len: usize,
}

impl List {
    pub fn new() -> List {
        List { head: NIL, tail: NIL, len: 0 }
    }
    pub fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A node removed by a request-to-request merge; the scheduler drops it from its own structures
/// (sort tree keyed by `(sector, seq)`, FIFO list) and then calls [`Pool::free_absorbed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Absorbed {
    pub slot: u32,
    /// The absorbed node's start sector as the scheduler last saw it.
    pub sector: u64,
    pub seq: u64,
}

/// What became of an inserted request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inserted {
    /// A new node the scheduler must queue.
    New(u32),
    /// Merged into the queued node `slot`, whose start sector was `old_sector` before the insert
    /// (the scheduler re-keys its sort tree if it changed); `absorbed` another node joined into it.
    Merged { slot: u32, old_sector: u64, absorbed: Option<Absorbed> },
}

pub(crate) struct Pool {
    max_sectors: u32,
    nodes: Vec<Node>,
    free_nodes: Vec<u32>,
    links: Vec<IdLink>,
    free_links: Vec<u32>,
    by_end: MergeIndex,
    by_start: MergeIndex,
    /// The newest node, not yet in the merge index (NIL if none); see the module comment.
    unindexed: u32,
    /// Ids of queued block requests: catches an id queued twice or dispatched twice.
    queued_ids: IdSet,
    live_nodes: usize,
    next_seq: u64,
}

impl Pool {
    pub fn new(max_sectors: u32) -> Pool {
        assert!(max_sectors >= 1, "max_sectors must be at least 1");
        Pool {
            max_sectors,
            nodes: Vec::new(),
            free_nodes: Vec::new(),
            links: Vec::new(),
            free_links: Vec::new(),
            by_end: MergeIndex::default(),
            by_start: MergeIndex::default(),
            unindexed: NIL,
            queued_ids: IdSet::default(),
            live_nodes: 0,
            next_seq: 0,
        }
    }

    /// Queued nodes (future drive commands).
    pub fn len(&self) -> usize {
        self.live_nodes
    }

    pub fn node(&self, slot: u32) -> &Node {
        let node = &self.nodes[slot as usize];
        assert!(node.live, "slot {slot} is not queued");
        node
    }

    pub fn node_mut(&mut self, slot: u32) -> &mut Node {
        let node = &mut self.nodes[slot as usize];
        assert!(node.live, "slot {slot} is not queued");
        node
    }

    /// Adds a request, merging it into a queued node of the same `qkey` and op when contiguous.
    pub fn insert(&mut self, qkey: u32, request: &BlockRequest) -> Inserted {
        assert!(
            self.queued_ids.insert(request.id),
            "block request id {} inserted while a request with that id is still queued",
            request.id
        );
        if request.op == Op::Flush {
            assert_eq!(request.sectors, 0, "a flush carries no sectors (request {})", request.id);
            return Inserted::New(self.alloc(qkey, request));
        }
        // The block layer splits bios at max_sectors before they become requests; a larger
        // request here (the engine did not split) is queued as it is and never merges.
        let end = data_end(request);
        self.index_deferred();

        // Back merge: a queued request ends where this one starts.
        if let Some(a) = self.by_end.get(MergeKey::new(qkey, request.op, request.sector)) {
            if self.fits(a, request.sectors) {
                let a_orig = self.nodes[a as usize].sector;
                self.unindex(a);
                let link = self.new_link(request.id);
                self.append_link(a, link);
                self.nodes[a as usize].sectors += request.sectors;
                let a_end = self.nodes[a as usize].end();
                let b = self.by_start.get(MergeKey::new(qkey, request.op, a_end));
                let joined = match b {
                    Some(b) if b != a && self.fits(a, self.nodes[b as usize].sectors) => {
                        let b_sector = self.nodes[b as usize].sector;
                        let (survivor, victim) = self.join(a, b);
                        let old_sector = if survivor == a { a_orig } else { b_sector };
                        let victim_sector = if victim == a { a_orig } else { b_sector };
                        Some((survivor, old_sector, victim, victim_sector))
                    }
                    _ => None,
                };
                return self.finish_merge(a, a_orig, joined);
            }
        }

        // Front merge: a queued request starts where this one ends.
        if let Some(b) = self.by_start.get(MergeKey::new(qkey, request.op, end)) {
            if self.fits(b, request.sectors) {
                let b_orig = self.nodes[b as usize].sector;
                self.unindex(b);
                let link = self.new_link(request.id);
                self.prepend_link(b, link);
                let node = &mut self.nodes[b as usize];
                node.sector = request.sector;
                node.sectors += request.sectors;
                let a = self.by_end.get(MergeKey::new(qkey, request.op, request.sector));
                let joined = match a {
                    Some(a) if a != b && self.fits(b, self.nodes[a as usize].sectors) => {
                        let a_sector = self.nodes[a as usize].sector;
                        let (survivor, victim) = self.join(a, b);
                        let old_sector = if survivor == b { b_orig } else { a_sector };
                        let victim_sector = if victim == b { b_orig } else { a_sector };
                        Some((survivor, old_sector, victim, victim_sector))
                    }
                    _ => None,
                };
                return self.finish_merge(b, b_orig, joined);
            }
        }

        let slot = self.alloc(qkey, request);
        self.unindexed = slot;
        Inserted::New(slot)
    }

    fn finish_merge(
        &mut self,
        target: u32,
        target_orig: u64,
        joined: Option<(u32, u64, u32, u64)>,
    ) -> Inserted {
        let result = match joined {
            None => Inserted::Merged { slot: target, old_sector: target_orig, absorbed: None },
            Some((survivor, old_sector, victim, victim_sector)) => {
                let seq = self.nodes[victim as usize].seq;
                Inserted::Merged {
                    slot: survivor,
                    old_sector,
                    absorbed: Some(Absorbed { slot: victim, sector: victim_sector, seq }),
                }
            }
        };
        let Inserted::Merged { slot, .. } = result else { unreachable!() };
        self.index(slot);
        let node = &self.nodes[slot as usize];
        assert!(node.sectors <= self.max_sectors, "merged request above max_sectors");
        result
    }

    fn fits(&self, slot: u32, more: u32) -> bool {
        self.nodes[slot as usize].sectors as u64 + more as u64 <= self.max_sectors as u64
    }

    /// Joins `lower` and the node `upper` that starts where `lower` ends. The older node (lower
    /// `seq`: earlier FIFO position and expiry, as `dd_merged_requests` keeps the earlier
    /// `fifo_time`) survives and covers both; the other is marked absorbed. `lower` must already
    /// be unindexed; `upper` is unindexed here.
    fn join(&mut self, lower: u32, upper: u32) -> (u32, u32) {
        self.unindex(upper);
        let (l, u) = (&self.nodes[lower as usize], &self.nodes[upper as usize]);
        assert_eq!(l.end(), u.sector, "joined requests are contiguous");
        assert!(l.op == u.op && l.qkey == u.qkey, "joined requests share op and queue");
        let (sector, sectors) = (l.sector, l.sectors + u.sectors);
        let (head, tail, nids) = (l.ids_head, u.ids_tail, l.nids + u.nids);
        self.links[l.ids_tail as usize].next = u.ids_head;
        let (survivor, victim) = if l.seq < u.seq { (lower, upper) } else { (upper, lower) };
        let s = &mut self.nodes[survivor as usize];
        s.sector = sector;
        s.sectors = sectors;
        s.ids_head = head;
        s.ids_tail = tail;
        s.nids = nids;
        let v = &mut self.nodes[victim as usize];
        v.ids_head = NIL;
        v.ids_tail = NIL;
        v.nids = 0;
        (survivor, victim)
    }

    /// Frees a node absorbed by a merge once the scheduler has unlinked it.
    pub fn free_absorbed(&mut self, slot: u32) {
        let node = &self.nodes[slot as usize];
        assert!(node.live && node.nids == 0, "slot {slot} was not absorbed");
        assert!(!node.listed, "absorbed slot {slot} is still on a FIFO list");
        assert_ne!(slot, self.unindexed, "absorbed slot {slot} was never indexed");
        self.release(slot);
    }

    /// Removes a queued node (already off any FIFO list) and returns its drive command, appending
    /// the ids it covers in sector order.
    pub fn take(&mut self, slot: u32, merged_ids: &mut Vec<u64>) -> Dispatch {
        let node = self.node(slot);
        assert!(!node.listed, "dispatched slot {slot} is still on a FIFO list");
        assert!(node.nids >= 1, "a dispatch covers at least one request");
        let dispatch = Dispatch { op: node.op, sector: node.sector, sectors: node.sectors };
        let (expected, mut link, op) = (node.nids, node.ids_head, node.op);
        if slot == self.unindexed {
            self.unindexed = NIL;
        } else if op != Op::Flush {
            self.index_deferred();
            self.unindex(slot);
        }
        let mut count = 0;
        while link != NIL {
            let IdLink { id, next } = self.links[link as usize];
            assert!(self.queued_ids.remove(id), "block request id {id} dispatched twice");
            merged_ids.push(id);
            self.free_links.push(link);
            link = next;
            count += 1;
        }
        assert_eq!(count, expected, "id chain length");
        let node = &mut self.nodes[slot as usize];
        node.ids_head = NIL;
        node.ids_tail = NIL;
        node.nids = 0;
        self.release(slot);
        dispatch
    }

    pub fn push_back(&mut self, list: &mut List, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        assert!(node.live && !node.listed, "slot {slot} cannot join a FIFO list");
        node.listed = true;
        node.prev = list.tail;
        node.next = NIL;
        if list.tail == NIL {
            list.head = slot;
        } else {
            self.nodes[list.tail as usize].next = slot;
        }
        list.tail = slot;
        list.len += 1;
    }

    pub fn unlink(&mut self, list: &mut List, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        assert!(node.live && node.listed, "slot {slot} is not on a FIFO list");
        node.listed = false;
        let (prev, next) = (node.prev, node.next);
        if prev == NIL {
            assert_eq!(list.head, slot, "FIFO list head");
            list.head = next;
        } else {
            self.nodes[prev as usize].next = next;
        }
        if next == NIL {
            assert_eq!(list.tail, slot, "FIFO list tail");
            list.tail = prev;
        } else {
            self.nodes[next as usize].prev = prev;
        }
        list.len -= 1;
    }

    /// Removes and returns the oldest node of a list.
    pub fn pop_front(&mut self, list: &mut List) -> Option<u32> {
        let slot = list.front()?;
        self.unlink(list, slot);
        Some(slot)
    }

    fn alloc(&mut self, qkey: u32, request: &BlockRequest) -> u32 {
        let link = self.new_link(request.id);
        let node = Node {
            op: request.op,
            sector: request.sector,
            sectors: request.sectors,
            qkey,
            seq: self.next_seq,
            deadline: 0,
            nids: 1,
            ids_head: link,
            ids_tail: link,
            prev: NIL,
            next: NIL,
            listed: false,
            live: true,
        };
        self.next_seq += 1;
        self.live_nodes += 1;
        match self.free_nodes.pop() {
            Some(slot) => {
                assert!(!self.nodes[slot as usize].live, "free slot {slot} is live");
                self.nodes[slot as usize] = node;
                slot
            }
            None => {
                let slot = u32::try_from(self.nodes.len())
                    .ok()
                    .filter(|&s| s != NIL)
                    .expect("too many queued requests");
                self.nodes.push(node);
                slot
            }
        }
    }

    fn release(&mut self, slot: u32) {
        let node = &mut self.nodes[slot as usize];
        assert!(node.live, "slot {slot} freed twice");
        node.live = false;
        self.live_nodes -= 1;
        self.free_nodes.push(slot);
    }

    fn new_link(&mut self, id: u64) -> u32 {
        let link = IdLink { id, next: NIL };
        match self.free_links.pop() {
            Some(index) => {
                self.links[index as usize] = link;
                index
            }
            None => {
                self.links.push(link);
                (self.links.len() - 1) as u32
            }
        }
    }

    fn append_link(&mut self, slot: u32, link: u32) {
        let node = &mut self.nodes[slot as usize];
        let tail = node.ids_tail;
        node.ids_tail = link;
        node.nids += 1;
        self.links[tail as usize].next = link;
    }

    fn prepend_link(&mut self, slot: u32, link: u32) {
        let node = &mut self.nodes[slot as usize];
        self.links[link as usize].next = node.ids_head;
        node.ids_head = link;
        node.nids += 1;
    }

    /// Indexes the node whose indexing was deferred, if any: before any other index operation.
    fn index_deferred(&mut self) {
        if self.unindexed != NIL {
            self.index(self.unindexed);
            self.unindexed = NIL;
        }
    }

    /// Makes a node findable for merges (unless another node already holds the same key: the
    /// first one stays, deterministically; the other just misses merges for that key).
    fn index(&mut self, slot: u32) {
        let node = &self.nodes[slot as usize];
        let (start, end) =
            (MergeKey::new(node.qkey, node.op, node.sector), MergeKey::new(node.qkey, node.op, node.end()));
        self.by_start.insert_if_absent(start, slot);
        self.by_end.insert_if_absent(end, slot);
    }

    fn unindex(&mut self, slot: u32) {
        let node = &self.nodes[slot as usize];
        let (start, end) =
            (MergeKey::new(node.qkey, node.op, node.sector), MergeKey::new(node.qkey, node.op, node.end()));
        self.by_start.remove_if(start, slot);
        self.by_end.remove_if(end, slot);
    }

    /// Full consistency check, O(queued): for tests and debugging.
    pub fn check(&self) {
        let mut live = 0;
        let mut ids = 0usize;
        for (slot, node) in self.nodes.iter().enumerate() {
            if !node.live {
                continue;
            }
            live += 1;
            let mut count = 0;
            let mut link = node.ids_head;
            let mut last = NIL;
            while link != NIL {
                assert!(self.queued_ids.contains(self.links[link as usize].id), "chained id not queued");
                last = link;
                link = self.links[link as usize].next;
                count += 1;
            }
            assert_eq!(count, node.nids, "slot {slot}: id chain length");
            assert_eq!(last, node.ids_tail, "slot {slot}: id chain tail");
            assert!(node.nids >= 1, "slot {slot}: empty node");
            assert!(
                node.nids == 1 || node.sectors <= self.max_sectors,
                "slot {slot}: merged above max_sectors"
            );
            ids += count as usize;
        }
        assert_eq!(live, self.live_nodes, "live node count");
        assert_eq!(ids, self.queued_ids.len(), "queued id count");
        let deferred = self.unindexed;
        if deferred != NIL {
            let node = &self.nodes[deferred as usize];
            assert!(node.live && node.op != Op::Flush, "deferred slot {deferred} is no queued read or write");
        }
        for (key, slot) in self.by_start.iter().chain(self.by_end.iter()) {
            assert_ne!(slot, self.unindexed, "deferred slot {slot} is in the merge index");
            let node = &self.nodes[slot as usize];
            assert!(node.live && node.qkey == key.qkey && node.op != Op::Flush, "stale merge index entry");
        }
        for (key, slot) in self.by_start.iter() {
            assert_eq!(self.nodes[slot as usize].sector, key.sector, "by_start key");
        }
        for (key, slot) in self.by_end.iter() {
            assert_eq!(self.nodes[slot as usize].end(), key.sector, "by_end key");
        }
    }
}
