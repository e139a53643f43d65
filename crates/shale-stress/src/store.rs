//! The narrow key-value interface the recorder drives, implemented for
//! `shale::Db`; tests wrap it (for example in a deliberately broken adapter)
//! to check that the checker catches the bug.
//!
//! Thread safety: implementations are shared by all client threads (`Sync`).

use shale::{Db, ReadOptions, WriteBatch, WriteOptions};

/// One write of a batch: `Some(value)` puts, `None` deletes.
pub type BatchWrite = (Vec<u8>, Option<Vec<u8>>);

/// A key-value store under test.
pub trait Store: Sync {
    /// Sets `key` to `value`.
    fn put(&self, key: &[u8], value: &[u8]) -> shale::Result<()>;
    /// Removes `key`.
    fn delete(&self, key: &[u8]) -> shale::Result<()>;
    /// Reads `key`.
    fn get(&self, key: &[u8]) -> shale::Result<Option<Vec<u8>>>;
    /// Applies `writes` atomically, in order.
    fn write(&self, writes: &[BatchWrite]) -> shale::Result<()>;
    /// Reads `keys` at one point in time (a snapshot).
    fn snapshot_get(&self, keys: &[Vec<u8>]) -> shale::Result<Vec<Option<Vec<u8>>>>;
}

impl Store for Db {
    fn put(&self, key: &[u8], value: &[u8]) -> shale::Result<()> {
        Db::put(self, key, value)
    }

    fn delete(&self, key: &[u8]) -> shale::Result<()> {
        Db::delete(self, key)
    }

    fn get(&self, key: &[u8]) -> shale::Result<Option<Vec<u8>>> {
        Ok(Db::get(self, key)?.map(|v| v.to_vec()))
    }

    fn write(&self, writes: &[BatchWrite]) -> shale::Result<()> {
        let mut b = WriteBatch::new();
        for (k, v) in writes {
            match v {
                Some(v) => b.put(k, v),
                None => b.delete(k),
            }
        }
        Db::write(self, b, &WriteOptions::default())
    }

    fn snapshot_get(&self, keys: &[Vec<u8>]) -> shale::Result<Vec<Option<Vec<u8>>>> {
        let snap = self.snapshot();
        let mut ro = ReadOptions::new();
        ro.snapshot = Some(&snap);
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        self.multi_get(&refs, &ro)
            .into_iter()
            .map(|r| r.map(|v| v.map(|v| v.to_vec())))
            .collect()
    }
}
