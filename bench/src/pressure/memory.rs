//! The peak of a process's resident set over an interval: the kernel's high-water mark
//! (`VmHWM`), reset at the start through `/proc/PID/clear_refs` where that is allowed, and a
//! sampler thread reading `VmRSS` meanwhile, which catches the peak where the reset is not.
//!
//! Invariant: the sampler thread is always stopped and joined, by [`Peak::finish`] or on drop,
//! so a failed burst leaves no thread reading `/proc` behind.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::rss;
use crate::target::{Target, rss_bytes};

/// A peak being watched. See the module documentation.
pub struct Peak {
    pid: u32,
    before: u64,
    /// Whether `VmHWM` was reset at the start, and so is this interval's peak.
    hwm_reset: bool,
    stop: Arc<AtomicBool>,
    sampler: Option<JoinHandle<u64>>,
}

impl Peak {
    /// Resets the high-water mark of `target`'s process if allowed, reads its resident set
    /// as every memory benchmark does ([`rss::read`]), and starts sampling it every `every`.
    ///
    /// # Errors
    /// As [`rss::read`]: the process is unknown, or `/proc/PID/status` cannot be read (no
    /// such process, not Linux).
    pub fn start(target: &Target, every: Duration) -> Result<Peak> {
        let before = rss::read(target)?;
        let pid = target
            .pid
            .ok_or_else(|| Error::Refused("no server process".to_owned()))?;
        // "5" resets the peak RSS (Linux 4.0 and later, proc(5)); refused without ptrace
        // access to the process, in which case only the samples count.
        let hwm_reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
        let stop = Arc::new(AtomicBool::new(false));
        let sampler = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut peak = 0;
                while !stop.load(Relaxed) {
                    if let Ok(rss) = rss_bytes(pid) {
                        peak = peak.max(rss);
                    }
                    std::thread::sleep(every);
                }
                peak
            })
        };
        Ok(Peak {
            pid,
            before,
            hwm_reset,
            stop,
            sampler: Some(sampler),
        })
    }

    /// Stops sampling: the resident set before, the peak since, and where the peak came from
    /// (`hwm` or `sampled`).
    ///
    /// # Errors
    /// `/proc/PID/status` cannot be read any more (the process ended).
    pub fn finish(mut self) -> Result<(u64, u64, &'static str)> {
        let sampled = self.stop_sampler();
        let hwm = if self.hwm_reset {
            hwm_bytes(self.pid)?
        } else {
            0
        };
        let (peak, source) = if hwm >= sampled {
            (hwm, "hwm")
        } else {
            (sampled, "sampled")
        };
        Ok((self.before, peak.max(self.before), source))
    }

    fn stop_sampler(&mut self) -> u64 {
        self.stop.store(true, Relaxed);
        self.sampler
            .take()
            .and_then(|sampler| sampler.join().ok())
            .unwrap_or(0)
    }
}

impl Drop for Peak {
    fn drop(&mut self) {
        self.stop_sampler();
    }
}

/// `VmHWM` of `/proc/PID/status`, in bytes.
fn hwm_bytes(pid: u32) -> Result<u64> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        what: format!("read {path}"),
        source,
    })?;
    text.lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| Error::Refused(format!("{path} has no VmHWM")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our own process grows by 64 MiB touched during the interval: the peak sees it, by
    /// either route.
    #[test]
    fn the_peak_of_this_process_sees_memory_touched_meanwhile() {
        let this = Target::remote("127.0.0.1:1", Some(std::process::id()));
        let peak = Peak::start(&this, Duration::from_millis(1)).unwrap();
        let touched = vec![1u8; 64 << 20];
        std::hint::black_box(&touched);
        drop(touched);
        let (before, peak, source) = peak.finish().unwrap();
        assert!(peak >= before + (32 << 20), "{before} → {peak} ({source})");
    }
}
