//! Changing options while the DB is open: a column family's (RocksDB's
//! `SetOptions`) and the DB-wide ones of `options::mutable_db` (RocksDB's
//! `SetDBOptions`).
//!
//! Only the options `CfOptions::changeable_while_open` names can change;
//! any other name, an unknown one or a bad value is `InvalidArgument` and
//! nothing changes. A change is all or nothing: the new options are
//! validated whole, persisted (a MANIFEST edit for a family other than
//! `default`, whose options come from `Options` at each open; a new
//! `OPTIONS` file for `default`), then published in one swap.
//!
//! Invariants: the swap happens under the DB mutex, after the MANIFEST
//! edit is durable, so a reader under the mutex (the picker, the stall
//! check, the memtable switch) sees either the old options or the new ones
//! whole; a job that already started keeps the options it read (a flush
//! its table format, a compaction its output sizes). After the swap the
//! family's stall condition is recomputed and it is queued for the
//! compaction picker (a lower trigger, or auto compactions turned back on,
//! schedules work at once; a higher stop trigger releases stalled writers).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::cf::ColumnFamily;
use crate::error::{Error, Result};
use crate::events::records::{DbOptionsChanged, Kind, OptionsChanged};
use crate::options::{in_family, CfOptions};
use crate::version::VersionEdit;

use super::DbInner;

pub(crate) fn set_options(
    db: &Arc<DbInner>,
    cf: &Arc<ColumnFamily>,
    changes: &[(&str, &str)],
) -> Result<()> {
    db.check_open()?;
    if changes.is_empty() {
        return Err(Error::InvalidArgument(
            "set_options: no option given".into(),
        ));
    }
    let refuse = |m: String| Err(in_family(&cf.name, Error::InvalidArgument(m)));
    for (k, _) in changes {
        if !CfOptions::changeable_while_open(k) {
            return refuse(if CfOptions::is_option(k) {
                format!("set_options: {k} cannot change while the DB is open (reopen with it)")
            } else {
                format!("set_options: unknown option {k:?}")
            });
        }
    }
    // One change at a time, and the OPTIONS file written in that order.
    let _serial = db.options_lock.lock();
    let mut st = db.state.lock();
    if !st.cfs.contains_key(&cf.id) {
        return refuse("set_options: the family was dropped".into());
    }
    let old = Arc::clone(&cf.opts());
    let mut new = (*old).clone();
    for (k, v) in changes {
        new.set_option(k, v).map_err(|e| in_family(&cf.name, e))?;
    }
    new.validate()
        .and_then(|()| new.validate_levels(db.opts.num_levels))
        .map_err(|e| in_family(&cf.name, e))?;
    if cf.id != 0 {
        let mut edit = VersionEdit {
            column_family: cf.id,
            cf_options: Some(new.to_text()),
            ..VersionEdit::default()
        };
        if !crate::shared::manifest::log_and_apply_if_live(db, &mut st, &mut edit)? {
            return refuse("set_options: the family was dropped".into());
        }
    }
    st.sum_write_buffers = st
        .sum_write_buffers
        .saturating_sub(old.write_buffer_size as u64)
        + new.write_buffer_size as u64;
    cf.set_opts(new.clone());
    if old.memtables_max() != new.memtables_max() {
        db.refresh_memtable_reserve(&st);
    }
    db.cfs.options_changed(cf);
    db.refresh_stall(&mut st, cf.id, false);
    // The next write leader takes the slow path: the memtable may be full
    // under a smaller write buffer, or a stall may have begun or ended.
    db.room_clear.store(false, Ordering::SeqCst);
    db.bg_cv.notify_all();
    let text: Vec<String> = changes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    db.log.event(&OptionsChanged {
        event: Kind::new(),
        cf: cf.name.clone(),
        changes: text.join(" "),
    });
    write_options_file(db, st)
}

/// Changes DB-wide options (see the module comment): validated as a whole
/// `Options`, then stored; a higher `max_background_jobs` starts the
/// threads it needs (`threads`, the DB's), and waiting work is scheduled.
pub(crate) fn set_db_options(
    db: &Arc<DbInner>,
    threads: &parking_lot::Mutex<Vec<std::thread::JoinHandle<()>>>,
    changes: &[(&str, &str)],
) -> Result<()> {
    db.check_open()?;
    if changes.is_empty() {
        return Err(Error::InvalidArgument(
            "set_db_options: no option given".into(),
        ));
    }
    let _serial = db.options_lock.lock();
    let mut new = current_options(db);
    for (k, v) in changes {
        crate::options::mutable_db::set(&mut new, k, v)?;
    }
    new.validate()?;
    {
        // Under the threads' lock: a close takes it after it stops the
        // threads it holds, so no thread starts past a close.
        let mut t = threads.lock();
        db.check_open()?;
        db.mutable.store(&new);
        crate::bg::scheduler::add_threads(db, &mut t);
    }
    let mut st = db.state.lock();
    db.room_clear.store(false, Ordering::SeqCst);
    db.bg_cv.notify_all();
    let text: Vec<String> = changes.iter().map(|(k, v)| format!("{k}={v}")).collect();
    db.log.event(&DbOptionsChanged {
        event: Kind::new(),
        changes: text.join(" "),
    });
    // The next pass of the scheduler sees the new limits.
    let ids: Vec<u32> = st.cfs.keys().copied().collect();
    st.compaction_queue.extend(ids);
    write_options_file(db, st)
}

/// The options in force: those the DB was opened with, the DB-wide ones
/// as changed, the default family's as changed.
pub(crate) fn current_options(db: &DbInner) -> crate::options::Options {
    let mut o = db.opts.clone();
    db.mutable.apply_to(&mut o);
    o.set_cf_options((**db.default_cf.opts()).clone());
    o
}

/// Writes a new OPTIONS file of the current options and releases the DB
/// mutex `st` for the write. Its temporary file is a pending output until
/// renamed, so an obsolete-file pass running meanwhile leaves it alone.
fn write_options_file(
    db: &Arc<DbInner>,
    mut st: parking_lot::MutexGuard<'_, crate::shared::DbState>,
) -> Result<()> {
    let number = st.versions.new_file_number();
    st.pending_outputs.insert(number);
    let families: Vec<(String, crate::options::CfOptions)> = st
        .cfs
        .values()
        .filter(|c| c.cf.id != 0)
        .map(|c| (c.cf.name.clone(), (**c.cf.opts()).clone()))
        .collect();
    drop(st);
    let r = crate::options::file::write(
        &db.fs,
        &db.dir,
        number,
        &crate::options::file::render(&current_options(db), &families),
        &db.log,
    );
    db.state.lock().pending_outputs.remove(&number);
    r
}
