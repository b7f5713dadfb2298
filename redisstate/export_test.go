package redisstate

import "time"

// SealForTest signs msg as c's Publish does, with the sequence number and
// sending time given.
func SealForTest(c *LiveCoordinator, msg []byte, seq uint64, sent time.Time) []byte {
	return c.sealAt(msg, seq, sent)
}
