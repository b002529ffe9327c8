//! One pick per algorithm, over 10, 100 and 1,000 servers.
//!
//! `pick/*` measures [`Balancer::select`] alone; `select_with/*` measures
//! [`Balancer::select_with`] at 100 servers, with a `take` that accepts every server (`take-all`:
//! the price of the hook itself) and with one that refuses the first server offered
//! (`refuse-first`: a pick, an exclusion, a second pick and the restore). `cycle/*` measures what a request costs the
//! core under a steady load: select, count the stream in, and count out the oldest of 2n held
//! streams (plus a response-time sample for `ewma`), so the trees and heaps the load-aware
//! algorithms keep are updated on every iteration. Hashing algorithms get a different key each
//! time (paths like `/static/item/1234.png`, IPv4 clients, `id=` parameters, header values).
//!
//! Times are the benchmark thread's **CPU time** (`CLOCK_THREAD_CPUTIME_ID`), not wall time: on a
//! shared machine a preempted thread's wall time can double, its CPU time barely moves.
//!
//! Run: `cargo bench -p tern-balance` (release profile). Goal: O(1) or O(log n) per pick, under
//! 100 ns at 100 servers.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nix::time::{clock_gettime, ClockId};
use tern_balance::{
    Algorithm, BalanceMethod, Balancer, HashKey, HashType, PickContext, ServerSpec,
};

const SIZES: [usize; 3] = [10, 100, 1000];
const KEYS: usize = 4096;

fn methods() -> Vec<(&'static str, BalanceMethod)> {
    let hash = |key, hash_type| BalanceMethod::Hash { key, hash_type };
    let consistent = HashType::Consistent { balance_factor: 0 };
    vec![
        ("roundrobin", BalanceMethod::RoundRobin),
        ("static-rr", BalanceMethod::StaticRoundRobin),
        ("leastconn", BalanceMethod::LeastConn),
        ("first", BalanceMethod::First),
        ("source-map", hash(HashKey::Source, HashType::MapBased)),
        ("source-consistent", hash(HashKey::Source, consistent)),
        (
            "uri-map",
            hash(HashKey::Uri { whole: false }, HashType::MapBased),
        ),
        (
            "uri-consistent",
            hash(HashKey::Uri { whole: false }, consistent),
        ),
        (
            "hdr-consistent",
            hash(HashKey::Header("X-User".into()), consistent),
        ),
        (
            "url_param-bounded125",
            hash(
                HashKey::UrlParam("id".into()),
                HashType::Consistent {
                    balance_factor: 125,
                },
            ),
        ),
        ("random2", BalanceMethod::random()),
        ("ewma", BalanceMethod::ewma()),
    ]
}

/// Request keys, cycled through by the benches.
struct Keys {
    paths: Vec<Vec<u8>>,
    queries: Vec<Vec<u8>>,
    clients: Vec<IpAddr>,
}

impl Keys {
    fn new() -> Self {
        Self {
            paths: (0..KEYS)
                .map(|i| format!("/static/item/{i}.png").into_bytes())
                .collect(),
            queries: (0..KEYS)
                .map(|i| format!("page=2&id=user{i}").into_bytes())
                .collect(),
            clients: (0..KEYS)
                .map(|i| IpAddr::V4(Ipv4Addr::from(0x0A00_0000 + i as u32 * 7919)))
                .collect(),
        }
    }

    fn ctx(&self, i: usize) -> PickContext<'_> {
        let k = i % KEYS;
        PickContext::new()
            .with_client(self.clients[k])
            .with_path(&self.paths[k])
            .with_query(&self.queries[k])
            .with_header(&self.queries[k][7..])
            .with_now(i as u64 * 10_000)
    }
}

fn balancer(method: &BalanceMethod, n: usize) -> Balancer {
    let servers: Vec<ServerSpec> = (0..n)
        .map(|i| ServerSpec::new(1 + (i % 4) as u32).maxconn(4))
        .collect();
    // Constant inputs: the bench cannot fail on them.
    Balancer::new(method.clone(), &servers, 1).unwrap_or_else(|e| panic!("bench setup: {e}"))
}

fn pick(c: &mut Criterion<ThreadCpu>) {
    let keys = Keys::new();
    let mut group = c.benchmark_group("pick");
    for (name, method) in methods() {
        for n in SIZES {
            let mut b = balancer(&method, n);
            let mut i = 0usize;
            group.bench_function(BenchmarkId::new(name, n), |bench| {
                bench.iter(|| {
                    i = i.wrapping_add(1);
                    black_box(b.select(black_box(&keys.ctx(i))))
                })
            });
        }
    }
    group.finish();
}

fn pick_with(c: &mut Criterion<ThreadCpu>) {
    let keys = Keys::new();
    let mut group = c.benchmark_group("select_with");
    for (name, method) in methods() {
        let mut b = balancer(&method, 100);
        let mut i = 0usize;
        group.bench_function(BenchmarkId::new(name, "take-all"), |bench| {
            bench.iter(|| {
                i = i.wrapping_add(1);
                black_box(b.select_with(black_box(&keys.ctx(i)), |_| true))
            })
        });
        group.bench_function(BenchmarkId::new(name, "refuse-first"), |bench| {
            bench.iter(|| {
                i = i.wrapping_add(1);
                let mut first = true;
                black_box(b.select_with(black_box(&keys.ctx(i)), |_| {
                    !std::mem::replace(&mut first, false)
                }))
            })
        });
    }
    group.finish();
}

fn cycle(c: &mut Criterion<ThreadCpu>) {
    let keys = Keys::new();
    let mut group = c.benchmark_group("cycle");
    for (name, method) in methods() {
        for n in SIZES {
            let mut b = balancer(&method, n);
            // 2n streams held: every server has load, `first` fills about half of them.
            let mut held = Vec::with_capacity(2 * n);
            for i in 0..2 * n {
                if let Ok(s) = b.select(&keys.ctx(i)) {
                    b.on_start(s);
                    held.push(s);
                }
            }
            assert!(!held.is_empty(), "bench setup: no stream could start");
            let mut i = 0usize;
            group.bench_function(BenchmarkId::new(name, n), |bench| {
                bench.iter(|| {
                    i = i.wrapping_add(1);
                    let ctx = keys.ctx(i);
                    let slot = i % held.len();
                    let old = held[slot];
                    b.on_finish(old);
                    b.on_response(
                        old,
                        Duration::from_micros(100 + (old as u64 % 7) * 50),
                        ctx.now,
                    );
                    if let Ok(s) = b.select(black_box(&ctx)) {
                        b.on_start(s);
                        held[slot] = s;
                    }
                })
            });
        }
    }
    group.finish();
}

/// CPU time of the calling thread, in nanoseconds.
#[derive(Debug)]
struct ThreadCpu;

fn thread_cpu_nanos() -> u64 {
    // The thread CPU clock exists on every Linux since 2.6.12; without it there is nothing to
    // measure, so the bench stops.
    let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .unwrap_or_else(|e| panic!("thread CPU clock: {e}"));
    (t.tv_sec() as u64) * 1_000_000_000 + t.tv_nsec() as u64
}

impl Measurement for ThreadCpu {
    type Intermediate = u64;
    type Value = u64;

    fn start(&self) -> u64 {
        thread_cpu_nanos()
    }
    fn end(&self, start: u64) -> u64 {
        thread_cpu_nanos().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, value: &u64) -> f64 {
        *value as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Formats CPU nanoseconds like criterion formats durations.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = match typical {
            t if t < 1e3 => (1.0, "ns"),
            t if t < 1e6 => (1e-3, "µs"),
            t if t < 1e9 => (1e-6, "ms"),
            _ => (1e-9, "s"),
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(
        &self,
        _typical: f64,
        _t: &Throughput,
        _values: &mut [f64],
    ) -> &'static str {
        // Not used by these benches: values stay per-iteration nanoseconds.
        "ns"
    }
    fn scale_for_machines(&self, _values: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn config() -> Criterion<ThreadCpu> {
    Criterion::default()
        .with_measurement(ThreadCpu)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500))
        .sample_size(40)
}

criterion_group! {
    name = benches;
    config = config();
    targets = pick, pick_with, cycle
}
criterion_main!(benches);
