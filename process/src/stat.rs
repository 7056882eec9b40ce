//! `/proc/PID/stat`, read in one place: the process table checks of the tests, the CPU use of
//! a server's group ([`crate::group_usage`]) and a debug session's process tracking all go
//! through [`ProcStat::read`] and [`pids`].

/// The fields of `/proc/PID/stat` this workspace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// `R` running, `S` sleeping, `D` in uninterruptible I/O, `Z` zombie, `X` dead, …
    pub state: char,
    /// The parent's pid.
    pub ppid: u32,
    /// The process group.
    pub pgrp: u32,
    /// CPU time in clock ticks (`USER_HZ`, 100 per second on Linux): user and system time
    /// of the process and of the children it has reaped.
    pub cpu_ticks: u64,
    /// When it started, in clock ticks after boot: with the pid, names the process even
    /// after its pid is recycled.
    pub start: u64,
}

impl ProcStat {
    /// The process `pid` as it is now, or `None` when it does not exist (or `/proc` is not
    /// readable: not Linux).
    pub fn read(pid: u32) -> Option<ProcStat> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        Self::parse(&text)
    }

    /// Whether it is still running: not a zombie waiting for its reaper, not dead.
    pub fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }

    /// The command name sits in parentheses and may hold spaces and parentheses, so the
    /// fields are counted from the last `)`.
    fn parse(text: &str) -> Option<ProcStat> {
        let (_, rest) = text.rsplit_once(')')?;
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let number = |index: usize| fields.get(index)?.parse::<u64>().ok();
        // After the name: state(0) ppid(1) pgrp(2) … utime(11) stime(12) cutime(13)
        // cstime(14) … starttime(19).
        Some(ProcStat {
            state: fields.first()?.chars().next()?,
            ppid: u32::try_from(number(1)?).ok()?,
            pgrp: u32::try_from(number(2)?).ok()?,
            cpu_ticks: number(11)? + number(12)? + number(13)? + number(14)?,
            start: number(19)?,
        })
    }
}

/// Every pid in `/proc` now (nothing when it cannot be read).
pub fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_spaces_and_parentheses_is_skipped() {
        let stat =
            ProcStat::parse("42 (a b) c) S 7 42 42 0 -1 0 0 0 0 0 7 3 2 1 20 0 1 0 555 0").unwrap();
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.ppid, 7);
        assert_eq!(stat.pgrp, 42);
        assert_eq!(stat.cpu_ticks, 13);
        assert_eq!(stat.start, 555);
        assert!(stat.is_live());
    }

    #[test]
    fn this_process_is_found() {
        let me = std::process::id();
        let stat = ProcStat::read(me).unwrap();
        assert!(stat.is_live());
        assert!(pids().any(|pid| pid == me));
        assert_eq!(ProcStat::read(999_999_999), None);
    }
}
