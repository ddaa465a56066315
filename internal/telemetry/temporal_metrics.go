package telemetry

// temporalHelp is the help text of one of the Temporal Go SDK's metrics,
// which the SDK records without a description; the SDK's names are in
// go.temporal.io/sdk/internal/common/metrics, its resource tuner, and its
// gRPC dialer, which adds _attempt to the request metrics' names. A
// name it does not know, from a newer SDK, still gets help text, pointing
// to Temporal's reference.
func temporalHelp(name string) string {
	switch name {
	case "temporal_request":
		return "Requests this process's Temporal client made to the Temporal frontend, by operation."
	case "temporal_request_failure":
		return "Requests to the Temporal frontend that failed, by operation and status code."
	case "temporal_request_latency":
		return "How long requests to the Temporal frontend took, by operation."
	case "temporal_request_resource_exhausted":
		return "Requests to the Temporal frontend refused as resource exhausted, by operation and cause."
	case "temporal_request_attempt":
		return "Attempts at requests to the Temporal frontend, retries included, by operation."
	case "temporal_request_failure_attempt":
		return "Attempts at requests to the Temporal frontend that failed, retries included, by operation and status code."
	case "temporal_request_latency_attempt":
		return "How long each attempt at a request to the Temporal frontend took, by operation."
	case "temporal_long_request":
		return "Long polls this process made to the Temporal frontend, by operation."
	case "temporal_long_request_failure":
		return "Long polls to the Temporal frontend that failed, by operation and status code."
	case "temporal_long_request_latency":
		return "How long long polls to the Temporal frontend took, by operation."
	case "temporal_long_request_resource_exhausted":
		return "Long polls to the Temporal frontend refused as resource exhausted, by operation and cause."
	case "temporal_long_request_attempt":
		return "Attempts at long polls to the Temporal frontend, retries included, by operation."
	case "temporal_long_request_failure_attempt":
		return "Attempts at long polls to the Temporal frontend that failed, retries included, by operation and status code."
	case "temporal_long_request_latency_attempt":
		return "How long each attempt at a long poll to the Temporal frontend took, by operation."

	case "temporal_workflow_completed":
		return "Workflow executions this worker completed, by workflow type."
	case "temporal_workflow_canceled":
		return "Workflow executions this worker ended as canceled, by workflow type."
	case "temporal_workflow_failed":
		return "Workflow executions this worker ended as failed, by workflow type."
	case "temporal_workflow_continue_as_new":
		return "Workflow executions this worker continued as new, by workflow type."
	case "temporal_workflow_endtoend_latency":
		return "How long workflow executions took from start to close, by workflow type."
	case "temporal_workflow_task_replay_latency":
		return "How long replaying a workflow's history took before a workflow task could run."
	case "temporal_workflow_task_queue_poll_empty":
		return "Polls for workflow tasks that returned none."
	case "temporal_workflow_task_queue_poll_succeed":
		return "Polls for workflow tasks that returned one."
	case "temporal_workflow_task_schedule_to_start_latency":
		return "How long workflow tasks waited in their task queue before a worker took them."
	case "temporal_workflow_task_execution_latency":
		return "How long this worker took to process a workflow task."
	case "temporal_workflow_task_execution_failed":
		return "Workflow tasks that failed, by failure reason (a nondeterminism error among them)."
	case "temporal_workflow_task_no_completion":
		return "Workflow tasks that ended without a completion sent to the server."

	case "temporal_activity_poll_no_task":
		return "Polls for activity tasks that returned none."
	case "temporal_activity_schedule_to_start_latency":
		return "How long activity tasks waited in their task queue before a worker took them."
	case "temporal_activity_execution_failed":
		return "Activity executions that returned an error, by activity type."
	case "temporal_activity_execution_latency":
		return "How long one attempt of an activity took, by activity type."
	case "temporal_activity_succeed_endtoend_latency":
		return "How long activities that succeeded took from first scheduled to completed, retries included."
	case "temporal_activity_task_error":
		return "Activity tasks the worker failed to handle, apart from the activity's own errors."
	case "temporal_unregistered_activity_invocation":
		return "Activity tasks for an activity type this worker has not registered."

	case "temporal_local_activity_total":
		return "Local activities this worker ran."
	case "temporal_local_activity_canceled":
		return "Local activities canceled (deprecated: see temporal_local_activity_execution_cancelled)."
	case "temporal_local_activity_execution_cancelled":
		return "Local activities canceled."
	case "temporal_local_activity_failed":
		return "Local activities that failed (deprecated: see temporal_local_activity_execution_failed)."
	case "temporal_local_activity_execution_failed":
		return "Local activities that failed."
	case "temporal_local_activity_error":
		return "Local activity attempts that returned an error."
	case "temporal_local_activity_execution_latency":
		return "How long one attempt of a local activity took."
	case "temporal_local_activity_succeed_endtoend_latency":
		return "How long local activities that succeeded took, retries included."

	case "temporal_corrupted_signals":
		return "Signals dropped because their payloads could not be decoded."
	case "temporal_worker_start":
		return "Workers this process started."
	case "temporal_poller_start":
		return "Pollers this process's workers started."
	case "temporal_num_pollers":
		return "Pollers running now, by poller type."
	case "temporal_worker_task_slots_available":
		return "Task slots free now, by worker type."
	case "temporal_worker_task_slots_used":
		return "Task slots in use now, by worker type."

	case "temporal_sticky_cache_hit":
		return "Workflow tasks served from the sticky cache, without a replay."
	case "temporal_sticky_cache_miss":
		return "Workflow tasks that missed the sticky cache and replayed the history."
	case "temporal_sticky_cache_total_forced_eviction":
		return "Workflows evicted from the sticky cache to make room."
	case "temporal_sticky_cache_size":
		return "Workflows held in the sticky cache now."

	case "temporal_nexus_poll_no_task":
		return "Polls for Nexus tasks that returned none."
	case "temporal_nexus_task_schedule_to_start_latency":
		return "How long Nexus tasks waited in their task queue before a worker took them."
	case "temporal_nexus_task_execution_failed":
		return "Nexus tasks that failed."
	case "temporal_nexus_task_execution_latency":
		return "How long this worker took to handle a Nexus task."
	case "temporal_nexus_task_endtoend_latency":
		return "How long Nexus tasks took from scheduled to completed."

	case "temporal_resource_slots_cpu_usage":
		return "CPU use the resource-based slot tuner sees, as a percentage."
	case "temporal_resource_slots_mem_usage":
		return "Memory use the resource-based slot tuner sees, as a percentage."
	}
	return name + ": a Temporal SDK metric, described at https://docs.temporal.io/references/sdk-metrics"
}
