//! Changing options while the DB is open: a column family's (RocksDB's
//! `SetOptions`) and the DB-wide ones of `options::mutable_db` (RocksDB's
//! `SetDBOptions`).
//!
//! Changes come typed ([`CfOption`], [`DbOption`]: a variant for each
//! option that may change while open, so no other can be named) or as the
//! OPTIONS file's text (`*_from_strings`), where only the options
//! `CfOptions::changeable_while_open` names can change and any other name,
//! an unknown one or a bad value is `InvalidArgument` and nothing changes. A change is all or nothing: the new options are
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
use crate::events::admin_records::{DbOptionsChanged, OptionsChanged};
use crate::events::records::Kind;
use crate::options::{in_family, CfOption, CfOptions, DbOption};
use crate::version::VersionEdit;

use super::DbInner;

/// A family's changes, typed or as the OPTIONS file's text.
pub(crate) enum CfChanges<'a> {
    Typed(&'a [CfOption]),
    Text(&'a [(&'a str, &'a str)]),
}

impl CfChanges<'_> {
    fn is_empty(&self) -> bool {
        match self {
            CfChanges::Typed(c) => c.is_empty(),
            CfChanges::Text(c) => c.is_empty(),
        }
    }

    /// Refuses names that are not options changeable while open (a typed
    /// change is one by construction).
    fn check_names(&self) -> std::result::Result<(), String> {
        let CfChanges::Text(changes) = self else {
            return Ok(());
        };
        for (k, _) in *changes {
            if !CfOptions::changeable_while_open(k) {
                return Err(if CfOptions::is_option(k) {
                    format!("set_options: {k} cannot change while the DB is open (reopen with it)")
                } else {
                    format!("set_options: unknown option {k:?}")
                });
            }
        }
        Ok(())
    }

    fn apply(&self, o: &mut CfOptions) -> Result<()> {
        match self {
            CfChanges::Typed(c) => c.iter().for_each(|c| c.clone().apply(o)),
            CfChanges::Text(c) => {
                for (k, v) in *c {
                    o.set_option(k, v)?;
                }
            }
        }
        Ok(())
    }

    /// The changes for the LOG.
    fn describe(&self) -> String {
        let text: Vec<String> = match self {
            CfChanges::Typed(c) => c.iter().map(|c| format!("{c:?}")).collect(),
            CfChanges::Text(c) => c.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        };
        text.join(" ")
    }
}

pub(crate) fn set_options(
    db: &Arc<DbInner>,
    cf: &Arc<ColumnFamily>,
    changes: CfChanges<'_>,
) -> Result<()> {
    db.check_open()?;
    db.check_read_write("set_options")?;
    if changes.is_empty() {
        return Err(Error::InvalidArgument(
            "set_options: no option given".into(),
        ));
    }
    let refuse = |m: String| Err(in_family(&cf.name, Error::InvalidArgument(m)));
    if let Err(m) = changes.check_names() {
        return refuse(m);
    }
    // One change at a time, and the OPTIONS file written in that order.
    let _serial = db.options_lock.lock();
    let mut st = db.state.lock();
    if !st.cfs.contains_key(&cf.id) {
        return refuse("set_options: the family was dropped".into());
    }
    let old = Arc::clone(&cf.opts());
    let mut new = (*old).clone();
    changes
        .apply(&mut new)
        .map_err(|e| in_family(&cf.name, e))?;
    new.validate()
        .and_then(|()| new.validate_levels(db.opts.num_levels, db.opts.allow_ingest_behind))
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
    db.wake_bg(&mut st);
    db.log.event(&OptionsChanged {
        event: Kind::new(),
        cf: cf.name.clone(),
        changes: changes.describe(),
    });
    write_options_file(db, st)
}

/// DB-wide changes, typed or as the OPTIONS file's text.
pub(crate) enum DbChanges<'a> {
    Typed(&'a [DbOption]),
    Text(&'a [(&'a str, &'a str)]),
}

/// Changes DB-wide options (see the module comment): validated as a whole
/// `Options`, then stored; a higher `max_background_jobs` starts the
/// threads it needs (`threads`, the DB's), and waiting work is scheduled.
pub(crate) fn set_db_options(
    db: &Arc<DbInner>,
    threads: &parking_lot::Mutex<Vec<std::thread::JoinHandle<()>>>,
    changes: DbChanges<'_>,
) -> Result<()> {
    db.check_open()?;
    db.check_read_write("set_db_options")?;
    let empty = match changes {
        DbChanges::Typed(c) => c.is_empty(),
        DbChanges::Text(c) => c.is_empty(),
    };
    if empty {
        return Err(Error::InvalidArgument(
            "set_db_options: no option given".into(),
        ));
    }
    let _serial = db.options_lock.lock();
    let mut new = current_options(db);
    let text: Vec<String> = match changes {
        DbChanges::Typed(c) => {
            for c in c {
                c.clone().apply(&mut new);
            }
            c.iter().map(|c| format!("{c:?}")).collect()
        }
        DbChanges::Text(c) => {
            for (k, v) in c {
                crate::options::mutable_db::set(&mut new, k, v)?;
            }
            c.iter().map(|(k, v)| format!("{k}={v}")).collect()
        }
    };
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
    db.wake_bg(&mut st);
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
    o.cf = (**db.default_cf.opts()).clone();
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
