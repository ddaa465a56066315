package server

import "fmt"

// Role says which of maestro's parts a process runs. Any number of
// processes of each role share one Temporal namespace and task queue and
// one PostgreSQL ledger.
//
// What runs where, and why:
//   - The HTTP API (admission, answers, approvals, reconciliation,
//     webhooks): api. It records and starts workflows; it never needs a
//     worker in the same process, so it still admits, and answers
//     "pending", while every worker is down.
//   - The Temporal worker, which runs the workflows and activities (every
//     provider call, post-call delivery, the sweep and the audit scan):
//     worker. Only workers poll the task queue, so adding worker processes
//     adds execution capacity.
//   - The audit and sweep schedules: worker. Their workflows run on the
//     task queue, so the processes that can run them make sure they
//     exist; creating one that exists is a no-op, so every worker may.
//   - The outbox relay, which resends the signals an API decision queued
//     with it, and the callback relay, which tells an agent answered
//     "pending" how its call ended: api. Both finish promises the API
//     made, and need the ledger and Temporal but not the task queue, so a
//     worker-only process needs no agent callback secrets. Both are safe
//     in several processes: a signal sent twice is shrugged off by a
//     workflow that reads the ledger on waking, and callbacks are claimed
//     under a lease, one process at a time.
//   - The tool registry mirror: both. Each process mirrors the catalog it
//     runs, under a lock, so processes starting together do not collide.
//   - Dev mode's embedded Temporal and stand-ins: only with --dev, which
//     is one process in role all.
type Role string

// Roles.
const (
	// RoleAll runs the API and the worker in one process.
	RoleAll Role = "all"
	// RoleAPI runs the HTTP API only.
	RoleAPI Role = "api"
	// RoleWorker runs the Temporal worker only, with /healthz and /readyz.
	RoleWorker Role = "worker"
)

// ServesAPI reports whether a process in role r serves the HTTP API.
func (r Role) ServesAPI() bool { return r == RoleAll || r == RoleAPI }

// RunsWorker reports whether a process in role r polls the task queue.
func (r Role) RunsWorker() bool { return r == RoleAll || r == RoleWorker }

func (r Role) validate() error {
	switch r {
	case RoleAll, RoleAPI, RoleWorker:
		return nil
	}
	return fmt.Errorf("--role (MAESTRO_ROLE) must be all, api or worker, got %q", string(r))
}
