package redisstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// listen is one subscription to channel (the live channel, the upstream
// flights' one), named what in its errors: it calls subscribed when Redis
// confirms the subscription and message with each message's payload, and
// returns the error that ended it. A connection that answers neither a
// message nor a ping for two silent periods counts as broken.
func listen(ctx context.Context, client *redis.Client, channel, what string, silent time.Duration, subscribed func(), message func(payload string)) error {
	ps := client.Subscribe(ctx, channel)
	defer ps.Close()
	// A blocked read ends when ps closes, not when ctx ends.
	defer context.AfterFunc(ctx, func() { _ = ps.Close() })()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, silent)
		var netErr interface{ Timeout() bool }
		switch {
		case err != nil && errors.As(err, &netErr) && netErr.Timeout() && ctx.Err() == nil:
			if pinged {
				return fmt.Errorf("the %s did not answer a ping: %w", what, err)
			}
			if err := ps.Ping(ctx); err != nil {
				return fmt.Errorf("ping the %s: %w", what, err)
			}
			pinged = true
			continue
		case err != nil:
			return fmt.Errorf("receive from the %s: %w", what, err)
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == channel {
				subscribed()
			}
		case *redis.Message:
			message(m.Payload)
		}
	}
}
