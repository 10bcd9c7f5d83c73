// Package recording is the recording engine: a Session binds the address,
// opens the capture, serves the proxy (package capture) with the caller's
// Hooks, and stops cleanly; around it, the environment the recorded client
// gets and the warnings about the user's own (PlanChild, Warnings), the
// line said per Messages turn with its cost (TurnLog) and the lines about
// failed exchanges (FailureLog). The command parses flags, runs the client
// and prints; this package does the rest.
package recording
