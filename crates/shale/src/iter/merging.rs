//! The merging iterator: one sorted view over several sorted child
//! iterators (memtables, L0 files, levels), using a binary heap of child
//! indices.
//!
//! Order: entries are ordered by (internal key per `compare_internal`, child
//! index). Children should never hold equal internal keys; if they do, the
//! lower child index comes first going forward (and last going backward, so
//! that `prev` exactly retraces `next`).
//!
//! Going forward the heap is a min-heap, going backward a max-heap; the top is
//! the current child. When the direction changes, every other child is
//! repositioned relative to the current key (as LevelDB's MergingIterator
//! does): after the switch each child sits on its first entry after
//! (resp. last entry before) the current one in the merged order.
//!
//! Errors: when a child turns invalid with an error, the merging iterator
//! becomes invalid (it might otherwise skip a tombstone or a newer version)
//! and `status()` reports that first error. Seeks clear the recorded error and
//! ask the children again.
//!
//! Range tombstones (user iterators only, `with_range_dels`): an entry under
//! a newer range tombstone visible at the read's sequence number never
//! surfaces. When the tombstone belongs to a newer child than the entry's,
//! every entry of that child in the tombstone's range is older than it
//! (`range_del` module docs), so the child skips the whole range in one
//! seek; a tombstone of the entry's own child hides it alone.
//!
//! Thread-safety: `Send` (like every `InternalIterator`), used by one thread.
//! No allocation per step: the heap vector and the key buffer used on
//! direction switches are reused.

use std::cmp::Ordering;

use std::sync::Arc;

use crate::base::{
    compare_internal, make_internal_key, parse_internal_key, SeqNo, KIND_FOR_SEEK, MAX_SEQNO,
};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::range_del::Fragments;

/// The range tombstones of each child, for hiding what they cover.
struct RangeSkip {
    /// Per child (same index): its tombstones, fragmented.
    per_child: Vec<Option<Arc<Fragments>>>,
    /// Indices of the children that have some, ascending.
    with: Vec<usize>,
    read_seq: SeqNo,
    /// Seek key buffer.
    buf: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Direction {
    Forward,
    Backward,
}

/// Merges sorted children into one sorted iterator (see the module comment).
pub(crate) struct MergingIterator {
    children: Vec<Box<dyn InternalIterator>>,
    /// Indices of the valid children, heap-ordered for `dir`.
    heap: Vec<usize>,
    dir: Direction,
    /// First error met by a child since the last seek.
    err: Option<Error>,
    /// Copy of the current key while the children are repositioned.
    key_buf: Vec<u8>,
    range: Option<RangeSkip>,
}

impl MergingIterator {
    /// A merging iterator over `children` (unpositioned).
    pub(crate) fn new(children: Vec<Box<dyn InternalIterator>>) -> MergingIterator {
        let n = children.len();
        MergingIterator {
            children,
            heap: Vec::with_capacity(n),
            dir: Direction::Forward,
            err: None,
            key_buf: Vec::new(),
            range: None,
        }
    }

    /// Hides entries under the children's range tombstones (`per_child[i]`
    /// of child `i`) visible at `read_seq` (see the module comment).
    pub(crate) fn with_range_dels(
        mut self,
        per_child: Vec<Option<Arc<Fragments>>>,
        read_seq: SeqNo,
    ) -> MergingIterator {
        debug_assert_eq!(per_child.len(), self.children.len());
        let with: Vec<usize> = (0..per_child.len())
            .filter(|&i| per_child[i].as_ref().is_some_and(|f| !f.is_empty()))
            .collect();
        if !with.is_empty() {
            self.range = Some(RangeSkip {
                per_child,
                with,
                read_seq,
                buf: Vec::new(),
            });
        }
        self
    }

    /// Moves past entries hidden by range tombstones until the top entry
    /// is visible (or none is left).
    fn skip_covered(&mut self) {
        let Some(rs) = self.range.as_mut() else {
            return;
        };
        loop {
            if self.err.is_some() {
                return;
            }
            let Some(&top) = self.heap.first() else {
                return;
            };
            let Some(p) = parse_internal_key(self.children[top].key()) else {
                return; // the caller reports the malformed key
            };
            if p.seq > rs.read_seq {
                return; // invisible anyway
            }
            // The newest covering tombstone, preferring a newer child's.
            let mut best: Option<(usize, &crate::range_del::Fragment)> = None;
            for &i in rs.with.iter().take_while(|&&i| i <= top) {
                let Some(frag) = rs.per_child[i].as_ref().and_then(|f| f.find(p.user_key)) else {
                    continue;
                };
                if frag.newest_at(rs.read_seq).is_some_and(|t| t > p.seq) {
                    best = Some((i, frag));
                    break;
                }
            }
            let Some((i, frag)) = best else {
                return;
            };
            let c = &mut self.children[top];
            match (i < top, self.dir) {
                (true, Direction::Forward) => {
                    rs.buf.clear();
                    make_internal_key(&mut rs.buf, &frag.end, MAX_SEQNO, KIND_FOR_SEEK);
                    c.seek(&rs.buf);
                }
                (true, Direction::Backward) => {
                    rs.buf.clear();
                    make_internal_key(&mut rs.buf, &frag.start, MAX_SEQNO, KIND_FOR_SEEK);
                    c.seek_for_prev(&rs.buf);
                }
                (false, Direction::Forward) => c.next(),
                (false, Direction::Backward) => c.prev(),
            }
            let c = &self.children[top];
            if !c.valid() {
                note_error(&mut self.err, c.as_ref());
                self.heap.swap_remove(0);
            }
            sift_down(&mut self.heap, &self.children, self.dir, 0);
        }
    }

    /// Rebuilds the heap from every valid child, noting errors of invalid ones.
    fn rebuild(&mut self, dir: Direction) {
        self.dir = dir;
        self.heap.clear();
        for (i, c) in self.children.iter().enumerate() {
            if c.valid() {
                self.heap.push(i);
            } else {
                note_error(&mut self.err, c.as_ref());
            }
        }
        for pos in (0..self.heap.len() / 2).rev() {
            sift_down(&mut self.heap, &self.children, dir, pos);
        }
    }

    /// After the top child moved: restore the heap (dropping it if invalid).
    #[inline]
    fn fix_top(&mut self) {
        let Some(&top) = self.heap.first() else {
            return;
        };
        let c = &self.children[top];
        if !c.valid() {
            note_error(&mut self.err, c.as_ref());
            self.heap.swap_remove(0);
        }
        sift_down(&mut self.heap, &self.children, self.dir, 0);
    }

    /// Repositions every child but the current one for `dir` (see the module
    /// comment) and rebuilds the heap; the current child stays on top.
    fn switch_direction(&mut self, dir: Direction) {
        let Some(&cur) = self.heap.first() else {
            return;
        };
        self.key_buf.clear();
        self.key_buf.extend_from_slice(self.children[cur].key());
        let key = &self.key_buf[..];
        for (i, c) in self.children.iter_mut().enumerate() {
            if i == cur {
                continue;
            }
            match dir {
                Direction::Forward => {
                    // First entry after (key, cur): equal keys of lower
                    // children come before it, so they are skipped.
                    c.seek(key);
                    if i < cur && c.valid() && compare_internal(c.key(), key) == Ordering::Equal {
                        c.next();
                    }
                }
                Direction::Backward => {
                    // Last entry before (key, cur): equal keys of higher
                    // children come after it, so they are skipped.
                    c.seek_for_prev(key);
                    if i > cur && c.valid() && compare_internal(c.key(), key) == Ordering::Equal {
                        c.prev();
                    }
                }
            }
        }
        self.rebuild(dir);
        debug_assert_eq!(self.heap.first(), Some(&cur));
    }
}

/// Records `c`'s error as the first one, if it has one and none was recorded.
#[inline]
fn note_error(err: &mut Option<Error>, c: &dyn InternalIterator) {
    if err.is_none() {
        if let Err(e) = c.status() {
            *err = Some(e);
        }
    }
}

/// True when child `a` comes before child `b` in the heap order for `dir`.
#[inline]
fn before(children: &[Box<dyn InternalIterator>], dir: Direction, a: usize, b: usize) -> bool {
    let ord = compare_internal(children[a].key(), children[b].key()).then(a.cmp(&b));
    match dir {
        Direction::Forward => ord == Ordering::Less,
        Direction::Backward => ord == Ordering::Greater,
    }
}

/// Moves `heap[pos]` down until both its children come after it.
#[inline]
fn sift_down(
    heap: &mut [usize],
    children: &[Box<dyn InternalIterator>],
    dir: Direction,
    mut pos: usize,
) {
    let n = heap.len();
    loop {
        let l = 2 * pos + 1;
        if l >= n {
            return;
        }
        let r = l + 1;
        let best = if r < n && before(children, dir, heap[r], heap[l]) {
            r
        } else {
            l
        };
        if !before(children, dir, heap[best], heap[pos]) {
            return;
        }
        heap.swap(pos, best);
        pos = best;
    }
}

impl InternalIterator for MergingIterator {
    #[inline]
    fn valid(&self) -> bool {
        !self.heap.is_empty() && self.err.is_none()
    }

    fn seek_to_first(&mut self) {
        self.err = None;
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.rebuild(Direction::Forward);
        self.skip_covered();
    }

    fn seek_to_last(&mut self) {
        self.err = None;
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.rebuild(Direction::Backward);
        self.skip_covered();
    }

    fn seek(&mut self, target: &[u8]) {
        self.err = None;
        for c in &mut self.children {
            c.seek(target);
        }
        self.rebuild(Direction::Forward);
        self.skip_covered();
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        self.err = None;
        for c in &mut self.children {
            c.seek_for_prev(target);
        }
        self.rebuild(Direction::Backward);
        self.skip_covered();
    }

    fn next(&mut self) {
        debug_assert!(self.valid());
        if self.dir != Direction::Forward {
            self.switch_direction(Direction::Forward);
        }
        if let Some(&top) = self.heap.first() {
            self.children[top].next();
            self.fix_top();
        }
        self.skip_covered();
    }

    fn prev(&mut self) {
        debug_assert!(self.valid());
        if self.dir != Direction::Backward {
            self.switch_direction(Direction::Backward);
        }
        if let Some(&top) = self.heap.first() {
            self.children[top].prev();
            self.fix_top();
        }
        self.skip_covered();
    }

    #[inline]
    fn key(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.heap.first() {
            Some(&i) => self.children[i].key(),
            None => &[],
        }
    }

    #[inline]
    fn value(&self) -> &[u8] {
        debug_assert!(self.valid());
        match self.heap.first() {
            Some(&i) => self.children[i].value(),
            None => &[],
        }
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.clone());
        }
        self.children.iter().try_for_each(|c| c.status())
    }
}

#[cfg(test)]
mod tests;
