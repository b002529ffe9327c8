//! Ctrl-C (and SIGTERM) during a suite run.
//!
//! The first signal asks the runner to stop after the measurement in progress: it then stops
//! every child and still writes the partial report, marked as such. A second signal means the
//! user will not wait: every child process group is killed and the suite exits at once (130).
//! The handlers run on a small background thread with its own event loop, as in `tern run`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::signal::unix::{signal, SignalKind};

use crate::procs;

/// Installs the handlers; the returned flag turns true on the first signal.
pub fn install() -> anyhow::Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut int, mut term) = rt.block_on(async {
        anyhow::Ok((
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        ))
    })?;
    std::thread::Builder::new()
        .name("suite-signals".into())
        .spawn(move || {
            rt.block_on(async move {
                loop {
                    tokio::select! {
                        _ = int.recv() => {}
                        _ = term.recv() => {}
                    }
                    if flag.swap(true, Ordering::SeqCst) {
                        eprintln!("suite: second stop signal: killing every child and exiting");
                        procs::kill_all_groups();
                        std::process::exit(130);
                    }
                    eprintln!(
                        "suite: stopping after the current measurement, then writing the partial \
                         report (press Ctrl-C again to abort at once)"
                    );
                }
            });
        })?;
    Ok(stop)
}
