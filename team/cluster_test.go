package team

import (
	"testing"

	"github.com/tsinspect/tsinspect/internal/pgtest"
)

// superPassword is the throwaway cluster's superuser password.
const superPassword = pgtest.SuperPassword

// startCluster starts a throwaway cluster for t (see package pgtest),
// skipping t when none can be had.
func startCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	return pgtest.Start(t, func(why string) { t.Skip(why) })
}

// freePort is a port of 127.0.0.1 free a moment ago.
func freePort(t *testing.T) int { return pgtest.FreePort(t) }
