package bench

import (
	"encoding/json"
	"time"
)

// PlatformLogBytes estimates what Lambda itself writes to the function's
// log group per invocation with LoggingConfig LogFormat JSON (template.yaml):
// a platform.start and a platform.report record. They are not produced
// locally, so they are built here in the documented shape with this run's
// figures and measured; the estimate is labelled as such in the report.
func PlatformLogBytes(durationMs, billedMs float64) int {
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	id := "6f7f0961-8b3a-4c4b-9a2e-3f0c2d1e5a77" // a request id's length
	start, _ := json.Marshal(map[string]any{"time": now, "type": "platform.start",
		"record": map[string]any{"requestId": id, "version": "$LATEST"}})
	report, _ := json.Marshal(map[string]any{"time": now, "type": "platform.report",
		"record": map[string]any{"requestId": id, "status": "success", "metrics": map[string]any{
			"durationMs": durationMs, "billedDurationMs": billedMs, "memorySizeMB": prices.LambdaMemoryMB, "maxMemoryUsedMB": 30}}})
	return len(start) + 1 + len(report) + 1
}
