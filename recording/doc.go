// Package recording holds what a recording does around the proxy: the
// environment the recorded client gets and the warnings about the user's
// own (PlanChild, Warnings), the line said per Messages turn with its cost
// (TurnLog) and the lines about failed exchanges (FailureLog).
package recording
