//! What the proxy loop pays per message: parse (and parse + rewrite) of a typical 300-byte
//! browser request and a 200-byte response head, and finding the end of a 16 KiB chunked body
//! in passthrough and decode mode. Heads and output buffers are reused across iterations, as
//! the proxy reuses them across the requests of a connection.
//!
//! `cargo bench -p tern-h1` (release profile); results in target/criterion.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tern_h1::{
    encode_chunk, parse_request, parse_response, write_request, write_response, BodyReader,
    Forwarding, Limits, Method, Piece, RequestHead, ResponseHead, LAST_CHUNK,
};

const REQUEST: &[u8] = b"GET /assets/app.js?v=20240101 HTTP/1.1\r\n\
Host: www.example.com\r\n\
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n\
Accept: */*\r\n\
Accept-Language: en-US,en;q=0.5\r\n\
Accept-Encoding: gzip, deflate, br\r\n\
Referer: https://www.example.com/\r\n\
Connection: keep-alive\r\n\r\n";

const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\n\
Date: Mon, 01 Jan 2024 00:00:00 GMT\r\n\
Content-Type: application/javascript\r\n\
Content-Length: 12345\r\n\
Cache-Control: max-age=3600\r\n\
ETag: \"5f1a-60c2b1\"\r\n\
Connection: keep-alive\r\n\r\n";

fn heads(c: &mut Criterion) {
    let limits = Limits::default();
    let fwd = Forwarding::none()
        .with_for(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)))
        .with_proto(true);
    let mut req = RequestHead::new();
    let mut resp = ResponseHead::new();
    let mut out = Vec::with_capacity(1024);
    parse_request(REQUEST, &limits, &mut req).unwrap_or_else(|e| panic!("{e}"));
    let info = req.info();

    let mut g = c.benchmark_group("head");
    g.throughput(Throughput::Elements(1));
    g.bench_function(format!("parse_request_{}B", REQUEST.len()), |b| {
        b.iter(|| parse_request(black_box(REQUEST), &limits, &mut req))
    });
    g.bench_function("parse_and_write_request", |b| {
        b.iter(|| {
            let _ = parse_request(black_box(REQUEST), &limits, &mut req);
            out.clear();
            write_request(&req, REQUEST, &fwd, &mut out);
            black_box(out.len())
        })
    });
    g.bench_function(format!("parse_response_{}B", RESPONSE.len()), |b| {
        b.iter(|| parse_response(black_box(RESPONSE), &limits, &mut resp, Method::Get))
    });
    g.bench_function("parse_and_write_response", |b| {
        b.iter(|| {
            let _ = parse_response(black_box(RESPONSE), &limits, &mut resp, Method::Get);
            out.clear();
            black_box(write_response(&resp, RESPONSE, &info, &mut out))
        })
    });
    g.finish();
}

fn chunked(c: &mut Criterion) {
    let limits = Limits::default();
    let mut body = Vec::new();
    for i in 0..4u8 {
        encode_chunk(&[b'a' + i; 4096], &mut body);
    }
    body.extend_from_slice(LAST_CHUNK);

    let mut g = c.benchmark_group("chunked_16KiB");
    g.throughput(Throughput::Bytes(16 * 1024));
    g.bench_function("passthrough", |b| {
        b.iter(|| {
            let mut r = BodyReader::chunked(&limits);
            black_box(r.advance(black_box(&body)))
        })
    });
    g.bench_function("forward", |b| {
        let mut piece = Piece::default();
        b.iter(|| {
            let mut r = BodyReader::chunked(&limits);
            let mut at = 0;
            let mut data = 0;
            while !r.is_done() {
                match r.forward(black_box(&body[at..]), &mut piece) {
                    Ok(()) => {
                        at += piece.used;
                        data += piece.size();
                    }
                    Err(_) => break,
                }
            }
            black_box(data)
        })
    });
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut r = BodyReader::chunked(&limits);
            let mut at = 0;
            let mut data = 0;
            while !r.is_done() {
                match r.decode(black_box(&body[at..])) {
                    Ok(d) => {
                        at += d.used;
                        data += d.data.len();
                    }
                    Err(_) => break,
                }
            }
            black_box(data)
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    targets = heads, chunked
}
criterion_main!(benches);
