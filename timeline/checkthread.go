package timeline

import (
	"fmt"
	"strings"
)

// CheckThread refuses a thread ID the session does not have, naming the
// ones it has; "" is fine.
func (s *Session) CheckThread(id string) error {
	if id == "" || s.Thread(id) != nil {
		return nil
	}
	var ids []string
	for _, th := range s.Threads {
		ids = append(ids, th.ID)
	}
	return fmt.Errorf("%q: the capture's threads are %s", id, strings.Join(ids, ", "))
}
