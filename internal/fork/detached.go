package fork

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes this process the child subreaper of its
// descendants, once: a helper that a fork started and that left the
// fork's session (setsid) is reparented to this process when the fork
// exits, instead of to init, so killDetached can find and end it.
var becomeSubreaper = sync.OnceFunc(func() {
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
})

// killDetached kills and reaps the processes reparented to this process
// that run in a session of their own: helpers of exited forks that left
// the fork's process group with setsid, which its group kill misses. This
// process starts no child in a session of its own (a fork leads a process
// group of this session), so nothing else matches. Their own children,
// reparented in turn when they die, are found by the next pass.
func killDetached() {
	self, sid := os.Getpid(), unix.Getpgrp()
	if s, err := unix.Getsid(0); err == nil {
		sid = s
	}
	for pass := 0; pass < 8; pass++ {
		found := false
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			st, ok := readStat(pid)
			if !ok || st.ppid != self || st.sid == sid {
				continue
			}
			found = true
			_ = syscall.Kill(-pid, syscall.SIGKILL) // its group, when it leads one
			_ = syscall.Kill(pid, syscall.SIGKILL)
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, 0, nil)
		}
		if !found {
			return
		}
	}
}

// procStat is what killDetached and EndGroup read of a process.
type procStat struct{ ppid, pgrp, sid int }

// readStat reads a process's parent, process group and session from
// /proc/PID/stat.
func readStat(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// pid (comm) state ppid pgrp session …; comm may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 {
		return procStat{}, false
	}
	var st procStat
	var errs [3]error
	st.ppid, errs[0] = strconv.Atoi(f[1])
	st.pgrp, errs[1] = strconv.Atoi(f[2])
	st.sid, errs[2] = strconv.Atoi(f[3])
	return st, errs[0] == nil && errs[1] == nil && errs[2] == nil
}
