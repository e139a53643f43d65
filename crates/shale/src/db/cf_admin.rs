//! Creating and dropping column families.
//!
//! A create is one MANIFEST edit per family (name, options, log number),
//! written as one atomic group with one sync, so `create_cfs` makes any
//! number of families durable at once, and is all-or-nothing across a
//! crash. Cost per family: the edit, a `BTreeMap` insert in the version set
//! and the DB state, a registry insert, and an empty memtable whose arena
//! and filter wait for the first write (O(log n) in the number of
//! families; nothing is rewritten for the families that exist).
//!
//! A drop is one edit. The family leaves the version set, the DB state and
//! the registry together under the DB mutex, and its handles fail from then
//! on; readers that hold its super version keep its memtables and tables,
//! whose files are deleted once the last of them is dropped. A flush or
//! compaction of the family that is running finds it gone when it is about
//! to log its edit and discards its outputs.

use std::sync::Arc;

use crate::cf::{Cf, CfState, ColumnFamily};
use crate::error::{Error, Result};
use crate::events::admin_records::{ColumnFamilyCreated, ColumnFamilyDropped};
use crate::events::records::Kind;
use crate::options::{in_family, CfOptions};
use crate::version::VersionEdit;

use super::DbInner;
use crate::shared::DbState;

/// Longest family name accepted.
const MAX_NAME_LEN: usize = 255;

pub(crate) fn create(db: &Arc<DbInner>, families: &[(&str, CfOptions)]) -> Result<Vec<Cf>> {
    db.check_open()?;
    db.check_read_write("create_cf")?;
    let mut seen = std::collections::HashSet::new();
    for (name, opts) in families {
        check_new(db, name, opts)?;
        if !seen.insert(*name) {
            return Err(Error::InvalidArgument(format!(
                "column family \"{name}\" listed twice"
            )));
        }
    }
    if families.is_empty() {
        return Ok(Vec::new());
    }
    let mut st = db.state.lock();
    for (name, _) in families {
        if st.versions.family_id(name).is_some() {
            return Err(Error::InvalidArgument(format!(
                "column family \"{name}\" already exists"
            )));
        }
    }
    // Writes to a new family can only come after its handle exists, so its
    // memtable starts at the WAL current now (or a later one).
    let wal_number = db.wals.current.lock().number;
    let mut edits: Vec<VersionEdit> = families
        .iter()
        .map(|(name, opts)| VersionEdit {
            column_family: st.versions.new_column_family_id(),
            cf_add: Some(name.to_string()),
            cf_options: Some(opts.to_text()),
            log_number: Some(wal_number),
            ..VersionEdit::default()
        })
        .collect();
    crate::shared::manifest::log_and_apply_group(db, &mut st, &mut edits)?;
    let mut out = Vec::with_capacity(families.len());
    for (edit, (name, opts)) in edits.iter().zip(families) {
        out.push(register(
            db,
            &mut st,
            edit.column_family,
            name,
            opts,
            wal_number,
        ));
    }
    db.refresh_memtable_reserve(&st);
    // Point-in-time restore must know (before any write to the family,
    // which needs the handle returned here).
    for e in &edits {
        crate::shared::wal_marks::mark_family_change(db, e.column_family)?;
    }
    Ok(out)
}

/// Checks a new family's name and options (`InvalidArgument` naming it).
/// Whether the name is taken is checked under the DB mutex.
pub(crate) fn check_new(db: &DbInner, name: &str, opts: &CfOptions) -> Result<()> {
    if name.is_empty() || name.len() > MAX_NAME_LEN {
        return Err(Error::InvalidArgument(format!(
            "column family name {name:?}: must be 1 to {MAX_NAME_LEN} bytes"
        )));
    }
    opts.validate()
        .and_then(|()| opts.validate_levels(db.opts.num_levels, db.opts.allow_ingest_behind))
        .map_err(|e| in_family(name, e))
}

/// After the MANIFEST edit creating family `id` is applied: its handle,
/// its state, its empty memtable (at WAL `wal_number`) and its event. The
/// caller refreshes the memtable reserve. Requires the DB mutex.
pub(crate) fn register(
    db: &DbInner,
    st: &mut DbState,
    id: u32,
    name: &str,
    opts: &CfOptions,
    wal_number: u64,
) -> Cf {
    let cf = Arc::new(ColumnFamily::new(
        id,
        name.to_string(),
        opts.clone(),
        db.instance,
        crate::shared::memtables::new_memtable(db, opts, wal_number),
        st.versions.current(id),
    ));
    st.sum_write_buffers += opts.write_buffer_size as u64;
    let num_levels = st.versions.num_levels();
    st.cfs.insert(
        id,
        CfState::new(
            Arc::clone(&cf),
            cf.super_version.load().mem.clone(),
            num_levels,
        ),
    );
    db.cfs.insert(Arc::clone(&cf));
    db.log.event(&ColumnFamilyCreated {
        event: Kind::new(),
        id,
        name: name.to_string(),
    });
    Cf(cf)
}

pub(crate) fn drop(db: &Arc<DbInner>, cf: &Arc<ColumnFamily>) -> Result<()> {
    db.check_open()?;
    db.check_read_write("drop_cf")?;
    if cf.id == 0 {
        return Err(Error::InvalidArgument(
            "the default column family cannot be dropped".into(),
        ));
    }
    let mut st = db.state.lock();
    if !st.cfs.contains_key(&cf.id) {
        return Err(Error::InvalidArgument(format!(
            "column family \"{}\" was dropped",
            cf.name
        )));
    }
    let mut edit = VersionEdit {
        column_family: cf.id,
        cf_drop: true,
        ..VersionEdit::default()
    };
    crate::shared::manifest::log_and_apply(db, &mut st, &mut edit)?;
    crate::shared::wal_marks::mark_family_change(db, cf.id)?;
    if let Some(state) = st.cfs.remove(&cf.id) {
        st.sum_write_buffers = st
            .sum_write_buffers
            .saturating_sub(state.cf.opts().write_buffer_size as u64);
    }
    db.refresh_memtable_reserve(&st);
    st.stalled.remove(&cf.id);
    db.room_clear
        .store(false, std::sync::atomic::Ordering::SeqCst);
    st.compaction_queue.remove(&cf.id);
    db.cfs.remove(cf.id);
    cf.mark_dropped();
    // Handles fail from now on; they must not keep the family's memtables
    // and tables alive either (readers hold their own super version).
    cf.release_data(st.versions.num_levels());
    db.log.event(&ColumnFamilyDropped {
        event: Kind::new(),
        id: cf.id,
        name: cf.name.clone(),
    });
    // Its WALs and (once unreferenced) tables are obsolete now.
    crate::shared::obsolete::delete_obsolete_files(db, &mut st);
    db.wake_bg(&mut st);
    Ok(())
}
