//! Spawning into a process group and tearing the group down.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// A child process that leads its own process group. Dropping it kills the group.
#[derive(Debug)]
pub struct GroupChild {
    child: Child,
    pgid: Pid,
    /// Set once the group is known to be gone, so Drop does not signal a recycled id.
    group_ended: bool,
    /// Set once the leader was waited for (`try_wait`, `wait`): from then on its pid, and so
    /// the group id, may be recycled once the rest of the group is gone.
    leader_reaped: bool,
}

/// Spawns `command` as the leader of a new process group with a parent-death signal.
///
/// The command's stdio settings are kept as they are; `kill_on_drop` is forced on.
pub fn spawn_group(mut command: Command) -> io::Result<GroupChild> {
    command.process_group(0).kill_on_drop(true);
    let parent = nix::unistd::getpid();
    // SAFETY: the closure runs in the forked child before exec and only makes two
    // async-signal-safe system calls (prctl, getppid); it touches no locks or allocations.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(io::Error::from)?;
            // The parent may have died between fork and prctl: then nobody will signal us.
            if nix::unistd::getppid() != parent {
                return Err(io::Error::other("parent exited before the child started"));
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    let raw = child
        .id()
        .ok_or_else(|| io::Error::other("spawned child has no pid"))?;
    let pid = i32::try_from(raw).map_err(|_| io::Error::other("pid out of range"))?;
    Ok(GroupChild {
        child,
        pgid: Pid::from_raw(pid),
        group_ended: false,
        leader_reaped: false,
    })
}

impl GroupChild {
    /// The leader's pid (also the process group id).
    pub fn id(&self) -> u32 {
        self.pgid.as_raw().unsigned_abs()
    }

    /// Takes the child's stdin handle, if it was piped.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Takes the child's stdout handle, if it was piped.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Takes the child's stderr handle, if it was piped.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// The underlying tokio child, for anything not covered here.
    pub fn inner_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Non-blocking check whether the leader has exited. Once it has, the handle remembers
    /// it: the rest of the group is still killed on drop, but a recycled group id never is.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        self.leader_reaped |= status.is_some();
        Ok(status)
    }

    /// Waits for the leader to exit. Other members of the group are not waited for (they are
    /// killed on drop, like with [`try_wait`](Self::try_wait)).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await?;
        self.leader_reaped = true;
        Ok(status)
    }

    /// Sends `signal` to every process of the group. A group that is already gone is fine.
    pub fn signal_group(&self, signal: Signal) -> io::Result<()> {
        if self.group_ended || self.group_id_recycled() {
            return Ok(());
        }
        match killpg(self.pgid, signal) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
            Err(errno) => Err(io::Error::from(errno)),
        }
    }

    /// Whether the group id now names someone else's group. A group id stays reserved while
    /// any member lives, so after the leader was reaped a live process carrying the leader's
    /// pid proves our group had emptied and the id was handed out again.
    fn group_id_recycled(&self) -> bool {
        self.leader_reaped && !matches!(kill(self.pgid, None), Err(nix::errno::Errno::ESRCH))
    }

    /// SIGKILLs the whole group at once, without waiting.
    pub fn kill_group(&mut self) {
        if let Err(error) = self.signal_group(Signal::SIGKILL) {
            tracing::warn!(pgid = self.pgid.as_raw(), %error, "could not kill process group");
        }
    }

    /// Ends the group: SIGTERM to every member, up to `grace` for the leader to exit,
    /// then SIGKILL to the group. Returns the leader's exit status.
    pub async fn terminate(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if let Some(status) = self.try_wait()? {
            // The leader is gone, stragglers in its group may not be.
            self.kill_group();
            self.group_ended = true;
            return Ok(status);
        }
        self.signal_group(Signal::SIGTERM)?;
        let status = match tokio::time::timeout(grace, self.wait()).await {
            Ok(status) => status?,
            Err(_elapsed) => {
                self.kill_group();
                self.wait().await?
            }
        };
        self.kill_group();
        self.group_ended = true;
        Ok(status)
    }

    /// Waits up to `grace` for the leader to exit on its own (after a polite protocol
    /// shutdown, say), then kills the group. Returns the leader's exit status.
    pub async fn wait_or_kill(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        let status = match tokio::time::timeout(grace, self.wait()).await {
            Ok(status) => status?,
            Err(_elapsed) => {
                self.kill_group();
                self.wait().await?
            }
        };
        self.kill_group();
        self.group_ended = true;
        Ok(status)
    }
}

impl Drop for GroupChild {
    fn drop(&mut self) {
        // tokio's kill_on_drop only reaches the leader; the group may hold more.
        self.kill_group();
    }
}
