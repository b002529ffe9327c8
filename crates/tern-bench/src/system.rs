//! Where a run happened: software versions and the machine's CPU, as recorded in every report.
//!
//! A figure without the versions and the CPU that produced it cannot be compared with another;
//! the design brief asks every report to say how it was obtained.

/// Versions and machine details of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct System {
    /// tern's version.
    pub tern: &'static str,
    /// rustls' version (from the build's Cargo.lock).
    pub rustls: &'static str,
    /// aws-lc-rs' version (from the build's Cargo.lock).
    pub aws_lc_rs: &'static str,
    /// tokio's version (from the build's Cargo.lock).
    pub tokio: &'static str,
    /// The CPU model from /proc/cpuinfo, or "unknown".
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus_available: usize,
    /// The kernel release (/proc/sys/kernel/osrelease), or "unknown".
    pub kernel: String,
}

impl System {
    /// Reads the current machine.
    pub fn current() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "unknown".to_owned());
        Self {
            tern: env!("CARGO_PKG_VERSION"),
            rustls: env!("TERN_BENCH_RUSTLS_VERSION"),
            aws_lc_rs: env!("TERN_BENCH_AWS_LC_RS_VERSION"),
            tokio: env!("TERN_BENCH_TOKIO_VERSION"),
            cpu_model: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".to_owned()),
            cpus_available: available_cpus(),
            kernel,
        }
    }
}

/// The first `model name` (x86) or `Model`/`CPU part` line (Arm) of /proc/cpuinfo.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "cpu model", "CPU part"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_owned())
            })
        })
}

/// CPUs this process may use (its affinity mask and CPU quota), at least 1.
pub fn available_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_cpu_models_and_versions() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n";
        assert_eq!(cpu_model(x86).as_deref(), Some("Intel(R) Xeon(R)"));
        let arm = "processor\t: 0\nBogoMIPS\t: 243.75\nCPU part\t: 0xd0c\n";
        assert_eq!(cpu_model(arm).as_deref(), Some("0xd0c"));
        assert_eq!(cpu_model(""), None);
        let s = System::current();
        assert!(s.rustls.starts_with("0."), "{}", s.rustls);
        assert_ne!(s.aws_lc_rs, "unknown");
        assert!(s.cpus_available >= 1);
    }
}
