package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpu is the CPU time (ms) the quitad processes and the Postgres backends
// serving them have used so far (backends that ended are not counted).
func (b *refundBench) cpu(procs []*quitadProc) (quitad, postgres float64) {
	for _, p := range procs {
		quitad += procCPU(p.cmd.Process.Pid)
	}
	rows, err := b.db.Query(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return quitad, 0
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			postgres += procCPU(pid)
		}
	}
	return quitad, postgres
}

// procCPU is a process's user+system CPU time in ms from /proc (0 where
// there is none), at the usual 100 ticks per second.
// childrenCPU is the CPU in ms of this process's children that have
// exited and been waited for (cutime + cstime).
func childrenCPU() float64 {
	f := procStat(os.Getpid())
	if len(f) < 15 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[13], 64)
	st, _ := strconv.ParseFloat(f[14], 64)
	return (u + st) * 10
}

// procStat is /proc/pid/stat's fields after the command name (which may
// hold spaces): f[0] is the state (the 3rd field), f[11] utime (the 14th).
func procStat(pid int) []string {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	return strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
}

func procCPU(pid int) float64 {
	f := procStat(pid)
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) * 10
}

// cpuSnapshot is the CPU time (ms) this process (the server of the
// in-process benchmarks), every postgres process and every redis-server
// process have used so far, from /proc (zeros elsewhere). The difference
// of two snapshots divided by the work done between them is a cost per
// operation that drifts less with this VM's speed than a rate does.
// cpuSnapshot is CPU time in ms used so far: by this process (the
// server), by its children that have exited (the load generator, once
// its phase is over), by every postgres and every redis-server process.
type cpuSnapshot struct{ server, children, postgres, redis float64 }

func takeCPU() cpuSnapshot {
	s := cpuSnapshot{server: procCPU(os.Getpid()), children: childrenCPU()}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if err != nil {
			continue
		}
		switch strings.TrimSpace(string(comm)) {
		case "postgres":
			s.postgres += procCPU(pid)
		case "redis-server":
			s.redis += procCPU(pid)
		}
	}
	return s
}

// per is the CPU each part used per operation between s and later.
func (s cpuSnapshot) per(later cpuSnapshot, ops int) string {
	if ops <= 0 || later.server == 0 {
		return "n/a"
	}
	n := float64(ops)
	out := fmt.Sprintf("server %.2f ms, Postgres %.2f ms, Redis %.2f ms",
		(later.server-s.server)/n, (later.postgres-s.postgres)/n, (later.redis-s.redis)/n)
	if d := later.children - s.children; d > 0 {
		out += fmt.Sprintf(", load generator %.2f ms", d/n)
	}
	return out
}
