//! `find_max` with the real generator against a server of known capacity on 127.0.0.1:0: a
//! hyper server that paces its responses to C per second (each response gets the next free
//! 1/C slot, so timer lateness does not accumulate and the capacity is C however busy the
//! machine is). Trials are short (0.2 s warm-up + 0.4 s window, 0.3 s apart
//! so the server drains the queue an overloaded trial left).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::time::Instant;

use crate::slo::{find_max, Phase, SloArgs, StopReason};
use crate::BenchArgs;

/// Serves HTTP/1.1 on its own thread, at most `capacity` responses per second.
fn paced_server(capacity: f64) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let next_slot = Arc::new(Mutex::new(Instant::now()));
            let gap = Duration::from_secs_f64(1.0 / capacity);
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let next_slot = next_slot.clone();
                let service = service_fn(move |_req| {
                    let slot = {
                        let mut next = next_slot.lock().unwrap();
                        *next = (*next).max(Instant::now()) + gap;
                        *next
                    };
                    async move {
                        tokio::time::sleep_until(slot).await;
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(
                            b"ok",
                        ))))
                    }
                });
                tokio::spawn(
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service),
                );
            }
        });
    });
    rx.recv().unwrap()
}

fn bench_args(addr: SocketAddr) -> BenchArgs {
    let url = format!("http://{addr}/");
    BenchArgs::from_args([
        url.as_str(),
        "-c",
        "64",
        "-d",
        "0.4",
        "--warmup",
        "0.2",
        "--timeout",
        "2",
        "--quiet",
    ])
    .unwrap()
}

fn slo_args(extra: &[&str]) -> SloArgs {
    let mut argv = vec!["http://127.0.0.1/", "--find-max", "--trial-pause", "0.3s"];
    argv.extend_from_slice(extra);
    BenchArgs::from_args(argv).unwrap().slo
}

#[test]
fn finds_the_capacity_of_a_paced_server() {
    let capacity = 400.0;
    let addr = paced_server(capacity);
    let slo = slo_args(&[
        "--start-rate",
        "100",
        "--resolution",
        "10%",
        "--confirm",
        "2",
        "--max-trials",
        "16",
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let report = find_max(&bench_args(addr), &slo, stop).unwrap();
    println!("{report}");
    let result = &report.result;
    let c = result.confirmed.as_ref().expect("a confirmed rate");
    // Above C the server completes only C/s, so the shortfall rule (95%, less two requests of
    // edge slack in a 0.4 s window) fails every rate above about 1.08·C: never reported.
    assert!(c.rate <= 1.1 * capacity, "{}", c.rate);
    // Below C nothing fails on an idle machine; a stall of a loaded one (builds running beside
    // the tests) fails a trial and can only pull the result down, hence the loose floor.
    assert!(c.rate >= 0.5 * capacity, "{}", c.rate);
    // What the generator counted: at least what the SLO asked, at most what the server can do.
    assert!(c.min >= 0.9 * c.rate, "{c:?}");
    assert!(c.max <= 1.05 * capacity, "{c:?}");
    let lowest_failed = result.lowest_failed.expect("rates above capacity fail");
    assert!(c.rate < lowest_failed && lowest_failed <= 2.0 * capacity);
    assert!(result.trials.iter().any(|t| t.phase == Phase::Bisect));
    assert_eq!(report.unit, "requests");
    let json = report.to_json_value();
    assert_eq!(json["max_rate"], c.rate);
    assert_eq!(
        json["trials"].as_array().unwrap().len(),
        result.trials.len()
    );
}

#[test]
fn a_stop_before_the_first_trial_reports_an_interrupted_empty_search() {
    let addr = paced_server(100.0);
    let stop = Arc::new(AtomicBool::new(true));
    let report = find_max(&bench_args(addr), &slo_args(&[]), stop).unwrap();
    assert_eq!(report.result.stop, StopReason::Interrupted);
    assert!(report.result.trials.is_empty());
    assert!(report.to_string().contains("no trial completed"));
}
