package mcpclient

import "time"

// closeGrace is how long a stdio server gets to exit once its stdin is
// closed before it is killed.
const closeGrace = 2 * time.Second

func timeAfter() <-chan time.Time { return time.After(closeGrace) }
