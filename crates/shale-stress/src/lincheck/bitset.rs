//! A fixed-size bitset of linearized operations, the first half of the
//! memoization key (Lowe): two search states with the same set of linearized
//! operations and the same model state have the same future.

/// A fixed-capacity set of operation indices.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Bitset {
    words: Box<[u64]>,
}

impl Bitset {
    /// An empty set able to hold indices `0..n`.
    pub fn new(n: usize) -> Bitset {
        Bitset {
            words: vec![0; n.div_ceil(64)].into_boxed_slice(),
        }
    }

    /// Adds `i`. Requires `i < n`.
    pub fn set(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    /// Removes `i`.
    pub fn clear(&mut self, i: usize) {
        if let Some(w) = self.words.get_mut(i / 64) {
            *w &= !(1 << (i % 64));
        }
    }

    /// True if `i` is in the set.
    #[cfg(test)]
    pub fn contains(&self, i: usize) -> bool {
        self.words
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::Bitset;

    #[test]
    fn set_clear_contains() {
        let mut b = Bitset::new(130);
        for i in [0, 63, 64, 129] {
            assert!(!b.contains(i));
            b.set(i);
            assert!(b.contains(i));
        }
        b.clear(64);
        assert!(!b.contains(64) && b.contains(63) && b.contains(129));
        assert!(!b.contains(1000));
    }
}
