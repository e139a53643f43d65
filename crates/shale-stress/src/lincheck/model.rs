//! The sequential specification of one key: a register that holds a value or
//! nothing.
//!
//! Values are interned per partition to small integers so the state is a
//! `u32` (cheap to copy, hash and compare in the memoization cache); id 0 is
//! "absent". Interning is per key, so a read of a value never written to that
//! key gets an id no write produces, and can never be linearized.

use std::collections::HashMap;

use super::history::{OpKind, Operation};

/// Register state: 0 = absent, otherwise the interned value id.
pub type State = u32;

/// The initial state: the key is absent.
pub const ABSENT: State = 0;

/// One operation of a partition, with its value interned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Set the register.
    Put(State),
    /// Clear the register.
    Delete,
    /// A read that observed this state.
    Get(State),
}

impl Step {
    /// Applies the step to `state`: `Some(next)` if legal, `None` if the
    /// observed output contradicts the state.
    pub fn apply(self, state: State) -> Option<State> {
        match self {
            Step::Put(v) => Some(v),
            Step::Delete => Some(ABSENT),
            Step::Get(seen) => (seen == state).then_some(state),
        }
    }
}

/// Interns the values of one key's operations.
#[derive(Default)]
pub struct Interner {
    ids: HashMap<Vec<u8>, State>,
}

impl Interner {
    /// The id of `value`, assigning the next one on first sight.
    fn id(&mut self, value: &[u8]) -> State {
        let next = self.ids.len() as State + 1;
        *self.ids.entry(value.to_vec()).or_insert(next)
    }

    /// The interned step of `op`.
    pub fn step(&mut self, op: &Operation) -> Step {
        match &op.kind {
            OpKind::Put(v) => Step::Put(self.id(v)),
            OpKind::Delete => Step::Delete,
            OpKind::Get(None) => Step::Get(ABSENT),
            OpKind::Get(Some(v)) => Step::Get(self.id(v)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_semantics() {
        assert_eq!(Step::Put(3).apply(ABSENT), Some(3));
        assert_eq!(Step::Delete.apply(3), Some(ABSENT));
        assert_eq!(Step::Get(3).apply(3), Some(3));
        assert_eq!(Step::Get(3).apply(2), None);
        assert_eq!(Step::Get(ABSENT).apply(ABSENT), Some(ABSENT));
        let mut i = Interner::default();
        let put = Operation::new(0, b"k", OpKind::Put(b"a".to_vec()), 0, 1);
        let get = Operation::new(0, b"k", OpKind::Get(Some(b"a".to_vec())), 2, 3);
        assert_eq!(i.step(&put), Step::Put(1));
        assert_eq!(i.step(&get), Step::Get(1));
    }
}
