use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{message, Guarded, Place, Task};
use crate::stats::WorkerStats;

/// Runs `fut` as a task of a LocalSet on a current-thread runtime, as a worker does.
fn run_local(fut: impl std::future::Future<Output = ()> + 'static) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let local = tokio::task::LocalSet::new();
    local.block_on(&rt, async move {
        tokio::task::spawn_local(fut)
            .await
            .expect("the guard caught the panic");
    });
}

#[test]
fn a_panic_is_caught_counted_and_its_state_dropped() {
    let stats = Arc::new(WorkerStats::new(2, &[1]));
    let dropped = Rc::new(Cell::new(false));
    struct Flag(Rc<Cell<bool>>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.set(true);
        }
    }
    let flag = Flag(Rc::clone(&dropped));
    let task = async move {
        let _flag = flag;
        tokio::task::yield_now().await;
        panic!("on purpose");
    };
    run_local(Guarded::new(&stats, Place::Frontend(1), Task::Test, task));
    assert_eq!(stats.frontends[1].panics.load(Ordering::Relaxed), 1);
    assert_eq!(stats.frontends[0].panics.load(Ordering::Relaxed), 0);
    assert!(dropped.get(), "what the task held was dropped");
}

#[test]
fn a_backend_task_counts_in_its_backend() {
    let stats = Arc::new(WorkerStats::new(1, &[1, 1]));
    let task = async { panic!("{}", String::from("formatted")) };
    run_local(Guarded::new(&stats, Place::Backend(1), Task::Test, task));
    assert_eq!(stats.backends[1].panics.load(Ordering::Relaxed), 1);
}

#[test]
fn a_task_that_does_not_panic_is_untouched() {
    let stats = Arc::new(WorkerStats::new(1, &[]));
    let ran = Rc::new(Cell::new(0));
    let seen = Rc::clone(&ran);
    let task = async move {
        tokio::task::yield_now().await;
        seen.set(seen.get() + 1);
    };
    run_local(Guarded::new(&stats, Place::Frontend(0), Task::Test, task));
    assert_eq!(ran.get(), 1);
    assert_eq!(stats.frontends[0].panics.load(Ordering::Relaxed), 0);
}

#[test]
fn an_index_out_of_range_is_not_a_second_panic() {
    let stats = Arc::new(WorkerStats::new(1, &[]));
    let task = async { panic!("on purpose") };
    run_local(Guarded::new(&stats, Place::Backend(7), Task::Test, task));
}

#[test]
fn messages_of_both_payload_kinds_are_read() {
    let literal: Box<dyn std::any::Any + Send> = Box::new("literal");
    let formatted: Box<dyn std::any::Any + Send> = Box::new(String::from("formatted"));
    let other: Box<dyn std::any::Any + Send> = Box::new(7_u32);
    assert_eq!(message(literal.as_ref()), "literal");
    assert_eq!(message(formatted.as_ref()), "formatted");
    assert_eq!(message(other.as_ref()), "(not a string)");
}
