//! `cpu-map` → `global.cpus` (one CPU per worker).
//!
//! HAProxy's form is `cpu-map [auto:]<process-set>[/<thread-set>] <cpu-set>...`: every thread of
//! the set may run on every CPU of the set, or, with `auto:`, the threads and CPUs are paired in
//! order (`auto:1/1-4 0-3` puts thread 1 on CPU 0, thread 2 on CPU 1, ...). Without a thread set,
//! the numbers are processes (the `nbproc` era), which tern runs as workers. tern pins each
//! worker to exactly one CPU, so a mapping is exact when every worker gets one CPU of its own;
//! a set of several CPUs per thread is approximated by taking the worker's position in the set.

use std::collections::BTreeMap;

/// One `cpu-map` line, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CpuMap {
    /// 1-based thread (or process) numbers; `None`: "all".
    pub threads: Option<Vec<usize>>,
    pub cpus: Vec<usize>,
    pub auto: bool,
}

/// The largest thread or process number a set may name (HAProxy's limit on 64-bit systems).
const MAX_ID: usize = 64;
/// The largest CPU number (tern's limit).
const MAX_CPU: usize = 1023;

/// Parses `cpu-map` arguments (the words after the keyword).
pub(crate) fn parse(args: &[String]) -> Result<CpuMap, String> {
    let (first, cpu_words) = args
        .split_first()
        .filter(|(_, rest)| !rest.is_empty())
        .ok_or("'cpu-map' needs a process/thread set and a CPU set")?;
    let (auto, spec) = match first.strip_prefix("auto:") {
        Some(rest) => (true, rest),
        None => (false, first.as_str()),
    };
    let threads = match spec.split_once('/') {
        Some((process, thread)) => {
            if !matches!(process, "1" | "all") {
                return Err(format!(
                    "process set '{process}' with a thread set: only process 1 exists in tern"
                ));
            }
            set(thread, MAX_ID)?
        }
        None => set(spec, MAX_ID)?,
    };
    let mut cpus = Vec::new();
    for word in cpu_words {
        cpus.extend(set(word, MAX_CPU)?.ok_or("a CPU set cannot be 'all', 'odd' or 'even'")?);
    }
    if auto {
        let count = threads.as_ref().map(Vec::len);
        if count.is_some_and(|n| n != cpus.len()) {
            return Err(format!(
                "'auto:' pairs threads with CPUs, but the thread set has {} and the CPU set {}",
                count.unwrap_or(0),
                cpus.len()
            ));
        }
    }
    Ok(CpuMap {
        threads,
        cpus,
        auto,
    })
}

/// `N`, `N-M`, `all`, `odd`, `even` (1-based ids) or a CPU list item; `None` for `all`.
fn set(text: &str, max: usize) -> Result<Option<Vec<usize>>, String> {
    let id = |s: &str| -> Result<usize, String> {
        s.parse::<usize>()
            .ok()
            .filter(|&n| n <= max)
            .ok_or_else(|| format!("invalid number '{s}' in cpu-map (0 to {max})"))
    };
    Ok(Some(match text {
        "all" => return Ok(None),
        "odd" => (1..=MAX_ID).step_by(2).collect(),
        "even" => (2..=MAX_ID).step_by(2).collect(),
        _ => match text.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (id(a)?, id(b)?);
                if a > b {
                    return Err(format!("invalid range '{text}' in cpu-map"));
                }
                (a..=b).collect()
            }
            None => vec![id(text)?],
        },
    }))
}

/// The outcome of the `cpu-map` lines for `workers` workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Pinning {
    /// Worker `i` on `cpus[i]`, exactly as HAProxy maps the threads.
    Exact(Vec<usize>),
    /// The closest one-CPU-per-worker list, and what differs.
    Approx(Vec<usize>, String),
    /// No list fits; tern's default pinning applies.
    Dropped(String),
}

/// Resolves the lines (in order, later ones override) for `workers` workers (`None`: as many
/// as the lines name).
pub(crate) fn resolve(maps: &[CpuMap], workers: Option<usize>) -> Pinning {
    // Thread id (1-based) → its CPU set; 0 stands for "every thread".
    let mut by_thread: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for map in maps {
        match &map.threads {
            None => {
                by_thread.clear();
                by_thread.insert(0, map.cpus.clone());
            }
            Some(threads) => {
                for (i, &t) in threads.iter().enumerate() {
                    let cpus = if map.auto {
                        vec![map.cpus[i]]
                    } else {
                        map.cpus.clone()
                    };
                    by_thread.insert(t, cpus);
                }
            }
        }
    }
    let named = by_thread
        .keys()
        .copied()
        .filter(|&t| t > 0)
        .max()
        .unwrap_or(0);
    let count = workers.unwrap_or(if named > 0 {
        named
    } else {
        by_thread.get(&0).map_or(0, Vec::len)
    });
    let mut cpus = Vec::with_capacity(count);
    let mut exact = true;
    for worker in 0..count {
        let set = by_thread.get(&(worker + 1)).or_else(|| by_thread.get(&0));
        let Some(set) = set.filter(|s| !s.is_empty()) else {
            return Pinning::Dropped(format!(
                "thread {} has no CPU in the cpu-map lines, and tern pins every worker: tern's default pinning is used",
                worker + 1
            ));
        };
        if set.len() > 1 {
            exact = false;
        }
        cpus.push(set[worker % set.len()]);
    }
    let mut sorted = cpus.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != cpus.len() {
        return Pinning::Dropped(
            "the mapping puts two threads on one CPU, and tern pins one worker per CPU: tern's default pinning is used"
                .to_owned(),
        );
    }
    if exact {
        Pinning::Exact(cpus)
    } else {
        Pinning::Approx(
            cpus,
            "threads may run on several CPUs in HAProxy; tern pins worker i to the i-th CPU of its set".to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn map(s: &str) -> CpuMap {
        let words: Vec<String> = s.split_whitespace().map(str::to_owned).collect();
        parse(&words).unwrap()
    }

    #[test]
    fn auto_pairs_threads_and_cpus() {
        let m = map("auto:1/1-2 0-1");
        assert_eq!(m.threads, Some(vec![1, 2]));
        assert_eq!(resolve(&[m], Some(2)), Pinning::Exact(vec![0, 1]));
        let m = map("auto:1/1-4 2 3 4-5");
        assert_eq!(resolve(&[m], None), Pinning::Exact(vec![2, 3, 4, 5]));
    }

    #[test]
    fn one_line_per_thread_or_process() {
        let lines = [map("1/1 3"), map("1/2 5")];
        assert_eq!(resolve(&lines, Some(2)), Pinning::Exact(vec![3, 5]));
        // nbproc era: processes 1 and 2.
        let lines = [map("1 0"), map("2 1")];
        assert_eq!(resolve(&lines, Some(2)), Pinning::Exact(vec![0, 1]));
    }

    #[test]
    fn shared_sets_are_approximated_or_dropped() {
        assert!(
            matches!(resolve(&[map("1/all 0-3")], Some(4)), Pinning::Approx(c, _) if c == [0, 1, 2, 3])
        );
        assert!(matches!(
            resolve(&[map("1/all 0-1")], Some(4)),
            Pinning::Dropped(_)
        ));
        assert!(matches!(
            resolve(&[map("1/1 0")], Some(2)),
            Pinning::Dropped(_)
        ));
    }

    #[test]
    fn bad_lines() {
        let err = |s: &str| {
            parse(&s.split_whitespace().map(str::to_owned).collect::<Vec<_>>()).unwrap_err()
        };
        assert!(err("auto:1/1-3 0-1").contains("pairs"));
        assert!(err("1/1").contains("needs"));
        assert!(err("2/1 0").contains("process 1"));
        assert!(err("1/1 all").contains("CPU set"));
        assert!(err("1/3-1 0").contains("range"));
    }
}
