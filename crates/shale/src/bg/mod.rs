//! Background work: the scheduler (`scheduler`: the thread pool that runs
//! flushes and compactions, and the foreground waits built on it) and the
//! recovery from background errors (`resume`: automatic and by
//! `Db::resume`).

pub(crate) mod resume;
pub(crate) mod scheduler;
